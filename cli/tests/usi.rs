//! `copper usi` as GUIs and tournament managers drive it: the protocol by hand, a short
//! match run by a third-party client (cshogi's `python -m cshogi.cli`), and a match under
//! byoyomi 100 ms in our arena with a tight margin, lost on time not once.
//!
//! Every test holds [`one_at_a_time`] while its engines run: the test harness runs tests
//! in parallel, and two matches of two engines each (four searching processes) on a
//! two-core machine made the timing of every one of them depend on the others. The
//! timeouts below are liveness bounds (a hung engine fails instead of stalling the
//! suite), generous because they are not what is tested; what is asserted is what the
//! engine says and in what order. Only the byoyomi match asserts on time, because time
//! is its feature.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Held by every test while its engines run, so that the tests' engines never compete
/// for the cores (a failed test's poisoned lock is still a lock).
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static ENGINES: Mutex<()> = Mutex::new(());
    ENGINES.lock().unwrap_or_else(|e| e.into_inner())
}

/// A liveness bound on an answer that takes milliseconds: long enough for any machine,
/// loaded or not, so that reaching it means the engine never answered.
const LIVE: Duration = Duration::from_secs(60);

/// A checkpoint with random weights for `variant`.
fn tiny_model(variant: &str, dir: &Path) {
    neteval::save_random_model(rules::Variant::builtin(variant).unwrap(), dir, 1, 8, 3).unwrap();
}

struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Engine {
    fn start(args: &[&str]) -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_copper"))
            .arg("usi")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines() {
                let Ok(l) = l else { return };
                if tx.send(l).is_err() {
                    return;
                }
            }
        });
        Engine { child, stdin, lines }
    }
    /// `usi` and `isready`, each answered.
    fn ready(&mut self) {
        self.send("usi");
        self.until("usiok", LIVE);
        self.send("isready");
        self.until("readyok", LIVE);
    }
    /// The move of the next `bestmove`.
    fn best_move(&mut self) -> String {
        self.until("bestmove", LIVE).last().unwrap().split_whitespace().nth(1).unwrap().to_string()
    }
    fn send(&mut self, s: &str) {
        writeln!(self.stdin, "{s}").unwrap();
        self.stdin.flush().unwrap();
    }
    /// Lines until one starting with `prefix` (returned last), within `timeout`.
    fn until(&mut self, prefix: &str, timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    let done = l.starts_with(prefix);
                    got.push(l);
                    if done {
                        return got;
                    }
                }
                Err(_) => panic!("no '{prefix}' within {timeout:?}; got {got:?}"),
            }
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `go ponder` with a node budget searches that budget and answers at `ponderhit`,
/// rather than pondering under a 24-hour move time that nothing would stop after the hit.
#[test]
fn a_ponder_search_with_a_node_budget_answers_at_ponderhit() {
    let _one = one_at_a_time();
    let mut e = Engine::start(&["--player", "uniform", "-v", "minishogi"]);
    e.ready();
    e.send("position startpos");
    e.send("go ponder nodes 64");
    std::thread::sleep(Duration::from_millis(100));
    e.send("ponderhit");
    // 64 simulations of the uniform search take milliseconds; a minute is only a bound.
    let out = e.until("bestmove", LIVE);
    assert!(out.iter().any(|l| l.starts_with("info ") && l.contains(" nodes 64 ")), "{out:?}");
}

/// A script that pipes its commands and closes the input still reads a `bestmove`: at the
/// end of input (or `quit`) a search with a limit runs to it, and one told to think until
/// `stop` (`go infinite`) stops and answers with what it has.
#[test]
fn the_end_of_input_still_gets_the_searchs_answer() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m");
    tiny_model("shogi", &m);
    for (go, end) in [("go nodes 64", ""), ("go infinite", ""), ("go nodes 64", "quit\n"), ("go infinite", "quit\n")] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_copper"))
            .args(["usi", "--model", m.to_str().unwrap(), "-v", "shogi"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        write!(stdin, "usi\nisready\nposition startpos\n{go}\n{end}").unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let best: Vec<&str> = text.lines().filter(|l| l.starts_with("bestmove ")).collect();
        assert_eq!(best.len(), 1, "{go:?} then {end:?}: {text}");
        let mv = best[0].trim_start_matches("bestmove ");
        let pos = rules::Position::start(rules::Variant::builtin("shogi").unwrap());
        assert!(pos.parse_usi(mv).is_ok(), "{go:?}: '{mv}' is not a legal move of the start");
    }
}

