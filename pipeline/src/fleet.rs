//! The loop's two roles over a store (`store` crate; the keys are `records::run_dir::keys`):
//!
//! - a **worker** plays self-play games with the newest published model and uploads each
//!   finished game (its log line, then its shard: the shard is the commit) the moment it
//!   ends, until generation N has its `selfplay.games`, then waits for model N;
//! - the **trainer** claims each generation (`store::race`: a second trainer on the same
//!   run loses and stops), waits for its games, writes the step manifest of every
//!   finished game no earlier step consumed (write-once, so a restarted trainer consumes
//!   the same games), trains on the window of the last manifests, publishes the model
//!   (files, then the manifest with their hash) and evaluates it.
//!
//! `copper train` is both roles in one process over a local root; `copper worker` and
//! `copper trainer` run them apart, on one machine or many. Either is safe to kill at any
//! point: a game is in the store whole or not at all, a model is visible only with its
//! manifest, and a restarted role goes on from what the store holds.

use crate::config::RunConfig;
use crate::run_loop::{self, selfplay_evaluator, GAME_ID_STRIDE};
use anyhow::{anyhow, bail, Context, Result};
use records::run_dir::{content_hash, keys, ManifestFile, ModelManifest, RunDir, StepManifest};
use rules::Game;
use search::{Evaluator, UniformEvaluator};
use selfplay::{GameLine, GameSink, SelfplayJob, Stats};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::{RaceResult, Store};

/// The run's configuration as the trainer saved it in the store.
pub fn stored_config(store: &Store) -> Result<Option<RunConfig>> {
    let Some(bytes) = store.get(keys::CONFIG)? else { return Ok(None) };
    let text = std::str::from_utf8(&bytes).with_context(|| format!("{}/{} is not UTF-8", store.url(), keys::CONFIG))?;
    let cfg = RunConfig::from_toml_str(text).with_context(|| format!("{}/{}", store.url(), keys::CONFIG))?;
    Ok(Some(cfg))
}

/// The newest generation with a published model: listed once, then (`known` set) found
/// by asking for the next manifests one by one — one request a look, however many
/// models the run has.
fn newest_model(store: &Store, known: &mut Option<u32>) -> Result<Option<u32>> {
    let mut newest = match *known {
        Some(n) => n,
        None => match store.list(keys::MODELS)?.iter().filter_map(|l| keys::manifest_generation(&l.key)).max() {
            Some(n) => n,
            None => return Ok(None),
        },
    };
    while store.modified(&keys::model_manifest(newest + 1))?.is_some() {
        newest += 1;
    }
    *known = Some(newest);
    Ok(Some(newest))
}

fn read_manifest<T: for<'de> serde::Deserialize<'de>>(store: &Store, key: &str) -> Result<Option<T>> {
    let Some(bytes) = store.get_at_most(key, store::MAX_SMALL_OBJECT)? else { return Ok(None) };
    Ok(Some(serde_json::from_slice(&bytes).with_context(|| format!("{}/{key} is corrupt", store.url()))?))
}

/// The step manifest of generation `g`, checked: every key a game's shard of a generation
/// up to `g` inside the run (a manifest is input; a key such as `/home/…` or `../..` would
/// make the trainer write outside its directory).
fn read_step_manifest(store: &Store, g: u32) -> Result<Option<StepManifest>> {
    let Some(m) = read_manifest::<StepManifest>(store, &keys::step_manifest(g))? else { return Ok(None) };
    if let Some(k) = m.games.iter().find(|k| !keys::is_inside(k) || keys::parse_game_shard(k).is_none_or(|(kg, _, _)| kg > g)) {
        bail!("{}/{}: `{k}` is not a game's shard key", store.url(), keys::step_manifest(g));
    }
    Ok(Some(m))
}

