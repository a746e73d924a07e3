//! Tournaments as a user runs them: baselines and a checkpoint in Pocket Shogi Copper and
//! Hand shogi, every game's record replayed by the rules engine, results resumed after a
//! kill without losing or double-counting a game, and misbehaving engines that lose their
//! games while the tournament finishes.

use arena::runner::JobResult;
use arena::tournament::{read_results, run, Mode, OpeningsConfig, SprtConfig, TournamentConfig};
use arena::Ending;
use rules::{Color, Outcome, Variant};
use std::path::{Path, PathBuf};

/// A checkpoint with random weights: a valid model that plays legal moves.
fn tiny_model(variant: &'static Variant, dir: &Path) {
    neteval::save_random_model(variant, dir, 1, 8, 7).unwrap();
}

fn config(variant: &str, players: &[&str], out: &Path) -> TournamentConfig {
    let mut c = TournamentConfig::new(players.iter().map(|s| s.to_string()).collect());
    c.variant = variant.into();
    c.mode = Mode::RoundRobin;
    c.rounds = 1;
    c.threads = 2;
    c.games_in_flight = 4;
    c.max_plies = 80;
    c.openings = OpeningsConfig { file: None, starts: Vec::new(), random_plies: 2 };
    c.out_dir = out.to_path_buf();
    c
}

/// Every hand replays move by move in the rules engine to the recorded result.
fn check_records(results: &[JobResult], variant: &'static Variant) {
    for r in results {
        assert!(!r.hands.is_empty());
        for h in &r.hands {
            let game = h.record.to_game(variant).unwrap_or_else(|e| panic!("game {}: {e}", r.job.id));
            if let Ending::Rules(reason) = h.end.ending {
                let res = game.result().unwrap_or_else(|| panic!("game {} ended by {reason:?} but replays unfinished", r.job.id));
                assert_eq!((res.outcome, res.reason), (h.end.outcome, reason));
            } else {
                assert!(game.result().is_none(), "game {} ended by the arena ({:?}) but the rules had ended it", r.job.id, h.end);
            }
            assert!(game.ply() <= 80);
        }
    }
}

#[test]
fn pocket_copper_round_robin_of_baselines_and_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let v = Variant::builtin("pocket-copper").unwrap();
    let model_dir = dir.path().join("gen-0001");
    tiny_model(v, &model_dir);
    let ckpt = format!("checkpoint:{},sims=4,name=tiny", model_dir.display());
    let players = ["random", "greedy", "alphabeta,depth=1", ckpt.as_str()];
    let out = dir.path().join("t");
    let report = run(&config("pocket-copper", &players, &out), false).unwrap();
    // 4 players: 6 pairings, 1 opening each, both colours.
    assert_eq!(report.games, 12);
    assert_eq!(report.pairings.len(), 6);
    for p in &report.pairings {
        assert_eq!(p.games, 2);
        assert_eq!(p.wins + p.draws + p.losses, 2);
        assert_eq!(p.as_black.iter().sum::<u64>(), 1);
        assert_eq!(p.pentanomial.iter().sum::<u64>(), 1, "one complete pair");
    }
    assert_eq!(report.ratings.entries.len(), 4);
    let results = read_results(&out.join("results.jsonl")).unwrap();
    assert_eq!(results.len(), 12);
    check_records(&results, v);
    for f in ["summary.json", "pairings.csv", "ratings.csv", "ratings.svg", "tournament.toml"] {
        assert!(out.join(f).exists(), "{f}");
    }
    // Each player met every other with both colours.
    for a in 0..4 {
        for b in 0..4 {
            if a != b {
                assert_eq!(results.iter().filter(|r| r.job.first == a && r.job.second == b).count(), 1);
            }
        }
    }
}

