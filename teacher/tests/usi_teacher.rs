//! A USI engine as the teacher: its `multipv` lines turned into scored moves (hand-made
//! replies), and the stage end to end with Fairy-Stockfish on standard shogi (installed by
//! `scripts/install-engines.sh`, as the USI client's tests install it).

mod common;

use encoding::ActionSpace;
use players::Score;
use rules::{Color, Game, Position, Variant};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use teacher::{game_path, read_game, run_stage, score_usi, shard_path, TeacherConfig, TeacherJob};
use usi::client::{BestMove, EngineInfo, EngineReply};

const FAIRY_STOCKFISH: &str = "/usr/games/fairy-stockfish";

fn line(k: u32, score: Score, pv: &str) -> EngineInfo {
    let (score_cp, score_mate) = match score {
        Score::Cp(c) => (Some(c), None),
        Score::Mate(m) => (None, Some(m)),
    };
    EngineInfo { multipv: Some(k), score_cp, score_mate, nodes: Some(5000), pv: pv.split_whitespace().map(String::from).collect(), ..EngineInfo::default() }
}

fn reply(best: &str, lines: Vec<EngineInfo>) -> EngineReply {
    let best = match best {
        "resign" => BestMove::Resign,
        m => BestMove::Move(m.into()),
    };
    EngineReply { best, ponder: None, info: lines.first().cloned().unwrap_or_default(), lines, elapsed: Duration::ZERO }
}

fn shogi() -> &'static Variant {
    Variant::builtin("shogi").unwrap()
}

#[test]
fn multipv_lines_become_scored_moves_within_the_margin() {
    let pos = Position::start(shogi());
    let m = |t: &str| pos.parse_usi(t).unwrap();
    // 9g9f is 750 below the best: outside a 600 cp margin. A second line starting with
    // 7g7f (a later iteration's duplicate) adds nothing.
    let r = reply(
        "7g7f",
        vec![line(1, Score::Cp(50), "7g7f 3c3d"), line(2, Score::Cp(40), "2g2f 8c8d"), line(3, Score::Cp(-700), "9g9f"), line(4, Score::Cp(-20), "7g7f 8c8d")],
    );
    let rs = score_usi(&pos, &r, 600).unwrap().unwrap();
    assert_eq!(rs.best, m("7g7f"));
    assert_eq!(rs.score, Score::Cp(50));
    assert_eq!(rs.nodes, 5000);
    assert_eq!(rs.moves, vec![(m("7g7f"), Some(Score::Cp(50))), (m("2g2f"), Some(Score::Cp(40)))]);
    // The policy target at 40 cp: weights 1 and e^(−10/40) = 0.778801, so 0.562177 and
    // 0.437823.
    let p = teacher::policy_target(&rs.moves, 40.0);
    assert!((p[0].1 - 0.562177).abs() < 1e-5 && (p[1].1 - 0.437823).abs() < 1e-5, "{p:?}");
}

#[test]
fn a_bestmove_outside_the_lines_is_scored_as_the_first_line() {
    let pos = Position::start(shogi());
    let m = |t: &str| pos.parse_usi(t).unwrap();
    let rs = score_usi(&pos, &reply("2g2f", vec![line(1, Score::Cp(30), "7g7f")]), 600).unwrap().unwrap();
    assert_eq!(rs.best, m("2g2f"));
    assert_eq!(rs.moves, vec![(m("2g2f"), Some(Score::Cp(30))), (m("7g7f"), Some(Score::Cp(30)))]);
}

#[test]
fn a_resignation_plays_the_first_line_or_ends_the_game() {
    let pos = Position::start(shogi());
    let rs = score_usi(&pos, &reply("resign", vec![line(1, Score::Mate(-3), "5i4h")]), 600).unwrap().unwrap();
    assert_eq!(rs.best, pos.parse_usi("5i4h").unwrap());
    assert_eq!(rs.score, Score::Mate(-3));
    assert!(score_usi(&pos, &reply("resign", vec![]), 600).unwrap().is_none());
}

#[test]
fn an_illegal_move_is_an_error_that_names_it() {
    let pos = Position::start(shogi());
    let e = score_usi(&pos, &reply("7g7f", vec![line(1, Score::Cp(0), "7g7f"), line(2, Score::Cp(0), "5e5d")]), 600).unwrap_err();
    assert!(e.contains("5e5d"), "{e}");
    let e = score_usi(&pos, &reply("1a1b", vec![]), 600).unwrap_err();
    assert!(e.contains("1a1b"), "{e}");
}

/// Runs `scripts/install-engines.sh` when the engine is missing, then insists on it.
fn require_fairy_stockfish() {
    if !Path::new(FAIRY_STOCKFISH).is_file() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/install-engines.sh");
        let status = Command::new("bash").arg(&script).status();
        assert!(Path::new(FAIRY_STOCKFISH).is_file(), "{FAIRY_STOCKFISH} is missing; {} said {status:?}", script.display());
    }
}

fn fsf_job(dir: &Path, games: u32, start: Position, random_plies: u32) -> TeacherJob {
    TeacherJob {
        variant: shogi(),
        config: TeacherConfig {
            games,
            engine: format!("usi:{FAIRY_STOCKFISH}"),
            nodes: 300,
            multipv: 4,
            random_plies,
            sample_plies: 4,
            steps: 1,
            ..TeacherConfig::default()
        },
        dir: dir.join("teacher"),
        shard_dir: dir.join("shards"),
        starts: vec![("start".into(), start)],
        max_plies: 40,
        threads: 1,
        seed: 3,
    }
}

