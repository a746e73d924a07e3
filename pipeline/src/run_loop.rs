//! The training loop: generation after generation of self-play → training → evaluation,
//! all state in a run directory whose every write is atomic, so the same command
//! resumes after any kill without losing a finished game or corrupting a checkpoint.
//!
//! Run directory:
//! - `config.toml` — the resolved configuration
//! - `selfplay/gen-NNNN/game-*.shard` — one shard per finished game; `summary.json`
//! - `trainer.ckpt` — trainer checkpoint (weights, optimiser, progress, sample uses)
//! - `models/gen-NNNN/` — the model trained in generation N (plays generation N+1)
//! - `train/gen-NNNN.json`, `eval/gen-NNNN.json` — losses and evaluation results
//! - `eval/gen-NNNN-starts.json` — the model's value and W/D/L for Black at every start
//!   of the variant's start family ([`StartValues`]; read by the balance study)
//! - `summary.tsv`, `plots/losses.svg`, `plots/evaluation.svg`

use crate::config::RunConfig;
use crate::evaluation::{play_match, MatchResult, MatchSpec};
use anyhow::{bail, Context, Result};
use arena::plot::{line_chart, Series};
use indicatif::{ProgressBar, ProgressStyle};
use neteval::NetEvaluator;
use plotters::style::RGBColor;
use rules::Game;
use search::{CachedEvaluator, Evaluator, UniformEvaluator};
use selfplay::{play_games, shard_path, SelfplayJob, Stats};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub struct RunDir(pub PathBuf);

impl RunDir {
    fn gen(g: u32) -> String {
        format!("gen-{g:04}")
    }
    pub fn selfplay(&self, g: u32) -> PathBuf {
        self.0.join("selfplay").join(Self::gen(g))
    }
    pub fn model(&self, g: u32) -> PathBuf {
        self.0.join("models").join(Self::gen(g))
    }
    pub fn train_report(&self, g: u32) -> PathBuf {
        self.0.join("train").join(format!("{}.json", Self::gen(g)))
    }
    /// The evaluation matches' arena directories.
    pub fn eval_dir(&self, g: u32) -> PathBuf {
        self.0.join("eval").join(Self::gen(g))
    }
    pub fn eval_report(&self, g: u32) -> PathBuf {
        self.0.join("eval").join(format!("{}.json", Self::gen(g)))
    }
    pub fn checkpoint(&self) -> PathBuf {
        self.0.join("trainer.ckpt")
    }
    /// The model's view of the start family after generation `g` ([`StartValues`]).
    pub fn start_values(&self, g: u32) -> PathBuf {
        self.0.join("eval").join(format!("{}-starts.json", Self::gen(g)))
    }
}

/// `eval/gen-NNNN-starts.json`: what generation `g`'s network thinks of each start of the
/// variant's start family, for Black, before a move is played — how its judgement of
/// the starts' balance changes over training.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StartValues {
    pub generation: u32,
    /// The game length limit the positions were encoded with (the self-play limit).
    pub max_plies: u32,
    pub starts: Vec<StartValueEntry>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StartValueEntry {
    pub name: String,
    pub sfen: String,
    /// P(Black wins) − P(White wins).
    pub value: f32,
    pub black_win: f32,
    pub draw: f32,
    pub white_win: f32,
}

/// Writes `eval/gen-NNNN-starts.json` for generation `g`'s model unless it exists (so a
/// resumed run skips it) or the model does not.
pub fn write_start_values(run: &RunDir, cfg: &RunConfig, g: u32) -> Result<()> {
    let path = run.start_values(g);
    let dir = run.model(g);
    if path.exists() || !dir.join("model.json").exists() {
        return Ok(());
    }
    let variant = cfg.variant()?;
    let eval = neteval::load(&dir, variant)?;
    let starts = eval
        .start_values(variant, Some(cfg.selfplay.max_plies))
        .into_iter()
        .map(|s| StartValueEntry { name: s.name, sfen: s.sfen, value: s.value, black_win: s.wdl[0], draw: s.wdl[1], white_win: s.wdl[2] })
        .collect();
    write_json(&path, &StartValues { generation: g, max_plies: cfg.selfplay.max_plies, starts })
}

