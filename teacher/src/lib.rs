//! Learning from a teacher: games played by a teacher against itself, each position scored
//! move by move, written as ordinary training shards so that the trainer needs nothing
//! new. Expert iteration's first step: the teacher starts the network; search and
//! self-play must take it further. The teacher is the alpha-beta baseline (every move
//! within a margin of the best scored exactly:
//! [`players::baseline::AlphaBeta::score_root_moves`]) or any USI engine that reports
//! `MultiPV` lines, such as Fairy-Stockfish (the first moves of its `multipv` lines with
//! their scores, at a node limit: [`score_usi`]).
//!
//! The stage runs in three resumable steps over one directory:
//! 1. **games** (`games/game-NNNNNNNN.json.gz`, one per game, written atomically): random
//!    opening plies, then the teacher's moves — sampled from its policy target for the
//!    first `sample_plies`, its best move after — with every scored position's move scores;
//! 2. **the fit** (`fit.json`): the logistic scale of the teacher's scores fitted to the
//!    games' results ([`targets::fit_scale`]);
//! 3. **shards** (one per game, in the shard directory the caller names): policy and value
//!    targets from the scores ([`targets`]), the result from the game.
//!
//! A killed stage loses at most the games in flight; the same call goes on.

mod targets;
mod usi_teacher;

/// Shards are named as self-play's, so one training window reads both.
pub use selfplay::shard_path;
pub use targets::{fit_scale, policy_cp, policy_target, value_of, ScaleFit, MATE_CP};
pub use usi_teacher::score_usi;
use usi_teacher::UsiTeacher;

use encoding::{ActionSpace, ACTION_VERSION, PLANES_VERSION};
use players::baseline::{AlphaBeta, Baseline, RootScores};
use players::Score;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use records::{write_atomic, write_shard, Record, RecordError, ShardHeader};
use rules::{Color, Game, Position, Variant};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

/// The `[teacher]` section of a run config; `games = 0` (the default) is no teacher stage.
/// Every field is documented with its unit and range in `configs/default.toml`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TeacherConfig {
    /// Teacher games played before the first self-play generation (0: none).
    pub games: u32,
    /// Who teaches: `"alphabeta"` (the baseline at `depth`) or `"usi:COMMAND"`, a USI
    /// engine that scores `multipv` moves in `nodes` nodes.
    #[serde(default = "default_engine")]
    pub engine: String,
    /// The alpha-beta teacher's depth (plus quiescence).
    pub depth: u32,
    /// A USI teacher's node limit per position.
    #[serde(default = "default_nodes")]
    pub nodes: u64,
    /// Moves a USI teacher scores per position (its `MultiPV`); the others get no
    /// policy mass.
    #[serde(default = "default_multipv")]
    pub multipv: u32,
    /// A USI teacher's options (`setoption`), NAME = VALUE.
    #[serde(default)]
    pub engine_options: std::collections::BTreeMap<String, String>,
    /// Temperature of the policy target's softmax over move scores, centipawns.
    pub temperature: f64,
    /// Moves more than this many centipawns below the best get no policy mass (and no
    /// exact score: the search only bounds them).
    pub margin: i32,
    /// Each game starts with a uniformly drawn number of random plies, 0..=this.
    pub random_plies: u32,
    /// Plies after the random ones in which the teacher's move is sampled from its policy
    /// target (at `temperature`); it plays its best move after.
    pub sample_plies: u32,
    /// Share of the teacher's value in the value target while training on its games
    /// (the rest is the game's result), 0..=1.
    pub value_share: f32,
    /// Optimiser steps of the training on the teacher's games (generation 0).
    pub steps: u32,
    /// The learning rate of that training's first step; missing: `training.learning_rate`
    /// (as runs before this key trained). Learning from the teacher is training from
    /// scratch, where self-play after it fine-tunes: the two want different rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_rate: Option<f64>,
    /// The learning rate of that training's last step as a fraction of its first
    /// (cosine decay); 1 = constant. Missing in older configs: 1.
    #[serde(default = "constant_rate")]
    pub final_lr_fraction: f64,
    /// Self-play generations whose training window still holds the teacher's games.
    pub window_generations: u32,
    /// Whether the teacher's positions keep `value_share` in the self-play generations
    /// that train on them (false: they take `training.search_value_share` there). Missing
    /// in configs written before it existed: false, as those runs trained.
    #[serde(default)]
    pub keep_value_share: bool,
    /// The share of each self-play generation's training batch drawn from the teacher's
    /// positions while they are in the window, at generation 1; it halves every
    /// `share_half_life` generations. Missing: no fixed share (positions drawn in
    /// proportion to their numbers, as runs before this key trained: the teacher's ~85%
    /// of the batch until they leave the window at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_share: Option<f64>,
    /// Generations over which `batch_share` halves; missing: it stays constant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_half_life: Option<f64>,
}

