//! The trainable policy/value network (burn module).
//!
//! Architecture (AlphaZero style, every convolution "same"-padded so the board size
//! never changes; activations are `[batch, channels, H, W]`):
//!
//! ```text
//! input [B, input_planes, H, W]
//!   -> stem: conv3x3(input_planes -> C) + BN + ReLU                 [B, C, H, W]
//!   -> blocks x ResBlock: x + BN(conv3x3(ReLU(BN(conv3x3(x))))), ReLU [B, C, H, W]
//!   -> policy head: conv1x1(C -> Cp) + BN + ReLU                    [B, Cp, H, W]
//!                   conv1x1(Cp -> policy_planes) (+ bias)          [B, P, H, W]
//!                   flatten                                        [B, P*H*W]
//!   -> value head:  conv1x1(C -> Cv) + BN + ReLU                    [B, Cv, H, W]
//!                   flatten                                        [B, Cv*H*W]
//!                   linear(value_hidden) + ReLU                    [B, value_hidden]
//!                   linear(3)                                      [B, 3] (W, D, L logits)
//! ```
//!
//! Convolutions followed by batch norm carry no bias (BN's beta plays that role).
//! The policy head is convolutional: no dense layer of size `C*H*W x P*H*W`.
//!
//! Training on the CPU (burn-flex with autodiff) computes the same function with the
//! activations channels-last, `[B, H, W, C]`, from the stem's output to the heads, through
//! this crate's kernels ([`crate::fastconv`], [`crate::fastbn`]): no layout conversion
//! between layers. Every other device and mode runs the NCHW graph above.

use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{BatchNorm, BatchNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};

use crate::config::{ConfigError, NetConfig};
use crate::fastconv::ImageLayout;

/// Convolution without bias followed by batch norm. Input and output `[B, C, H, W]`
/// (channels-last `[B, H, W, C]` on the CPU training path, see the module doc).
#[derive(Module, Debug)]
pub struct ConvBn {
    /// Weight `[c_out, c_in, k, k]`, no bias.
    pub conv: Conv2d,
    /// Batch norm over `c_out`.
    pub bn: BatchNorm,
}

impl ConvBn {
    fn new(c_in: usize, c_out: usize, kernel: usize, cfg: &NetConfig, device: &Device) -> Self {
        let padding = if kernel == 1 { PaddingConfig2d::Valid } else { PaddingConfig2d::Explicit(kernel / 2, kernel / 2, kernel / 2, kernel / 2) };
        let conv = Conv2dConfig::new([c_in, c_out], [kernel, kernel]).with_padding(padding).with_bias(false).init(device);
        let bn = BatchNormConfig::new(c_out).with_epsilon(cfg.bn_epsilon).with_momentum(cfg.bn_momentum).init(device);
        Self { conv, bn }
    }