#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct SelfplaySummary {
    pub games: u64,
    pub seconds: f64,
    pub positions_per_second: f64,
    pub simulations_per_second: f64,
    pub average_plies: f64,
    pub black_wins: u64,
    pub white_wins: u64,
    pub draws: u64,
    pub resignations: u64,
    pub false_resignations: u64,
    pub would_resign: u64,
    pub network_share: f64,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct TrainSummary {
    pub steps: u32,
    pub train_samples: usize,
    pub validation_samples: usize,
    pub losses: Vec<trainer::StepLoss>,
    pub validation: Option<[f32; 3]>,
    pub skipped: Vec<String>,
    /// Wall-clock seconds of training (this generation, resumed parts included).
    #[serde(default)]
    pub seconds: f64,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct EvalSummary {
    pub generation: u32,
    pub vs_previous: MatchResult,
    pub vs_uniform: MatchResult,
    /// Against the fixed anchor (`evaluation.anchor`).
    #[serde(default)]
    pub vs_anchor: Option<MatchResult>,
    pub simulations: u32,
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    records::write_atomic(path, &serde_json::to_vec_pretty(value)?).with_context(|| format!("writing {}", path.display()))
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(serde_json::from_slice(&b).with_context(|| format!("{} is corrupt", path.display()))?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn bar(len: u64, what: &str, show: bool) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {elapsed_precise} {msg}").unwrap().progress_chars("=> "));
    pb.set_prefix(what.to_string());
    pb
}

/// Loads generation `g`'s model as an evaluator (the uniform stand-in for generation 0).
fn evaluator_for(run: &RunDir, cfg: &RunConfig, g: u32) -> Result<Box<dyn Evaluator<Game>>> {
    if g == 0 {
        return Ok(Box::new(UniformEvaluator));
    }
    let dir = run.model(g);
    let net = model::load_inference(&dir)?;
    let eval = NetEvaluator::new(net, cfg.variant()?).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?.serial(cfg.threads > 1);
    Ok(Box::new(CachedEvaluator::new(eval, cfg.selfplay.cache_entries.max(1))))
}

/// Checks the run directory belongs to this run and saves the resolved config.
fn prepare(run: &RunDir, cfg: &RunConfig) -> Result<()> {
    std::fs::create_dir_all(&run.0).with_context(|| format!("creating {}", run.0.display()))?;
    let saved = run.0.join("config.toml");
    if let Ok(text) = std::fs::read_to_string(&saved) {
        let old: RunConfig = toml::from_str(&text).with_context(|| format!("{} is not a run config", saved.display()))?;
        if old.variant != cfg.variant || old.options != cfg.options || old.network != cfg.network || old.seed != cfg.seed {
            bail!("{} holds a different run (variant, options, network or seed differ); choose another run_dir", run.0.display());
        }
    }
    records::write_atomic(&saved, cfg.to_toml().as_bytes())?;
    Ok(())
}

pub fn train_loop(cfg: &RunConfig, show_progress: bool) -> Result<()> {
    let run = RunDir(cfg.run_dir.clone());
    prepare(&run, cfg)?;
    model::init_cpu_threads(cfg.threads);
    let variant = cfg.variant()?;
    tracing::info!(run = %run.0.display(), variant = %variant.title, generations = cfg.generations, "training loop");
    for g in 1..=cfg.generations {
        if read_json::<EvalSummary>(&run.eval_report(g))?.is_some() {
            tracing::debug!(generation = g, "already done");
            // A report only: a run finished before these files existed gets them now, and
            // a model that cannot be read for it does not stop the run.
            if let Err(e) = write_start_values(&run, cfg, g) {
                tracing::warn!(generation = g, "start values: {e:#}");
            }
            continue;
        }
        let t = Instant::now();
        let sp = selfplay_generation(&run, cfg, g, show_progress)?;
        let tr = train_generation(&run, cfg, g, show_progress)?;
        let ev = evaluate_generation(&run, cfg, g, show_progress)?;
        if let Err(e) = write_start_values(&run, cfg, g) {
            tracing::warn!(generation = g, "start values: {e:#}");
        }
        let line = summary_line(g, &sp, &tr, &ev, t.elapsed());
        println!("{line}");
        write_summary(&run, cfg)?;
    }
    write_summary(&run, cfg)?;
    Ok(())
}

fn summary_line(g: u32, sp: &SelfplaySummary, tr: &TrainSummary, ev: &EvalSummary, took: Duration) -> String {
    let loss = tr.losses.last().map(|l| format!("{:.3}", l.total)).unwrap_or("-".into());
    let val = tr.validation.map(|v| format!("{:.3}", v[0])).unwrap_or("-".into());
    format!(
        "gen {g}: selfplay {} games {:.0} pos/s avg {:.0} plies B/W/D {}/{}/{} | train {} steps loss {loss} val {val} | vs previous {} | vs uniform {}{} | {:.0}s",
        sp.games,
        sp.positions_per_second,
        sp.average_plies,
        sp.black_wins,
        sp.white_wins,
        sp.draws,
        tr.steps,
        ev.vs_previous.line(),
        ev.vs_uniform.line(),
        ev.vs_anchor.as_ref().filter(|a| a.games > 0).map(|a| format!(" | vs anchor {}", a.line())).unwrap_or_default(),
        took.as_secs_f64()
    )
}

pub fn selfplay_generation(run: &RunDir, cfg: &RunConfig, g: u32, show: bool) -> Result<SelfplaySummary> {
    let dir = run.selfplay(g);
    let summary_path = dir.join("summary.json");
    let ids: Vec<u64> = (0..cfg.selfplay.games as u64).map(|i| g as u64 * 1_000_000 + i).collect();
    let missing: Vec<u64> = ids.iter().copied().filter(|&id| !shard_path(&dir, id).exists()).collect();
    if missing.is_empty() {
        if let Some(s) = read_json(&summary_path)? {
            return Ok(s);
        }
    }
    let evaluator = evaluator_for(run, cfg, g - 1)?;
    let job = SelfplayJob {
        variant: cfg.variant()?,
        config: cfg.selfplay.clone(),
        generation: g,
        out_dir: dir.clone(),
        game_ids: missing.clone(),
        threads: cfg.threads,
        seed: cfg.seed,
    };
    let pb = bar(ids.len() as u64, "selfplay", show);
    let (_, s) = play_with_progress(&job, &*evaluator, &pb, (ids.len() - missing.len()) as u64)?;
    let secs = s.seconds.max(1e-9);
    let summary = SelfplaySummary {
        games: ids.len() as u64,
        seconds: s.seconds,
        positions_per_second: s.positions as f64 / secs,
        simulations_per_second: s.simulations as f64 / secs,
        average_plies: s.average_plies,
        black_wins: s.black_wins,
        white_wins: s.white_wins,
        draws: s.draws,
        resignations: s.resignations,
        false_resignations: s.false_resign,
        would_resign: s.would_resign,
        network_share: s.eval_seconds / (secs * cfg.threads as f64),
    };
    write_json(&summary_path, &summary)?;
    Ok(summary)
}

/// Plays a self-play job while a progress bar shows the workers' counters.
fn play_with_progress(
    job: &SelfplayJob,
    evaluator: &dyn Evaluator<Game>,
    pb: &ProgressBar,
    already_done: u64,
) -> Result<(Vec<selfplay::FinishedGame>, selfplay::StatsSnapshot)> {
    let stats = Stats::default();
    pb.set_position(already_done);
    let done = std::sync::atomic::AtomicBool::new(false);
    let games = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let s = stats.snapshot();
                pb.set_position(already_done + s.games);
                pb.set_message(s.line());
                std::thread::sleep(Duration::from_millis(250));
            }
        });
        let r = play_games(job, evaluator, &stats);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        r
    })?;
    let s = stats.snapshot();
    pb.finish_with_message(s.line());
    Ok((games, s))
}