#[test]
fn hand_shogi_is_scored_by_matches_of_hands() {
    let dir = tempfile::tempdir().unwrap();
    let v = Variant::builtin("hand-shogi").unwrap();
    let model_dir = dir.path().join("gen-0001");
    tiny_model(v, &model_dir);
    let ckpt = format!("checkpoint:{},sims=4,name=tiny", model_dir.display());
    let out = dir.path().join("t");
    let mut c = config("hand-shogi", &["alphabeta,depth=1", "random", ckpt.as_str()], &out);
    c.max_hands = 4;
    run(&c, false).unwrap();
    let results = read_results(&out.join("results.jsonl")).unwrap();
    assert_eq!(results.len(), 6);
    check_records(&results, v);
    for r in &results {
        // Colours alternate hand by hand, the first player Black in the first hand.
        for (k, h) in r.hands.iter().enumerate() {
            assert_eq!(h.first_is_black, k % 2 == 0);
        }
        // Replay the match: hand winners by player (0 = first), two in a row wins.
        let winners: Vec<Option<usize>> = r
            .hands
            .iter()
            .map(|h| match h.end.outcome {
                Outcome::Draw => None,
                Outcome::Win(c) => Some(if (c == Color::Black) == h.first_is_black { 0 } else { 1 }),
            })
            .collect();
        let n = winners.len();
        let last_two_same = n >= 2 && winners[n - 1].is_some() && winners[n - 1] == winners[n - 2];
        if last_two_same {
            let expected = if winners[n - 1] == Some(0) { 1.0 } else { 0.0 };
            assert_eq!(r.first_score, expected, "{winners:?}");
            // No earlier pair of consecutive wins by one player.
            assert!(!winners[..n - 1].windows(2).any(|w| w[0].is_some() && w[0] == w[1]), "{winners:?}");
        } else {
            assert_eq!(n, 4, "a match without two wins in a row runs to max_hands: {winners:?}");
            assert_eq!(r.first_score, 0.5);
        }
    }
}

#[test]
fn an_interrupted_tournament_resumes_without_losing_or_double_counting() {
    let dir = tempfile::tempdir().unwrap();
    let v = Variant::builtin("minishogi").unwrap();
    let out = dir.path().join("t");
    let mut c = config("minishogi", &["random", "greedy"], &out);
    c.mode = Mode::Match;
    c.rounds = 3;
    run(&c, false).unwrap();
    let path = out.join("results.jsonl");
    let full = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    assert_eq!(lines.len(), 6);
    // A kill after two games, in the middle of writing the third line.
    let cut = format!("{}\n{}\n{}", lines[0], lines[1], &lines[2][..lines[2].len() / 2]);
    std::fs::write(&path, &cut).unwrap();
    let kept: Vec<u64> = read_results(&path).unwrap().iter().map(|r| r.job.id).collect();
    assert_eq!(kept.len(), 2);
    let report = run(&c, false).unwrap();
    assert_eq!(report.games, 6);
    let after = read_results(&path).unwrap();
    let mut ids: Vec<u64> = after.iter().map(|r| r.job.id).collect();
    ids.sort();
    assert_eq!(ids, vec![0, 1, 2, 3, 4, 5]);
    assert!(std::fs::read_to_string(&path).unwrap().starts_with(&format!("{}\n{}\n", lines[0], lines[1])), "finished games are kept as written");
    check_records(&after, v);
    // Extended by one round: two more games, the first six untouched.
    c.rounds = 4;
    let report = run(&c, false).unwrap();
    assert_eq!(report.games, 8);
    // Shortened to two rounds: the games of rounds 3 and 4 stay in the file, uncounted.
    c.rounds = 2;
    let report = run(&c, false).unwrap();
    assert_eq!(report.games, 4);
    assert_eq!(read_results(&path).unwrap().len(), 8);
    c.rounds = 4;
    assert_eq!(run(&c, false).unwrap().games, 8);
    // A different tournament in the same directory is refused, naming what differs.
    let mut other = c.clone();
    other.players = vec!["random".into(), "alphabeta,depth=1".into()];
    let e = run(&other, false).unwrap_err().to_string();
    assert!(e.contains("different tournament (players differ)"), "{e}");
    let mut other = c.clone();
    other.adjudication.resign_moves = 3;
    other.adjudication.resign_cp = 500;
    other.time_margin_ms += 1;
    let e = run(&other, false).unwrap_err().to_string();
    assert!(e.contains("(adjudication, time_margin_ms differ)"), "{e}");
    let mut other = c.clone();
    other.sprt = Some(SprtConfig { elo0: 0.0, elo1: 10.0, alpha: 0.05, beta: 0.05 });
    assert!(run(&other, false).unwrap_err().to_string().contains("(sprt differ)"));
    // Ladder pairings without neighbours number their games otherwise: refused too.
    let mut other = c.clone();
    other.mode = Mode::Ladder;
    other.anchors = vec!["greedy".into()];
    other.neighbours = false;
    let e = run(&other, false).unwrap_err().to_string();
    assert!(e.contains("(mode, anchors, neighbours differ)"), "{e}");
}

