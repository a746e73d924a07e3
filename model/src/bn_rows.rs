//! The kernels of [`crate::fastbn`]'s fused `relu(bn(x) [+ skip])` on channels-last rows
//! (`[B, H, W, C]` seen as `[rows, C]`), the layout the training tower keeps between its
//! convolutions ([`crate::fastconv::ImageLayout::Nhwc`]).
//!
//! Same formulas as the channels-first kernels (see [`crate::fastbn`]); here a row holds one
//! square's channels, so every pass runs along a row with one lane per channel, and the
//! per-channel sums are f32 within a block of rows (a board's worth) and f64 across blocks.

use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::ops::Range;

use crate::fastbn::{inv_std, Tail};

/// Rows per parallel task, and per f32 partial sum: one 9x9 board.
const BLOCK_ROWS: usize = 81;

/// Per-column totals over `rows` rows: `add_block(range, acc)` adds the rows of `range` into
/// the f32 accumulator `acc` (`width` long, zeroed), one block per parallel task; the blocks'
/// sums are then added in f64 in block order, so the result does not depend on how the
/// work was split across threads (the same bits on every run).
fn block_sums(rows: usize, width: usize, add_block: impl Fn(Range<usize>, &mut [f32]) + Sync) -> Vec<f64> {
    let blocks = rows.div_ceil(BLOCK_ROWS);
    let mut partial = vec![0.0f32; blocks * width];
    if width > 0 {
        partial.par_chunks_mut(width).enumerate().for_each(|(i, acc)| add_block(i * BLOCK_ROWS..((i + 1) * BLOCK_ROWS).min(rows), acc));
    }
    let mut total = vec![0.0f64; width];
    for block in partial.chunks_exact(width.max(1)) {
        total.iter_mut().zip(block).for_each(|(t, &b)| *t += b as f64);
    }
    total
}

/// Per-channel mean and biased variance of `x [rows, c]` (two-pass).
fn channel_stats(x: &[f32], c: usize) -> (Vec<f32>, Vec<f32>) {
    let rows = x.len() / c.max(1);
    let n = rows.max(1) as f64;
    let sums = block_sums(rows, c, |range, acc| {
        for row in x[range.start * c..range.end * c].chunks_exact(c) {
            acc.iter_mut().zip(row).for_each(|(a, &v)| *a += v);
        }
    });
    let mean: Vec<f32> = sums.iter().map(|&s| (s / n) as f32).collect();
    let squares = block_sums(rows, c, |range, acc| {
        for row in x[range.start * c..range.end * c].chunks_exact(c) {
            acc.iter_mut().zip(row).zip(&mean).for_each(|((a, &v), &m)| *a += (v - m) * (v - m));
        }
    });
    let var = squares.iter().map(|&s| (s / n) as f32).collect();
    (mean, var)
}

/// `bn(x)` and its `tail` (ReLU, or the skip `[rows, c]` added then ReLU) of `x [rows, c]`
/// with the batch's statistics: (`y`, mean, biased variance).
pub(crate) fn forward(x: &[f32], gamma: &[f32], beta: &[f32], tail: Tail<'_>, c: usize, epsilon: f64) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    assert!(c > 0 && x.len().is_multiple_of(c) && gamma.len() == c && beta.len() == c, "batch norm: x must be [rows, {c}]");
    let (mean, var) = channel_stats(x, c);
    let inv = inv_std(&var, epsilon);
    let scale: Vec<f32> = inv.iter().zip(gamma).map(|(&i, &g)| i * g).collect();
    // Every per-channel slice exactly c long, so indexing by j < c needs no bounds checks
    // and the loops below vectorise.
    let (mean_c, scale, beta) = (&mean[..c], &scale[..c], &beta[..c]);
    let len = x.len();
    if let Tail::AddRelu(skip) = tail {
        assert_eq!(skip.len(), len, "batch norm: the skip input must have x's shape");
    }
    // Written whole below, so not zero-filled first.
    let mut y = crate::kernels::output_buffer(len);
    let block = BLOCK_ROWS * c;
    y.spare_capacity_mut()[..len].par_chunks_mut(block).zip(x.par_chunks(block)).enumerate().for_each(|(i, (out, inp))| {
        let tail = match tail {
            Tail::AddRelu(skip) => Tail::AddRelu(&skip[i * block..]),
            other => other,
        };
        normalise_block(out, inp, tail, mean_c, scale, beta);
    });
    // SAFETY: the output's blocks pair one to one with x's blocks (same lengths, both a
    // multiple of c, asserted), and every row of c in each block is written whole.
    unsafe { y.set_len(len) };
    (y, mean, var)
}