fn default_engine() -> String {
    "alphabeta".into()
}

fn default_nodes() -> u64 {
    10_000
}

fn default_multipv() -> u32 {
    8
}

fn constant_rate() -> f64 {
    1.0
}

impl Default for TeacherConfig {
    fn default() -> TeacherConfig {
        TeacherConfig {
            games: 0,
            engine: default_engine(),
            depth: 2,
            nodes: default_nodes(),
            multipv: default_multipv(),
            engine_options: Default::default(),
            temperature: 100.0,
            margin: 600,
            random_plies: 8,
            sample_plies: 16,
            value_share: 0.5,
            steps: 0,
            learning_rate: None,
            final_lr_fraction: 1.0,
            window_generations: 0,
            keep_value_share: false,
            batch_share: None,
            share_half_life: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("teacher.{key}: {problem}")]
pub struct ConfigError {
    pub key: &'static str,
    pub problem: String,
}

impl TeacherConfig {
    pub fn enabled(&self) -> bool {
        self.games > 0
    }

    /// The engine command of a USI teacher (`None` for the alpha-beta).
    pub fn usi_command(&self) -> Option<&str> {
        self.engine.strip_prefix("usi:").map(str::trim)
    }

    /// Who teaches, in words (`alpha-beta depth 2`, `/usr/games/fairy-stockfish at 10000
    /// nodes, 8 moves`).
    pub fn describe(&self) -> String {
        match self.usi_command() {
            Some(cmd) => format!("{cmd} at {} nodes, {} moves", self.nodes, self.multipv),
            None => format!("alpha-beta depth {}", self.depth),
        }
    }

    /// The teacher's share of self-play generation `g`'s batches (`batch_share` halved
    /// every `share_half_life` generations after the first), `None` where the teacher's
    /// positions are not in `g`'s window or take no fixed share.
    pub fn batch_share_at(&self, g: u32) -> Option<f32> {
        if !self.enabled() || g == 0 || g > self.window_generations {
            return None;
        }
        let share = self.batch_share?;
        let halvings = self.share_half_life.map_or(0.0, |h| (g - 1) as f64 / h);
        Some((share * 0.5f64.powf(halvings)) as f32)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key, problem: String| Err(ConfigError { key, problem });
        if let Some(s) = self.batch_share.filter(|s| !(0.0..=1.0).contains(s)) {
            return bad("batch_share", format!("{s} is not in 0..=1"));
        }
        if let Some(h) = self.share_half_life.filter(|h| !(h.is_finite() && *h > 0.0)) {
            return bad("share_half_life", format!("{h} is not a positive number of generations"));
        }
        match self.usi_command() {
            Some("") => return bad("engine", "\"usi:\" needs an engine command after the colon".into()),
            Some(cmd) if Path::new(cmd).components().count() > 1 && !Path::new(cmd).exists() => {
                return bad("engine", format!("{cmd} does not exist"));
            }
            Some(_) => {}
            None if self.engine == "alphabeta" => {}
            None => return bad("engine", format!("'{}' is neither \"alphabeta\" nor \"usi:COMMAND\"", self.engine)),
        }
        if !(1..=100_000_000).contains(&self.nodes) {
            return bad("nodes", format!("{} is not in 1..=100000000", self.nodes));
        }
        if !(1..=600).contains(&self.multipv) {
            return bad("multipv", format!("{} is not in 1..=600", self.multipv));
        }
        if !(1..=8).contains(&self.depth) {
            return bad("depth", format!("{} is not in 1..=8", self.depth));
        }
        if !(self.temperature.is_finite() && self.temperature >= 1.0 && self.temperature <= 10_000.0) {
            return bad("temperature", format!("{} is not in 1..=10000 centipawns", self.temperature));
        }
        if !(0..=100_000).contains(&self.margin) {
            return bad("margin", format!("{} is not in 0..=100000 centipawns", self.margin));
        }
        if self.random_plies > 200 {
            return bad("random_plies", format!("{} is above 200", self.random_plies));
        }
        if !(0.0..=1.0).contains(&self.value_share) {
            return bad("value_share", format!("{} is not in 0..=1", self.value_share));
        }
        if let Some(lr) = self.learning_rate.filter(|lr| !(*lr > 0.0 && *lr <= 1.0)) {
            return bad("learning_rate", format!("{lr} is not in (0, 1]"));
        }
        if !(self.final_lr_fraction > 0.0 && self.final_lr_fraction <= 1.0) {
            return bad("final_lr_fraction", format!("{} is not in (0, 1]", self.final_lr_fraction));
        }
        if self.enabled() && self.steps == 0 {
            return bad("steps", "must be at least 1 when teacher games are played".into());
        }
        Ok(())
    }
}

/// What the stage is asked to do.
#[derive(Clone, Debug)]
pub struct TeacherJob {
    pub variant: &'static Variant,
    pub config: TeacherConfig,
    /// Where the games and the fit live.
    pub dir: PathBuf,
    /// Where the shards go (one per game).
    pub shard_dir: PathBuf,
    /// Start positions with their names, played in rotation by game id.
    pub starts: Vec<(String, Position)>,
    /// Game length limit in plies (a draw), as self-play's.
    pub max_plies: u32,
    pub threads: usize,
    pub seed: u64,
}

/// One scored position: the teacher's best score and the scores of the moves within the
/// margin of it (the others are only known to be worse).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ScoredPly {
    pub score: Score,
    pub moves: Vec<(String, Score)>,
}

/// One teacher game as `games/game-NNNNNNNN.json.gz` holds it (gzipped JSON).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TeacherGame {
    pub game_id: u64,
    pub start: String,
    pub start_sfen: String,
    /// Random plies before the first scored position.
    pub random_plies: u32,
    /// Every move of the game, USI.
    pub moves: Vec<String>,
    /// The positions after the random plies, in order, each with the teacher's scores.
    pub scored: Vec<ScoredPly>,
    /// +1 Black won, 0 draw, −1 White won.
    pub black_result: i8,
    pub ending: String,
    pub nodes: u64,
}