    /// `BN(conv(x))`, `[B, c_in, H, W] -> [B, c_out, H, W]`. 3x3 convolutions go through
    /// [`crate::fastconv::conv3x3`] (same function, faster forward and backward on
    /// burn-flex; burn's conv2d on other devices).
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        self.forward_with(x, true)
    }

    /// `fast`: [`crate::fastconv::conv3x3`] for 3x3 kernels, [`crate::fastconv::conv1x1`] for
    /// 1x1 kernels on burn-flex, the fused batch norm in training; otherwise burn's ops.
    fn forward_with(&self, x: Tensor<4>, fast: bool) -> Tensor<4> {
        let y = self.conv_with(x, fast);
        if fast && self.fused_bn_applies(&y) {
            let bn = &self.bn;
            let r = crate::fastbn::batch_norm_train(y, bn.gamma.val(), bn.beta.val(), bn.epsilon);
            self.update_running_stats(r.mean, r.variance);
            r.output
        } else {
            self.bn.forward(y)
        }
    }

    /// `ReLU(BN(conv(x)) + skip)`, or `ReLU(BN(conv(x)))` without `skip`: in training on
    /// burn-flex one fused pass after the convolution ([`crate::fastbn::batch_norm_relu_train`]).
    fn forward_relu(&self, x: Tensor<4>, skip: Option<Tensor<4>>, fast: bool) -> Tensor<4> {
        let y = self.conv_with(x, fast);
        if fast && self.fused_bn_applies(&y) {
            let bn = &self.bn;
            let r = crate::fastbn::batch_norm_relu_train(y, bn.gamma.val(), bn.beta.val(), skip, bn.epsilon);
            self.update_running_stats(r.mean, r.variance);
            r.output
        } else {
            let y = self.bn.forward(y);
            relu(match skip {
                Some(skip) => y + skip,
                None => y,
            })
        }
    }

    fn conv_with(&self, x: Tensor<4>, fast: bool) -> Tensor<4> {
        conv_with(&self.conv, x, fast)
    }

    /// [`forward_relu`](Self::forward_relu) on the channels-last training path: `x` in
    /// layout `from` (channels-last except the stem's input), the output channels-last,
    /// `[B, H, W, c_out]`; `skip` channels-last. Only where [`Net::channels_last_applies`].
    fn forward_relu_channels_last(&self, x: Tensor<4>, from: ImageLayout, skip: Option<Tensor<4>>) -> Tensor<4> {
        let y = conv_channels_last(&self.conv, x, from);
        let bn = &self.bn;
        let r = crate::fastbn::batch_norm_relu_train_layout(y, bn.gamma.val(), bn.beta.val(), skip, bn.epsilon, ImageLayout::Nhwc);
        self.update_running_stats(r.mean, r.variance);
        r.output
    }

    /// Batch norm in training mode (batch statistics) on burn-flex, where the fused kernels
    /// of [`crate::fastbn`] exist.
    fn fused_bn_applies(&self, y: &Tensor<4>) -> bool {
        let device = y.device();
        device.is_autodiff() && self.bn.training.is_enabled() && crate::fastconv::is_flex(&device)
    }

    /// burn's `BatchNorm::forward_train` bookkeeping: the running statistics move towards
    /// the batch's by `momentum`.
    fn update_running_stats(&self, mean: Tensor<1>, variance: Tensor<1>) {
        let bn = &self.bn;
        let device = mean.device();
        let m = bn.momentum;
        let running_mean = bn.running_mean.value_sync().to_device(&device).mul_scalar(1.0 - m).add(mean.detach().mul_scalar(m));
        let running_var = bn.running_var.value_sync().to_device(&device).mul_scalar(1.0 - m).add(variance.detach().mul_scalar(m));
        bn.running_mean.update(running_mean.detach());
        bn.running_var.update(running_var.detach());
    }
}

/// `conv.forward(x)` (this network's convolutions: 3x3 "same" without bias, 1x1 with or
/// without) through this crate's kernels when `fast`: [`crate::fastconv::conv3x3`] for 3x3
/// kernels, [`crate::fastconv::conv1x1`] for 1x1 kernels on burn-flex; burn's conv2d
/// otherwise.
fn conv_with(conv: &Conv2d, x: Tensor<4>, fast: bool) -> Tensor<4> {
    match conv.kernel_size {
        [3, 3] if fast && conv.bias.is_none() => crate::fastconv::conv3x3(x, conv.weight.val()),
        [1, 1] if fast && crate::fastconv::is_flex(&x.device()) => crate::fastconv::conv1x1(x, conv.weight.val(), conv.bias.as_ref().map(|b| b.val())),
        _ => conv.forward(x),
    }
}

/// `conv.forward(x)` on channels-last batches: `x` in layout `from` (`[B, H, W, C]` when
/// channels-last), the output `[B, H, W, O]`. 3x3 kernels (no bias) through
/// [`crate::fastconv::conv3x3_layout`]; 1x1 kernels, from channels-last only, as the batched
/// matrix product `x [B, H·W, C] · Wᵀ [1, C, O]` (+ bias).
fn conv_channels_last(conv: &Conv2d, x: Tensor<4>, from: ImageLayout) -> Tensor<4> {
    match conv.kernel_size {
        [3, 3] if conv.bias.is_none() => crate::fastconv::conv3x3_layout(x, conv.weight.val(), from, ImageLayout::Nhwc),
        [1, 1] if from == ImageLayout::Nhwc => {
            let [b, h, w, c] = x.dims();
            let [o, _, _, _] = conv.weight.dims();
            let y = x.reshape([b, h * w, c]).matmul(conv.weight.val().reshape([1, o, c]).swap_dims(1, 2));
            let y = match &conv.bias {
                Some(bias) => y + bias.val().reshape([1, 1, o]),
                None => y,
            };
            y.reshape([b, h, w, o])
        }
        _ => panic!("conv_channels_last: only 3x3 convolutions without bias and 1x1 convolutions from channels-last batches"),
    }
}

