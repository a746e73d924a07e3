//! The trainer role: claims each generation, takes its games, trains, publishes the
//! model (fenced: docs/FLEET.md, "Fencing") and evaluates it.

use super::protocol::{
    agreed_config, copy_dir, count_games, fetch_model, files_under, finished_games, in_place, model_manifest_of, read_manifest, read_step_manifest, sync_down,
    sync_up, ModelFiles,
};
use crate::config::RunConfig;
use crate::stages;
use anyhow::{anyhow, bail, Context, Result};
use records::run_dir::{keys, ModelManifest, RunDir, StepManifest};
use selfplay::GameLine;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::{RaceResult, Store};

/// Publishes the model in `dir` as generation `g` — its files, the training's report and
/// checkpoint under keys named by its hash, then the manifest through [`store::decide`] —
/// and makes the local run hold the model that won: this one, or the one published first
/// (by another trainer, or an earlier life of this one), whose files, checkpoint and report
/// then replace this trainer's own. The winner's report becomes the generation's.
fn publish_model(store: &Store, local: &RunDir, g: u32, opts: &TrainerOptions) -> Result<()> {
    let (manifest, files) = model_manifest_of(store, g, &local.model(g), &opts.id)?;
    let decided = match read_manifest::<ModelManifest>(store, &keys::model_manifest(g))? {
        Some(m) => m,
        None => decide_model(store, local, g, opts, &manifest, files)?,
    };
    if decided.hash != manifest.hash {
        take_published(store, local, g, &decided)?;
    }
    if !in_place(store, local) && store.modified(&keys::train_report(g))?.is_none() {
        if let Some(bytes) = store.get_at_most(&keys::train_report_of(g, &decided.hash), store::MAX_SMALL_OBJECT)? {
            store.put(&keys::train_report(g), bytes)?;
        }
    }
    Ok(())
}

fn decide_model(store: &Store, local: &RunDir, g: u32, opts: &TrainerOptions, manifest: &ModelManifest, files: ModelFiles) -> Result<ModelManifest> {
    if manifest.dir != keys::model_dir(g) {
        for (n, bytes) in files {
            store.put(&format!("{}/{n}", manifest.dir), bytes)?;
        }
        if local.checkpoint().exists() {
            store.put(&keys::checkpoint_after(g, &manifest.hash), std::fs::read(local.checkpoint())?)?;
        }
        if local.train_report(g).exists() {
            store.put(&keys::train_report_of(g, &manifest.hash), std::fs::read(local.train_report(g))?)?;
        }
    }
    still_holds(store, opts, g)?;
    let decided = store::decide(store, &keys::model_manifest(g), &opts.id, serde_json::to_vec_pretty(manifest)?.into(), opts.settle)?;
    serde_json::from_slice(&decided).with_context(|| format!("{}/{} is corrupt", store.url(), keys::model_manifest(g)))
}

/// Makes the local run hold the published model of generation `g` (another trainer's, or
/// this trainer's from an earlier life) as if this trainer had trained it: its files, the
/// checkpoint that made it and its training report, so that training goes on from it.
fn take_published(store: &Store, local: &RunDir, g: u32, manifest: &ModelManifest) -> Result<()> {
    if in_place(store, local) {
        // `copper train` trains in place: the files are the store's own, so they must be
        // the published model's (two in-place trainers on one directory are not fenced).
        let here = local.model(g);
        if here.join("model.json").exists() && model_manifest_of(store, g, &here, &manifest.trainer)?.0.hash == manifest.hash {
            return Ok(());
        }
        bail!("{}: generation {g}'s files in place are not the model its manifest names (published by `{}`)", store.url(), manifest.trainer);
    }
    let dir = fetch_model(store, g, &local.0.join("cache"))?;
    let _ = std::fs::remove_dir_all(local.model(g));
    copy_dir(&dir, &local.model(g))?;
    // Generation 0 from `initial_model` has no checkpoint: the next training starts fresh.
    let key = keys::checkpoint_after(g, &manifest.hash);
    match store.get(&key)? {
        Some(bytes) => records::write_atomic(&local.checkpoint(), &bytes)?,
        None if g == 0 => {
            let _ = std::fs::remove_file(local.checkpoint());
        }
        None => bail!("{}: model {g} is published without {key}", store.url()),
    }
    let report = store.get_at_most(&keys::train_report_of(g, &manifest.hash), store::MAX_SMALL_OBJECT)?;
    match report.or(store.get_at_most(&keys::train_report(g), store::MAX_SMALL_OBJECT)?) {
        Some(bytes) => records::write_atomic(&local.train_report(g), &bytes)?,
        None => {
            let _ = std::fs::remove_file(local.train_report(g));
        }
    }
    tracing::info!(generation = g, trainer = %manifest.trainer, "the published model of this generation is taken, not this trainer's own");
    Ok(())
}