/// An SPRT that equal players settle at once (H0: 500 Elo, H1: 1000 Elo better): the
/// match stops long before its rounds, keeps the decision, and stays stopped on resume.
#[test]
fn an_sprt_stops_a_match_and_keeps_its_decision() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let mut c = config("minishogi", &["random", "random,name=random2"], &out);
    c.mode = Mode::Match;
    c.rounds = 30;
    c.sprt = Some(SprtConfig { elo0: 500.0, elo1: 1000.0, alpha: 0.05, beta: 0.05 });
    let report = run(&c, false).unwrap();
    let sprt = report.pairings[0].sprt.clone().unwrap();
    let stop = sprt.stopped.clone().unwrap();
    assert_eq!((sprt.decision.as_str(), stop.decision.as_str()), ("accept-h0", "accept-h0"));
    assert!(stop.llr <= sprt.lower && stop.games <= report.games && report.games < 60, "{stop:?} after {} games", report.games);
    // Games in flight at the stop were finished, and counted.
    assert_eq!(read_results(&out.join("results.jsonl")).unwrap().len() as u64, report.games);
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["pairings"][0]["sprt"]["stopped"]["decision"], "accept-h0");
    assert_eq!(summary["pairings"][0]["sprt"]["stopped"]["games"], stop.games);
    let text = arena::report::table(&report);
    assert!(text.contains(&format!("accept-h0 at LLR {:.3}", stop.llr)) && !text.contains("continue"), "{text}");
    // Resumed: the replay finds the same stop, and no game is played.
    let again = run(&c, false).unwrap();
    assert_eq!(again.games, report.games);
    assert_eq!(again.pairings[0].sprt.as_ref().unwrap().stopped.as_ref(), Some(&stop));
}

/// Random openings at least as long as the game are all over before they start: the
/// tournament is refused up front, naming both values, instead of searching forever for
/// one that is not. Run on a thread so that a hang fails rather than stalls.
#[test]
fn random_openings_as_long_as_the_game_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (random_plies, max_plies) in [(6, 4), (4, 4), (256, 0)] {
        let mut c = config("minishogi", &["random", "random,name=random2"], &dir.path().join(format!("t{random_plies}-{max_plies}")));
        c.openings.random_plies = random_plies;
        c.max_plies = max_plies;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(run(&c, false).map(|r| r.games).map_err(|e| e.to_string())));
        let e = rx.recv_timeout(std::time::Duration::from_secs(120)).expect("the tournament hung").unwrap_err();
        let limit = if max_plies == 0 { 256 } else { max_plies };
        assert!(e.contains(&format!("random_plies ({random_plies})")) && e.contains(&format!("({limit})")), "{e}");
    }
}

/// A ladder pairs each generation with the next and with every anchor, the anchors with
/// each other; without neighbours only the anchor pairings are left, and a config asking
/// for that outside a ladder is refused.
#[test]
fn a_ladder_pairs_neighbours_and_anchors_and_without_neighbours_anchors_only() {
    let mut c = config("pocket-copper", &["random,name=g0", "random,name=g1", "random,name=g2", "greedy", "random,name=r"], Path::new("unused"));
    c.mode = Mode::Ladder;
    c.anchors = vec!["greedy".into(), "r".into()];
    c.validate().unwrap();
    assert_eq!(c.pairings(), [(0, 1), (1, 2), (0, 3), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]);
    c.neighbours = false;
    c.validate().unwrap();
    assert_eq!(c.pairings(), [(0, 3), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]);
    c.mode = Mode::Gauntlet;
    assert!(c.validate().unwrap_err().to_string().contains("neighbours = false"));
}

