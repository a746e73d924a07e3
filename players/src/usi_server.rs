//! Our USI engine: any arena player (a checkpoint, the uniform-prior search, a baseline)
//! behind the USI protocol, so GUIs, tournament managers and other arenas can play it.
//! The protocol's text is read by `usi::command`; this module is the glue between those
//! commands and a [`Player`] thinking on its own thread.
//!
//! Protocol (Tord Romstad's USI with Shogidokoro's extensions): `usi` → `id`, `option`,
//! `usiok`; `isready` → `readyok` (answered at once, also while thinking); `setoption name
//! N value V`; `usinewgame`; `position startpos|sfen … [moves …]`; `go` with `nodes`,
//! `depth`, `movetime`, `btime wtime byoyomi`, `btime wtime binc winc`, `infinite`,
//! `ponder`; `stop`; `ponderhit`; `gameover win|lose|draw`; `quit`. Answers: `info depth …
//! nodes … nps … time … score cp X|mate N pv …` and `bestmove M`, `bestmove resign` when
//! mated, `bestmove win` when the 27-point declaration conditions hold. A network player
//! answers `stop` at once; a baseline searches in one uninterruptible call, so its
//! `go infinite` or `go ponder` thinks at most 5 s.
//!
//! Variants: the option `USI_Variant` (also accepted as `UCI_Variant`, as Fairy-Stockfish
//! names it) selects `shogi`, `pocket-copper`, `hand-shogi` or `minishogi`; the option
//! `USI_VariantOptions` sets rule options as `name=choice` separated by spaces or commas
//! (e.g. `start=both-in-hand`). Positions and moves of the variants use the project's
//! SFEN/USI extension (docs/NOTATION.md): the pocket as a fifth SFEN field, `7g&` for a
//! pocket move and `C&5e` for a pocket drop.

use crate::limits::{ClockView, Limit};
use crate::player::{Answer, Player, Reply};
use crate::spec::{PlayerFactory, PlayerSpec};
use crate::thought::{Score, Thought};
use rules::{Game, Outcome, Position, TerminationReason, Variant};
use std::io::{BufRead, Write};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use usi::command::{parse_position, parse_setoption, parse_variant_options, GoCommand};

/// How the engine is started: a player spec (without a limit: `go` gives it) and the
/// variant it starts with.
pub struct EngineSetup {
    pub spec: PlayerSpec,
    pub variant: String,
    pub options: Vec<(String, String)>,
    /// Simulations (or nodes) per move when `go` names no limit at all.
    pub default_nodes: u64,
}

enum ToWorker {
    Go { game: Box<Game>, view: ClockView, hold: bool, ponder_view: Option<ClockView> },
    Stop,
    PonderHit,
    Quit,
}

type Out = Arc<Mutex<Box<dyn Write + Send>>>;

fn say(out: &Out, line: &str) {
    let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
    // A closed output (the GUI went away) ends the engine at the next read of stdin.
    let _ = writeln!(o, "{line}");
    let _ = o.flush();
}