/// The trainer's settings (`copper trainer`).
#[derive(Clone, Debug)]
pub struct TrainerOptions {
    /// Names its claims; a restarted trainer with the same id keeps its generation.
    pub id: String,
    /// Its local copy of the run (checkpoint, models, the window's shards, reports); the
    /// root itself when the store is a local directory.
    pub work_dir: Option<PathBuf>,
    pub poll: Duration,
    /// The claim race's wait ([`store::race`]): longer than any put takes.
    pub settle: Duration,
    /// A contender silent this long has given up its claims.
    pub lease: Duration,
    /// Set when the games will not come (the in-process worker of `copper train` ended):
    /// the trainer then stops waiting for them.
    pub no_more_games: Option<Arc<AtomicBool>>,
    /// The USI engines a config read from the store may start (its teacher, its
    /// evaluation anchor), and how (`--allow-engine`): the store is not trusted to name
    /// programs. A config given by the caller is its own and is not checked.
    pub allowed_engines: players::EngineAllowList,
}

/// The trainer's local copy of the run.
fn local_run(store: &Store, opts: &TrainerOptions) -> Result<RunDir> {
    // A trainer with a work directory works there even on a local store, so that what it
    // writes before it knows whether it still holds the run is its own.
    match (store.local_root(), &opts.work_dir) {
        (_, Some(dir)) => Ok(RunDir(dir.clone())),
        (Some(root), None) => Ok(RunDir(root.to_path_buf())),
        (None, None) => bail!("a trainer on {} needs a --work-dir for its local copy of the run", store.url()),
    }
}

/// Beats for `id` every quarter lease while `f` runs (so a long training step keeps
/// its claim).
fn with_heartbeat<T>(store: &Store, id: &str, lease: Duration, f: impl FnOnce() -> T) -> T {
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let every = (lease / 4).max(Duration::from_millis(50));
            let mut last = Instant::now();
            while !done.load(Relaxed) {
                if last.elapsed() >= every {
                    if let Err(e) = store::heartbeat(store, id) {
                        tracing::warn!("heartbeat: {e}");
                    }
                    last = Instant::now();
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let r = f();
        done.store(true, Relaxed);
        r
    })
}

/// The first generation a trainer of this run has to work on (0: the model of generation
/// 0 is still to make), `None` when every generation is done.
fn first_generation_to_do(store: &Store, cfg: &RunConfig) -> Result<Option<u32>> {
    if store.get(&keys::model_manifest(0))?.is_none() && (cfg.initial_model.is_some() || cfg.teacher.enabled()) {
        return Ok(Some(0));
    }
    for g in 1..=cfg.generations {
        if store.get(&keys::eval_report(g))?.is_none() {
            return Ok(Some(g));
        }
    }
    Ok(None)
}

/// Claims generation `g` for this trainer ([`store::race`], the holder of the previous
/// step having the right of way), or says who holds it.
fn claim(store: &Store, opts: &TrainerOptions, g: u32) -> Result<()> {
    let incumbent = match g {
        0 => None,
        _ => read_manifest::<StepManifest>(store, &keys::step_manifest(g - 1))?.map(|m| m.trainer).filter(|t| !t.is_empty()),
    };
    if let RaceResult::Lost { winner } = store::race(store, &keys::claims(g), &opts.id, incumbent.as_deref(), opts.settle, opts.lease)? {
        bail!("generation {g} is held by trainer `{winner}` on {}; this trainer ({}) stops", store.url(), opts.id);
    }
    Ok(())
}

/// Fencing before each write that publishes: a trainer whose claim on `g` another trainer
/// voided (it was silent past its lease: paused, suspended, cut off) has been replaced,
/// and stops rather than publish beside its replacement.
fn still_holds(store: &Store, opts: &TrainerOptions, g: u32) -> Result<()> {
    if store::voided(store, &keys::claims(g), &opts.id)? {
        bail!("trainer `{}` lost generation {g} on {} while it was silent past its lease; it stops without publishing", opts.id, store.url());
    }
    Ok(())
}