/// `summary.json`: what the stage did.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TeacherSummary {
    pub games: u64,
    pub positions: u64,
    pub black_wins: u64,
    pub white_wins: u64,
    pub draws: u64,
    pub average_plies: f64,
    /// How games ended, by ending name.
    pub endings: std::collections::BTreeMap<String, u64>,
    pub nodes: u64,
    /// Wall seconds of the playing step (this and earlier invocations) and the worker
    /// threads' busy seconds (CPU-seconds if nothing else shares the machine).
    pub seconds: f64,
    pub cpu_seconds: f64,
    /// CPU time (user + system) the stage's process and its engine processes used to
    /// play `cpu_time_games` of the games (Linux; invocations before it was measured
    /// add none): unlike `cpu_seconds`, not inflated by other work on the machine.
    #[serde(default)]
    pub cpu_time_seconds: f64,
    #[serde(default)]
    pub cpu_time_games: u64,
    pub fit: ScaleFit,
}

/// CPU time in seconds (user + system) of this process and of its children that have
/// been waited for, from `/proc/self/stat` (Linux, whose USER_HZ is 100); `None` elsewhere.
pub fn process_cpu_seconds() -> Option<CpuSeconds> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<f64> = rest.split_whitespace().skip(11).take(4).map(|f| f.parse().ok()).collect::<Option<_>>()?;
    let [utime, stime, cutime, cstime] = fields[..] else { return None };
    Some(CpuSeconds { own: (utime + stime) / 100.0, children: (cutime + cstime) / 100.0 })
}

