//! The worker role: self-play games with the newest published model, each uploaded the
//! moment it ends; tournaments' and studies' games between generations.

use super::protocol::{count_games, fetch_model, newest_model, stored_config};
use crate::config::{RunConfig, GAME_ID_STRIDE};
use crate::stages::selfplay_evaluator;
use anyhow::{anyhow, bail, Context, Result};
use records::run_dir::{content_hash, keys};
use rules::Game;
use search::{Evaluator, UniformEvaluator};
use selfplay::{GameSink, SelfplayJob, Stats};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::Store;

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
    /// Poll intervals slept waiting for the trainer (generation 0's model, or the next
    /// model once a generation has its games) while the run had generations left: none
    /// with `fleet.play_ahead` once the first model is out, however fast the machine.
    pub waits_for_trainer: u64,
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
                report.waits_for_trainer += 1;
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
