//! Training-mode batch norm for burn-flex as one fused, parallel operation, forward and
//! backward, as a burn backend extension (like [`crate::fastconv`]).
//!
//! burn-flex has no batch-norm kernel of its own: burn's default `batch_norm_train` and
//! its backward are chains of about fifteen element-wise, transpose and reduction ops,
//! each a full pass over the activation, and on two threads they were most of the gap
//! between our training step and PyTorch's. This computes the same function in two passes
//! each way, split across threads; NCHW here, channels-last rows in [`crate::bn_rows`]
//! (the training tower's layout, same formulas):
//!
//! - forward: per channel (parallel) the batch mean μ and biased variance σ² (two-pass,
//!   f32 within a board, f64 across boards); then per image row (parallel)
//!   `y = (x − μ)·γ/√(σ² + ε) + β`;
//! - backward, with `x̂ = (x − μ)/√(σ² + ε)` and n = B·H·W samples per channel: per
//!   channel `dβ = Σ dy`, `dγ = Σ dy·x̂`; then per image row
//!   `dx = γ/√(σ² + ε) · (dy − dβ/n − x̂·dγ/n)` (Ioffe & Szegedy 2015, §3; the same
//!   formula as burn's `batch_norm_train_backward`).
//!
//! Only burn-flex (and autodiff over it) implements it; [`batch_norm_train`] falls back to
//! burn's op on every other device.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::flex::FlexTensor;
use burn::backend::ops::ModuleOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{backend_extension, Backend, Dispatch, Flex};
use burn::tensor::{DType, Tensor};
use rayon::prelude::*;
use std::mem::MaybeUninit;

use crate::bn_rows;
use crate::fastconv::{f32_data, flex_f32, is_flex, ImageLayout};
use crate::kernels::par_zeros;

/// Batch norm with the batch's own statistics, fused, on burn-flex.
#[backend_extension(Flex, Autodiff)]
pub trait FusedBatchNormOps: Backend {
    /// `x [B, C, H, W]`, `gamma`, `beta [C]` -> (`y [B, C, H, W]`, mean `[C]`, biased
    /// variance `[C]`). Differentiable in `x`, `gamma` and `beta`; the statistics are not.
    fn fused_bn_train(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);

    /// Gradients of [`fused_bn_train`](Self::fused_bn_train) with respect to `x`, `gamma`
    /// and `beta`, given the output gradient and the statistics it returned.
    fn fused_bn_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        mean: FloatTensor<Self>,
        variance: FloatTensor<Self>,
        epsilon: f64,
        grad: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);

    /// `relu(bn(x) + skip)` when `with_skip` (`skip` as `x`), else `relu(bn(x))` (`skip`
    /// unread): (`y`, mean, biased variance). `x` is `[B, C, H, W]` or, with `layout`
    /// [`ImageLayout::Nhwc`], `[B, H, W, C]`. Differentiable in `x`, `gamma`, `beta` and
    /// (with a skip) `skip`.
    fn fused_bn_relu_train(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        skip: FloatTensor<Self>,
        epsilon: f64,
        with_skip: bool,
        layout: ImageLayout,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);

    /// Gradients of [`fused_bn_relu_train`](Self::fused_bn_relu_train) with respect to `x`,
    /// `gamma`, `beta` and `skip` (an empty tensor without a skip), given its `output`.
    #[allow(clippy::too_many_arguments)]
    fn fused_bn_relu_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        mean: FloatTensor<Self>,
        variance: FloatTensor<Self>,
        output: FloatTensor<Self>,
        epsilon: f64,
        with_skip: bool,
        layout: ImageLayout,
        grad: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);
}

/// The result of [`batch_norm_train`]: the output and the batch statistics.
pub struct BatchNormTrained {
    pub output: Tensor<4>,
    pub mean: Tensor<1>,
    pub variance: Tensor<1>,
}

