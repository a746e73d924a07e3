//! Plays a list of game jobs on worker threads. Each thread keeps several games in
//! flight, one instance of every player, and loops: ask the side to move of every game
//! to think, poll the players (a search player evaluates the leaves of all its games in
//! one batch), apply the answers. Every answer is checked here: a move is played only if
//! the rules engine accepts it, time is charged against the clock, and an illegal move,
//! a crash, a hang or an overstepped clock loses that game — the tournament goes on.
//!
//! A job is one game, or for variants decided by a match of hands (Hand shogi: the first
//! to win `match_consecutive_wins` hands in a row), one whole match, colours alternating
//! every hand.

use crate::openings::{OpeningError, Openings};
use gamerecords::GameRecord;
use gamerecords::{Ending, GameEnd};
use players::limits::{Clock, ClockView, Limit};
use players::player::{Answer, FaultKind, Player, Reply};
use players::spec::PlayerFactory;
use players::thought::Score;
use rules::{Color, Game, HandMatch, MatchState, Outcome};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One scheduled game (or hand-shogi match) between two players.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// Stable across runs of the same tournament, so results resume by id.
    pub id: u64,
    /// Index of the player who is Black (in the first hand).
    pub first: usize,
    pub second: usize,
    pub opening: usize,
}

/// Adjudication rules (as cutechess-cli's `-resign` and `-draw`).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Adjudication {
    /// Resign for a side whose own score stayed at or below −`resign_cp` for
    /// `resign_moves` consecutive moves while its opponent's stayed at or above it. 0 = off.
    pub resign_moves: u32,
    pub resign_cp: i32,
    /// Draw once ply `draw_after_ply` is passed and both sides' scores stayed within
    /// ±`draw_cp` for `draw_moves` consecutive moves each. 0 = off.
    pub draw_moves: u32,
    pub draw_cp: i32,
    pub draw_after_ply: u32,
}

impl Default for Adjudication {
    fn default() -> Adjudication {
        Adjudication { resign_moves: 0, resign_cp: 1500, draw_moves: 0, draw_cp: 20, draw_after_ply: 160 }
    }
}

#[derive(Clone, Debug)]
pub struct RunSettings {
    pub threads: usize,
    /// Games each thread keeps in flight (forced to 1 when a limit is a time control, so
    /// that a clock measures its own player only).
    pub games_in_flight: usize,
    /// Game length limit in plies (`None`: the variant's).
    pub max_plies: Option<u32>,
    /// Most hands of a match of hands before it is drawn.
    pub max_hands: u32,
    pub adjudication: Adjudication,
    /// Lateness forgiven before a loss on time (pipes, process scheduling).
    pub time_margin: Duration,
    pub seed: u64,
}

/// One hand (one game) of a job, as played.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HandResult {
    pub record: GameRecord,
    pub end: GameEnd,
    /// Whether the job's first player was Black in this hand.
    pub first_is_black: bool,
    /// What went wrong, for games lost by an illegal move, a crash or a hang.
    pub incident: Option<String>,
}

/// A finished job: the winner from the job's point of view.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobResult {
    pub job: Job,
    pub first: String,
    pub second: String,
    pub opening: String,
    /// 1 = the first player won, 0.5 draw, 0 = the second player won.
    pub first_score: f64,
    pub hands: Vec<HandResult>,
    pub seconds: f64,
}

/// What a tournament or study hands to a [`Remote`]: enough for another process to play
/// any of its jobs (`kind` names the crate's format of `spec`, e.g. `arena` for a
/// [`crate::TournamentConfig`]), and the jobs this run still needs, in the order their
/// results are to be counted.
#[derive(Clone, Debug)]
pub struct RemoteWork<'a> {
    pub kind: &'a str,
    pub spec: serde_json::Value,
    pub todo: &'a [Job],
}

