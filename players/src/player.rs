//! The one player interface every kind of player sits behind: a checkpoint (network +
//! MCTS), the uniform-prior search, the built-in baselines and external USI engines.
//!
//! A player instance belongs to one arena worker thread and plays in that thread's game
//! slots. The worker asks it to think about a slot ([`Player::go`]) and then calls
//! [`Player::poll`] in a loop; a search player advances ALL its pending searches by one
//! leaf each and evaluates those leaves in ONE batched network call, so a checkpoint's
//! leaves are batched across every game it is playing in that thread. External engines
//! think in their own processes; polling them only collects answers.

use crate::baseline::{Baseline, Budget};
use crate::limits::{think_time, ClockView, Limit, INTERNAL_RESERVE};
use crate::thought::{Score, Thought};
use rules::{Game, Move};
use search::{EvalRequest, Evaluator, Search, SearchConfig};
use std::sync::Arc;
use std::time::{Duration, Instant};
use usi::client::{BestMove, EngineConfig, UsiEngine};

/// What a player answered for one slot.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A move known to be legal (internal players).
    Move(Move, Thought),
    /// A move as USI text, still to be checked by the arena (external engines).
    Text(String, Thought),
    /// `bestmove resign`.
    Resign,
    /// `bestmove win`: a 27-point declaration, checked by the arena.
    Declare,
    /// The player failed: its engine crashed, hung or broke the protocol.
    Fault(Fault),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultKind {
    Crash,
    Timeout,
}

/// A failure of an external player, with what the engine said last.
#[derive(Clone, Debug)]
pub struct Fault {
    pub kind: FaultKind,
    pub message: String,
}

#[derive(Clone, Debug)]
pub struct Answer {
    pub slot: usize,
    pub reply: Reply,
}

pub trait Player: Send {
    fn name(&self) -> &str;
    /// A new game starts in `slot` (engines: `usinewgame`; a crashed engine restarts).
    fn new_game(&mut self, slot: usize) -> Result<(), Fault>;
    /// A new job (a game, or a match of hands) starts in `slot`: a player with random
    /// choices restarts them from `seed`, so that a job's games depend on the job alone,
    /// not on the games its thread played before (a worker playing one job of a
    /// tournament plays the game a whole run plays). Engines keep their own.
    fn new_job(&mut self, _slot: usize, _seed: u64) {}
    /// It is this player's turn in `slot`: begin thinking about `game`'s position.
    fn go(&mut self, slot: usize, game: &Game, clock: &ClockView);
    /// Advances thinking and appends the answers that are ready. May block up to `wait`
    /// for an external engine; internal players compute one round and return.
    fn poll(&mut self, wait: Duration, out: &mut Vec<Answer>);
    /// Whether a `poll` would compute (an internal player with pending work).
    fn computing(&self) -> bool;
    /// The game in `slot` is over; `result` from this player's side is "win", "lose" or "draw".
    fn game_over(&mut self, _slot: usize, _result: &str) {}
    /// Answer for `slot` as soon as possible with the best move found so far (USI `stop`).
    fn stop(&mut self, _slot: usize) {}
    /// For a player whose `poll` may compute a whole move on the calling thread (the
    /// alpha-beta), so that `stop` from that thread comes too late: a flag another thread
    /// sets to end the search under way with the best move so far. `go` clears it.
    /// `None`: `stop` suffices.
    fn interrupter(&self) -> Option<Arc<std::sync::atomic::AtomicBool>> {
        None
    }
    /// What the player said last in `slot` (an engine's last protocol lines), for the
    /// log of a game it lost by an illegal move.
    fn last_output(&mut self, _slot: usize) -> Vec<String> {
        Vec::new()
    }
}

/// Converts a value in [−1, 1] (expected score −1 loss … +1 win) into centipawns with the
/// logistic-like curve Leela Chess Zero used (cp = 111.71 · tan(1.5621 · q)), so that a
/// value near ±1 maps to a large but finite score.
pub(crate) fn value_to_cp(q: f32) -> i32 {
    let q = q.clamp(-0.999, 0.999) as f64;
    (111.714_640_912 * (1.562_068_842_1 * q).tan()).round().clamp(-30_000.0, 30_000.0) as i32
}

