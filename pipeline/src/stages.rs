//! The stages of a generation — the teacher stage, self-play, training, evaluation — on a
//! run directory whose every write is atomic, so a stage resumes after any kill without
//! losing a finished game or corrupting a checkpoint; the roles (`crate::fleet`) run them.
//!
//! The files they write are laid out by [`RunDir`]; the report by [`crate::report`].

use crate::config::RunConfig;
use crate::evaluation::{play_match, MatchSpec};
pub use crate::run_dir::{read_json, write_json, EvalSummary, Generation, RunDir, SelfplaySummary, TrainSummary};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use neteval::NetEvaluator;
pub use records::run_dir::{StartValueEntry, StartValues};
use rules::Game;
use search::{BatchingConfig, BatchingEvaluator, CachedEvaluator, Evaluator, UniformEvaluator};
use selfplay::{play_games, shard_path, SelfplayJob, Stats};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

pub(crate) fn bar(len: u64, what: &str, show: bool) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(ProgressStyle::with_template("{prefix:>10} [{bar:30}] {pos}/{len} {elapsed_precise} {msg}").unwrap().progress_chars("=> "));
    pb.set_prefix(what.to_string());
    pb
}

/// The evaluation cache of one model, shared by the worker threads; none for 0 entries.
pub fn with_cache<E: Evaluator<Game> + 'static>(eval: E, entries: usize) -> Box<dyn Evaluator<Game>> {
    if entries == 0 {
        Box::new(eval)
    } else {
        Box::new(CachedEvaluator::new(eval, entries))
    }
}

/// The evaluator self-play calls, and its batching queue when it has one.
pub type SelfplayEvaluator = (Box<dyn Evaluator<Game>>, Option<BatchingEvaluator<Game>>);

/// Self-play's evaluator for the model in `dir` on `selfplay.device`: on the CPU each
/// worker runs its own batches on its own thread; on an accelerator the workers' calls go
/// through one batching queue (returned too, for its statistics). The cache is in front
/// of both, so a hit never waits in the queue.
pub fn selfplay_evaluator(cfg: &RunConfig, dir: &Path) -> Result<SelfplayEvaluator> {
    let variant = cfg.variant()?;
    let device = cfg.selfplay_device()?;
    let named = |e: String| anyhow::anyhow!("{}: {e}", dir.display());
    if device == model::DeviceSpec::Cpu {
        let net = with_selfplay_precision(model::load_inference(dir)?, cfg, variant).map_err(named)?;
        let eval = NetEvaluator::new(net, variant).map_err(named)?.serial(cfg.threads > 1);
        return Ok((with_cache(with_qmix(eval, cfg, variant), cfg.selfplay.cache_entries), None));
    }
    let eval = neteval::load_on(dir, variant, device)?;
    Ok(batched(eval, cfg, variant))
}

/// `net` in `selfplay.precision` (the CPU's int8 kernels calibrated on the f32 network's
/// own games, or f32 as it is).
fn with_selfplay_precision(net: model::InferenceNet, cfg: &RunConfig, variant: &'static rules::Variant) -> Result<model::InferenceNet, String> {
    neteval::quant::with_precision(net, variant, cfg.selfplay.precision.parse()?)
}

/// `eval` with `selfplay.qmix` of the quiescence score mixed into its values, when set.
fn with_qmix<E: Evaluator<Game> + 'static>(eval: E, cfg: &RunConfig, variant: &'static rules::Variant) -> Box<dyn Evaluator<Game>> {
    if cfg.selfplay.qmix > 0.0 {
        Box::new(players::qmix::QuiescenceMix::new(std::sync::Arc::new(eval), variant, cfg.selfplay.qmix, cfg.selfplay.qscale))
    } else {
        Box::new(eval)
    }
}

/// `eval` behind a batching queue sized for every worker's games in flight, then the cache.
fn batched<E: Evaluator<Game> + 'static>(eval: E, cfg: &RunConfig, variant: &'static rules::Variant) -> SelfplayEvaluator {
    let queue = selfplay_queue(eval, cfg);
    (with_cache(with_qmix(queue.clone(), cfg, variant), cfg.selfplay.cache_entries), Some(queue))
}