/// Residual block: `ReLU(x + BN(conv(ReLU(BN(conv(x))))))`, `[B, C, H, W]` throughout
/// (`[B, H, W, C]` on the CPU training path).
#[derive(Module, Debug)]
pub struct ResBlock {
    /// First 3x3 conv + BN.
    pub a: ConvBn,
    /// Second 3x3 conv + BN (before the skip addition).
    pub b: ConvBn,
}

impl ResBlock {
    /// `[B, C, H, W] -> [B, C, H, W]`.
    pub fn forward(&self, x: Tensor<4>) -> Tensor<4> {
        self.forward_with(x, true)
    }

    fn forward_with(&self, x: Tensor<4>, fast: bool) -> Tensor<4> {
        let y = self.a.forward_relu(x.clone(), None, fast);
        self.b.forward_relu(y, Some(x), fast)
    }

    /// The block on channels-last `[B, H, W, C]` (the training path).
    fn forward_channels_last(&self, x: Tensor<4>) -> Tensor<4> {
        let y = self.a.forward_relu_channels_last(x.clone(), ImageLayout::Nhwc, None);
        self.b.forward_relu_channels_last(y, ImageLayout::Nhwc, Some(x))
    }
}

/// Policy head: 1x1 conv + BN + ReLU, then 1x1 conv (with bias) to the move planes.
#[derive(Module, Debug)]
pub struct PolicyHead {
    /// `[B, C, H, W] -> [B, policy_head_channels, H, W]`.
    pub conv: ConvBn,
    /// `[B, policy_head_channels, H, W] -> [B, policy_planes, H, W]`, with bias.
    pub out: Conv2d,
}

/// Value head: 1x1 conv + BN + ReLU, flatten, linear + ReLU, linear to 3 WDL logits.
#[derive(Module, Debug)]
pub struct ValueHead {
    /// `[B, C, H, W] -> [B, value_head_channels, H, W]`.
    pub conv: ConvBn,
    /// `[B, value_head_channels*H*W] -> [B, value_hidden]`.
    pub fc1: Linear,
    /// `[B, value_hidden] -> [B, 3]`.
    pub fc2: Linear,
}

/// Raw network outputs (logits), see [`NetConfig`] for the index layout.
#[derive(Debug, Clone)]
pub struct NetOutput {
    /// Policy logits `[batch, policy_planes * H * W]`.
    pub policy: Tensor<2>,
    /// Win/draw/loss logits `[batch, 3]` for the side to move.
    pub value: Tensor<2>,
}

/// The trainable network.
///
/// Batch norm runs in training mode (batch statistics, running-statistics update) when the
/// input lives on an autodiff device and the module was not made a validation copy with
/// [`Module::valid`]; otherwise it uses the running statistics.
#[derive(Module, Debug)]
pub struct Net {
    /// 3x3 conv + BN (+ ReLU in forward), `[B, input_planes, H, W] -> [B, C, H, W]`.
    pub stem: ConvBn,
    /// Residual tower.
    pub blocks: Vec<ResBlock>,
    /// Policy head.
    pub policy: PolicyHead,
    /// Value head.
    pub value: ValueHead,
    #[module(skip)]
    config: NetConfig,
}

impl Net {
    /// Builds a freshly initialised network on `device` (use [`crate::cpu_train_device`] to
    /// train it, [`crate::cpu_device`] for inference).
    /// A fresh network whose weights follow from `seed` alone. Burn's initialiser draws
    /// from one process-wide generator, so seeding and construction are done under one
    /// lock: two threads making networks at once would otherwise interleave their draws.
    pub fn seeded(config: &NetConfig, device: &Device, seed: u64) -> Result<Self, ConfigError> {
        static INIT: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _guard = INIT.lock().unwrap_or_else(|p| p.into_inner());
        device.seed(seed);
        Net::new(config, device)
    }

    pub fn new(config: &NetConfig, device: &Device) -> Result<Self, ConfigError> {
        config.validate()?;
        let c = config.channels;
        let stem = ConvBn::new(config.input_planes, c, 3, config, device);
        let blocks = (0..config.blocks).map(|_| ResBlock { a: ConvBn::new(c, c, 3, config, device), b: ConvBn::new(c, c, 3, config, device) }).collect();
        let policy = PolicyHead {
            conv: ConvBn::new(c, config.policy_head_channels, 1, config, device),
            out: Conv2dConfig::new([config.policy_head_channels, config.policy_planes], [1, 1]).with_bias(true).init(device),
        };
        let value = ValueHead {
            conv: ConvBn::new(c, config.value_head_channels, 1, config, device),
            fc1: LinearConfig::new(config.value_head_channels * config.squares(), config.value_hidden).init(device),
            fc2: LinearConfig::new(config.value_hidden, 3).init(device),
        };
        tracing::debug!(blocks = config.blocks, channels = c, "network initialised");
        Ok(Self { stem, blocks, policy, value, config: config.clone() })
    }

