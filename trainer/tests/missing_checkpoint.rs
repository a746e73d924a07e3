//! A run directory that lost its trainer checkpoint goes on from its last exported model,
//! not from a fresh network. Its own test binary: burn seeds its initialiser globally.
mod common;
use common::*;
use trainer::{start_from_model, train_generation, TrainJob};

fn job<'a>(dir: &std::path::Path, shards: &[std::path::PathBuf], generation: u32, steps: u32) -> TrainJob<'a> {
    run_job(dir, shards, generation, steps, None)
}

#[test]
fn a_missing_checkpoint_goes_on_from_the_last_exported_model() {
    model::init_cpu_threads(1);
    let data = tempfile::tempdir().unwrap();
    let shards = write_random_shards(data.path(), 4, 12, 3);
    let first = tempfile::tempdir().unwrap();
    train_generation(&job(first.path(), &shards, 1, 6)).unwrap();

    // With no steps to take, generation 2 exports the weights it started from.
    let lost = tempfile::tempdir().unwrap();
    start_from_model(&lost.path().join("trainer.ckpt"), &first.path().join("models/gen-0001"), 1, variant(), &tiny_net(), 11).unwrap();
    train_generation(&job(lost.path(), &shards, 2, 0)).unwrap();
    assert!(outputs(lost.path(), 2) == outputs(first.path(), 1), "generation 2 starts from generation 1's weights");

    // Without that checkpoint the trainer starts from a fresh network.
    let fresh = tempfile::tempdir().unwrap();
    train_generation(&job(fresh.path(), &shards, 2, 0)).unwrap();
    assert!(outputs(fresh.path(), 2) != outputs(first.path(), 1));
}