/// `copper trainer`: trains the run in `store` generation by generation with the games
/// workers upload. `cfg` starts a new run or must match the stored one (`None` reads it).
/// Calls `after_generation` with the local run directory after each generation.
pub fn run_trainer(store: &Store, cfg: Option<&RunConfig>, opts: &TrainerOptions, show: bool, after_generation: &mut dyn FnMut(&Path)) -> Result<()> {
    let local = local_run(store, opts)?;
    // A trainer that loses the run must leave it as it was: it claims its first
    // generation before it writes anything, the config included.
    let from_store = cfg.is_none();
    let (cfg, write) = agreed_config(store, cfg)?;
    if from_store {
        cfg.check_programs(&opts.allowed_engines).with_context(|| format!("the run config stored in {}", store.url()))?;
    }
    let first = first_generation_to_do(store, &cfg)?;
    match first {
        Some(g) => claim(store, opts, g)?,
        // A trainer with nothing to train holds no generation, so it may not write the
        // run's config (workers would read it and stop while the holder waits for games).
        None if write => bail!(
            "{} has every generation up to {} evaluated, so this trainer ({}) has nothing to train and holds no generation: \
             it leaves the stored config as it is (give --generations above the generations done to go on)",
            store.url(),
            cfg.generations,
            opts.id
        ),
        None => {
            println!("trainer {}: every generation of the run in {} is done", opts.id, store.url());
            return Ok(());
        }
    }
    if write {
        store.put(keys::CONFIG, cfg.to_toml())?;
    }
    let cfg = RunConfig { run_dir: local.0.clone(), ..cfg };
    std::fs::create_dir_all(&local.0).with_context(|| format!("creating {}", local.0.display()))?;
    if !in_place(store, &local) {
        records::write_atomic(&local.config(), cfg.to_toml().as_bytes())?;
    }
    model::init_cpu_threads(cfg.threads);
    tracing::info!(store = store.url(), trainer = %opts.id, generations = cfg.generations, "trainer");
    if store.get(&keys::model_manifest(0))?.is_none() && (cfg.initial_model.is_some() || cfg.teacher.enabled()) {
        with_heartbeat(store, &opts.id, opts.lease, || model_zero(store, &local, &cfg, opts, show))?;
    }
    for g in 1..=cfg.generations {
        if store.get(&keys::eval_report(g))?.is_some() {
            continue;
        }
        if first != Some(g) {
            claim(store, opts, g)?;
        }
        let t = Instant::now();
        let summary = with_heartbeat(store, &opts.id, opts.lease, || train_one(store, &local, &cfg, opts, g, show))?;
        println!("{}", crate::report::summary_line(&summary, t.elapsed()));
        if let Err(e) = clean_up(store, opts, g) {
            tracing::warn!(generation = g, "cleaning up the store: {e:#}");
        }
        crate::report::write_summary(&local, &cfg)?;
        sync_up(store, &local, "summary.tsv")?;
        sync_up(store, &local, "plots")?;
        after_generation(&local.0);
        // The run's page, where the hook wrote one.
        if local.0.join("index.html").exists() {
            sync_up(store, &local, "index.html")?;
        }
    }
    crate::report::write_summary(&local, &cfg)?;
    Ok(())
}

/// Workers and contenders silent this long have left the run: their `workers/` and
/// `heartbeats/` entries are deleted.
const DEPARTED: Duration = Duration::from_secs(3600);

/// What the store no longer needs once generation `g` is done, so that what it holds and
/// what a listing reads do not grow with the run's length: the trainer's checkpoints but
/// the last two (a restarted trainer resumes from the newest), and the entries of workers
/// and contenders that have departed. Claims and their void marks stay (a few bytes a
/// generation, listed one generation at a time): a trainer paused for any number of
/// generations must still find that it was replaced.
fn clean_up(store: &Store, opts: &TrainerOptions, g: u32) -> Result<()> {
    if g >= 2 {
        let old = g - 2;
        for l in store.list("trainer")?.iter().filter(|l| keys::parse_checkpoint(&l.key).is_some_and(|(c, _)| c <= old)) {
            store.delete(&l.key)?;
        }
    }
    let beats = store.list("heartbeats")?;
    // Our own beat is the store's "now".
    let Some(now) = beats.iter().find(|l| l.key == format!("heartbeats/{}", opts.id)).map(|l| l.modified) else { return Ok(()) };
    for l in beats.iter().chain(&store.list("workers")?) {
        if now.duration_since(l.modified).is_ok_and(|age| age > DEPARTED) {
            store.delete(&l.key)?;
        }
    }
    Ok(())
}

