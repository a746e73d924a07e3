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
        on_finished: None,
    };
    let games = selfplay::play_games(&job, &search::UniformEvaluator, &selfplay::Stats::default()).unwrap();
    let positions: usize = games.iter().map(|g| g.plies).sum();
    let shards: Vec<_> = games.iter().map(|g| g.shard.clone()).collect();
    // The game log has one line per game, saying how each ended.
    let lines = selfplay::read_games(&out).unwrap();
    assert_eq!(lines.len(), 4);
    for (line, game) in lines.iter().zip(&games) {
        assert_eq!((line.game_id, line.plies as usize), (game.game_id, game.plies));
        let ending = match game.end.reason {
            selfplay::EndReason::Rules(r) => r.name(),
            selfplay::EndReason::Resignation => "resignation",
        };
        assert_eq!(line.ending, ending);
    }
    let mut cfg = config(100, 16);
    cfg.mirror = false;
    let report = train_generation(&TrainJob {
        variant: variant(),
        config: cfg,
        net: tiny_net(),
        generation: 1,
        shards,
        checkpoint: dir.path().join("trainer.ckpt"),
        export_dir: dir.path().join("models/gen-0001"),
        seed: 1,
        teacher_value_share: None,
        teacher_batch_share: None,
        on_step: None,
        stop_after: None,
    })
    .unwrap();
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(report.train_samples + report.validation_samples, positions);
    assert_eq!(report.steps, 100);
    // The network learns those records: the loss of the last ten steps is more than half
    // a nat below the first step's (seen: 3.65 → 2.91; the uniform search's policy targets
    // are broad, so their entropy is a high floor). Records read wrongly — targets
    // misaligned with positions — could not be fitted.
    let first = report.losses[0].total;
    let last: f32 = report.losses[90..].iter().map(|l| l.total).sum::<f32>() / 10.0;
    assert!(last < first - 0.5, "loss {first} at the first step, {last} over the last ten");
}