/// Generation `g`'s model as a local directory: in place on a local root, else downloaded
/// once into `cache/models/<hash>/` (a model with a manifest never changes).
pub fn fetch_model(store: &Store, g: u32, cache: &Path) -> Result<PathBuf> {
    let manifest: ModelManifest =
        read_manifest(store, &keys::model_manifest(g))?.ok_or_else(|| anyhow!("{}: generation {g} has no published model", store.url()))?;
    if let Some(f) = manifest.files.iter().find(|f| !is_plain_name(&f.name)) {
        bail!("{}/{}: `{}` is not a plain file name", store.url(), keys::model_manifest(g), f.name);
    }
    if !is_plain_name(&manifest.hash) {
        bail!("{}/{}: hash `{}` is not a plain name", store.url(), keys::model_manifest(g), manifest.hash);
    }
    let files_dir = model_files(&manifest);
    if !keys::is_model_dir(g, &files_dir) {
        bail!("{}/{}: `{files_dir}` is not a directory of generation {g}'s model", store.url(), keys::model_manifest(g));
    }
    if let Some(dir) = store.local_path(&files_dir) {
        let files = manifest.files.iter().map(|f| std::fs::read(dir.join(&f.name)).with_context(|| format!("reading {}", dir.join(&f.name).display())));
        check_model(store, g, &manifest, &files.collect::<Result<Vec<_>>>()?)?;
        return Ok(dir);
    }
    let dir = cache.join("models").join(&manifest.hash);
    if dir.join("model.json").exists() {
        return Ok(dir);
    }
    let mut files = Vec::new();
    for f in &manifest.files {
        let key = format!("{files_dir}/{}", f.name);
        files.push(store.get(&key)?.ok_or_else(|| anyhow!("{}/{key} is listed in the manifest but missing", store.url()))?);
    }
    check_model(store, g, &manifest, &files)?;
    let tmp = cache.join("models").join(format!(".{}.{}.tmp", manifest.hash, std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    for (f, bytes) in manifest.files.iter().zip(&files) {
        std::fs::write(tmp.join(&f.name), bytes.as_ref()).with_context(|| format!("writing {}", tmp.join(&f.name).display()))?;
    }
    match std::fs::rename(&tmp, &dir) {
        Ok(()) => {}
        // Another process of this machine fetched it first.
        Err(_) if dir.join("model.json").exists() => {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        Err(e) => return Err(e).with_context(|| format!("moving the model into {}", dir.display())),
    }
    Ok(dir)
}

/// The key of the directory holding a published model's files.
fn model_files(manifest: &ModelManifest) -> String {
    if manifest.dir.is_empty() {
        keys::model_dir(manifest.generation)
    } else {
        manifest.dir.clone()
    }
}

/// Refuses a model whose files are not the ones its manifest names: a file of another
/// size, or contents whose hash is not the manifest's (altered, or mixed from two writers).
fn check_model<B: AsRef<[u8]>>(store: &Store, g: u32, manifest: &ModelManifest, files: &[B]) -> Result<()> {
    let mut parts: Vec<&[u8]> = Vec::new();
    for (f, bytes) in manifest.files.iter().zip(files) {
        let bytes = bytes.as_ref();
        if bytes.len() as u64 != f.size {
            bail!("{}/{}/{}: {} bytes, its manifest says {}; the model is damaged", store.url(), model_files(manifest), f.name, bytes.len(), f.size);
        }
        parts.push(f.name.as_bytes());
        parts.push(bytes);
    }
    let hash = content_hash(parts);
    if hash != manifest.hash {
        bail!(
            "{}/{}: generation {g}'s files hash to {hash}, the manifest says {}; the model is damaged or mixed from two trainers",
            store.url(),
            model_files(manifest),
            manifest.hash
        );
    }
    Ok(())
}

/// A name that stays inside the directory it is joined to.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\'])
}

/// A model's files: names and bytes, in name order.
type ModelFiles = Vec<(String, Vec<u8>)>;

/// The manifest of the model in `dir` as trainer `id` would publish it for generation `g`:
/// in place where `dir` is the store's own directory for it, else under keys named by its
/// content hash.
fn model_manifest_of(store: &Store, g: u32, dir: &Path, id: &str) -> Result<(ModelManifest, ModelFiles)> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    let mut files = Vec::new();
    for n in names {
        let bytes = std::fs::read(dir.join(&n)).with_context(|| format!("reading {}", dir.join(&n).display()))?;
        files.push((n, bytes));
    }
    let hash = content_hash(files.iter().flat_map(|(n, b)| [n.as_bytes(), b.as_slice()]));
    let in_place = store.local_path(&keys::model_dir(g)).is_some_and(|p| p == dir);
    let manifest = ModelManifest {
        generation: g,
        trainer: id.to_string(),
        dir: if in_place { keys::model_dir(g) } else { keys::model_dir_of(g, &hash) },
        hash,
        files: files.iter().map(|(n, b)| ManifestFile { name: n.clone(), size: b.len() as u64 }).collect(),
    };
    Ok((manifest, files))
}

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
        // `copper train` trains in place and publishes only its own models.
        if local.model(g).join("model.json").exists() {
            return Ok(());
        }
        bail!("{}: generation {g}'s model was published by `{}` in place of this run's own", store.url(), manifest.trainer);
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

/// Whether the trainer works in the store's own directory (`copper train` on a local run).
fn in_place(store: &Store, local: &RunDir) -> bool {
    store.local_root().is_some_and(|root| root == local.0)
}

/// Every finished game in the store (shards) of generations `from..=to`, listed one
/// generation's directory at a time (not the whole history).
fn finished_games(store: &Store, from: u32, to: u32) -> Result<Vec<store::Listed>> {
    let mut out = Vec::new();
    for g in from..=to {
        out.extend(
            store
                .list(&keys::selfplay_dir(g))?
                .into_iter()
                .filter(|l| keys::parse_game_shard(&l.key).is_some_and(|(gen, worker, _)| gen == g && !worker.is_empty())),
        );
    }
    Ok(out)
}

fn count_games(store: &Store, g: u32) -> Result<u64> {
    Ok(store.list(&keys::selfplay_dir(g))?.iter().filter(|l| keys::parse_game_shard(&l.key).is_some_and(|(_, w, _)| !w.is_empty())).count() as u64)
}

/// A worker's settings (`copper worker`).
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Names the worker's games (`selfplay/gen-N/<id>/`); a restarted worker with the
    /// same id goes on with its numbering.
    pub id: String,
    pub threads: usize,
    /// Where it keeps games until they are uploaded, and downloaded models.
    pub work_dir: PathBuf,
    /// How often it looks for the run's config, a new model or a free quota.
    pub poll: Duration,
    /// Stop after this many games (all generations); `None` = until the run ends.
    pub max_games: Option<u64>,
}

