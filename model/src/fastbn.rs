//! Training-mode batch norm for burn-flex as one fused, parallel operation, forward and
//! backward, as a burn backend extension (like [`crate::fastconv`]).
//!
//! burn-flex has no batch-norm kernel of its own: burn's default `batch_norm_train` and
//! its backward are chains of about fifteen element-wise, transpose and reduction ops,
//! each a full pass over the activation, and on two threads they were most of the gap
//! between our training step and PyTorch's. This computes the same function in two passes
//! each way, NCHW, split across threads:
//!
//! - forward: per channel (parallel) the batch mean μ and biased variance σ² (two-pass, in
//!   f64); then per image row (parallel) `y = (x − μ)·γ/√(σ² + ε) + β`;
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

use crate::fastconv::{f32_data, flex_f32, is_flex};

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

/// `(B, C, S)` of a rank-4 tensor, `S = H·W`.
fn dims(t: &FlexTensor) -> (usize, usize, usize) {
    let shape = t.layout().shape();
    assert_eq!(shape.num_dims(), 4, "fused batch norm: rank-4 input expected");
    (shape[0], shape[1], shape[2] * shape[3])
}

/// Per-channel mean and biased variance of `x [b, c, s]` (two-pass, f64 sums).
fn channel_stats(x: &[f32], b: usize, c: usize, s: usize) -> (Vec<f32>, Vec<f32>) {
    let n = (b * s).max(1) as f64;
    let stats: Vec<(f32, f32)> = (0..c)
        .into_par_iter()
        .map(|ch| {
            let rows = || (0..b).map(move |i| &x[(i * c + ch) * s..(i * c + ch + 1) * s]);
            let mean = rows().flatten().map(|&v| v as f64).sum::<f64>() / n;
            let var = rows().flatten().map(|&v| (v as f64 - mean) * (v as f64 - mean)).sum::<f64>() / n;
            (mean as f32, var as f32)
        })
        .collect();
    stats.into_iter().unzip()
}

fn inv_std(variance: &[f32], epsilon: f64) -> Vec<f32> {
    variance.iter().map(|&v| (1.0 / (v as f64 + epsilon).sqrt()) as f32).collect()
}

fn bn_forward(x: &[f32], gamma: &[f32], beta: &[f32], b: usize, c: usize, s: usize, epsilon: f64) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let (mean, var) = channel_stats(x, b, c, s);
    let inv = inv_std(&var, epsilon);
    let mut y = vec![0.0f32; b * c * s];
    // One row per (image, channel): contiguous, so rows are split across threads safely.
    y.par_chunks_mut(s.max(1)).zip(x.par_chunks(s.max(1))).enumerate().for_each(|(row, (out, inp))| {
        let ch = row % c;
        let (m, scale, shift) = (mean[ch], inv[ch] * gamma[ch], beta[ch]);
        for (o, &v) in out.iter_mut().zip(inp) {
            *o = (v - m) * scale + shift;
        }
    });
    (y, mean, var)
}

#[allow(clippy::too_many_arguments)]
fn bn_backward(x: &[f32], dy: &[f32], gamma: &[f32], mean: &[f32], var: &[f32], b: usize, c: usize, s: usize, epsilon: f64) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let inv = inv_std(var, epsilon);
    let n = (b * s).max(1) as f64;
    let sums: Vec<(f32, f32)> = (0..c)
        .into_par_iter()
        .map(|ch| {
            let (m, is) = (mean[ch], inv[ch]);
            let (mut d_beta, mut d_gamma) = (0.0f64, 0.0f64);
            for i in 0..b {
                let at = (i * c + ch) * s;
                for (&xv, &g) in x[at..at + s].iter().zip(&dy[at..at + s]) {
                    d_beta += g as f64;
                    d_gamma += g as f64 * ((xv - m) * is) as f64;
                }
            }
            (d_gamma as f32, d_beta as f32)
        })
        .collect();
    let (d_gamma, d_beta): (Vec<f32>, Vec<f32>) = sums.into_iter().unzip();
    let mut dx = vec![0.0f32; b * c * s];
    dx.par_chunks_mut(s.max(1)).enumerate().for_each(|(row, out)| {
        let ch = row % c;
        let at = row * s;
        let (m, is) = (mean[ch], inv[ch]);
        let scale = gamma[ch] * is;
        let (mean_dbeta, mean_dgamma) = ((d_beta[ch] as f64 / n) as f32, (d_gamma[ch] as f64 / n) as f32);
        for ((o, &xv), &g) in out.iter_mut().zip(&x[at..at + s]).zip(&dy[at..at + s]) {
            let xhat = (xv - m) * is;
            *o = scale * (g - mean_dbeta - xhat * mean_dgamma);
        }
    });
    (dx, d_gamma, d_beta)
}

impl FusedBatchNormOps for Flex {
    fn fused_bn_train(x: FlexTensor, gamma: FlexTensor, beta: FlexTensor, epsilon: f64) -> (FlexTensor, FlexTensor, FlexTensor) {
        if x.dtype() != DType::F32 || gamma.dtype() != DType::F32 || beta.dtype() != DType::F32 {
            let r = <Flex as ModuleOps<Flex>>::batch_norm_train(x, gamma, beta, epsilon);
            return (r.output, r.mean, r.variance);
        }
        let (b, c, s) = dims(&x);
        let shape = {
            let sh = x.layout().shape();
            (0..sh.num_dims()).map(|i| sh[i]).collect::<Vec<usize>>()
        };
        let (y, mean, var) = bn_forward(&f32_data(&x), &f32_data(&gamma), &f32_data(&beta), b, c, s, epsilon);
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
        let (b, c, s) = dims(&x);
        let shape = {
            let sh = x.layout().shape();
            (0..sh.num_dims()).map(|i| sh[i]).collect::<Vec<usize>>()
        };
        let (dx, dg, db) = bn_backward(&f32_data(&x), &f32_data(&grad), &f32_data(&gamma), &f32_data(&mean), &f32_data(&variance), b, c, s, epsilon);
        (flex_f32(dx, shape), flex_f32(dg, vec![c]), flex_f32(db, vec![c]))
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

        // The statistics are returned as graph leaves (not differentiable).
        #[derive(Debug)]
        struct Leaf;

        impl<B: Backend> Backward<B, 0> for Leaf {
            type State = ();

            fn backward(self, _: Ops<(), 0>, _: &mut Gradients, _: &mut Checkpointer) {}
        }
        let leaf = |t: B::FloatTensorPrimitive| Leaf.prepare::<C>([]).compute_bound().stateless(t);

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