/// From a position with a mate in one by a drop, Fairy-Stockfish's scores put the whole
/// policy target on the mating moves (asked of the rules) and the value at a win; the game
/// ends there. (A second game from the start gives the fit its centipawn scores.)
#[test]
fn fairy_stockfish_teaches_a_mate_in_one() {
    require_fairy_stockfish();
    let dir = tempfile::tempdir().unwrap();
    let start = Position::from_sfen(shogi(), "4k4/9/4G4/9/9/9/9/9/4K4 b G 1").unwrap();
    let game = Game::new(start.clone(), None);
    let mates = common::winning_moves(&game);
    assert!(!mates.is_empty());
    let mut job = fsf_job(dir.path(), 2, start, 0);
    job.starts.push(("start".into(), Position::start(shogi())));
    let s = run_stage(&job, &|_, _| {}).unwrap();
    assert_eq!(s.games, 2);
    let g = read_game(&game_path(&dir.path().join("teacher"), 0)).unwrap();
    assert_eq!((g.scored.len(), g.black_result), (1, 1));
    assert_eq!(g.scored[0].score, Score::Mate(1));
    let shard = records::read_shard(&shard_path(&dir.path().join("shards"), 0)).unwrap();
    let actions = ActionSpace::new(shogi());
    let on_mates: f32 = shard.records[0].policy.iter().filter(|(i, _)| mates.iter().any(|&m| actions.encode(Color::Black, m) as u32 == *i)).map(|x| x.1).sum();
    assert!(on_mates > 0.999, "{on_mates}: {:?}", g.scored[0]);
    assert_eq!(shard.records[0].search_value, 1.0);
}

/// Games from the start: every position has at most `multipv` scored moves (legal, the
/// best first after the sampled plies), a policy target over them, and the stage resumes
/// a game lost to a kill.
#[test]
fn fairy_stockfish_games_resume_and_hold_multipv_targets() {
    require_fairy_stockfish();
    let dir = tempfile::tempdir().unwrap();
    let job = fsf_job(dir.path(), 2, Position::start(shogi()), 2);
    let whole = run_stage(&job, &|_, _| {}).unwrap();
    assert_eq!(whole.games, 2);
    assert!(whole.nodes > 0);
    assert_eq!(whole.cpu_time_games, 2, "the CPU time of both games is measured (Linux)");
    for id in 0..2 {
        let g = read_game(&game_path(&job.dir, id)).unwrap();
        let shard = records::read_shard(&shard_path(&job.shard_dir, id)).unwrap();
        assert_eq!(shard.records.len(), g.scored.len());
        let mut game = Game::new(Position::start(shogi()), None);
        for (ply, text) in g.moves.iter().enumerate() {
            if let Some(scored) = ply.checked_sub(g.random_plies as usize).and_then(|i| g.scored.get(i)) {
                assert!((1..=4).contains(&scored.moves.len()), "ply {ply}: {scored:?}");
                for (usi, _) in &scored.moves {
                    game.position().parse_usi(usi).unwrap();
                }
                let i = ply - g.random_plies as usize;
                if i >= 4 {
                    assert_eq!(&scored.moves[0].0, text, "ply {ply}: the teacher plays its best move after the sampled plies");
                }
                let r = &shard.records[i];
                assert!(r.policy.len() <= scored.moves.len());
                assert!((r.policy.iter().map(|x| x.1).sum::<f32>() - 1.0).abs() < 1e-4);
            }
            game.play_usi(text).unwrap();
        }
    }
    std::fs::remove_file(game_path(&job.dir, 1)).unwrap();
    std::fs::remove_file(shard_path(&job.shard_dir, 1)).unwrap();
    let resumed = run_stage(&job, &|_, _| {}).unwrap();
    assert_eq!(resumed.games, 2);
    assert_eq!(resumed.fit, whole.fit, "the fit is made once");
    assert_eq!(resumed.cpu_time_games, 3, "the replayed game's CPU time is added");
    assert!(shard_path(&job.shard_dir, 1).exists());
}

#[test]
fn a_missing_teacher_engine_is_a_config_error() {
    let cfg = TeacherConfig { games: 1, steps: 1, engine: "usi:/nonexistent/engine".into(), ..TeacherConfig::default() };
    let e = cfg.validate().unwrap_err().to_string();
    assert!(e.contains("teacher.engine") && e.contains("/nonexistent/engine"), "{e}");
    let e = TeacherConfig { engine: "stockfish".into(), ..cfg.clone() }.validate().unwrap_err().to_string();
    assert!(e.contains("alphabeta"), "{e}");
    assert!(TeacherConfig { multipv: 0, engine: "alphabeta".into(), ..cfg }.validate().is_err());
}

/// At a node limit the `bestmove` can be a secondary line's first move: it still comes
/// first, with that line's score.
#[test]
fn the_bestmove_comes_first() {
    let pos = Position::start(shogi());
    let m = |t: &str| pos.parse_usi(t).unwrap();
    let rs = score_usi(&pos, &reply("2g2f", vec![line(1, Score::Cp(30), "7g7f"), line(2, Score::Cp(20), "2g2f")]), 600).unwrap().unwrap();
    assert_eq!(rs.moves, vec![(m("2g2f"), Some(Score::Cp(20))), (m("7g7f"), Some(Score::Cp(30)))]);
    assert_eq!(rs.score, Score::Cp(30));
}

/// An engine that dies on every search is restarted once, then the stage stops with an
/// error that names it; no game file is written.
#[test]
fn a_teacher_engine_that_keeps_crashing_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let crash = Path::new(env!("CARGO_MANIFEST_DIR")).join("../usi/tests/engines/crash.py");
    let mut job = fsf_job(dir.path(), 1, Position::start(shogi()), 0);
    job.config.engine = format!("usi:{}", crash.display());
    let e = run_stage(&job, &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("crash.py") && e.contains("teacher engine"), "{e}");
    assert!(!game_path(&job.dir, 0).exists());
}