/// Training-mode batch norm of `x [B, C, H, W]`: the fused extension on burn-flex devices,
/// burn's `batch_norm_train` elsewhere.
pub fn batch_norm_train(x: Tensor<4>, gamma: Tensor<1>, beta: Tensor<1>, epsilon: f64) -> BatchNormTrained {
    if is_flex(&x.device()) {
        let (y, mean, variance) = <Dispatch as FusedBatchNormOps>::fused_bn_train(x.into_dispatch(), gamma.into_dispatch(), beta.into_dispatch(), epsilon);
        BatchNormTrained { output: Tensor::from_dispatch(y), mean: Tensor::from_dispatch(mean), variance: Tensor::from_dispatch(variance) }
    } else {
        let r = burn::tensor::module::batch_norm_train(x, gamma, beta, epsilon);
        BatchNormTrained { output: r.output, mean: r.mean, variance: r.variance }
    }
}

/// Training-mode `relu(bn(x) + skip)` (or `relu(bn(x))` without a skip) of `x [B, C, H, W]`
/// in one pass each way on burn-flex devices (the element-wise ReLU and residual addition
/// were serial passes of their own, forward and backward); burn's ops elsewhere.
pub fn batch_norm_relu_train(x: Tensor<4>, gamma: Tensor<1>, beta: Tensor<1>, skip: Option<Tensor<4>>, epsilon: f64) -> BatchNormTrained {
    batch_norm_relu_train_layout(x, gamma, beta, skip, epsilon, ImageLayout::Nchw)
}

/// [`batch_norm_relu_train`] of a batch in `layout` (channels-last `[B, H, W, C]` with
/// [`ImageLayout::Nhwc`]); `skip`, if any, in the same layout.
pub fn batch_norm_relu_train_layout(
    x: Tensor<4>,
    gamma: Tensor<1>,
    beta: Tensor<1>,
    skip: Option<Tensor<4>>,
    epsilon: f64,
    layout: ImageLayout,
) -> BatchNormTrained {
    if layout == ImageLayout::Nhwc && !is_flex(&x.device()) {
        // burn's batch norm wants channels at dimension 1.
        let to_nchw = |t: Tensor<4>| t.permute([0, 3, 1, 2]);
        let r = batch_norm_relu_train_layout(to_nchw(x), gamma, beta, skip.map(to_nchw), epsilon, ImageLayout::Nchw);
        return BatchNormTrained { output: r.output.permute([0, 2, 3, 1]), ..r };
    }
    if is_flex(&x.device()) {
        let with_skip = skip.is_some();
        // Unread without a skip; any tensor of the device will do.
        let skip = skip.unwrap_or_else(|| x.clone());
        let (y, mean, variance) = <Dispatch as FusedBatchNormOps>::fused_bn_relu_train(
            x.into_dispatch(),
            gamma.into_dispatch(),
            beta.into_dispatch(),
            skip.into_dispatch(),
            epsilon,
            with_skip,
            layout,
        );
        BatchNormTrained { output: Tensor::from_dispatch(y), mean: Tensor::from_dispatch(mean), variance: Tensor::from_dispatch(variance) }
    } else {
        let r = burn::tensor::module::batch_norm_train(x, gamma, beta, epsilon);
        let y = match skip {
            Some(skip) => r.output + skip,
            None => r.output,
        };
        BatchNormTrained { output: burn::tensor::activation::relu(y), mean: r.mean, variance: r.variance }
    }
}

/// `(B, C, S)` of a rank-4 tensor in `layout`, `S = H·W`.
fn dims(t: &FlexTensor, layout: ImageLayout) -> (usize, usize, usize) {
    let shape = t.layout().shape();
    assert_eq!(shape.num_dims(), 4, "fused batch norm: rank-4 input expected");
    match layout {
        ImageLayout::Nchw => (shape[0], shape[1], shape[2] * shape[3]),
        ImageLayout::Nhwc => (shape[0], shape[3], shape[1] * shape[2]),
    }
}

fn shape_of(t: &FlexTensor) -> Vec<usize> {
    let sh = t.layout().shape();
    (0..sh.num_dims()).map(|i| sh[i]).collect()
}

