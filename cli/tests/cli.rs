//! The command-line program as a user runs it.
use std::process::Command;

fn copper(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_copper")).args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn perft_counts_and_divides() {
    let (ok, out, _) = copper(&["perft", "-v", "shogi", "3"]);
    assert!(ok);
    assert!(out.contains("nodes 25470"), "{out}");
    let (ok, out, _) = copper(&["perft", "-v", "shogi", "2", "--divide", "--moves", "7g7f"]);
    assert!(ok);
    assert_eq!(out.lines().filter(|l| l.contains(": ")).count(), 30, "{out}");
    // Fairy-Stockfish: `position startpos moves 7g7f`, `go perft 2` gives 1110.
    assert!(out.contains("nodes 1110"), "perft 2 after 7g7f: {out}");
}

#[test]
fn perft_takes_an_sfen_and_options() {
    // No Copper anywhere: shogi's 30 moves plus a pocket move for each of the 16 pieces
    // that have a board move (9 pawns, 2 lances, 2 silvers, 2 golds, the rook).
    let (ok, out, _) = copper(&["perft", "-v", "pocket-copper", "-o", "start=no-copper", "1"]);
    assert!(ok && out.contains("nodes 46"), "{out}");
    let (ok, out, _) = copper(&["perft", "-v", "minishogi", "2", "--sfen", "rbsgk/4p/5/P4/KGSBR b - 1"]);
    assert!(ok && out.contains("nodes 181"), "{out}");
}

#[test]
fn malformed_input_is_reported_with_a_non_zero_exit() {
    let (ok, _, err) = copper(&["perft", "-v", "shogi", "1", "--sfen", "lnsgkgsnl/1r5b1 b - 1"]);
    assert!(!ok);
    assert!(err.contains("error:") && err.contains("ranks"), "{err}");
    let (ok, _, err) = copper(&["perft", "-v", "shogi", "1", "--moves", "7g7e"]);
    assert!(!ok && err.contains("7g7e"), "{err}");
    let (ok, _, err) = copper(&["perft", "-v", "chess", "1"]);
    assert!(!ok && err.contains("chess"), "{err}");
    let (ok, _, err) = copper(&["perft", "-v", "pocket-copper", "-o", "start=nowhere", "1"]);
    assert!(!ok && err.contains("nowhere"), "{err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn variant_command_lists_pieces_and_options() {
    let (ok, out, _) = copper(&["variant", "-v", "pocket-copper"]);
    assert!(ok);
    for s in ["Copper", "Side Mover", "promoted-knight=tables", "start=seed", "both-in-hand"] {
        assert!(out.contains(s), "{s} missing: {out}");
    }
}

#[test]
fn tune_runs_resumes_and_writes_the_tuned_spec() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let rows = dir.path().join("rows.txt");
    std::fs::write(&rows, "# the Rook\nboard.rook, 1000, 500, 1500, 50, 0.1\n").unwrap();
    let args = |pairs: &'static str| {
        vec![
            "tune".to_string(),
            "-v".into(),
            "minishogi".into(),
            "--player".into(),
            "alphabeta,depth=1".into(),
            "--params-file".into(),
            rows.display().to_string(),
            "--param".into(),
            "hand.silver,550,200,900,40,0.1".into(),
            "--pairs".into(),
            pairs.into(),
            "--threads".into(),
            "1".into(),
            "--random-plies".into(),
            "2".into(),
            "--out".into(),
            out.display().to_string(),
            "--quiet".into(),
        ]
    };
    let run = |a: Vec<String>| copper(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let (ok, stdout, err) = run(args("4"));
    assert!(ok, "{err}");
    assert!(stdout.contains("board.rook") && stdout.contains("hand.silver") && stdout.contains("tuned player: alphabeta,depth=1,hand.silver="), "{stdout}");
    let spec = std::fs::read_to_string(out.join("tuned.txt")).unwrap();
    assert!(spec.contains("board.rook=") && spec.contains("hand.silver="), "{spec}");
    assert!(out.join("path-board_rook.svg").exists() && out.join("path-hand_silver.svg").exists());
    // Another schedule in the same directory is refused, naming what differs.
    let (ok, _, err) = run(args("6"));
    assert!(!ok && err.contains("other pairs"), "{err}");
    // A bad row names itself.
    let (ok, _, err) = copper(&["tune", "--player", "alphabeta,depth=1", "--param", "board.rook,1000,1500,500,50,0.1", "--out", "/nonexistent/x"]);
    assert!(!ok && err.contains("--param") && err.contains("below max"), "{err}");
}

