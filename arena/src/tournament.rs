//! Tournaments: a match (two players), a gauntlet (the first player against each other)
//! or a round-robin (every pair), from a tournament file or command-line player specs.
//!
//! Every opening is played twice with colours swapped. Results are appended to
//! `results.jsonl` in the output directory as each game ends (one line, flushed to disk),
//! so an interrupted tournament resumes where it stopped and a finished one can be
//! extended with more rounds: job ids are stable functions of (round, pairing, colour).
//!
//! A match with an SPRT (`sprt`, see `stats`) checks the test whenever a result completes
//! a pair, and stops claiming games once it accepts a hypothesis; the games in flight are
//! finished. The report keeps the decision with the LLR and game count at which it was
//! taken, found again from the results file's order when a stopped match is resumed.
//!
//! The output directory holds `tournament.toml` (the resolved settings), `results.jsonl`,
//! `games/` (KIF (`.kifu`, UTF-8) and CSA records for standard shogi), `summary.json`, `pairings.csv`,
//! `ratings.csv` and `ratings.svg`; while it runs, `live.txt` (see [`crate::live`]).

use crate::live::{AfterGame, Progress};
use crate::openings::{OpeningError, Openings};
use crate::report::{self, Report};
use crate::runner::{play_alone, run_jobs, Adjudication, Job, JobResult, Remote, RemoteWork, RunSettings};
use crate::stats::Sprt;
use gamerecords as record;
use indicatif::{ProgressBar, ProgressStyle};
use players::limits::Limit;
use players::spec::{PlayerFactory, PlayerSpec, SpecError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    #[error("tournament file {path}: {problem}")]
    File { path: String, problem: String },
    #[error("tournament: {0}")]
    Invalid(String),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Openings(#[from] OpeningError),
    #[error("variant: {0}")]
    Variant(#[from] rules::VariantError),
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}, line {line}: {problem}")]
    Results { path: String, line: usize, problem: String },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TournamentError + '_ {
    move |source| TournamentError::Io { path: path.display().to_string(), source }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Match,
    Gauntlet,
    RoundRobin,
    /// A training run's ladder: the non-anchor players in order (generations), each
    /// against the next one (unless `neighbours` is off) and against every anchor; anchors
    /// against each other.
    Ladder,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpeningsConfig {
    /// A file of positions (`startpos`/SFEN, optional `moves …`), one per line.
    #[serde(default)]
    pub file: Option<PathBuf>,
    /// Named members of the variant's start family; `["all"]` for all of them.
    #[serde(default)]
    pub starts: Vec<String>,
    /// Random plies from the start when neither a file nor starts are given.
    #[serde(default)]
    pub random_plies: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SprtConfig {
    pub elo0: f64,
    pub elo1: f64,
    #[serde(default = "five_percent")]
    pub alpha: f64,
    #[serde(default = "five_percent")]
    pub beta: f64,
}

fn five_percent() -> f64 {
    0.05
}

/// A tournament file (TOML). Every key but `players` has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TournamentConfig {
    #[serde(default = "default_variant")]
    pub variant: String,
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    #[serde(default = "default_mode")]
    pub mode: Mode,
    /// Player specs (see `players::spec`).
    pub players: Vec<String>,
    /// Opening pairs per pairing (each played with both colours).
    #[serde(default = "default_rounds")]
    pub rounds: u32,
    /// The limit of players whose spec gives none (`nodes=800`, `time=0,byoyomi=100`, …).
    #[serde(default)]
    pub limit: Option<String>,
    #[serde(default = "default_openings")]
    pub openings: OpeningsConfig,
    #[serde(default = "default_threads")]
    pub threads: usize,
    #[serde(default = "default_in_flight")]
    pub games_in_flight: usize,
    /// Game length limit in plies (a draw); 0 = the variant's.
    #[serde(default)]
    pub max_plies: u32,
    /// Most hands of a match of hands (Hand shogi) before it is drawn.
    #[serde(default = "default_max_hands")]
    pub max_hands: u32,
    #[serde(default)]
    pub adjudication: Adjudication,
    #[serde(default)]
    pub sprt: Option<SprtConfig>,
    /// The player whose rating is fixed (default: the first), and at what Elo.
    #[serde(default)]
    pub anchor: Option<String>,
    /// Ladder mode: the names of the fixed reference players.
    #[serde(default)]
    pub anchors: Vec<String>,
    /// Ladder mode: each generation also plays the next one. Off, it plays the anchors only,
    /// so every generation's rating stands on games against fixed players alone.
    #[serde(default = "yes")]
    pub neighbours: bool,
    #[serde(default)]
    pub anchor_elo: f64,
    #[serde(default = "default_margin")]
    pub time_margin_ms: u64,
    /// How long past its clock (or per move under a budget of work) an engine may stay
    /// silent before it counts as hung.
    #[serde(default = "default_move_timeout")]
    pub move_timeout_ms: u64,
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default = "default_out")]
    pub out_dir: PathBuf,
}