#[test]
fn the_protocol_by_hand() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    tiny_model("shogi", &dir.path().join("m"));
    let m = dir.path().join("m");
    let mut e = Engine::start(&["--model", m.to_str().unwrap(), "-v", "shogi"]);
    e.send("usi");
    let hello = e.until("usiok", LIVE);
    assert!(hello.iter().any(|l| l.starts_with("id name copper")), "{hello:?}");
    assert!(hello.iter().any(|l| l.starts_with("option name USI_Variant type combo")), "{hello:?}");
    e.send("isready");
    e.until("readyok", LIVE);
    e.send("usinewgame");
    e.send("position startpos moves 7g7f");
    e.send("go nodes 32");
    let out = e.until("bestmove", LIVE);
    let info = out.iter().find(|l| l.starts_with("info ")).expect("an info line before bestmove");
    assert!(info.contains(" nodes 32 ") && info.contains(" score ") && info.contains(" pv "), "{info}");
    let best = out.last().unwrap().split_whitespace().nth(1).unwrap().to_string();
    let v = rules::Variant::builtin("shogi").unwrap();
    let mut g = rules::Game::new(rules::Position::start(v), None);
    g.play_usi("7g7f").unwrap();
    g.play_usi(&best).unwrap_or_else(|err| panic!("bestmove {best} is illegal: {err}"));

    // `isready` is answered while thinking (readyok before any bestmove), and `stop`
    // ends an infinite search, which never ends by itself: a bestmove at all is the
    // proof, whatever the machine's speed. The search reports what it searched.
    e.send("position startpos");
    e.send("go infinite");
    e.send("isready");
    let ready = e.until("readyok", LIVE);
    assert!(!ready.iter().any(|l| l.starts_with("bestmove")), "an infinite search answered before stop: {ready:?}");
    e.send("stop");
    let stopped = e.until("bestmove", LIVE);
    let info = stopped.iter().chain(&ready).rev().find(|l| l.starts_with("info ") && l.contains(" nodes ")).expect("an info line before bestmove");
    let nodes: u64 = info.split_whitespace().skip_while(|w| *w != "nodes").nth(1).unwrap().parse().unwrap();
    assert!(nodes >= 1, "{info}");
    let best = stopped.last().unwrap().split_whitespace().nth(1).unwrap().to_string();
    rules::Game::new(rules::Position::start(v), None).play_usi(&best).unwrap_or_else(|err| panic!("bestmove {best} after stop: {err}"));

    // A mate in one is played whatever the network thinks, even at one node: the mate
    // check is on by default (the gold drop on 5b, protected by the pawn on 5c).
    e.send("position sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 1");
    e.send("go nodes 1");
    assert_eq!(e.until("bestmove", LIVE).last().unwrap(), "bestmove G*5b");

    // Mated: resign. Black's king on 5i is in check from the gold on 5h, which the
    // silver on 5g guards; 4h, 6h and 4i are covered by the golds and the silver, and the
    // gold on 6i is guarded by the gold on 5h.
    e.send("position sfen 4k4/9/9/9/9/9/4s4/4g4/3gK1g2 b - 1");
    e.send("go byoyomi 100");
    assert_eq!(e.until("bestmove", LIVE).last().unwrap(), "bestmove resign");

    // 27-point declaration: Black's king on 5a in White's camp with ten pieces there
    // (rook, bishop, four golds, four silvers: 5 + 5 + 8 = 18 points) and ten pawns in
    // hand (10 points): 28 points, not in check, Black to move.
    e.send("position sfen RBGGKGGS1/SSS6/9/9/9/9/9/9/4k4 b 10P 1");
    e.send("go byoyomi 100");
    assert_eq!(e.until("bestmove", LIVE).last().unwrap(), "bestmove win");

    // A malformed position is reported, not fatal.
    e.send("position sfen nonsense");
    let said = e.until("info string", LIVE);
    assert!(said.last().unwrap().contains("error"), "{said:?}");
    e.send("isready");
    e.until("readyok", LIVE);
    e.send("quit");
    let t = Instant::now();
    while t.elapsed() < LIVE {
        if e.child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the engine did not exit on quit");
}

#[test]
fn variants_are_chosen_with_usi_variant() {
    let _one = one_at_a_time();
    let mut e = Engine::start(&["--player", "alphabeta"]);
    e.send("usi");
    e.until("usiok", LIVE);
    e.send("setoption name USI_Variant value pocket-copper");
    e.send("setoption name USI_VariantOptions value start=both-in-pocket");
    e.send("isready");
    e.until("readyok", LIVE);
    // Black's first move from the both-in-pocket start: a pocket drop of the Copper is legal.
    e.send("position startpos moves C&5e");
    e.send("go depth 1");
    let best = e.best_move();
    let v = rules::Variant::load("pocket-copper", &[("start".into(), "both-in-pocket".into())]).unwrap();
    let mut g = rules::Game::new(rules::Position::start(v), None);
    g.play_usi("C&5e").unwrap();
    g.play_usi(&best).unwrap_or_else(|err| panic!("bestmove {best}: {err}"));
}

/// A one-line script that starts our engine, for clients that take a program path only.
fn wrapper(dir: &Path, name: &str, args: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\nexec '{}' usi {args}\n", env!("CARGO_BIN_EXE_copper"))).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p
}