/// Plays a run's jobs elsewhere, in place of [`run_jobs`] (`copper arena --store`: worker
/// processes over a shared store). It calls `on_result` once per job of `todo`, in
/// `todo`'s order, and returns when all are in or `stop` is set. An `Err` is a message.
pub type RemoteFn = dyn Fn(&RemoteWork<'_>, &AtomicBool, &(dyn Fn(JobResult) + Sync)) -> Result<(), String> + Send + Sync;

/// A shareable [`RemoteFn`] (kept in options that are `Clone` and `Debug`).
#[derive(Clone)]
pub struct Remote(pub std::sync::Arc<RemoteFn>);

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Remote")
    }
}

/// Plays the one job `job` alone, as [`run_jobs`] plays it among others: a job's games
/// depend on the job alone ([`Player::new_job`]) — exactly for baselines; for search
/// players, whose one stream serves all the thread's games, when a run keeps one game in
/// flight per thread; time-limited games depend on the clock anyway.
pub fn play_alone(factories: &[PlayerFactory], openings: &Openings, job: Job, settings: &RunSettings) -> Result<JobResult, OpeningError> {
    let one = RunSettings { threads: 1, games_in_flight: 1, ..settings.clone() };
    let out = std::sync::Mutex::new(None);
    run_jobs(factories, openings, &[job], &one, &AtomicBool::new(false), &|r| *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(r))?;
    let r = out.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(r.expect("run_jobs plays every job it is given unless stopped"))
}

struct Slot {
    job: Job,
    game: Game,
    hand_match: Option<HandMatch>,
    hands: Vec<HandResult>,
    /// Clocks by colour.
    clocks: [Clock; 2],
    /// The player thinking and since when.
    waiting: Option<(usize, Instant)>,
    /// Recent scores of each colour's moves, from the mover's point of view.
    scores: [Vec<Score>; 2],
    times_ms: Vec<u64>,
    comments: Vec<Option<String>>,
    started: Instant,
    /// The whole job is over (its last hand is recorded).
    done: bool,
}

impl Slot {
    fn first_is_black(&self) -> bool {
        self.hands.len().is_multiple_of(2)
    }
    fn player_of(&self, c: Color) -> usize {
        if (c == Color::Black) == self.first_is_black() {
            self.job.first
        } else {
            self.job.second
        }
    }
}

/// Runs `jobs` and calls `on_result` as each finishes (from the worker threads, one at a
/// time). Stops claiming new jobs once `stop` is set; games in flight are finished. Every
/// job's opening is set up first, so an opening that cannot be played fails before any game.
pub fn run_jobs(
    factories: &[PlayerFactory],
    openings: &Openings,
    jobs: &[Job],
    settings: &RunSettings,
    stop: &AtomicBool,
    on_result: &(dyn Fn(JobResult) + Sync),
) -> Result<(), OpeningError> {
    let mut starts = HashMap::new();
    for j in jobs {
        if let std::collections::hash_map::Entry::Vacant(e) = starts.entry(j.opening) {
            e.insert(openings.game(j.opening, settings.max_plies)?);
        }
    }
    let starts = &starts;
    let timed = factories.iter().any(|f| f.limit.is_some_and(|l| l.is_timed()));
    let in_flight = if timed { 1 } else { settings.games_in_flight.max(1) };
    let threads = settings.threads.max(1).min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let lock = std::sync::Mutex::new(());
    std::thread::scope(|scope| {
        for t in 0..threads {
            let next = &next;
            let lock = &lock;
            scope.spawn(move || {
                let mut players: Vec<Box<dyn Player>> =
                    factories.iter().enumerate().map(|(i, f)| f.instance(settings.seed ^ ((t as u64) << 32) ^ (i as u64) << 48)).collect();
                let claim = || {
                    if stop.load(Ordering::Relaxed) {
                        return None;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    jobs.get(i).copied()
                };
                let mut worker = Worker { players: &mut players, factories, openings, starts, settings, slots: Vec::new() };
                worker.run(in_flight, &claim, &|r| {
                    let _guard = lock.lock().unwrap_or_else(|e| e.into_inner());
                    on_result(r)
                });
            });
        }
    });
    Ok(())
}

struct Worker<'a> {
    players: &'a mut Vec<Box<dyn Player>>,
    factories: &'a [PlayerFactory],
    openings: &'a Openings,
    /// Each opening's start, by opening index.
    starts: &'a HashMap<usize, Game>,
    settings: &'a RunSettings,
    slots: Vec<Option<Slot>>,
}