fn default_variant() -> String {
    "pocket-copper".into()
}
fn default_mode() -> Mode {
    Mode::RoundRobin
}
fn default_rounds() -> u32 {
    10
}
fn default_openings() -> OpeningsConfig {
    OpeningsConfig { file: None, starts: Vec::new(), random_plies: 4 }
}
fn default_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2)
}
fn default_in_flight() -> usize {
    8
}
fn default_max_hands() -> u32 {
    8
}
fn yes() -> bool {
    true
}
fn default_margin() -> u64 {
    100
}
fn default_move_timeout() -> u64 {
    60_000
}
fn default_seed() -> u64 {
    1
}
fn default_out() -> PathBuf {
    PathBuf::from("data/arena/tournament")
}

impl TournamentConfig {
    pub fn new(players: Vec<String>) -> TournamentConfig {
        toml::from_str::<TournamentConfig>("players = []").map(|c| TournamentConfig { players, ..c }).expect("defaults parse")
    }

    pub fn load(path: &Path) -> Result<TournamentConfig, TournamentError> {
        let bad = |problem: String| TournamentError::File { path: path.display().to_string(), problem };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let c: TournamentConfig = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
        c.validate().map_err(|e| bad(e.to_string()))?;
        Ok(c)
    }

    pub fn validate(&self) -> Result<(), TournamentError> {
        let bad = |s: String| Err(TournamentError::Invalid(s));
        let n = self.players.len();
        match self.mode {
            Mode::Match if n != 2 => return bad(format!("mode match needs exactly 2 players, got {n}")),
            _ if n < 2 => return bad(format!("players: need at least 2, got {n}")),
            _ => {}
        }
        if !self.neighbours && self.mode != Mode::Ladder {
            return bad("neighbours = false applies to mode ladder only".into());
        }
        if self.rounds == 0 {
            return bad("rounds must be at least 1".into());
        }
        if !(1..=256).contains(&self.threads) {
            return bad(format!("threads: {} is outside 1..=256", self.threads));
        }
        if !(1..=4096).contains(&self.games_in_flight) {
            return bad(format!("games_in_flight: {} is outside 1..=4096", self.games_in_flight));
        }
        if let Some(s) = &self.sprt {
            if self.mode != Mode::Match {
                return bad("sprt applies to mode match only".into());
            }
            let open_half = |x: f64| x > 0.0 && x < 0.5;
            if s.elo1 <= s.elo0 || s.elo1.is_nan() || s.elo0.is_nan() || !open_half(s.alpha) || !open_half(s.beta) {
                return bad(format!("sprt: need elo0 < elo1 and 0 < alpha, beta < 0.5 (got {s:?})"));
            }
        }
        let mut names = HashSet::new();
        for p in &self.players {
            let spec = PlayerSpec::parse(p)?;
            if !names.insert(spec.name.clone()) {
                return bad(format!("two players are called '{}': give one a name=…", spec.name));
            }
        }
        for a in &self.anchors {
            if !names.contains(a) {
                return bad(format!("anchors: '{a}' is not a player"));
            }
        }
        if let Some(a) = &self.anchor {
            if !names.contains(a) {
                return bad(format!("anchor '{a}' is not a player (players: {})", names.into_iter().collect::<Vec<_>>().join(", ")));
            }
        }
        if let Some(l) = &self.limit {
            parse_limit(l)?;
        }
        if self.max_plies > 0 {
            self.check_random_plies(self.max_plies, "max_plies")?;
        }
        Ok(())
    }

