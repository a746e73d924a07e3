//! A fresh network trained on a run's stored games: the capacity test of the learning
//! issue (is the run's network full? train a larger one on the same positions for the
//! same steps and compare held-out losses) and a way to start a larger network from a
//! run's data instead of from the teacher. The run's own model of the last generation is
//! measured on the same held-out games as the yardstick, and on as many training
//! positions (with no steps, that measurement alone: how far a run's model has learnt its
//! own window's positions rather than the game).
//!
//! Layout of the output directory: `distill.json` (the job, so that a rerun resumes only
//! the same job), `trainer.ckpt`, `curve.json` and `curve.tsv` (one row per report: the
//! mean loss of its training steps and the held-out losses after them; the `reference`
//! row's training columns are the run's model measured on training positions as on the
//! held-out ones), `curve.svg`, and `model/` (the network after the last finished report).

use crate::config::RunConfig;
use crate::run_dir::{files_under, read_json, write_json, RunDir};
use crate::stages::bar;
use anyhow::{bail, Context, Result};
use arena::plot::{line_chart, Series, PALETTE};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What one distillation trains.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistillJob {
    /// The run whose games are trained on.
    pub run: PathBuf,
    /// First and last generation of the run whose games are used (0: the teacher's).
    pub generations: (u32, u32),
    pub blocks: usize,
    pub channels: usize,
    pub steps: u32,
    /// Steps between held-out measurements (and checkpoints of the curve).
    pub report_every: u32,
    /// The rate of the first step after the warm-up; it falls by a cosine to
    /// `final_lr_fraction` of itself at the last step.
    pub learning_rate: f64,
    pub final_lr_fraction: f64,
    /// Held-out positions measured at each report.
    pub validation_positions: usize,
    pub seed: u64,
}

/// One report of the curve: the mean training loss since the previous report and the
/// held-out losses after `step` steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub step: u32,
    pub seconds: f64,
    pub train: [f32; 3],
    pub held_out: Option<[f32; 3]>,
}

/// `curve.json`: the reference's held-out losses and the points so far.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Curve {
    /// The run's own model of the last generation on the same held-out games.
    pub reference: Option<[f32; 3]>,
    /// The same model on as many of the training positions: the gap to `reference` is
    /// what it learnt of these positions rather than of the game.
    #[serde(default)]
    pub reference_train: Option<[f32; 3]>,
    pub reference_model: Option<PathBuf>,
    pub train_positions: usize,
    pub held_out_positions: usize,
    pub points: Vec<CurvePoint>,
}

/// The game shards of generations `first..=last` of `run`, oldest first; an error naming
/// the directory of a generation that has none.
fn run_shards(run: &RunDir, first: u32, last: u32) -> Result<Vec<PathBuf>> {
    let mut all = Vec::new();
    for g in first..=last {
        let dir = run.selfplay(g);
        // A run's own games lie one level down, under the worker that played them.
        let shards: Vec<PathBuf> = files_under(&dir).into_iter().filter(|p| p.extension().is_some_and(|x| x == "shard")).collect();
        if shards.is_empty() {
            bail!("generation {g}: no game shards in {}", dir.display());
        }
        all.extend(shards);
    }
    Ok(all)
}

/// The cosine schedule over the whole job at step `step` (from 0).
fn rate_at(job: &DistillJob, step: u32) -> f64 {
    let progress = if job.steps <= 1 { 0.0 } else { step.min(job.steps - 1) as f64 / (job.steps - 1) as f64 };
    let f = job.final_lr_fraction;
    job.learning_rate * (f + (1.0 - f) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()))
}