fn window_shards(run: &RunDir, cfg: &RunConfig, g: u32) -> Vec<PathBuf> {
    let first = g.saturating_sub(cfg.training.window_generations - 1).max(1);
    let mut shards = Vec::new();
    for gen in first..=g {
        if let Ok(entries) = std::fs::read_dir(run.selfplay(gen)) {
            let mut v: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "shard")).collect();
            v.sort();
            shards.extend(v);
        }
    }
    shards
}

pub fn train_generation(run: &RunDir, cfg: &RunConfig, g: u32, show: bool) -> Result<TrainSummary> {
    if let Some(s) = read_json::<TrainSummary>(&run.train_report(g))? {
        if run.model(g).join("model.json").exists() {
            return Ok(s);
        }
    }
    let started = Instant::now();
    let earlier_seconds = read_json::<TrainSummary>(&run.train_report(g))?.map(|s| s.seconds).unwrap_or(0.0);
    let pb = bar(cfg.training.steps_per_generation as u64, "train", show);
    let on_step = |s: u32, steps: u32, l: &trainer::StepLoss| {
        pb.set_length(steps as u64);
        pb.set_position(s as u64);
        pb.set_message(format!("loss {:.3} (policy {:.3}, value {:.3})", l.total, l.policy, l.value));
    };
    let job = trainer::TrainJob {
        variant: cfg.variant()?,
        config: cfg.training.clone(),
        net: cfg.net_config()?,
        generation: g,
        shards: window_shards(run, cfg, g),
        checkpoint: run.checkpoint(),
        export_dir: run.model(g),
        seed: cfg.seed,
        on_step: Some(&on_step),
        stop_after: None,
    };
    let report = trainer::train_generation(&job)?;
    pb.finish();
    for s in &report.skipped {
        tracing::warn!("skipped {s}");
    }
    // A resumed generation reports only its remaining steps; keep the earlier ones.
    let mut losses = read_json::<TrainSummary>(&run.train_report(g))?.map(|s| s.losses).unwrap_or_default();
    losses.retain(|l| report.losses.first().is_none_or(|f| l.step < f.step));
    losses.extend(report.losses.iter().copied());
    let summary = TrainSummary {
        steps: losses.len() as u32,
        train_samples: report.train_samples,
        validation_samples: report.validation_samples,
        losses,
        validation: report.validation.map(|v| [v.total, v.policy, v.value]),
        skipped: report.skipped,
        seconds: earlier_seconds + started.elapsed().as_secs_f64(),
    };
    write_json(&run.train_report(g), &summary)?;
    Ok(summary)
}