/// What a worker did.
#[derive(Clone, Debug, Default)]
pub struct WorkerReport {
    pub games: u64,
    pub generations: BTreeSet<u32>,
    /// Seconds from the first look at a run in the store to the end, and of those the
    /// seconds spent not playing: waiting with nothing to do (for generation 0's model, or
    /// for the next model once a generation has its games without `fleet.play_ahead`), and
    /// waiting on the store — its calls between batches (an outage the store waits through
    /// included) and the wait for a batch's last uploads (games upload on a thread of
    /// their own while the others are played).
    pub alive_seconds: f64,
    pub idle_seconds: f64,
}

impl WorkerReport {
    /// The share of its time alive the worker did work (self-play or a job's games).
    pub fn busy_share(&self) -> f64 {
        if self.alive_seconds > 0.0 {
            1.0 - self.idle_seconds / self.alive_seconds
        } else {
            0.0
        }
    }
}

fn seed_of(id: &str) -> u64 {
    u64::from_str_radix(&content_hash([id.as_bytes()]), 16).unwrap_or(0)
}

/// `copper worker`: self-play for the run in `store` until it ends (its last generation's
/// model is published), `opts.max_games` are played, or `stop` is set.
pub fn run_worker(store: &Store, opts: &WorkerOptions, stop: &AtomicBool) -> Result<WorkerReport> {
    run_worker_with(store, opts, stop, &mut || Ok(false))
}