/// Numeric flags that do not fit are refused naming the flag, before any game: they used
/// to be cast (`-3` moves became 0, a centipawn count past i32 wrapped, a timeout in
/// seconds overflowed when made milliseconds).
#[test]
fn numeric_flags_that_do_not_fit_are_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let out = out.to_str().unwrap();
    for (flags, says) in [
        (&["--resign=-3,400"][..], "--resign: MOVES = -3"),
        (&["--resign", "3,4294967296"][..], "--resign: CP = 4294967296"),
        (&["--draw=100,-1,20"][..], "--draw: MOVES = -1"),
        (&["--draw", "4294967296,5,20"][..], "--draw: AFTER_PLY = 4294967296"),
        (&["--draw=100,5,-20"][..], "--draw: CP = -20"),
        (&["--move-timeout", "18446744073709551615"][..], "--move-timeout 18446744073709551615"),
        (&["--rounds=-1"][..], "--rounds"),
        (&["--threads", "1.5"][..], "--threads"),
    ] {
        let mut args = vec!["arena", "--quiet", "-v", "minishogi", "-p", "random", "-p", "greedy", "--out", out];
        args.extend_from_slice(flags);
        let (ok, _, err) = copper(&args);
        assert!(!ok, "{flags:?} was accepted");
        assert!(err.contains(says), "{flags:?}: {err}");
    }
    assert!(!std::path::Path::new(out).join("results.jsonl").exists(), "a game was played");
}

/// A model directory whose path holds the player spec's separators (`,` and `=`), given
/// to `copper usi --model` and, quoted, to `copper arena -p`.
#[test]
fn a_model_path_with_commas_and_equals_signs_works() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("runs,a=b").join("gen=1,sims=9");
    neteval::save_random_model(rules::Variant::builtin("minishogi").unwrap(), &m, 1, 8, 3).unwrap();
    let m_text = m.to_str().unwrap();

    // The USI engine: loads that model and answers.
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_copper"))
        .args(["usi", "-v", "minishogi", "--model", m_text])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"usi\nisready\nposition startpos\ngo nodes 8\n").unwrap();
    stdin.flush().unwrap();
    // Up to the answer (an engine that failed to load closes its output first), then quit.
    let mut said = Vec::new();
    for line in std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap())) {
        let line = line.unwrap();
        let done = line.starts_with("bestmove");
        said.push(line);
        if done {
            break;
        }
    }
    let _ = stdin.write_all(b"quit\n");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{said:?}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.last().is_some_and(|l| l.starts_with("bestmove ") && l != "bestmove resign"), "{said:?}");
    assert!(said.iter().any(|l| l.contains(" nodes 8 ")), "{said:?}");

    // The arena: the directory quoted in the spec (the rule of players/src/spec.rs).
    let t = dir.path().join("t");
    let spec = format!("checkpoint:\"{m_text}\",sims=4");
    let (ok, table, err) =
        copper(&["arena", "--quiet", "-v", "minishogi", "--rounds", "1", "--threads", "1", "-p", &spec, "-p", "random", "--out", t.to_str().unwrap()]);
    assert!(ok, "{err}");
    // Named after the directory, `gen=1,sims=9`, not cut at its comma.
    assert!(table.contains("gen=1,sims=9-nodes=4"), "{table}");
    assert_eq!(std::fs::read_to_string(t.join("results.jsonl")).unwrap().lines().count(), 2);
    // The tournament's page, written as it ends (viewer/tests/browser.rs checks what it shows).
    let page = std::fs::read_to_string(t.join("index.html")).expect("copper arena writes its page");
    assert!(page.contains("gen=1,sims=9-nodes=4"), "the page names the player");
}
