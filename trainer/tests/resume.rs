//! A run stopped and resumed gives the same weights as one run straight through
//! (same seed, one compute thread). Its own test binary, so the thread pool is ours.
mod common;
use common::*;
use trainer::{train_generation, TrainJob};

fn job<'a>(dir: &std::path::Path, shards: &[std::path::PathBuf], generation: u32, stop_after: Option<u32>) -> TrainJob<'a> {
    TrainJob {
        variant: variant(),
        config: config(6, 8),
        net: tiny_net(),
        generation,
        shards: shards.to_vec(),
        checkpoint: dir.join("trainer.ckpt"),
        export_dir: dir.join(format!("models/gen-{generation:04}")),
        seed: 11,
        on_step: None,
        stop_after,
    }
}

/// The exported model's outputs on a fixed input, bit for bit (the weights files also
/// hold random parameter ids, so their bytes differ between runs).
fn outputs(dir: &std::path::Path, generation: u32) -> Vec<u32> {
    let net = model::load_inference(&dir.join(format!("models/gen-{generation:04}"))).unwrap();
    let n = net.config().input_len() * 4;
    let input: Vec<f32> = (0..n).map(|i| ((i * 7919) % 13) as f32 / 13.0).collect();
    let out = net.forward(&input, 4);
    out.policy.iter().chain(out.value.iter()).map(|x| x.to_bits()).collect()
}

#[test]
fn stopped_and_resumed_training_equals_straight_training() {
    model::init_cpu_threads(1);
    let data = tempfile::tempdir().unwrap();
    let shards = write_random_shards(data.path(), 4, 12, 3);

    let straight = tempfile::tempdir().unwrap();
    for g in 1..=2 {
        assert!(train_generation(&job(straight.path(), &shards, g, None)).unwrap().complete);
    }

    let resumed = tempfile::tempdir().unwrap();
    // Generation 1 killed after 3 steps (between checkpoints at 2 and 4), resumed; then
    // generation 2 killed after 5 steps, resumed.
    let r = train_generation(&job(resumed.path(), &shards, 1, Some(3))).unwrap();
    assert!(!r.complete && r.steps == 3);
    assert!(train_generation(&job(resumed.path(), &shards, 1, None)).unwrap().complete);
    assert!(!train_generation(&job(resumed.path(), &shards, 2, Some(5))).unwrap().complete);
    let last = train_generation(&job(resumed.path(), &shards, 2, None)).unwrap();
    assert_eq!(last.steps, 1);

    assert!(outputs(straight.path(), 1) == outputs(resumed.path(), 1), "generation 1 differs");
    assert!(outputs(straight.path(), 2) == outputs(resumed.path(), 2), "generation 2 differs");
    // Training did change the weights.
    assert!(outputs(straight.path(), 1) != outputs(straight.path(), 2));
}
