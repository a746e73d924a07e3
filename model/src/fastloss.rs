//! The policy cross-entropy of training as one fused, parallel operation on burn-flex,
//! forward and backward, as a burn backend extension (like [`crate::fastbn`]).
//!
//! Composed from burn ops, the masked loss is about ten element-wise passes forward and as
//! many backward over the `[B, P·H·W]` logits (11,340 columns in Pocket Shogi Copper), each
//! on one thread in burn-flex: the largest serial part of a training step. This computes
//! the same function in one parallel pass each way. With logits `l`, target `t`, legality
//! mask `m` (1 legal, 0 illegal; all ones when absent), per row
//!
//! - `e = l + (m − 1)·10⁹` (illegal moves out of the softmax, as [`crate::train::losses`]),
//! - `lse = log Σ exp e` (max-shifted), `T = Σ t`,
//! - row loss `T·lse − Σ t·e` (= −Σ t·log_softmax(e));
//!
//! loss = Σ row losses / R with `R = max(Σ_all t, 10⁻⁶)`, the number of rows that have a
//! target. Backward: `∂loss/∂l = (T·softmax(e) − t)/R` (the softmax cross-entropy gradient,
//! scaled per row by its target mass); `t` and `m` are data and get no gradient.
//!
//! Only burn-flex (and autodiff over it) implements it; [`policy_cross_entropy`] falls back
//! to burn's ops elsewhere.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::flex::FlexTensor;
use burn::backend::tensor::FloatTensor;
use burn::backend::{backend_extension, Backend, Dispatch, Flex};
use burn::tensor::activation::log_softmax;
use burn::tensor::{DType, Tensor};
use rayon::prelude::*;
use std::mem::MaybeUninit;

use crate::fastconv::{f32_data, flex_f32, is_flex};
use crate::kernels::exp_f32;

/// Large enough that `exp` of an illegal logit is 0, finite so that `0 · e` stays 0.
const ILLEGAL: f32 = 1e9;

/// Masked policy cross-entropy, fused, on burn-flex.
#[backend_extension(Flex, Autodiff)]
pub trait PolicyLossOps: Backend {
    /// `logits`, `target [B, N]`, `mask [B, N]` (read only when `masked`) -> (loss `[1]`,
    /// per-row log-sum-exp `[B]`, target mass R `[1]`). Differentiable in `logits` only.
    fn policy_ce(
        logits: FloatTensor<Self>,
        target: FloatTensor<Self>,
        mask: FloatTensor<Self>,
        masked: bool,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);

    /// `∂loss/∂logits` times the upstream gradient `grad [1]`, from what
    /// [`policy_ce`](Self::policy_ce) returned.
    fn policy_ce_backward(
        logits: FloatTensor<Self>,
        target: FloatTensor<Self>,
        mask: FloatTensor<Self>,
        masked: bool,
        lse: FloatTensor<Self>,
        mass: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> FloatTensor<Self>;
}

/// The policy loss of [`crate::train::losses`]: `logits`, `target` and `mask` `[B, N]`;
/// returns `[1]`.
pub fn policy_cross_entropy(logits: Tensor<2>, target: Tensor<2>, mask: Option<Tensor<2>>) -> Tensor<1> {
    if is_flex(&logits.device()) {
        let masked = mask.is_some();
        // Unread when unmasked; any tensor of the device will do.
        let mask = mask.unwrap_or_else(|| target.clone());
        let (loss, _, _) =
            <Dispatch as PolicyLossOps>::policy_ce(logits.into_dispatch(), target.detach().into_dispatch(), mask.detach().into_dispatch(), masked);
        return Tensor::from_dispatch(loss);
    }
    composed(logits, target, mask)
}

/// The same loss from burn ops (other devices, and the tests' reference).
pub fn composed(logits: Tensor<2>, target: Tensor<2>, mask: Option<Tensor<2>>) -> Tensor<1> {
    let logits = match mask {
        Some(mask) => logits + (mask - 1.0) * ILLEGAL,
        None => logits,
    };
    let mass = target.clone().sum_dim(1).sum().clamp_min(1e-6);
    (target * log_softmax(logits, 1)).sum_dim(1).sum().neg() / mass
}

fn dims2(t: &FlexTensor) -> (usize, usize) {
    let shape = t.layout().shape();
    assert_eq!(shape.num_dims(), 2, "policy loss: [B, N] tensors expected");
    (shape[0], shape[1])
}

// The helpers below are inlined into the multiversioned row functions, so they are
// compiled for those functions' targets (AVX2, AVX-512).

/// The effective logits `e` of one row (see the module doc) into `buf`.
#[inline(always)]
fn effective_row<'a>(l: &[f32], m: Option<&[f32]>, buf: &'a mut Vec<f32>) -> &'a mut [f32] {
    buf.clear();
    match m {
        Some(m) => buf.extend(l.iter().zip(m).map(|(&l, &m)| l + (m - 1.0) * ILLEGAL)),
        None => buf.extend_from_slice(l),
    }
    buf
}