/// Generation 0 from `initial_model` or the teacher stage, published with the teacher's
/// games as step 0.
fn model_zero(store: &Store, local: &RunDir, cfg: &RunConfig, opts: &TrainerOptions, show: bool) -> Result<()> {
    if let Some(dir) = &cfg.initial_model {
        stages::start_from_model(local, cfg, dir)?;
    }
    if cfg.teacher.enabled() {
        stages::teacher_stage(local, cfg, show)?;
        let shards: Vec<String> = files_under(&local.selfplay(0))
            .iter()
            .filter(|p| p.extension().is_some_and(|x| x == "shard"))
            .map(|p| format!("{}/{}", keys::selfplay_dir(0), p.file_name().unwrap().to_string_lossy()))
            .collect();
        still_holds(store, opts, 0)?;
        if !in_place(store, local) {
            // A game already there is an earlier life's (or a replaced trainer's) copy
            // of the same seeded game.
            for k in &shards {
                store.put_new(k, std::fs::read(local.0.join(k))?)?;
            }
            sync_up(store, local, "teacher")?;
        }
        let manifest = StepManifest { generation: 0, trainer: opts.id.clone(), games: shards, deferred: 0 };
        store::decide(store, &keys::step_manifest(0), &opts.id, serde_json::to_vec_pretty(&manifest)?.into(), opts.settle)?;
    }
    still_holds(store, opts, 0)?;
    publish_model(store, local, 0, opts)
}

/// A trainer on a fresh machine starts from the checkpoint that made the newest published
/// model up to `g`.
fn restore_checkpoint(store: &Store, local: &RunDir, g: u32) -> Result<()> {
    if in_place(store, local) || local.checkpoint().exists() {
        return Ok(());
    }
    for c in (0..=g).rev() {
        let Some(m) = read_manifest::<ModelManifest>(store, &keys::model_manifest(c))? else { continue };
        if let Some(bytes) = store.get(&keys::checkpoint_after(c, &m.hash))? {
            records::write_atomic(&local.checkpoint(), &bytes)?;
            tracing::info!(generation = c, "trainer checkpoint restored from the store");
        }
        break;
    }
    Ok(())
}

/// The step manifest of generation `g`: the stored one, or — once generation `g` has its
/// games — every finished game of generations `g - fleet.max_game_lag ..= g` (and 1 on)
/// that no earlier step consumed.
fn step_games(store: &Store, cfg: &RunConfig, opts: &TrainerOptions, g: u32, show: bool) -> Result<(StepManifest, f64)> {
    if let Some(m) = read_step_manifest(store, g)? {
        return Ok((m, 0.0));
    }
    let started = Instant::now();
    let quota = cfg.selfplay.games as u64;
    let pb = stages::bar(quota, "selfplay", show);
    loop {
        let have = count_games(store, g)?;
        pb.set_position(have.min(quota));
        if have >= quota {
            break;
        }
        if opts.no_more_games.as_ref().is_some_and(|f| f.load(Relaxed)) {
            bail!("generation {g} has {have} of its {quota} games and its worker has stopped");
        }
        std::thread::sleep(opts.poll);
    }
    pb.finish();
    let seconds = started.elapsed().as_secs_f64();
    // Only steps from the oldest generation still consumed can have taken its games.
    let oldest = g.saturating_sub(cfg.fleet.max_game_lag).max(1);
    let mut used = BTreeSet::new();
    for earlier in oldest..g {
        if let Some(m) = read_step_manifest(store, earlier)? {
            used.extend(m.games);
        }
    }
    let mut games: Vec<store::Listed> = finished_games(store, oldest, g)?.into_iter().filter(|l| !used.contains(&l.key)).collect();
    // Over the cap (workers played ahead while the trainer trained): the newest games.
    let cap = (cfg.fleet.step_games as u64 * quota) as usize;
    let deferred = games.len().saturating_sub(cap) as u64;
    if deferred > 0 {
        games.sort_by(|a, b| {
            (keys::parse_game_shard(&a.key).map(|(kg, _, _)| kg), a.modified).cmp(&(keys::parse_game_shard(&b.key).map(|(kg, _, _)| kg), b.modified))
        });
        games.drain(..deferred as usize);
        games.sort_by(|a, b| a.key.cmp(&b.key));
        tracing::info!(generation = g, deferred, cap, "the step takes the newest {cap} games; the others wait for the next step");
    }
    // The fleet's self-play time: from the previous model's publication (or the first
    // game) to the last game in, by the store's clock, without the outages in between.
    let published = store.modified(&keys::model_manifest(g - 1))?;
    let mut times: Vec<std::time::SystemTime> = games.iter().map(|l| l.modified).collect();
    times.sort();
    if let Some(p) = published.filter(|p| times.first().is_none_or(|f| p <= f)) {
        times.insert(0, p);
    }
    let seconds = playing_seconds(&times).unwrap_or(seconds);
    let manifest = StepManifest { generation: g, trainer: opts.id.clone(), games: games.into_iter().map(|l| l.key).collect(), deferred };
    still_holds(store, opts, g)?;
    // The first step manifest written is the step's, whoever wrote it (an earlier life of
    // this trainer, or one replaced while it paused): every trainer goes on with that one.
    store::decide(store, &keys::step_manifest(g), &opts.id, serde_json::to_vec_pretty(&manifest)?.into(), opts.settle)?;
    let stored = read_step_manifest(store, g)?.ok_or_else(|| anyhow!("{}: {} vanished", store.url(), keys::step_manifest(g)))?;
    Ok((stored, seconds))
}