/// Per-channel mean and biased variance of `x [b, c, s]` (two-pass).
fn channel_stats(x: &[f32], b: usize, c: usize, s: usize) -> (Vec<f32>, Vec<f32>) {
    let n = (b * s).max(1) as f64;
    let stats: Vec<(f32, f32)> = (0..c)
        .into_par_iter()
        .map(|ch| {
            let rows = || (0..b).map(move |i| &x[(i * c + ch) * s..(i * c + ch + 1) * s]);
            // Two passes; f32 within a row (a board, 81 values: vectorised), f64 across rows.
            let mean = rows().map(|r| r.iter().sum::<f32>() as f64).sum::<f64>() / n;
            let m = mean as f32;
            let var = rows().map(|r| r.iter().map(|&v| (v - m) * (v - m)).sum::<f32>() as f64).sum::<f64>() / n;
            (mean as f32, var as f32)
        })
        .collect();
    stats.into_iter().unzip()
}

pub(crate) fn inv_std(variance: &[f32], epsilon: f64) -> Vec<f32> {
    variance.iter().map(|&v| (1.0 / (v as f64 + epsilon).sqrt()) as f32).collect()
}

/// What follows the normalisation in the same pass: nothing, ReLU, or a residual addition
/// then ReLU (`relu(bn(x) + skip)`, the end of a residual block).
#[derive(Clone, Copy)]
pub(crate) enum Tail<'a> {
    None,
    Relu,
    AddRelu(&'a [f32]),
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn bn_forward(x: &[f32], gamma: &[f32], beta: &[f32], tail: Tail<'_>, b: usize, c: usize, s: usize, epsilon: f64) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let (mean, var) = channel_stats(x, b, c, s);
    let inv = inv_std(&var, epsilon);
    let len = b * c * s;
    assert_eq!(x.len(), len);
    // Written whole below, so not zero-filled first.
    let mut y = crate::kernels::output_buffer(len);
    // One row per (image, channel): contiguous, so rows are split across threads safely.
    y.spare_capacity_mut()[..len].par_chunks_mut(s.max(1)).zip(x.par_chunks(s.max(1))).enumerate().for_each(|(row, (out, inp))| {
        let ch = row % c;
        let (m, scale, shift) = (mean[ch], inv[ch] * gamma[ch], beta[ch]);
        match tail {
            Tail::None => out.iter_mut().zip(inp).for_each(|(o, &v)| _ = o.write((v - m) * scale + shift)),
            Tail::Relu => out.iter_mut().zip(inp).for_each(|(o, &v)| _ = o.write(((v - m) * scale + shift).max(0.0))),
            Tail::AddRelu(skip) => {
                let skip = &skip[row * s..(row + 1) * s];
                out.iter_mut().zip(inp).zip(skip).for_each(|((o, &v), &k)| _ = o.write(((v - m) * scale + shift + k).max(0.0)));
            }
        }
    });
    // SAFETY: x has len elements (asserted); its rows of s pair with y's rows of s one to
    // one, and each loop above writes every element of its row (the skip row also has s).
    unsafe { y.set_len(len) };
    (y, mean, var)
}

/// Gradients `(dx, dγ, dβ)` of the batch norm; with `relu_output` (the forward's output
/// after a ReLU), the incoming gradient is first masked where that output is 0, and with
/// `want_masked` that masked gradient is returned too (the skip input's gradient of
/// `relu(bn(x) + skip)`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn bn_backward(
    x: &[f32],
    dy: &[f32],
    relu_output: Option<&[f32]>,
    want_masked: bool,
    gamma: &[f32],
    mean: &[f32],
    var: &[f32],
    b: usize,
    c: usize,
    s: usize,
    epsilon: f64,
) -> (Vec<f32>, Vec<f32>, Vec<f32>, Option<Vec<f32>>) {
    let inv = inv_std(var, epsilon);
    let n = (b * s).max(1) as f64;
    // The incoming gradient of one (image, channel) row, masked by the ReLU where there is
    // one: `relu_output` 0 means the ReLU clipped there and passes no gradient.
    let masked_row = |at: usize, buf: &mut [f32]| match relu_output {
        Some(out) => buf.iter_mut().zip(&dy[at..at + s]).zip(&out[at..at + s]).for_each(|((g, &d), &o)| *g = if o > 0.0 { d } else { 0.0 }),
        None => buf.copy_from_slice(&dy[at..at + s]),
    };
    let sums: Vec<(f32, f32)> = (0..c)
        .into_par_iter()
        .map_init(
            || vec![0.0f32; s],
            |g, ch| {
                let (m, is) = (mean[ch], inv[ch]);
                let (mut d_beta, mut d_gamma) = (0.0f64, 0.0f64);
                for i in 0..b {
                    let at = (i * c + ch) * s;
                    masked_row(at, g);
                    // f32 within a row (81 values), f64 across rows.
                    let (mut rb, mut rg) = (0.0f32, 0.0f32);
                    for (&gv, &xv) in g.iter().zip(&x[at..at + s]) {
                        rb += gv;
                        rg += gv * ((xv - m) * is);
                    }
                    d_beta += rb as f64;
                    d_gamma += rg as f64;
                }
                (d_gamma as f32, d_beta as f32)
            },
        )
        .collect();
    let (d_gamma, d_beta): (Vec<f32>, Vec<f32>) = sums.into_iter().unzip();
    let len = b * c * s;
    assert!(x.len() == len && dy.len() == len);
    // dx is written whole below, so not zero-filled first.
    let mut dx = crate::kernels::output_buffer(len);
    let mut g_out = if want_masked { par_zeros(len) } else { Vec::new() };
    let rows = s.max(1);
    let row_pass = |row: usize, out: &mut [MaybeUninit<f32>], g: &mut [f32]| {
        let ch = row % c;
        let at = row * s;
        masked_row(at, g);
        let (m, is) = (mean[ch], inv[ch]);
        let scale = gamma[ch] * is;
        let (mean_dbeta, mean_dgamma) = ((d_beta[ch] as f64 / n) as f32, (d_gamma[ch] as f64 / n) as f32);
        for ((o, &xv), &gv) in out.iter_mut().zip(&x[at..at + s]).zip(g.iter()) {
            let xhat = (xv - m) * is;
            o.write(scale * (gv - mean_dbeta - xhat * mean_dgamma));
        }
    };
    let dx_rows = dx.spare_capacity_mut()[..len].par_chunks_mut(rows);
    if want_masked {
        dx_rows.zip(g_out.par_chunks_mut(rows)).enumerate().for_each(|(row, (out, g))| row_pass(row, out, g));
    } else {
        dx_rows.enumerate().for_each_init(|| vec![0.0f32; s], |g, (row, out)| row_pass(row, out, g));
    }
    // SAFETY: row_pass writes every element of its row of s (zipped with x's row of s and
    // g of s), and the rows of s cover all len elements.
    unsafe { dx.set_len(len) };
    (dx, d_gamma, d_beta, want_masked.then_some(g_out))
}