/// Independent accumulators, as fixed-size arrays, so the reductions below vectorise (a
/// single running max or sum is a chain of dependent instructions, and lanes of unknown
/// length are not unrolled).
const LANES: usize = 8;

/// Columns per f32 partial sum; the partial sums are added in f64.
const BLOCK: usize = 64;

/// The largest element of a non-empty row.
#[inline(always)]
fn row_max(e: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = e.chunks_exact(LANES);
    let rest = chunks.remainder().iter().fold(f32::NEG_INFINITY, |a, &v| a.max(v));
    for chunk in chunks {
        let chunk: &[f32; LANES] = chunk.try_into().expect("chunks_exact gives LANES");
        for k in 0..LANES {
            lanes[k] = lanes[k].max(chunk[k]);
        }
    }
    lanes.iter().fold(rest, |a, &v| a.max(v))
}

/// `Σ f(a_i, b_i)` over two equally long rows: f32 lanes within blocks of [`BLOCK`]
/// columns, f64 across blocks.
#[inline(always)]
fn row_sum(a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f32) -> f64 {
    let mut total = 0.0f64;
    for (block_a, block_b) in a.chunks(BLOCK).zip(b.chunks(BLOCK)) {
        let mut lanes = [0.0f32; LANES];
        let (chunks_a, chunks_b) = (block_a.chunks_exact(LANES), block_b.chunks_exact(LANES));
        let rest: f32 = chunks_a.remainder().iter().zip(chunks_b.remainder()).map(|(&x, &y)| f(x, y)).sum();
        for (x, y) in chunks_a.zip(chunks_b) {
            let x: &[f32; LANES] = x.try_into().expect("chunks_exact gives LANES");
            let y: &[f32; LANES] = y.try_into().expect("chunks_exact gives LANES");
            for k in 0..LANES {
                lanes[k] += f(x[k], y[k]);
            }
        }
        total += rest as f64 + lanes.iter().map(|&v| v as f64).sum::<f64>();
    }
    total
}

crate::simd::multiversioned! {
    /// Per row: (log-sum-exp of the effective logits, row loss, target mass). `buf` is scratch.
    fn row_forward(l: &[f32], t: &[f32], m: Option<&[f32]>, buf: &mut Vec<f32>) -> (f32, f64, f64) {
        let e = effective_row(l, m, buf);
        let max = row_max(e);
        let mass = row_sum(t, t, |ti, _| ti);
        let dot = row_sum(t, e, |ti, ei| ti * ei);
        // e is not needed after this: its exponentials replace it (a plain loop vectorises).
        for v in e.iter_mut() {
            *v = exp_f32(*v - max);
        }
        let lse = max as f64 + row_sum(e, e, |p, _| p).ln();
        (lse as f32, mass * lse - dot, mass)
    }
}

pub(crate) fn forward(l: &[f32], t: &[f32], m: Option<&[f32]>, rows: usize, cols: usize) -> (f32, Vec<f32>, f32) {
    let per_row: Vec<(f32, f64, f64)> = (0..rows)
        .into_par_iter()
        .map_init(Vec::new, |buf, r| {
            let span = r * cols..(r + 1) * cols;
            row_forward(&l[span.clone()], &t[span.clone()], m.map(|m| &m[span]), buf)
        })
        .collect();
    let mass = per_row.iter().map(|r| r.2).sum::<f64>().max(1e-6);
    let loss = per_row.iter().map(|r| r.1).sum::<f64>() / mass;
    (loss as f32, per_row.iter().map(|r| r.0).collect(), mass as f32)
}

