//! One game on the page: the rules engine's game, the opponent thinking on a thread of
//! its own, and the record written after every move.
//!
//! The opponent's thread owns its player and hears of the session only through a weak
//! reference: a closed or reaped session drops its sender, the thread sees the channel
//! close and ends, and the player (an engine process too) goes with it. Every change of
//! the game bumps `epoch`, so an answer computed for a position the person has since
//! taken back is dropped rather than played.

use crate::analysis::LiveSearch;
use crate::record;
use gamerecords::{Ending, GameEnd, GameRecord};
use players::limits::ClockView;
use players::player::{Answer, Player, Reply};
use players::{Limit, Score, Thought};
use rules::{Color, Game, Move, Position, Variant};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant, SystemTime};

/// What the page's opponent was asked to be: the channel to its thread, and the flags
/// that reach a search the thread is inside of (a closed game's thread ends within a
/// second, whatever it was asked to search).
pub(crate) struct Opponent {
    tx: Sender<ToEngine>,
    /// The player's [`Player::interrupter`], where it has one.
    interrupt: Option<Arc<AtomicBool>>,
    /// Set when the game is closed or evicted: the thread ends at its next look.
    closed: Arc<AtomicBool>,
}

impl Opponent {
    /// Asks for an answer now, with the best move found so far.
    fn stop(&self) {
        let _ = self.tx.send(ToEngine::Stop);
        if let Some(f) = &self.interrupt {
            f.store(true, Ordering::Relaxed);
        }
    }
}

impl Drop for Opponent {
    fn drop(&mut self) {
        self.closed.store(true, Ordering::Relaxed);
        self.stop();
    }
}

/// Opponent threads alive (thinking or waiting for their turn), across all games.
pub(crate) static OPPONENT_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Counts an opponent thread for as long as it lives.
struct Alive;

impl Alive {
    fn new() -> Alive {
        OPPONENT_THREADS.fetch_add(1, Ordering::Relaxed);
        Alive
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        OPPONENT_THREADS.fetch_sub(1, Ordering::Relaxed);
    }
}

enum ToEngine {
    Go { game: Box<Game>, epoch: u64 },
    Stop,
}

/// The opponent's last answer, as the page shows it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ThoughtView {
    /// From the opponent's side: `+123`, `-40`, `mate +5`.
    pub score: String,
    pub depth: u32,
    pub nodes: u64,
    /// USI moves.
    pub pv: Vec<String>,
    pub ms: u64,
}

pub(crate) struct Session {
    pub id: u64,
    pub variant: &'static Variant,
    pub start_name: String,
    pub game: Game,
    pub end: Option<GameEnd>,
    /// The side the person plays; `None`: both (the board is a study board).
    pub human: Option<Color>,
    /// Black's and White's names in the record.
    pub names: [String; 2],
    pub opponent: Option<Opponent>,
    pub epoch: u64,
    pub thinking_since: Option<Instant>,
    pub last_thought: Option<ThoughtView>,
    /// The mover's score after each move (the opponent's moves), by ply.
    pub comments: Vec<Option<String>>,
    pub move_times_ms: Vec<u64>,
    /// When the last move was made (the person's thinking time is counted from it).
    pub turn_started: Instant,
    /// What went wrong with the opponent (its engine failed, its move was refused).
    pub message: Option<String>,
    pub touched: Instant,
    pub started_at: SystemTime,
    pub record_path: PathBuf,
    /// Why the last save failed; `None` when it worked.
    pub save_error: Option<String>,
    /// Whether `record_path` is this game's own (claimed at the first save, so that a
    /// record of another run of the server is never overwritten).
    claimed: bool,
    pub search: Option<LiveSearch>,
    /// The position the search is of: a ply of the game and the moves of a variation
    /// played from it.
    pub search_at: (usize, Vec<String>),
    /// The person's clock against an opponent; `None`: untimed.
    pub clock: Option<HumanClock>,
}