    /// Random openings as long as the game are over before it starts: none could be played.
    fn check_random_plies(&self, max_plies: u32, what: &str) -> Result<(), TournamentError> {
        let o = &self.openings;
        if o.file.is_none() && o.starts.is_empty() && o.random_plies >= max_plies {
            return Err(TournamentError::Invalid(format!(
                "openings.random_plies ({}) must be below {what} ({max_plies}): every random opening would end the game",
                o.random_plies
            )));
        }
        Ok(())
    }

    pub fn variant(&self) -> Result<&'static rules::Variant, TournamentError> {
        let options: Vec<(String, String)> = self.options.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        Ok(rules::Variant::load(&self.variant, &options)?)
    }

    fn openings(&self, variant: &'static rules::Variant) -> Result<Openings, TournamentError> {
        let o = &self.openings;
        Ok(match (&o.file, o.starts.is_empty()) {
            (Some(f), true) => Openings::from_file(f, variant)?,
            (None, false) => {
                let names: Vec<String> = if o.starts == ["all"] { Vec::new() } else { o.starts.clone() };
                Openings::start_family(variant, &names)?
            }
            (Some(_), false) => return Err(TournamentError::Invalid("openings: give a file or starts, not both".into())),
            (None, true) => {
                if self.max_plies == 0 {
                    self.check_random_plies(variant.max_plies, "the variant's max_plies")?;
                }
                Openings::random(variant, o.random_plies, self.seed)
            }
        })
    }

    /// How the runner plays this tournament's games.
    fn run_settings(&self) -> RunSettings {
        RunSettings {
            threads: self.threads,
            games_in_flight: self.games_in_flight,
            max_plies: (self.max_plies > 0).then_some(self.max_plies),
            max_hands: self.max_hands,
            adjudication: self.adjudication,
            time_margin: Duration::from_millis(self.time_margin_ms),
            seed: self.seed,
        }
    }

    /// One factory per player, in player order (the jobs' player indices).
    fn factories(&self, variant: &'static rules::Variant) -> Result<Vec<PlayerFactory>, TournamentError> {
        let default_limit = self.limit.as_deref().map(parse_limit).transpose()?;
        let move_timeout = Duration::from_millis(self.move_timeout_ms);
        Ok(self
            .players
            .iter()
            .map(|p| PlayerFactory::new(PlayerSpec::parse(p)?, variant, default_limit, self.threads, move_timeout))
            .collect::<Result<_, _>>()?)
    }

    /// The pairings as (player, player) indices.
    pub fn pairings(&self) -> Vec<(usize, usize)> {
        let n = self.players.len();
        match self.mode {
            Mode::Match => vec![(0, 1)],
            Mode::Gauntlet => (1..n).map(|j| (0, j)).collect(),
            Mode::RoundRobin => (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).collect(),
            Mode::Ladder => {
                let names: Vec<String> = self.players.iter().map(|p| PlayerSpec::parse(p).map(|s| s.name).unwrap_or_default()).collect();
                let is_anchor = |i: usize| self.anchors.contains(&names[i]);
                let rungs: Vec<usize> = (0..n).filter(|&i| !is_anchor(i)).collect();
                let anchors: Vec<usize> = (0..n).filter(|&i| is_anchor(i)).collect();
                let mut p: Vec<(usize, usize)> = if self.neighbours { rungs.windows(2).map(|w| (w[0], w[1])).collect() } else { Vec::new() };
                for &r in &rungs {
                    p.extend(anchors.iter().map(|&a| (r, a)));
                }
                for (k, &a) in anchors.iter().enumerate() {
                    p.extend(anchors[k + 1..].iter().map(|&b| (a, b)));
                }
                p
            }
        }
    }

    /// Every job of the tournament, in playing order: round by round, each pairing's
    /// opening twice with colours swapped. Ids are stable when rounds are added.
    pub fn jobs(&self) -> Vec<Job> {
        let pairings = self.pairings();
        let mut jobs = Vec::new();
        for r in 0..self.rounds as usize {
            for (k, &(a, b)) in pairings.iter().enumerate() {
                for swap in 0..2 {
                    let id = ((r * pairings.len() + k) * 2 + swap) as u64;
                    let (first, second) = if swap == 0 { (a, b) } else { (b, a) };
                    jobs.push(Job { id, first, second, opening: r });
                }
            }
        }
        jobs
    }
}

