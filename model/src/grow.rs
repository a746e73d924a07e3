//! A trained network grown into a wider and deeper one that computes the same function,
//! so that a run whose small network has stopped improving goes on with more capacity
//! instead of starting a larger one from scratch (Chen, Goodfellow & Shlens, "Net2Net:
//! Accelerating Learning via Knowledge Transfer", ICLR 2016: function-preserving growth;
//! KataGo moves its runs to larger networks as they go, Wu 2019, there by training the
//! larger one on the run's data).
//!
//! With `C` old channels and `C'` new ones (the tower's stream and every block's inner
//! layer), the old channels keep their weights and statistics and never read a new
//! channel (those weights are zero); a new channel reads every channel through freshly
//! initialised weights and is read by nothing yet (the heads' weights from it are zero).
//! The old outputs are therefore unchanged, and every zero weight still has a gradient
//! (its input is non-zero), so training grows into the new channels. New residual blocks
//! go after the old ones with their last batch norm's scale and shift at zero (Goyal et
//! al., "Accurate, Large Minibatch SGD", 2017, §5.1, "zero γ"): the block adds nothing,
//! `ReLU(x + 0) = x` on the tower's non-negative stream, and the scale learns.

use std::path::Path;

use burn::module::{Param, RunningState};
use burn::nn::conv::Conv2d;
use burn::nn::BatchNorm;
use burn::tensor::{Tensor, TensorData};

use crate::net::{ConvBn, Net, ResBlock};
use crate::store::{load_model, read_manifest, save, ModelIoError};
use crate::tensor_util::to_vec;

/// `old` grown to `blocks` residual blocks of `channels` channels (each at least the old
/// one), computing the same function; the new weights are drawn from `seed`.
fn grow_net(old: &Net, blocks: usize, channels: usize, seed: u64) -> Result<Net, String> {
    let from = old.config().clone();
    if blocks < from.blocks || channels < from.channels {
        return Err(format!("a network grows: {blocks} blocks x {channels} channels is smaller than its {} x {}", from.blocks, from.channels));
    }
    let device = old.stem.conv.weight.val().device();
    let to = from.clone().with_tower(blocks, channels);
    let mut new = Net::seeded(&to, &device, seed).map_err(|e| e.to_string())?;

    // Stem: the old channels' filters; new channels read the input through fresh ones.
    new.stem = embed_conv_bn(&old.stem, new.stem);
    // Old blocks: their weights in the old channels; new blocks start as the identity.
    let fresh = std::mem::take(&mut new.blocks);
    new.blocks = fresh
        .into_iter()
        .enumerate()
        .map(|(i, mut block)| match old.blocks.get(i) {
            Some(was) => ResBlock { a: embed_conv_bn(&was.a, block.a), b: embed_conv_bn(&was.b, block.b) },
            None => {
                let n = block.b.bn.gamma.val().dims()[0];
                block.b.bn.gamma = replaced(&block.b.bn.gamma, vec![0.0; n], [n]);
                block.b.bn.beta = replaced(&block.b.bn.beta, vec![0.0; n], [n]);
                block
            }
        })
        .collect();
    // Heads: their own sizes are unchanged; they read the old channels only.
    new.policy.conv = embed_conv_bn(&old.policy.conv, new.policy.conv);
    new.policy.out = old.policy.out.clone();
    new.value.conv = embed_conv_bn(&old.value.conv, new.value.conv);
    new.value.fc1 = old.value.fc1.clone();
    new.value.fc2 = old.value.fc2.clone();
    Ok(new)
}

/// Loads the model in `from`, grows it ([`grow_net`]) and saves it into `out` with the
/// same game tag.
pub fn grow_model(from: &Path, out: &Path, blocks: usize, channels: usize, seed: u64) -> Result<(), ModelIoError> {
    let manifest = read_manifest(from)?;
    let net = load_model(from, &crate::device::cpu_device())?;
    let grown = grow_net(&net, blocks, channels, seed).map_err(|message| ModelIoError::Manifest { path: from.join("model.json"), message })?;
    save(&grown, out, manifest.game)
}

/// `fresh` (sized for the grown network) with `old`'s weights in its first output and
/// input channels, old outputs reading nothing from new inputs, and the batch norm's
/// first channels (scale, shift, running statistics) from `old`.
fn embed_conv_bn(old: &ConvBn, fresh: ConvBn) -> ConvBn {
    ConvBn { conv: embed_conv(&old.conv, fresh.conv), bn: embed_bn(&old.bn, fresh.bn) }
}

fn embed_conv(old: &Conv2d, mut fresh: Conv2d) -> Conv2d {
    let [o_old, i_old, kh, kw] = old.weight.val().dims();
    let [o_new, i_new, _, _] = fresh.weight.val().dims();
    let was = to_vec(old.weight.val());
    let mut w = to_vec(fresh.weight.val());
    let k = kh * kw;
    for o in 0..o_old {
        for i in 0..i_new {
            let at = (o * i_new + i) * k;
            if i < i_old {
                w[at..at + k].copy_from_slice(&was[(o * i_old + i) * k..(o * i_old + i + 1) * k]);
            } else {
                w[at..at + k].fill(0.0);
            }
        }
    }
    fresh.weight = replaced(&fresh.weight, w, [o_new, i_new, kh, kw]);
    if let (Some(was), Some(bias)) = (&old.bias, &fresh.bias) {
        let mut b = to_vec(bias.val());
        b[..o_old].copy_from_slice(&to_vec(was.val()));
        fresh.bias = Some(replaced(bias, b, [o_new]));
    }
    fresh
}