/// The batching queue of self-play on an accelerator: one batch can hold every worker's
/// games in flight.
fn selfplay_queue<E: Evaluator<Game> + 'static>(eval: E, cfg: &RunConfig) -> BatchingEvaluator<Game> {
    let max_batch = (cfg.threads * cfg.selfplay.games_in_flight as usize).max(1);
    BatchingEvaluator::new(eval, BatchingConfig { max_batch, servers: cfg.selfplay.device_batches as usize, ..BatchingConfig::default() })
}

fn has_model(run: &RunDir, g: u32) -> bool {
    run.model(g).join("model.json").exists()
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

/// The teacher stage: its games as shards of generation 0 (`selfplay/gen-0000/`), then
/// generation 0's model trained on them (`teacher.steps` steps with `teacher.value_share`
/// of the teacher's value in the value target). Done when that model exists. A run from
/// an initial model plays the games only (for the self-play batches' teacher share).
pub fn teacher_stage(run: &RunDir, cfg: &RunConfig, show: bool) -> Result<()> {
    if has_model(run, 0) && read_json::<TrainSummary>(&run.train_report(0))?.is_some() {
        return Ok(());
    }
    let job = teacher::TeacherJob {
        variant: cfg.variant()?,
        config: cfg.teacher.clone(),
        dir: run.teacher(),
        shard_dir: run.selfplay(0),
        starts: selfplay::start_positions(cfg.variant()?, &cfg.selfplay.starts),
        max_plies: cfg.selfplay.max_plies,
        threads: cfg.threads,
        seed: cfg.seed,
    };
    let pb = bar(cfg.teacher.games as u64, "teacher", show);
    let s = teacher::run_stage(&job, &|done, _| pb.set_position(done))?;
    pb.finish();
    println!(
        "teacher: {} games ({}), {} positions, B/W/D {}/{}/{}, avg {:.0} plies, value scale k = {:.0} cp (held results: loss {:.3}, constant {:.3}), {:.2} CPU-hours of thread time{}",
        s.games,
        cfg.teacher.describe(),
        s.positions,
        s.black_wins,
        s.white_wins,
        s.draws,
        s.average_plies,
        s.fit.k,
        s.fit.loss,
        s.fit.constant_loss,
        s.cpu_seconds / 3600.0,
        match s.cpu_time_games {
            0 => String::new(),
            n => format!(", {:.2} of CPU time used by {n} of the games", s.cpu_time_seconds / 3600.0),
        }
    );
    if cfg.initial_model.is_some() {
        return Ok(());
    }
    let tr = train_generation_on(run, cfg, 0, teacher_shards(run), show)?;
    if let (Some(v), Some(c)) = (tr.validation, tr.calibration.as_ref()) {
        println!(
            "teacher training: {} steps, validation loss {:.3} (policy {:.3}, value {:.3} against the constant {:.3})",
            tr.steps, v[0], v[1], v[2], c.all.constant_value_loss
        );
    }
    Ok(())
}

/// Generation 0 is a trained model: copied to `models/gen-0000` and the trainer's
/// starting weights.
pub(crate) fn start_from_model(run: &RunDir, cfg: &RunConfig, dir: &Path) -> Result<()> {
    trainer::start_from_model(&run.checkpoint(), dir, 0, cfg.variant()?, &cfg.net_config()?, cfg.seed)
        .with_context(|| format!("starting from {}", dir.display()))?;
    if !has_model(run, 0) {
        let net = model::load_model(dir, &model::cpu_device())?;
        model::save_model_tagged(&net, &run.model(0), &trainer::game_tag(cfg.variant()?))?;
    }
    Ok(())
}

/// The generations whose games are generation `g`'s training window: the last
/// `training.window_generations`, and the teacher's (generation 0) while `g` is within
/// `teacher.window_generations` of it.
pub(crate) fn window_generations(cfg: &RunConfig, g: u32) -> Vec<u32> {
    let first = if cfg.teacher.enabled() && g <= cfg.teacher.window_generations { 0 } else { g.saturating_sub(cfg.training.window_generations - 1).max(1) };
    let mut gens: Vec<u32> = (first..=g).collect();
    if first == 0 {
        // The teacher's games, then the self-play window.
        gens.retain(|&x| x == 0 || x + cfg.training.window_generations > g);
    }
    gens
}

/// The teacher's shards (generation 0 of a local run).
fn teacher_shards(run: &RunDir) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(run.selfplay(0))
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "shard")).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// A run directory without the trainer's checkpoint (copied without it, or lost) would
/// train generation `g` from a fresh network: it goes on from the last exported model.
fn resume_from_last_model(run: &RunDir, cfg: &RunConfig, g: u32) -> Result<()> {
    if g > 0 && !run.checkpoint().exists() && run.model(g - 1).join("model.json").exists() {
        tracing::warn!("no trainer checkpoint in {}: generation {g} starts from models/gen-{:04} (a fresh optimiser and use counts)", run.0.display(), g - 1);
        trainer::start_from_model(&run.checkpoint(), &run.model(g - 1), g - 1, cfg.variant()?, &cfg.net_config()?, cfg.seed)?;
    }
    Ok(())
}