crate::simd::multiversioned! {
    /// `(v − μ)·γ/σ + β` (as the channels-first kernel computes it) and the tail, for the rows
    /// of one block: every element of `out` (as long as `inp`, whole rows of c) written.
    fn normalise_block<'a>(out: &mut [MaybeUninit<f32>], inp: &[f32], tail: Tail<'a>, mean: &[f32], scale: &[f32], beta: &[f32]) {
        let c = mean.len();
        let (scale, beta) = (&scale[..c], &beta[..c]);
        let rows = out.chunks_exact_mut(c).map(|o| &mut o[..c]).zip(inp.chunks_exact(c).map(|v| &v[..c]));
        let norm = |v: f32, j: usize| (v - mean[j]) * scale[j] + beta[j];
        match tail {
            Tail::None => rows.for_each(|(o, v)| (0..c).for_each(|j| _ = o[j].write(norm(v[j], j)))),
            Tail::Relu => rows.for_each(|(o, v)| (0..c).for_each(|j| _ = o[j].write(norm(v[j], j).max(0.0)))),
            Tail::AddRelu(skip) => {
                let skip = skip.chunks_exact(c).map(|k| &k[..c]);
                rows.zip(skip).for_each(|((o, v), k)| (0..c).for_each(|j| _ = o[j].write((norm(v[j], j) + k[j]).max(0.0))));
            }
        }
    }
}

/// The buffers and statistics of one batch norm's backward pass (channels-last rows).
pub(crate) struct Saved<'a> {
    /// The forward's input `[rows, c]`.
    pub x: &'a [f32],
    /// The forward's output after its ReLU: 0 where the ReLU clipped (no gradient there).
    pub output: &'a [f32],
    pub gamma: &'a [f32],
    pub mean: &'a [f32],
    pub variance: &'a [f32],
    pub epsilon: f64,
}

/// The ReLU-masked gradient: none where the forward's output was clipped to 0.
#[inline(always)]
fn masked(d: f32, o: f32) -> f32 {
    if o > 0.0 {
        d
    } else {
        0.0
    }
}

crate::simd::multiversioned! {
    /// Adds one block's `Σ g` (first `c` of `acc`) and `Σ g·x̂` (last `c`) per channel, with `g`
    /// the masked gradient.
    fn gradient_sums_block(x: &[f32], dy: &[f32], output: &[f32], mean: &[f32], inv: &[f32], acc: &mut [f32]) {
        let c = mean.len();
        let inv = &inv[..c];
        let (d_beta, d_gamma) = acc.split_at_mut(c);
        let (d_beta, d_gamma) = (&mut d_beta[..c], &mut d_gamma[..c]);
        for ((xr, dr), or) in x.chunks_exact(c).zip(dy.chunks_exact(c)).zip(output.chunks_exact(c)) {
            let (xr, dr, or) = (&xr[..c], &dr[..c], &or[..c]);
            for j in 0..c {
                let g = masked(dr[j], or[j]);
                d_beta[j] += g;
                d_gamma[j] += g * ((xr[j] - mean[j]) * inv[j]);
            }
        }
    }
}

/// Per-channel constants of the input gradient, each exactly `c` long.
struct PerChannel<'a> {
    mean: &'a [f32],
    inv: &'a [f32],
    /// γ/σ.
    scale: &'a [f32],
    /// dβ/n.
    mean_d_beta: &'a [f32],
    /// dγ/n.
    mean_d_gamma: &'a [f32],
}