impl FusedBatchNormOps for Flex {
    fn fused_bn_train(x: FlexTensor, gamma: FlexTensor, beta: FlexTensor, epsilon: f64) -> (FlexTensor, FlexTensor, FlexTensor) {
        if x.dtype() != DType::F32 || gamma.dtype() != DType::F32 || beta.dtype() != DType::F32 {
            let r = <Flex as ModuleOps<Flex>>::batch_norm_train(x, gamma, beta, epsilon);
            return (r.output, r.mean, r.variance);
        }
        let (b, c, s) = dims(&x, ImageLayout::Nchw);
        let shape = shape_of(&x);
        let (y, mean, var) = bn_forward(&f32_data(&x), &f32_data(&gamma), &f32_data(&beta), Tail::None, b, c, s, epsilon);
        (flex_f32(y, shape), flex_f32(mean, vec![c]), flex_f32(var, vec![c]))
    }

    fn fused_bn_backward(
        x: FlexTensor,
        gamma: FlexTensor,
        mean: FlexTensor,
        variance: FlexTensor,
        epsilon: f64,
        grad: FlexTensor,
    ) -> (FlexTensor, FlexTensor, FlexTensor) {
        if x.dtype() != DType::F32 || grad.dtype() != DType::F32 {
            let r = <Flex as ModuleOps<Flex>>::batch_norm_train_backward(x, gamma, mean, variance, epsilon, grad);
            return (r.x_grad, r.gamma_grad, r.beta_grad);
        }
        let (b, c, s) = dims(&x, ImageLayout::Nchw);
        let shape = shape_of(&x);
        let (dx, dg, db, _) =
            bn_backward(&f32_data(&x), &f32_data(&grad), None, false, &f32_data(&gamma), &f32_data(&mean), &f32_data(&variance), b, c, s, epsilon);
        (flex_f32(dx, shape), flex_f32(dg, vec![c]), flex_f32(db, vec![c]))
    }