pub(crate) fn parse_limit(text: &str) -> Result<Limit, TournamentError> {
    let pairs: Vec<(String, String)> = text
        .split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
                .ok_or_else(|| TournamentError::Invalid(format!("limit '{text}': '{p}' is not KEY=VALUE")))
        })
        .collect::<Result<_, _>>()?;
    Limit::from_pairs(&pairs)
        .map_err(|e| TournamentError::Invalid(format!("limit '{text}': {e}")))?
        .ok_or_else(|| TournamentError::Invalid(format!("limit '{text}' sets nothing")))
}

/// Reads the results file (`records::jsonl`: a truncated last line, a killed writer's,
/// is ignored); a game recorded twice counts once.
pub fn read_results(path: &Path) -> Result<Vec<JobResult>, TournamentError> {
    let all: Vec<JobResult> = records::jsonl::read(path).map_err(|e| results_error(path, e))?;
    let mut seen = HashSet::new();
    Ok(all.into_iter().filter(|r| seen.insert(r.job.id)).collect())
}

fn results_error(path: &Path, e: records::jsonl::JsonlError) -> TournamentError {
    match e {
        records::jsonl::JsonlError::Io { source, .. } => TournamentError::Io { path: path.display().to_string(), source },
        records::jsonl::JsonlError::Line { line, message, .. } => TournamentError::Results { path: path.display().to_string(), line, problem: message },
    }
}

/// Appends one result as a line, flushed to disk before it returns (a partial last line
/// left by a kill is cut off first).
fn append_result(path: &Path, r: &JobResult) -> Result<(), TournamentError> {
    records::jsonl::append(path, r).map_err(|e| results_error(path, e))
}

/// Where a finished job's results are in a resumed tournament: a previous run, or
/// the directory's tournament file disagrees.
fn check_resume(dir: &Path, cfg: &TournamentConfig) -> Result<(), TournamentError> {
    let saved = dir.join("tournament.toml");
    let Ok(text) = std::fs::read_to_string(&saved) else { return Ok(()) };
    let old: TournamentConfig = toml::from_str(&text).map_err(|e| TournamentError::File { path: saved.display().to_string(), problem: e.to_string() })?;
    // Everything that decides which game a result belongs to or how it was played and
    // scored: the rating anchor and threads may change, rounds extends or shortens.
    let differ: Vec<&str> = [
        ("variant", old.variant == cfg.variant),
        ("options", old.options == cfg.options),
        ("mode", old.mode == cfg.mode),
        ("players", old.players == cfg.players),
        ("anchors", old.anchors == cfg.anchors),
        ("neighbours", old.neighbours == cfg.neighbours),
        ("openings", old.openings == cfg.openings),
        ("limit", old.limit == cfg.limit),
        ("seed", old.seed == cfg.seed),
        ("max_plies", old.max_plies == cfg.max_plies),
        ("max_hands", old.max_hands == cfg.max_hands),
        ("adjudication", old.adjudication == cfg.adjudication),
        ("sprt", old.sprt == cfg.sprt),
        ("time_margin_ms", old.time_margin_ms == cfg.time_margin_ms),
    ]
    .into_iter()
    .filter_map(|(key, same)| (!same).then_some(key))
    .collect();
    if !differ.is_empty() {
        return Err(TournamentError::Invalid(format!(
            "{} holds a different tournament ({} differ); choose another out_dir, or change only rounds to extend or shorten it",
            dir.display(),
            differ.join(", ")
        )));
    }
    Ok(())
}

/// Runs (or resumes, or extends) a tournament and returns its report, rewriting
/// `live.txt` after every game ([`crate::live::write_live_text`]).
pub fn run(cfg: &TournamentConfig, show_progress: bool) -> Result<Report, TournamentError> {
    run_with(cfg, show_progress, &[&crate::live::write_live_text])
}