crate::simd::multiversioned! {
    /// One row's gradient `(T·softmax(e) − t)·scale` into `out` (every element written).
    fn row_backward(out: &mut [MaybeUninit<f32>], lr: &[f32], tr: &[f32], mr: Option<&[f32]>, lse: f32, scale: f32) {
        let k = row_sum(tr, tr, |ti, _| ti) as f32 * scale;
        // One loop per case (no per-element branch), so each vectorises.
        match mr {
            Some(mr) => {
                for (((o, &lv), &mv), &tv) in out.iter_mut().zip(lr).zip(mr).zip(tr) {
                    o.write(k * exp_f32(lv + (mv - 1.0) * ILLEGAL - lse) - scale * tv);
                }
            }
            None => {
                for ((o, &lv), &tv) in out.iter_mut().zip(lr).zip(tr) {
                    o.write(k * exp_f32(lv - lse) - scale * tv);
                }
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn backward(l: &[f32], t: &[f32], m: Option<&[f32]>, lse: &[f32], mass: f32, upstream: f32, rows: usize, cols: usize) -> Vec<f32> {
    let scale = upstream / mass;
    let len = rows * cols;
    assert!(l.len() == len && t.len() == len);
    // Written whole below, so not zero-filled first.
    let mut dl = crate::kernels::output_buffer(len);
    dl.spare_capacity_mut()[..len].par_chunks_mut(cols.max(1)).enumerate().for_each(|(r, out)| {
        let at = r * cols;
        let (lr, tr) = (&l[at..at + cols], &t[at..at + cols]);
        let mr = m.map(|m| &m[at..at + cols]);
        row_backward(out, lr, tr, mr, lse[r], scale);
    });
    // SAFETY: every element of every row of cols was written (the rows cover len).
    unsafe { dl.set_len(len) };
    dl
}

impl PolicyLossOps for Flex {
    fn policy_ce(logits: FlexTensor, target: FlexTensor, mask: FlexTensor, masked: bool) -> (FlexTensor, FlexTensor, FlexTensor) {
        assert!(logits.dtype() == DType::F32 && target.dtype() == DType::F32, "policy loss: f32 tensors expected");
        let (rows, cols) = dims2(&logits);
        assert_eq!(dims2(&target), (rows, cols), "policy loss: target shape");
        let mask_data = masked.then(|| f32_data(&mask));
        if let Some(m) = &mask_data {
            assert_eq!(m.len(), rows * cols, "policy loss: mask shape");
        }
        let (loss, lse, mass) = forward(&f32_data(&logits), &f32_data(&target), mask_data.as_deref(), rows, cols);
        (flex_f32(vec![loss], vec![1]), flex_f32(lse, vec![rows]), flex_f32(vec![mass], vec![1]))
    }

    fn policy_ce_backward(
        logits: FlexTensor,
        target: FlexTensor,
        mask: FlexTensor,
        masked: bool,
        lse: FlexTensor,
        mass: FlexTensor,
        grad: FlexTensor,
    ) -> FlexTensor {
        let (rows, cols) = dims2(&logits);
        let mask_data = masked.then(|| f32_data(&mask));
        let dl = backward(&f32_data(&logits), &f32_data(&target), mask_data.as_deref(), &f32_data(&lse), f32_data(&mass)[0], f32_data(&grad)[0], rows, cols);
        flex_f32(dl, vec![rows, cols])
    }
}

impl<B: Backend + PolicyLossOps, C: CheckpointStrategy> PolicyLossOps for Autodiff<B, C> {
    fn policy_ce(
        logits: FloatTensor<Self>,
        target: FloatTensor<Self>,
        mask: FloatTensor<Self>,
        masked: bool,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        #[derive(Debug)]
        struct PolicyCeBackward;

        impl<B: Backend + PolicyLossOps> Backward<B, 1> for PolicyCeBackward {
            type State = (NodeId, B::FloatTensorPrimitive, B::FloatTensorPrimitive, bool, B::FloatTensorPrimitive, B::FloatTensorPrimitive);

            fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let [node_logits] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let (logits_state, target, mask, masked, lse, mass) = ops.state;
                let logits = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(logits_state);
                if let Some(node) = node_logits {
                    grads.register::<B>(node.id, B::policy_ce_backward(logits, target, mask, masked, lse, mass, grad));
                }
            }
        }

        // The log-sum-exps and the target mass are graph leaves (not differentiable).
        let leaf = crate::fastconv::leaf::<B, C>;

        // Target and mask are data: their graph nodes are not followed.
        let (target, mask) = (target.into_primitive(), mask.into_primitive());
        match PolicyCeBackward.prepare::<C>([logits.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let logits_state = prep.checkpoint(&logits);
                let (loss, lse, mass) = B::policy_ce(logits.into_primitive(), target.clone(), mask.clone(), masked);
                let output = prep.finish((logits_state, target, mask, masked, lse.clone(), mass.clone()), loss);
                (output, leaf(lse), leaf(mass))
            }
            OpsKind::UnTracked(prep) => {
                let (loss, lse, mass) = B::policy_ce(logits.into_primitive(), target, mask, masked);
                (prep.finish(loss), leaf(lse), leaf(mass))
            }
        }
    }

    fn policy_ce_backward(
        _logits: FloatTensor<Self>,
        _target: FloatTensor<Self>,
        _mask: FloatTensor<Self>,
        _masked: bool,
        _lse: FloatTensor<Self>,
        _mass: FloatTensor<Self>,
        _grad: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        panic!("the policy-loss backward is not itself differentiable");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{cpu_device, cpu_train_device};
    use crate::tensor_util::{matrix, to_vec};
    use crate::testutil::max_abs_diff;
    use burn::tensor::Distribution;

    /// Rows: a one-hot target, a soft target, a row without a target (a fast search's
    /// move), each with some illegal moves.
    fn case() -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let (rows, cols) = (3, 7);
        let logits: Vec<f32> = (0..rows * cols).map(|i| ((i * 37 % 11) as f32 - 5.0) * 0.7).collect();
        let mut target = vec![0.0f32; rows * cols];
        target[2] = 1.0;
        target[cols] = 0.25;
        target[cols + 3] = 0.75;
        let mask: Vec<f32> = (0..rows * cols).map(|i| if i % 7 == 4 || i % 7 == 6 { 0.0 } else { 1.0 }).collect();
        (logits, target, mask)
    }

    /// Hand derivation for one row: logits (0, ln 2, ln 3, 50) with the last illegal,
    /// target on the first: softmax over the legal three is (1, 2, 3)/6, loss = ln 6, and
    /// the gradient is (1/6 − 1, 2/6, 3/6, 0).
    #[test]
    fn matches_a_hand_derivation() {
        let d = cpu_train_device();
        let logits = matrix(&[0.0, 2f32.ln(), 3f32.ln(), 50.0], 1, 4, &d).require_grad();
        let target = matrix(&[1.0, 0.0, 0.0, 0.0], 1, 4, &d);
        let mask = matrix(&[1.0, 1.0, 1.0, 0.0], 1, 4, &d);
        let loss = policy_cross_entropy(logits.clone(), target, Some(mask));
        assert!((to_vec(loss.clone().inner())[0] - 6f32.ln()).abs() < 1e-5);
        let grads = loss.backward();
        let want = [1.0 / 6.0 - 1.0, 2.0 / 6.0, 3.0 / 6.0, 0.0];
        assert!(max_abs_diff(&to_vec(logits.grad(&grads).unwrap()), &want) < 1e-5);
    }

    #[test]
    fn loss_and_gradient_match_burns_ops_with_and_without_mask() {
        let d = cpu_train_device();
        let (l, t, m) = case();
        for masked in [true, false] {
            let run = |fused: bool| {
                let logits = matrix(&l, 3, 7, &d).require_grad();
                let mask = masked.then(|| matrix(&m, 3, 7, &d));
                let target = matrix(&t, 3, 7, &d);
                // A non-unit upstream gradient, as when the loss is weighted in a sum.
                let loss = if fused { policy_cross_entropy(logits.clone(), target, mask) } else { composed(logits.clone(), target, mask) };
                let value = to_vec(loss.clone().inner())[0];
                let grads = (loss * 2.5).backward();
                (value, to_vec(logits.grad(&grads).unwrap()))
            };
            let (ours, burns) = (run(true), run(false));
            assert!((ours.0 - burns.0).abs() < 1e-4, "masked {masked}: loss {} vs {}", ours.0, burns.0);
            assert!(max_abs_diff(&ours.1, &burns.1) < 1e-5, "masked {masked}: gradient");
        }
    }

    #[test]
    fn eval_device_and_large_random_rows_agree_with_burns_ops() {
        let d = cpu_device();
        let logits = Tensor::<2>::random([9, 500], Distribution::Normal(0.0, 3.0), &d);
        let target = burn::tensor::activation::softmax(Tensor::<2>::random([9, 500], Distribution::Normal(0.0, 2.0), &d), 1);
        let mask = Tensor::<2>::random([9, 500], Distribution::Uniform(0.0, 1.0), &d).greater_elem(0.3).float();
        // Zero targets on illegal moves, as the trainer's data has them.
        let target = target * mask.clone();
        let ours = to_vec(policy_cross_entropy(logits.clone(), target.clone(), Some(mask.clone())))[0];
        let burns = to_vec(composed(logits, target, Some(mask)))[0];
        assert!((ours - burns).abs() < 1e-4 * burns.abs().max(1.0), "{ours} vs {burns}");
    }
}
