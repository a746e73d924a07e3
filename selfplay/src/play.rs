//! The self-play workers.

use crate::game_log::{append_game, entropy_and_kl, GameLine};
use crate::{SelfplayConfig, Stats};
use encoding::{ActionSpace, ACTION_VERSION, PLANES_VERSION};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use records::{write_shard, Record, RecordError, ShardHeader};
use rules::{Color, Game, Outcome, Position, TerminationReason, Variant};
use search::{EvalRequest, Evaluator, Search};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// What self-play is asked to do.
#[derive(Clone, Debug)]
pub struct SelfplayJob {
    pub variant: &'static Variant,
    pub config: SelfplayConfig,
    pub generation: u32,
    /// One shard per finished game is written here, named after the game id.
    pub out_dir: PathBuf,
    /// Game ids to play (unique within the run; they seed each game's randomness).
    pub game_ids: Vec<u64>,
    pub threads: usize,
    pub seed: u64,
    /// Called with each game as soon as its shard is written (e.g. to upload it), on the
    /// worker thread that played it; an error stops self-play.
    pub on_finished: Option<GameSink>,
}

/// What [`GameSink`] calls: an error message stops self-play.
pub type OnFinished = dyn Fn(&FinishedGame) -> Result<(), String> + Send + Sync;

/// A callback given each finished game ([`SelfplayJob::on_finished`]).
#[derive(Clone)]
pub struct GameSink(pub std::sync::Arc<OnFinished>);

impl std::fmt::Debug for GameSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GameSink")
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EndReason {
    Rules(TerminationReason),
    Resignation,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct GameEnd {
    pub outcome: Outcome,
    pub reason: EndReason,
}

/// Summary of a finished game (its records are in its shard).
#[derive(Clone, Debug)]
pub struct FinishedGame {
    pub game_id: u64,
    pub start: String,
    pub plies: usize,
    pub end: GameEnd,
    pub shard: PathBuf,
    /// Its line of the game log.
    pub line: GameLine,
}

/// Path of the shard of a game.
pub fn shard_path(dir: &Path, game_id: u64) -> PathBuf {
    dir.join(format!("game-{game_id:08}.shard"))
}

struct Slot {
    search: Search<Game>,
    game_id: u64,
    start: String,
    rng: ChaCha8Rng,
    records: Vec<(Color, Record)>,
    full: bool,
    resign_allowed: bool,
    low_streak: [u32; 2],
    would_resign: Option<Color>,
    full_searches: u32,
    prior_entropy_sum: f64,
    improvement_kl_sum: f64,
    simulations: u64,
}

/// Plays the job's games on `job.threads` worker threads, each keeping
/// `games_in_flight` games going and sending their leaves to `evaluator` in one batch.
pub fn play_games<E: Evaluator<Game> + ?Sized>(job: &SelfplayJob, evaluator: &E, stats: &Stats) -> Result<Vec<FinishedGame>, SelfplayError> {
    let next = AtomicU64::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    let first_error = std::sync::Mutex::new(None);
    // A panicking worker stops the others from starting games and becomes an error
    // naming its games in flight, instead of unwinding through the caller (whose progress
    // thread would wait for it forever).
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..job.threads.max(1) {
            scope.spawn(|| {
                let in_flight = std::sync::Mutex::new(Vec::new());
                let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker(job, evaluator, stats, &next, &results, &stop, &in_flight)));
                let error = match run {
                    Ok(Ok(())) => return,
                    Ok(Err(e)) => e,
                    Err(payload) => {
                        let message = payload
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| payload.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "(no message)".into());
                        let games = in_flight.lock().unwrap_or_else(|e| e.into_inner()).clone();
                        SelfplayError::Panic { games, message }
                    }
                };
                stop.store(true, Relaxed);
                first_error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(error);
            });
        }
    });
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(e);
    }
    let mut games = results.into_inner().unwrap();
    games.sort_by_key(|g: &FinishedGame| g.game_id);
    Ok(games)
}

/// Why self-play stopped.
#[derive(Debug, thiserror::Error)]
pub enum SelfplayError {
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("writing the game log: {0}")]
    Log(#[from] records::jsonl::JsonlError),
    #[error("after game {game}: {message}")]
    Sink { game: u64, message: String },
    #[error("self-play panicked while playing game(s) {games:?}: {message}")]
    Panic { games: Vec<u64>, message: String },
}

/// The start positions a run's games rotate through by game id, with their names:
/// `starts` (names from the variant's start family; the config refuses unknown ones) or,
/// when empty, the variant's configured start.
pub fn start_positions(variant: &'static Variant, starts: &[String]) -> Vec<(String, Position)> {
    if starts.is_empty() {
        let name = variant.options.iter().find(|(n, _)| n == "start").map(|(_, c)| c.clone()).unwrap_or_else(|| "default".into());
        return vec![(name, Position::start(variant))];
    }
    let family = variant.start_family();
    starts
        .iter()
        .map(|name| {
            let sfen = family.iter().find(|(n, _)| n == name).map(|(_, s)| s.clone()).unwrap_or_else(|| variant.start_sfen.clone());
            (name.clone(), Position::from_sfen(variant, &sfen).expect("start family positions are validated"))
        })
        .collect()
}