    fn fused_bn_relu_train(
        x: FlexTensor,
        gamma: FlexTensor,
        beta: FlexTensor,
        skip: FlexTensor,
        epsilon: f64,
        with_skip: bool,
        layout: ImageLayout,
    ) -> (FlexTensor, FlexTensor, FlexTensor) {
        assert!(x.dtype() == DType::F32 && gamma.dtype() == DType::F32 && beta.dtype() == DType::F32, "fused batch norm: f32 tensors expected");
        let (b, c, s) = dims(&x, layout);
        let shape = shape_of(&x);
        let skip_data = with_skip.then(|| f32_data(&skip));
        if let Some(k) = &skip_data {
            assert_eq!(k.len(), b * c * s, "fused batch norm: the skip input must have x's shape");
        }
        let tail = match &skip_data {
            Some(k) => Tail::AddRelu(k),
            None => Tail::Relu,
        };
        let (y, mean, var) = match layout {
            ImageLayout::Nchw => bn_forward(&f32_data(&x), &f32_data(&gamma), &f32_data(&beta), tail, b, c, s, epsilon),
            ImageLayout::Nhwc => bn_rows::forward(&f32_data(&x), &f32_data(&gamma), &f32_data(&beta), tail, c, epsilon),
        };
        (flex_f32(y, shape), flex_f32(mean, vec![c]), flex_f32(var, vec![c]))
    }

    fn fused_bn_relu_backward(
        x: FlexTensor,
        gamma: FlexTensor,
        mean: FlexTensor,
        variance: FlexTensor,
        output: FlexTensor,
        epsilon: f64,
        with_skip: bool,
        layout: ImageLayout,
        grad: FlexTensor,
    ) -> (FlexTensor, FlexTensor, FlexTensor, FlexTensor) {
        let (b, c, s) = dims(&x, layout);
        let shape = shape_of(&x);
        let (x, grad, output) = (f32_data(&x), f32_data(&grad), f32_data(&output));
        let (gamma, mean, variance) = (f32_data(&gamma), f32_data(&mean), f32_data(&variance));
        let (dx, dg, db, d_skip) = match layout {
            ImageLayout::Nchw => bn_backward(&x, &grad, Some(&output), with_skip, &gamma, &mean, &variance, b, c, s, epsilon),
            ImageLayout::Nhwc => {
                let saved = bn_rows::Saved { x: &x, output: &output, gamma: &gamma, mean: &mean, variance: &variance, epsilon };
                bn_rows::backward(&saved, &grad, with_skip, c)
            }
        };
        let d_skip = match d_skip {
            Some(v) => flex_f32(v, shape.clone()),
            None => flex_f32(Vec::new(), vec![0]),
        };
        (flex_f32(dx, shape), flex_f32(dg, vec![c]), flex_f32(db, vec![c]), d_skip)
    }
}

impl<B: Backend + FusedBatchNormOps, C: CheckpointStrategy> FusedBatchNormOps for Autodiff<B, C> {
    fn fused_bn_train(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        #[derive(Debug)]
        struct FusedBnBackward;

        impl<B: Backend + FusedBatchNormOps> Backward<B, 3> for FusedBnBackward {
            // x and gamma are checkpointed; the statistics come along as computed.
            type State = (NodeId, NodeId, B::FloatTensorPrimitive, B::FloatTensorPrimitive, f64);

            fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let [node_x, node_gamma, node_beta] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let (x_state, gamma_state, mean, variance, epsilon) = ops.state;
                let x = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(x_state);
                let gamma = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(gamma_state);
                let (dx, d_gamma, d_beta) = B::fused_bn_backward(x, gamma, mean, variance, epsilon, grad);
                if let Some(node) = node_x {
                    grads.register::<B>(node.id, dx);
                }
                if let Some(node) = node_gamma {
                    grads.register::<B>(node.id, d_gamma);
                }
                if let Some(node) = node_beta {
                    grads.register::<B>(node.id, d_beta);
                }
            }
        }

        // The statistics are graph leaves (not differentiable).
        let leaf = crate::fastconv::leaf::<B, C>;