/// Speaks USI on `input`/`output` until `quit` or the end of input.
pub fn serve(setup: EngineSetup, input: impl BufRead, output: Box<dyn Write + Send>) -> Result<(), String> {
    let out: Out = Arc::new(Mutex::new(output));
    let mut variant_name = setup.variant.clone();
    let mut variant_options = setup.options.clone();
    let mut variant: &'static Variant = Variant::load(&variant_name, &variant_options).map_err(|e| e.to_string())?;
    let mut game = Game::new(Position::start(variant), None);
    let mut factory: Option<PlayerFactory> = None;
    let mut worker: Option<(Sender<ToWorker>, std::thread::JoinHandle<()>)> = None;
    let threads = 1usize;
    let mut default_nodes = setup.default_nodes;

    for line in input.lines() {
        let line = line.map_err(|e| e.to_string())?;
        let line = line.trim();
        let (cmd, rest) = line.split_once(' ').map(|(a, b)| (a, b.trim())).unwrap_or((line, ""));
        match cmd {
            "usi" => {
                say(&out, &format!("id name copper {} ({})", env!("CARGO_PKG_VERSION"), setup.spec.name));
                say(&out, "id author the copper project");
                let names: Vec<&str> = rules::BUILTIN.to_vec();
                say(
                    &out,
                    &format!(
                        "option name USI_Variant type combo default {variant_name} {}",
                        names.iter().map(|n| format!("var {n}")).collect::<Vec<_>>().join(" ")
                    ),
                );
                say(&out, "option name USI_VariantOptions type string default <empty>");
                say(&out, &format!("option name Nodes type spin default {} min 1 max 100000000", setup.default_nodes));
                say(&out, "option name USI_Hash type spin default 16 min 1 max 1024");
                say(&out, "option name USI_Ponder type check default false");
                say(&out, "usiok");
            }
            "isready" => {
                if factory.is_none() {
                    // `go` gives each move's limit; the factory only needs one to exist.
                    match PlayerFactory::new(setup.spec.clone(), variant, Some(Limit::Nodes(default_nodes)), threads, Duration::from_secs(60)) {
                        Ok(f) => factory = Some(f),
                        Err(e) => {
                            // Without its player the engine cannot play: say why and exit,
                            // so the client sees a dead engine at once rather than waiting.
                            say(&out, &format!("info string error: {e}"));
                            return Err(e.to_string());
                        }
                    }
                }
                if worker.is_none() {
                    let player = factory.as_ref().unwrap().instance(1);
                    let (tx, rx) = channel();
                    let o = out.clone();
                    // `stop` interrupts a search player at once; a baseline thinks in one
                    // uninterruptible call, so its "infinite" search is capped.
                    let infinite_ms =
                        if matches!(setup.spec.kind, crate::spec::Kind::Checkpoint(_) | crate::spec::Kind::Uniform) { 24 * 3600 * 1000 } else { 5000 };
                    let handle = std::thread::spawn(move || think_loop(player, rx, o, infinite_ms));
                    worker = Some((tx, handle));
                }
                say(&out, "readyok");
            }
            "setoption" => {
                let Some((name, value)) = parse_setoption(rest) else {
                    say(&out, &format!("info string error: cannot read 'setoption {rest}'"));
                    continue;
                };
                match name.as_str() {
                    "USI_Variant" | "UCI_Variant" | "USI_VariantOptions" => {
                        if name == "USI_VariantOptions" {
                            match parse_variant_options(&value) {
                                Ok(o) => variant_options = o,
                                Err(e) => {
                                    say(&out, &format!("info string error: {e}"));
                                    continue;
                                }
                            }
                        } else {
                            variant_name = value.clone();
                        }
                        match Variant::load(&variant_name, &variant_options) {
                            Ok(v) => {
                                if !std::ptr::eq(v, variant) {
                                    variant = v;
                                    game = Game::new(Position::start(variant), None);
                                    // The network (or tables) belongs to one variant: rebuild at isready.
                                    factory = None;
                                    if let Some((tx, h)) = worker.take() {
                                        let _ = tx.send(ToWorker::Quit);
                                        let _ = h.join();
                                    }
                                }
                            }
                            Err(e) => say(&out, &format!("info string error: {}", e.to_string().replace('\n', " "))),
                        }
                    }
                    _ => {} // USI_Hash, USI_Ponder, Nodes, …: accepted.
                }
                if name == "Nodes" {
                    match value.parse::<u64>() {
                        Ok(n) if n > 0 => default_nodes = n,
                        _ => say(&out, &format!("info string error: Nodes {value}: expected a positive whole number")),
                    }
                }
            }
            "usinewgame" => game = Game::new(Position::start(variant), None),
            "position" => match parse_position(variant, rest) {
                Ok(g) => game = g,
                Err(e) => say(&out, &format!("info string error: {e}")),
            },
            "go" => {
                if worker.is_none() {
                    say(&out, "info string error: go before isready");
                    say(&out, "bestmove resign");
                    continue;
                }
                if let Some(r) = game.result() {
                    let me = game.position().side_to_move();
                    let declare = r.reason == TerminationReason::Declaration && r.outcome == Outcome::Win(me);
                    say(&out, if declare { "bestmove win" } else { "bestmove resign" });
                    continue;
                }
                let mut go = parse_go(rest, Limit::Nodes(default_nodes));
                if let Some(fixed) = setup.spec.limit {
                    // A limit in the engine's spec is a fixed strength: it wins over the GUI's.
                    go.view.limit = fixed;
                }
                let (tx, _) = worker.as_ref().unwrap();
                let _ = tx.send(ToWorker::Go {
                    game: Box::new(game.clone()),
                    view: go.view,
                    hold: go.infinite || go.ponder,
                    ponder_view: go.ponder.then_some(go.view),
                });
            }
            "stop" => {
                if let Some((tx, _)) = &worker {
                    let _ = tx.send(ToWorker::Stop);
                }
            }
            "ponderhit" => {
                if let Some((tx, _)) = &worker {
                    let _ = tx.send(ToWorker::PonderHit);
                }
            }
            "gameover" => {}
            "quit" => break,
            "" => {}
            other => say(&out, &format!("info string unknown command '{other}'")),
        }
    }
    if let Some((tx, h)) = worker.take() {
        let _ = tx.send(ToWorker::Quit);
        let _ = h.join();
    }
    Ok(())
}

