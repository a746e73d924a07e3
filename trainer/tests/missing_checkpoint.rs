//! A run directory that lost its trainer checkpoint goes on from its last exported model,
//! not from a fresh network. Its own test binary: burn seeds its initialiser globally.
mod common;
use common::*;
use trainer::{start_from_model, train_generation};

#[test]
fn a_missing_checkpoint_goes_on_from_the_last_exported_model() {
    model::init_cpu_threads(1);
    let data = tempfile::tempdir().unwrap();
    let shards = write_random_shards(data.path(), 4, 12, 3);
    let first = tempfile::tempdir().unwrap();
    train_generation(&run_job(first.path(), &shards, 1, 6, None)).unwrap();

    // With no steps to take, generation 2 exports the weights it started from.
    let lost = tempfile::tempdir().unwrap();
    start_from_model(&lost.path().join("trainer.ckpt"), &first.path().join("models/gen-0001"), 1, variant(), &tiny_net(), 11).unwrap();
    train_generation(&run_job(lost.path(), &shards, 2, 0, None)).unwrap();
    assert!(outputs(lost.path(), 2) == outputs(first.path(), 1), "generation 2 starts from generation 1's weights");

    // Without that checkpoint the trainer starts from a fresh network.
    let fresh = tempfile::tempdir().unwrap();
    train_generation(&run_job(fresh.path(), &shards, 2, 0, None)).unwrap();
    assert!(outputs(fresh.path(), 2) != outputs(first.path(), 1));
}