pub fn evaluate_generation(run: &RunDir, cfg: &RunConfig, g: u32, show: bool) -> Result<EvalSummary> {
    let sims = cfg.evaluation.simulations;
    let player = |gen: u32| {
        if gen == 0 {
            format!("uniform,sims={sims},name=gen-0-uniform")
        } else {
            format!("checkpoint:{},sims={sims},name=gen-{gen}", run.model(gen).display())
        }
    };
    let spec = |opponent: String, pairs: u32, salt: u64| MatchSpec {
        variant: &cfg.variant,
        options: &cfg.options,
        new: player(g),
        opponent,
        pairs,
        opening_plies: cfg.evaluation.opening_plies,
        max_plies: cfg.selfplay.max_plies,
        threads: cfg.threads,
        seed: cfg.seed ^ salt ^ (g as u64) << 20,
    };
    let dir = run.eval_dir(g);
    let vs_previous = play_match(&spec(player(g - 1), cfg.evaluation.previous_pairs, 1), &dir.join("previous"), show)?;
    let vs_uniform = play_match(&spec(format!("uniform,sims={sims},name=uniform-{sims}"), cfg.evaluation.uniform_pairs, 2), &dir.join("uniform"), show)?;
    let vs_anchor = play_match(&spec(anchor_spec(&cfg.evaluation.anchor), cfg.evaluation.anchor_pairs, 3), &dir.join("anchor"), show)?;
    let e = EvalSummary { generation: g, vs_previous, vs_uniform, vs_anchor: Some(vs_anchor), simulations: sims };
    write_json(&run.eval_report(g), &e)?;
    Ok(e)
}

/// The anchor's spec with a stable name (the spec text), so every run calls it the same.
fn anchor_spec(spec: &str) -> String {
    if spec.contains("name=") {
        spec.to_string()
    } else {
        format!("{spec},name=anchor:{}", spec.replace(',', ";").replace('=', ":"))
    }
}