    /// The config this network was built from.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Trunk output `[B, C, H, W]` from input `[B, input_planes, H, W]`.
    pub fn trunk(&self, input: Tensor<4>) -> Tensor<4> {
        self.trunk_with(input, true)
    }

    fn trunk_with(&self, input: Tensor<4>, fast: bool) -> Tensor<4> {
        let mut x = self.stem.forward_relu(input, None, fast);
        for block in &self.blocks {
            x = block.forward_with(x, fast);
        }
        x
    }

    /// Full forward pass: input `[B, input_planes, H, W]` to logits.
    pub fn forward(&self, input: Tensor<4>) -> NetOutput {
        self.forward_with(input, true)
    }

    /// Same function as [`forward`](Self::forward) computed with burn's own conv2d
    /// everywhere (no [`crate::fastconv`] extension): a reference for tests and benchmarks.
    pub fn forward_reference(&self, input: Tensor<4>) -> NetOutput {
        self.forward_with(input, false)
    }

    /// Whether [`forward`](Self::forward) takes the channels-last training path: batch norm
    /// in training mode on burn-flex with autodiff, where every op from the stem to the heads
    /// has a channels-last kernel, so the activations are never converted between layouts
    /// (each conversion was a pass over the activation, about a tenth of a training step).
    fn channels_last_applies(&self, input: &Tensor<4>) -> bool {
        self.stem.fused_bn_applies(input)
    }

    /// [`forward`](Self::forward) with the tower channels-last: the same function (the
    /// heads' outputs come back in the NCHW order of [`NetConfig`]'s index layout).
    fn forward_channels_last(&self, input: Tensor<4>) -> NetOutput {
        let [batch, _, h, w] = input.dims();
        let squares = h * w;
        let mut x = self.stem.forward_relu_channels_last(input, ImageLayout::Nchw, None);
        for block in &self.blocks {
            x = block.forward_channels_last(x);
        }

        // Policy: the last 1x1 convolution as W [1, P, Cp] · pᵀ [B, Cp, S] (a strided view,
        // no copy), which lands in the plane-major order of the policy index.
        let p = self.policy.conv.forward_relu_channels_last(x.clone(), ImageLayout::Nhwc, None);
        let cp = self.config.policy_head_channels;
        let planes = self.config.policy_planes;
        let out = &self.policy.out;
        let logits = out.weight.val().reshape([1, planes, cp]).matmul(p.reshape([batch, squares, cp]).swap_dims(1, 2));
        let logits = match &out.bias {
            Some(bias) => logits + bias.val().reshape([1, planes, 1]),
            None => logits,
        };
        let policy = logits.reshape([batch, self.config.policy_len()]);

        // Value: flattened in NCHW order, as fc1's weights expect.
        let cv = self.config.value_head_channels;
        let v = self.value.conv.forward_relu_channels_last(x, ImageLayout::Nhwc, None);
        let v = v.reshape([batch, squares, cv]).swap_dims(1, 2).reshape([batch, cv * squares]);
        let v = relu(self.value.fc1.forward(v));
        let value = self.value.fc2.forward(v);
        NetOutput { policy, value }
    }

    fn forward_with(&self, input: Tensor<4>, fast: bool) -> NetOutput {
        if fast && self.channels_last_applies(&input) {
            return self.forward_channels_last(input);
        }
        let [batch, _, _, _] = input.dims();
        let x = self.trunk_with(input, fast);

        let p = self.policy.conv.forward_relu(x.clone(), None, fast);
        let policy = conv_with(&self.policy.out, p, fast).reshape([batch, self.config.policy_len()]);

        let v = self.value.conv.forward_relu(x, None, fast);
        let v = v.reshape([batch, self.config.value_head_channels * self.config.squares()]);
        let v = relu(self.value.fc1.forward(v));
        let value = self.value.fc2.forward(v);

        NetOutput { policy, value }
    }

