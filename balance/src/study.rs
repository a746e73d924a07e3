//! Scheduling and playing a study: the jobs of every cell (a tier against itself from a
//! start, `games_per_cell` times), the openings they start from, and the run on all
//! cores through the arena's runner, each finished game appended to `results.jsonl`.

use crate::config::{Start, StudyConfig, Tier};
use crate::error::{io_err, BalanceError};
use crate::registry::{Registry, CELL_STRIDE};
use crate::report::black_score;
use crate::results;
use crate::stats::{BlackTally, CONFIDENCE};
use arena::openings::{Opening, Openings};
use arena::runner::{play_alone, run_jobs, Adjudication, Job, JobResult, Remote, RemoteWork, RunSettings};
use arena::stats::z_for_confidence;
use indicatif::{ProgressBar, ProgressStyle};
use players::spec::PlayerFactory;
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rules::{Color, Game};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// How to run (not part of the study's identity).
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub show_progress: bool,
    /// Stop claiming new games after this many have finished in this run (games in
    /// flight still finish and are recorded): an interruption on purpose, for tests and
    /// for playing a study in slices.
    pub stop_after: Option<usize>,
    /// `(k, f)`: call `f(study directory)` after every `k` games finished in this run,
    /// with their results already in `results.jsonl` (`copper balance` rewrites the
    /// study's page with it).
    pub after_games: Option<(usize, AfterGames)>,
    /// Plays the games elsewhere (`copper balance --store`) instead of on this machine's
    /// threads; the study's files are written here as in a local run.
    pub remote: Option<Remote>,
    /// Plays nothing: writes the study's files from the games already in `results.jsonl`
    /// (a study still being played by another process, or one re-reported with another
    /// value network).
    pub report_only: bool,
}

/// [`RemoteWork::kind`] of a study: its spec is a [`RemoteStudy`].
pub const REMOTE_KIND: &str = "balance";

/// What a worker needs to play any game of a study: the study and every planned game
/// (cell indices come from the study directory's registry, which workers do not have).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RemoteStudy {
    pub study: StudyConfig,
    pub planned: Vec<Planned>,
}

/// What [`RunOptions::after_games`] calls: the study directory.
pub type AfterGames = fn(&Path);

/// One game to play: its job id and where it starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Planned {
    pub id: u64,
    pub tier: usize,
    pub start: usize,
}

/// Every game of the current tiers × starts, in a playing order that interleaves the
/// cells (game 0 of every cell, then game 1, …), so an interrupted study has about as
/// many games in each cell.
pub fn plan(registry: &Registry, tiers: &[Tier], starts: &[Start], games_per_cell: u32) -> Vec<Planned> {
    let mut out = Vec::new();
    for g in 0..games_per_cell as u64 {
        for (ti, t) in tiers.iter().enumerate() {
            for (si, s) in starts.iter().enumerate() {
                let index = registry.cell_index(&t.name, &s.name).expect("the registry has every current cell");
                out.push(Planned { id: index * CELL_STRIDE + g, tier: ti, start: si });
            }
        }
    }
    out
}

/// The openings the jobs start from and the jobs themselves. Without opening plies the
/// openings are the starts and a job's `opening` is its start's index; with them each job
/// gets its own opening: `opening_plies` random legal plies from its start, seeded by the
/// study's seed and the job id (so a resumed study replays the same openings).
pub fn jobs_and_openings(todo: &[Planned], starts: &[Start], opening_plies: u32, seed: u64) -> Result<(Vec<Job>, Openings), BalanceError> {
    if opening_plies == 0 {
        let list = starts.iter().map(|s| Opening { name: s.name.clone(), position: s.position.clone(), moves: Vec::new() }).collect();
        let jobs = todo.iter().map(|p| Job { id: p.id, first: p.tier, second: p.tier, opening: p.start }).collect();
        return Ok((jobs, Openings::List(list)));
    }
    let mut list = Vec::with_capacity(todo.len());
    let mut jobs = Vec::with_capacity(todo.len());
    for (k, p) in todo.iter().enumerate() {
        let s = &starts[p.start];
        let moves = random_plies(s, opening_plies, seed ^ p.id.wrapping_mul(0x9E37_79B9_7F4A_7C15))?;
        list.push(Opening { name: results::opening_name(&s.name, opening_plies), position: s.position.clone(), moves });
        jobs.push(Job { id: p.id, first: p.tier, second: p.tier, opening: k });
    }
    if list.is_empty() {
        list.extend(starts.iter().map(|s| Opening { name: s.name.clone(), position: s.position.clone(), moves: Vec::new() }));
    }
    Ok((jobs, Openings::List(list)))
}