/// The training settings of generation `g`: the teacher's for generation 0 (its steps,
/// learning rate, decay and value share), the `[training]` section's after.
fn generation_training(cfg: &RunConfig, g: u32) -> trainer::TrainerConfig {
    let mut config = cfg.training.clone();
    if g == 0 {
        config.steps_per_generation = cfg.teacher.steps;
        config.learning_rate = cfg.teacher.learning_rate.unwrap_or(cfg.training.learning_rate);
        config.search_value_share = cfg.teacher.value_share;
        config.final_lr_fraction = cfg.teacher.final_lr_fraction;
    }
    config
}

/// Trains generation `g` on `shards` (its window) into `models/gen-NNNN/`, or reads the
/// report of a generation already trained.
pub fn train_generation_on(run: &RunDir, cfg: &RunConfig, g: u32, shards: Vec<PathBuf>, show: bool) -> Result<TrainSummary> {
    if let Some(s) = read_json::<TrainSummary>(&run.train_report(g))? {
        if run.model(g).join("model.json").exists() {
            return Ok(s);
        }
    }
    resume_from_last_model(run, cfg, g)?;
    let pb = bar(cfg.training.steps_per_generation as u64, "train", show);
    let on_step = |s: u32, steps: u32, l: &trainer::StepLoss| {
        pb.set_length(steps as u64);
        pb.set_position(s as u64);
        pb.set_message(format!("loss {:.3} (policy {:.3}, value {:.3})", l.total, l.policy, l.value));
    };
    let config = generation_training(cfg, g);
    let job = trainer::TrainJob {
        variant: cfg.variant()?,
        config,
        net: cfg.net_config()?,
        generation: g,
        shards,
        checkpoint: run.checkpoint(),
        export_dir: run.model(g),
        seed: cfg.seed,
        teacher_value_share: (cfg.teacher.enabled() && cfg.teacher.keep_value_share).then_some(cfg.teacher.value_share),
        teacher_batch_share: cfg.teacher.batch_share_at(g),
        on_step: Some(&on_step),
        stop_after: None,
    };
    let report = trainer::train_generation(&job)?;
    pb.finish();
    for s in &report.skipped {
        tracing::warn!("skipped {s}");
    }
    // The trainer's checkpoint carries the generation's earlier steps across a kill, so
    // its report is the whole generation's.
    let summary = TrainSummary {
        steps: report.losses.len() as u32,
        train_samples: report.train_samples,
        validation_samples: report.validation_samples,
        losses: report.losses,
        validation: report.validation.map(|v| [v.total, v.policy, v.value]),
        skipped: report.skipped,
        seconds: report.seconds,
        calibration: report.calibration,
        uses: report.uses,
    };
    write_json(&run.train_report(g), &summary)?;
    Ok(summary)
}