/// The seconds a span of events (the model's publication, then each game's arrival) was
/// being played: the whole span, less every gap between two events longer than
/// [`OUTAGE`] and 50 typical gaps (the median), where nobody was playing — the run was
/// stopped and resumed, as a killed `copper train` is.
fn playing_seconds(times: &[std::time::SystemTime]) -> Option<f64> {
    let mut gaps: Vec<f64> = times.windows(2).map(|w| w[1].duration_since(w[0]).map_or(0.0, |d| d.as_secs_f64())).collect();
    if gaps.is_empty() {
        return None;
    }
    let total: f64 = gaps.iter().sum();
    gaps.sort_by(f64::total_cmp);
    let limit = OUTAGE.as_secs_f64().max(50.0 * gaps[gaps.len() / 2]);
    Some(total - gaps.iter().filter(|&&d| d > limit).sum::<f64>())
}

/// A gap between games longer than this (and than 50 typical ones) is an outage.
const OUTAGE: Duration = Duration::from_secs(600);

/// Requests a store answers at once when the trainer fetches a step's games: each GET
/// waits on the network, not the CPU, so a step of thousands of games is not thousands of
/// round trips one after the other.
const FETCHES_IN_FLIGHT: usize = 16;

/// `f` on every item, up to [`FETCHES_IN_FLIGHT`] at a time, results in the items' order;
/// the first error (in that order) is returned.
fn in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> Result<R> + Sync) -> Result<Vec<R>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<Result<R>>>> = items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..FETCHES_IN_FLIGHT.min(items.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Relaxed);
                let Some(item) = items.get(i) else { break };
                *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(f(item));
            });
        }
    });
    results.into_iter().map(|r| r.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every item was fetched")).collect()
}

