//! Game records: JSON Lines round trips (a killed writer's truncated last line
//! included), the exact CSA and KIF text of a game written out by hand, and cshogi — an
//! independent reader (PyPI) — reading our CSA and KIF files back with the same moves,
//! start and winner, for games that end by checkmate, resignation, repetition, the
//! length limit, time, an illegal move, perpetual check, declaration and a crash.
//!
//! cshogi is installed into `.venv-test/` by `scripts/install-cshogi.sh` (needs PyPI);
//! when it cannot be, the cshogi tests fail saying so.

use gamerecords::{self as record, append_jsonl, read_jsonl, Ending, GameEnd, GameRecord, RecordError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rules::{Color, Game, Outcome, Position, TerminationReason, Variant};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn shogi() -> &'static Variant {
    Variant::builtin("shogi").unwrap()
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// A game of standard shogi from `sfen` (the start when `None`) through `moves`.
fn play(sfen: Option<&str>, max_plies: Option<u32>, moves: &[&str]) -> Game {
    let v = shogi();
    let start = match sfen {
        Some(s) => Position::from_sfen(v, s).unwrap(),
        None => Position::start(v),
    };
    let mut g = Game::new(start, max_plies);
    for (i, m) in moves.iter().enumerate() {
        g.play_usi(m).unwrap_or_else(|e| panic!("ply {}: {e}", i + 1));
    }
    g
}

/// Random legal moves from the start, at most `plies` of them (fewer if the rules end
/// the game first).
fn random_game(seed: u64, max_plies: Option<u32>, plies: usize) -> Game {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut g = Game::new(Position::start(shogi()), max_plies);
    while g.ply() < plies && !g.is_over() {
        let moves = g.legal_moves();
        let m = moves[rng.random_range(0..moves.len())];
        g.play(m).unwrap();
    }
    g
}

/// The side to move loses by `ending`.
fn loss_on_move(g: &Game, ending: Ending) -> Option<GameEnd> {
    Some(GameEnd::loss_of(g.position().side_to_move(), ending))
}

/// A record with everything filled in: times (by ply, some over a minute) and comments.
fn full_record(g: &Game, end: Option<GameEnd>, name: &str) -> GameRecord {
    let mut r = GameRecord::from_game(g, end, &format!("{name} black"), &format!("{name} white"));
    r.event = Some("records test".into());
    r.round = Some(1);
    r.opening_index = Some(0);
    r.start_time = Some("2024-05-01T09:08:07Z".into());
    r.move_times_ms = (0..r.moves.len() as u64).map(|i| (i * 7919) % 90_000).collect();
    r.comments = (0..r.moves.len()).map(|i| (i % 3 == 0).then(|| format!("{:+}", i as i64 * 13 - 200))).collect();
    r
}

// ---------------------------------------------------------------------------------
// cshogi

/// The python that has cshogi, installing it on first use.
fn python() -> &'static Path {
    static PY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let found = PY.get_or_init(|| {
        let script = root().join("scripts/install-cshogi.sh");
        let out = Command::new("bash").arg(&script).output().map_err(|e| format!("could not run {}: {e}", script.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!("{} failed ({}):\n{}{}", script.display(), out.status, stdout, String::from_utf8_lossy(&out.stderr)));
        }
        let path = PathBuf::from(stdout.lines().last().unwrap_or("").trim());
        if !path.exists() {
            return Err(format!("{} printed no python path (got '{stdout}')", script.display()));
        }
        Ok(path)
    });
    match found {
        Ok(p) => p,
        Err(e) => panic!(
            "cshogi, the independent reader these tests check our CSA and KIF records with, is not \
             available, so these tests cannot run: {e}\nIt installs from PyPI with scripts/install-cshogi.sh \
             (into .venv-test/); without network access to PyPI these tests fail."
        ),
    }
}