/// CPU seconds of this process (`own`) and of its children it has waited for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuSeconds {
    pub own: f64,
    pub children: f64,
}

#[derive(Debug, thiserror::Error)]
pub enum TeacherError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {problem}")]
    Game { path: PathBuf, problem: String },
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("no teacher position has a centipawn score to fit the value scale to")]
    NoFit,
    #[error("teacher engine {engine}: {problem}")]
    Engine { engine: String, problem: String },
}

/// The teacher of one worker thread.
enum Scorer {
    AlphaBeta(Box<AlphaBeta>),
    Usi(Box<UsiTeacher>),
}

impl Scorer {
    fn new(job: &TeacherJob) -> Scorer {
        match job.config.usi_command() {
            Some(cmd) => Scorer::Usi(Box::new(UsiTeacher::new(cmd, &job.config))),
            None => Scorer::AlphaBeta(Box::new(AlphaBeta::new(job.variant, 1 << 18))),
        }
    }

    fn new_game(&mut self) -> Result<(), TeacherError> {
        match self {
            Scorer::AlphaBeta(ab) => {
                ab.new_game();
                Ok(())
            }
            Scorer::Usi(u) => u.new_game(),
        }
    }

    /// The moves of the game's position with their scores (`None`: no legal move).
    fn score(&mut self, game: &Game, cfg: &TeacherConfig) -> Result<Option<RootScores>, TeacherError> {
        match self {
            Scorer::AlphaBeta(ab) => Ok(ab.score_root_moves(game, cfg.depth, cfg.margin)),
            Scorer::Usi(u) => u.score(game, cfg.margin),
        }
    }
}

pub fn game_path(dir: &Path, game_id: u64) -> PathBuf {
    dir.join("games").join(format!("game-{game_id:08}.json.gz"))
}

/// Reads a game file; an unreadable one is reported (the caller plays it again).
pub fn read_game(path: &Path) -> Result<TeacherGame, TeacherError> {
    let file = std::fs::File::open(path).map_err(|source| TeacherError::Io { path: path.into(), source })?;
    serde_json::from_reader(std::io::BufReader::new(flate2::read::GzDecoder::new(file)))
        .map_err(|e| TeacherError::Game { path: path.into(), problem: e.to_string() })
}

fn write_game(path: &Path, game: &TeacherGame) -> Result<(), TeacherError> {
    let io = |source| TeacherError::Io { path: path.into(), source };
    std::fs::create_dir_all(path.parent().expect("game files live in games/")).map_err(io)?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    serde_json::to_writer(&mut gz, game).expect("plain data serialises");
    write_atomic(path, &gz.finish().map_err(io)?).map_err(io)
}

/// Seconds the playing step has taken so far (kept across invocations).
#[derive(Serialize, Deserialize, Default)]
struct Progress {
    seconds: f64,
    cpu_seconds: f64,
    #[serde(default)]
    cpu_time_seconds: f64,
    #[serde(default)]
    cpu_time_games: u64,
}

