//! A generation with policy-surprise weighting, stopped and resumed, gives the same weights
//! as one run straight through. Its own test binary (one compute thread, no other test
//! training beside it), as `resume.rs`.
mod common;
use common::*;
use trainer::{train_generation, TrainJob};

fn job<'a>(dir: &std::path::Path, shards: &[std::path::PathBuf], generation: u32, stop_after: Option<u32>) -> TrainJob<'a> {
    let mut j = run_job(dir, shards, generation, 6, stop_after);
    j.config.final_lr_fraction = 0.1;
    j
}

/// With policy-surprise weighting the batch order depends on the network a generation
/// starts from; a generation killed after its first checkpoint resumes with the order it
/// began with (kept in the checkpoint), not one measured by its half-trained network.
#[test]
fn a_surprise_weighted_generation_resumes_with_its_own_order() {
    model::init_cpu_threads(1);
    let data = tempfile::tempdir().unwrap();
    let shards = write_random_shards(data.path(), 4, 12, 5);
    let weighted = |dir: &std::path::Path, generation: u32, stop_after: Option<u32>| {
        let mut j = job(dir, &shards, generation, stop_after);
        j.config.policy_surprise_weight = 1.0;
        j.config.max_sample_uses = 4;
        // A high rate, so that the network the kill leaves measures other surprises.
        j.config.learning_rate = 0.05;
        j
    };
    let straight = tempfile::tempdir().unwrap();
    for g in 1..=2 {
        train_generation(&weighted(straight.path(), g, None)).unwrap();
    }
    let resumed = tempfile::tempdir().unwrap();
    train_generation(&weighted(resumed.path(), 1, None)).unwrap();
    assert!(!train_generation(&weighted(resumed.path(), 2, Some(3))).unwrap().complete);
    assert_eq!(train_generation(&weighted(resumed.path(), 2, None)).unwrap().steps, 4);
    assert!(outputs(straight.path(), 2) == outputs(resumed.path(), 2), "the resumed generation drew another order");

    // The weighting does change what is drawn: uniform sampling ends elsewhere.
    let uniform = tempfile::tempdir().unwrap();
    for g in 1..=2 {
        let mut j = weighted(uniform.path(), g, None);
        j.config.policy_surprise_weight = 0.0;
        train_generation(&j).unwrap();
    }
    assert!(outputs(uniform.path(), 2) != outputs(straight.path(), 2), "policy-surprise weighting changed nothing");
}
