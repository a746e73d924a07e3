//! A run stopped and resumed gives the same weights as one run straight through
//! (same seed, one compute thread), its learning rate decaying over each generation.
//! Its own test binary, so the thread pool is ours.
mod common;
use common::*;
use trainer::{train_generation, TrainJob};

fn job<'a>(dir: &std::path::Path, shards: &[std::path::PathBuf], generation: u32, stop_after: Option<u32>) -> TrainJob<'a> {
    let mut j = run_job(dir, shards, generation, 6, stop_after);
    j.config.final_lr_fraction = 0.1;
    j
}

#[test]
fn stopped_and_resumed_training_equals_straight_training() {
    model::init_cpu_threads(1);
    let data = tempfile::tempdir().unwrap();
    let shards = write_random_shards(data.path(), 4, 12, 3);

    let straight = tempfile::tempdir().unwrap();
    let straight_reports: Vec<_> = (1..=2).map(|g| train_generation(&job(straight.path(), &shards, g, None)).unwrap()).collect();
    assert!(straight_reports.iter().all(|r| r.complete && r.steps == 6 && r.losses.len() == 6));

    let resumed = tempfile::tempdir().unwrap();
    // Generation 1 killed after 3 steps: the checkpoint of step 2 is the last one written
    // (every 2 steps), so the resumed call redoes step 3 and runs 4 steps.
    let r = train_generation(&job(resumed.path(), &shards, 1, Some(3))).unwrap();
    assert!(!r.complete && r.steps == 3);
    let first = train_generation(&job(resumed.path(), &shards, 1, None)).unwrap();
    assert!(first.complete);
    assert_eq!(first.steps, 4, "resumed from the step-2 checkpoint");
    // Generation 2 killed after 5 steps (last checkpoint at 4): 2 steps remain.
    assert!(!train_generation(&job(resumed.path(), &shards, 2, Some(5))).unwrap().complete);
    let last = train_generation(&job(resumed.path(), &shards, 2, None)).unwrap();
    assert_eq!(last.steps, 2);

    assert!(outputs(straight.path(), 1) == outputs(resumed.path(), 1), "generation 1 differs");
    assert!(outputs(straight.path(), 2) == outputs(resumed.path(), 2), "generation 2 differs");
    // Training did change the weights.
    assert!(outputs(straight.path(), 1) != outputs(straight.path(), 2));
    // The decay is applied: at a constant rate generation 1 ends elsewhere.
    let constant = tempfile::tempdir().unwrap();
    let mut j = job(constant.path(), &shards, 1, None);
    j.config.final_lr_fraction = 1.0;
    train_generation(&j).unwrap();
    assert!(outputs(constant.path(), 1) != outputs(straight.path(), 1), "the learning-rate schedule changed nothing");

    // The resumed generations report every step, as the uninterrupted run does: the
    // steps before the kill come from the checkpoint.
    assert_eq!(first.losses, straight_reports[0].losses, "generation 1's losses");
    assert_eq!(last.losses, straight_reports[1].losses, "generation 2's losses");
    assert_eq!(last.losses.iter().map(|l| l.step).collect::<Vec<_>>(), (7..=12).collect::<Vec<u64>>());
    assert!(last.seconds > 0.0);

    // Asked again once done (as after a kill before the caller wrote its report), the
    // trainer runs no step and rebuilds the same report.
    let again = train_generation(&job(resumed.path(), &shards, 2, None)).unwrap();
    assert_eq!(again.steps, 0);
    assert_eq!(again.losses, straight_reports[1].losses);
    assert_eq!(again.train_samples, last.train_samples);
    assert_eq!(again.seconds, last.seconds);
}
