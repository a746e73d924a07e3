//! The USI client against real engines (Fairy-Stockfish, GPSShogi) and against the test
//! engines in `tests/engines/` that crash, hang, never start, or answer nonsense: each
//! failure must come back as the right `EngineError`, in time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rules::{Position, Variant};
use usi::client::{BestMove, EngineConfig, EngineError, UsiEngine};

const FAIRY_STOCKFISH: &str = "/usr/games/fairy-stockfish";
const GPSUSI: &str = "/usr/games/gpsusi";

fn engines_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/engines")
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A test engine from `tests/engines/` with a short init timeout.
fn script(name: &str, args: &[&str]) -> EngineConfig {
    let mut cfg = EngineConfig::new(name.trim_end_matches(".py"), engines_dir().join(name));
    cfg.args = args.iter().map(|s| s.to_string()).collect();
    cfg.init_timeout = Duration::from_secs(5);
    cfg
}

/// Runs `scripts/install-engines.sh` once, then insists on the binary.
fn require_engine(path: &str) {
    static INSTALL: OnceLock<Result<(), String>> = OnceLock::new();
    let installed = INSTALL.get_or_init(|| {
        let script = workspace_root().join("scripts/install-engines.sh");
        match Command::new("bash").arg(&script).status() {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(format!("{} failed ({s})", script.display())),
            Err(e) => Err(format!("cannot run {}: {e}", script.display())),
        }
    });
    assert!(
        Path::new(path).is_file(),
        "{path} is missing (install it with scripts/install-engines.sh: Debian packages \
         fairy-stockfish and gpsshogi); the install attempt said: {installed:?}"
    );
}

fn shogi_start() -> Position {
    Position::start(Variant::builtin("shogi").unwrap())
}