impl Worker<'_> {
    fn run(&mut self, in_flight: usize, claim: &dyn Fn() -> Option<Job>, on_result: &dyn Fn(JobResult)) {
        self.slots = (0..in_flight).map(|_| None).collect();
        let mut exhausted = false;
        let mut answers = Vec::new();
        loop {
            // Fill empty slots and start thinking wherever nobody is.
            for i in 0..self.slots.len() {
                if self.slots[i].is_none() && !exhausted {
                    match claim() {
                        Some(job) => self.start_job(i, job),
                        None => exhausted = true,
                    }
                }
                self.advance(i, on_result);
            }
            if self.slots.iter().all(|s| s.is_none()) {
                if exhausted {
                    return;
                }
                continue;
            }
            let computing = self.players.iter().any(|p| p.computing());
            let wait = if computing { Duration::ZERO } else { Duration::from_millis(2) };
            for p in self.players.iter_mut() {
                p.poll(if p.computing() { Duration::ZERO } else { wait }, &mut answers);
            }
            for a in answers.drain(..) {
                self.apply(a);
            }
        }
    }

    fn new_hand(&mut self, i: usize) {
        let s = self.slots[i].as_mut().unwrap();
        let (first, second) = (s.job.first, s.job.second);
        for p in [first, second] {
            if let Err(fault) = self.players[p].new_game(i) {
                // An engine that cannot start loses the hand at once.
                let s = self.slots[i].as_mut().unwrap();
                let color = if (p == s.job.first) == s.first_is_black() { Color::Black } else { Color::White };
                tracing::warn!(player = self.factories[p].name(), "could not start: {}", fault.message);
                self.finish_hand(i, GameEnd::loss_of(color, Ending::Crash), Some(fault.message));
                return;
            }
        }
    }

    fn start_job(&mut self, i: usize, job: Job) {
        let game = self.starts[&job.opening].clone();
        let variant = game.position().variant();
        let hand_match = (variant.match_consecutive_wins > 0).then(|| HandMatch::new(variant.match_consecutive_wins, self.settings.max_hands.max(1)));
        // Random and greedy players need no limit; alpha-beta without one searches its
        // default depth.
        let limit = |p: usize| self.factories[p].limit.unwrap_or(Limit::Depth(3));
        self.slots[i] = Some(Slot {
            job,
            game,
            hand_match,
            hands: Vec::new(),
            clocks: [Clock::new(limit(job.first)), Clock::new(limit(job.second))],
            waiting: None,
            scores: [Vec::new(), Vec::new()],
            times_ms: Vec::new(),
            comments: Vec::new(),
            started: Instant::now(),
            done: false,
        });
        // A tier against itself (a balance study) is one player: seeded once.
        for p in std::iter::once(job.first).chain((job.second != job.first).then_some(job.second)) {
            let seed = self.settings.seed ^ job.id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((p as u64) << 48);
            self.players[p].new_job(i, seed);
        }
        self.new_hand(i);
    }

    /// Asks the side to move to think if nobody is thinking.
    fn advance(&mut self, i: usize, on_result: &dyn Fn(JobResult)) {
        loop {
            let Some(s) = self.slots[i].as_mut() else { return };
            if s.done {
                let s = self.slots[i].take().unwrap();
                on_result(self.job_result(s));
                return;
            }
            if s.waiting.is_some() {
                return;
            }
            if let Some(r) = s.game.result() {
                self.finish_hand(i, GameEnd { outcome: r.outcome, ending: Ending::Rules(r.reason) }, None);
                continue;
            }
            let mover = s.game.position().side_to_move();
            let p = s.player_of(mover);
            let view = ClockView { limit: s.clocks[mover.index()].limit, remaining_ms: [s.clocks[0].remaining_ms, s.clocks[1].remaining_ms] };
            s.waiting = Some((p, Instant::now()));
            let game = s.game.clone();
            self.players[p].go(i, &game, &view);
            return;
        }
    }

    fn apply(&mut self, a: Answer) {
        let i = a.slot;
        let settings = self.settings;
        let Some(s) = self.slots[i].as_mut() else { return };
        let Some((p, since)) = s.waiting.take() else { return };
        let used = since.elapsed();
        let mover = s.game.position().side_to_move();
        debug_assert_eq!(p, s.player_of(mover));
        let name = self.factories[p].name().to_string();
        let sfen = s.game.position().to_sfen();
        let on_time = s.clocks[mover.index()].charge(used, settings.time_margin);
        let lose = |ending: Ending, incident: Option<String>| (GameEnd::loss_of(mover, ending), incident);
        let outcome: Option<(GameEnd, Option<String>)> = if !on_time {
            Some(lose(Ending::TimeForfeit, Some(format!("{name} used {} ms at {sfen}", used.as_millis()))))
        } else {
            match a.reply {
                Reply::Move(m, thought) => match s.game.play(m) {
                    Ok(()) => {
                        s.scores[mover.index()].push(thought.score);
                        s.times_ms.push(used.as_millis() as u64);
                        s.comments.push(Some(score_comment(thought.score)));
                        None
                    }
                    Err(e) => Some(lose(Ending::IllegalMove, Some(format!("{name} played an illegal move at {sfen}: {e}")))),
                },
                Reply::Text(text, thought) => match s.game.play_usi(&text) {
                    Ok(_) => {
                        s.scores[mover.index()].push(thought.score);
                        s.times_ms.push(used.as_millis() as u64);
                        s.comments.push(Some(score_comment(thought.score)));
                        None
                    }
                    Err(e) => {
                        let said = self.players[p].last_output(i).join("\n");
                        tracing::warn!(player = %name, position = %sfen, "illegal move '{text}': {e}; last output:\n{said}");
                        Some(lose(Ending::IllegalMove, Some(format!("{name} sent 'bestmove {text}' at {sfen}: {e}; last output:\n{said}"))))
                    }
                },
                Reply::Resign => Some(lose(Ending::Resignation, None)),
                // A position meeting the declaration conditions has already ended the
                // game (rules::Game), so a declaration reaching here is unfounded.
                Reply::Declare => Some(lose(Ending::IllegalMove, Some(format!("{name} declared a win (bestmove win) without the conditions at {sfen}")))),
                Reply::Fault(f) => {
                    tracing::warn!(player = %name, position = %sfen, "{}", f.message);
                    let ending = if f.kind == FaultKind::Timeout { Ending::TimeForfeit } else { Ending::Crash };
                    Some(lose(ending, Some(format!("{name} at {sfen}: {}", f.message))))
                }
            }
        };
        let outcome = outcome.or_else(|| adjudicate(s, &settings.adjudication).map(|e| (e, None)));
        if let Some((end, incident)) = outcome {
            // Ended by the arena; the next hand, or the finished job, is taken up by
            // `advance` on the next sweep.
            self.finish_hand(i, end, incident);
        }
    }

    /// Records a finished hand; starts the next hand of a match. Returns true when the
    /// whole job is over.
    fn finish_hand(&mut self, i: usize, end: GameEnd, incident: Option<String>) -> bool {
        let s = self.slots[i].as_mut().unwrap();
        let first_is_black = s.first_is_black();
        let black = self.factories[s.player_of(Color::Black)].name().to_string();
        let white = self.factories[s.player_of(Color::White)].name().to_string();
        let mut record = GameRecord::from_game(&s.game, Some(end), &black, &white);
        record.move_times_ms = std::mem::take(&mut s.times_ms);
        record.comments = std::mem::take(&mut s.comments);
        record.opening_index = Some(s.job.opening as u64);
        record.round = Some(s.job.id);
        s.hands.push(HandResult { record, end, first_is_black, incident });
        s.scores = [Vec::new(), Vec::new()];
        let (pb, pw) = (s.player_of(Color::Black), s.player_of(Color::White));
        let (rb, rw) = match end.outcome {
            Outcome::Draw => ("draw", "draw"),
            Outcome::Win(Color::Black) => ("win", "lose"),
            Outcome::Win(Color::White) => ("lose", "win"),
        };
        self.players[pb].game_over(i, rb);
        if pw != pb {
            self.players[pw].game_over(i, rw);
        }
        let s = self.slots[i].as_mut().unwrap();
        let over = match s.hand_match.as_mut() {
            None => true,
            Some(m) => {
                m.record(end.outcome);
                !matches!(m.state(), MatchState::Next { .. })
            }
        };
        if over {
            s.done = true;
            return true;
        }
        // Next hand of the match: same opening, colours swapped, fresh clocks.
        s.game = self.starts[&s.job.opening].clone();
        let limits = [s.clocks[0].limit, s.clocks[1].limit];
        s.clocks = [Clock::new(limits[1]), Clock::new(limits[0])];
        self.new_hand(i);
        false
    }

    fn job_result(&self, s: Slot) -> JobResult {
        let first_score = match &s.hand_match {
            Some(m) => match m.state() {
                MatchState::Won { player: 0 } => 1.0,
                MatchState::Won { .. } => 0.0,
                _ => 0.5,
            },
            None => {
                let h = &s.hands[0];
                match h.end.outcome {
                    Outcome::Draw => 0.5,
                    Outcome::Win(c) => {
                        if (c == Color::Black) == h.first_is_black {
                            1.0
                        } else {
                            0.0
                        }
                    }
                }
            }
        };
        JobResult {
            job: s.job,
            first: self.factories[s.job.first].name().to_string(),
            second: self.factories[s.job.second].name().to_string(),
            opening: self.openings.name(s.job.opening),
            first_score,
            hands: s.hands,
            seconds: s.started.elapsed().as_secs_f64(),
        }
    }
}