/// The thinking thread: runs one search at a time, answers `stop` and `ponderhit`.
fn think_loop(mut player: Box<dyn Player>, rx: Receiver<ToWorker>, out: Out, infinite_ms: u64) {
    let mut answers: Vec<Answer> = Vec::new();
    let mut last: Option<Game> = None;
    loop {
        let Ok(msg) = rx.recv() else { return };
        let (game, view, mut hold, ponder_view) = match msg {
            ToWorker::Go { game, view, hold, ponder_view } => (game, view, hold, ponder_view),
            ToWorker::Quit => return,
            _ => continue,
        };
        let started = Instant::now();
        // A position that goes on from the last one is the same game (a search player may
        // keep its tree); anything else starts a new one.
        if !last.as_ref().is_some_and(|l| game.continues(l)) {
            let _ = player.new_game(0);
        }
        // While pondering or searching infinitely, think without a clock until told. A
        // ponder search with a node or depth budget keeps it: that budget is the whole
        // search, whose answer waits for `ponderhit` (no clock could stop it after).
        let budget = matches!(view.limit, Limit::Nodes(_) | Limit::Depth(_));
        let think_view =
            if hold && !(ponder_view.is_some() && budget) { ClockView { limit: Limit::MoveTime(infinite_ms), remaining_ms: view.remaining_ms } } else { view };
        player.go(0, &game, &think_view);
        let mut stop_at: Option<Instant> = None;
        let mut result: Option<Reply> = None;
        let mut quitting = false;
        loop {
            if result.is_none() {
                player.poll(Duration::from_millis(1), &mut answers);
                if let Some(a) = answers.pop() {
                    result = Some(a.reply);
                    answers.clear();
                }
            }
            if stop_at.is_some_and(|t| Instant::now() >= t) {
                player.stop(0);
                stop_at = None;
            }
            // Only the done result may be sent, and only when not held.
            if result.is_some() && !hold {
                break;
            }
            let wait = if result.is_some() || !player.computing() { Duration::from_millis(1) } else { Duration::ZERO };
            match rx.recv_timeout(wait) {
                Ok(ToWorker::Stop) => {
                    hold = false;
                    player.stop(0);
                }
                Ok(ToWorker::PonderHit) => {
                    hold = false;
                    if let Some(v) = ponder_view {
                        // The clock starts now: think as long as the real limit allows.
                        let mover = game.position().side_to_move().index();
                        if let Some(t) = crate::limits::think_time(&v, mover, game.ply(), Duration::from_millis(40)) {
                            stop_at = Some(Instant::now() + t);
                        }
                    }
                }
                // `quit` or the end of input during a search still gets its answer, as
                // Stockfish-family engines give it (scripts pipe `go` and read
                // `bestmove`): a search told to think until `stop` stops now, one with a
                // limit runs to it.
                Ok(ToWorker::Quit) | Err(RecvTimeoutError::Disconnected) => {
                    if !quitting && hold {
                        hold = false;
                        player.stop(0);
                    }
                    quitting = true;
                }
                Ok(ToWorker::Go { .. }) | Err(RecvTimeoutError::Timeout) => {}
            }
        }
        let elapsed = started.elapsed();
        let reply = result.unwrap_or(Reply::Resign);
        let mut pos = game.position().clone();
        match reply {
            Reply::Move(m, t) => {
                say(&out, &info_line(&t, &mut pos, elapsed));
                say(&out, &format!("bestmove {}", game.position().move_to_usi(m)));
            }
            Reply::Text(text, _) => say(&out, &format!("bestmove {text}")),
            Reply::Declare => say(&out, "bestmove win"),
            Reply::Resign | Reply::Fault(_) => say(&out, "bestmove resign"),
        }
        if quitting {
            return;
        }
        last = Some(*game);
    }
}

