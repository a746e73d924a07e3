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

/// A panic inside self-play (here the evaluator's, on its tenth batch) ends `play_games`
/// with an error naming the games in flight instead of unwinding into the caller; the
/// games finished before it keep their shards, so the run can resume.
#[test]
fn a_panicking_worker_is_an_error_naming_its_games() {
    use search::{EvalRequest, Evaluation, Evaluator};
    use std::sync::atomic::{AtomicU32, Ordering};
    struct Faulty(AtomicU32);
    impl Evaluator<rules::Game> for Faulty {
        fn evaluate(&self, batch: &[EvalRequest<rules::Game>]) -> Vec<Evaluation> {
            if self.0.fetch_add(1, Ordering::SeqCst) == 9 {
                panic!("boom in the network");
            }
            batch.iter().map(|r| Evaluation::uniform(r.moves.len(), 0.0)).collect()
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let e = play_games(&job(dir.path(), 1, (0..4).collect()), &Faulty(AtomicU32::new(0)), &Stats::default()).unwrap_err();
    match e {
        selfplay::SelfplayError::Panic { games, message } => {
            assert!(message.contains("boom in the network"), "{message}");
            assert!(!games.is_empty() && games.iter().all(|g| *g < 4), "{games:?}");
        }
        other => panic!("expected a panic error, got {other}"),
    }
}