/// [`run_worker`] that calls `idle` before each self-play batch and whenever it would
/// wait (no run in the store yet, or the generation's games are in): `copper worker`
/// plays a tournament's or a study's games there (the `dispatch` crate), one game a call,
/// before self-play (a person waits for a tournament; self-play only waits for the
/// trainer). `idle` returns whether it did something; if not, the worker plays its batch
/// or sleeps its poll interval.
pub fn run_worker_with(store: &Store, opts: &WorkerOptions, stop: &AtomicBool, idle: &mut dyn FnMut() -> Result<bool>) -> Result<WorkerReport> {
    if opts.id.is_empty() || opts.id.contains('/') || opts.id.starts_with('.') {
        bail!("worker id `{}`: must be non-empty, without `/`, not starting with `.`", opts.id);
    }
    let mut report = WorkerReport::default();
    let mut loaded: Option<(u32, Box<dyn Evaluator<Game>>)> = None;
    let mut waiting_since: Option<Instant> = None;
    let mut alive_since: Option<Instant> = None;
    let mut newest_known: Option<u32> = None;
    let mut quota_met: Option<u32> = None;
    // Waits one poll unless `idle` found other work; the time counts as idle if not.
    let wait = |report: &mut WorkerReport, idle: &mut dyn FnMut() -> Result<bool>, counts: bool| -> Result<()> {
        let t = Instant::now();
        if !idle()? {
            std::thread::sleep(opts.poll);
            if counts {
                report.idle_seconds += t.elapsed().as_secs_f64();
            }
        }
        Ok(())
    };
    // Games are uploaded by a thread of their own while self-play goes on; the store
    // calls made meanwhile on this thread, and the wait for the last uploads of a batch,
    // are the worker's idle time.
    let uploader = Uploader::start(store.clone());
    let mut store_at_start: Option<store::Counters> = None;
    let mut flush_seconds = 0.0;
    // What changes rarely is looked at now and then, not before every batch: the run's
    // config, the live workers; this worker's next game id is counted, not listed.
    let mut config: Option<(RunConfig, Instant)> = None;
    let mut active: Option<(u64, Instant)> = None;
    let mut next_ids: std::collections::HashMap<u32, u64> = std::collections::HashMap::new();
    let mut job_look: Option<Instant> = None;
    let mut watcher: Option<Watcher> = None;
    let result = loop {
        if stop.load(Relaxed) {
            break Ok(());
        }
        let fresh = config.as_ref().is_none_or(|(_, at)| at.elapsed() >= LOOK_AGAIN);
        if fresh {
            config = stored_config(store)?.map(|c| (c, Instant::now()));
        }
        let Some((cfg, _)) = config.clone() else {
            note_wait(&mut waiting_since, "no run in the store yet");
            wait(&mut report, idle, false)?;
            continue;
        };
        alive_since.get_or_insert_with(Instant::now);
        store_at_start.get_or_insert_with(|| store.counters());
        let needs_model_zero = cfg.teacher.enabled() || cfg.initial_model.is_some();
        // Playing ahead, the newest model and the count of its generation's games are
        // looked at by a thread of their own, so no batch waits on the store for them;
        // otherwise (one machine's seeded run, `copper train`) before every batch.
        let quota = cfg.selfplay.games as u64;
        let watched = match (&mut watcher, cfg.fleet.play_ahead) {
            (Some(w), true) => w.latest(),
            (w @ None, true) => {
                *w = Some(Watcher::start(store.clone(), quota));
                None
            }
            _ => None,
        };
        let (newest, watched_count) = match watched {
            Some(Ok(seen)) => (seen.newest, Some(seen.count)),
            Some(Err(e)) => break Err(anyhow!("{e}")),
            None => (newest_model(store, &mut newest_known)?, None),
        };
        let g = match newest {
            Some(n) => n + 1,
            None if needs_model_zero => {
                note_wait(&mut waiting_since, "waiting for generation 0's model");
                wait(&mut report, idle, true)?;
                continue;
            }
            None => 1,
        };
        if g > cfg.generations && !fresh {
            // The run looks done by a config read a while ago: read it again first (a
            // trainer may have extended the run).
            config = None;
            continue;
        }
        if g > cfg.generations {
            tracing::info!(worker = %opts.id, games = report.games, "the run has its last model; worker done");
            break Ok(());
        }
        // Playing ahead, a generation known to have its games is not counted again: that
        // listing grows with the games played ahead, a look at it per batch would not.
        let have = match watched_count {
            _ if cfg.fleet.play_ahead && quota_met == Some(g) => quota,
            Some((cg, n)) if cg == g => n,
            _ => count_games(store, g)?,
        };
        if have >= quota {
            quota_met = Some(g);
        }
        let left_for_me = opts.max_games.map(|m| m.saturating_sub(report.games));
        if left_for_me == Some(0) {
            break Ok(());
        }
        // The last generation's extra games would go to no step: the run needs no more.
        let last = g == cfg.generations;
        if have >= quota && (!cfg.fleet.play_ahead || last) {
            note_wait(&mut waiting_since, "generation's games are in; waiting for the next model");
            wait(&mut report, idle, !last)?;
            continue;
        }
        waiting_since = None;
        // Tournaments' and studies' games come first; with none, their look is made at
        // most every `LOOK_FOR_JOBS`, not before every batch.
        if job_look.is_none_or(|at: Instant| at.elapsed() >= LOOK_FOR_JOBS) {
            if idle()? {
                continue;
            }
            job_look = Some(Instant::now());
        }
        if loaded.as_ref().map(|(lg, _)| *lg) != Some(g) {
            let evaluator: Box<dyn Evaluator<Game>> = if g == 1 && !needs_model_zero {
                Box::new(UniformEvaluator)
            } else {
                let dir = fetch_model(store, g - 1, &opts.work_dir)?;
                let worker_cfg = RunConfig { threads: opts.threads, ..cfg.clone() };
                selfplay_evaluator(&worker_cfg, &dir)?.0
            };
            tracing::info!(worker = %opts.id, generation = g, "playing with model {}", g - 1);
            loaded = Some((g, evaluator));
        }
        let evaluator = &loaded.as_ref().expect("loaded above").1;
        let next = match next_ids.get(&g) {
            Some(&n) => n,
            None => {
                let mine = format!("{}/{}", keys::selfplay_dir(g), opts.id);
                store.list(&mine)?.iter().filter_map(|l| keys::parse_game_shard(&l.key)).map(|(_, _, id)| id + 1).max().unwrap_or(g as u64 * GAME_ID_STRIDE)
            }
        };
        // Share what is left with the live workers, so the fleet overshoots the quota by
        // little (extra games go to the next step); playing ahead, a full batch.
        if active.is_none_or(|(_, at)| at.elapsed() >= LOOK_AGAIN) {
            active = Some((active_workers(store, &opts.id)?, Instant::now()));
        }
        let active = active.map_or(1, |(n, _)| n);
        let full = (opts.threads * cfg.selfplay.games_in_flight as usize).max(1) as u64;
        let share = if have >= quota { full } else { (quota - have).div_ceil(active) };
        let batch = share.min(full).min(left_for_me.unwrap_or(u64::MAX));
        if next + batch > (g as u64 + 1) * GAME_ID_STRIDE {
            bail!("worker {} has used generation {g}'s game ids; start it with another --id", opts.id);
        }
        let spool = opts.work_dir.join("spool").join(format!("gen-{g:04}"));
        let job = SelfplayJob {
            variant: cfg.variant()?,
            config: cfg.selfplay.clone(),
            generation: g,
            out_dir: spool.clone(),
            game_ids: (next..next + batch).collect(),
            threads: opts.threads,
            seed: cfg.seed ^ seed_of(&opts.id),
            on_finished: Some(uploader.sink(g, &opts.id)),
        };
        let finished = selfplay::play_games(&job, &**evaluator, &Stats::default())?;
        next_ids.insert(g, next + batch);
        report.games += finished.len() as u64;
        report.generations.insert(g);
        // The batch's games are in the store before the worker counts the quota again;
        // playing ahead, the count is only for sharing (games past the quota go to the
        // next step), and the uploads run on behind the games.
        if !cfg.fleet.play_ahead {
            let t = Instant::now();
            uploader.flush()?;
            flush_seconds += t.elapsed().as_secs_f64();
            let _ = std::fs::remove_dir_all(&spool);
        }
    };
    // Alive until it had nothing more to play: the uploads left then are not time it
    // could have played.
    report.alive_seconds = alive_since.map_or(0.0, |t| t.elapsed().as_secs_f64());
    let watched_seconds = watcher.as_ref().map_or(0.0, |w| w.look_ms.load(Relaxed) as f64 / 1000.0);
    drop(watcher);
    let in_store = store_at_start.map_or(0.0, |start| store.counters().since(&start).request_ms as f64 / 1000.0) - watched_seconds;
    let flushed = uploader.finish();
    if flushed.result.is_ok() {
        let _ = std::fs::remove_dir_all(opts.work_dir.join("spool"));
    }
    // The uploads' own time is not the worker's (they run beside its games), but their
    // calls' share of `in_store` is subtracted only as far as it was counted before.
    let uploaded_before = flushed.upload_seconds_before_finish.min(in_store);
    report.idle_seconds += (in_store - uploaded_before).max(0.0) + flush_seconds + flushed.blocked_seconds / opts.threads.max(1) as f64;
    result.and(flushed.result).map(|()| report)
}