fn start_of(job: &SelfplayJob, game_id: u64) -> (String, Position) {
    let mut starts = start_positions(job.variant, &job.config.starts);
    let i = game_id as usize % starts.len();
    starts.swap_remove(i)
}

fn new_slot(job: &SelfplayJob, game_id: u64) -> Slot {
    let mut rng = ChaCha8Rng::seed_from_u64(job.seed ^ game_id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let (start, pos) = start_of(job, game_id);
    let game = opening(pos, job.config.max_plies, job.config.opening_random_plies, &mut rng);
    let full = rng.random::<f32>() < job.config.full_search_fraction;
    let resign_allowed = rng.random::<f32>() >= job.config.no_resign_fraction;
    let config = job.config.search_config(full, game.ply());
    let search = Search::with_seed(game, config, rng.random());
    Slot {
        search,
        game_id,
        start,
        rng,
        records: Vec::new(),
        full,
        resign_allowed,
        low_streak: [0; 2],
        would_resign: None,
        full_searches: 0,
        prior_entropy_sum: 0.0,
        improvement_kl_sum: 0.0,
        simulations: 0,
    }
}

/// Attempts at a random opening that does not end the game before the start is used as is.
const OPENING_TRIES: u32 = 16;

/// The game from `start` after 0..=`random_plies` uniformly random legal plies
/// ([`Game::random_opening`]). With `random_plies` 0 the generator is not touched, so that
/// runs without the key replay exactly.
fn opening(start: Position, max_plies: u32, random_plies: u32, rng: &mut ChaCha8Rng) -> Game {
    if random_plies == 0 {
        return Game::new(start, Some(max_plies));
    }
    let plies = rng.random_range(0..=random_plies);
    Game::random_opening(&start, Some(max_plies), plies, OPENING_TRIES, rng).unwrap_or_else(|| Game::new(start, Some(max_plies)))
}

fn worker<E: Evaluator<Game> + ?Sized>(
    job: &SelfplayJob,
    evaluator: &E,
    stats: &Stats,
    next: &AtomicU64,
    results: &std::sync::Mutex<Vec<FinishedGame>>,
    stop: &std::sync::atomic::AtomicBool,
    in_flight_ids: &std::sync::Mutex<Vec<u64>>,
) -> Result<(), SelfplayError> {
    let actions = ActionSpace::new(job.variant);
    let claim = || {
        if stop.load(Relaxed) {
            return None;
        }
        let i = next.fetch_add(1, Relaxed) as usize;
        let id = job.game_ids.get(i).copied();
        if let Some(id) = id {
            in_flight_ids.lock().unwrap_or_else(|e| e.into_inner()).push(id);
        }
        id
    };
    // Share the games evenly so that every worker (and core) has work.
    let fair_share = job.game_ids.len().div_ceil(job.threads.max(1));
    let in_flight = (job.config.games_in_flight as usize).min(fair_share).max(1);
    let mut slots: Vec<Slot> = Vec::new();
    while slots.len() < in_flight {
        match claim() {
            Some(id) => slots.push(new_slot(job, id)),
            None => break,
        }
    }
    let mut batch: Vec<EvalRequest<Game>> = Vec::new();
    let mut owners: Vec<usize> = Vec::new();
    while !slots.is_empty() {
        batch.clear();
        owners.clear();
        for (i, s) in slots.iter_mut().enumerate() {
            if let Some(req) = s.search.next_leaf() {
                batch.push(req);
                owners.push(i);
            }
        }
        if !batch.is_empty() {
            let t = Instant::now();
            let evals = evaluator.evaluate(&batch);
            stats.eval_nanos.fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
            stats.evaluations.fetch_add(batch.len() as u64, Relaxed);
            stats.batches.fetch_add(1, Relaxed);
            for (&i, e) in owners.iter().zip(evals) {
                slots[i].search.apply(e);
            }
        }
        let mut i = 0;
        while i < slots.len() {
            if slots[i].search.is_done() {
                if let Some(end) = step(job, &actions, &mut slots[i], stats) {
                    let slot = slots.swap_remove(i);
                    let id = slot.game_id;
                    let finished = finish(job, slot, end, stats)?;
                    in_flight_ids.lock().unwrap_or_else(|e| e.into_inner()).retain(|&g| g != id);
                    results.lock().unwrap().push(finished);
                    if let Some(id) = claim() {
                        slots.push(new_slot(job, id));
                    }
                    continue;
                }
            }
            i += 1;
        }
    }
    Ok(())
}

/// Records the finished search's move and plays it. Returns the game's end if it ended.
fn step(job: &SelfplayJob, actions: &ActionSpace, slot: &mut Slot, stats: &Stats) -> Option<GameEnd> {
    let cfg = &job.config;
    let r = slot.search.result();
    stats.simulations.fetch_add(r.simulations as u64, Relaxed);
    slot.simulations += r.simulations as u64;
    let game = slot.search.root();
    let Some(chosen) = r.chosen else {
        return Some(rules_end(game));
    };
    let pos = game.position();
    let side = pos.side_to_move();
    if slot.full {
        let target: Vec<f32> = r.policy.iter().map(|&(_, p)| p).collect();
        let (entropy, kl) = entropy_and_kl(&r.priors, &target);
        slot.full_searches += 1;
        slot.prior_entropy_sum += entropy;
        slot.improvement_kl_sum += kl;
    }
    let policy = if slot.full { r.policy.iter().map(|&(m, p)| (actions.encode(side, m) as u32, p)).collect() } else { Vec::new() };
    slot.records.push((
        side,
        Record {
            sfen: pos.to_sfen(),
            repetitions: game.repetitions().min(255) as u8,
            ply: game.ply() as u16,
            max_plies: game.max_plies().min(65_535) as u16,
            policy,
            full_search: slot.full,
            search_value: if cfg.record_value == "target" { r.policy_value } else { r.value },
            result: 0,
            start: slot.start.clone(),
            game_id: slot.game_id,
        },
    ));
    stats.positions.fetch_add(1, Relaxed);

    // Resignation, or in no-resign games, noting who would have resigned.
    if cfg.resign_threshold > -1.0 {
        let streak = &mut slot.low_streak[side.index()];
        *streak = if r.value < cfg.resign_threshold { *streak + 1 } else { 0 };
        if *streak >= cfg.resign_consecutive.max(1) {
            if slot.resign_allowed {
                return Some(GameEnd { outcome: Outcome::Win(!side), reason: EndReason::Resignation });
            }
            slot.would_resign.get_or_insert(side);
        }
    }

    // Next search: playout-cap randomisation and the exploration schedule.
    let ply = game.ply() + 1;
    slot.full = slot.rng.random::<f32>() < cfg.full_search_fraction;
    *slot.search.config_mut() = cfg.search_config(slot.full, ply);
    slot.search.advance(chosen);
    let game = slot.search.root();
    if game.is_over() {
        return Some(rules_end(game));
    }
    None
}

fn rules_end(game: &Game) -> GameEnd {
    let r = game.result().expect("a root without a chosen move is terminal");
    GameEnd { outcome: r.outcome, reason: EndReason::Rules(r.reason) }
}

fn finish(job: &SelfplayJob, slot: Slot, end: GameEnd, stats: &Stats) -> Result<FinishedGame, SelfplayError> {
    let plies = slot.search.root().ply();
    let records: Vec<Record> = slot
        .records
        .into_iter()
        .map(|(side, mut r)| {
            r.result = end.outcome.value_for(side) as i8;
            r
        })
        .collect();
    let header = ShardHeader {
        variant: job.variant.name.clone(),
        options: job.variant.options.clone(),
        planes_version: PLANES_VERSION,
        action_version: ACTION_VERSION,
        generation: job.generation,
        games: 1,
    };
    let line = GameLine {
        game_id: slot.game_id,
        start: slot.start.clone(),
        plies: plies as u32,
        black_result: end.outcome.value_for(Color::Black) as i8,
        ending: match end.reason {
            EndReason::Rules(r) => r.name().to_string(),
            EndReason::Resignation => "resignation".to_string(),
        },
        resign_disabled: !slot.resign_allowed,
        would_resign: slot.would_resign.is_some(),
        false_resignation: slot.would_resign.is_some_and(|side| end.outcome != Outcome::Win(!side)),
        full_searches: slot.full_searches,
        prior_entropy_sum: slot.prior_entropy_sum,
        improvement_kl_sum: slot.improvement_kl_sum,
        simulations: slot.simulations,
    };
    // The line first: a kill before the shard replays the game, whose line then repeats.
    std::fs::create_dir_all(&job.out_dir).map_err(|source| RecordError::Io { path: job.out_dir.clone(), source })?;
    append_game(&job.out_dir, &line)?;
    let shard = shard_path(&job.out_dir, slot.game_id);
    write_shard(&shard, &header, &records)?;
    stats.games.fetch_add(1, Relaxed);
    stats.plies.fetch_add(plies as u64, Relaxed);
    match end.outcome {
        Outcome::Win(Color::Black) => stats.black_wins.fetch_add(1, Relaxed),
        Outcome::Win(Color::White) => stats.white_wins.fetch_add(1, Relaxed),
        Outcome::Draw => stats.draws.fetch_add(1, Relaxed),
    };
    if end.reason == EndReason::Resignation {
        stats.resignations.fetch_add(1, Relaxed);
    }
    if let Some(side) = slot.would_resign {
        stats.would_resign.fetch_add(1, Relaxed);
        if end.outcome != Outcome::Win(!side) {
            stats.false_resign.fetch_add(1, Relaxed);
        }
    }
    let game = FinishedGame { game_id: slot.game_id, start: slot.start, plies, end, shard, line };
    if let Some(sink) = &job.on_finished {
        (sink.0)(&game).map_err(|message| SelfplayError::Sink { game: game.game_id, message })?;
    }
    Ok(game)
}
