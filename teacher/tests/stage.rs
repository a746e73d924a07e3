//! The teacher stage end to end on minishogi: targets checked against the rules engine on
//! a hand-built position, and a killed stage resuming to the same shards.

mod common;

use encoding::ActionSpace;
use players::baseline::AlphaBeta;
use players::Score;
use rules::{Color, Game, Position, Variant};
use std::path::Path;
use teacher::{game_path, read_game, run_stage, shard_path, TeacherConfig, TeacherJob};

fn job(dir: &Path, games: u32) -> TeacherJob {
    let v = Variant::builtin("minishogi").unwrap();
    TeacherJob {
        variant: v,
        config: TeacherConfig { games, depth: 1, sample_plies: 6, random_plies: 4, steps: 1, ..TeacherConfig::default() },
        dir: dir.join("teacher"),
        shard_dir: dir.join("shards"),
        starts: vec![("default".into(), Position::start(v))],
        max_plies: 60,
        threads: 2,
        seed: 9,
    }
}

#[test]
fn a_mate_in_one_takes_the_whole_policy_target_and_a_won_value() {
    // White's king on 1a, a Black gold on 1c and one in hand: G*1b mates (guarded by the
    // gold on 1c); which moves mate is asked of the rules.
    let v = Variant::builtin("minishogi").unwrap();
    let game = Game::new(Position::from_sfen(v, "4k/5/4G/5/K4 b G 1").unwrap(), None);
    let mates = common::winning_moves(&game);
    assert!(!mates.is_empty() && mates.len() < game.legal_moves().len() / 2, "{} mates", mates.len());
    let rs = AlphaBeta::new(v, 1 << 12).score_root_moves(&game, 2, 600).unwrap();
    assert_eq!(rs.score, Score::Mate(1));
    let actions = ActionSpace::new(v);
    let scored: Vec<(u32, Option<Score>)> = rs.moves.iter().map(|&(m, s)| (actions.encode(Color::Black, m) as u32, s)).collect();
    let policy = teacher::policy_target(&scored, 100.0);
    let on_mates: f32 = policy.iter().filter(|(i, _)| mates.iter().any(|&m| actions.encode(Color::Black, m) as u32 == *i)).map(|x| x.1).sum();
    assert!(on_mates > 0.999, "{on_mates}");
    assert_eq!(teacher::value_of(rs.score, 300.0), 1.0);
}

fn shards_of(dir: &Path, games: u32) -> Vec<Vec<u8>> {
    (0..games as u64).map(|id| std::fs::read(shard_path(&dir.join("shards"), id)).unwrap()).collect()
}

#[test]
fn a_killed_stage_resumes_to_the_same_shards() {
    let n = 6;
    let a = tempfile::tempdir().unwrap();
    let whole = run_stage(&job(a.path(), n), &|_, _| {}).unwrap();
    assert_eq!(whole.games, n as u64);
    assert!(whole.positions > 0 && whole.fit.k > 0.0);

    // Every shard holds the game's scored positions with a policy target and a value in
    // [−1, 1], and the result of the game for the side to move.
    let v = Variant::builtin("minishogi").unwrap();
    for id in 0..n as u64 {
        let g = read_game(&game_path(&a.path().join("teacher"), id)).unwrap();
        let shard = records::read_shard(&shard_path(&a.path().join("shards"), id)).unwrap();
        assert_eq!(shard.records.len(), g.scored.len());
        for r in &shard.records {
            let total: f32 = r.policy.iter().map(|x| x.1).sum();
            assert!((total - 1.0).abs() < 1e-4, "{total} {r:?}");
            assert!((-1.0..=1.0).contains(&r.search_value));
            let side = Position::from_sfen(v, &r.sfen).unwrap().side_to_move();
            assert_eq!(r.result, if side == Color::Black { g.black_result } else { -g.black_result });
        }
    }

    // A stage killed while playing: two games never written, one half written (an
    // unreadable file is played again), no fit and no shards yet.
    let b = tempfile::tempdir().unwrap();
    run_stage(&job(b.path(), n), &|_, _| {}).unwrap();
    let t = b.path().join("teacher");
    std::fs::remove_file(game_path(&t, 1)).unwrap();
    std::fs::remove_file(game_path(&t, 4)).unwrap();
    let whole_file = std::fs::read(game_path(&t, 2)).unwrap();
    std::fs::write(game_path(&t, 2), &whole_file[..whole_file.len() / 2]).unwrap();
    std::fs::remove_file(t.join("fit.json")).unwrap();
    std::fs::remove_dir_all(b.path().join("shards")).unwrap();
    let resumed = run_stage(&job(b.path(), n), &|_, _| {}).unwrap();
    assert_eq!(resumed.fit, whole.fit);
    assert_eq!(shards_of(b.path(), n), shards_of(a.path(), n), "the replayed games are the same games");
}