/// Rewrites `summary.tsv` and the plots from the per-generation files.
pub fn write_summary(run: &RunDir, cfg: &RunConfig) -> Result<()> {
    let mut tsv = String::from("generation\tgames\tpositions_per_s\tavg_plies\tblack_wins\twhite_wins\tdraws\ttrain_steps\ttrain_loss\tval_loss\tval_policy\tval_value\tvs_previous\tvs_previous_lo\tvs_previous_hi\tvs_uniform\tvs_uniform_lo\tvs_uniform_hi\tvs_anchor\tvs_anchor_lo\tvs_anchor_hi\tanchor_elo\n");
    let mut train_pts: [Vec<(f64, f64)>; 3] = Default::default();
    let mut val_pts: Vec<(f64, f64)> = Vec::new();
    let mut prev_pts = Vec::new();
    let mut uni_pts = Vec::new();
    let mut uni_lo = Vec::new();
    let mut anchor_pts = Vec::new();
    for g in 1..=cfg.generations {
        let (Some(sp), Some(tr), Some(ev)) = (
            read_json::<SelfplaySummary>(&run.selfplay(g).join("summary.json"))?,
            read_json::<TrainSummary>(&run.train_report(g))?,
            read_json::<EvalSummary>(&run.eval_report(g))?,
        ) else {
            continue;
        };
        let (plo, phi) = ev.vs_previous.interval();
        let (ulo, uhi) = ev.vs_uniform.interval();
        let last = tr.losses.last();
        let val = tr.validation.unwrap_or([f32::NAN; 3]);
        tsv += &format!(
            "{g}\t{}\t{:.1}\t{:.1}\t{}\t{}\t{}\t{}\t{:.4}\t{:.4}\t{:.4}\t{:.4}\t{:.3}\t{:.3}\t{:.3}\t{:.3}\t{:.3}\t{:.3}\t{}\n",
            sp.games,
            sp.positions_per_second,
            sp.average_plies,
            sp.black_wins,
            sp.white_wins,
            sp.draws,
            tr.steps,
            last.map(|l| l.total).unwrap_or(f32::NAN),
            val[0],
            val[1],
            val[2],
            ev.vs_previous.score(),
            plo,
            phi,
            ev.vs_uniform.score(),
            ulo,
            uhi,
            match ev.vs_anchor.as_ref().filter(|a| a.games > 0) {
                Some(a) => {
                    let (lo, hi) = a.interval();
                    format!("{:.3}\t{lo:.3}\t{hi:.3}\t{:.0}", a.score(), a.elo())
                }
                None => "\t\t\t".to_string(),
            }
        );
        if let Some(a) = ev.vs_anchor.as_ref().filter(|a| a.games > 0) {
            anchor_pts.push((g as f64, a.score()));
        }
        for l in &tr.losses {
            train_pts[0].push((l.step as f64, l.total as f64));
            train_pts[1].push((l.step as f64, l.policy as f64));
            train_pts[2].push((l.step as f64, l.value as f64));
        }
        if let (Some(l), true) = (last, val[0].is_finite()) {
            val_pts.push((l.step as f64, val[0] as f64));
        }
        if ev.vs_previous.games > 0 {
            prev_pts.push((g as f64, ev.vs_previous.score()));
        }
        if ev.vs_uniform.games > 0 {
            uni_pts.push((g as f64, ev.vs_uniform.score()));
            uni_lo.push((g as f64, ulo));
        }
    }
    records::write_atomic(&run.0.join("summary.tsv"), tsv.as_bytes())?;
    let plots = run.0.join("plots");
    std::fs::create_dir_all(&plots)?;
    line_chart(
        &plots.join("losses.svg"),
        "Training loss",
        "optimiser step",
        "loss",
        &[
            Series { name: "total", points: train_pts[0].clone(), color: RGBColor(30, 30, 30) },
            Series { name: "policy", points: train_pts[1].clone(), color: RGBColor(31, 119, 180) },
            Series { name: "value (WDL)", points: train_pts[2].clone(), color: RGBColor(214, 39, 40) },
            Series { name: "validation total", points: val_pts, color: RGBColor(44, 160, 44) },
        ],
    )
    .map_err(anyhow::Error::msg)?;
    line_chart(
        &plots.join("evaluation.svg"),
        "Evaluation score by generation",
        "generation",
        "score",
        &[
            Series { name: "vs previous generation", points: prev_pts, color: RGBColor(31, 119, 180) },
            Series { name: "vs uniform-prior search", points: uni_pts, color: RGBColor(214, 39, 40) },
            Series { name: "vs uniform, 95% lower bound", points: uni_lo, color: RGBColor(255, 152, 150) },
            Series { name: "vs fixed anchor", points: anchor_pts, color: RGBColor(44, 160, 44) },
        ],
    )
    .map_err(anyhow::Error::msg)?;
    Ok(())
}