/// The person's clock: main time, then byoyomi (each move within it once the main time
/// is spent). It runs only while the person is to move; the person loses on time when a
/// turn outlasts what is left of the main time and the byoyomi.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct HumanClock {
    pub main_ms: u64,
    pub byoyomi_ms: u64,
    /// Main time left at the start of the person's turn.
    pub remaining_ms: u64,
}

/// The mover's score as a record comment: `+123`, `-40`, `mate +5`.
pub(crate) fn score_text(s: Score) -> String {
    match s {
        Score::Cp(cp) => format!("{cp:+}"),
        Score::Mate(n) => format!("mate {n:+}"),
    }
}

impl Session {
    /// A session of `game` (a start, and the moves a study board begins with).
    pub fn new(id: u64, game: Game, start_name: String, human: Option<Color>, names: [String; 2], record_path: PathBuf) -> Session {
        let variant = game.position().variant();
        let end = gamerecords::rules_end(&game);
        Session {
            id,
            variant,
            start_name,
            game,
            end,
            human,
            names,
            opponent: None,
            epoch: 0,
            thinking_since: None,
            last_thought: None,
            comments: Vec::new(),
            move_times_ms: Vec::new(),
            turn_started: Instant::now(),
            message: None,
            touched: Instant::now(),
            started_at: SystemTime::now(),
            record_path,
            save_error: None,
            claimed: false,
            search: None,
            search_at: (0, Vec::new()),
            clock: None,
        }
    }

    /// Whether the person's clock is running: a timed game, the person to move.
    pub fn clock_running(&self) -> bool {
        self.clock.is_some() && !self.is_over() && self.human == Some(self.game.position().side_to_move())
    }

    /// What is left of the person's turn (main time and byoyomi), while the clock runs.
    pub fn clock_left_ms(&self) -> Option<u64> {
        let c = self.clock.filter(|_| self.clock_running())?;
        Some((c.remaining_ms + c.byoyomi_ms).saturating_sub(self.turn_started.elapsed().as_millis() as u64))
    }

    /// Ends the game as the person's loss on time when their turn has run out. Called on
    /// every request about the game, so a page that only watches sees the flag fall.
    pub fn check_clock(&mut self) {
        if self.clock_left_ms() != Some(0) {
            return;
        }
        let Some(h) = self.human else { return };
        self.end = Some(GameEnd::loss_of(h, Ending::TimeForfeit));
        self.epoch += 1;
        self.thinking_since = None;
        self.save();
    }

    pub fn is_over(&self) -> bool {
        self.end.is_some()
    }

    /// Whether the opponent is to move (and should be thinking).
    pub fn opponent_to_move(&self) -> bool {
        self.opponent.is_some() && !self.is_over() && self.human.is_some_and(|h| h != self.game.position().side_to_move())
    }

    /// The record of the game so far.
    pub fn record(&self) -> GameRecord {
        let mut r = GameRecord::from_game(&self.game, self.end, &self.names[0], &self.names[1]);
        r.event = Some(format!("copper play ({})", self.start_name));
        r.round = Some(self.id);
        r.start_time = Some(gamerecords::rfc3339_utc(self.started_at));
        r.move_times_ms = self.move_times_ms.clone();
        r.comments = self.comments.clone();
        r
    }

    /// Writes the record (and KIF/CSA for standard shogi) under the output folder.
    /// Writes the record; a failure is kept for the page to show (and cleared by the next
    /// save that works), never only logged.
    pub fn save(&mut self) {
        // A game nobody has moved in yet holds nothing to keep (the page opens on one).
        if self.game.moves().is_empty() && self.end.is_none() {
            return;
        }
        if !self.claimed {
            match record::claim(&self.record_path) {
                Ok(path) => {
                    self.record_path = path;
                    self.claimed = true;
                }
                Err(e) => {
                    tracing::error!(game = self.id, path = %self.record_path.display(), "cannot save the game: {e}");
                    self.save_error = Some(format!("the game could not be saved to {}: {e}", self.record_path.display()));
                    return;
                }
            }
        }
        self.save_error = match record::save(&self.record_path, &self.record()) {
            Ok(()) => None,
            Err(e) => {
                tracing::error!(game = self.id, path = %self.record_path.display(), "cannot save the game: {e}");
                Some(format!("the game could not be saved to {}: {e}", self.record_path.display()))
            }
        };
    }