fn info_line(t: &Thought, pos: &mut Position, elapsed: Duration) -> String {
    let ms = elapsed.as_millis().max(1) as u64;
    let score = match t.score {
        Score::Cp(cp) => format!("cp {cp}"),
        Score::Mate(n) => format!("mate {n}"),
    };
    let mut pv = Vec::new();
    for &m in &t.pv {
        if !pos.is_legal(m) {
            break;
        }
        pv.push(pos.move_to_usi(m));
        pos.play_unchecked(m);
    }
    format!("info depth {} nodes {} nps {} time {ms} score {score} pv {}", t.depth.max(1), t.nodes, t.nodes * 1000 / ms, pv.join(" "))
}

/// What a `go` command asks of the player: the limit and clocks, and whether to hold the
/// answer (`infinite`, `ponder`) until `stop` or `ponderhit`.
pub struct GoLimit {
    pub view: ClockView,
    pub infinite: bool,
    pub ponder: bool,
}

/// Reads a `go` command's arguments; `default` is the limit when it names none.
pub fn parse_go(rest: &str, default: Limit) -> GoLimit {
    let go = GoCommand::parse(rest);
    let (btime, wtime) = (go.btime.unwrap_or(0), go.wtime.unwrap_or(0));
    let limit = if let Some(n) = go.nodes {
        Limit::Nodes(n.max(1))
    } else if let Some(d) = go.depth {
        Limit::Depth(d.clamp(1, 64) as u32)
    } else if let Some(ms) = go.movetime {
        Limit::MoveTime(ms.max(1))
    } else if let Some(b) = go.byoyomi {
        Limit::Byoyomi { main_ms: btime.max(wtime), byoyomi_ms: b }
    } else if let Some(i) = go.binc.or(go.winc) {
        Limit::Fischer { main_ms: btime.max(wtime), increment_ms: i }
    } else if go.clock {
        Limit::Byoyomi { main_ms: btime.max(wtime), byoyomi_ms: 0 }
    } else {
        default
    };
    GoLimit { view: ClockView { limit, remaining_ms: [btime, wtime] }, infinite: go.infinite, ponder: go.ponder }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_commands_become_limits() {
        let d = Limit::Nodes(7);
        assert_eq!(parse_go("btime 0 wtime 0 byoyomi 100", d).view.limit, Limit::Byoyomi { main_ms: 0, byoyomi_ms: 100 });
        let g = parse_go("btime 5000 wtime 4000 binc 100 winc 100", d);
        assert_eq!(g.view.limit, Limit::Fischer { main_ms: 5000, increment_ms: 100 });
        assert_eq!(g.view.remaining_ms, [5000, 4000]);
        assert_eq!(parse_go("nodes 300", d).view.limit, Limit::Nodes(300));
        assert_eq!(parse_go("movetime 50", d).view.limit, Limit::MoveTime(50));
        assert_eq!(parse_go("", d).view.limit, d);
        assert!(parse_go("infinite", d).infinite);
        assert!(parse_go("ponder btime 0 wtime 0 byoyomi 100", d).ponder);
    }
}