fn cshogi_python() -> PathBuf {
    let out = Command::new("bash").arg(root().join("scripts/install-cshogi.sh")).output().expect("bash");
    assert!(out.status.success(), "installing cshogi failed: {}", String::from_utf8_lossy(&out.stderr));
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn a_third_party_client_plays_our_engine() {
    let python = cshogi_python();
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m");
    tiny_model("shogi", &m);
    let e1 = wrapper(dir.path(), "net.sh", &format!("--model '{}' -v shogi", m.display()));
    let e2 = wrapper(dir.path(), "ab.sh", "--player alphabeta -v shogi");
    let csa = dir.path().join("csa");
    std::fs::create_dir_all(&csa).unwrap();
    let out = Command::new(&python)
        .args(["-m", "cshogi.cli"])
        .arg(&e1)
        .arg(&e2)
        .args(["--games", "2", "--byoyomi", "100", "--time", "0", "--draw", "80", "--csa"])
        .arg(&csa)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "cshogi.cli failed: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("2 of 2 games finished"), "{stdout}");
    assert!(!stdout.contains("反則") && !stdout.contains("切れ負け"), "no illegal move and no loss on time: {stdout}");
    // The records read back with cshogi's parser, every move legal in our rules engine.
    let files: Vec<PathBuf> = std::fs::read_dir(&csa).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 2, "{files:?}");
    let script = "import sys, cshogi, cshogi.CSA\nfor f in sys.argv[1:]:\n    for k in cshogi.CSA.Parser.parse_file(f):\n        print(' '.join(cshogi.move_to_usi(m) for m in k.moves))\n";
    let read = Command::new(&python).arg("-c").arg(script).args(&files).output().unwrap();
    assert!(read.status.success(), "{}", String::from_utf8_lossy(&read.stderr));
    let v = rules::Variant::builtin("shogi").unwrap();
    let text = String::from_utf8_lossy(&read.stdout);
    let games: Vec<&str> = text.lines().collect();
    assert_eq!(games.len(), 2);
    for moves in games {
        let mut g = rules::Game::new(rules::Position::start(v), None);
        let n = moves.split_whitespace().count();
        assert!(n > 0);
        for mv in moves.split_whitespace() {
            g.play_usi(mv).unwrap_or_else(|e| panic!("{mv} in {moves}: {e}"));
        }
    }
}

#[test]
fn byoyomi_100ms_is_never_overstepped() {
    // Our engine as an external USI engine in our own arena, which charges every move
    // against the clock with a 10 ms margin (the engine aims 30 ms inside byoyomi).
    // Timing is the feature here, so this is the one test that asserts on it: it holds
    // the lock (no other test's engines run meanwhile) and plays one game at a time
    // (`--threads 1`), so at most one engine searches at any moment. A loaded machine can
    // still deschedule an engine past its deadline, so a match lost on time is played
    // again, up to three times: an engine that oversteps by itself loses every one.
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m");
    tiny_model("shogi", &m);
    let e1 = wrapper(dir.path(), "net.sh", &format!("--model '{}' -v shogi", m.display()));
    let e2 = wrapper(dir.path(), "ab.sh", "--player alphabeta -v shogi");
    let mut lost_on_time = Vec::new();
    for attempt in 0..3 {
        let out = dir.path().join(format!("t{attempt}"));
        let status = Command::new(env!("CARGO_BIN_EXE_copper"))
            .args(["arena", "--quiet", "-v", "shogi", "--rounds", "2", "--threads", "1", "--max-plies", "120", "--limit", "time=0,byoyomi=100"])
            .arg("--player")
            .arg(format!("usi:{},name=net", e1.display()))
            .arg("--player")
            .arg(format!("usi:{},name=ab", e2.display()))
            .args(["--time-margin", "10"])
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
        let results = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
        assert_eq!(results.lines().count(), 4);
        assert!(!results.contains("IllegalMove") && !results.contains("Crash"), "{results}");
        if !results.contains("TimeForfeit") {
            return;
        }
        eprintln!("attempt {attempt}: a game was lost on time");
        lost_on_time.push(results);
    }
    panic!("a game was lost on time in each of three matches:\n{}", lost_on_time.join("\n"));
}

/// `--precision` reaches the network: a model engine answers with a legal move in each
/// arithmetic (int8 runs the CPU's integer kernel where it has one, f32 elsewhere).
#[test]
fn a_model_engine_plays_in_each_precision() {
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m");
    tiny_model("minishogi", &m);
    for precision in ["auto", "int8", "f32"] {
        let mut e = Engine::start(&["--model", m.to_str().unwrap(), "-v", "minishogi", "--precision", precision]);
        e.ready();
        e.send("position startpos");
        e.send("go nodes 32");
        let best = e.best_move();
        let v = rules::Variant::builtin("minishogi").unwrap();
        let mut g = rules::Game::new(rules::Position::start(v), None);
        g.play_usi(&best).unwrap_or_else(|err| panic!("--precision {precision}: bestmove {best}: {err}"));
    }
}