fn score_comment(s: Score) -> String {
    match s {
        Score::Cp(cp) => format!("{cp:+}"),
        Score::Mate(n) => format!("mate {n:+}"),
    }
}

/// Applies the adjudication rules after a move.
fn adjudicate(s: &Slot, rules: &Adjudication) -> Option<GameEnd> {
    let cp = |x: &Score| match *x {
        Score::Cp(c) => c,
        Score::Mate(n) if n > 0 => 100_000,
        Score::Mate(_) => -100_000,
    };
    let last = |c: usize, n: u32| -> Option<Vec<i32>> {
        let v = &s.scores[c];
        (n > 0 && v.len() >= n as usize).then(|| v[v.len() - n as usize..].iter().map(cp).collect())
    };
    if rules.resign_moves > 0 {
        for loser in [Color::Black, Color::White] {
            if let (Some(l), Some(w)) = (last(loser.index(), rules.resign_moves), last((!loser).index(), rules.resign_moves)) {
                if l.iter().all(|&x| x <= -rules.resign_cp) && w.iter().all(|&x| x >= rules.resign_cp) {
                    return Some(GameEnd::loss_of(loser, Ending::AdjudicatedWin));
                }
            }
        }
    }
    if rules.draw_moves > 0 && s.game.ply() as u32 >= rules.draw_after_ply {
        if let (Some(b), Some(w)) = (last(0, rules.draw_moves), last(1, rules.draw_moves)) {
            if b.iter().chain(&w).all(|&x| x.abs() <= rules.draw_cp) {
                return Some(GameEnd { outcome: Outcome::Draw, ending: Ending::AdjudicatedDraw });
            }
        }
    }
    None
}