/// Workers alive now: those that announced themselves (`workers/<id>`, rewritten before
/// every batch) within two minutes of this one, by the store's clock.
fn active_workers(store: &Store, me: &str) -> Result<u64> {
    store.put(&format!("workers/{me}"), me.to_string())?;
    let seen = store.list("workers")?;
    let Some(now) = seen.iter().find(|l| l.key == format!("workers/{me}")).map(|l| l.modified) else { return Ok(1) };
    Ok(seen.iter().filter(|l| now.duration_since(l.modified).map_or(true, |age| age < Duration::from_secs(120))).count().max(1) as u64)
}

fn note_wait(since: &mut Option<Instant>, what: &str) {
    if since.is_none() {
        tracing::info!("{what}");
        *since = Some(Instant::now());
    }
}

/// How long a worker goes on with what it last saw of the run's config and of the live
/// workers before it looks again (a new model or the quota is looked at every batch).
const LOOK_AGAIN: Duration = Duration::from_secs(10);

/// How often a worker playing ahead looks for a newer model and counts the generation's
/// games, when its batches are quicker than that.
const LOOK_FOR_MODEL: Duration = Duration::from_secs(1);
/// How often a worker busy with self-play looks for tournaments' and studies' games (a
/// person waiting for a tournament waits this long at most for a worker to join).
const LOOK_FOR_JOBS: Duration = Duration::from_secs(5);

/// What a [`Watcher`] saw last: the newest model, and (generation, games) of the
/// generation after it, counted until it had its quota.
#[derive(Clone, Copy)]
struct Seen {
    newest: Option<u32>,
    count: (u32, u64),
}