fn engine(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../usi/tests/engines").join(name)
}

#[test]
fn misbehaving_engines_lose_their_games_and_the_tournament_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let v = Variant::builtin("shogi").unwrap();
    let illegal = format!("usi:{},name=illegal", engine("illegal.py").display());
    let crash = format!("usi:{},name=crash", engine("crash.py").display());
    let hang = format!("usi:{},name=hang", engine("hang.py").display());
    let out = dir.path().join("t");
    let mut c = config("shogi", &["random", illegal.as_str(), crash.as_str(), hang.as_str()], &out);
    c.mode = Mode::Gauntlet;
    c.limit = Some("nodes=100".into());
    c.move_timeout_ms = 700;
    c.games_in_flight = 2;
    let report = run(&c, false).unwrap();
    assert_eq!(report.games, 6);
    let results = read_results(&out.join("results.jsonl")).unwrap();
    check_records(&results, v);
    for r in &results {
        let h = &r.hands[0];
        let bad = if r.first == "random" { &r.second } else { &r.first };
        let random_score = if r.first == "random" { r.first_score } else { 1.0 - r.first_score };
        assert_eq!(random_score, 1.0, "{bad} must lose: {:?}", h.end);
        let expected = match bad.as_str() {
            "illegal" => Ending::IllegalMove,
            "crash" => Ending::Crash,
            "hang" => Ending::TimeForfeit,
            other => panic!("{other}"),
        };
        assert_eq!(h.end.ending, expected, "{bad}");
        let incident = h.incident.as_deref().unwrap_or_default();
        assert!(
            incident.contains(bad.as_str()) && (incident.contains(" b ") || incident.contains(" w ")),
            "the incident names the engine and the position: {incident}"
        );
    }
    // Both games of each bad engine were played: it was restarted after each failure.
    for name in ["illegal", "crash", "hang"] {
        assert_eq!(results.iter().filter(|r| r.first == name || r.second == name).count(), 2);
    }
}

/// The live view: a hook sees every game in the order it was recorded, each time with the
/// report of all results so far, and `live.txt` is left holding the final counts and the
/// same table the tournament returns. Counts only, no timing.
#[test]
fn a_live_view_follows_every_game_and_ends_at_the_final_results() {
    use arena::live::{write_live_text, Progress, LIVE_FILE};
    use std::sync::Mutex;
    let dir = tempfile::tempdir().unwrap();
    let mut c = config("minishogi", &["random", "alphabeta,depth=1", "greedy"], dir.path());
    c.rounds = 2;
    let seen: Mutex<Vec<(u64, u64, u64, u64)>> = Mutex::new(Vec::new());
    let count = |p: &Progress<'_>| {
        seen.lock().unwrap().push((p.done, p.total, p.played, p.report.games));
        Ok(())
    };
    let rep = arena::tournament::run_with(&c, false, &[&write_live_text, &count]).unwrap();
    // 3 pairings × 2 rounds × 2 colours, once before the first game and after each.
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen, (0..=12).map(|n| (n, 12, n, n)).collect::<Vec<_>>());
    let live = std::fs::read_to_string(dir.path().join(LIVE_FILE)).unwrap();
    assert!(live.starts_with("games 12/12, "), "{live}");
    assert!(live.ends_with(&arena::report::table(&rep)), "{live}\n---\n{}", arena::report::table(&rep));
    assert_eq!(rep.games, 12);
    let results = read_results(&dir.path().join("results.jsonl")).unwrap();
    assert_eq!(results.len(), 12);
    // Every rewrite went through a temporary file that was renamed: none is left.
    let names: Vec<String> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains("tmp")), "{names:?}");

    // Extended by a round (`copper arena` runs `run`): the file counts the resumed games
    // too, and this invocation's.
    c.rounds = 3;
    let rep = run(&c, false).unwrap();
    let live = std::fs::read_to_string(dir.path().join(LIVE_FILE)).unwrap();
    assert!(live.starts_with("games 18/18, ") && live.contains("(6 played in this run)"), "{live}");
    assert!(live.ends_with(&arena::report::table(&rep)), "{live}");
}