fn deadline(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

fn mv(reply: &usi::client::EngineReply) -> &str {
    match &reply.best {
        BestMove::Move(m) => m,
        other => panic!("expected a move, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Well-behaved engines.

#[test]
fn scripted_engine_plays_its_moves_then_resigns() {
    let mut cfg = script("scripted.py", &["7g7f", "2g2f"]);
    cfg.options = vec![("Foo".into(), "3".into()), ("Undeclared".into(), "x y".into())];
    let mut e = UsiEngine::start(&cfg).unwrap();
    assert_eq!(e.name(), "scripted");
    assert_eq!(e.id_name(), Some("Scripted Test Engine"));
    assert_eq!(e.id_author(), Some("arena tests"));
    assert_eq!(e.options(), ["Foo".to_string(), "Debug Log File".to_string()]);
    // Both options reached the engine, the undeclared one too.
    assert!(e.last_output().contains(&"< info string options Foo=3 Undeclared=x y".to_string()), "{:?}", e.last_output());
    e.new_game().unwrap();

    e.go("position startpos", "go btime 1000 wtime 1000 byoyomi 100").unwrap();
    assert!(e.searching());
    let r = e.wait(deadline(2000)).unwrap();
    assert_eq!(r.best, BestMove::Move("7g7f".into()));
    assert_eq!(r.ponder.as_deref(), Some("3c3d"));
    // The last info line with a score, not the `info string` after it.
    assert_eq!(r.info.depth, Some(2));
    assert_eq!(r.info.seldepth, Some(3));
    assert_eq!(r.info.score_cp, Some(-5));
    assert_eq!(r.info.nodes, Some(40));
    assert_eq!(r.info.pv, ["7g7f", "3c3d"]);
    assert!(!e.searching());

    // poll() until the answer arrives.
    e.go("position startpos moves 7g7f 3c3d", "go btime 1000 wtime 1000 byoyomi 100").unwrap();
    let until = deadline(2000);
    let r = loop {
        if let Some(r) = e.poll() {
            break r.unwrap();
        }
        assert!(Instant::now() < until, "no answer from poll(): {:?}", e.last_output());
        std::thread::sleep(Duration::from_millis(1));
    };
    assert_eq!(mv(&r), "2g2f");
    let log = e.last_output();
    assert!(log.contains(&"> position startpos moves 7g7f 3c3d".to_string()), "{log:?}");
    assert!(log.contains(&"< info string position startpos moves 7g7f 3c3d".to_string()), "{log:?}");
    assert!(log.contains(&"< info string thinking".to_string()), "{log:?}");
    assert!(e.poll().is_none());

    e.go("position startpos moves 7g7f 3c3d 2g2f", "go byoyomi 100").unwrap();
    assert_eq!(e.wait(deadline(2000)).unwrap().best, BestMove::Resign);
    e.game_over("lose");
    assert!(e.is_alive());
    let t = Instant::now();
    e.quit();
    assert!(t.elapsed() < Duration::from_millis(1000), "quit took {:?}: the engine exits on quit", t.elapsed());
}

#[test]
fn elapsed_counts_from_go() {
    let mut e = UsiEngine::start(&script("scripted.py", &["--delay-ms", "1000", "7g7f", "3c3d"])).unwrap();
    // Time spent before `go` does not count.
    std::thread::sleep(Duration::from_millis(200));
    e.go("position startpos", "go byoyomi 1000").unwrap();
    // Waiting late does not add to the elapsed time: it is when the line was read.
    std::thread::sleep(Duration::from_millis(1500));
    let r = e.poll().expect("answered by now").unwrap();
    assert!(r.elapsed >= Duration::from_millis(1000), "{:?}", r.elapsed);
    assert!(r.elapsed < Duration::from_millis(1400), "{:?}", r.elapsed);

    // `stop` cuts the search short.
    e.go("position startpos moves 7g7f", "go infinite").unwrap();
    std::thread::sleep(Duration::from_millis(50));
    e.stop();
    let r = e.wait(deadline(1000)).unwrap();
    assert_eq!(mv(&r), "3c3d");
    assert!(r.elapsed < Duration::from_millis(900), "{:?}", r.elapsed);
}

#[test]
fn abandoned_search_answer_is_not_taken_for_the_next() {
    let mut e = UsiEngine::start(&script("scripted.py", &["--delay-ms", "200", "1g1f", "9g9f", "5g5f"])).unwrap();
    e.go("position startpos", "go byoyomi 100").unwrap();
    assert!(e.wait(deadline(50)).unwrap_err().is_timeout());
    // A new go stops the old search; the old search's bestmove (1g1f) is discarded.
    e.go("position startpos", "go byoyomi 100").unwrap();
    let r = e.wait(deadline(2000)).unwrap();
    assert_eq!(mv(&r), "9g9f");
    // new_game stops a running search and waits for (and drops) its answer.
    e.go("position startpos", "go byoyomi 100").unwrap();
    e.new_game().unwrap();
    assert!(!e.searching());
    assert!(e.poll().is_none());
    e.go("position startpos", "go byoyomi 100").unwrap();
    assert_eq!(e.wait(deadline(2000)).unwrap().best, BestMove::Resign);
}

/// An engine that sends a second, stray `bestmove` after its answer, late (when the next
/// command arrives): that line answers nothing and must not be taken as the answer to the
/// next `go`, with `wait` or with `poll`.
#[test]
fn a_stray_second_bestmove_is_not_taken_for_the_next_answer() {
    let mut e = UsiEngine::start(&script("scripted.py", &["--stray", "7g7f", "2g2f", "6i7h"])).unwrap();
    e.new_game().unwrap();
    e.go("position startpos", "go byoyomi 100").unwrap();
    assert_eq!(mv(&e.wait(deadline(5000)).unwrap()), "7g7f");
    e.go("position startpos moves 7g7f 3c3d", "go byoyomi 100").unwrap();
    assert_eq!(mv(&e.wait(deadline(5000)).unwrap()), "2g2f", "{:?}", e.last_output());
    e.go("position startpos moves 7g7f 3c3d 2g2f 8c8d", "go byoyomi 100").unwrap();
    let until = deadline(5000);
    let r = loop {
        if let Some(r) = e.poll() {
            break r.unwrap();
        }
        assert!(Instant::now() < until, "no answer from poll(): {:?}", e.last_output());
        std::thread::sleep(Duration::from_millis(1));
    };
    assert_eq!(mv(&r), "6i7h", "{:?}", e.last_output());
    // The strays were read (and ignored), not lost in the pipe.
    assert!(e.last_output().contains(&"< bestmove 1a1b".to_string()), "{:?}", e.last_output());
}

#[test]
fn illegal_move_comes_back_raw() {
    let mut e = UsiEngine::start(&script("illegal.py", &[])).unwrap();
    e.new_game().unwrap();
    e.go("position startpos", "go byoyomi 100").unwrap();
    let r = e.wait(deadline(2000)).unwrap();
    assert_eq!(mv(&r), "5e5a");
    assert!(shogi_start().parse_usi("5e5a").is_err());
}

// ---------------------------------------------------------------------------------------
// Misbehaving engines.

#[test]
fn hung_engine_times_out_and_is_killed() {
    let mut e = UsiEngine::start(&script("hang.py", &[])).unwrap();
    let pid = e.pid();
    e.go("position startpos", "go btime 100 wtime 100 byoyomi 100").unwrap();
    let t = Instant::now();
    let err = e.wait(deadline(500)).unwrap_err();
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(490) && waited < Duration::from_millis(1500), "{waited:?}");
    match &err {
        EngineError::Timeout { engine, waiting_for, after, last_output } => {
            assert_eq!(engine, "hang");
            assert_eq!(waiting_for, "bestmove");
            assert!(*after >= Duration::from_millis(490), "{after:?}");
            assert!(last_output.contains(&"> go btime 100 wtime 100 byoyomi 100".to_string()), "{last_output:?}");
        }
        other => panic!("expected a timeout, got {other}"),
    }
    let text = err.to_string();
    assert!(text.contains("hang") && text.contains("bestmove") && text.contains("< info depth 1 score cp 3 pv 7g7f"), "{text}");
    // It ignores stop too.
    e.stop();
    assert!(e.wait(deadline(200)).unwrap_err().is_timeout());
    assert!(e.poll().is_none());
    // It ignores isready while "searching": new_game times out after the init timeout.
    // (The timeout also bounds the handshake, so it leaves a loaded CI machine time to
    // start Python.)
    let mut cfg_short = script("hang.py", &[]);
    cfg_short.init_timeout = Duration::from_millis(2000);
    let mut e2 = UsiEngine::start(&cfg_short).unwrap();
    e2.go("position startpos", "go infinite").unwrap();
    let t = Instant::now();
    match e2.new_game() {
        Err(EngineError::Timeout { waiting_for, .. }) => assert_eq!(waiting_for, "readyok"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    let waited = t.elapsed();
    assert!(waited >= Duration::from_millis(1990) && waited < Duration::from_millis(3000), "{waited:?}");
    // Dropping kills and reaps: no zombie left behind.
    drop(e);
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "process {pid} is still there");
}

#[test]
fn wedged_engine_is_killed_by_quit() {
    let mut e = UsiEngine::start(&script("hang.py", &["--stubborn"])).unwrap();
    let pid = e.pid();
    e.go("position startpos", "go infinite").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    // The engine stops reading its input: 400 KB of commands must not block the client.
    let t = Instant::now();
    let line = format!("setoption name Junk value {}", "x".repeat(4000));
    for _ in 0..100 {
        e.send_line(&line).unwrap();
    }
    assert!(t.elapsed() < Duration::from_millis(1000), "sending blocked for {:?}", t.elapsed());
    assert!(e.wait(deadline(100)).unwrap_err().is_timeout());
    let t = Instant::now();
    e.quit();
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(900) && took < Duration::from_millis(2500), "quit took {took:?}");
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "process {pid} is still there");
}

/// The process ids whose parent is `parent` (from `/proc/*/stat`).
fn children_of(parent: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
        let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
        if after.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) == Some(parent) {
            found.push(pid);
        }
    }
    found
}