/// cshogi's reading of each file (see `read_records.py`).
fn cshogi_read(paths: &[PathBuf]) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/read_records.py");
    let out = Command::new(python()).arg(&script).args(paths).output().expect("run read_records.py");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 from read_records.py");
    let read: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(
        read.len(),
        paths.len(),
        "read_records.py answered {} of {} files ({}):\n{stdout}{}",
        read.len(),
        paths.len(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    read
}

/// The first three SFEN fields after our own parse (cshogi orders hands its own way and
/// CSA has no move number).
fn position_key(sfen: &str) -> String {
    let p = Position::from_sfen(shogi(), sfen).unwrap_or_else(|e| panic!("'{sfen}': {e}"));
    p.to_sfen().split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// A game to write and have cshogi read back.
struct Case {
    name: &'static str,
    record: GameRecord,
    /// The winner cshogi should find: "black", "white", "draw", or None.
    csa_win: Option<&'static str>,
    kif_win: Option<&'static str>,
    /// cshogi's KIF reader knows the standard start and handicaps only (not board
    /// diagrams): for other starts only the winner is compared.
    kif_start_readable: bool,
}

fn win_of(end: Option<GameEnd>) -> Option<&'static str> {
    end.map(|e| match e.outcome {
        Outcome::Win(Color::Black) => "black",
        Outcome::Win(Color::White) => "white",
        Outcome::Draw => "draw",
    })
}

impl Case {
    /// A case where both readers should find the record's own result.
    fn plain(name: &'static str, record: GameRecord) -> Case {
        let win = win_of(record.end);
        Case { name, record, csa_win: win, kif_win: win, kif_start_readable: true }
    }
}

/// Writes each case as `.csa` and `.kifu` (and `.kif`, first line declaring UTF-8),
/// has cshogi read them all, and compares; panics listing every difference.
fn check_with_cshogi(cases: &[Case]) {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let base = dir.path().join(format!("{i:02}-{}", c.name));
        let csa = record::csa::to_csa(&c.record).unwrap_or_else(|e| panic!("{}: CSA: {e}", c.name));
        let kif = record::kif::to_kif(&c.record).unwrap_or_else(|e| panic!("{}: KIF: {e}", c.name));
        for (ext, text) in [("csa", &csa), ("kifu", &kif), ("kif", &kif)] {
            let p = base.with_extension(ext);
            std::fs::write(&p, text).unwrap();
            paths.push(p);
        }
    }
    let read = cshogi_read(&paths);
    let mut problems = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let r = &c.record;
        let n = r.moves.len();
        for got in &read[3 * i..3 * i + 3] {
            let path = got["path"].as_str().unwrap();
            let format = if path.ends_with(".csa") { "CSA" } else { "KIF" };
            let mut bad = |what: String| problems.push(format!("{} ({}): {what}", c.name, path.rsplit('/').next().unwrap()));
            if let Some(e) = got.get("error") {
                bad(format!("cshogi could not read it: {e}"));
                continue;
            }
            let want_win = if format == "CSA" { c.csa_win } else { c.kif_win };
            if got["win"].as_str() != want_win {
                bad(format!("winner {} (ending {}), expected {want_win:?}", got["win"], got["endgame"]));
            }
            if format == "KIF" && !c.kif_start_readable {
                continue;
            }
            let moves: Vec<String> = got["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
            if moves != r.moves {
                let at = moves.iter().zip(&r.moves).position(|(a, b)| a != b).unwrap_or(moves.len().min(n));
                bad(format!("moves differ from ply {} ({} read, {} written)", at + 1, moves.len(), n));
            }
            let sfen = got["sfen"].as_str().unwrap();
            if position_key(sfen) != position_key(&r.start_sfen) {
                bad(format!("start '{sfen}', expected '{}'", r.start_sfen));
            }
            let names: Vec<&str> = got["names"].as_array().unwrap().iter().map(|v| v.as_str().unwrap_or("")).collect();
            if names != [r.black.as_str(), r.white.as_str()] {
                bad(format!("names {names:?}"));
            }
            if !r.move_times_ms.is_empty() {
                let times: Vec<u64> = got["times"].as_array().unwrap().iter().map(|t| t.as_u64().unwrap()).collect();
                let want: Vec<u64> = r.move_times_ms.iter().map(|ms| ms / 1000).collect();
                if times.get(..n) != Some(&want[..]) {
                    bad(format!("times {times:?}, expected {want:?}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "cshogi read our records differently:\n  {}", problems.join("\n  "));
}

/// 11 plies to checkmate from the start: captures, a drop, and the bishop declining
/// promotion twice (`８八角不成` style moves, 不成 in KIF).
const MATE_11: [&str; 11] = ["5i4h", "8b7b", "7g7f", "5c5d", "8h3c", "3a4b", "5g5f", "8c8d", "3c4b", "5a6b", "S*5c"];

#[test]
fn cshogi_reads_checkmate() {
    let g = play(None, None, &MATE_11);
    let end = record::rules_end(&g);
    assert_eq!(end, Some(GameEnd { outcome: Outcome::Win(Color::Black), ending: Ending::Rules(TerminationReason::Checkmate) }));
    let r = full_record(&g, end, "mate");
    let kif = record::kif::to_kif(&r).unwrap();
    assert!(kif.contains("   5 ３三角不成(88) ") && kif.contains("   9 ４二角不成(33) "), "{kif}");
    assert!(kif.contains("  12 詰み ") && kif.ends_with("まで11手で先手の勝ち\n"), "{kif}");
    assert!(record::csa::to_csa(&r).unwrap().contains("\n+0053GI\nT"));
    check_with_cshogi(&[Case::plain("checkmate", r)]);
}

#[test]
fn cshogi_reads_promotions_drops_captures_and_declined_promotion() {
    // 8h2b+ captures and promotes, 3a2b and 5a4b recapture (同), B*3c drops with check,
    // 3c4b (同) captures declining promotion (不成), B*5e is White's drop; Black resigns.
    let moves = ["7g7f", "3c3d", "8h2b+", "3a2b", "B*3c", "4a4b", "3c4b", "5a4b", "2g2f", "B*5e"];
    let g = play(None, None, &moves);
    let r = full_record(&g, loss_on_move(&g, Ending::Resignation), "mixed");
    let kif = record::kif::to_kif(&r).unwrap();
    for line in ["２二角成(88)", "同　銀(31)", "３三角打", "同　角不成(33)", "同　玉(51)", "５五角打", "投了"] {
        assert!(kif.contains(line), "{line} in\n{kif}");
    }
    let csa = record::csa::to_csa(&r).unwrap();
    for line in ["+8822UM", "-3122GI", "+0033KA", "+3342KA", "-5142OU", "-0055KA", "%TORYO"] {
        assert!(csa.contains(&format!("\n{line}\n")), "{line} in\n{csa}");
    }
    check_with_cshogi(&[Case::plain("mixed", r)]);
}

#[test]
fn cshogi_reads_every_ending() {
    let mut cases = Vec::new();

    // Random games to ~150 plies, ended by the arena (or by the rules, if first).
    let arena_endings = [Ending::Resignation, Ending::TimeForfeit, Ending::IllegalMove, Ending::AdjudicatedWin, Ending::Resignation, Ending::TimeForfeit];
    for (seed, ending) in arena_endings.into_iter().enumerate() {
        let g = random_game(seed as u64 + 1, None, 150);
        let end = record::rules_end(&g).or_else(|| loss_on_move(&g, ending));
        let mut r = full_record(&g, end, "random");
        if seed % 2 == 1 {
            // Some records without times or comments.
            r.move_times_ms.clear();
            r.comments.clear();
        }
        cases.push(Case::plain(["resign", "time", "illegal", "adjudicated", "resign2", "time2"][seed], r));
    }

    // Fourfold repetition from the start: a draw.
    let shuffle = ["2h3h", "8b7b", "3h2h", "7b8b"];
    let g = play(None, None, &shuffle.repeat(3));
    assert_eq!(g.result().map(|r| r.reason), Some(TerminationReason::Repetition));
    cases.push(Case::plain("repetition", full_record(&g, record::rules_end(&g), "rep")));

    // The length limit: a draw.
    let g = random_game(99, Some(40), 1000);
    assert_eq!(g.result().map(|r| r.reason), Some(TerminationReason::MaxPlies));
    cases.push(Case::plain("max-plies", full_record(&g, record::rules_end(&g), "max")));

    // A drawn adjudication.
    let g = random_game(7, None, 60);
    cases.push(Case::plain("adjudicated-draw", full_record(&g, Some(GameEnd { outcome: Outcome::Draw, ending: Ending::AdjudicatedDraw }), "adj")));

    // Perpetual check (Black's rook checks on files 1 and 2; White's king steps 1a-2a):
    // Black loses, and it is Black's move when the fourth repetition arrives.
    let perpetual = ["2e1e", "1a2a", "1e2e", "2a1a"].repeat(3);
    let g = play(Some("8k/9/9/6N2/7R1/9/9/9/K8 b - 1"), None, &perpetual);
    let end = record::rules_end(&g);
    assert_eq!(end, Some(GameEnd { outcome: Outcome::Win(Color::White), ending: Ending::Rules(TerminationReason::PerpetualCheck) }));
    let mut r = full_record(&g, end, "perpetual");
    r.move_times_ms.clear();
    cases.push(Case { kif_start_readable: false, ..Case::plain("perpetual-check", r) });

    // The 27-point declaration: Black's gold enters the camp (the tenth piece there),
    // White moves, and Black, on move, wins.
    let g = play(Some("9/SS7/RRBBKGGG1/8G/9/9/9/9/4k4 b 2P 1"), None, &["1d1c", "5i5h"]);
    let end = record::rules_end(&g);
    assert_eq!(end, Some(GameEnd { outcome: Outcome::Win(Color::Black), ending: Ending::Rules(TerminationReason::Declaration) }));
    cases.push(Case { kif_start_readable: false, ..Case::plain("declaration", full_record(&g, end, "decl")) });

    // A crash: CSA can only say the game was interrupted (%CHUDAN), which cshogi takes
    // for a draw; KIF's summary line still names the winner.
    let g = random_game(11, None, 30);
    let r = full_record(&g, loss_on_move(&g, Ending::Crash), "crash");
    let winner = win_of(r.end);
    cases.push(Case { csa_win: Some("draw"), kif_win: winner, kif_start_readable: true, name: "crash", record: r });

    // An unfinished game.
    let g = random_game(12, None, 20);
    let r = full_record(&g, None, "unfinished");
    cases.push(Case { csa_win: Some("draw"), kif_win: None, kif_start_readable: true, name: "unfinished", record: r });

    // A handicap start (KIF: 手合割：香落ち, which cshogi knows).
    let lance = "lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1";
    let g = play(Some(lance), None, &["5c5d", "7g7f", "8b5b", "2g2f"]);
    let r = full_record(&g, loss_on_move(&g, Ending::Resignation), "handicap");
    cases.push(Case::plain("handicap", r));

    // Every ending the random games reached is in the list above.
    let reasons: Vec<String> = cases.iter().map(|c| c.record.end.map_or("unfinished".into(), |e| e.name().to_string())).collect();
    for needed in ["resignation", "time-forfeit", "illegal-move", "repetition", "max-plies", "perpetual-check", "declaration", "crash"] {
        assert!(reasons.iter().any(|r| r == needed), "no {needed} game among {reasons:?}");
    }
    check_with_cshogi(&cases);
}

#[test]
fn cshogi_reads_random_games_that_end_in_checkmate() {
    // Random play that takes a mate in one when it has one: games of all lengths.
    let mut cases = Vec::new();
    let mut seed = 1000;
    while cases.len() < 4 {
        seed += 1;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut g = Game::new(Position::start(shogi()), None);
        while g.ply() < 300 && !g.is_over() {
            let moves = g.legal_moves();
            let mating = moves.iter().copied().find(|&m| {
                let mut h = g.clone();
                h.play(m).unwrap();
                h.result().is_some_and(|r| r.reason == TerminationReason::Checkmate)
            });
            let m = mating.unwrap_or_else(|| moves[rng.random_range(0..moves.len())]);
            g.play(m).unwrap();
        }
        if g.result().is_some_and(|r| r.reason == TerminationReason::Checkmate) {
            cases.push(Case::plain("random-mate", full_record(&g, record::rules_end(&g), "rmate")));
        }
        assert!(seed < 1100, "too few random games ended in checkmate");
    }
    check_with_cshogi(&cases);
}

// ---------------------------------------------------------------------------------
// Exact text, derived by hand

fn three_moves() -> GameRecord {
    let g = play(None, None, &["7g7f", "3c3d", "8h2b+"]);
    let mut r = GameRecord::from_game(&g, Some(GameEnd::loss_of(Color::White, Ending::Resignation)), "Sente Engine", "Gote Engine");
    r.event = Some("Test Cup".into());
    r.round = Some(7);
    r.opening_index = Some(3);
    r.start_time = Some("2024-05-01T12:34:56+09:00".into());
    r.move_times_ms = vec![12_345, 500, 61_000];
    r.comments = vec![Some("+35".into()), None, Some("mate +3".into())];
    r
}

#[test]
fn record_csa_text_of_a_three_move_game() {
    let expected = "'CSA encoding=UTF-8
V3.0
N+Sente Engine
N-Gote Engine
$EVENT:Test Cup
$START_TIME:2024/05/01 12:34:56
$MAX_MOVES:512
$JISHOGI:27
$NOTE:round 7, opening 3
PI
+
+7776FU
T12
'** +35
-3334FU
T0
+8822UM
T61
'** mate +3
%TORYO
'arena: resignation, black wins
";
    assert_eq!(record::csa::to_csa(&three_moves()).unwrap(), expected);
}

#[test]
fn record_kif_text_of_a_three_move_game() {
    let expected = "#KIF version=2.0 encoding=UTF-8
開始日時：2024/05/01 12:34:56
棋戦：Test Cup
備考：round 7, opening 3
手合割：平手
先手：Sente Engine
後手：Gote Engine
手数----指手---------消費時間--
   1 ７六歩(77)   ( 0:12/00:00:12)
*+35
   2 ３四歩(33)   ( 0:00/00:00:00)
   3 ２二角成(88) ( 1:01/00:01:13)
*mate +3
   4 投了         ( 0:00/00:00:00)
まで3手で先手の勝ち
";
    assert_eq!(record::kif::to_kif(&three_moves()).unwrap(), expected);
}

#[test]
fn record_usi_lines_of_a_three_move_game() {
    let r = three_moves();
    assert_eq!(r.usi_position(), "position startpos moves 7g7f 3c3d 8h2b+");
    assert_eq!(r.sfen_line(), "sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 moves 7g7f 3c3d 8h2b+");
}

#[test]
fn record_csa_and_kif_are_for_standard_shogi_only() {
    for name in ["pocket-copper", "hand-shogi", "minishogi"] {
        let v = Variant::builtin(name).unwrap();
        let r = GameRecord::from_game(&Game::new(Position::start(v), None), None, "a", "b");
        assert!(matches!(record::csa::to_csa(&r), Err(RecordError::Unsupported { .. })), "{name}");
        assert!(matches!(record::kif::to_kif(&r), Err(RecordError::Unsupported { .. })), "{name}");
    }
}

// ---------------------------------------------------------------------------------
// JSON Lines

#[test]
fn record_jsonl_round_trip_for_every_variant() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.jsonl");
    let mut written = Vec::new();
    for (i, name) in rules::BUILTIN.iter().enumerate() {
        let v = Variant::builtin(name).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(i as u64);
        let mut g = Game::new(Position::start(v), None);
        while g.ply() < 80 && !g.is_over() {
            let moves = g.legal_moves();
            g.play(moves[rng.random_range(0..moves.len())]).unwrap();
        }
        let end = record::rules_end(&g).or_else(|| loss_on_move(&g, Ending::AdjudicatedWin));
        let mut r = full_record(&g, end, name);
        r.black = "名人 \"quoted\"\nnew line".into();
        append_jsonl(&path, &r).unwrap();
        written.push((r, g));
    }
    let read = read_jsonl(&path).unwrap();
    assert_eq!(read.len(), written.len());
    for (r, (w, g)) in read.iter().zip(&written) {
        assert_eq!(r, w);
        // Replaying the record read back reaches the same position.
        let v = r.load_variant().unwrap();
        let back = r.to_game(v).unwrap();
        assert_eq!(back.position(), g.position(), "{}", r.variant);
        assert_eq!(back.result(), g.result());
    }

    // A writer killed mid-line: the partial last line is ignored...
    let mut bytes = std::fs::read(&path).unwrap();
    let whole = bytes.len();
    let extra = serde_json::to_string(&written[0].0).unwrap();
    bytes.extend_from_slice(&extra.as_bytes()[..extra.len() - 10]);
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(read_jsonl(&path).unwrap().len(), written.len());
    // ... a record cut short at the end is too ...
    std::fs::write(&path, &bytes[..whole - 30]).unwrap();
    assert_eq!(read_jsonl(&path).unwrap().len(), written.len() - 1);
    // ... and the next append starts on a clean line.
    append_jsonl(&path, &written[1].0).unwrap();
    let read = read_jsonl(&path).unwrap();
    assert_eq!(read.len(), written.len());
    assert_eq!(read.last(), Some(&written[1].0));

    // Damage in the middle is an error naming the file and the line.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = "{\"variant\":\"shogi\",";
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let e = read_jsonl(&path).unwrap_err();
    assert!(matches!(e, RecordError::CorruptLine { line: 2, .. }), "{e:?}");
    assert!(e.to_string().contains("games.jsonl line 2"), "{e}");
}

#[test]
fn record_replay_reports_the_ply_and_move() {
    let g = play(None, None, &["7g7f", "3c3d"]);
    let mut r = GameRecord::from_game(&g, None, "a", "b");
    r.moves.push("8h2b".into());
    r.moves.push("2b3a".into()); // ply 4 is White's, and 2b holds Black's bishop
    let e = r.to_game(shogi()).unwrap_err();
    assert!(matches!(&e, RecordError::IllegalMove { ply: 4, text, .. } if text == "2b3a"), "{e:?}");
    assert!(e.to_string().contains("ply 4") && e.to_string().contains("2b3a"), "{e}");
}
