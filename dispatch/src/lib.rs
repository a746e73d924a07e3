//! Arena tournaments and balance studies played by worker processes through a store
//! (`copper arena --store`, `copper balance --store`, `copper worker`).
//!
//! The coordinator (the `copper arena` or `copper balance` process) keeps the output
//! directory, the reports, the SPRT and the live view exactly as a local run does; only
//! the games are played elsewhere. The protocol, all of it under `jobs/` in the store:
//!
//! - `jobs/<job>/job.json` — a [`JobFile`]: everything a worker needs to play any game
//!   of the job (`kind` `arena`: the tournament config; `balance`: the study config and
//!   its planned games). `<job>` is the hash of these bytes, so a restarted coordinator
//!   with the same command publishes the same key with the same bytes (no conditional
//!   write needed) and finds the results already played.
//! - `jobs/<job>/results/<unit>.json` — one arena `JobResult` per game, `<unit>` its job
//!   id (zero-padded, [`unit_key`]): a unit is a game fixed by the job and its id (the
//!   same players, opening and seeds a local run gives it), so a unit played twice (two
//!   workers, or one restarted) is the same game, and the coordinator reads each key once
//!   — whatever worker dies, every game is counted exactly once.
//! - `jobs/<job>/claims/<unit>/<worker>` — a hint, not a lock: a worker prefers units
//!   nobody claimed; when every unit left is claimed (its worker may be dead) it plays
//!   one anyway. A worker rewrites its claim every `CLAIM_REFRESH` (60 s) while it plays; a
//!   claim older than `CLAIM_STALE` (5 min) by the store's clock is a departed worker's, and
//!   its unit counts as unclaimed, so the coordinator, which counts in order, is not
//!   kept waiting for it until the job's end.
//! - `jobs/open/<job>` — the index of open jobs: workers list it, and then only those
//!   jobs' keys, so an idle worker's look costs the same after a thousand finished jobs
//!   as after none.
//! - `jobs/<job>/done` — the coordinator needs no more results (all in, or an SPRT
//!   stopped the match); workers skip the job. The coordinator then removes the job
//!   from the index and deletes its claims and errors (the results stay: a restarted
//!   coordinator with the same command reads them instead of playing again).
//! - `jobs/<job>/errors/<worker>` — why that worker cannot play the job (a checkpoint
//!   missing there, an engine its command line does not allow); deleted once it can. The
//!   coordinator logs each, and gives up when no result has come in order for its `stall`
//!   time while a worker has said it cannot play, unless other workers are still at the
//!   job (a result or a claim written within that time, or within two claim refreshes):
//!   one worker's refusal does not abort a job that others play.
//! - `jobs/<job>/coordinator` — rewritten by the coordinator every minute (with the open
//!   index entry), when it looks for those signs, and at most every 5 s while it counts
//!   results: it holds the first unit the coordinator still waits for, and a worker's
//!   look lists the job's results and claims from there on only (what is in flight, not
//!   the job's history: a few requests, whatever the job's size). Its time is the store's "now", and a
//!   job whose coordinator has been silent for an hour (`JOB_ABANDONED`, by the worker's
//!   clock) was abandoned: the first worker to see it takes it out of the open index, so
//!   a killed coordinator's job stops costing every worker's look. A coordinator started
//!   again puts it back.
//!
//! Workers run no USI engine the job names unless their own command line allows it, and
//! start it only as the command line says (`copper worker --allow-engine PATH` or
//! `--allow-engine 'usi:PATH,arg=…,option.NAME=VALUE'`): the store is not trusted to
//! name commands, their arguments, directories or options. The players' parsed specs
//! decide ([`players::EngineAllowList`]), so no spelling of a spec hides an engine.
//!
//! The coordinator counts results in unit order (the order of a local run's job list),
//! so its outputs, the SPRT's stopping point included, do not depend on which worker is
//! faster. Workers play each unit alone; a job's games depend on the job alone (players
//! restart their random streams per job, `players::Player::new_job`), so the distributed
//! games are a local run's games: always for baselines (random, greedy, alpha-beta, with
//! or without noise), for search players with noise when the local run keeps one game in
//! flight per thread; time-limited games depend on the clock anyway. Player specs that
//! name files (checkpoints, USI engines, opening files) must resolve on the workers too.
//! A result's timings (`seconds`, move times) are the worker's: two workers that played
//! one unit wrote the same game with different timings, and the one the store kept is
//! the one counted.

use anyhow::{bail, Context, Result};
use arena::runner::{JobResult, Remote, RemoteWork};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;
use store::Store;

/// `jobs/<job>/job.json`: what is to be played.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobFile {
    /// `arena` or `balance` ([`arena::tournament::REMOTE_KIND`], [`balance::study::REMOTE_KIND`]).
    pub kind: String,
    pub spec: serde_json::Value,
}

impl JobFile {
    /// The published bytes and the job id they give.
    pub fn encode(&self) -> Result<(String, Vec<u8>)> {
        let bytes = serde_json::to_vec(self).context("the job as JSON")?;
        Ok((records::run_dir::content_hash([bytes.as_slice()])[..16].to_string(), bytes))
    }
}

pub fn job_key(job: &str) -> String {
    format!("jobs/{job}/job.json")
}
fn open_key(job: &str) -> String {
    format!("jobs/open/{job}")
}
pub fn done_key(job: &str) -> String {
    format!("jobs/{job}/done")
}
pub fn results_prefix(job: &str) -> String {
    format!("jobs/{job}/results")
}
pub fn unit_key(job: &str, unit: u64) -> String {
    format!("jobs/{job}/results/{unit:012}.json")
}
fn error_key(job: &str, worker: &str) -> String {
    format!("jobs/{job}/errors/{worker}")
}
fn claim_key(job: &str, unit: u64, worker: &str) -> String {
    format!("jobs/{job}/claims/{unit:012}/{worker}")
}
fn coordinator_key(job: &str) -> String {
    format!("jobs/{job}/coordinator")
}

