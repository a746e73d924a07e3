//! Records written by self-play read back in the trainer.
mod common;
use common::*;
use trainer::{train_generation, TrainJob};

#[test]
fn records_written_by_self_play_train_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("selfplay/gen-0001");
    let job = selfplay::SelfplayJob {
        variant: variant(),
        config: selfplay::SelfplayConfig { games: 4, games_in_flight: 4, simulations: 8, fast_simulations: 4, max_plies: 40, ..Default::default() },
        generation: 1,
        out_dir: out.clone(),
        game_ids: (0..4).collect(),
        threads: 1,
        seed: 3,
    };
    let games = selfplay::play_games(&job, &search::UniformEvaluator, &selfplay::Stats::default()).unwrap();
    let positions: usize = games.iter().map(|g| g.plies).sum();
    let shards: Vec<_> = games.iter().map(|g| g.shard.clone()).collect();
    let report = train_generation(&TrainJob {
        variant: variant(),
        config: config(3, 16),
        net: tiny_net(),
        generation: 1,
        shards,
        checkpoint: dir.path().join("trainer.ckpt"),
        export_dir: dir.path().join("models/gen-0001"),
        seed: 1,
        on_step: None,
        stop_after: None,
    })
    .unwrap();
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(report.train_samples + report.validation_samples, positions);
    assert_eq!(report.steps, 3);
    assert!(report.losses.iter().all(|l| l.total.is_finite()));
}