    fn played(&mut self, m: Move, comment: Option<String>) {
        let ms = self.turn_started.elapsed().as_millis() as u64;
        self.game.play(m).expect("checked legal by the caller");
        self.comments.resize(self.game.ply() - 1, None);
        self.comments.push(comment);
        self.move_times_ms.resize(self.game.ply() - 1, 0);
        self.move_times_ms.push(ms);
        self.turn_started = Instant::now();
        self.end = gamerecords::rules_end(&self.game);
        self.epoch += 1;
        self.search = None;
    }

    /// The person's move (USI text), checked by the rules engine (and the clock).
    pub fn human_move(&mut self, usi: &str) -> Result<(), String> {
        self.check_clock();
        if self.is_over() {
            let late = self.end.is_some_and(|e| e.ending == Ending::TimeForfeit);
            return Err(if late { "the game is over: your time ran out".into() } else { "the game is over".into() });
        }
        let to_move = self.game.position().side_to_move();
        if self.human.is_some_and(|h| h != to_move) {
            return Err("it is the opponent's turn".into());
        }
        let m = self.game.position().parse_usi(usi).map_err(|e| e.to_string())?;
        let used = self.turn_started.elapsed().as_millis() as u64;
        if let Some(c) = &mut self.clock {
            // Within the byoyomi the main time is spent, and the byoyomi starts afresh.
            c.remaining_ms = c.remaining_ms.saturating_sub(used);
        }
        self.played(m, None);
        self.save();
        Ok(())
    }

    /// Takes back the last moves: to the person's previous turn against an opponent
    /// (their move and the reply), one ply on a study board. A finished game goes on.
    pub fn take_back(&mut self) -> Result<(), String> {
        let plies = self.game.ply();
        let keep = match self.human {
            None => plies.checked_sub(1),
            Some(h) => {
                // The latest position before the end where the person is to move.
                let mut n = plies;
                let mut found = None;
                while n > 0 {
                    n -= 1;
                    let side = if n.is_multiple_of(2) { self.game.start().side_to_move() } else { !self.game.start().side_to_move() };
                    if side == h {
                        found = Some(n);
                        break;
                    }
                }
                found
            }
        };
        let Some(keep) = keep else { return Err("nothing to take back".into()) };
        let moves: Vec<Move> = self.game.moves()[..keep].to_vec();
        let mut game = Game::new(self.game.start().clone(), Some(self.game.max_plies()));
        for m in moves {
            game.play(m).map_err(|e| e.to_string())?;
        }
        self.game = game;
        self.comments.truncate(keep);
        self.move_times_ms.truncate(keep);
        self.end = gamerecords::rules_end(&self.game);
        self.epoch += 1;
        self.thinking_since = None;
        self.message = None;
        self.turn_started = Instant::now();
        self.search = None;
        if let Some(o) = &self.opponent {
            o.stop();
        }
        self.save();
        Ok(())
    }

    pub fn resign(&mut self) -> Result<(), String> {
        if self.is_over() {
            return Err("the game is over".into());
        }
        let loser = self.human.unwrap_or(self.game.position().side_to_move());
        self.end = Some(GameEnd::loss_of(loser, Ending::Resignation));
        self.epoch += 1;
        self.thinking_since = None;
        if let Some(o) = &self.opponent {
            o.stop();
        }
        self.save();
        Ok(())
    }

    /// Asks the opponent to answer now with the best move it has.
    pub fn stop_thinking(&self) {
        if let Some(o) = &self.opponent {
            o.stop();
        }
    }

    /// Starts the opponent thinking when it is its turn and it is not already.
    pub fn kick(&mut self) {
        if !self.opponent_to_move() || self.thinking_since.is_some() {
            return;
        }
        let Some(o) = &self.opponent else { return };
        if o.tx.send(ToEngine::Go { game: Box::new(self.game.clone()), epoch: self.epoch }).is_ok() {
            self.thinking_since = Some(Instant::now());
        }
    }