/// `copper selfplay`: games with one model (or the uniform stand-in) into `out`.
pub fn standalone_selfplay(cfg: &RunConfig, model_dir: Option<&Path>, out: &Path, show: bool) -> Result<()> {
    model::init_cpu_threads(cfg.threads);
    let variant = cfg.variant()?;
    let evaluator: Box<dyn Evaluator<Game>> = match model_dir {
        None => Box::new(UniformEvaluator),
        Some(dir) => {
            let net = model::load_inference(dir)?;
            let e = NetEvaluator::new(net, variant).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?.serial(cfg.threads > 1);
            Box::new(CachedEvaluator::new(e, cfg.selfplay.cache_entries.max(1)))
        }
    };
    let ids: Vec<u64> = (0..cfg.selfplay.games as u64).filter(|&id| !shard_path(out, id).exists()).collect();
    let job = SelfplayJob {
        variant,
        config: cfg.selfplay.clone(),
        generation: 0,
        out_dir: out.to_path_buf(),
        game_ids: ids.clone(),
        threads: cfg.threads,
        seed: cfg.seed,
    };
    let pb = bar(ids.len() as u64, "selfplay", show);
    let (_, s) = play_with_progress(&job, &*evaluator, &pb, 0)?;
    println!("{}", s.line());
    println!(
        "network share of worker time {:.0}%, {:.0} evaluations per batch",
        100.0 * s.eval_seconds / (s.seconds * cfg.threads as f64),
        s.evaluations as f64 / s.batches.max(1) as f64
    );
    Ok(())
}

/// CPU time (user + system) of this process, from /proc (Linux); `None` elsewhere.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// `copper bench-selfplay`: self-play throughput of the configured network.
pub fn bench_selfplay(cfg: &RunConfig, model_dir: Option<&Path>, games: u32) -> Result<()> {
    model::init_cpu_threads(cfg.threads);
    let variant = cfg.variant()?;
    let net = match model_dir {
        Some(dir) => model::load_inference(dir)?,
        None => {
            let device = model::cpu_device();
            device.seed(cfg.seed);
            let net = model::Net::new(&cfg.net_config()?, &device).map_err(|e| anyhow::anyhow!("{e}"))?;
            model::InferenceNet::from_net(&net)
        }
    };
    let c = net.config().clone();
    let evaluator = NetEvaluator::new(net, variant).map_err(|e| anyhow::anyhow!(e))?.serial(cfg.threads > 1);
    let out = std::env::temp_dir().join(format!("copper-bench-{}", std::process::id()));
    let job = SelfplayJob {
        variant,
        config: selfplay::SelfplayConfig { games, ..cfg.selfplay.clone() },
        generation: 0,
        out_dir: out.clone(),
        game_ids: (0..games as u64).collect(),
        threads: cfg.threads,
        seed: cfg.seed,
    };
    let stats = Stats::default();
    let cpu0 = process_cpu_seconds();
    let t = Instant::now();
    let finished = play_games(&job, &evaluator, &stats)?;
    let wall = t.elapsed().as_secs_f64();
    let cpu = process_cpu_seconds().zip(cpu0).map(|(a, b)| a - b);
    let _ = std::fs::remove_dir_all(&out);
    let s = stats.snapshot();
    println!(
        "variant {}, network {}x{} ({} input planes, {} policy planes), {} threads, {} games in flight per thread",
        variant.title, c.blocks, c.channels, c.input_planes, c.policy_planes, cfg.threads, cfg.selfplay.games_in_flight
    );
    println!(
        "simulations (full/fast): {}/{}, full-search fraction {}",
        cfg.selfplay.simulations, cfg.selfplay.fast_simulations, cfg.selfplay.full_search_fraction
    );
    println!("games                 {}", finished.len());
    println!("wall time             {wall:.1} s");
    println!("positions/s           {:.1}", s.positions as f64 / wall);
    println!("simulations/s         {:.0}", s.simulations as f64 / wall);
    println!("network evaluations/s {:.0} (mean batch {:.1})", s.evaluations as f64 / wall, s.evaluations as f64 / s.batches.max(1) as f64);
    println!("games per hour        {:.0}", finished.len() as f64 / wall * 3600.0);
    println!("average game length   {:.1} plies", s.average_plies);
    match cpu {
        Some(cpu) => println!("CPU utilisation       {:.0}% of {} cores", 100.0 * cpu / (wall * cfg.threads as f64), cfg.threads),
        None => println!("CPU utilisation       n/a (no /proc)"),
    }
    println!("inside the network    {:.0}% of worker time", 100.0 * s.eval_seconds / (wall * cfg.threads as f64));
    Ok(())
}