/// Runs the stage: plays the games not yet played (calling `on_game(done, total)` as
/// each finishes), fits the value scale once every game exists, writes the missing
/// shards, and returns the summary (also written to `summary.json`).
pub fn run_stage(job: &TeacherJob, on_game: &(dyn Fn(u64, u64) + Sync)) -> Result<TeacherSummary, TeacherError> {
    let cfg = &job.config;
    let ids: Vec<u64> = (0..cfg.games as u64).collect();
    // Each file is read once: the games found now, then the ones played below.
    let mut found: Vec<Option<TeacherGame>> = ids.iter().map(|&id| read_game(&game_path(&job.dir, id)).ok()).collect();
    let missing: Vec<u64> = ids.iter().copied().filter(|&id| found[id as usize].is_none()).collect();
    let progress_path = job.dir.join("progress.json");
    let mut progress: Progress = std::fs::read(&progress_path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
    if !missing.is_empty() {
        tracing::info!(games = missing.len(), teacher = cfg.describe(), "teacher games");
        let started = Instant::now();
        let cpu_before = process_cpu_seconds();
        let busy = play_games(job, &missing, (ids.len() - missing.len()) as u64, on_game)?;
        progress.seconds += started.elapsed().as_secs_f64();
        progress.cpu_seconds += busy;
        // Every engine process has been reaped by now (each worker's ends with it).
        if let (Some(a), Some(b)) = (cpu_before, process_cpu_seconds()) {
            progress.cpu_time_seconds += (b.own + b.children) - (a.own + a.children);
            progress.cpu_time_games += missing.len() as u64;
        }
        write_json(&progress_path, &progress)?;
    }
    for &id in &missing {
        found[id as usize] = Some(read_game(&game_path(&job.dir, id))?);
    }
    let games: Vec<TeacherGame> = found.into_iter().flatten().collect();
    let fit_path = job.dir.join("fit.json");
    // The fit is made once: shards written under it stay consistent after a resume.
    let fit: ScaleFit = match std::fs::read(&fit_path).ok().and_then(|b| serde_json::from_slice(&b).ok()) {
        Some(f) => f,
        None => {
            let f = fit_scale(&fit_data(job.variant, &games)).ok_or(TeacherError::NoFit)?;
            write_json(&fit_path, &f)?;
            f
        }
    };
    tracing::info!(k = fit.k, loss = fit.loss, constant = fit.constant_loss, "teacher value scale");
    std::fs::create_dir_all(&job.shard_dir).map_err(|source| TeacherError::Io { path: job.shard_dir.clone(), source })?;
    let actions = ActionSpace::new(job.variant);
    for g in &games {
        let path = shard_path(&job.shard_dir, g.game_id);
        if !path.exists() {
            let (header, records) = shard_of(job, &actions, g, &fit, &game_path(&job.dir, g.game_id))?;
            write_shard(&path, &header, &records)?;
        }
    }
    let mut s = TeacherSummary {
        games: games.len() as u64,
        positions: games.iter().map(|g| g.scored.len() as u64).sum(),
        black_wins: games.iter().filter(|g| g.black_result > 0).count() as u64,
        white_wins: games.iter().filter(|g| g.black_result < 0).count() as u64,
        draws: games.iter().filter(|g| g.black_result == 0).count() as u64,
        average_plies: games.iter().map(|g| g.moves.len() as f64).sum::<f64>() / games.len().max(1) as f64,
        endings: Default::default(),
        nodes: games.iter().map(|g| g.nodes).sum(),
        seconds: progress.seconds,
        cpu_seconds: progress.cpu_seconds,
        cpu_time_seconds: progress.cpu_time_seconds,
        cpu_time_games: progress.cpu_time_games,
        fit,
    };
    for g in &games {
        *s.endings.entry(g.ending.clone()).or_default() += 1;
    }
    write_json(&job.dir.join("summary.json"), &s)?;
    Ok(s)
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), TeacherError> {
    let io = |source| TeacherError::Io { path: path.into(), source };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let text = serde_json::to_string_pretty(value).expect("plain data serialises");
    write_atomic(path, text.as_bytes()).map_err(|source| TeacherError::Io { path: path.into(), source })
}

/// (centipawn score, result for the side to move in [0, 1]) of every scored position
/// whose score is not a mate.
fn fit_data(variant: &'static Variant, games: &[TeacherGame]) -> Vec<(f64, f64)> {
    let mut data = Vec::new();
    for g in games {
        let first = Position::from_sfen(variant, &g.start_sfen).map_or(Color::Black, |p| p.side_to_move());
        for (i, ply) in g.scored.iter().enumerate() {
            let Score::Cp(c) = ply.score else { continue };
            // Sides alternate every ply in these games (no pass moves).
            let black = (first == Color::Black) == (g.random_plies as usize + i).is_multiple_of(2);
            let r = if black { g.black_result } else { -g.black_result };
            data.push((c as f64, (r as f64 + 1.0) / 2.0));
        }
    }
    data
}

/// The training records of one game.
fn shard_of(job: &TeacherJob, actions: &ActionSpace, g: &TeacherGame, fit: &ScaleFit, path: &Path) -> Result<(ShardHeader, Vec<Record>), TeacherError> {
    let bad = |problem: String| TeacherError::Game { path: path.into(), problem };
    let v = job.variant;
    let start = Position::from_sfen(v, &g.start_sfen).map_err(|e| bad(format!("start SFEN: {e}")))?;
    let mut game = Game::new(start, Some(job.max_plies));
    let mut records = Vec::with_capacity(g.scored.len());
    for (ply, text) in g.moves.iter().enumerate() {
        if ply >= g.random_plies as usize {
            let scored = g.scored.get(ply - g.random_plies as usize).ok_or_else(|| bad(format!("ply {ply} has no scores")))?;
            let pos = game.position();
            let side = pos.side_to_move();
            let mut moves = Vec::with_capacity(scored.moves.len());
            for (usi, s) in &scored.moves {
                let m = pos.parse_usi(usi).map_err(|e| bad(format!("ply {ply}: move {usi}: {e}")))?;
                moves.push((actions.encode(side, m) as u32, Some(*s)));
            }
            let result = if side == Color::Black { g.black_result } else { -g.black_result };
            records.push(Record {
                sfen: pos.to_sfen(),
                repetitions: game.repetitions().min(255) as u8,
                ply: ply.min(65_535) as u16,
                max_plies: game.max_plies().min(65_535) as u16,
                policy: policy_target(&moves, job.config.temperature),
                full_search: true,
                search_value: value_of(scored.score, fit.k),
                result,
                start: g.start.clone(),
                game_id: g.game_id,
            });
        }
        game.play_usi(text).map_err(|e| bad(format!("ply {ply}: move {text}: {e}")))?;
    }
    let header = ShardHeader {
        variant: v.name.clone(),
        options: v.options.clone(),
        planes_version: PLANES_VERSION,
        action_version: ACTION_VERSION,
        generation: 0,
        games: 1,
    };
    Ok((header, records))
}

/// Plays `ids` on the job's threads; returns the threads' busy seconds.
fn play_games(job: &TeacherJob, ids: &[u64], already: u64, on_game: &(dyn Fn(u64, u64) + Sync)) -> Result<f64, TeacherError> {
    let next = AtomicUsize::new(0);
    let done = AtomicU64::new(already);
    let busy_nanos = AtomicU64::new(0);
    let total = job.config.games as u64;
    let first_error = std::sync::Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..job.threads.max(1) {
            scope.spawn(|| {
                let t = Instant::now();
                let mut scorer = Scorer::new(job);
                loop {
                    let i = next.fetch_add(1, Relaxed);
                    let Some(&id) = ids.get(i) else { break };
                    if first_error.lock().unwrap().is_some() {
                        break;
                    }
                    let written = play_game(job, &mut scorer, id).and_then(|game| write_game(&game_path(&job.dir, id), &game));
                    if let Err(e) = written {
                        first_error.lock().unwrap().get_or_insert(e);
                        break;
                    }
                    on_game(done.fetch_add(1, Relaxed) + 1, total);
                }
                busy_nanos.fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
            });
        }
    });
    match first_error.into_inner().unwrap() {
        Some(e) => Err(e),
        None => Ok(busy_nanos.into_inner() as f64 / 1e9),
    }
}