    /// The opponent's answer for the position of `epoch`.
    fn answered(&mut self, epoch: u64, reply: Reply, elapsed: Duration) {
        if epoch != self.epoch || self.is_over() {
            return;
        }
        self.thinking_since = None;
        let mover = self.game.position().side_to_move();
        let name = self.names[mover.index()].clone();
        let thought = |t: &Thought, game: &Game| ThoughtView {
            score: score_text(t.score),
            depth: t.depth,
            nodes: t.nodes,
            pv: pv_text(game.position(), &t.pv),
            ms: elapsed.as_millis() as u64,
        };
        match reply {
            Reply::Move(m, t) if self.game.position().is_legal(m) => {
                self.last_thought = Some(thought(&t, &self.game));
                self.played(m, Some(score_text(t.score)));
            }
            Reply::Move(m, _) => {
                let text = self.game.position().move_to_usi(m);
                self.message = Some(format!("{name} played {text}, which is not legal here"));
                self.end = Some(GameEnd::loss_of(mover, Ending::IllegalMove));
            }
            Reply::Text(text, t) => match self.game.position().parse_usi(&text) {
                Ok(m) => {
                    self.last_thought = Some(thought(&t, &self.game));
                    self.played(m, Some(score_text(t.score)));
                }
                Err(e) => {
                    self.message = Some(format!("{name}: {e}"));
                    self.end = Some(GameEnd::loss_of(mover, Ending::IllegalMove));
                }
            },
            Reply::Resign => self.end = Some(GameEnd::loss_of(mover, Ending::Resignation)),
            Reply::Declare => {
                // A legal declaration ends the game by the rules before anyone is asked
                // to move; one made here is not.
                self.message = Some(format!("{name} declared a win whose conditions do not hold"));
                self.end = Some(GameEnd::loss_of(mover, Ending::IllegalMove));
            }
            Reply::Fault(f) => {
                self.message = Some(format!("{name} failed: {}", f.message));
                self.end = Some(GameEnd::loss_of(mover, Ending::Crash));
            }
        }
        self.save();
    }
}

/// USI text of a principal variation from `pos`, as far as its moves are legal.
pub(crate) fn pv_text(pos: &Position, pv: &[Move]) -> Vec<String> {
    let mut p = pos.clone();
    let mut out = Vec::new();
    for &m in pv {
        if !p.is_legal(m) {
            break;
        }
        out.push(p.move_to_usi(m));
        p.play_unchecked(m);
    }
    out
}