pub fn evaluate_generation(run: &RunDir, cfg: &RunConfig, g: u32, show: bool) -> Result<EvalSummary> {
    let sims = cfg.evaluation.simulations;
    // The model plays with the search its self-play used (generation 0 is that search
    // with uniform priors). The uniform opponent stays the plain uniform search, the
    // fixed reference every run's vs-uniform column is measured against; the ladder
    // rates the uniform search with the mate check as well.
    let mate = if cfg.selfplay.mate_in_one { ",mate=on" } else { "" };
    let keys = cfg.selfplay.search_spec_keys();
    let player = |gen: u32| {
        if gen == 0 && !has_model(run, 0) {
            format!("uniform,sims={sims}{mate},name=gen-0-uniform")
        } else {
            format!("checkpoint:{},sims={sims}{keys},name=gen-{gen}", players::spec::quote(&run.model(gen).to_string_lossy()))
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
    let started = Instant::now();
    let vs_previous = play_match(&spec(player(g - 1), cfg.evaluation.previous_pairs, 1), &dir.join("previous"), show)?;
    let vs_uniform = play_match(&spec(format!("uniform,sims={sims},name=uniform-{sims}"), cfg.evaluation.uniform_pairs, 2), &dir.join("uniform"), show)?;
    let vs_anchor = play_match(&spec(anchor_spec(&cfg.evaluation.anchor), cfg.evaluation.anchor_pairs, 3), &dir.join("anchor"), show)?;
    let e = EvalSummary { generation: g, vs_previous, vs_uniform, vs_anchor: Some(vs_anchor), simulations: sims, seconds: started.elapsed().as_secs_f64() };
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

/// `copper selfplay`: games with one model (or the uniform stand-in) into `out`.
pub fn standalone_selfplay(cfg: &RunConfig, model_dir: Option<&Path>, out: &Path, show: bool) -> Result<()> {
    model::init_cpu_threads(cfg.threads);
    let variant = cfg.variant()?;
    let evaluator: Box<dyn Evaluator<Game>> = match model_dir {
        None => Box::new(UniformEvaluator),
        Some(dir) => selfplay_evaluator(cfg, dir)?.0,
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
        on_finished: None,
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
    teacher::process_cpu_seconds().map(|c| c.own)
}

/// An evaluator whose calls' CPU time (the calling thread's) is added to `nanos`: the
/// benchmark's network time.
struct Timed<E> {
    inner: E,
    nanos: Arc<AtomicU64>,
}

impl<E: Evaluator<Game>> Evaluator<Game> for Timed<E> {
    fn evaluate(&self, batch: &[search::EvalRequest<Game>]) -> Vec<search::Evaluation> {
        let t = search::leafprof::thread_cpu_nanos();
        let out = self.inner.evaluate(batch);
        self.nanos.fetch_add(search::leafprof::thread_cpu_nanos().saturating_sub(t), Relaxed);
        out
    }
}

/// `copper bench-selfplay`: self-play throughput of the configured network.
pub fn bench_selfplay(cfg: &RunConfig, model_dir: Option<&Path>, games: u32) -> Result<()> {
    model::init_cpu_threads(cfg.threads);
    let variant = cfg.variant()?;
    let device = cfg.selfplay_device()?;
    let net = match model_dir {
        Some(dir) => model::load_model(dir, &model::cpu_device())?,
        None => {
            let device = model::cpu_device();
            model::Net::seeded(&cfg.net_config()?, &device, cfg.seed).map_err(|e| anyhow::anyhow!("{e}"))?
        }
    };
    let c = net.config().clone();
    // The benchmark measures the network as self-play runs it, without the cache, with
    // the quiescence mix (`selfplay.qmix`) around it as self-play has it; the network's
    // own time is counted apart, so that the time outside it includes the quiescence.
    let net_nanos = Arc::new(AtomicU64::new(0));
    let (evaluator, queue): (Box<dyn Evaluator<Game>>, _) = if device == model::DeviceSpec::Cpu {
        let folded = with_selfplay_precision(model::InferenceNet::from_net(&net), cfg, variant).map_err(|e| anyhow::anyhow!(e))?;
        let eval = NetEvaluator::new(folded, variant).map_err(|e| anyhow::anyhow!(e))?.serial(cfg.threads > 1);
        (with_qmix(Timed { inner: eval, nanos: net_nanos.clone() }, cfg, variant), None)
    } else {
        let on_device = model::DeviceNet::from_net(&net, device)?;
        let eval = NetEvaluator::on_device(on_device, variant).map_err(|e| anyhow::anyhow!(e))?;
        let queue = selfplay_queue(eval, cfg);
        (with_qmix(Timed { inner: queue.clone(), nanos: net_nanos.clone() }, cfg, variant), Some(queue))
    };
    search::leafprof::enable();
    let out = std::env::temp_dir().join(format!("copper-bench-{}", std::process::id()));
    let job = SelfplayJob {
        variant,
        config: selfplay::SelfplayConfig { games, ..cfg.selfplay.clone() },
        generation: 0,
        out_dir: out.clone(),
        game_ids: (0..games as u64).collect(),
        threads: cfg.threads,
        seed: cfg.seed,
        on_finished: None,
    };
    let stats = Stats::default();
    let cpu0 = process_cpu_seconds();
    let t = Instant::now();
    let finished = play_games(&job, &*evaluator, &stats)?;
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
    let net_seconds = net_nanos.load(Relaxed) as f64 * 1e-9;
    let sims = s.simulations.max(1) as f64;
    // CPU time throughout (a loaded machine's waits are no one's work): the process's
    // where there is /proc (else wall time × threads), the network calls' own threads'.
    let worker = cpu.unwrap_or(wall * cfg.threads as f64);
    println!("inside the network    {:.0}% of worker time", 100.0 * net_seconds / worker);
    println!(
        "outside the network   {:.1} us per simulation ({} time {:.1} s - network {:.1} s, over {} simulations)",
        (worker - net_seconds) / sims * 1e6,
        if cpu.is_some() { "CPU" } else { "worker" },
        worker,
        net_seconds,
        s.simulations
    );
    use search::leafprof::{read, Part};
    let parts = [
        ("mate in one", Part::MateInOne),
        ("mate in three", Part::MateInThree),
        ("quiescence", Part::Quiescence),
        ("legal moves", Part::LegalMoves),
        ("replay to leaf", Part::Replay),
    ];
    let mut counted = 0.0;
    for (name, part) in parts {
        let (secs, calls) = read(part);
        counted += secs;
        if calls > 0 {
            println!("  {name:<19} {:.1} us per simulation, {:.2} us per call ({calls} calls)", secs / sims * 1e6, secs / calls as f64 * 1e6);
        }
    }
    println!("  {:<19} {:.1} us per simulation (tree, encoding, allocation, ...)", "the rest", (worker - net_seconds - counted) / sims * 1e6);
    // The parts' times are sampled (search::leafprof): what the sample's clock reads cost
    // is in the time outside the network above, and printed so that it can be told apart.
    let (timed, read_ns) = (search::leafprof::timed_calls(), search::leafprof::clock_read_cost());
    println!(
        "  the clock's reads   at most {:.2} us per simulation, in the time outside the network ({timed} timed calls and {} network calls, two reads each at {read_ns} ns)",
        (timed + s.batches) as f64 * 2.0 * read_ns as f64 * 1e-3 / sims,
        s.batches
    );
    if let Some(q) = queue {
        let b = q.stats();
        println!(
            "device {device}: {} batches, mean batch {:.1} (target {:.0}, wait {:.2} ms), busy {:.0}% of the wall time",
            b.batches,
            b.mean_batch(),
            b.target,
            b.deadline_seconds * 1e3,
            100.0 * b.busy_seconds / wall
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Generation 0 learns from the teacher at the teacher's rate (or the training rate
    /// where a config has none), every later generation at the training rate.
    #[test]
    fn the_teacher_stage_trains_at_its_own_rate() {
        let mut cfg = RunConfig::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/default.toml")).unwrap();
        cfg.training.learning_rate = 0.0005;
        cfg.teacher.learning_rate = Some(0.002);
        let (g0, g1) = (generation_training(&cfg, 0), generation_training(&cfg, 1));
        assert_eq!((g0.learning_rate, g0.steps_per_generation, g0.search_value_share), (0.002, cfg.teacher.steps, cfg.teacher.value_share));
        assert_eq!((g1.learning_rate, g1.steps_per_generation), (0.0005, cfg.training.steps_per_generation));
        cfg.teacher.learning_rate = None;
        assert_eq!(generation_training(&cfg, 0).learning_rate, 0.0005);
    }

    #[test]
    fn a_run_without_its_checkpoint_goes_on_from_its_last_model() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir(dir.path().to_path_buf());
        let cfg = RunConfig::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/quick.toml")).unwrap();
        // No model of generation 1 yet: generation 2 has nothing to go on from.
        resume_from_last_model(&run, &cfg, 2).unwrap();
        assert!(!run.checkpoint().exists());
        neteval::save_random_model(cfg.variant().unwrap(), &run.model(1), cfg.network.blocks, cfg.network.channels, 5).unwrap();
        resume_from_last_model(&run, &cfg, 2).unwrap();
        let c = trainer::Checkpoint::load(&run.checkpoint()).unwrap().expect("a checkpoint from models/gen-0001");
        assert_eq!((c.generation, c.generation_done), (1, true));
        // Generation 1 itself still comes from generation 0's model or the teacher.
        let other = RunDir(dir.path().join("other"));
        resume_from_last_model(&other, &cfg, 1).unwrap();
        assert!(!other.checkpoint().exists());
    }

    /// `selfplay.precision = "int8"` runs self-play's network on the CPU's integer kernels
    /// (where it has one): its values stay within the quantisation's error of f32's but are
    /// not f32's; "f32" is the network as stored.
    #[test]
    fn self_play_runs_the_network_in_its_configured_precision() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = RunConfig::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/quick.toml")).unwrap();
        cfg.threads = 1;
        cfg.selfplay.qmix = 0.0;
        cfg.selfplay.cache_entries = 0;
        let variant = cfg.variant().unwrap();
        let model_dir = dir.path().join("model");
        neteval::save_random_model(variant, &model_dir, 2, 16, 3).unwrap();
        let reference = neteval::load(&model_dir, variant).unwrap();
        let mut game = Game::new(rules::Position::start(variant), None);
        let mut batch = Vec::new();
        for i in 0..8 {
            let moves = game.legal_moves().to_vec();
            batch.push(search::EvalRequest { state: game.clone(), moves: moves.clone() });
            game.play(moves[i * 7 % moves.len()]).unwrap();
        }
        let want = reference.evaluate(&batch);
        let mut values = |precision: &str| {
            cfg.selfplay.precision = precision.into();
            let (eval, _) = selfplay_evaluator(&cfg, &model_dir).unwrap();
            eval.evaluate(&batch).into_iter().map(|e| e.value).collect::<Vec<f32>>()
        };
        let f32_values = values("f32");
        assert_eq!(f32_values, want.iter().map(|e| e.value).collect::<Vec<_>>());
        let int8_values = values("int8");
        let worst = int8_values.iter().zip(&f32_values).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(worst < 0.1, "int8 strays {worst} from f32");
        if model::QuantKernel::best().is_some() {
            assert_ne!(int8_values, f32_values, "int8 was asked for and this CPU has a kernel");
        }
    }

    /// The accelerator path, run on the CPU through burn: two workers' leaves meet in the
    /// batching queue, every game is finished and written, and the queue saw every
    /// evaluation in fewer, larger batches than the workers made.
    #[test]
    fn self_play_through_the_batching_queue_finishes_and_merges_the_workers_batches() {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = RunConfig::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/quick.toml")).unwrap();
        cfg.threads = 2;
        cfg.selfplay.games = 6;
        cfg.selfplay.games_in_flight = 3;
        cfg.selfplay.simulations = 8;
        cfg.selfplay.fast_simulations = 4;
        cfg.selfplay.max_plies = 60;
        cfg.selfplay.cache_entries = 0;
        let variant = cfg.variant().unwrap();
        let model_dir = dir.path().join("model");
        neteval::save_random_model(variant, &model_dir, 1, 8, 3).unwrap();
        let net = model::DeviceNet::load(&model_dir, model::DeviceSpec::Cpu).unwrap();
        let (evaluator, queue) = batched(NetEvaluator::on_device(net, variant).unwrap(), &cfg, variant);
        let queue = queue.unwrap();
        let out = dir.path().join("games");
        let job = SelfplayJob {
            variant,
            config: cfg.selfplay.clone(),
            generation: 1,
            out_dir: out.clone(),
            game_ids: (0..6).collect(),
            threads: 2,
            seed: 5,
            on_finished: None,
        };
        let stats = Stats::default();
        let finished = play_games(&job, &*evaluator, &stats).unwrap();
        assert_eq!(finished.len(), 6);
        for g in &finished {
            let shard = records::read_shard(&g.shard).unwrap();
            assert_eq!(shard.records.len(), g.plies, "game {}", g.game_id);
        }
        let s = stats.snapshot();
        let q = queue.stats();
        assert_eq!(q.positions, s.evaluations, "every evaluation went through the queue");
        assert!(q.batches <= s.batches, "{} device batches for {} worker batches", q.batches, s.batches);
        assert!(q.mean_batch() <= (cfg.threads * cfg.selfplay.games_in_flight as usize) as f64);
    }
}