/// The unit a `…/results/<unit>.json` or `…/claims/<unit>/…` key names.
fn unit_of(rest: &str) -> Option<u64> {
    rest.split('/').next()?.trim_end_matches(".json").parse().ok()
}

/// Reads a result object, checking it is the game `unit`; `None` while it is not there.
fn read_result(store: &Store, key: &str, unit: u64) -> Result<Option<JobResult>> {
    let Some(bytes) = store.get(key)? else { return Ok(None) };
    let r: JobResult = serde_json::from_slice(&bytes).with_context(|| format!("{}: `{key}` is not a game result", store.url()))?;
    if r.job.id != unit {
        bail!("{}: `{key}` holds game {}, not game {unit}", store.url(), r.job.id);
    }
    Ok(Some(r))
}

// ---------------------------------------------------------------------------------------
// The coordinator's side.

/// How a coordinator waits: it looks at the store every `poll`, and gives up once no
/// result has come for `stall` while some worker says it cannot play the job.
#[derive(Clone, Copy, Debug)]
pub struct Patience {
    pub poll: Duration,
    pub stall: Duration,
}

/// A [`Remote`] that publishes the work as a job in `store` and hands its results on as
/// workers upload them.
pub fn remote(store: Store, patience: Patience) -> Remote {
    Remote(Arc::new(move |work: &RemoteWork<'_>, stop: &AtomicBool, on_result: &(dyn Fn(JobResult) + Sync)| {
        coordinate(&store, patience, work, stop, on_result).map_err(|e| format!("{e:#}"))
    }))
}