/// Starts the opponent's thread for `session`, playing `player` at `limit`.
pub(crate) fn attach_opponent(session: &Arc<Mutex<Session>>, mut player: Box<dyn Player>, limit: Limit, name: String) -> Opponent {
    let (tx, rx) = channel::<ToEngine>();
    let weak: Weak<Mutex<Session>> = Arc::downgrade(session);
    let interrupt = player.interrupter();
    let closed = Arc::new(AtomicBool::new(false));
    let closing = closed.clone();
    let alive = Alive::new();
    std::thread::Builder::new()
        .name(format!("play-opponent-{}", name.clone()))
        .spawn(move || {
            let _alive = alive;
            let mut answers: Vec<Answer> = Vec::new();
            let mut last: Option<Game> = None;
            let view = ClockView { limit, remaining_ms: [0, 0] };
            // A `Go` that arrives while an older search finishes (after a take back) waits here.
            let mut queued: Option<ToEngine> = None;
            loop {
                let msg = match queued.take() {
                    Some(m) => m,
                    None => match rx.recv() {
                        Ok(m) => m,
                        Err(_) => return,
                    },
                };
                let ToEngine::Go { game, epoch } = msg else { continue };
                if !last.as_ref().is_some_and(|l| game.continues(l)) {
                    if let Err(f) = player.new_game(0) {
                        if let Some(s) = weak.upgrade() {
                            s.lock().unwrap_or_else(|e| e.into_inner()).answered(epoch, Reply::Fault(f), Duration::ZERO);
                        }
                        continue;
                    }
                }
                let started = Instant::now();
                // A player that panics ends this game as its crash, with what it said,
                // instead of leaving the page "thinking" forever; the thread ends.
                let thought = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    player.go(0, &game, &view);
                    // `go` cleared the interrupt: a close that came before it is seen here,
                    // one that comes after it sets the interrupt again.
                    if closing.load(Ordering::Relaxed) {
                        return None;
                    }
                    answers.clear();
                    loop {
                        player.poll(Duration::from_millis(2), &mut answers);
                        if let Some(a) = answers.pop() {
                            break Some(a.reply);
                        }
                        let wait = if player.computing() { Duration::ZERO } else { Duration::from_millis(2) };
                        match rx.recv_timeout(wait) {
                            Ok(ToEngine::Stop) => player.stop(0),
                            Ok(go @ ToEngine::Go { .. }) => {
                                player.stop(0);
                                queued = Some(go);
                            }
                            Err(RecvTimeoutError::Timeout) => {}
                            Err(RecvTimeoutError::Disconnected) => break None,
                        }
                    }
                }));
                let reply = match thought {
                    Ok(reply) => reply,
                    Err(panic) => {
                        let what = crate::panic_text(panic.as_ref());
                        tracing::error!(opponent = %name, "the opponent panicked: {what}");
                        if let Some(s) = weak.upgrade() {
                            let fault = players::player::Fault { kind: players::player::FaultKind::Crash, message: format!("it panicked ({what})") };
                            s.lock().unwrap_or_else(|e| e.into_inner()).answered(epoch, Reply::Fault(fault), started.elapsed());
                        }
                        return;
                    }
                };
                let Some(reply) = reply else { return };
                last = Some(*game);
                let Some(s) = weak.upgrade() else { return };
                s.lock().unwrap_or_else(|e| e.into_inner()).answered(epoch, reply, started.elapsed());
            }
        })
        .expect("spawn the opponent's thread");
    Opponent { tx, interrupt, closed }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Position;

    /// A game against an alpha-beta asked to search to depth 30 (hours): "move now"
    /// brings a move, and closing the game ends its thread. Counted, not timed: the
    /// limits only bound a failure.
    #[test]
    fn a_closed_game_ends_its_opponents_search() {
        let v = Variant::builtin("pocket-copper").unwrap();
        let out = tempfile::tempdir().unwrap();
        let factory = players::PlayerFactory::new(players::PlayerSpec::parse("alphabeta,depth=30").unwrap(), v, None, 1, Duration::from_secs(1)).unwrap();
        let threads_before = OPPONENT_THREADS.load(Ordering::Relaxed);
        let game = Game::new(Position::start(v), None);
        let session = Arc::new(Mutex::new(Session::new(1, game, "seed".into(), Some(Color::White), ["ab".into(), "you".into()], out.path().join("g.jsonl"))));
        let limit = Limit::Depth(30);
        let opponent = attach_opponent(&session, factory.instance(1), limit, "ab".into());
        session.lock().unwrap().opponent = Some(opponent);
        assert_eq!(OPPONENT_THREADS.load(Ordering::Relaxed), threads_before + 1);
        let wait = |what: &str, done: &dyn Fn() -> bool| {
            let t = Instant::now();
            while !done() {
                assert!(t.elapsed() < Duration::from_secs(120), "waited two minutes for {what}");
                std::thread::sleep(Duration::from_millis(10));
            }
        };
        // Move now: the first move comes although depth 30 is far away.
        session.lock().unwrap().kick();
        std::thread::sleep(Duration::from_millis(100));
        session.lock().unwrap().stop_thinking();
        wait("the opponent's move", &|| session.lock().unwrap().game.ply() == 1);
        let depth = session.lock().unwrap().last_thought.as_ref().map(|t| t.depth).unwrap();
        assert!(depth < 30, "the search ran to depth {depth}");
        // Our move, the opponent thinks again; then the game is closed.
        {
            let mut s = session.lock().unwrap();
            let m = s.game.legal_moves()[0];
            s.game.play(m).unwrap();
            s.epoch += 1;
            s.kick();
            assert!(s.thinking_since.is_some());
        }
        std::thread::sleep(Duration::from_millis(100));
        drop(session);
        wait("the opponent's thread to end", &|| OPPONENT_THREADS.load(Ordering::Relaxed) == threads_before);
    }

    /// The person's clock, its time set back rather than waited for: a move within main
    /// time and byoyomi spends the main time; a turn longer than the byoyomi then loses
    /// on time, and a move after that is refused.
    #[test]
    fn the_persons_clock_spends_main_time_then_byoyomi_then_flags() {
        let v = Variant::builtin("minishogi").unwrap();
        let out = tempfile::tempdir().unwrap();
        let mut s =
            Session::new(1, Game::new(Position::start(v), None), "default".into(), Some(Color::Black), ["you".into(), "b".into()], out.path().join("g.jsonl"));
        s.clock = Some(HumanClock { main_ms: 3_000, byoyomi_ms: 2_000, remaining_ms: 3_000 });
        assert!(s.clock_running());
        // 4 s: the main time and 1 s of the byoyomi.
        s.turn_started = Instant::now() - Duration::from_secs(4);
        s.check_clock();
        assert!(!s.is_over());
        let m = s.game.position().move_to_usi(s.game.legal_moves()[0]);
        s.human_move(&m).unwrap();
        assert_eq!(s.clock.unwrap().remaining_ms, 0);
        assert!(!s.clock_running(), "the clock stops on the opponent's turn");
        let m = s.game.position().move_to_usi(s.game.legal_moves()[0]);
        s.game.play_usi(&m).unwrap();
        s.turn_started = Instant::now() - Duration::from_millis(2_500);
        assert_eq!(s.clock_left_ms(), Some(0));
        let m = s.game.position().move_to_usi(s.game.legal_moves()[0]);
        let late = s.human_move(&m).unwrap_err();
        assert!(late.contains("time ran out"), "{late}");
        assert_eq!(s.end, Some(GameEnd::loss_of(Color::Black, Ending::TimeForfeit)));
        assert_eq!(s.game.ply(), 2, "the late move was not played");
    }

    /// A player that panics mid-thought: the game ends as its crash with the message, the
    /// page is not left "thinking", and the thread ends.
    #[test]
    fn a_panicking_opponent_ends_its_game_with_a_message() {
        struct Panicky;
        impl Player for Panicky {
            fn name(&self) -> &str {
                "panicky"
            }
            fn new_game(&mut self, _slot: usize) -> Result<(), players::player::Fault> {
                Ok(())
            }
            fn go(&mut self, _slot: usize, _game: &Game, _clock: &ClockView) {}
            fn poll(&mut self, _wait: Duration, _out: &mut Vec<Answer>) {
                panic!("a bug in the player")
            }
            fn computing(&self) -> bool {
                true
            }
        }
        let v = Variant::builtin("minishogi").unwrap();
        let out = tempfile::tempdir().unwrap();
        let session = Arc::new(Mutex::new(Session::new(
            1,
            Game::new(Position::start(v), None),
            "default".into(),
            Some(Color::White),
            ["panicky".into(), "you".into()],
            out.path().join("g.jsonl"),
        )));
        let opponent = attach_opponent(&session, Box::new(Panicky), Limit::Nodes(1), "panicky".into());
        session.lock().unwrap().opponent = Some(opponent);
        session.lock().unwrap().kick();
        let t = Instant::now();
        while session.lock().unwrap().end.is_none() {
            assert!(t.elapsed() < Duration::from_secs(120), "the game never ended");
            std::thread::sleep(Duration::from_millis(10));
        }
        let s = session.lock().unwrap();
        assert!(s.thinking_since.is_none());
        assert!(s.message.as_deref().unwrap_or_default().contains("a bug in the player"), "{:?}", s.message);
    }
}
