//! Batch-norm folding: turns an eval-mode [`Net`] into plain `f32` weights where every
//! `conv -> BN` pair is one convolution with bias.
//!
//! For output channel `o`, with `s_o = gamma_o / sqrt(running_var_o + eps)`:
//! `W'_o = s_o * W_o` and `b'_o = beta_o - s_o * running_mean_o (+ s_o * conv_bias_o)`.
//!
//! The folded weights are re-laid out for channels-last ("NHWC") matrix products, which is
//! what [`crate::InferenceNet`] computes with.

use burn::module::Module;
use burn::nn::conv::Conv2d;
use burn::nn::{BatchNorm, Linear};

use crate::config::NetConfig;
use crate::net::{ConvBn, Net};
use crate::tensor_util::to_vec;

/// A convolution with its batch norm folded in, laid out for `out = im2col(x) @ weight + bias`.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldedConv {
    /// Input channels.
    pub c_in: usize,
    /// Output channels.
    pub c_out: usize,
    /// Kernel side (1 or 3).
    pub kernel: usize,
    /// `[kernel * kernel * c_in, c_out]` row-major; row `(ky * kernel + kx) * c_in + ci`.
    pub weight: Vec<f32>,
    /// `[c_out]`.
    pub bias: Vec<f32>,
}

/// A fully-connected layer, `out = x @ weight + bias`.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldedDense {
    /// Input features.
    pub d_in: usize,
    /// Output features.
    pub d_out: usize,
    /// `[d_in, d_out]` row-major.
    pub weight: Vec<f32>,
    /// `[d_out]`.
    pub bias: Vec<f32>,
}

/// All weights of a [`Net`] after folding, channels-last.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldedNet {
    /// The network's config.
    pub config: NetConfig,
    /// Stem 3x3 conv.
    pub stem: FoldedConv,
    /// Residual blocks: `[first conv, second conv]`.
    pub blocks: Vec<[FoldedConv; 2]>,
    /// Policy head 1x1 conv (BN folded).
    pub policy_conv: FoldedConv,
    /// Policy output 1x1 conv, `weight` `[policy_head_channels, policy_planes]`.
    pub policy_out: FoldedConv,
    /// Value head 1x1 conv (BN folded).
    pub value_conv: FoldedConv,
    /// Value hidden layer; input rows reordered to channels-last flattening
    /// (`square * value_head_channels + channel`).
    pub value_fc1: FoldedDense,
    /// Value output layer `[value_hidden, 3]`.
    pub value_fc2: FoldedDense,
}

/// Conv weight `[o, i, k, k]` (+ optional bias) to channels-last `[k*k*i, o]`, each output
/// column scaled by `scale[o]`.
fn conv_to_nhwc(conv: &Conv2d, scale: Option<&[f32]>) -> FoldedConv {
    let [c_out, c_in, kh, kw] = conv.weight.val().dims();
    assert_eq!(kh, kw, "square kernels only");
    let w = to_vec(conv.weight.val());
    let taps = kh * kw;
    let mut weight = vec![0.0; taps * c_in * c_out];
    for o in 0..c_out {
        let s = scale.map_or(1.0, |s| s[o]);
        for i in 0..c_in {
            for t in 0..taps {
                weight[(t * c_in + i) * c_out + o] = s * w[(o * c_in + i) * taps + t];
            }
        }
    }
    let bias = match &conv.bias {
        Some(b) => to_vec(b.val()).iter().enumerate().map(|(o, b)| scale.map_or(1.0, |s| s[o]) * b).collect(),
        None => vec![0.0; c_out],
    };
    FoldedConv { c_in, c_out, kernel: kh, weight, bias }
}

/// Per-channel `(scale, shift)` of an eval-mode batch norm.
fn bn_affine(bn: &BatchNorm) -> (Vec<f32>, Vec<f32>) {
    let gamma = to_vec(bn.gamma.val());
    let beta = to_vec(bn.beta.val());
    let mean = to_vec(bn.running_mean.value());
    let var = to_vec(bn.running_var.value());
    let eps = bn.epsilon;
    let scale: Vec<f32> = gamma.iter().zip(&var).map(|(g, v)| (f64::from(*g) / (f64::from(*v) + eps).sqrt()) as f32).collect();
    let shift = beta.iter().zip(&mean).zip(&scale).map(|((b, m), s)| b - m * s).collect();
    (scale, shift)
}

fn fold_conv_bn(cb: &ConvBn) -> FoldedConv {
    let (scale, shift) = bn_affine(&cb.bn);
    let mut folded = conv_to_nhwc(&cb.conv, Some(&scale));
    for (b, s) in folded.bias.iter_mut().zip(shift) {
        *b += s;
    }
    folded
}

fn dense(linear: &Linear) -> FoldedDense {
    let [d_in, d_out] = linear.weight.val().dims();
    FoldedDense { d_in, d_out, weight: to_vec(linear.weight.val()), bias: linear.bias.as_ref().map_or_else(|| vec![0.0; d_out], |b| to_vec(b.val())) }
}

impl FoldedNet {
    /// Folds the eval-mode statistics of `net` (its running means and variances; the
    /// module is first turned into its validation copy, so a training-mode module works too).
    pub fn from_net(net: &Net) -> Self {
        let net = net.valid();
        let config = net.config().clone();
        let blocks = net.blocks.iter().map(|b| [fold_conv_bn(&b.a), fold_conv_bn(&b.b)]).collect();

        // fc1 consumes the value-conv output flattened channels-first (c * S + s);
        // the CPU engine flattens channels-last (s * Cv + c): permute its input rows.
        let mut value_fc1 = dense(&net.value.fc1);
        let squares = config.squares();
        let cv = config.value_head_channels;
        let mut permuted = vec![0.0; value_fc1.weight.len()];
        let d_out = value_fc1.d_out;
        for c in 0..cv {
            for s in 0..squares {
                let src = (c * squares + s) * d_out;
                let dst = (s * cv + c) * d_out;
                permuted[dst..dst + d_out].copy_from_slice(&value_fc1.weight[src..src + d_out]);
            }
        }
        value_fc1.weight = permuted;

        Self {
            stem: fold_conv_bn(&net.stem),
            blocks,
            policy_conv: fold_conv_bn(&net.policy.conv),
            policy_out: conv_to_nhwc(&net.policy.out, None),
            value_conv: fold_conv_bn(&net.value.conv),
            value_fc1,
            value_fc2: dense(&net.value.fc2),
            config,
        }
    }
}