        match FusedBnBackward.prepare::<C>([x.node(), gamma.node(), beta.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let x_state = prep.checkpoint(&x);
                let gamma_state = prep.checkpoint(&gamma);
                let (y, mean, variance) = B::fused_bn_train(x.into_primitive(), gamma.into_primitive(), beta.into_primitive(), epsilon);
                let output = prep.finish((x_state, gamma_state, mean.clone(), variance.clone(), epsilon), y);
                (output, leaf(mean), leaf(variance))
            }
            OpsKind::UnTracked(prep) => {
                let (y, mean, variance) = B::fused_bn_train(x.into_primitive(), gamma.into_primitive(), beta.into_primitive(), epsilon);
                (prep.finish(y), leaf(mean), leaf(variance))
            }
        }
    }

    fn fused_bn_backward(
        _x: FloatTensor<Self>,
        _gamma: FloatTensor<Self>,
        _mean: FloatTensor<Self>,
        _variance: FloatTensor<Self>,
        _epsilon: f64,
        _grad: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        panic!("the batch-norm backward is not itself differentiable");
    }

    fn fused_bn_relu_train(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        skip: FloatTensor<Self>,
        epsilon: f64,
        with_skip: bool,
        layout: ImageLayout,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        // x and gamma are checkpointed; the statistics and the output (its ReLU mask) come
        // along as computed (the output is shared, not copied).

        /// N = 3 parents (x, gamma, beta) for `relu(bn(x))`, 4 (and skip) for `relu(bn(x) + skip)`.
        #[derive(Debug)]
        struct BnReluBackward<const N: usize>;

        impl<B: Backend + FusedBatchNormOps, const N: usize> Backward<B, N> for BnReluBackward<N> {
            type State = (NodeId, NodeId, B::FloatTensorPrimitive, B::FloatTensorPrimitive, B::FloatTensorPrimitive, f64, ImageLayout);

            fn backward(self, ops: Ops<Self::State, N>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let grad = grads.consume::<B>(&ops.node);
                let (x_state, gamma_state, mean, variance, output, epsilon, layout) = ops.state;
                let x = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(x_state);
                let gamma = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(gamma_state);
                let (dx, d_gamma, d_beta, d_skip) = B::fused_bn_relu_backward(x, gamma, mean, variance, output, epsilon, N == 4, layout, grad);
                // The skip's gradient (empty without a skip) goes to the fourth parent, if any.
                for (parent, g) in ops.parents.iter().zip([dx, d_gamma, d_beta, d_skip]) {
                    if let Some(node) = parent {
                        grads.register::<B>(node.id, g);
                    }
                }
            }
        }

        // The statistics are graph leaves (not differentiable).
        let leaf = crate::fastconv::leaf::<B, C>;

        // One body for both arities: the parents' array fixes N.
        macro_rules! tracked_op {
            ($parents:expr, $skip:expr) => {
                match BnReluBackward.prepare::<C>($parents).compute_bound().stateful() {
                    OpsKind::Tracked(mut prep) => {
                        let x_state = prep.checkpoint(&x);
                        let gamma_state = prep.checkpoint(&gamma);
                        let (y, mean, variance) =
                            B::fused_bn_relu_train(x.into_primitive(), gamma.into_primitive(), beta.into_primitive(), $skip, epsilon, with_skip, layout);
                        let output = prep.finish((x_state, gamma_state, mean.clone(), variance.clone(), y.clone(), epsilon, layout), y);
                        (output, leaf(mean), leaf(variance))
                    }
                    OpsKind::UnTracked(prep) => {
                        let (y, mean, variance) =
                            B::fused_bn_relu_train(x.into_primitive(), gamma.into_primitive(), beta.into_primitive(), $skip, epsilon, with_skip, layout);
                        (prep.finish(y), leaf(mean), leaf(variance))
                    }
                }
            };
        }
        if with_skip {
            tracked_op!([x.node(), gamma.node(), beta.node(), skip.node()], skip.into_primitive())
        } else {
            let skip = skip.into_primitive();
            tracked_op!([x.node(), gamma.node(), beta.node()], skip)
        }
    }

    fn fused_bn_relu_backward(
        _x: FloatTensor<Self>,
        _gamma: FloatTensor<Self>,
        _mean: FloatTensor<Self>,
        _variance: FloatTensor<Self>,
        _output: FloatTensor<Self>,
        _epsilon: f64,
        _with_skip: bool,
        _layout: ImageLayout,
        _grad: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        panic!("the batch-norm backward is not itself differentiable");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{cpu_device, cpu_train_device};
    use crate::tensor_util::to_vec;
    use crate::testutil::max_abs_diff;
    use burn::tensor::Distribution;

    #[test]
    fn forward_and_statistics_match_burns_batch_norm() {
        let device = cpu_device();
        let x = Tensor::<4>::random([5, 3, 4, 2], Distribution::Normal(0.7, 2.0), &device);
        let gamma = Tensor::<1>::random([3], Distribution::Normal(1.0, 0.5), &device);
        let beta = Tensor::<1>::random([3], Distribution::Normal(0.0, 0.5), &device);
        let ours = batch_norm_train(x.clone(), gamma.clone(), beta.clone(), 1e-5);
        let burns = burn::tensor::module::batch_norm_train(x, gamma, beta, 1e-5);
        assert!(max_abs_diff(&to_vec(ours.output), &to_vec(burns.output)) < 1e-5);
        assert!(max_abs_diff(&to_vec(ours.mean), &to_vec(burns.mean)) < 1e-5);
        assert!(max_abs_diff(&to_vec(ours.variance), &to_vec(burns.variance)) < 1e-4);
    }

    /// Hand-derived case: one channel, values 1, 2, 3, 6 (μ = 3, σ² = 3.5), γ = 2, β = 1,
    /// ε = 0: y = 2·(x − 3)/√3.5 + 1. With dy = (1, 0, 0, 0): dβ = 1, dγ = x̂₀ = −2/√3.5,
    /// dx = γ/√3.5 · (dy − 1/4 − x̂·dγ/4).
    #[test]
    fn gradients_match_a_hand_derivation() {
        let device = cpu_train_device();
        let x = Tensor::<4>::from_floats([[[[1.0f32, 2.0], [3.0, 6.0]]]], &device).require_grad();
        let gamma = Tensor::<1>::from_floats([2.0f32], &device).require_grad();
        let beta = Tensor::<1>::from_floats([1.0f32], &device).require_grad();
        let r = batch_norm_train(x.clone(), gamma.clone(), beta.clone(), 0.0);
        let sd = 3.5f32.sqrt();
        let xhat = [-2.0 / sd, -1.0 / sd, 0.0, 3.0 / sd];
        let y: Vec<f32> = to_vec(r.output.clone().inner());
        for (got, xh) in y.iter().zip(xhat) {
            assert!((got - (2.0 * xh + 1.0)).abs() < 1e-5, "{y:?}");
        }
        let upstream = Tensor::<4>::from_floats([[[[1.0f32, 0.0], [0.0, 0.0]]]], &device);
        let grads = (r.output * upstream).sum().backward();
        let d_gamma = xhat[0];
        let dx_expected: Vec<f32> = (0..4).map(|i| 2.0 / sd * ((if i == 0 { 1.0 } else { 0.0 }) - 0.25 - xhat[i] * d_gamma / 4.0)).collect();
        assert!(max_abs_diff(&to_vec(x.grad(&grads).unwrap()), &dx_expected) < 1e-5);
        assert!((to_vec(gamma.grad(&grads).unwrap())[0] - d_gamma).abs() < 1e-5);
        assert!((to_vec(beta.grad(&grads).unwrap())[0] - 1.0).abs() < 1e-6);
    }

    /// relu(bn(x) + skip) and relu(bn(x)), fused, in both layouts, against burn's batch
    /// norm, addition and ReLU: outputs and the gradients of x, gamma, beta and skip (about
    /// half the outputs are clipped, so the ReLU mask matters). 180 squares: channels-last
    /// sums run over three blocks of rows, the last one short.
    #[test]
    fn fused_relu_and_residual_match_burns_ops() {
        let device = cpu_train_device();
        let shape = [6, 3, 5, 6];
        let total = shape.iter().product::<usize>();
        let x = Tensor::<4>::random(shape, Distribution::Normal(0.4, 1.3), &device);
        let skip = Tensor::<4>::random(shape, Distribution::Normal(-0.2, 1.0), &device);
        let gamma = Tensor::<1>::random([3], Distribution::Normal(1.0, 0.3), &device);
        let beta = Tensor::<1>::random([3], Distribution::Normal(0.0, 0.3), &device);
        let weights = Tensor::<4>::random(shape, Distribution::Normal(0.0, 1.0), &device);
        for (with_skip, layout) in [(false, ImageLayout::Nchw), (true, ImageLayout::Nchw), (false, ImageLayout::Nhwc), (true, ImageLayout::Nhwc)] {
            let run = |fused: bool| {
                let (x, g, b, k) = (x.clone().require_grad(), gamma.clone().require_grad(), beta.clone().require_grad(), skip.clone().require_grad());
                let sk = with_skip.then(|| k.clone());
                let y = if fused {
                    // Channels-last in and out of the op, compared in NCHW.
                    let (to, back) = match layout {
                        ImageLayout::Nchw => ([0, 1, 2, 3], [0, 1, 2, 3]),
                        ImageLayout::Nhwc => ([0, 2, 3, 1], [0, 3, 1, 2]),
                    };
                    batch_norm_relu_train_layout(x.clone().permute(to), g.clone(), b.clone(), sk.map(|k| k.permute(to)), 1e-5, layout).output.permute(back)
                } else {
                    let y = burn::tensor::module::batch_norm_train(x.clone(), g.clone(), b.clone(), 1e-5).output;
                    burn::tensor::activation::relu(match sk {
                        Some(sk) => y + sk,
                        None => y,
                    })
                };
                let out = to_vec(y.clone().inner());
                let grads = (y * weights.clone()).sum().backward();
                let dk = if with_skip { to_vec(k.grad(&grads).unwrap()) } else { Vec::new() };
                (out, to_vec(x.grad(&grads).unwrap()), to_vec(g.grad(&grads).unwrap()), to_vec(b.grad(&grads).unwrap()), dk)
            };
            let (ours, burns) = (run(true), run(false));
            let clipped = burns.0.iter().filter(|&&v| v == 0.0).count();
            assert!(clipped > total / 10 && clipped < total * 9 / 10, "{clipped} of {total} outputs clipped: the case does not exercise the mask");
            let case = format!("skip {with_skip}, {layout:?}");
            assert!(max_abs_diff(&ours.0, &burns.0) < 1e-5, "{case}: output");
            assert!(max_abs_diff(&ours.1, &burns.1) < 1e-4, "{case}: dx");
            assert!(max_abs_diff(&ours.2, &burns.2) < 1e-4, "{case}: dgamma");
            assert!(max_abs_diff(&ours.3, &burns.3) < 1e-4, "{case}: dbeta");
            assert!(max_abs_diff(&ours.4, &burns.4) < 1e-5, "{case}: dskip");
        }
    }

    #[test]
    fn gradients_match_burns_batch_norm_on_random_data() {
        let device = cpu_train_device();
        let x = Tensor::<4>::random([6, 4, 3, 3], Distribution::Normal(-0.3, 1.5), &device);
        let gamma = Tensor::<1>::random([4], Distribution::Normal(1.0, 0.3), &device);
        let beta = Tensor::<1>::random([4], Distribution::Normal(0.0, 0.3), &device);
        let weights = Tensor::<4>::random([6, 4, 3, 3], Distribution::Normal(0.0, 1.0), &device);
        let run = |fused: bool| {
            let (x, g, b) = (x.clone().require_grad(), gamma.clone().require_grad(), beta.clone().require_grad());
            let y = if fused {
                batch_norm_train(x.clone(), g.clone(), b.clone(), 1e-5).output
            } else {
                burn::tensor::module::batch_norm_train(x.clone(), g.clone(), b.clone(), 1e-5).output
            };
            let grads = (y * weights.clone()).sum().backward();
            (to_vec(x.grad(&grads).unwrap()), to_vec(g.grad(&grads).unwrap()), to_vec(b.grad(&grads).unwrap()))
        };
        let (ours, burns) = (run(true), run(false));
        assert!(max_abs_diff(&ours.0, &burns.0) < 1e-4, "dx");
        assert!(max_abs_diff(&ours.1, &burns.1) < 1e-4, "dgamma");
        assert!(max_abs_diff(&ours.2, &burns.2) < 1e-4, "dbeta");
    }
}
