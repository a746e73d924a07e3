//! Shared helpers for unit tests: a tiny config and random batches.

use rand::{Rng, SeedableRng};

use crate::config::NetConfig;
use crate::device::cpu_train_device;
use crate::net::Net;
use crate::train::{TrainBatch, TrainConfig, TrainStep};

/// A tiny, non-square config (catches H/W mix-ups) that keeps tests fast.
pub fn tiny_config() -> NetConfig {
    let mut cfg = NetConfig::new(5, 3, 4, 7).with_tower(2, 8);
    cfg.policy_head_channels = 4;
    cfg.value_head_channels = 2;
    cfg.value_hidden = 16;
    cfg
}

/// Owned buffers of a random batch with one-hot targets.
pub struct OwnedBatch {
    pub batch: usize,
    pub input: Vec<f32>,
    pub policy_target: Vec<f32>,
    pub value_target: Vec<f32>,
}

impl OwnedBatch {
    pub fn random(cfg: &NetConfig, batch: usize, seed: u64) -> Self {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let input = (0..batch * cfg.input_len()).map(|_| if rng.random::<f32>() < 0.3 { 1.0 } else { 0.0 }).collect();
        let mut policy_target = vec![0.0; batch * cfg.policy_len()];
        let mut value_target = vec![0.0; batch * 3];
        for b in 0..batch {
            policy_target[b * cfg.policy_len() + rng.random_range(0..cfg.policy_len())] = 1.0;
            value_target[b * 3 + rng.random_range(0..3)] = 1.0;
        }
        Self { batch, input, policy_target, value_target }
    }

    pub fn view(&self) -> TrainBatch<'_> {
        TrainBatch { batch: self.batch, input: &self.input, policy_target: &self.policy_target, value_target: &self.value_target, legal_mask: None }
    }
}

/// A tiny net after `steps` AdamW steps on random data (batch-norm statistics non-trivial).
pub fn trained_tiny_net(steps: usize) -> Net {
    let cfg = tiny_config();
    let device = cpu_train_device();
    let mut net = Net::new(&cfg, &device).unwrap();
    let mut step = TrainStep::new(TrainConfig { learning_rate: 1e-2, ..TrainConfig::default() }, device);
    for i in 0..steps {
        let batch = OwnedBatch::random(&cfg, 6, i as u64);
        net = step.step(net, &batch.view()).0;
    }
    net
}

/// Largest absolute difference; NaN if either side has a NaN anywhere (so that `diff <
/// tolerance` fails on an element a kernel left unwritten: see
/// `kernels::output_buffer`). (`f32::max` would drop it: `0.0f32.max(NaN)` is 0.)
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, |m, d| if m.is_nan() || d.is_nan() { f32::NAN } else { m.max(d) })
}