crate::simd::multiversioned! {
    /// `dx = γ/σ · (g − dβ/n − x̂·dγ/n)` for the rows of one block into `dx`, and the masked
    /// gradient `g` into `d_skip` if given: every element of both written (as long as `x`,
    /// whole rows of c).
    fn input_gradient_block<'a>(dx: &mut [MaybeUninit<f32>], d_skip: Option<&mut [MaybeUninit<f32>]>, x: &[f32], dy: &[f32], output: &[f32], k: &PerChannel<'a>) {
        let c = k.mean.len();
        let (mean, inv, scale, mdb, mdg) = (&k.mean[..c], &k.inv[..c], &k.scale[..c], &k.mean_d_beta[..c], &k.mean_d_gamma[..c]);
        let rows = dx.chunks_exact_mut(c).zip(x.chunks_exact(c).zip(dy.chunks_exact(c)).zip(output.chunks_exact(c)));
        let dx_row = |o: &mut [MaybeUninit<f32>], xr: &[f32], dr: &[f32], or: &[f32]| {
            let (o, xr, dr, or) = (&mut o[..c], &xr[..c], &dr[..c], &or[..c]);
            for j in 0..c {
                let xhat = (xr[j] - mean[j]) * inv[j];
                o[j].write(scale[j] * (masked(dr[j], or[j]) - mdb[j] - xhat * mdg[j]));
            }
        };
        match d_skip {
            Some(d_skip) => {
                for ((o, ((xr, dr), or)), g) in rows.zip(d_skip.chunks_exact_mut(c)) {
                    dx_row(o, xr, dr, or);
                    let (g, dr, or) = (&mut g[..c], &dr[..c], &or[..c]);
                    (0..c).for_each(|j| _ = g[j].write(masked(dr[j], or[j])));
                }
            }
            None => rows.for_each(|(o, ((xr, dr), or))| dx_row(o, xr, dr, or)),
        }
    }
}

/// Gradients `(dx, dγ, dβ, d_skip)` of `relu(bn(x) [+ skip])` given the output gradient
/// `dy [rows, c]`; `d_skip` (the ReLU-masked `dy`) only when `want_masked`.
pub(crate) fn backward(saved: &Saved<'_>, dy: &[f32], want_masked: bool, c: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>, Option<Vec<f32>>) {
    let Saved { x, output, gamma, mean, variance, epsilon } = *saved;
    let len = x.len();
    assert!(c > 0 && len.is_multiple_of(c) && dy.len() == len && output.len() == len, "batch norm backward: x, dy and the output must be [rows, {c}]");
    let rows = len / c;
    let n = rows.max(1) as f64;
    let inv = inv_std(variance, epsilon);
    // Per channel: dβ = Σ g, dγ = Σ g·x̂, with g the masked gradient.
    // Exactly c long (see forward).
    let (mean, inv) = (&mean[..c], &inv[..c]);
    let sums = block_sums(rows, 2 * c, |range, acc| {
        let span = range.start * c..range.end * c;
        gradient_sums_block(&x[span.clone()], &dy[span.clone()], &output[span], mean, inv, acc);
    });
    let (d_beta, d_gamma) = sums.split_at(c);
    let mean_d_beta: Vec<f32> = d_beta.iter().map(|&s| (s / n) as f32).collect();
    let mean_d_gamma: Vec<f32> = d_gamma.iter().map(|&s| (s / n) as f32).collect();
    let scale: Vec<f32> = gamma.iter().zip(inv).map(|(&g, &i)| g * i).collect();
    let (scale, mean_d_beta, mean_d_gamma) = (&scale[..c], &mean_d_beta[..c], &mean_d_gamma[..c]);
    let per_channel = PerChannel { mean, inv, scale, mean_d_beta, mean_d_gamma };
    let block = BLOCK_ROWS * c;
    let mut dx = crate::kernels::output_buffer(len);
    let mut d_skip = crate::kernels::output_buffer(if want_masked { len } else { 0 });
    let inputs = x.par_chunks(block).zip(dy.par_chunks(block)).zip(output.par_chunks(block));
    let dx_blocks = dx.spare_capacity_mut()[..len].par_chunks_mut(block);
    if want_masked {
        dx_blocks
            .zip(d_skip.spare_capacity_mut()[..len].par_chunks_mut(block))
            .zip(inputs)
            .for_each(|((o, k), ((xb, db), ob))| input_gradient_block(o, Some(k), xb, db, ob, &per_channel));
        // SAFETY: the d_skip blocks pair one to one with x's (both of len elements, in
        // blocks of whole rows of c), and every row of each block is written whole above.
        unsafe { d_skip.set_len(len) };
    } else {
        dx_blocks.zip(inputs).for_each(|(o, ((xb, db), ob))| input_gradient_block(o, None, xb, db, ob, &per_channel));
    }
    // SAFETY: as for d_skip: dx's blocks pair with x's, and every row is written whole.
    unsafe { dx.set_len(len) };
    let d_gamma = d_gamma.iter().map(|&s| s as f32).collect();
    let d_beta = d_beta.iter().map(|&s| s as f32).collect();
    (dx, d_gamma, d_beta, want_masked.then_some(d_skip))
}
