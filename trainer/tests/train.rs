mod common;
use common::*;
use trainer::{train_generation, Checkpoint, TrainJob};

#[test]
fn tiny_network_overfits_a_small_record_set() {
    // 32 positions with one-hot policy targets and fixed results: a 2x16 net must
    // memorise them: total loss (policy CE + WDL CE) from about ln(legal)+ln 3 ≈ 4 to
    // below 0.3 within 300 steps on the whole set.
    let dir = tempfile::tempdir().unwrap();
    let shards = write_random_shards(dir.path(), 4, 8, 1);
    let mut cfg = config(300, 32);
    cfg.mirror = false;
    cfg.checkpoint_every = 1000;
    let job = TrainJob {
        variant: variant(),
        config: cfg,
        net: tiny_net(),
        generation: 1,
        shards,
        checkpoint: dir.path().join("trainer.ckpt"),
        export_dir: dir.path().join("models/gen-0001"),
        seed: 5,
        on_step: None,
        stop_after: None,
    };
    // Each step is one pass over the 32 samples; the cap of 255 uses per sample stops
    // training after 255 steps.
    let report = train_generation(&job).unwrap();
    assert_eq!(report.train_samples, 32);
    assert_eq!(report.steps, 255, "the use cap limits the steps");
    let first = report.losses.first().unwrap().total;
    let last = report.losses.last().unwrap().total;
    assert!(first > 3.0, "initial loss {first}");
    assert!(last < 0.3, "final loss {last} after {} steps (initial {first})", report.steps);
    assert!(dir.path().join("models/gen-0001/model.json").exists(), "model exported");
    assert!(model::load_inference(&dir.path().join("models/gen-0001")).is_ok());
}

#[test]
fn corrupt_shard_is_skipped_naming_the_file_and_corrupt_checkpoint_refused() {
    let dir = tempfile::tempdir().unwrap();
    let shards = write_random_shards(dir.path(), 3, 10, 2);
    let bytes = std::fs::read(&shards[1]).unwrap();
    std::fs::write(&shards[1], &bytes[..bytes.len() / 2]).unwrap();
    let job = TrainJob {
        variant: variant(),
        config: config(2, 8),
        net: tiny_net(),
        generation: 1,
        shards: shards.clone(),
        checkpoint: dir.path().join("trainer.ckpt"),
        export_dir: dir.path().join("models/gen-0001"),
        seed: 5,
        on_step: None,
        stop_after: None,
    };
    let report = train_generation(&job).unwrap();
    assert_eq!(report.skipped.len(), 1);
    assert!(report.skipped[0].contains("game-00000001.shard"), "{:?}", report.skipped);
    assert_eq!(report.train_samples, 20, "the other two games are used");

    let ckpt = std::fs::read(&job.checkpoint).unwrap();
    std::fs::write(&job.checkpoint, &ckpt[..ckpt.len() - 100]).unwrap();
    let err = train_generation(&TrainJob { generation: 2, ..job }).unwrap_err().to_string();
    assert!(err.contains("trainer.ckpt") && err.contains("refusing"), "{err}");
    assert!(Checkpoint::load(&dir.path().join("trainer.ckpt")).is_err());
}

/// Validation evaluates a sample spread over the whole held-out set (oldest to newest
/// generation), not its first positions: 5 of 10 are 0, 2, 4, 6, 8; 3 of 9 are 0, 3, 6.
#[test]
fn validation_samples_the_whole_window() {
    assert_eq!(trainer::validation_indices(10, 5), vec![0, 2, 4, 6, 8]);
    assert_eq!(trainer::validation_indices(9, 3), vec![0, 3, 6]);
    assert_eq!(trainer::validation_indices(4, 10), vec![0, 1, 2, 3]);
    assert!(trainer::validation_indices(0, 5).is_empty());
    let picked = trainer::validation_indices(100_000, 2048);
    // The last is ⌊2047 · 100000 / 2048⌋ = ⌊99951.17⌋: within 49 positions of the newest.
    assert_eq!(*picked.last().unwrap(), 99_951);
}