/// Trains `job` into `out`, resuming what an earlier call left there; returns the curve.
pub fn distill(job: &DistillJob, out: &Path, show: bool) -> Result<Curve> {
    if job.generations.0 > job.generations.1 {
        bail!("--generations {}..{}: the first is after the last", job.generations.0, job.generations.1);
    }
    if job.report_every == 0 {
        bail!("--report-every must be at least 1");
    }
    let run = RunDir(job.run.clone());
    let mut cfg = RunConfig::load(&run.config()).with_context(|| format!("{}: not a run directory", job.run.display()))?;
    cfg.network.blocks = job.blocks;
    cfg.network.channels = job.channels;
    let net = cfg.net_config().with_context(|| format!("--network {}x{}", job.blocks, job.channels))?;
    let variant = cfg.variant()?;
    let shards = run_shards(&run, job.generations.0, job.generations.1)?;

    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let job_file = out.join("distill.json");
    match read_json::<DistillJob>(&job_file)? {
        Some(earlier) if earlier != *job => {
            bail!("{} holds another distillation ({:?}); use a new --out or the same flags to resume it", out.display(), earlier)
        }
        Some(_) => {}
        None => write_json(&job_file, job)?,
    }
    let curve_file = out.join("curve.json");
    let mut curve: Curve = read_json(&curve_file)?.unwrap_or_default();

    let mut config = cfg.training.clone();
    config.steps_per_generation = job.report_every;
    config.validation_positions = job.validation_positions;
    // Every position may be drawn in every report's shuffle: the cap is for a sliding
    // window's new games, not for a fixed set.
    config.max_sample_uses = u8::MAX;
    config.validate().map_err(|e| anyhow::anyhow!("training.{}: {}", e.key, e.problem))?;

    if curve.points.is_empty() && curve.reference.is_none() {
        let model_dir = run.model(job.generations.1);
        if model_dir.join(model::store::CONFIG_FILE).exists() {
            let reference = model::load_model(&model_dir, &model::cpu_device()).with_context(|| format!("reading {}", model_dir.display()))?;
            let split = trainer::split_losses(variant, &reference, &shards, &config);
            let triple = |l: model::LossStats| [l.total, l.policy, l.value];
            curve.reference = split.held_out.map(triple);
            curve.reference_train = split.train.map(triple);
            curve.reference_model = Some(model_dir);
            (curve.train_positions, curve.held_out_positions) = (split.train_positions, split.held_out_positions);
            write_json(&curve_file, &curve)?;
        }
    }

    if job.steps == 0 && curve.reference.is_none() {
        bail!("--steps 0 measures the run's model of generation {}, and {} has none", job.generations.1, run.model(job.generations.1).display());
    }
    let reports = job.steps.div_ceil(job.report_every);
    let pb = bar(job.steps as u64, "distill", show);
    for r in 0..reports {
        let first = r * job.report_every;
        let steps = job.report_every.min(job.steps - first);
        if curve.points.iter().any(|p| p.step == first + steps) {
            pb.set_position((first + steps) as u64);
            continue;
        }
        config.steps_per_generation = steps;
        config.learning_rate = rate_at(job, first);
        config.final_lr_fraction = (rate_at(job, first + steps - 1) / config.learning_rate).clamp(f64::MIN_POSITIVE, 1.0);
        let on_step = |s: u32, _: u32, l: &trainer::StepLoss| {
            pb.set_position((first + s) as u64);
            pb.set_message(format!("loss {:.3} (policy {:.3}, value {:.3})", l.total, l.policy, l.value));
        };
        let report = trainer::train_generation(&trainer::TrainJob {
            variant,
            config: config.clone(),
            net: net.clone(),
            generation: r,
            shards: shards.clone(),
            checkpoint: out.join("trainer.ckpt"),
            export_dir: out.join("model"),
            seed: job.seed,
            teacher_value_share: (cfg.teacher.enabled() && cfg.teacher.keep_value_share).then_some(cfg.teacher.value_share),
            teacher_batch_share: None,
            on_step: Some(&on_step),
            stop_after: None,
        })?;
        for s in &report.skipped {
            tracing::warn!("skipped {s}");
        }
        if report.losses.is_empty() {
            bail!("{}: the checkpoint is past report {} of the curve; remove the directory to start again", out.display(), r + 1);
        }
        let n = report.losses.len().max(1) as f32;
        let mean = |f: fn(&trainer::StepLoss) -> f32| report.losses.iter().map(f).sum::<f32>() / n;
        let point = CurvePoint {
            step: first + report.losses.len() as u32,
            seconds: curve.points.last().map_or(0.0, |p| p.seconds) + report.seconds,
            train: [mean(|l| l.total), mean(|l| l.policy), mean(|l| l.value)],
            held_out: report.validation.map(|v| [v.total, v.policy, v.value]),
        };
        tracing::info!(step = point.step, train = point.train[0], held_out = ?point.held_out, "distill report");
        curve.train_positions = report.train_samples;
        curve.held_out_positions = report.validation_samples;
        curve.points.push(point);
        write_json(&curve_file, &curve)?;
        write_outputs(out, &curve)?;
    }
    pb.finish();
    if job.steps == 0 {
        write_outputs(out, &curve)?;
    }
    Ok(curve)
}