// ---------------------------------------------------------------------------------------
// Search players: a checkpoint or the uniform-prior search.

struct Pending {
    search: Search<Game>,
    started: Instant,
    deadline: Option<Instant>,
}

/// A network (or uniform priors) with the MCTS at a budget of simulations or time.
pub struct SearchPlayer {
    name: String,
    evaluator: Arc<dyn Evaluator<Game>>,
    config: SearchConfig,
    slots: Vec<Option<Pending>>,
    /// Each slot's last finished search, whose subtree the next move's search starts from
    /// (`reuse`); `None` when reuse is off or the slot's game changed.
    kept: Vec<Option<Search<Game>>>,
    reuse: bool,
    seed: u64,
    /// Simulations per second measured on earlier moves, for time-limited searches.
    sims_per_second: f64,
}

impl SearchPlayer {
    /// `config` should be an evaluation configuration (no noise, greedy choice). With
    /// `reuse`, each search starts from the subtree of the slot's previous one when the
    /// game went on from it (as Leela Chess Zero and dlshogi keep their trees): its budget
    /// is new simulations on top of the reused ones.
    pub fn new(name: &str, evaluator: Arc<dyn Evaluator<Game>>, config: SearchConfig, seed: u64, reuse: bool) -> SearchPlayer {
        SearchPlayer { name: name.to_string(), evaluator, config, slots: Vec::new(), kept: Vec::new(), reuse, seed, sims_per_second: 500.0 }
    }

    /// The slot's kept search moved on to `game`'s position, if `game` continues its root's
    /// game (the same start, its moves and then more).
    fn reused_search(&mut self, slot: usize, game: &Game) -> Option<Search<Game>> {
        let mut search = self.kept.get_mut(slot)?.take()?;
        if !game.continues(search.root()) {
            return None;
        }
        // Legal at each root: `game` played them from the same position.
        for &m in &game.moves()[search.root().ply()..] {
            search.advance(m);
        }
        Some(search)
    }

    fn slot(&mut self, slot: usize) -> &mut Option<Pending> {
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, || None);
        }
        &mut self.slots[slot]
    }

    fn thought(search: &Search<Game>) -> Thought {
        let r = search.result();
        let score = match search.proven() {
            Some((v, plies)) if v > 0.5 => Score::Mate(plies.max(1) as i32),
            Some((v, plies)) if v < -0.5 => Score::Mate(-(plies.max(1) as i32)),
            _ => Score::Cp(value_to_cp(r.value)),
        };
        let mut pv = search.principal_variation(16);
        if pv.first() != r.chosen.as_ref() {
            pv = r.chosen.into_iter().collect();
        }
        Thought { best: r.chosen, score, depth: pv.len() as u32, nodes: r.simulations as u64, pv }
    }
}