/// `plies` random legal moves from the start that do not end the game.
fn random_plies(start: &Start, plies: u32, seed: u64) -> Result<Vec<rules::Move>, BalanceError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..1000 {
        let mut g = Game::new(start.position.clone(), None);
        let mut moves = Vec::new();
        for _ in 0..plies {
            let legal = g.legal_moves();
            let Some(&m) = legal.choose(&mut rng) else { break };
            g.play_unchecked(m);
            moves.push(m);
        }
        if !g.is_over() && moves.len() == plies as usize {
            return Ok(moves);
        }
    }
    Err(BalanceError::Invalid(format!("opening_plies: found no {plies} random plies from start '{}' that leave the game going", start.name)))
}

/// How the runner plays a study's games.
fn run_settings(cfg: &StudyConfig) -> RunSettings {
    RunSettings {
        threads: cfg.effective_threads(),
        games_in_flight: cfg.games_in_flight,
        max_plies: (cfg.max_plies > 0).then_some(cfg.max_plies),
        max_hands: 1,
        adjudication: Adjudication::default(),
        time_margin: Duration::from_millis(100),
        seed: cfg.seed,
    }
}

/// Plays the `todo` games (of all the `planned` ones), appending each to `results.jsonl` in `dir`, and returns them.
/// `done` are the games already there (for the progress bar's running scores).
#[allow(clippy::too_many_arguments)]
pub fn play(
    cfg: &StudyConfig,
    dir: &Path,
    factories: &[PlayerFactory],
    starts: &[Start],
    planned: &[Planned],
    todo: &[Planned],
    done: &[JobResult],
    total: u64,
    opts: &RunOptions,
) -> Result<Vec<JobResult>, BalanceError> {
    if todo.is_empty() || opts.report_only {
        return Ok(Vec::new());
    }
    let threads = cfg.effective_threads();
    let (jobs, openings) = jobs_and_openings(todo, starts, cfg.opening_plies, cfg.seed)?;
    let results_path = dir.join("results.jsonl");
    let settings = run_settings(cfg);
    let first_mover: Vec<Color> = starts.iter().map(|s| s.position.side_to_move()).collect();
    // Running tallies per cell for the progress message (cell index → start index).
    let start_of_cell: BTreeMap<u64, usize> = todo.iter().map(|p| (p.id / CELL_STRIDE, p.start)).collect();
    let mut running: BTreeMap<u64, BlackTally> = BTreeMap::new();
    for r in done {
        let cell = r.job.id / CELL_STRIDE;
        if let Some(&s) = start_of_cell.get(&cell) {
            let _ = running.entry(cell).or_default().add_score(black_score(r, first_mover[s]));
        }
    }
    let running = Mutex::new(running);
    let pb = if opts.show_progress {
        let pb = ProgressBar::new(total);
        pb.set_style(
            ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {elapsed_precise} eta {eta} {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        pb.set_prefix("balance");
        pb
    } else {
        ProgressBar::hidden()
    };
    pb.set_position(total.saturating_sub(todo.len() as u64));
    tracing::info!(dir = %dir.display(), games = todo.len(), threads, "balance study");
    let finished = Mutex::new(Vec::new());
    let failure: Mutex<Option<BalanceError>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    let count = AtomicUsize::new(0);
    let names: Vec<&str> = factories.iter().map(|f| f.name()).collect();
    let on_result = |r: JobResult| {
        if let Err(e) = results::append(&results_path, &r) {
            tracing::error!("{e}");
            failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
            stop.store(true, Ordering::Relaxed);
            return;
        }
        for hand in &r.hands {
            if let Some(i) = &hand.incident {
                tracing::warn!(game = r.job.id, "{i}");
            }
        }
        let cell = r.job.id / CELL_STRIDE;
        if let Some(&s) = start_of_cell.get(&cell) {
            let mut running = running.lock().unwrap_or_else(|p| p.into_inner());
            let t = running.entry(cell).or_default();
            let _ = t.add_score(black_score(&r, first_mover[s]));
            let (lo, hi) = crate::stats::score_interval(t, z_for_confidence(CONFIDENCE));
            pb.set_message(format!("{} · {}: Black {:.3} [{:.3}, {:.3}] n={}", names[r.job.first], starts[s].name, t.score(), lo, hi, t.games()));
        }
        pb.inc(1);
        finished.lock().unwrap_or_else(|p| p.into_inner()).push(r);
        let n = count.fetch_add(1, Ordering::Relaxed) + 1;
        if opts.stop_after.is_some_and(|k| n >= k) {
            stop.store(true, Ordering::Relaxed);
        }
        if let Some((k, after)) = opts.after_games {
            if k > 0 && n.is_multiple_of(k) {
                after(dir);
            }
        }
    };
    let played = match &opts.remote {
        None => run_jobs(factories, &openings, &jobs, &settings, &stop, &on_result).map_err(|e| BalanceError::Invalid(e.to_string())),
        Some(remote) => {
            let spec = RemoteStudy { study: cfg.clone(), planned: planned.to_vec() };
            let spec = serde_json::to_value(&spec).map_err(|e| BalanceError::Invalid(format!("the study as JSON: {e}")))?;
            (remote.0)(&RemoteWork { kind: REMOTE_KIND, spec, todo: &jobs }, &stop, &on_result).map_err(BalanceError::Invalid)
        }
    };
    pb.finish();
    played?;
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(finished.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// One player factory per tier (loads checkpoints, checks USI engines exist), in tier
/// order: the jobs' player indices.
pub fn factories(cfg: &StudyConfig, tiers: &[Tier]) -> Result<Vec<PlayerFactory>, BalanceError> {
    let variant = cfg.variant()?;
    let threads = cfg.effective_threads();
    Ok(tiers.iter().map(|t| PlayerFactory::new(t.spec.clone(), variant, None, threads, Duration::from_secs(60))).collect::<Result<_, _>>()?)
}

/// The ids already played, so that a resumed study plays only the rest.
pub fn remaining(planned: Vec<Planned>, done: &[JobResult]) -> Vec<Planned> {
    let ids: HashSet<u64> = done.iter().map(|r| r.job.id).collect();
    planned.into_iter().filter(|p| !ids.contains(&p.id)).collect()
}

/// Creates the study directory.
pub fn create_dir(dir: &Path) -> Result<(), BalanceError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))
}

/// A published study ready to play any one of its games by id: what a worker builds once
/// and then plays game after game with.
pub struct Prepared {
    cfg: StudyConfig,
    factories: Vec<PlayerFactory>,
    starts: Vec<Start>,
    settings: RunSettings,
    planned: HashMap<u64, Planned>,
    /// The ids in the order a local run plays them, which is the order the coordinator
    /// counts results in.
    order: Vec<u64>,
}

impl Prepared {
    /// Checks the study and builds its players and starts (nothing is written).
    pub fn new(remote: &RemoteStudy) -> Result<Prepared, BalanceError> {
        let cfg = &remote.study;
        cfg.validate()?;
        let tiers = cfg.tiers()?;
        let starts = cfg.starts_resolved()?;
        for p in &remote.planned {
            if p.tier >= tiers.len() || p.start >= starts.len() {
                return Err(BalanceError::Invalid(format!("game {}: tier {} or start {} is not in the study", p.id, p.tier, p.start)));
            }
        }
        Ok(Prepared {
            cfg: cfg.clone(),
            factories: factories(cfg, &tiers)?,
            starts,
            settings: run_settings(cfg),
            planned: remote.planned.iter().map(|p| (p.id, p.clone())).collect(),
            order: remote.planned.iter().map(|p| p.id).collect(),
        })
    }

    /// The tiers' parsed specs (what a worker checks before it plays any game).
    pub fn player_specs(&self) -> impl Iterator<Item = &players::PlayerSpec> {
        self.factories.iter().map(|f| &f.spec)
    }

    /// Every game id, in the order a local run plays them (a game of every cell in turn).
    pub fn job_ids(&self) -> Vec<u64> {
        self.order.clone()
    }

    /// Plays game `id` alone, from the opening a local run gives it (`play_alone`).
    pub fn play(&self, id: u64) -> Result<JobResult, BalanceError> {
        let p = self.planned.get(&id).ok_or_else(|| BalanceError::Invalid(format!("the study has no game {id}")))?;
        let (jobs, openings) = jobs_and_openings(std::slice::from_ref(p), &self.starts, self.cfg.opening_plies, self.cfg.seed)?;
        play_alone(&self.factories, &openings, jobs[0], &self.settings).map_err(|e| BalanceError::Invalid(e.to_string()))
    }
}