/// `curve.tsv` and `curve.svg` of the points so far.
fn write_outputs(out: &Path, curve: &Curve) -> Result<()> {
    let mut tsv = String::from("step\tseconds\ttrain_total\ttrain_policy\ttrain_value\theld_out_total\theld_out_policy\theld_out_value\n");
    let cell = |v: Option<f32>| v.map_or_else(|| "-".to_string(), |x| format!("{x:.4}"));
    if let Some(r) = curve.reference {
        let t = |i: usize| cell(curve.reference_train.map(|t| t[i]));
        tsv += &format!("reference\t-\t{}\t{}\t{}\t{:.4}\t{:.4}\t{:.4}\n", t(0), t(1), t(2), r[0], r[1], r[2]);
    }
    for p in &curve.points {
        let h = |i: usize| p.held_out.map(|h| h[i]);
        tsv +=
            &format!("{}\t{:.1}\t{:.4}\t{:.4}\t{:.4}\t{}\t{}\t{}\n", p.step, p.seconds, p.train[0], p.train[1], p.train[2], cell(h(0)), cell(h(1)), cell(h(2)));
    }
    records::write_atomic(&out.join("curve.tsv"), tsv.as_bytes()).with_context(|| format!("writing {}", out.join("curve.tsv").display()))?;
    let held = |i: usize| curve.points.iter().filter_map(|p| p.held_out.map(|h| (p.step as f64, h[i] as f64))).collect::<Vec<_>>();
    let mut series = vec![
        Series { name: "held-out policy", points: held(1), color: PALETTE[0] },
        Series { name: "held-out value", points: held(2), color: PALETTE[1] },
        Series { name: "training total", points: curve.points.iter().map(|p| (p.step as f64, p.train[0] as f64)).collect(), color: PALETTE[7] },
    ];
    if let (Some(r), Some(last)) = (curve.reference, curve.points.last()) {
        let flat = |v: f32| vec![(0.0, v as f64), (last.step as f64, v as f64)];
        series.push(Series { name: "run's own model: policy", points: flat(r[1]), color: PALETTE[9] });
        series.push(Series { name: "run's own model: value", points: flat(r[2]), color: PALETTE[3] });
    }
    line_chart(&out.join("curve.svg"), "A fresh network on the run's games", "optimiser step", "loss (nats)", &series).map_err(anyhow::Error::msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use search::UniformEvaluator;
    use selfplay::{play_games, SelfplayJob, Stats};

    fn job(run: &Path, steps: u32) -> DistillJob {
        DistillJob {
            run: run.to_path_buf(),
            generations: (1, 2),
            blocks: 1,
            channels: 8,
            steps,
            report_every: 10,
            learning_rate: 0.002,
            final_lr_fraction: 0.1,
            validation_positions: 64,
            seed: 1,
        }
    }

    /// The schedule runs from the rate at step 0 to the final fraction at the last step,
    /// halfway at the middle (cos(π/2) = 0: f + (1 − f)/2 = 0.55 of the rate).
    #[test]
    fn the_rate_falls_by_a_cosine_over_the_whole_job() {
        let j = job(Path::new(""), 101);
        assert!((rate_at(&j, 0) - 0.002).abs() < 1e-12);
        assert!((rate_at(&j, 50) - 0.0011).abs() < 1e-12);
        assert!((rate_at(&j, 100) - 0.0002).abs() < 1e-12);
        assert!((rate_at(&j, 500) - 0.0002).abs() < 1e-12);
    }

    /// A run directory of the quick preset with short games of the uniform-prior search
    /// in generations 0 (standing for the teacher's), 1 and 2 (a third of the games held out), laid out as a run writes
    /// them (one directory per worker), and a random model as generation 2's.
    fn tiny_run(dir: &Path) -> RunConfig {
        let mut cfg = RunConfig::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/quick.toml")).unwrap();
        cfg.run_dir = dir.to_path_buf();
        cfg.training.validation_fraction = 0.3;
        cfg.selfplay.simulations = 4;
        cfg.selfplay.fast_simulations = 2;
        cfg.selfplay.max_plies = 40;
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("config.toml"), cfg.to_toml()).unwrap();
        let run = RunDir(dir.to_path_buf());
        let variant = cfg.variant().unwrap();
        for g in 0..=2u32 {
            let job = SelfplayJob {
                variant,
                config: cfg.selfplay.clone(),
                generation: g,
                out_dir: run.selfplay(g).join("local"),
                game_ids: (g as u64 * 1000 + 1..g as u64 * 1000 + 13).collect(),
                threads: 1,
                seed: g as u64,
                on_finished: None,
            };
            play_games(&job, &UniformEvaluator, &Stats::default()).unwrap();
        }
        neteval::save_random_model(variant, &run.model(2), 1, 8, 9).unwrap();
        cfg
    }

    fn without_times(c: &Curve) -> Vec<(u32, [f32; 3], Option<[f32; 3]>)> {
        c.points.iter().map(|p| (p.step, p.train, p.held_out)).collect()
    }

    /// The job trains a network of its own shape on the run's games, measures it and the
    /// run's model on held-out games, is reproducible from its seed on one thread, and a
    /// rerun after a kill between reports ends with the curve an unbroken run makes.
    #[test]
    fn a_fresh_network_trains_on_a_runs_games_and_resumes_where_it_stopped() {
        // One thread, as `--threads 1` promises reproducibility: on a shared pool the
        // backend's parallel sums split by what other tests leave free, and their float
        // rounding with them (seen failing beside the rest of the suite under load).
        rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(fresh_network_trains_and_resumes);
    }

    fn fresh_network_trains_and_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("run");
        let cfg = tiny_run(&run_dir);
        let j = job(&run_dir, 20);

        let a = distill(&j, &dir.path().join("a"), false).unwrap();
        assert_eq!(a.points.iter().map(|p| p.step).collect::<Vec<_>>(), vec![10, 20]);
        assert!(a.held_out_positions > 0 && a.train_positions > a.held_out_positions, "{} / {}", a.train_positions, a.held_out_positions);
        assert!(a.points.iter().all(|p| p.held_out.is_some() && p.train.iter().all(|x| x.is_finite() && *x > 0.0)));
        assert!(a.reference.is_some(), "the run's model of generation 2 is measured");
        assert_eq!(a.reference_model.as_deref(), Some(RunDir(run_dir.clone()).model(2).as_path()));
        let net = model::load_model(&dir.path().join("a/model"), &model::cpu_device()).unwrap();
        assert_eq!((net.config().blocks, net.config().channels), (1, 8), "the job's shape, not the run's {}x{}", cfg.network.blocks, cfg.network.channels);
        let tsv = std::fs::read_to_string(dir.path().join("a/curve.tsv")).unwrap();
        assert_eq!(tsv.lines().count(), 4, "header, reference and two points:\n{tsv}");
        assert!(dir.path().join("a/curve.svg").exists());

        // The same job elsewhere: the same curve.
        let b_dir = dir.path().join("b");
        let b = distill(&j, &b_dir, false).unwrap();
        assert_eq!(without_times(&a), without_times(&b));

        // Killed after the last step but before its report was written: the rerun
        // rebuilds that report from the checkpoint, as the first call would have.
        let mut cut: Curve = read_json(&b_dir.join("curve.json")).unwrap().unwrap();
        cut.points.pop();
        write_json(&b_dir.join("curve.json"), &cut).unwrap();
        let resumed = distill(&j, &b_dir, false).unwrap();
        assert_eq!(without_times(&a), without_times(&resumed));

        // Another job in the same directory is refused, naming it.
        let mut other = j.clone();
        other.channels = 16;
        let e = distill(&other, &b_dir, false).unwrap_err().to_string();
        assert!(e.contains("holds another distillation"), "{e}");
    }

    /// With no steps only the run's model is measured, on both splits. A model trained
    /// hard on the training positions gains more on them than on the held-out ones
    /// against an untrained model (the positions' own targets are learnt, not only the
    /// game), and the two measurements show it.
    #[test]
    fn with_no_steps_the_runs_model_is_measured_on_both_splits() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("run");
        tiny_run(&run_dir);
        let untrained = distill(&job(&run_dir, 0), &dir.path().join("untrained"), false).unwrap();
        assert!(untrained.points.is_empty());
        assert!(!dir.path().join("untrained/model").exists(), "nothing trained, nothing exported");
        let tsv = std::fs::read_to_string(dir.path().join("untrained/curve.tsv")).unwrap();
        assert!(tsv.lines().nth(1).is_some_and(|l| l.starts_with("reference\t-\t") && !l.contains("\t-\t-")), "{tsv}");

        let mut hard = job(&run_dir, 600);
        hard.report_every = 600;
        (hard.blocks, hard.channels) = (2, 32);
        hard.learning_rate = 0.003;
        hard.final_lr_fraction = 1.0;
        distill(&hard, &dir.path().join("hard"), false).unwrap();
        let run = RunDir(run_dir.clone());
        std::fs::remove_dir_all(run.model(2)).unwrap();
        let trained = model::load_model(&dir.path().join("hard/model"), &model::cpu_device()).unwrap();
        model::save_model_tagged(&trained, &run.model(2), &trainer::game_tag(RunConfig::load(&run.config()).unwrap().variant().unwrap())).unwrap();
        let c = distill(&job(&run_dir, 0), &dir.path().join("trained"), false).unwrap();

        let gain = |split: fn(&Curve) -> Option<[f32; 3]>| split(&untrained).unwrap()[1] - split(&c).unwrap()[1];
        let (on_train, on_held) = (gain(|c| c.reference_train), gain(|c| c.reference));
        // Measured: 0.001 against −0.063 nats (the uniform search's 4-simulation targets
        // are mostly noise, which a model can only learn position by position).
        assert!(on_train - on_held > 0.02, "policy gain on trained-on positions {on_train}, on held-out {on_held}");
    }

    /// A window holding the teacher's games beside self-play's is measured on self-play's
    /// held-out games alone: the same figure as the self-play generations alone give.
    #[test]
    fn the_held_out_figure_is_of_self_plays_games_where_the_window_has_them() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("run");
        let cfg = tiny_run(&run_dir);
        let run = RunDir(run_dir.clone());
        let variant = cfg.variant().unwrap();
        let net = model::load_model(&run.model(2), &model::cpu_device()).unwrap();
        let mut config = cfg.training.clone();
        config.validation_positions = 100_000;
        let measure = |first: u32| trainer::split_losses(variant, &net, &run_shards(&run, first, 2).unwrap(), &config);
        let (with_teacher, without) = (measure(0), measure(1));
        assert!(with_teacher.held_out_positions > without.held_out_positions, "generation 0 adds held-out games");
        assert_eq!(with_teacher.held_out, without.held_out);
        let teacher_alone = trainer::split_losses(variant, &net, &run_shards(&run, 0, 0).unwrap(), &config);
        assert_ne!(teacher_alone.held_out, without.held_out, "a window of the teacher's games alone is measured on them");
    }

    #[test]
    fn a_generation_without_games_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = dir.path().join("run");
        tiny_run(&run_dir);
        let mut j = job(&run_dir, 10);
        j.generations = (1, 3);
        let e = format!("{:#}", distill(&j, &dir.path().join("out"), false).unwrap_err());
        assert!(e.contains("generation 3") && e.contains("gen-0003"), "{e}");
        j.generations = (2, 1);
        let e = distill(&j, &dir.path().join("out2"), false).unwrap_err().to_string();
        assert!(e.contains("the first is after the last"), "{e}");
        // Nothing to measure: generation 1 has games but no model.
        let mut measure = job(&run_dir, 0);
        measure.generations = (1, 1);
        let e = distill(&measure, &dir.path().join("out3"), false).unwrap_err().to_string();
        assert!(e.contains("--steps 0") && e.contains("gen-0001"), "{e}");
    }
}