fn train_one(store: &Store, local: &RunDir, cfg: &RunConfig, opts: &TrainerOptions, g: u32, show: bool) -> Result<crate::run_dir::Generation> {
    use crate::run_dir::{read_json, write_json, SelfplaySummary};
    let (manifest, waited) = step_games(store, cfg, opts, g, show)?;
    let summary_path = local.selfplay_summary(g);
    let selfplay = match sync_down(store, local, &keys::selfplay_summary(g))?.map(|p| read_json::<SelfplaySummary>(&p)).transpose()?.flatten() {
        Some(s) => s,
        None => {
            let lines: Vec<GameLine> = in_parallel(&manifest.games, |k| {
                let line_key = keys::game_line(k);
                let bytes = store
                    .get_at_most(&line_key, store::MAX_SMALL_OBJECT)?
                    .ok_or_else(|| anyhow!("{}/{line_key} is missing (its shard exists)", store.url()))?;
                serde_json::from_slice(&bytes).with_context(|| format!("{}/{line_key} is corrupt", store.url()))
            })?;
            let ids: BTreeSet<u64> = lines.iter().map(|l| l.game_id).collect();
            let all = selfplay::GamesSummary::of(&lines, &ids);
            let secs = waited.max(1e-9);
            let simulations: u64 = lines.iter().map(|l| l.simulations).sum();
            let s = SelfplaySummary {
                games: manifest.games.len() as u64,
                seconds: waited,
                positions_per_second: all.positions as f64 / secs,
                simulations_per_second: simulations as f64 / secs,
                average_plies: all.average_plies(),
                black_wins: all.black_wins,
                white_wins: all.white_wins,
                draws: all.draws,
                resignations: all.resignations,
                false_resignations: all.false_resignations,
                would_resign: all.would_resign,
                network_share: 0.0,
                endings: all.endings,
                prior_entropy: all.prior_entropy,
                improvement_kl: all.improvement_kl,
                positions: all.positions,
            };
            write_json(&summary_path, &s)?;
            sync_up(store, local, &keys::selfplay_summary(g))?;
            s
        }
    };
    // The window: the teacher's games while they are in it, and the last steps' games.
    let mut shards = Vec::new();
    for gen in stages::window_generations(cfg, g) {
        let Some(m) = read_step_manifest(store, gen)? else { continue };
        shards.extend(in_parallel(&m.games, |k| sync_down(store, local, k))?.into_iter().flatten());
    }
    match read_manifest::<ModelManifest>(store, &keys::model_manifest(g))? {
        // Published by an earlier life that stopped before its evaluation, or by a trainer
        // this one replaced: the workers play that model, so it is the one evaluated and
        // trained on, never a retrained one.
        Some(m) => take_published(store, local, g, &m)?,
        None => restore_checkpoint(store, local, g)?,
    }
    let trained = local.train_report(g).exists() && local.model(g).join("model.json").exists();
    let shards = if cfg.training.reanalyse_fraction > 0.0 && !trained && g >= 2 {
        let newest = if local.model(g - 1).join("model.json").exists() { local.model(g - 1) } else { fetch_model(store, g - 1, &local.0.join("cache"))? };
        crate::reanalyse::reanalyse_window(local, cfg, g, shards, &newest, show)?
    } else {
        shards
    };
    let train = stages::train_generation_on(local, cfg, g, shards, show)?;
    still_holds(store, opts, g)?;
    publish_model(store, local, g, opts)?;
    // Another trainer's model may have been published first and taken in place of ours.
    let train = read_json(&local.train_report(g))?.unwrap_or(train);
    // Evaluation plays the previous model too.
    if store.get(&keys::model_manifest(g - 1))?.is_some() && !local.model(g - 1).join("model.json").exists() {
        let dir = fetch_model(store, g - 1, &local.0.join("cache"))?;
        copy_dir(&dir, &local.model(g - 1))?;
    }
    let eval = stages::evaluate_generation(local, cfg, g, show)?;
    if let Err(e) = stages::write_start_values(local, cfg, g) {
        tracing::warn!(generation = g, "start values: {e:#}");
    }
    sync_up(store, local, &format!("eval/gen-{g:04}"))?;
    sync_up(store, local, &format!("eval/gen-{g:04}-starts.json"))?;
    // The evaluation report (written by the evaluation) last: in the store it marks the
    // generation done.
    still_holds(store, opts, g)?;
    sync_up(store, local, &keys::eval_report(g))?;
    Ok(crate::run_dir::Generation { generation: g, selfplay, train, eval })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{SystemTime, UNIX_EPOCH};

    #[test]
    fn parallel_fetches_keep_the_order_and_report_the_first_error() {
        let items: Vec<u32> = (0..100).collect();
        let doubled = in_parallel(&items, |&x| Ok(x * 2)).unwrap();
        assert_eq!(doubled, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let err = in_parallel(&items, |&x| {
            calls.fetch_add(1, Relaxed);
            if x % 30 == 7 {
                bail!("item {x}")
            } else {
                Ok(x)
            }
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "item 7");
        assert_eq!(calls.load(Relaxed), 100, "every item is tried");
        assert!(in_parallel(&[] as &[u32], |&x| Ok(x)).unwrap().is_empty());
    }

    fn at(seconds: &[u64]) -> Vec<SystemTime> {
        seconds.iter().map(|&s| UNIX_EPOCH + Duration::from_secs(s)).collect()
    }

    /// A run stopped for 27 minutes between the model's publication and its next games
    /// counts only the time games were coming in; a slow first game is not an outage.
    #[test]
    fn self_play_time_leaves_out_the_outages() {
        // Published at 0, games every 2 s from 100 (a first batch that took 100 s).
        let steady: Vec<u64> = std::iter::once(0).chain((0..50).map(|i| 100 + 2 * i)).collect();
        assert_eq!(playing_seconds(&at(&steady)), Some(198.0));
        // The same games 1,620 s later: the gap is left out.
        let resumed: Vec<u64> = std::iter::once(0).chain((0..50).map(|i| 1720 + 2 * i)).collect();
        assert_eq!(playing_seconds(&at(&resumed)), Some(98.0));
        assert_eq!(playing_seconds(&at(&[5])), None);
    }
}