/// Looks at the store every `LOOK_FOR_MODEL` on a thread of its own — the newest model,
/// the games of the generation being played — for a worker playing ahead.
struct Watcher {
    latest: Arc<std::sync::Mutex<Option<Result<Seen, String>>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Milliseconds its looks took (beside the worker's games, not its idle time).
    look_ms: Arc<AtomicU64>,
}

impl Watcher {
    fn start(store: Store, quota: u64) -> Watcher {
        let latest: Arc<std::sync::Mutex<Option<Result<Seen, String>>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let look_ms = Arc::new(AtomicU64::new(0));
        let (out, halt, ms) = (latest.clone(), stop.clone(), look_ms.clone());
        let thread = std::thread::Builder::new()
            .name("watcher".into())
            .spawn(move || {
                let mut known = None;
                let mut full: Option<u32> = None;
                while !halt.load(Relaxed) {
                    let t = Instant::now();
                    let look = (|| -> Result<Seen> {
                        let newest = newest_model(&store, &mut known)?;
                        let g = newest.map_or(1, |n| n + 1);
                        let n = if full == Some(g) { quota } else { count_games(&store, g)? };
                        if n >= quota {
                            full = Some(g);
                        }
                        Ok(Seen { newest, count: (g, n) })
                    })();
                    ms.fetch_add(t.elapsed().as_millis() as u64, Relaxed);
                    *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(look.map_err(|e| format!("{e:#}")));
                    std::thread::sleep(LOOK_FOR_MODEL);
                }
            })
            .expect("spawn the watcher");
        Watcher { latest, stop, thread: Some(thread), look_ms }
    }

