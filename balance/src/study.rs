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
use arena::runner::{run_jobs, Adjudication, Job, JobResult, RunSettings};
use arena::spec::PlayerFactory;
use arena::stats::z_for_confidence;
use indicatif::{ProgressBar, ProgressStyle};
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rules::{Color, Game};
use std::collections::{BTreeMap, HashSet};
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
}

/// What [`RunOptions::after_games`] calls: the study directory.
pub type AfterGames = fn(&Path);

/// One game to play: its job id and where it starts.
#[derive(Clone, Debug)]
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

/// Plays the `todo` games, appending each to `results.jsonl` in `dir`, and returns them.
/// `done` are the games already there (for the progress bar's running scores).
#[allow(clippy::too_many_arguments)]
pub fn play(
    cfg: &StudyConfig,
    dir: &Path,
    factories: &[PlayerFactory],
    starts: &[Start],
    todo: &[Planned],
    done: &[JobResult],
    total: u64,
    opts: &RunOptions,
) -> Result<Vec<JobResult>, BalanceError> {
    if todo.is_empty() {
        return Ok(Vec::new());
    }
    let threads = cfg.effective_threads();
    let (jobs, openings) = jobs_and_openings(todo, starts, cfg.opening_plies, cfg.seed)?;
    let results_path = dir.join("results.jsonl");
    let settings = RunSettings {
        threads,
        games_in_flight: cfg.games_in_flight,
        max_plies: (cfg.max_plies > 0).then_some(cfg.max_plies),
        max_hands: 1,
        adjudication: Adjudication::default(),
        time_margin: Duration::from_millis(100),
        seed: cfg.seed,
    };
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
    let played = run_jobs(factories, &openings, &jobs, &settings, &stop, &|r: JobResult| {
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
            let (lo, hi) = t.score_interval(z_for_confidence(CONFIDENCE));
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
    });
    pb.finish();
    played.map_err(|e| BalanceError::Invalid(e.to_string()))?;
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