fn embed_bn(old: &BatchNorm, mut fresh: BatchNorm) -> BatchNorm {
    let head = |old: Tensor<1>, fresh: Tensor<1>| {
        let mut v = to_vec(fresh);
        let was = to_vec(old);
        v[..was.len()].copy_from_slice(&was);
        v
    };
    let n = fresh.gamma.val().dims()[0];
    let gamma = head(old.gamma.val(), fresh.gamma.val());
    let beta = head(old.beta.val(), fresh.beta.val());
    let mean = head(old.running_mean.value_sync(), fresh.running_mean.value());
    let var = head(old.running_var.value_sync(), fresh.running_var.value());
    let device = fresh.gamma.val().device();
    fresh.gamma = replaced(&fresh.gamma, gamma, [n]);
    fresh.beta = replaced(&fresh.beta, beta, [n]);
    fresh.running_mean = RunningState::new(Tensor::from_data(TensorData::new(mean, [n]), &device));
    fresh.running_var = RunningState::new(Tensor::from_data(TensorData::new(var, [n]), &device));
    fresh
}

/// `param` holding `values`, tracked for gradients as it was.
fn replaced<const D: usize>(param: &Param<Tensor<D>>, values: Vec<f32>, shape: [usize; D]) -> Param<Tensor<D>> {
    param.clone().map(|t| {
        let (device, require_grad) = (t.device(), t.is_require_grad());
        Tensor::from_data(TensorData::new(values, shape), &device).set_require_grad(require_grad)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{cpu_device, cpu_train_device};
    use crate::infer::InferenceNet;
    use crate::store::{save_model_tagged, GameTag};
    use crate::tensor_util::input_tensor;
    use crate::testutil::{max_abs_diff, tiny_config, trained_tiny_net, OwnedBatch};
    use crate::train::{TrainConfig, TrainStep};

    fn outputs(net: &Net, input: &[f32], batch: usize) -> (Vec<f32>, Vec<f32>) {
        let x = input_tensor(net.config(), input, batch, &net.stem.conv.weight.val().device());
        let out = net.forward(x);
        (to_vec(out.policy), to_vec(out.value))
    }

    #[test]
    fn a_grown_network_computes_the_same_function_in_play_and_in_training() {
        let old = trained_tiny_net(20);
        let grown = grow_net(&old, 4, 13, 7).unwrap();
        assert_eq!((grown.config().blocks, grown.config().channels), (4, 13));
        let batch = OwnedBatch::random(old.config(), 6, 99);

        // As self-play runs it: folded, batch norm from the running statistics.
        let (a, b) = (InferenceNet::from_net(&old).forward(&batch.input, 6), InferenceNet::from_net(&grown).forward(&batch.input, 6));
        let d = max_abs_diff(&a.policy, &b.policy).max(max_abs_diff(&a.value, &b.value));
        assert!(d < 1e-4, "folded outputs differ by {d}");
        // As training runs it: batch norm from the batch's statistics.
        let (pa, va) = outputs(&old, &batch.input, 6);
        let (pb, vb) = outputs(&grown, &batch.input, 6);
        let d = max_abs_diff(&pa, &pb).max(max_abs_diff(&va, &vb));
        assert!(d < 1e-4, "training-mode outputs differ by {d}");

        // Not the same function by accident: the new channels carry signal of their own.
        let stem = to_vec(grown.stem.conv.weight.val());
        let per_out = stem.len() / 13;
        assert!(stem[8 * per_out..].iter().any(|w| *w != 0.0), "the new stem channels read nothing");
    }

    #[test]
    fn a_grown_network_learns_through_the_weights_that_start_at_zero() {
        let old = trained_tiny_net(5);
        let grown = grow_net(&old, 3, 12, 3).unwrap();
        let mut step = TrainStep::new(TrainConfig { learning_rate: 1e-2, ..TrainConfig::default() }, cpu_train_device());
        let batch = OwnedBatch::random(old.config(), 6, 5);
        let after = step.step(grown, &batch.view()).0;

        // An old block's old outputs from the new stream channels (zero when grown).
        let w = to_vec(after.blocks[0].a.conv.weight.val());
        let cross: Vec<f32> = (0..8).flat_map(|o| (8..12).flat_map(move |i| (0..9).map(move |k| (o * 12 + i) * 9 + k))).map(|at| w[at]).collect();
        assert!(cross.iter().any(|x| *x != 0.0), "no gradient reached the old channels' weights from the new ones");
        // The heads' weights from the new channels.
        let p = to_vec(after.policy.conv.conv.weight.val());
        assert!((0..4).any(|o| (8..12).any(|i| p[o * 12 + i] != 0.0)), "the policy head does not learn to read the new channels");
        // The new block's last scale (zero when grown).
        assert!(to_vec(after.blocks[2].b.bn.gamma.val()).iter().any(|g| *g != 0.0), "the new block stays the identity");
    }

    #[test]
    fn a_saved_model_grows_with_its_game_and_never_shrinks() {
        let dir = tempfile::tempdir().unwrap();
        let game = GameTag { variant: "pocket-copper".into(), options: vec![("start".into(), "seed".into())], planes_version: 3, action_version: 2 };
        let net = Net::new(&tiny_config(), &cpu_device()).unwrap();
        save_model_tagged(&net, &dir.path().join("small"), &game).unwrap();
        grow_model(&dir.path().join("small"), &dir.path().join("big"), 3, 16, 1).unwrap();
        let m = read_manifest(&dir.path().join("big")).unwrap();
        assert_eq!((m.config.blocks, m.config.channels, m.game), (3, 16, Some(game)));
        let e = grow_model(&dir.path().join("small"), &dir.path().join("x"), 1, 16, 1).unwrap_err().to_string();
        assert!(e.contains("1 blocks x 16 channels is smaller than its 2 x 8"), "{e}");
        assert!(!dir.path().join("x").exists());
    }
}