    /// What it saw last; `None` before its first look.
    fn latest(&self) -> Option<Result<Seen, String>> {
        self.latest.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One finished game to upload: its shard's key, its log line, its shard on disk.
type Upload = (String, Vec<u8>, PathBuf);

/// Uploads finished games on a thread of its own, each as it ends — its log line, then
/// its shard (the commit) — so that self-play threads never wait on the store.
struct Uploader {
    tx: Option<std::sync::mpsc::SyncSender<Upload>>,
    /// Games handed over and not yet uploaded, and the first upload error.
    pending: Arc<Pending>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Milliseconds the uploads took, and self-play threads spent blocked on a full
    /// backlog ([`UPLOAD_BACKLOG`]).
    upload_ms: Arc<AtomicU64>,
    blocked_ms: Arc<AtomicU64>,
}

/// Games handed to an [`Uploader`] and not yet uploaded, the first upload error, and the
/// signal a flush waits on.
type Pending = (std::sync::Mutex<(u64, Option<String>)>, std::sync::Condvar);

/// Games waiting for upload at most; a self-play thread that finishes another waits (the
/// store is slower than the games: that wait is idle time).
const UPLOAD_BACKLOG: usize = 256;

/// What an uploader did, once finished.
struct Uploaded {
    /// Seconds its uploads took until `finish` was called.
    upload_seconds_before_finish: f64,
    blocked_seconds: f64,
    result: Result<()>,
}

impl Uploader {
    fn start(store: Store) -> Uploader {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Upload>(UPLOAD_BACKLOG);
        let pending: Arc<Pending> = Arc::default();
        let upload_ms = Arc::new(AtomicU64::new(0));
        let (p, ms) = (pending.clone(), upload_ms.clone());
        let thread = std::thread::Builder::new()
            .name("uploader".into())
            .spawn(move || {
                for (key, line, shard) in rx {
                    let t = Instant::now();
                    let done = (|| -> Result<()> {
                        store.put_new(&keys::game_line(&key), line).with_context(|| format!("uploading {key}"))?;
                        let bytes = std::fs::read(&shard).with_context(|| format!("reading {}", shard.display()))?;
                        store.put_new(&key, bytes).with_context(|| format!("uploading {key}"))?;
                        let _ = std::fs::remove_file(&shard);
                        Ok(())
                    })();
                    ms.fetch_add(t.elapsed().as_millis() as u64, Relaxed);
                    let mut state = p.0.lock().unwrap_or_else(|e| e.into_inner());
                    state.0 -= 1;
                    if let Err(e) = done {
                        state.1.get_or_insert_with(|| format!("{e:#}"));
                    }
                    p.1.notify_all();
                }
            })
            .expect("spawn the uploader");
        Uploader { tx: Some(tx), pending, thread: Some(thread), upload_ms, blocked_ms: Arc::default() }
    }

    /// The sink self-play hands generation `g`'s finished games to; it refuses once an
    /// upload has failed (self-play then stops with that error).
    fn sink(&self, g: u32, worker: &str) -> GameSink {
        let tx = self.tx.clone().expect("not finished");
        let pending = self.pending.clone();
        let blocked_ms = self.blocked_ms.clone();
        let worker = worker.to_string();
        GameSink(Arc::new(move |game: &selfplay::FinishedGame| {
            let key = keys::game_shard(g, &worker, game.game_id);
            let line = serde_json::to_vec(&game.line).map_err(|e| format!("{key}: {e}"))?;
            let mut state = pending.0.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(e) = &state.1 {
                return Err(e.clone());
            }
            state.0 += 1;
            drop(state);
            let upload = (key, line, game.shard.clone());
            match tx.try_send(upload) {
                Ok(()) => Ok(()),
                Err(std::sync::mpsc::TrySendError::Full(upload)) => {
                    let t = Instant::now();
                    let sent = tx.send(upload).map_err(|_| "the uploader has stopped".to_string());
                    blocked_ms.fetch_add(t.elapsed().as_millis() as u64, Relaxed);
                    sent
                }
                Err(std::sync::mpsc::TrySendError::Disconnected(_)) => Err("the uploader has stopped".to_string()),
            }
        }))
    }

    /// Waits until every game handed over is in the store; the first upload error.
    fn flush(&self) -> Result<()> {
        let (lock, wake) = &*self.pending;
        let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
        while state.0 > 0 {
            state = wake.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        match &state.1 {
            Some(e) => Err(anyhow!("{e}")),
            None => Ok(()),
        }
    }

    /// Uploads what is left and ends the thread.
    fn finish(mut self) -> Uploaded {
        let upload_seconds_before_finish = self.upload_ms.load(Relaxed) as f64 / 1000.0;
        let result = self.flush();
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        Uploaded { upload_seconds_before_finish, blocked_seconds: self.blocked_ms.load(Relaxed) as f64 / 1000.0, result }
    }
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

/// A local file for `key`: in place on a local root, else downloaded into `local` once
/// (objects other than the report never change).
fn sync_down(store: &Store, local: &RunDir, key: &str) -> Result<Option<PathBuf>> {
    if !keys::is_inside(key) {
        bail!("{}: `{key}` is not a key inside the run; refusing to write it", store.url());
    }
    if let Some(p) = store.local_path(key) {
        return Ok(p.exists().then_some(p));
    }
    let path = local.0.join(key);
    if path.exists() {
        return Ok(Some(path));
    }
    let Some(bytes) = store.get(key)? else { return Ok(None) };
    records::write_atomic(&path, &bytes).with_context(|| format!("writing {}", path.display()))?;
    Ok(Some(path))
}

/// A local directory holding the run in `store` as far as readers need it (the ladder,
/// the viewer): the config, every published model, the per-generation reports. On a
/// local root, the root itself; else `dir`, filled with what it lacks.
pub fn copy_for_reading(store: &Store, dir: &Path) -> Result<PathBuf> {
    let published: Vec<u32> = store.list(keys::MODELS)?.iter().filter_map(|l| keys::manifest_generation(&l.key)).collect();
    if let Some(root) = store.local_root() {
        // A run trained in place is readable as it is; one a fleet's trainer published
        // keeps its models under their hashes, so it is copied like a server's.
        let mut all_in_place = true;
        for &g in &published {
            let m: Option<ModelManifest> = read_manifest(store, &keys::model_manifest(g))?;
            all_in_place &= m.is_none_or(|m| model_files(&m) == keys::model_dir(g));
        }
        if all_in_place {
            return Ok(root.to_path_buf());
        }
    }
    let local = RunDir(dir.to_path_buf());
    let config = store.get_at_most(keys::CONFIG, store::MAX_SMALL_OBJECT)?.ok_or_else(|| anyhow!("{} holds no run (no {})", store.url(), keys::CONFIG))?;
    records::write_atomic(&local.config(), &config)?;
    for g in published {
        if !local.model(g).join("model.json").exists() {
            let cached = fetch_model(store, g, &dir.join("cache"))?;
            copy_dir(&cached, &local.model(g))?;
        }
        for key in [keys::train_report(g), keys::eval_report(g), keys::selfplay_summary(g)] {
            if let Some(bytes) = store.get_at_most(&key, store::MAX_SMALL_OBJECT)? {
                records::write_atomic(&local.0.join(&key), &bytes)?;
            }
        }
    }
    Ok(dir.to_path_buf())
}

/// Uploads a report a reader wrote in its local copy (e.g. `ladder`) to the store.
pub fn upload_report(store: &Store, local: &Path, prefix: &str) -> Result<()> {
    sync_up(store, &RunDir(local.to_path_buf()), prefix)
}

/// Uploads the local files under `local/<prefix>` (a report) to the store, replacing.
fn sync_up(store: &Store, local: &RunDir, prefix: &str) -> Result<()> {
    if in_place(store, local) {
        return Ok(());
    }
    let base = local.0.join(prefix);
    let files: Vec<PathBuf> = if base.is_file() { vec![base] } else { walk(&base) };
    for f in files {
        let key = f.strip_prefix(&local.0).expect("under the run").to_string_lossy().replace('\\', "/");
        if key.rsplit('/').next().is_some_and(|n| n.starts_with('.')) {
            continue;
        }
        store.put(&key, std::fs::read(&f).with_context(|| format!("reading {}", f.display()))?)?;
    }
    Ok(())
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
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

/// The keys a trainer may change in a stored run's config: how many generations the run
/// has (it can be extended), and its own threads and local directory.
const CHANGEABLE_KEYS: [&str; 3] = ["generations", "threads", "run_dir"];

/// The dotted keys whose values differ between two configs, [`CHANGEABLE_KEYS`] aside.
pub fn config_differences(stored: &RunConfig, given: &RunConfig) -> Vec<String> {
    fn walk(prefix: &str, a: &toml::Value, b: &toml::Value, out: &mut Vec<String>) {
        match (a, b) {
            (toml::Value::Table(x), toml::Value::Table(y)) => {
                let names: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in names {
                    let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    match (x.get(k), y.get(k)) {
                        (Some(v), Some(w)) => walk(&key, v, w, out),
                        _ => out.push(key),
                    }
                }
            }
            _ if a != b => out.push(prefix.to_string()),
            _ => {}
        }
    }
    let value = |c: &RunConfig| toml::Value::Table(toml::from_str(&c.to_toml()).expect("a config's own TOML parses"));
    let mut out = Vec::new();
    walk("", &value(stored), &value(given), &mut out);
    out.retain(|k| !CHANGEABLE_KEYS.contains(&k.as_str()));
    out
}

/// The run's config as a trainer given `cfg` (or none: the stored one) works with it, and
/// whether the store must be written to hold it (`cfg` new, or changed in a changeable
/// key); written nowhere here. Refused where the store holds a run whose config differs
/// in more than [`CHANGEABLE_KEYS`] (a trainer that could rewrite it would change the
/// games every worker plays under the trainer that holds the run).
fn agreed_config(store: &Store, cfg: Option<&RunConfig>) -> Result<(RunConfig, bool)> {
    match (cfg, stored_config(store)?) {
        (Some(c), Some(old)) => {
            let differ = config_differences(&old, c);
            if !differ.is_empty() {
                let shown: Vec<String> = differ.iter().take(8).cloned().collect();
                bail!(
                    "{} holds a run whose config differs from this one in {}{}: resume it with the stored config (no --config), or choose another root",
                    store.url(),
                    shown.join(", "),
                    if differ.len() > shown.len() { format!(" and {} more", differ.len() - shown.len()) } else { String::new() }
                );
            }
            Ok((c.clone(), old.to_toml() != c.to_toml()))
        }
        (Some(c), None) => Ok((c.clone(), true)),
        (None, Some(stored)) => Ok((stored, false)),
        (None, None) => bail!("{} holds no run: give the trainer a --config", store.url()),
    }
}

/// The run's config: `cfg` saved in the store (refused as [`agreed_config`] refuses), or
/// the stored one when `cfg` is `None`. Workers read it, so it is saved before any worker
/// of this run starts (a worker reading an older config could take the run for finished).
pub fn publish_config(store: &Store, cfg: Option<&RunConfig>) -> Result<RunConfig> {
    let (agreed, write) = agreed_config(store, cfg)?;
    if write {
        store.put(keys::CONFIG, agreed.to_toml())?;
    }
    Ok(agreed)
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
        run_loop::start_from_model(local, cfg, dir)?;
    }
    if cfg.teacher.enabled() {
        run_loop::teacher_stage(local, cfg, show)?;
        let shards: Vec<String> = walk(&local.selfplay(0))
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
    let pb = run_loop::bar(quota, "selfplay", show);
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
    for gen in run_loop::window_generations(cfg, g) {
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
    let train = run_loop::train_generation_on(local, cfg, g, shards, show)?;
    still_holds(store, opts, g)?;
    publish_model(store, local, g, opts)?;
    // Another trainer's model may have been published first and taken in place of ours.
    let train = read_json(&local.train_report(g))?.unwrap_or(train);
    // Evaluation plays the previous model too.
    if store.get(&keys::model_manifest(g - 1))?.is_some() && !local.model(g - 1).join("model.json").exists() {
        let dir = fetch_model(store, g - 1, &local.0.join("cache"))?;
        copy_dir(&dir, &local.model(g - 1))?;
    }
    let eval = run_loop::evaluate_generation(local, cfg, g, show)?;
    if let Err(e) = run_loop::write_start_values(local, cfg, g) {
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

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)?.flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
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
