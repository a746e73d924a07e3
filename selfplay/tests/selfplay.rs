use encoding::ActionSpace;
use records::read_shard;
use rules::{Position, Variant};
use search::UniformEvaluator;
use selfplay::{play_games, SelfplayConfig, SelfplayJob, Stats};

fn job(dir: &std::path::Path, threads: usize, ids: Vec<u64>) -> SelfplayJob {
    let config = SelfplayConfig {
        games: ids.len() as u32,
        games_in_flight: 3,
        simulations: 8,
        fast_simulations: 4,
        full_search_fraction: 0.5,
        max_plies: 60,
        ..SelfplayConfig::default()
    };
    SelfplayJob { variant: Variant::builtin("minishogi").unwrap(), config, generation: 0, out_dir: dir.to_path_buf(), game_ids: ids, threads, seed: 42 }
}

#[test]
fn records_written_by_self_play_read_back_consistently() {
    let dir = tempfile::tempdir().unwrap();
    let stats = Stats::default();
    let games = play_games(&job(dir.path(), 2, (0..6).collect()), &UniformEvaluator, &stats).unwrap();
    assert_eq!(games.len(), 6);
    assert_eq!(stats.snapshot().games, 6);
    let v = Variant::builtin("minishogi").unwrap();
    let actions = ActionSpace::new(v);
    for g in &games {
        let shard = read_shard(&g.shard).unwrap();
        assert_eq!(shard.records.len(), g.plies.min(60), "one record per move played");
        for r in &shard.records {
            assert_eq!(r.game_id, g.game_id);
            let pos = Position::from_sfen(v, &r.sfen).unwrap();
            assert_eq!(r.result as f32, g.end.outcome.value_for(pos.side_to_move()));
            if r.full_search {
                let total: f32 = r.policy.iter().map(|p| p.1).sum();
                assert!((total - 1.0).abs() < 1e-3, "policy sums to {total}");
                let legal = pos.legal_moves();
                assert_eq!(r.policy.len(), legal.len(), "target over every legal move");
                for &(i, _) in &r.policy {
                    let m = actions.decode(pos.side_to_move(), i as usize).unwrap();
                    assert!(legal.contains(&m));
                }
            } else {
                assert!(r.policy.is_empty());
            }
        }
    }
}

#[test]
fn one_thread_runs_with_a_seed_are_reproducible() {
    let run = || {
        let dir = tempfile::tempdir().unwrap();
        let games = play_games(&job(dir.path(), 1, (10..14).collect()), &UniformEvaluator, &Stats::default()).unwrap();
        games.iter().map(|g| read_shard(&g.shard).unwrap().records).collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}