/// The workers' reports that they cannot play `job`: (worker, why).
fn worker_errors(store: &Store, job: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for l in store.list(&format!("jobs/{job}/errors"))? {
        let worker = l.key.rsplit('/').next().unwrap_or_default().to_string();
        if let Some(bytes) = store.get(&l.key)? {
            out.push((worker, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    Ok(out)
}

/// Whether some worker played `job` within `window`: a result uploaded or a claim written
/// or rewritten (a worker rewrites its claim every [`CLAIM_REFRESH`] while it plays), by
/// the store's clock (the time of a key written now: the coordinator's, with its
/// `progress`).
fn still_played(store: &Store, job: &str, window: Duration, progress: String) -> Result<bool> {
    let here = coordinator_key(job);
    store.put(&here, progress)?;
    let listed = store.list(&format!("jobs/{job}"))?;
    let Some(now) = listed.iter().find(|l| l.key == here).map(|l| l.modified) else { return Ok(false) };
    let recent = |l: &&store::Listed| now.duration_since(l.modified).map_or(true, |age| age <= window.max(2 * CLAIM_REFRESH));
    Ok(listed.iter().filter(|l| l.key.contains("/results/") || l.key.contains("/claims/")).any(|l| recent(&l)))
}

/// Publishes `work` and calls `on_result` with each of `work.todo`'s results in order.
fn coordinate(store: &Store, patience: Patience, work: &RemoteWork<'_>, stop: &AtomicBool, on_result: &(dyn Fn(JobResult) + Sync)) -> Result<()> {
    let (job, bytes) = JobFile { kind: work.kind.to_string(), spec: work.spec.clone() }.encode()?;
    if store.get(&job_key(&job))?.is_none() {
        store.put_new(&job_key(&job), bytes)?;
    }
    if work.todo.is_empty() || stop.load(Relaxed) {
        return close(store, &job);
    }
    // A job finished or stopped before, asked for again (e.g. results lost here): open.
    store.delete(&done_key(&job))?;
    store.put(&open_key(&job), "")?;
    tracing::info!(store = store.url(), job = %job, games = work.todo.len(), "published; waiting for workers (copper worker --store {})", store.url());
    let mut next = 0;
    let mut last_result = std::time::Instant::now();
    let mut last_error_look = std::time::Instant::now();
    // The coordinator's key, rewritten now and then: workers read the store's "now" from
    // it (claims going stale), take a job whose coordinator has been silent for
    // `JOB_ABANDONED` for abandoned, and read from it the first unit still to count, so
    // that they list only the units from there on.
    let progress = |next: usize| work.todo[next..].iter().map(|w| w.id).min().map_or(String::new(), |u| u.to_string());
    store.put(&coordinator_key(&job), progress(0))?;
    let mut beat = std::time::Instant::now();
    let mut told_progress = 0;
    let mut told: BTreeMap<String, String> = BTreeMap::new();
    while next < work.todo.len() && !stop.load(Relaxed) {
        let before = next;
        // The next game in order, by its key: one request a look, whatever the job's size.
        while next < work.todo.len() && !stop.load(Relaxed) {
            let unit = work.todo[next].id;
            let Some(mut r) = read_result(store, &unit_key(&job, unit), unit)? else { break };
            let want = work.todo[next];
            if (r.job.first, r.job.second) != (want.first, want.second) {
                bail!("{}: `{}` is game {:?}, but this run's game {unit} is {:?}", store.url(), unit_key(&job, unit), r.job, want);
            }
            // The opening's index is where this run keeps it (a study's openings are
            // listed per run); the position is the same.
            r.job = want;
            for h in &mut r.hands {
                h.record.opening_index = Some(want.opening as u64);
            }
            on_result(r);
            next += 1;
        }
        if beat.elapsed() >= CLAIM_REFRESH || (next > told_progress && beat.elapsed() >= PROGRESS_EVERY) {
            store.put(&coordinator_key(&job), progress(next))?;
            told_progress = next;
            // Back in the index if a worker took it for abandoned (a clock far off).
            store.put(&open_key(&job), "")?;
            beat = std::time::Instant::now();
        }
        if next > before {
            last_result = std::time::Instant::now();
            continue;
        }
        // The workers' errors cost a listing: looked at now and then, not every poll.
        let stalled = last_result.elapsed() >= patience.stall;
        if stalled || last_error_look.elapsed() >= patience.stall / 4 {
            last_error_look = std::time::Instant::now();
            let errors = worker_errors(store, &job)?;
            for (worker, why) in &errors {
                if told.get(worker) != Some(why) {
                    tracing::warn!(job = %job, worker = %worker, "a worker cannot play this job: {why}");
                    told.insert(worker.clone(), why.clone());
                }
            }
            if stalled && !errors.is_empty() && still_played(store, &job, patience.stall, progress(next))? {
                // Some worker cannot play the job, but others are at it (a game in
                // order is long, or a departed worker's claim is going stale): wait on.
                last_result = std::time::Instant::now();
            } else if stalled && !errors.is_empty() {
                let list: Vec<String> = errors.iter().map(|(w, why)| format!("{w}: {why}")).collect();
                bail!(
                    "{}: job {job} has had no result for {:.0} s and workers cannot play it ({} of {} games in); {}",
                    store.url(),
                    patience.stall.as_secs_f64(),
                    next,
                    work.todo.len(),
                    list.join("; ")
                );
            }
        }
        std::thread::sleep(patience.poll);
    }
    close(store, &job)
}

/// Marks `job` done, out of the open index, its claims and errors deleted.
fn close(store: &Store, job: &str) -> Result<()> {
    store.put(&done_key(job), "done")?;
    store.delete(&open_key(job))?;
    store.delete(&coordinator_key(job))?;
    for prefix in [format!("jobs/{job}/claims"), format!("jobs/{job}/errors")] {
        for l in store.list(&prefix)? {
            store.delete(&l.key)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The worker's side.

/// A job ready to play: built once per job a worker serves.
enum Prepared {
    Arena(Box<arena::tournament::Prepared>),
    Balance(Box<balance::study::Prepared>),
}

impl Prepared {
    fn new(file: &JobFile) -> Result<Prepared> {
        Ok(match file.kind.as_str() {
            arena::tournament::REMOTE_KIND => {
                let cfg: arena::TournamentConfig = serde_json::from_value(file.spec.clone()).context("the tournament")?;
                Prepared::Arena(Box::new(arena::tournament::Prepared::new(&cfg)?))
            }
            balance::study::REMOTE_KIND => {
                let s: balance::study::RemoteStudy = serde_json::from_value(file.spec.clone()).context("the study")?;
                Prepared::Balance(Box::new(balance::study::Prepared::new(&s)?))
            }
            other => bail!("unknown kind `{other}` (this worker plays arena and balance jobs)"),
        })
    }
    fn player_specs(&self) -> Vec<&players::PlayerSpec> {
        match self {
            Prepared::Arena(p) => p.player_specs().collect(),
            Prepared::Balance(p) => p.player_specs().collect(),
        }
    }
    fn units(&self) -> Vec<u64> {
        match self {
            Prepared::Arena(p) => p.job_ids(),
            Prepared::Balance(p) => p.job_ids(),
        }
    }
    fn play(&self, unit: u64) -> Result<JobResult> {
        Ok(match self {
            Prepared::Arena(p) => p.play(unit)?,
            Prepared::Balance(p) => p.play(unit)?,
        })
    }
}

/// How long a job that could not be built waits before this worker tries again (the
/// missing file may have been put in place meanwhile).
const RETRY_PREPARE: Duration = Duration::from_secs(60);

/// How many of the first open units a worker picks among: workers that look at the same
/// moment mostly pick different ones, and results still arrive nearly in order.
const UNITS_TO_SPREAD_OVER: usize = 8;

/// How often a worker rewrites its claim while it plays the unit.
const CLAIM_REFRESH: Duration = Duration::from_secs(60);

/// A claim not rewritten for this long (by the store's clock: the newest key of the
/// job) is a departed worker's: three refreshes missed.
const CLAIM_STALE: Duration = Duration::from_secs(180);

/// A job whose coordinator has not rewritten its key for this long (by this worker's
/// clock: generous, so that clocks need not agree) was abandoned: a worker takes it out of
/// the open index, and a coordinator started again puts it back.
const JOB_ABANDONED: Duration = Duration::from_secs(3600);

/// Serves the store's jobs one game at a time (`copper worker`).
pub struct JobServer {
    store: Store,
    id: String,
    /// The USI engines this worker's command line allows jobs to run, and how.
    allowed_engines: players::EngineAllowList,
    /// Jobs built so far; a job that cannot be built is remembered with its error and
    /// when, and tried again after [`RETRY_PREPARE`].
    prepared: HashMap<String, Result<Arc<Prepared>, (String, std::time::Instant)>>,
    /// Games this server played.
    pub played: u64,
    /// Per open job, the coordinator's progress (the first unit it still waits for) and
    /// the time of the key it was read from: read again only when that key changes.
    progress: HashMap<String, (std::time::SystemTime, u64)>,
}

/// How often at most the coordinator rewrites its key to say how far it has counted.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// What one job's keys say.
#[derive(Default)]
struct JobState {
    published: bool,
    done: bool,
    results: BTreeSet<u64>,
    /// Unit → workers that claimed it, and when each claim was last written.
    claims: BTreeMap<u64, Vec<(String, std::time::SystemTime)>>,
    /// The newest key's time: the store's "now" as far as this job shows it.
    newest: Option<std::time::SystemTime>,
    /// Units below this one are counted by the coordinator (their results not listed).
    counted_below: u64,
}

impl JobState {
    /// Whether some claim on `unit` is live (written within [`CLAIM_STALE`] of the job's
    /// newest key).
    fn claimed(&self, unit: u64) -> bool {
        let live = |t: &std::time::SystemTime| self.newest.and_then(|n| n.duration_since(*t).ok()).is_none_or(|age| age <= CLAIM_STALE);
        self.claims.get(&unit).is_some_and(|c| c.iter().any(|(_, t)| live(t)))
    }
}

impl JobServer {
    /// A server named `id` (its claims carry the name) that runs only the USI engines
    /// `allowed_engines` allows, started only as it allows them.
    pub fn new(store: Store, id: &str, allowed_engines: players::EngineAllowList) -> Result<JobServer> {
        if id.is_empty() || id.contains('/') || id.starts_with('.') {
            bail!("worker id `{id}`: must be non-empty, without `/`, not starting with `.`");
        }
        Ok(JobServer { store, id: id.to_string(), allowed_engines, prepared: HashMap::new(), played: 0, progress: HashMap::new() })
    }

    /// Refuses a job whose players would start a program this worker's command line did
    /// not allow, or start an allowed one otherwise than it allows (the parsed specs
    /// decide, [`players::EngineAllowList::check`]). Building a job starts nothing.
    fn check_engines(&self, prepared: &Prepared) -> Result<()> {
        for spec in prepared.player_specs() {
            self.allowed_engines.check(spec)?;
        }
        Ok(())
    }

    /// The open jobs (the `jobs/open/` index) and what their keys say. Jobs that left the
    /// index are forgotten (what was built for them too); an abandoned one is taken out.
    /// A job's look reads its own keys (one listing without its folders), then its
    /// results and claims from the first unit its coordinator still waits for: what is in
    /// flight, not the job's history (a few requests, whatever the job's size).
    fn states(&mut self) -> Result<BTreeMap<String, JobState>> {
        let open: BTreeSet<String> = self
            .store
            .list("jobs/open")?
            .into_iter()
            .filter_map(|l| l.key.strip_prefix("jobs/open/").filter(|j| !j.is_empty() && !j.contains('/')).map(str::to_string))
            .collect();
        self.prepared.retain(|j, _| open.contains(j));
        self.progress.retain(|j, _| open.contains(j));
        let mut jobs: BTreeMap<String, JobState> = BTreeMap::new();
        for job in open {
            let mut s = JobState::default();
            let (mut beat, mut published_at, mut from) = (None, None, 0);
            for l in self.store.list_top(&format!("jobs/{job}"))? {
                s.newest = s.newest.max(Some(l.modified));
                match l.key.strip_prefix(&format!("jobs/{job}/")) {
                    Some("job.json") => {
                        s.published = true;
                        published_at = Some(l.modified);
                    }
                    Some("coordinator") => {
                        beat = Some(l.modified);
                        from = self.progress_of(&job, l.modified)?;
                    }
                    Some("done") => s.done = true,
                    _ => {}
                }
            }
            // Silent for an hour (its coordinator's key, or the job's if it never wrote
            // one): abandoned.
            if beat.or(published_at).is_some_and(|t| std::time::SystemTime::now().duration_since(t).is_ok_and(|age| age > JOB_ABANDONED)) {
                tracing::info!(job = %job, "no coordinator for an hour: the job leaves the open index");
                self.store.delete(&open_key(&job))?;
                self.prepared.remove(&job);
                continue;
            }
            if s.published && !s.done {
                s.counted_below = from;
                // Keys of units from `from` on sort after `…/<from, 12 digits>`.
                for folder in ["results", "claims"] {
                    let prefix = format!("jobs/{job}/{folder}");
                    for l in self.store.list_after(&prefix, &format!("{prefix}/{from:012}"))? {
                        s.newest = s.newest.max(Some(l.modified));
                        let Some(rest) = l.key.strip_prefix(&format!("{prefix}/")) else { continue };
                        if folder == "results" {
                            s.results.extend(unit_of(rest));
                        } else if let (Some(unit), Some((_, who))) = (unit_of(rest), rest.split_once('/')) {
                            s.claims.entry(unit).or_default().push((who.to_string(), l.modified));
                        }
                    }
                }
            }
            jobs.insert(job, s);
        }
        Ok(jobs)
    }

    /// The first unit `job`'s coordinator still waits for (every unit before it is
    /// counted or not needed), from its key written at `written`; 0 when it says nothing
    /// readable.
    fn progress_of(&mut self, job: &str, written: std::time::SystemTime) -> Result<u64> {
        if let Some(&(at, unit)) = self.progress.get(job) {
            if at == written {
                return Ok(unit);
            }
        }
        let bytes = self.store.get_at_most(&coordinator_key(job), 64)?.unwrap_or_default();
        let unit = std::str::from_utf8(&bytes).ok().and_then(|t| t.trim().parse().ok()).unwrap_or(0);
        self.progress.insert(job.to_string(), (written, unit));
        Ok(unit)
    }

    fn prepare(&mut self, job: &str) -> Result<Option<Arc<Prepared>>> {
        let retry = matches!(self.prepared.get(job), Some(Err((_, when))) if when.elapsed() >= RETRY_PREPARE);
        if retry || !self.prepared.contains_key(job) {
            let key = job_key(job);
            let Some(bytes) = self.store.get(&key)? else { return Ok(None) };
            let built = serde_json::from_slice::<JobFile>(&bytes)
                .context("not a job file")
                .and_then(|f| Prepared::new(&f))
                .and_then(|p| self.check_engines(&p).map(|()| p))
                .map(Arc::new)
                .map_err(|e| format!("{}: `{key}`: {e:#}", self.store.url()));
            match &built {
                Err(e) => {
                    tracing::warn!("skipping job {job}: {e}");
                    // The coordinator learns why this worker plays none of its games.
                    self.store.put(&error_key(job, &self.id), e.clone())?;
                }
                Ok(_) if retry => self.store.delete(&error_key(job, &self.id))?,
                Ok(_) => {}
            }
            self.prepared.insert(job.to_string(), built.map_err(|e| (e, std::time::Instant::now())));
        }
        Ok(self.prepared[job].as_ref().ok().cloned())
    }

    /// Plays one unplayed game of an open job and uploads its result. `Ok(false)`: there
    /// was nothing to play.
    pub fn serve_one(&mut self) -> Result<bool> {
        for (job, state) in self.states()? {
            if !state.published || state.done {
                continue;
            }
            let Some(prepared) = self.prepare(&job)? else { continue };
            let open: Vec<u64> = prepared.units().into_iter().filter(|u| *u >= state.counted_below && !state.results.contains(u)).collect();
            if open.is_empty() {
                continue;
            }
            // First a unit this worker's id claimed and never finished: a server plays one
            // game at a time and uploads it before it looks again, so such a claim is
            // from an earlier life of this worker, which died playing it. Then an
            // unclaimed unit, then any (its claimer may be dead). Among those the first in
            // the job's order, because the coordinator counts results in that order (a
            // study's progress shows as its games come in, an SPRT stops with no games far
            // ahead played for nothing). Workers looking at once spread over the first few.
            // A stale claim counts as none.
            let rank = |u: &u64| match state.claims.get(u) {
                Some(c) if c.iter().all(|(w, _)| *w == self.id) => 0,
                _ if !state.claimed(*u) => 1,
                _ => 2,
            };
            let best = open.iter().map(rank).min().expect("open is not empty");
            let spread = if best == 0 { 1 } else { UNITS_TO_SPREAD_OVER };
            let candidates: Vec<u64> = open.iter().filter(|u| rank(u) == best).take(spread).copied().collect();
            let worker = u64::from_str_radix(&records::run_dir::content_hash([self.id.as_bytes()])[..8], 16).unwrap_or(0);
            let unit = candidates[(worker.wrapping_add(self.played) % candidates.len() as u64) as usize];
            let claim = claim_key(&job, unit, &self.id);
            self.store.put(&claim, self.id.clone())?;
            tracing::info!(job = %job, unit, worker = %self.id, "playing");
            let r = self.while_claimed(&claim, || prepared.play(unit)).with_context(|| format!("job {job}, game {unit}"))?;
            let bytes = serde_json::to_vec(&r).context("a result as JSON")?;
            self.store.put_new(&unit_key(&job, unit), bytes)?;
            self.played += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// Runs `play`, rewriting the claim every [`CLAIM_REFRESH`] meanwhile so that it
    /// does not go stale during a long game.
    fn while_claimed<T>(&self, claim: &str, play: impl FnOnce() -> T) -> T {
        let (done, wake) = std::sync::mpsc::channel::<()>();
        let (store, id) = (self.store.clone(), self.id.clone());
        std::thread::scope(|scope| {
            scope.spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = wake.recv_timeout(CLAIM_REFRESH) {
                    if let Err(e) = store.put(claim, id.clone()) {
                        tracing::warn!("rewriting the claim {claim}: {e:#}");
                    }
                }
            });
            let r = play();
            drop(done);
            r
        })
    }

    /// Serves jobs until `stop` is set, looking every `poll` while there is nothing to play.
    pub fn serve(&mut self, poll: Duration, stop: &AtomicBool) -> Result<()> {
        while !stop.load(Relaxed) {
            if !self.serve_one()? {
                std::thread::sleep(poll);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arena::runner::Job;

    fn tournament(dir: &std::path::Path) -> arena::TournamentConfig {
        let mut c = arena::TournamentConfig::new(vec!["random,name=r1".into(), "greedy,name=g".into()]);
        c.mode = arena::tournament::Mode::Match;
        c.variant = "minishogi".into();
        c.rounds = 2;
        c.threads = 1;
        c.games_in_flight = 1;
        c.max_plies = 60;
        c.out_dir = dir.join("out");
        c
    }

    /// A store in `dir` with one open tournament job of `rounds` rounds: (store, job, its config).
    fn open_job(dir: &std::path::Path, rounds: u32) -> (Store, String, arena::TournamentConfig) {
        let store = Store::open(dir.join("store").to_str().unwrap()).unwrap();
        let mut cfg = tournament(dir);
        cfg.rounds = rounds;
        let file = JobFile { kind: "arena".into(), spec: serde_json::to_value(&cfg).unwrap() };
        let (job, bytes) = file.encode().unwrap();
        store.put_new(&job_key(&job), bytes).unwrap();
        store.put(&open_key(&job), "").unwrap();
        (store, job, cfg)
    }

    /// The units of `job` with a result in the store.
    fn played_units(store: &Store, job: &str) -> Vec<u64> {
        store.list(&results_prefix(job)).unwrap().iter().map(|l| unit_of(l.key.rsplit('/').next().unwrap()).unwrap()).collect()
    }

    /// The coordinator counts in the job's order: workers play the first open units, so
    /// results come in near that order (before, each worker started at its own place in
    /// the list, and a study's first result came in only at its end).
    #[test]
    fn workers_play_the_first_open_units() {
        let dir = tempfile::tempdir().unwrap();
        let (store, job, cfg) = open_job(dir.path(), 20);
        let units = cfg.jobs().len() as u64;
        assert!(units >= 40);
        let mut servers: Vec<JobServer> =
            ["w1", "w2", "w3"].iter().map(|w| JobServer::new(store.clone(), w, players::EngineAllowList::default()).unwrap()).collect();
        for round in 0..4 {
            for server in &mut servers {
                assert!(server.serve_one().unwrap());
            }
            // After 3·(round + 1) games, every result is among the lowest units.
            let played = played_units(&store, &job);
            let bound = 3 * (round + 1) + UNITS_TO_SPREAD_OVER as u64;
            assert!(played.iter().all(|&u| u < bound), "round {round}: {played:?} not all below {bound} of {units}");
        }
    }

    /// A worker's look at a job reads what is in flight: with 5,000 games counted by the
    /// coordinator it costs the same requests as with none (it listed every result
    /// before: a page per thousand), and it plays from the first unit not counted.
    #[test]
    fn a_look_at_a_job_costs_the_same_whatever_its_history() {
        let dir = tempfile::tempdir().unwrap();
        let (store, job, cfg) = open_job(dir.path(), 2600);
        let units: Vec<u64> = cfg.jobs().iter().map(|j| j.id).collect();
        assert!(units.len() > 5100 && units.windows(2).all(|w| w[0] < w[1]));
        let mut server = JobServer::new(store.clone(), "w1", players::EngineAllowList::default()).unwrap();
        let look = |server: &mut JobServer| {
            let before = store.counters();
            let states = server.states().unwrap();
            (store.counters().since(&before).requests(), states)
        };
        store.put(&coordinator_key(&job), "0").unwrap();
        look(&mut server);
        let (fresh, _) = look(&mut server);
        for &u in &units[..5000] {
            store.put(&unit_key(&job, u), "{}").unwrap();
        }
        store.put(&claim_key(&job, units[4999], "w2"), "w2").unwrap();
        store.put(&coordinator_key(&job), units[5000].to_string()).unwrap();
        look(&mut server);
        let (later, states) = look(&mut server);
        assert_eq!(later, fresh, "a look after 5,000 results costs {later} requests, {fresh} with none");
        let state = &states[&job];
        assert_eq!(state.counted_below, units[5000]);
        assert!(state.results.is_empty() && state.claims.is_empty(), "counted units were listed");
        // A result past the coordinator's count is seen, and the next unit played is after it.
        store.put(&unit_key(&job, units[5000]), "{}").unwrap();
        let (_, states) = look(&mut server);
        assert!(states[&job].results.contains(&units[5000]));
        assert!(server.serve_one().unwrap());
        let played: Vec<u64> = played_units(&store, &job).into_iter().filter(|u| *u > units[5000]).collect();
        assert_eq!(played.len(), 1, "{played:?}");
    }

    /// A worker restarted with its id first finishes the game its earlier life claimed and
    /// never uploaded (the coordinator waits for it in order); another worker leaves that
    /// claim to the end.
    #[test]
    fn a_restarted_worker_first_plays_what_it_claimed_before_it_died() {
        let dir = tempfile::tempdir().unwrap();
        let (store, job, _) = open_job(dir.path(), 20);
        // w1 claimed unit 30 and died; unit 0 is claimed by w1 too.
        store.put(&claim_key(&job, 30, "w1"), "w1").unwrap();
        store.put(&claim_key(&job, 0, "w1"), "w1").unwrap();
        let played = |store: &Store| played_units(store, &job);
        let mut w2 = JobServer::new(store.clone(), "w2", players::EngineAllowList::default()).unwrap();
        for _ in 0..4 {
            assert!(w2.serve_one().unwrap());
        }
        assert!(!played(&store).iter().any(|u| [0, 30].contains(u)), "w2 leaves w1's claims: {:?}", played(&store));
        let mut w1 = JobServer::new(store.clone(), "w1", players::EngineAllowList::default()).unwrap();
        assert!(w1.serve_one().unwrap());
        assert!(w1.serve_one().unwrap());
        let now = played(&store);
        assert!(now.contains(&0) && now.contains(&30), "w1 replays its own claims first: {now:?}");
    }

    /// A claim nobody rewrote for longer than [`CLAIM_STALE`] (its worker gone for good)
    /// does not hold its unit back: the next worker plays it first, in the job's order.
    #[test]
    fn a_departed_workers_claim_goes_stale_and_its_unit_is_played_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (store, job, _) = open_job(dir.path(), 20);
        store.put(&claim_key(&job, 0, "gone"), "gone").unwrap();
        store.put(&claim_key(&job, 1, "busy"), "busy").unwrap();
        let mut w2 = JobServer::new(store.clone(), "w2", players::EngineAllowList::default()).unwrap();
        assert!(w2.serve_one().unwrap());
        assert!(!played_units(&store, &job).contains(&0), "a fresh claim is left alone");
        // Six minutes later by the store's clock: only w2's game and the busy claim are new.
        let root = store.local_root().unwrap().to_path_buf();
        let past = std::time::SystemTime::now() - Duration::from_secs(360);
        std::fs::File::options().write(true).open(root.join(claim_key(&job, 0, "gone"))).unwrap().set_modified(past).unwrap();
        for _ in 0..=UNITS_TO_SPREAD_OVER {
            if played_units(&store, &job).contains(&0) {
                break;
            }
            assert!(w2.serve_one().unwrap());
        }
        let played = played_units(&store, &job);
        assert!(played.contains(&0), "the stale claim's unit is among the first played: {played:?}");
        assert!(!played.contains(&1), "the live claim is still left alone: {played:?}");
    }

    #[test]
    fn a_unit_with_a_result_is_not_played_again_and_a_result_written_twice_counts_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("store").to_str().unwrap()).unwrap();
        let cfg = tournament(dir.path());
        let spec = serde_json::to_value(&cfg).unwrap();
        let file = JobFile { kind: "arena".into(), spec: spec.clone() };
        let (job, bytes) = file.encode().unwrap();
        store.put_new(&job_key(&job), bytes).unwrap();
        store.put(&open_key(&job), "").unwrap();
        let mut server = JobServer::new(store.clone(), "w1", players::EngineAllowList::default()).unwrap();
        let units = cfg.jobs().len();
        // Every unit is played once; then there is nothing left.
        for _ in 0..units {
            assert!(server.serve_one().unwrap());
        }
        assert!(!server.serve_one().unwrap(), "every unit has its result");
        assert_eq!(store.list(&results_prefix(&job)).unwrap().len(), units);
        // A second upload of a unit (a second worker) changes nothing the coordinator counts.
        let again = server.prepared[&job].as_ref().unwrap().play(0).unwrap();
        assert!(!store.put_new(&unit_key(&job, 0), serde_json::to_vec(&again).unwrap()).unwrap());
        let todo: Vec<Job> = cfg.jobs();
        let seen = std::sync::Mutex::new(Vec::new());
        let work = RemoteWork { kind: "arena", spec, todo: &todo };
        coordinate(&store, Patience { poll: Duration::from_millis(10), stall: Duration::from_secs(60) }, &work, &AtomicBool::new(false), &|r| {
            seen.lock().unwrap().push(r.job.id)
        })
        .unwrap();
        assert_eq!(*seen.lock().unwrap(), todo.iter().map(|j| j.id).collect::<Vec<_>>(), "each game once, in order");
        assert!(store.get(&done_key(&job)).unwrap().is_some());
        assert!(!server.serve_one().unwrap(), "a done job is not served");
        // Done: out of the index, its claims gone, its results kept.
        assert!(store.get(&open_key(&job)).unwrap().is_none());
        assert!(store.list(&format!("jobs/{job}/claims")).unwrap().is_empty());
        assert_eq!(store.list(&results_prefix(&job)).unwrap().len(), units);
        // An idle worker's look is one listing of the index, however many jobs are done.
        let before = store.counters();
        assert!(!server.serve_one().unwrap());
        let look = store.counters().since(&before);
        assert_eq!((look.lists, look.gets), (1, 0), "{look}");
    }

    #[test]
    fn a_corrupt_result_is_an_error_naming_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().to_str().unwrap()).unwrap();
        let cfg = tournament(dir.path());
        let spec = serde_json::to_value(&cfg).unwrap();
        let (job, _) = JobFile { kind: "arena".into(), spec: spec.clone() }.encode().unwrap();
        store.put_new(&unit_key(&job, 0), "{not json").unwrap();
        let todo = cfg.jobs();
        let work = RemoteWork { kind: "arena", spec, todo: &todo };
        let e = coordinate(&store, Patience { poll: Duration::from_millis(10), stall: Duration::from_secs(60) }, &work, &AtomicBool::new(false), &|_| {})
            .unwrap_err();
        assert!(format!("{e:#}").contains(&unit_key(&job, 0)), "{e:#}");
    }

    /// An "engine" that leaves a file behind if it is ever started.
    fn recording_engine(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
        let marker = dir.join("ran");
        let script = dir.join("engine.sh");
        std::fs::write(&script, format!("#!/bin/sh\necho \"$@\" >> {}\n", marker.display())).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        (script, marker)
    }

    /// Publishes an arena job whose first player is `player`.
    fn publish_job(store: &Store, dir: &std::path::Path, player: String) -> String {
        let mut cfg = tournament(dir);
        cfg.players = vec![player, "random,name=r".into()];
        let (job, bytes) = JobFile { kind: "arena".into(), spec: serde_json::to_value(&cfg).unwrap() }.encode().unwrap();
        store.put_new(&job_key(&job), bytes).unwrap();
        store.put(&open_key(&job), "").unwrap();
        job
    }

    /// A job that names a USI engine the worker's command line does not allow — however
    /// its spec is spelled — or an allowed one with arguments, a directory or options of
    /// its own, is refused before anything runs, and the worker says why in the store.
    #[test]
    fn no_spelling_of_a_job_starts_an_engine_the_worker_did_not_allow() {
        let dir = tempfile::tempdir().unwrap();
        let (script, marker) = recording_engine(dir.path());
        let path = script.display().to_string();
        let hostile = [
            (format!("usi:{path},nodes=10,name=x"), "does not allow"),
            (format!("usi :{path},nodes=10,name=x"), "does not allow"),
            (format!(" usi : {path} ,nodes=10,name=x"), "does not allow"),
            (format!("\"usi\":\"{path}\",nodes=10,name=x"), "does not allow"),
        ];
        let allowed_with_extras = [
            (format!("usi:{path},arg=-c,nodes=10,name=x"), "only the command line"),
            (format!("usi:{path},dir=/,nodes=10,name=x"), "only the command line"),
            (format!("usi:{path},option.Debug Log File={}/log,nodes=10,name=x", dir.path().display()), "only the command line"),
        ];
        let runs =
            [(players::EngineAllowList::default(), &hostile[..]), (players::EngineAllowList::parse(&[path.as_str()]).unwrap(), &allowed_with_extras[..])];
        for (i, (allowed, cases)) in runs.into_iter().enumerate() {
            for (player, says) in cases {
                let store = Store::open(dir.path().join(format!("store-{i}-{}", says.len() + player.len())).to_str().unwrap()).unwrap();
                let job = publish_job(&store, dir.path(), player.clone());
                let mut server = JobServer::new(store.clone(), "w1", allowed.clone()).unwrap();
                assert!(!server.serve_one().unwrap(), "{player}: nothing is played");
                assert!(!marker.exists(), "{player}: the engine ran");
                let why = String::from_utf8(store.get(&error_key(&job, "w1")).unwrap().unwrap().to_vec()).unwrap();
                assert!(why.contains(says), "{player}: {why}");
                assert!(store.list(&results_prefix(&job)).unwrap().is_empty());
            }
        }
        // The check is not a refusal of every engine: allowed as it is, the job is played.
        let store = Store::open(dir.path().join("store-ok").to_str().unwrap()).unwrap();
        publish_job(&store, dir.path(), format!("usi:{path},nodes=10,name=x"));
        let mut server = JobServer::new(store.clone(), "w1", players::EngineAllowList::parse(&[path.as_str()]).unwrap()).unwrap();
        let _ = server.serve_one();
        assert!(marker.exists(), "the allowed engine was started");
    }

    /// A job whose coordinator has been silent for over an hour leaves the open index at
    /// a worker's next look, and the worker forgets it; a coordinator started again puts
    /// it back (`coordinate` writes the index).
    #[test]
    fn an_abandoned_job_leaves_the_open_index() {
        let dir = tempfile::tempdir().unwrap();
        let (store, job, _) = open_job(dir.path(), 1);
        store.put(&coordinator_key(&job), "").unwrap();
        let old = store.local_path(&coordinator_key(&job)).unwrap();
        let touched = std::process::Command::new("touch").arg("-d").arg("2 hours ago").arg(&old).status().unwrap();
        assert!(touched.success());
        let mut server = JobServer::new(store.clone(), "w1", players::EngineAllowList::default()).unwrap();
        assert!(!server.serve_one().unwrap(), "an abandoned job is not played");
        assert!(store.get(&open_key(&job)).unwrap().is_none(), "it left the open index");
        assert!(server.prepared.is_empty(), "what was built for it is forgotten");
        // A live one is played.
        store.put(&coordinator_key(&job), "").unwrap();
        store.put(&open_key(&job), "").unwrap();
        assert!(server.serve_one().unwrap());
    }

    /// One worker that cannot play a job does not abort it while another is playing it:
    /// with a live claim on the next game (rewritten as a playing worker rewrites it) and
    /// no result for longer than the coordinator's patience, it waits; the job completes
    /// once a worker plays.
    #[test]
    fn a_job_that_one_worker_refuses_and_another_plays_is_not_aborted() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("store").to_str().unwrap()).unwrap();
        let cfg = tournament(dir.path());
        let spec = serde_json::to_value(&cfg).unwrap();
        let (job, _) = JobFile { kind: "arena".into(), spec: spec.clone() }.encode().unwrap();
        let todo = cfg.jobs();
        let work = RemoteWork { kind: "arena", spec, todo: &todo };
        let stop = AtomicBool::new(false);
        let seen = std::sync::Mutex::new(0usize);
        std::thread::scope(|scope| {
            let coordinating = scope.spawn(|| {
                coordinate(&store, Patience { poll: Duration::from_millis(10), stall: Duration::from_millis(300) }, &work, &AtomicBool::new(false), &|_| {
                    *seen.lock().unwrap() += 1
                })
            });
            // A worker that cannot play it says so; another claims the first game and
            // keeps its claim fresh for many times the coordinator's patience.
            store.put(&error_key(&job, "w-bad"), "cannot").unwrap();
            let claim = claim_key(&job, todo[0].id, "w-slow");
            let t = std::time::Instant::now();
            while t.elapsed() < Duration::from_secs(2) {
                store.put(&claim, "w-slow").unwrap();
                assert!(!coordinating.is_finished(), "the coordinator gave up on a job a worker is playing");
                std::thread::sleep(Duration::from_millis(50));
            }
            // Then a worker plays every game.
            let mut server = JobServer::new(store.clone(), "w1", players::EngineAllowList::default()).unwrap();
            while !coordinating.is_finished() {
                server.serve_one().unwrap();
            }
            coordinating.join().unwrap().unwrap();
            stop.store(true, Relaxed);
        });
        assert_eq!(*seen.lock().unwrap(), todo.len());
    }

    /// A coordinator waiting for its next result costs one GET a poll, however long it
    /// waits: no listing, no write, until a beat is due (every minute) or a quarter of
    /// its stall time has passed (then one LIST of the workers' errors).
    #[test]
    fn a_waiting_coordinator_costs_one_get_a_poll() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("store").to_str().unwrap()).unwrap();
        let cfg = tournament(dir.path());
        let spec = serde_json::to_value(&cfg).unwrap();
        let todo = cfg.jobs();
        let work = RemoteWork { kind: "arena", spec, todo: &todo };
        let stop = AtomicBool::new(false);
        let (started, waited) = std::thread::scope(|scope| {
            let coordinating =
                scope.spawn(|| coordinate(&store, Patience { poll: Duration::from_millis(5), stall: Duration::from_secs(3600) }, &work, &stop, &|_| {}));
            // Past its start (the job and its keys written), then 100 more requests.
            let t = std::time::Instant::now();
            while store.counters().gets < 10 {
                assert!(t.elapsed() < Duration::from_secs(120) && !coordinating.is_finished());
                std::thread::sleep(Duration::from_millis(5));
            }
            let started = store.counters();
            while store.counters().since(&started).requests() < 100 {
                assert!(t.elapsed() < Duration::from_secs(300) && !coordinating.is_finished());
                std::thread::sleep(Duration::from_millis(5));
            }
            let waited = store.counters().since(&started);
            stop.store(true, Relaxed);
            coordinating.join().unwrap().unwrap();
            (started, waited)
        });
        assert!(started.puts <= 5, "{started:?}");
        assert_eq!((waited.puts, waited.lists, waited.deletes), (0, 0, 0), "{waited:?}");
        assert!(waited.gets >= 100, "{waited:?}");
    }

    /// A job no worker can prepare (a checkpoint missing on the workers) makes its
    /// coordinator stop with the workers' reasons, not wait forever.
    #[test]
    fn a_job_no_worker_can_prepare_stops_its_coordinator_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("store").to_str().unwrap()).unwrap();
        let mut cfg = tournament(dir.path());
        cfg.players = vec![format!("checkpoint:{}/nowhere,name=c", dir.path().display()), "random,name=r".into()];
        let spec = serde_json::to_value(&cfg).unwrap();
        let todo = cfg.jobs();
        let work = RemoteWork { kind: "arena", spec, todo: &todo };
        let stop = AtomicBool::new(false);
        let e = std::thread::scope(|scope| {
            let serving = scope.spawn(|| {
                let mut server = JobServer::new(store.clone(), "w7", players::EngineAllowList::default()).unwrap();
                server.serve(Duration::from_millis(10), &stop)
            });
            let e =
                coordinate(&store, Patience { poll: Duration::from_millis(10), stall: Duration::from_millis(300) }, &work, &AtomicBool::new(false), &|_| {})
                    .unwrap_err();
            stop.store(true, Relaxed);
            serving.join().unwrap().unwrap();
            e
        });
        let text = format!("{e:#}");
        assert!(text.contains("w7: ") && text.contains("nowhere"), "{text}");
    }
}