/// The game with id `id`: its randomness (openings, sampled moves) comes from the job's
/// seed and the id alone, so a replayed game is the same game (with a deterministic
/// teacher: a USI engine's search may vary with its hash table's contents).
fn play_game(job: &TeacherJob, scorer: &mut Scorer, id: u64) -> Result<TeacherGame, TeacherError> {
    let cfg = &job.config;
    let mut rng = ChaCha8Rng::seed_from_u64(job.seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x7EAC_4E12);
    let (start_name, start) = &job.starts[id as usize % job.starts.len().max(1)];
    // An opening that ends the game before the teacher moves is drawn again.
    let (mut game, random_plies) = loop {
        let n = rng.random_range(0..=cfg.random_plies);
        let mut game = Game::new(start.clone(), Some(job.max_plies));
        for _ in 0..n {
            let moves = game.legal_moves();
            if game.is_over() || moves.is_empty() {
                break;
            }
            game.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
        if !game.is_over() || n == 0 {
            let plies = game.ply() as u32;
            break (game, plies);
        }
    };
    scorer.new_game()?;
    let mut scored = Vec::new();
    let mut nodes = 0;
    while !game.is_over() {
        let Some(rs) = scorer.score(&game, cfg)? else { break };
        nodes += rs.nodes;
        let pos = game.position();
        let chosen = if (scored.len() as u32) < cfg.sample_plies {
            let p = policy_target(&rs.moves, cfg.temperature);
            let mut u: f32 = rng.random();
            let mut pick = rs.best;
            for (m, q) in p {
                pick = m;
                if u < q {
                    break;
                }
                u -= q;
            }
            pick
        } else {
            rs.best
        };
        scored.push(ScoredPly { score: rs.score, moves: rs.moves.iter().filter_map(|&(m, s)| Some((pos.move_to_usi(m), s?))).collect() });
        game.play_unchecked(chosen);
    }
    let result = game.result();
    let start_pos = game.start();
    let moves = game.moves().iter().map(|&m| start_pos.move_to_usi(m)).collect();
    Ok(TeacherGame {
        game_id: id,
        start: start_name.clone(),
        start_sfen: start_pos.to_sfen(),
        random_plies,
        moves,
        scored,
        black_result: result.map_or(0, |r| r.outcome.value_for(Color::Black) as i8),
        ending: result.map_or("unfinished".into(), |r| r.reason.name().to_string()),
        nodes,
    })
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// A child's CPU time counts once it has been waited for (as the teacher's engines
    /// are when each worker ends).
    #[test]
    fn a_reaped_child_s_cpu_time_is_counted() {
        let before = super::process_cpu_seconds().unwrap();
        let status = std::process::Command::new("sh").args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"]).status().unwrap();
        assert!(status.success());
        let after = super::process_cpu_seconds().unwrap();
        assert!(after.children > before.children, "{before:?} -> {after:?}");
    }
}

#[cfg(test)]
mod share_tests {
    use super::TeacherConfig;

    #[test]
    fn the_teachers_batch_share_halves_every_half_life_within_its_window() {
        let c = TeacherConfig { games: 10, steps: 1, window_generations: 9, batch_share: Some(0.5), share_half_life: Some(4.0), ..TeacherConfig::default() };
        assert_eq!(c.batch_share_at(0), None, "generation 0 is the teacher's own training");
        assert_eq!(c.batch_share_at(1), Some(0.5));
        assert_eq!(c.batch_share_at(5), Some(0.25));
        assert_eq!(c.batch_share_at(9), Some(0.125));
        assert_eq!(c.batch_share_at(10), None, "past the window");
        let constant = TeacherConfig { share_half_life: None, ..c.clone() };
        assert_eq!(constant.batch_share_at(9), Some(0.5));
        assert_eq!(TeacherConfig { batch_share: None, ..c.clone() }.batch_share_at(1), None);
        assert_eq!(TeacherConfig { games: 0, ..c.clone() }.batch_share_at(1), None);
        assert_eq!(TeacherConfig { batch_share: Some(1.5), ..c.clone() }.validate().unwrap_err().key, "batch_share");
        assert_eq!(TeacherConfig { share_half_life: Some(0.0), ..c }.validate().unwrap_err().key, "share_half_life");
    }
}