impl Player for SearchPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn new_game(&mut self, slot: usize) -> Result<(), Fault> {
        *self.slot(slot) = None;
        if let Some(k) = self.kept.get_mut(slot) {
            *k = None;
        }
        Ok(())
    }

    fn new_job(&mut self, slot: usize, seed: u64) {
        self.seed = seed;
        if let Some(k) = self.kept.get_mut(slot) {
            *k = None;
        }
    }

    fn go(&mut self, slot: usize, game: &Game, clock: &ClockView) {
        let mover = game.position().side_to_move().index();
        let mut config = self.config.clone();
        let mut deadline = None;
        let now = Instant::now();
        // The clock's limit is the player's own (the arena's clock for this player, or
        // what a USI `go` asked for).
        match clock.limit {
            Limit::Nodes(n) => config.simulations = n.min(u32::MAX as u64) as u32,
            Limit::Depth(d) => config.simulations = d.max(1),
            _ => {
                let t = think_time(clock, mover, game.ply(), INTERNAL_RESERVE).unwrap_or(Duration::from_millis(100));
                // Sequential Halving needs its budget up front: aim at what fits in the
                // time at the speed measured so far, and stop at the deadline regardless.
                config.simulations = ((self.sims_per_second * t.as_secs_f64()) as u32).clamp(2, 1_000_000);
                deadline = Some(now + t);
            }
        }
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let search = match self.reused_search(slot, game) {
            Some(mut s) => {
                *s.config_mut() = config;
                s
            }
            None => Search::with_seed(game.clone(), config, self.seed),
        };
        *self.slot(slot) = Some(Pending { search, started: now, deadline });
    }

    fn poll(&mut self, _wait: Duration, out: &mut Vec<Answer>) {
        let mut batch: Vec<EvalRequest<Game>> = Vec::new();
        let mut owners = Vec::new();
        for (i, p) in self.slots.iter_mut().enumerate() {
            if let Some(p) = p {
                if !p.search.is_done() && !p.search.has_pending() {
                    if let Some(req) = p.search.next_leaf() {
                        batch.push(req);
                        owners.push(i);
                    }
                }
            }
        }
        if !batch.is_empty() {
            let evals = self.evaluator.evaluate(&batch);
            for (i, e) in owners.into_iter().zip(evals) {
                if let Some(p) = &mut self.slots[i] {
                    p.search.apply(e);
                }
            }
        }
        let now = Instant::now();
        for i in 0..self.slots.len() {
            let finished = match &self.slots[i] {
                // At the deadline, stop once at least one simulation gave the root
                // statistics to choose from.
                Some(p) => p.search.is_done() || (p.deadline.is_some_and(|d| now >= d) && p.search.simulations_done() > 0),
                None => false,
            };
            if !finished {
                continue;
            }
            let p = self.slots[i].take().unwrap();
            let secs = now.duration_since(p.started).as_secs_f64();
            let sims = p.search.simulations_done();
            if p.deadline.is_some() && sims >= 8 && secs > 0.005 {
                // Exponential average of the measured speed, for the next budget.
                self.sims_per_second = 0.5 * self.sims_per_second + 0.5 * sims as f64 / secs;
            }
            let thought = SearchPlayer::thought(&p.search);
            let reply = match thought.best {
                Some(m) => Reply::Move(m, thought),
                None => Reply::Resign,
            };
            if self.reuse {
                if self.kept.len() <= i {
                    self.kept.resize_with(i + 1, || None);
                }
                self.kept[i] = Some(p.search);
            }
            out.push(Answer { slot: i, reply });
        }
    }

    fn computing(&self) -> bool {
        self.slots.iter().any(|s| s.is_some())
    }

    fn stop(&mut self, slot: usize) {
        if let Some(p) = self.slot(slot) {
            p.deadline = Some(Instant::now());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Baselines: random, material-greedy, alpha-beta. They think synchronously in `poll`.

pub struct BaselinePlayer {
    name: String,
    make: Box<dyn Fn(u64) -> Box<dyn Baseline> + Send>,
    engines: Vec<Option<Box<dyn Baseline>>>,
    pending: Vec<(usize, Game, ClockView)>,
    /// [`Player::interrupter`]: shared with every slot's baseline.
    interrupt: Arc<std::sync::atomic::AtomicBool>,
}

impl BaselinePlayer {
    /// `make(key)` builds a baseline (its own table and random stream): one per slot,
    /// `key` the slot, rebuilt with `key` a job's seed when a job starts there.
    pub fn new(name: &str, make: Box<dyn Fn(u64) -> Box<dyn Baseline> + Send>) -> BaselinePlayer {
        BaselinePlayer { name: name.to_string(), make, engines: Vec::new(), pending: Vec::new(), interrupt: Arc::default() }
    }

    /// A new baseline from `make(key)`, listening to the player's interrupt.
    fn made(&self, key: u64) -> Box<dyn Baseline> {
        let mut b = (self.make)(key);
        b.set_interrupt(self.interrupt.clone());
        b
    }

    fn engine(&mut self, slot: usize) -> &mut Box<dyn Baseline> {
        if self.engines.len() <= slot {
            self.engines.resize_with(slot + 1, || None);
        }
        if self.engines[slot].is_none() {
            self.engines[slot] = Some(self.made(slot as u64));
        }
        self.engines[slot].as_mut().expect("made above")
    }
}

impl Player for BaselinePlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn new_game(&mut self, slot: usize) -> Result<(), Fault> {
        self.engine(slot).new_game();
        Ok(())
    }

    fn new_job(&mut self, slot: usize, seed: u64) {
        self.engine(slot);
        self.engines[slot] = Some(self.made(seed));
    }

    fn go(&mut self, slot: usize, game: &Game, clock: &ClockView) {
        self.interrupt.store(false, std::sync::atomic::Ordering::Relaxed);
        self.pending.push((slot, game.clone(), *clock));
    }

    fn stop(&mut self, _slot: usize) {
        self.interrupt.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    fn interrupter(&self) -> Option<Arc<std::sync::atomic::AtomicBool>> {
        Some(self.interrupt.clone())
    }

    fn poll(&mut self, _wait: Duration, out: &mut Vec<Answer>) {
        for (slot, game, clock) in std::mem::take(&mut self.pending) {
            let mover = game.position().side_to_move().index();
            let budget = match clock.limit {
                Limit::Nodes(n) => Budget { depth: None, nodes: Some(n), deadline: None },
                Limit::Depth(d) => Budget { depth: Some(d), nodes: None, deadline: None },
                _ => {
                    let t = think_time(&clock, mover, game.ply(), INTERNAL_RESERVE).unwrap_or(Duration::from_millis(100));
                    Budget { depth: None, nodes: None, deadline: Some(Instant::now() + t) }
                }
            };
            let thought = self.engine(slot).think(&game, &budget);
            let reply = match thought.best {
                Some(m) => Reply::Move(m, thought),
                None => Reply::Resign,
            };
            out.push(Answer { slot, reply });
        }
    }

    fn computing(&self) -> bool {
        !self.pending.is_empty()
    }
}

// ---------------------------------------------------------------------------------------
// External USI engines: one process per slot, started lazily, restarted after a failure.

struct EngineSlot {
    engine: Option<UsiEngine>,
    /// When the pending `go` must have been answered.
    deadline: Option<Instant>,
}

pub struct UsiPlayer {
    name: String,
    config: EngineConfig,
    /// Time allowed beyond the clock before an engine counts as hung (and for budgets of
    /// work, the whole allowance per move).
    move_timeout: Duration,
    slots: Vec<EngineSlot>,
}

impl UsiPlayer {
    pub fn new(name: &str, config: EngineConfig, move_timeout: Duration) -> UsiPlayer {
        UsiPlayer { name: name.to_string(), config, move_timeout, slots: Vec::new() }
    }

    fn slot(&mut self, slot: usize) -> &mut EngineSlot {
        if self.slots.len() <= slot {
            self.slots.resize_with(slot + 1, || EngineSlot { engine: None, deadline: None });
        }
        &mut self.slots[slot]
    }

    fn fault(kind: FaultKind, message: String) -> Fault {
        Fault { kind, message }
    }
}

/// `position …` for a game: `startpos` when it started from the variant's start, else
/// its start SFEN, then its moves.
pub fn usi_position(game: &Game) -> String {
    let start = game.start();
    let mut s = if start.to_sfen() == start.variant().start_sfen { String::from("position startpos") } else { format!("position sfen {}", start.to_sfen()) };
    if !game.moves().is_empty() {
        s.push_str(" moves");
        let mut pos = start.clone();
        for &m in game.moves() {
            s.push(' ');
            s.push_str(&pos.move_to_usi(m));
            pos.play_unchecked(m);
        }
    }
    s
}

impl Player for UsiPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn new_game(&mut self, slot: usize) -> Result<(), Fault> {
        let config = self.config.clone();
        let s = self.slot(slot);
        if s.engine.as_mut().is_some_and(|e| !e.is_alive()) {
            s.engine = None;
        }
        if s.engine.is_none() {
            let e = UsiEngine::start(&config).map_err(|e| Self::fault(FaultKind::Crash, e.to_string()))?;
            s.engine = Some(e);
        }
        let e = s.engine.as_mut().unwrap();
        if let Err(err) = e.new_game() {
            s.engine = None;
            return Err(Self::fault(FaultKind::Crash, err.to_string()));
        }
        Ok(())
    }

    fn go(&mut self, slot: usize, game: &Game, clock: &ClockView) {
        let mover = game.position().side_to_move().index();
        let timeout = self.move_timeout;
        let allowance = clock.allowance_ms(mover).map(Duration::from_millis);
        let position = usi_position(game);
        let go = clock.usi_go();
        let s = self.slot(slot);
        s.deadline = Some(Instant::now() + allowance.map_or(timeout, |a| a + timeout));
        if let Some(e) = s.engine.as_mut() {
            if let Err(err) = e.go(&position, &go) {
                tracing::warn!(engine = %err, "go failed");
                s.engine = None;
            }
        }
    }

    fn poll(&mut self, wait: Duration, out: &mut Vec<Answer>) {
        let start = Instant::now();
        loop {
            let now = Instant::now();
            let mut any_pending = false;
            for (i, s) in self.slots.iter_mut().enumerate() {
                let Some(deadline) = s.deadline else { continue };
                let reply = match s.engine.as_mut() {
                    None => Some(Reply::Fault(Self::fault(FaultKind::Crash, "the engine could not be started or died".into()))),
                    Some(e) => match e.poll() {
                        Some(Ok(r)) => {
                            let info = &r.info;
                            let score = Score::of_usi_info(info).unwrap_or(Score::Cp(0));
                            let thought = Thought { best: None, score, depth: info.depth.unwrap_or(0), nodes: info.nodes.unwrap_or(0), pv: Vec::new() };
                            Some(match r.best {
                                BestMove::Move(text) => Reply::Text(text, thought),
                                BestMove::Resign => Reply::Resign,
                                BestMove::Win => Reply::Declare,
                            })
                        }
                        Some(Err(err)) => Some(Reply::Fault(Self::fault(FaultKind::Crash, err.to_string()))),
                        None if now >= deadline => {
                            let last = e.last_output().join("\n");
                            Some(Reply::Fault(Self::fault(FaultKind::Timeout, format!("no bestmove before the deadline; last output:\n{last}"))))
                        }
                        None => None,
                    },
                };
                match reply {
                    Some(reply) => {
                        if let Reply::Fault(_) = reply {
                            // A hung or crashed engine is killed; the next game restarts it.
                            s.engine = None;
                        }
                        s.deadline = None;
                        out.push(Answer { slot: i, reply });
                    }
                    None => any_pending = true,
                }
            }
            if !any_pending || !out.is_empty() || start.elapsed() >= wait {
                return;
            }
            std::thread::sleep(Duration::from_micros(500));
        }
    }

    fn computing(&self) -> bool {
        false
    }

    fn game_over(&mut self, slot: usize, result: &str) {
        if let Some(e) = self.slot(slot).engine.as_mut() {
            e.game_over(result);
        }
    }

    fn stop(&mut self, slot: usize) {
        if let Some(e) = self.slot(slot).engine.as_mut() {
            e.stop();
        }
    }

    fn last_output(&mut self, slot: usize) -> Vec<String> {
        self.slot(slot).engine.as_ref().map(|e| e.last_output()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::{Position, Variant};
    use search::UniformEvaluator;

    fn answer(p: &mut SearchPlayer, game: &Game) -> Move {
        p.go(0, game, &ClockView { limit: Limit::Nodes(64), remaining_ms: [0, 0] });
        let mut out = Vec::new();
        while out.is_empty() {
            p.poll(Duration::ZERO, &mut out);
        }
        match out.pop().unwrap().reply {
            Reply::Move(m, _) => m,
            r => panic!("no move: {r:?}"),
        }
    }

    /// Root visits of the slot's pending search after `go` (before any new simulation).
    fn root_visits_at_go(p: &mut SearchPlayer, game: &Game) -> u32 {
        p.go(0, game, &ClockView { limit: Limit::Nodes(64), remaining_ms: [0, 0] });
        p.slots[0].as_ref().unwrap().search.result().visits.iter().sum()
    }

    /// The opponent's reply the previous search visited most, so that its subtree exists.
    fn most_visited_reply(p: &SearchPlayer, game: &Game, mine: Move) -> Move {
        let kept = p.kept[0].as_ref().expect("the finished search is kept");
        let replies = kept.node_visits(&[mine]).expect("our move was searched");
        let (m, n) = replies.into_iter().max_by_key(|&(_, n)| n).unwrap();
        assert!(n > 0 && kept.root().moves() == game.moves());
        m
    }

    #[test]
    fn a_search_goes_on_from_the_subtree_of_the_players_previous_one() {
        let v = Variant::builtin("minishogi").unwrap();
        let cfg = SearchConfig { simulations: 64, ..SearchConfig::puct(64).for_evaluation() };
        let mut game = Game::new(Position::start(v), None);
        let mut p = SearchPlayer::new("t", Arc::new(UniformEvaluator), cfg.clone(), 1, true);
        let mine = answer(&mut p, &game);
        let reply = most_visited_reply(&p, &game, mine);
        game.play(mine).unwrap();
        game.play(reply).unwrap();
        let reused = root_visits_at_go(&mut p, &game);
        assert!(reused > 0, "the new root starts with the visits its subtree had");

        // Off: every search starts from nothing.
        let mut q = SearchPlayer::new("t", Arc::new(UniformEvaluator), cfg.clone(), 1, false);
        let start = Game::new(Position::start(v), None);
        answer(&mut q, &start);
        assert!(q.kept.iter().all(Option::is_none));
        assert_eq!(root_visits_at_go(&mut q, &game), 0);

        // A new game, or a position that does not continue the kept root, starts afresh.
        let mut r = SearchPlayer::new("t", Arc::new(UniformEvaluator), cfg, 1, true);
        answer(&mut r, &start);
        r.new_game(0).unwrap();
        assert_eq!(root_visits_at_go(&mut r, &game), 0);
        let mut s = SearchPlayer::new("t", Arc::new(UniformEvaluator), SearchConfig::puct(64).for_evaluation(), 1, true);
        answer(&mut s, &game);
        assert_eq!(root_visits_at_go(&mut s, &start), 0, "an earlier position is not a continuation");
    }

    /// An alpha-beta asked for a search that would not end today answers at once, with a
    /// legal move, once another thread sets its interrupter; `go` clears the flag, so the
    /// next search is whole again.
    #[test]
    fn an_interrupted_alpha_beta_answers_with_a_legal_move() {
        let v = Variant::builtin("pocket-copper").unwrap();
        let spec = crate::PlayerSpec::parse("alphabeta,depth=30").unwrap();
        let factory = crate::PlayerFactory::new(spec, v, None, 1, Duration::from_secs(1)).unwrap();
        let mut p = factory.instance(1);
        let game = Game::new(Position::start(v), None);
        let flag = p.interrupter().expect("the alpha-beta has an interrupter");
        p.new_game(0).unwrap();
        p.go(0, &game, &ClockView { limit: Limit::Depth(30), remaining_ms: [0, 0] });
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            flag.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let mut out = Vec::new();
        p.poll(Duration::ZERO, &mut out);
        stopper.join().unwrap();
        match out.pop().expect("an answer").reply {
            Reply::Move(m, t) => {
                assert!(game.legal_moves().contains(&m));
                assert!(t.depth < 30, "searched to depth {}", t.depth);
            }
            r => panic!("no move: {r:?}"),
        }
        // Cleared by the next `go`: a depth-1 search is not cut short.
        p.go(0, &game, &ClockView { limit: Limit::Depth(1), remaining_ms: [0, 0] });
        p.poll(Duration::ZERO, &mut out);
        match out.pop().expect("an answer").reply {
            Reply::Move(_, t) => assert_eq!(t.depth, 1),
            r => panic!("no move: {r:?}"),
        }
    }
}
