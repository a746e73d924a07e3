//! A generation with policy-surprise weighting, stopped and resumed, gives the same weights
//! as one run straight through, and draws a new order when its window changed. Its own
//! test binary (one compute thread), as `resume.rs`, and its tests one at a time.
mod common;
use common::*;
use trainer::{train_generation, TrainJob};

/// One training at a time: a second test training beside the first makes its results
/// differ from run to run (measured: `resume.rs`'s comparison failed one run in three).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Generation `generation` in `dir` with full policy-surprise weighting, at a high rate so
/// that the network a kill leaves would measure other surprises than the one it began with.
fn weighted<'a>(dir: &std::path::Path, shards: &[std::path::PathBuf], generation: u32, stop_after: Option<u32>) -> TrainJob<'a> {
    let mut j = run_job(dir, shards, generation, 6, stop_after);
    j.config.final_lr_fraction = 0.1;
    j.config.policy_surprise_weight = 1.0;
    j.config.max_sample_uses = 4;
    j.config.learning_rate = 0.05;
    j
}

/// With policy-surprise weighting the batch order depends on the network a generation
/// starts from; a killed generation resumes with the order it began with (kept in the
/// checkpoint), not one measured by its half-trained network.
#[test]
fn a_surprise_weighted_generation_resumes_with_its_own_order() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    model::init_cpu_threads(1);
    let data = tempfile::tempdir().unwrap();
    let shards = write_random_shards(data.path(), 4, 12, 5);
    let straight = tempfile::tempdir().unwrap();
    for g in 1..=2 {
        train_generation(&weighted(straight.path(), &shards, g, None)).unwrap();
    }
    let resumed = tempfile::tempdir().unwrap();
    train_generation(&weighted(resumed.path(), &shards, 1, None)).unwrap();
    assert!(!train_generation(&weighted(resumed.path(), &shards, 2, Some(3))).unwrap().complete);
    assert_eq!(train_generation(&weighted(resumed.path(), &shards, 2, None)).unwrap().steps, 4);
    assert!(outputs(straight.path(), 2) == outputs(resumed.path(), 2), "the resumed generation drew another order");

    // The weighting does change what is drawn: uniform sampling ends elsewhere.
    let uniform = tempfile::tempdir().unwrap();
    for g in 1..=2 {
        let mut j = weighted(uniform.path(), &shards, g, None);
        j.config.policy_surprise_weight = 0.0;
        train_generation(&j).unwrap();
    }
    assert!(outputs(uniform.path(), 2) != outputs(straight.path(), 2), "policy-surprise weighting changed nothing");
}

/// A generation resumed on another window (a shard lost in between) draws a new order
/// for it rather than indices that now name other positions, and still trains.
#[test]
fn a_changed_window_draws_a_new_order() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    model::init_cpu_threads(1);
    let data = tempfile::tempdir().unwrap();
    let shards = write_random_shards(data.path(), 4, 12, 5);
    let dir = tempfile::tempdir().unwrap();
    assert!(!train_generation(&weighted(dir.path(), &shards, 1, Some(3))).unwrap().complete);
    let ckpt = dir.path().join("trainer.ckpt");
    let before = trainer::Checkpoint::load(&ckpt).unwrap().unwrap();
    assert!(!before.generation_order.is_empty(), "the order is in the checkpoint");
    let r = train_generation(&weighted(dir.path(), &shards[1..], 1, None)).unwrap();
    assert!(r.complete && r.steps > 0);
    let after = trainer::Checkpoint::load(&ckpt).unwrap().unwrap();
    assert_ne!(after.generation_order_key, before.generation_order_key);
    let n = r.train_samples as u32;
    assert!(after.generation_order.iter().all(|&i| i < n), "an index past the new window");
}