/// Whether `pid` is gone (or a zombie: dead, waiting for its new parent to reap it).
fn is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat[stat.rfind(')').map_or(0, |i| i + 1)..].split_whitespace().next() == Some("Z"),
        Err(_) => true,
    }
}

/// An engine run by a wrapper script without `exec` is the client's grandchild; killing
/// the engine must reach it too, not only the wrapper. The engine is wedged
/// (it ignores its input and SIGTERM), so only a kill ends it before its own 30 s.
#[test]
fn killing_a_wrapped_engine_kills_the_engine_too() {
    let mut e = UsiEngine::start(&script("wrapper.sh", &["hang.py", "--stubborn"])).unwrap();
    let wrapper = e.pid();
    e.go("position startpos", "go infinite").unwrap();
    // Wedged once it has answered `go` with its info line.
    assert!(e.wait(deadline(500)).unwrap_err().is_timeout());
    let until = deadline(10_000);
    while !e.last_output().iter().any(|l| l.starts_with("< info depth 1")) {
        assert!(Instant::now() < until, "the engine never took the go: {:?}", e.last_output());
        std::thread::sleep(Duration::from_millis(10));
    }
    let engines = children_of(wrapper);
    assert_eq!(engines.len(), 1, "the wrapper {wrapper} runs one engine: {engines:?}");
    let engine = engines[0];
    drop(e);
    assert!(is_gone(wrapper), "the wrapper {wrapper} is still running");
    let until = deadline(10_000);
    while !is_gone(engine) {
        assert!(Instant::now() < until, "the wrapped engine {engine} outlived the kill by 10 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn crashed_engine_is_reported_and_restarts() {
    let cfg = script("crash.py", &[]);
    let mut e = UsiEngine::start(&cfg).unwrap();
    e.new_game().unwrap();
    e.go("position startpos", "go byoyomi 100").unwrap();
    let t = Instant::now();
    let err = e.wait(deadline(3000)).unwrap_err();
    assert!(t.elapsed() < Duration::from_millis(2000), "{:?}", t.elapsed());
    match &err {
        EngineError::Exited { engine, waiting_for, status, signal, last_output } => {
            assert_eq!(engine, "crash");
            assert_eq!(waiting_for, "bestmove");
            assert_eq!(*status, Some(3));
            assert_eq!(*signal, None);
            assert!(last_output.contains(&"< info string about to crash".to_string()), "{last_output:?}");
            assert!(last_output.contains(&"! crash.py: segmentation fault (simulated)".to_string()), "{last_output:?}");
        }
        other => panic!("expected an exit, got {other}"),
    }
    assert!(err.to_string().contains("status 3"), "{err}");
    assert!(!e.is_alive());
    // A dead engine gives errors, not panics.
    assert!(matches!(e.go("position startpos", "go byoyomi 100"), Err(EngineError::Exited { .. })));
    e.stop();
    e.game_over("win");
    assert!(matches!(e.new_game(), Err(EngineError::Exited { .. })));
    assert!(e.poll().is_none());
    drop(e);

    // Restart: a fresh process handshakes again.
    let mut e = UsiEngine::start(&cfg).unwrap();
    assert!(e.is_alive());
    e.new_game().unwrap();
}

#[test]
fn crash_is_seen_by_poll() {
    let mut e = UsiEngine::start(&script("crash.py", &[])).unwrap();
    e.go("position startpos", "go byoyomi 100").unwrap();
    let until = deadline(3000);
    let err = loop {
        if let Some(r) = e.poll() {
            break r.unwrap_err();
        }
        assert!(Instant::now() < until, "poll never saw the crash");
        std::thread::sleep(Duration::from_millis(1));
    };
    assert!(matches!(err, EngineError::Exited { status: Some(3), .. }), "{err}");
    assert!(e.poll().is_none(), "the death is reported once");
}

#[test]
fn writing_to_a_dead_engine_is_an_error() {
    let mut e = UsiEngine::start(&script("crash.py", &[])).unwrap();
    e.go("position startpos", "go byoyomi 100").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // Nothing has read the crash yet; the writes fail (EPIPE) and say so, soon.
    let until = deadline(2000);
    let err = loop {
        match e.send_line("isready") {
            Err(err) => break err,
            Ok(()) => assert!(Instant::now() < until, "writes to a dead engine kept succeeding"),
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    match &err {
        EngineError::Exited { status, waiting_for, .. } => {
            assert_eq!(*status, Some(3));
            assert!(waiting_for.contains("isready"), "{waiting_for}");
        }
        other => panic!("expected an exit, got {other}"),
    }
    assert!(!e.is_alive());
}

#[test]
fn silent_engine_times_out_at_start() {
    let mut cfg = script("slow_start.py", &[]);
    cfg.init_timeout = Duration::from_millis(500);
    let t = Instant::now();
    let err = UsiEngine::start(&cfg).unwrap_err();
    let took = t.elapsed();
    assert!(took >= Duration::from_millis(490) && took < Duration::from_millis(1500), "{took:?}");
    match &err {
        EngineError::Timeout { engine, waiting_for, last_output, .. } => {
            assert_eq!(engine, "slow_start");
            assert_eq!(waiting_for, "usiok");
            assert_eq!(last_output[0], "> usi");
        }
        other => panic!("expected a timeout, got {other}"),
    }
    assert!(err.to_string().contains("< Slow Test Engine, loading"), "{err}");
}

#[test]
fn missing_binary_is_a_spawn_error() {
    let cfg = EngineConfig::new("ghost", "/nonexistent/engine");
    match UsiEngine::start(&cfg) {
        Err(EngineError::Spawn { engine, command, .. }) => {
            assert_eq!(engine, "ghost");
            assert_eq!(command, PathBuf::from("/nonexistent/engine"));
        }
        other => panic!("expected a spawn error, got {other:?}"),
    }
}

#[test]
fn engine_exiting_during_handshake_is_reported() {
    let mut cfg = EngineConfig::new("false", "false");
    cfg.init_timeout = Duration::from_secs(3);
    let t = Instant::now();
    match UsiEngine::start(&cfg) {
        Err(EngineError::Exited { waiting_for, status, .. }) => {
            assert!(waiting_for == "usiok" || waiting_for.contains("usi"), "{waiting_for}");
            assert_eq!(status, Some(1));
        }
        other => panic!("expected an exit, got {other:?}"),
    }
    assert!(t.elapsed() < Duration::from_secs(2));
}

#[test]
fn garbage_bestmoves() {
    let mut e = UsiEngine::start(&script("garbage.py", &["empty"])).unwrap();
    assert_eq!(e.id_name(), Some("Garbage Test Engine"));
    e.go("position startpos", "go byoyomi 100").unwrap();
    match e.wait(deadline(2000)) {
        Err(EngineError::Protocol { engine, message, last_output }) => {
            assert_eq!(engine, "garbage");
            assert!(message.contains("bestmove"), "{message}");
            assert_eq!(last_output.last().map(String::as_str), Some("< bestmove"));
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
    // The engine is still usable.
    e.go("position startpos", "go byoyomi 100").unwrap();
    assert!(matches!(e.wait(deadline(2000)), Err(EngineError::Protocol { .. })));

    let mut e = UsiEngine::start(&script("garbage.py", &["bang"])).unwrap();
    e.go("position startpos", "go byoyomi 100").unwrap();
    let r = e.wait(deadline(2000)).unwrap();
    assert_eq!(mv(&r), "!!!");
    assert!(shogi_start().parse_usi("!!!").is_err());
}

#[test]
fn noise_does_not_confuse_the_client() {
    let mut e = UsiEngine::start(&script("garbage.py", &["noise"])).unwrap();
    assert!(e.options().is_empty(), "{:?}", e.options());
    e.new_game().unwrap();
    e.go("position startpos", "go byoyomi 100").unwrap();
    let r = e.wait(deadline(5000)).unwrap();
    assert_eq!(mv(&r), "7g7f");
    assert_eq!(r.ponder, None);
    assert_eq!(r.info.score_cp, Some(4999));
    let log = e.last_output();
    assert!(log.len() <= usi::client::OUTPUT_LINES);
    assert!(log.iter().all(|l| l.chars().count() < 500), "log lines are capped");
}

#[test]
fn flood_of_output_does_not_stretch_waits() {
    let mut e = UsiEngine::start(&script("garbage.py", &["flood"])).unwrap();
    e.go("position startpos", "go byoyomi 100").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..20 {
        let t = Instant::now();
        assert!(e.poll().is_none());
        assert!(t.elapsed() < Duration::from_millis(100), "poll took {:?}", t.elapsed());
    }
    let t = Instant::now();
    let err = e.wait(deadline(300)).unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(t.elapsed() < Duration::from_millis(800), "wait took {:?}", t.elapsed());
    let log = e.last_output();
    assert_eq!(log.len(), usi::client::OUTPUT_LINES);
    assert!(log.last().unwrap().starts_with("< info depth"), "{log:?}");
}

// ---------------------------------------------------------------------------------------
// Real engines.

fn fairy_stockfish() -> EngineConfig {
    require_engine(FAIRY_STOCKFISH);
    let mut cfg = EngineConfig::new("fairy-stockfish", FAIRY_STOCKFISH);
    cfg.options = vec![("UCI_Variant".into(), "shogi".into()), ("Threads".into(), "1".into())];
    cfg.init_timeout = Duration::from_secs(10);
    cfg
}

/// GPSShogi with its own `OSL_HOME` (so that `setoption` does not rewrite the system's
/// `/usr/share/gpsshogi-data/gpsusi.conf`), one thread, no book, depth 4.
fn gpsshogi(home: &Path) -> EngineConfig {
    require_engine(GPSUSI);
    std::os::unix::fs::symlink("/usr/share/gpsshogi-data/data", home.join("data")).unwrap();
    // `env` execs gpsusi: the process is gpsusi's own.
    let mut cfg = EngineConfig::new("gpsshogi", "/usr/bin/env");
    cfg.args = vec![format!("OSL_HOME={}", home.display()), GPSUSI.into(), "-N".into(), "1".into()];
    cfg.options = vec![("BookDepth".into(), "0".into()), ("LimitDepth".into(), "4".into())];
    cfg.init_timeout = Duration::from_secs(30);
    cfg
}

#[test]
fn fairy_stockfish_plays_shogi() {
    let mut e = UsiEngine::start(&fairy_stockfish()).unwrap();
    assert!(e.id_name().unwrap().starts_with("Fairy-Stockfish"), "{:?}", e.id_name());
    assert!(e.options().iter().any(|o| o == "UCI_Variant"));
    e.new_game().unwrap();
    e.go("position startpos", "go nodes 1000").unwrap();
    let r = e.wait(deadline(5000)).unwrap();
    let start = shogi_start();
    start.parse_usi(mv(&r)).unwrap_or_else(|err| panic!("{} is not legal: {err}", mv(&r)));
    assert!(r.info.nodes.is_some_and(|n| n <= 1100), "{:?}", r.info);
    assert!(r.info.score_cp.is_some() || r.info.score_mate.is_some());

    // Mated: it resigns.
    e.go("position sfen 4k4/4G4/4G4/9/9/9/9/9/4K4 w - 1", "go nodes 1000").unwrap();
    let r = e.wait(deadline(5000)).unwrap();
    assert_eq!(r.best, BestMove::Resign);
    assert_eq!(r.info.score_mate, Some(0));
    // Mate in one: the drop, with the mate counted in plies.
    e.go("position sfen 4k4/9/4G4/9/9/9/9/9/4K4 b G 1", "go nodes 1000").unwrap();
    let r = e.wait(deadline(5000)).unwrap();
    assert_eq!(mv(&r), "G*5b");
    assert_eq!(r.info.score_mate, Some(1));
    e.go("position sfen 4k4/9/4G4/9/9/9/9/9/4K4 w G 1", "go nodes 1000").unwrap();
    assert_eq!(e.wait(deadline(5000)).unwrap().info.score_mate, Some(-2));
    e.quit();
}

/// With `MultiPV 4` the reply carries the last line of each index: four different legal
/// moves, the first of which is the engine's own choice and its main line's score.
#[test]
fn fairy_stockfish_multipv_lines_come_back_by_index() {
    let mut cfg = fairy_stockfish();
    cfg.options.push(("MultiPV".into(), "4".into()));
    let mut e = UsiEngine::start(&cfg).unwrap();
    e.new_game().unwrap();
    e.go("position startpos moves 7g7f 3c3d", "go nodes 5000").unwrap();
    let r = e.wait(deadline(10_000)).unwrap();
    assert_eq!(r.lines.len(), 4, "{:?}", r.lines);
    let mut pos = shogi_start();
    for m in ["7g7f", "3c3d"] {
        pos.play_unchecked(pos.parse_usi(m).unwrap());
    }
    let firsts: Vec<&str> = r.lines.iter().map(|l| l.pv[0].as_str()).collect();
    for (k, (line, m)) in r.lines.iter().zip(&firsts).enumerate() {
        assert_eq!(line.multipv, Some(k as u32 + 1));
        pos.parse_usi(m).unwrap_or_else(|err| panic!("line {}: {m} is not legal: {err}", k + 1));
    }
    let mut distinct = firsts.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "{firsts:?}");
    assert_eq!(r.lines[0], r.info);
    e.quit();
}

#[test]
fn gpsshogi_plays_shogi_against_fairy_stockfish() {
    let home = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let mut gps = UsiEngine::start(&gpsshogi(home.path())).unwrap();
    let startup = t.elapsed();
    assert!(gps.id_name().unwrap().starts_with("gpsshogi"), "{:?}", gps.id_name());
    assert!(gps.options().iter().any(|o| o == "LimitDepth"));
    assert!(home.path().join("gpsusi.conf").exists(), "options are saved under OSL_HOME");
    let mut fs = UsiEngine::start(&fairy_stockfish()).unwrap();
    gps.new_game().unwrap();
    fs.new_game().unwrap();

    // A few plies, every move checked by the rules engine.
    let mut pos = shogi_start();
    let mut moves: Vec<String> = Vec::new();
    for ply in 0..6 {
        let position = if moves.is_empty() { "position startpos".to_string() } else { format!("position startpos moves {}", moves.join(" ")) };
        let (engine, go) = if ply % 2 == 0 { (&mut gps, "go btime 0 wtime 0 byoyomi 1000") } else { (&mut fs, "go nodes 2000") };
        engine.go(&position, go).unwrap();
        let r = engine.wait(deadline(5000)).unwrap();
        let text = mv(&r).to_string();
        let m = pos.parse_usi(&text).unwrap_or_else(|err| panic!("{}: {text} is not legal: {err}", engine.name()));
        pos.play_unchecked(m);
        if ply % 2 == 0 {
            assert!(r.info.depth.is_some_and(|d| d <= 4), "LimitDepth 4: {:?}", r.info);
        }
        moves.push(text);
    }
    gps.game_over("draw");
    fs.game_over("draw");
    let t = Instant::now();
    gps.quit(); // gpsusi does not exit when its input closes: quit() kills it after ~1 s.
    assert!(t.elapsed() < Duration::from_millis(1500));
    fs.quit();
    assert!(startup < Duration::from_secs(30), "{startup:?}");
}