/// [`run`] with these hooks instead, each called with the tournament's [`Progress`] once
/// before the first game and after every finished game (see [`crate::live`]).
pub fn run_with(cfg: &TournamentConfig, show_progress: bool, after_game: &[AfterGame<'_>]) -> Result<Report, TournamentError> {
    run_on(cfg, show_progress, after_game, None)
}

/// [`RemoteWork::kind`] of a tournament: its spec is the [`TournamentConfig`].
pub const REMOTE_KIND: &str = "arena";

/// [`run_with`], its games played by `remote` when given (the results, reports and live
/// views are this process's, as in a local run).
pub fn run_on(cfg: &TournamentConfig, show_progress: bool, after_game: &[AfterGame<'_>], remote: Option<&Remote>) -> Result<Report, TournamentError> {
    let started = Instant::now();
    cfg.validate()?;
    let variant = cfg.variant()?;
    let openings = cfg.openings(variant)?;
    let dir = &cfg.out_dir;
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    check_resume(dir, cfg)?;
    records::write_atomic(&dir.join("tournament.toml"), toml::to_string(cfg).map_err(|e| TournamentError::Invalid(e.to_string()))?.as_bytes())
        .map_err(io_err(dir))?;
    let factories = cfg.factories(variant)?;
    let results_path = dir.join("results.jsonl");
    // Results of rounds beyond a lowered `rounds` stay in the file but are not counted.
    let job_ids: HashSet<u64> = cfg.jobs().iter().map(|j| j.id).collect();
    let done: Vec<JobResult> = read_results(&results_path)?.into_iter().filter(|r| job_ids.contains(&r.job.id)).collect();
    let done_ids: HashSet<u64> = done.iter().map(|r| r.job.id).collect();
    let todo: Vec<Job> = cfg.jobs().into_iter().filter(|j| !done_ids.contains(&j.id)).collect();
    let total = cfg.jobs().len() as u64;
    tracing::info!(dir = %dir.display(), done = done.len(), todo = todo.len(), "tournament");

    let names: Vec<String> = factories.iter().map(|f| f.name().to_string()).collect();
    let anchor = cfg.anchor.as_ref().and_then(|a| names.iter().position(|n| n == a)).unwrap_or(0);
    let sprt = cfg.sprt.as_ref().map(|s| Sprt { elo0: s.elo0, elo1: s.elo1, alpha: s.alpha, beta: s.beta });
    let games_dir = dir.join("games");
    let standard = variant.name == "shogi";
    if standard {
        std::fs::create_dir_all(&games_dir).map_err(io_err(&games_dir))?;
    }

    let pb = if show_progress {
        let pb = ProgressBar::new(total);
        pb.set_style(ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {elapsed_precise} eta {eta} {msg}").unwrap().progress_chars("=> "));
        pb.set_prefix("arena");
        pb
    } else {
        ProgressBar::hidden()
    };
    pb.set_position(done.len() as u64);
    let failure: Mutex<Option<TournamentError>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    // The SPRT (mode match only) follows the results in the order they are recorded; a
    // resumed match replays them, so a test that stopped stays stopped.
    let mut tracker = sprt.map(|s| report::SprtTracker::new(s, (0, 1)));
    if let Some(t) = &mut tracker {
        done.iter().for_each(|r| t.push(r));
        if let Some(x) = t.stopped() {
            tracing::info!(decision = %x.decision, llr = x.llr, games = x.games, "the SPRT had already stopped");
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    let pairings = cfg.pairings();
    let already = done.len() as u64;
    // The hooks see the report of the results so far, built as the final one is.
    let show = |all: &[JobResult]| {
        if after_game.is_empty() {
            return;
        }
        let report = report::build(&names, &pairings, all, anchor, cfg.anchor_elo, sprt.as_ref());
        let done = all.len() as u64;
        let progress = Progress { dir, report: &report, done, total, played: done.saturating_sub(already), elapsed: started.elapsed() };
        for hook in after_game {
            if let Err(e) = hook(&progress) {
                tracing::warn!("{}: live view: {e}", dir.display());
            }
        }
    };
    show(&done);
    let state = Mutex::new((done, tracker));
    let settings = cfg.run_settings();
    let on_result = |r: JobResult| {
        if standard {
            for (h, hand) in r.hands.iter().enumerate() {
                let base = games_dir.join(format!("{:06}-{}", r.job.id, h + 1));
                for (ext, text) in [("kifu", record::kif::to_kif(&hand.record)), ("csa", record::csa::to_csa(&hand.record))] {
                    match text {
                        Ok(t) => {
                            if let Err(e) = records::write_atomic(&base.with_extension(ext), t.as_bytes()) {
                                tracing::warn!("{}: {e}", base.display());
                            }
                        }
                        Err(e) => tracing::warn!("game {}: no {ext} record: {e}", r.job.id),
                    }
                }
            }
        }
        for hand in &r.hands {
            if let Some(i) = &hand.incident {
                tracing::warn!(game = r.job.id, "{i}");
            }
        }
        // Appended and counted under one lock, so that the file's order is the order the
        // SPRT saw (a replay finds the same stop).
        let mut guard = state.lock().unwrap();
        let (all, tracker) = &mut *guard;
        if let Err(e) = append_result(&results_path, &r) {
            tracing::error!("{e}");
            failure.lock().unwrap().get_or_insert(e);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            return;
        }
        if let Some(t) = tracker {
            let was_running = t.stopped().is_none();
            t.push(&r);
            if let Some(x) = t.stopped().filter(|_| was_running) {
                tracing::info!(decision = %x.decision, llr = x.llr, games = x.games, pairs = x.pairs, "SPRT stopped; finishing the games in flight");
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
        all.push(r);
        show(all);
        pb.inc(1);
        if names.len() == 2 {
            let mut line = report::pairing_stats(&names, (0, 1), all, None);
            line.sprt = tracker.as_ref().map(|t| t.state());
            pb.set_message(line.short_line());
        }
    };
    let played = match remote {
        None => run_jobs(&factories, &openings, &todo, &settings, &stop, &on_result).map_err(TournamentError::from),
        Some(remote) => {
            let spec = serde_json::to_value(cfg).map_err(|e| TournamentError::Invalid(format!("the tournament as JSON: {e}")))?;
            (remote.0)(&RemoteWork { kind: REMOTE_KIND, spec, todo: &todo }, &stop, &on_result).map_err(TournamentError::Invalid)
        }
    };
    pb.finish();
    played?;
    if let Some(e) = failure.into_inner().unwrap() {
        return Err(e);
    }
    let (all, _) = state.into_inner().unwrap();
    let rep = report::build(&names, &pairings, &all, anchor, cfg.anchor_elo, sprt.as_ref());
    report::write(&rep, dir).map_err(io_err(dir))?;
    Ok(rep)
}

/// A tournament ready to play any one of its games by id: what a worker builds once from
/// a published tournament ([`REMOTE_KIND`]) and then plays job after job with.
pub struct Prepared {
    factories: Vec<PlayerFactory>,
    openings: Openings,
    settings: RunSettings,
    jobs: HashMap<u64, Job>,
}

impl Prepared {
    /// Checks `cfg` and builds its players and openings (nothing is written).
    pub fn new(cfg: &TournamentConfig) -> Result<Prepared, TournamentError> {
        cfg.validate()?;
        let variant = cfg.variant()?;
        Ok(Prepared {
            factories: cfg.factories(variant)?,
            openings: cfg.openings(variant)?,
            settings: cfg.run_settings(),
            jobs: cfg.jobs().into_iter().map(|j| (j.id, j)).collect(),
        })
    }

    /// The players' parsed specs (what a worker checks before it plays any game).
    pub fn player_specs(&self) -> impl Iterator<Item = &PlayerSpec> {
        self.factories.iter().map(|f| &f.spec)
    }

    /// Every job id, ascending.
    pub fn job_ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self.jobs.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Plays job `id` alone ([`play_alone`]).
    pub fn play(&self, id: u64) -> Result<JobResult, TournamentError> {
        let job = *self.jobs.get(&id).ok_or_else(|| TournamentError::Invalid(format!("the tournament has no game {id}")))?;
        Ok(play_alone(&self.factories, &self.openings, job, &self.settings)?)
    }
}