    /// Forward pass from a flat `f32` batch laid out as `[batch, input_planes, H, W]`.
    pub fn forward_flat(&self, input: &[f32], batch: usize, device: &Device) -> NetOutput {
        self.forward(crate::tensor_util::input_tensor(&self.config, input, batch, device))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{cpu_device, cpu_train_device};
    use crate::tensor_util::to_vec;
    use crate::testutil::{tiny_config, OwnedBatch};

    #[test]
    fn output_shapes_on_eval_and_train_devices() {
        let cfg = tiny_config();
        let batch = OwnedBatch::random(&cfg, 3, 1);
        for device in [cpu_device(), cpu_train_device()] {
            let net = Net::new(&cfg, &device).unwrap();
            let out = net.forward_flat(&batch.input, 3, &device);
            assert_eq!(out.policy.dims(), [3, cfg.policy_len()]);
            assert_eq!(out.value.dims(), [3, 3]);
            assert!(to_vec(out.policy).iter().all(|x| x.is_finite()));
        }
    }

    #[test]
    fn fast_and_reference_forward_agree() {
        let cfg = tiny_config();
        let batch = OwnedBatch::random(&cfg, 3, 2);
        for device in [cpu_device(), cpu_train_device()] {
            let net = Net::new(&cfg, &device).unwrap();
            let x = || crate::tensor_util::input_tensor(&cfg, &batch.input, 3, &device);
            let a = net.forward(x());
            let b = net.forward_reference(x());
            let d = crate::testutil::max_abs_diff(&to_vec(a.policy), &to_vec(b.policy));
            assert!(d < 1e-4, "{d}");
            let d = crate::testutil::max_abs_diff(&to_vec(a.value), &to_vec(b.value));
            assert!(d < 1e-4, "{d}");
        }
    }

    /// The training step's gradients and batch-norm bookkeeping: every parameter's gradient
    /// through the fast ops (the channels-last tower: conv3x3, conv1x1 as matmul, fused batch
    /// norm) equals the one through burn's own conv2d and batch norm, and so do the running
    /// statistics after the step.
    #[test]
    fn fast_and_reference_gradients_agree() {
        let cfg = tiny_config();
        // More images than twice the threads: the convolutions take their Winograd path
        // (their own tests cover the small-batch path).
        let b = 2 * rayon::current_num_threads() + 3;
        let batch = OwnedBatch::random(&cfg, b, 3);
        let device = cpu_train_device();
        let initial = Net::new(&cfg, &device).unwrap().into_record();
        let grads_of = |fast: bool| {
            // A copy each, so each path updates its own running statistics.
            let net = Net::new(&cfg, &device).unwrap().load_record(initial.clone());
            let x = crate::tensor_util::input_tensor(&cfg, &batch.input, b, &device);
            let out = if fast { net.forward(x) } else { net.forward_reference(x) };
            let d = &device;
            let l = crate::train::losses(
                out,
                crate::tensor_util::matrix(&batch.policy_target, b, cfg.policy_len(), d),
                crate::tensor_util::matrix(&batch.value_target, b, 3, d),
                None,
                1.0,
            );
            let grads = l.total.backward();
            let mut all = Vec::new();
            let mut take = |t: Tensor<4>| all.push(to_vec(t.grad(&grads).unwrap()));
            take(net.stem.conv.weight.val());
            take(net.blocks[0].b.conv.weight.val());
            take(net.policy.conv.conv.weight.val());
            take(net.policy.out.weight.val());
            take(net.value.conv.conv.weight.val());
            all.push(to_vec(net.policy.out.bias.as_ref().unwrap().val().grad(&grads).unwrap()));
            all.push(to_vec(net.value.fc1.weight.val().grad(&grads).unwrap()));
            all.push(to_vec(net.stem.bn.gamma.val().grad(&grads).unwrap()));
            for bn in [&net.stem.bn, &net.blocks[0].b.bn, &net.policy.conv.bn, &net.value.conv.bn] {
                all.push(to_vec(bn.running_mean.value()));
                all.push(to_vec(bn.running_var.value()));
            }
            all
        };
        let (fast, reference) = (grads_of(true), grads_of(false));
        for (i, (a, b)) in fast.iter().zip(&reference).enumerate() {
            let scale = b.iter().fold(0f32, |m, x| m.max(x.abs())).max(1e-3);
            let d = crate::testutil::max_abs_diff(a, b);
            assert!(d < 1e-3 * scale, "parameter {i}: gradients (or running statistics) differ by {d} (scale {scale})");
        }
    }

    #[test]
    fn invalid_config_is_an_error() {
        let mut cfg = tiny_config();
        cfg.board_width = 0;
        assert!(Net::new(&cfg, &cpu_device()).is_err());
    }
}
