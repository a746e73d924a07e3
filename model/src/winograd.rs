//! Winograd F(2x2, 3x3) convolution for the folded CPU inference engine and the training
//! convolutions ([`crate::fastconv`]: forward, input gradient and weight gradient).
//!
//! A 3x3 "same" convolution over whole images in channels-last rows (`[n * H * W, C]`),
//! computed per 2x2 output tile from a 4x4 input patch `d`:
//! `Y = A^T [ (G g G^T) ⊙ (B^T d B) ] A`. The elementwise product summed over input
//! channels is 16 matrix products `[tiles, C_in] x [C_in, C_out]`, one per position of the
//! 4x4 transformed tile. On a 9x9 board (25 tiles of 2x2 covering 10x10) that is
//! 25 * 16 = 400 multiply-adds per channel pair instead of 81 * 9 = 729 for im2col.
//! F(2x2, 3x3) only adds and halves in its transforms, so it stays accurate in f32.

use crate::kernels::sized;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Tiles per chunk (transformed input and product buffers: `16 * TILES * C` floats each;
/// 32, 64, 128, 200 measured within noise on 6x64).
const CHUNK_TILES: usize = 64;

/// Filter transform `G` of F(2x2, 3x3).
const G: [[f32; 3]; 4] = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]];

/// A 3x3 convolution (bias included) with its filters pre-transformed.
#[derive(Debug, Clone)]
pub(crate) struct WinogradConv {
    c_in: usize,
    c_out: usize,
    /// `U = G g G^T`, laid out `[16][c_in][c_out]` (position `xi * 4 + nu`).
    u: Vec<f32>,
    bias: Vec<f32>,
}

impl WinogradConv {
    /// From a channels-last 3x3 weight matrix `[9 * c_in, c_out]` (row `tap * c_in + ci`).
    pub(crate) fn new(c_in: usize, c_out: usize, weight: &[f32], bias: &[f32]) -> Self {
        assert_eq!(weight.len(), 9 * c_in * c_out);
        let mut u = vec![0.0; 16 * c_in * c_out];
        // One task per transformed position (xi, nu): U[xi][nu] = Σ_ij G[xi][i]·G[nu][j]·g_ij,
        // as axpy rows over c_out. Parallel because training transforms the filters twice
        // per convolution per step, on the calling thread. The coefficients are powers of
        // two, so the products are exact.
        u.par_chunks_mut((c_in * c_out).max(1)).enumerate().for_each(|(pos, plane)| {
            let (xi, nu) = (pos / 4, pos % 4);
            for ci in 0..c_in {
                let dst = &mut plane[ci * c_out..(ci + 1) * c_out];
                for (i, gi) in G[xi].iter().enumerate() {
                    for (j, gj) in G[nu].iter().enumerate() {
                        let coef = gi * gj;
                        if coef == 0.0 {
                            continue;
                        }
                        let tap = i * 3 + j;
                        let src = &weight[(tap * c_in + ci) * c_out..(tap * c_in + ci + 1) * c_out];
                        dst.iter_mut().zip(src).for_each(|(d, &g)| *d += coef * g);
                    }
                }
            }
        });
        Self { c_in, c_out, u, bias: bias.to_vec() }
    }
}

/// Reusable buffers for one thread.
#[derive(Default)]
pub(crate) struct WinogradScratch {
    v: Vec<f32>,
    m: Vec<f32>,
    tmp: Vec<f32>,
}

/// `out = act(conv(input) + bias (+ residual))` over `n` whole images of `h x w`.
/// `input` `[n * h * w, c_in]`, `out` and `residual` `[n * h * w, c_out]`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv3x3_winograd(
    conv: &WinogradConv,
    input: &[f32],
    n: usize,
    h: usize,
    w: usize,
    out: &mut [f32],
    residual: Option<&[f32]>,
    relu: bool,
    scratch: &mut WinogradScratch,
) {
    // SAFETY: MaybeUninit<f32> has f32's layout, and conv3x3_winograd_into only ever stores
    // initialised f32 values through the view, so `out` stays initialised.
    let view = unsafe { &mut *(out as *mut [f32] as *mut [MaybeUninit<f32>]) };
    conv3x3_winograd_into(conv, input, n, h, w, view, residual, relu, scratch);
}

crate::simd::multiversioned! {
    /// [`conv3x3_winograd`] into a buffer that need not be initialised: every one of the
    /// `n * h * w * c_out` elements of `out` is written (the 2x2 tiles cover each image), and
    /// only ever with a computed value (never `MaybeUninit::uninit()`), which the `&mut [f32]`
    /// wrapper relies on.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn conv3x3_winograd_into(
        conv: &WinogradConv,
        input: &[f32],
        n: usize,
        h: usize,
        w: usize,
        out: &mut [MaybeUninit<f32>],
        residual: Option<&[f32]>,
        relu: bool,
        scratch: &mut WinogradScratch,
    ) {
        let (c_in, c_out) = (conv.c_in, conv.c_out);
        let squares = h * w;
        assert_eq!(input.len(), n * squares * c_in);
        assert_eq!(out.len(), n * squares * c_out);
        let (th, tw) = (h.div_ceil(2), w.div_ceil(2));
        let tiles_per_image = th * tw;
        let total = n * tiles_per_image;
        let zeros = vec![0.0f32; c_in];

        let mut t0 = 0;
        while t0 < total {
            let nt = CHUNK_TILES.min(total - t0);
            // V: [nt][16][c_in], M: [nt][16][c_out] (tile-major: each tile's 16 vectors together).
            let v = sized(&mut scratch.v, nt * 16 * c_in);
            let m = sized(&mut scratch.m, nt * 16 * c_out);
            let tmp = sized(&mut scratch.tmp, 16 * c_in.max(c_out));

            transform_input_tiles(input, c_in, h, w, t0, v, tmp, &zeros);

            // 16 products: M[., k, .] [nt, c_out] = V[., k, .] [nt, c_in] x U[k] [c_in, c_out].
            for k in 0..16 {
                let rhs = &conv.u[k * c_in * c_out..(k + 1) * c_in * c_out];
                assert!(v.len() >= (nt - 1) * 16 * c_in + k * c_in + c_in);
                assert!(m.len() >= (nt - 1) * 16 * c_out + k * c_out + c_out);
                // SAFETY: dst rows (stride 16 * c_out) and lhs rows (stride 16 * c_in) stay inside
                // m and v (asserted); rhs is exactly [c_in, c_out]; m does not alias v or u.
                unsafe {
                    gemm::gemm(
                        nt,
                        c_out,
                        c_in,
                        m.as_mut_ptr().add(k * c_out),
                        1,
                        (16 * c_out) as isize,
                        false,
                        v.as_ptr().add(k * c_in),
                        1,
                        (16 * c_in) as isize,
                        rhs.as_ptr(),
                        1,
                        c_out as isize,
                        0.0,
                        1.0,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    );
                }
            }

            // Output transform: Y = A^T M A, plus bias (+ residual), ReLU; vectorised over c_out.
            for (lt, mt) in m.chunks_exact(16 * c_out).enumerate() {
                let t = t0 + lt;
                let (img, rest) = (t / tiles_per_image, t % tiles_per_image);
                let (ty, tx) = (rest / tw, rest % tw);
                let tmp = &mut tmp[..8 * c_out];
                let mv = |p: usize| &mt[p * c_out..(p + 1) * c_out];
                // Columns: tmp[a][j] = (A^T M)[a][j].
                for j in 0..4 {
                    let [o0, o1] = two_mut(tmp, c_out, [j, 4 + j]);
                    at(mv(j), mv(4 + j), mv(8 + j), mv(12 + j), o0, o1);
                }
                for a in 0..2 {
                    let y = 2 * ty + a;
                    if y >= h {
                        continue;
                    }
                    let (ta, _) = tmp.split_at(8 * c_out);
                    let r = |j: usize| &ta[(4 * a + j) * c_out..(4 * a + j + 1) * c_out];
                    let (r0, r1, r2, r3) = (r(0), r(1), r(2), r(3));
                    for b in 0..2 {
                        let x = 2 * tx + b;
                        if x >= w {
                            continue;
                        }
                        let row = img * squares + y * w + x;
                        let dst = &mut out[row * c_out..(row + 1) * c_out];
                        let res = residual.map(|r| &r[row * c_out..(row + 1) * c_out]);
                        epilogue(dst, b, r0, r1, r2, r3, &conv.bias, res, relu);
                    }
                }
            }
            t0 += nt;
        }
    }
}

crate::simd::multiversioned! {
    /// Input transform `V = B^T d B` (vectorised over channels) of the tiles `t0..t0 + nt` of
    /// images in rows `input [n * h * w, c_in]` into `v [nt][16][c_in]`; `tmp` holds at least
    /// `16 * c_in`, `zeros` `c_in` zeros (the padding outside the board).
    #[allow(clippy::too_many_arguments)]
    fn transform_input_tiles(input: &[f32], c_in: usize, h: usize, w: usize, t0: usize, v: &mut [f32], tmp: &mut [f32], zeros: &[f32]) {
        let squares = h * w;
        let tw = w.div_ceil(2);
        let tiles_per_image = h.div_ceil(2) * tw;
        for (lt, vt) in v.chunks_exact_mut(16 * c_in).enumerate() {
            let t = t0 + lt;
            let (img, rest) = (t / tiles_per_image, t % tiles_per_image);
            let (ty, tx) = (rest / tw, rest % tw);
            let patch = |i: usize, j: usize| -> &[f32] {
                let y = (2 * ty + i) as isize - 1;
                let x = (2 * tx + j) as isize - 1;
                if y < 0 || x < 0 || y >= h as isize || x >= w as isize {
                    zeros
                } else {
                    let row = img * squares + y as usize * w + x as usize;
                    &input[row * c_in..(row + 1) * c_in]
                }
            };
            let tmp = &mut tmp[..16 * c_in];
            // Columns of d: tmp[i][j] = (B^T d)[i][j].
            for j in 0..4 {
                let [o0, o1, o2, o3] = four_mut(tmp, c_in, [j, 4 + j, 8 + j, 12 + j]);
                bt(patch(0, j), patch(1, j), patch(2, j), patch(3, j), o0, o1, o2, o3);
            }
            // Rows: V[i][j] = ((B^T d) B)[i][j].
            for i in 0..4 {
                let r = |j: usize| &tmp[(4 * i + j) * c_in..(4 * i + j + 1) * c_in];
                let [o0, o1, o2, o3] = four_mut(vt, c_in, [4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3]);
                bt(r(0), r(1), r(2), r(3), o0, o1, o2, o3);
            }
        }
    }
}

crate::simd::multiversioned! {
    /// Accumulates the weight gradient of a 3x3 "same" convolution over `n` whole images in
    /// the Winograd domain: `acc [16][c_in][c_out] += Σ_tiles V ⊙ (A dY Aᵀ)`, with `V = Bᵀ d B`
    /// the forward's input transform of `input [n * h * w, c_in]` and `dY` the 2x2 output
    /// tiles of `grad_out [n * h * w, c_out]` (zero past the board's edge, where the forward's
    /// tile outputs are discarded). The forward is `Y = Aᵀ (U ⊙ V) A` with `U = G g Gᵀ`, so
    /// `∂L/∂U = Σ_tiles (A dY Aᵀ) ⊙ V` (per channel pair: 16 products `Vₖᵀ [c_in, tiles] ·
    /// dMₖ [tiles, c_out]`) and [`weight_grad_from_winograd`] maps it to `∂L/∂g = Gᵀ (∂L/∂U) G`:
    /// 16 products per 2x2 outputs instead of im2col's 36.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn accumulate_weight_grad_winograd(
        input: &[f32],
        grad_out: &[f32],
        n: usize,
        h: usize,
        w: usize,
        c_in: usize,
        c_out: usize,
        acc: &mut [f32],
        scratch: &mut WinogradScratch,
    ) {
        let squares = h * w;
        assert_eq!(input.len(), n * squares * c_in);
        assert_eq!(grad_out.len(), n * squares * c_out);
        assert_eq!(acc.len(), 16 * c_in * c_out);
        let tw = w.div_ceil(2);
        let tiles_per_image = h.div_ceil(2) * tw;
        let total = n * tiles_per_image;
        let zeros = vec![0.0f32; c_in.max(c_out)];
        let mut t0 = 0;
        while t0 < total {
            let nt = CHUNK_TILES.min(total - t0);
            let v = sized(&mut scratch.v, nt * 16 * c_in);
            let m = sized(&mut scratch.m, nt * 16 * c_out);
            let tmp = sized(&mut scratch.tmp, 16 * c_in.max(c_out));
            transform_input_tiles(input, c_in, h, w, t0, v, tmp, &zeros[..c_in]);

            // dM = A dY Aᵀ per tile, vectorised over c_out.
            for (lt, mt) in m.chunks_exact_mut(16 * c_out).enumerate() {
                let t = t0 + lt;
                let (img, rest) = (t / tiles_per_image, t % tiles_per_image);
                let (ty, tx) = (rest / tw, rest % tw);
                let dy = |a: usize, b: usize| -> &[f32] {
                    let (y, x) = (2 * ty + a, 2 * tx + b);
                    if y >= h || x >= w {
                        &zeros[..c_out]
                    } else {
                        let row = img * squares + y * w + x;
                        &grad_out[row * c_out..(row + 1) * c_out]
                    }
                };
                // Columns: q[i][b] = (A dY)[i][b], in tmp as [4][2][c_out].
                let q = &mut tmp[..8 * c_out];
                for b in 0..2 {
                    let [o0, o1, o2, o3] = four_mut(q, c_out, [b, 2 + b, 4 + b, 6 + b]);
                    a_times(dy(0, b), dy(1, b), o0, o1, o2, o3);
                }
                // Rows: dM[i][j] = ((A dY) Aᵀ)[i][j].
                for i in 0..4 {
                    let (q0, q1) = (&q[(2 * i) * c_out..(2 * i + 1) * c_out], &q[(2 * i + 1) * c_out..(2 * i + 2) * c_out]);
                    let [o0, o1, o2, o3] = four_mut(mt, c_out, [4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3]);
                    a_times(q0, q1, o0, o1, o2, o3);
                }
            }

            // acc[k] [c_in, c_out] += V[., k, .]ᵀ [c_in, nt] · dM[., k, .] [nt, c_out].
            for k in 0..16 {
                assert!(v.len() >= (nt - 1) * 16 * c_in + k * c_in + c_in);
                assert!(m.len() >= (nt - 1) * 16 * c_out + k * c_out + c_out);
                let dst = &mut acc[k * c_in * c_out..(k + 1) * c_in * c_out];
                // SAFETY: lhs element (ci, t) is v[t·16·c_in + k·c_in + ci] and rhs element
                // (t, co) is m[t·16·c_out + k·c_out + co], inside v and m for t < nt (asserted);
                // dst is exactly [c_in, c_out] and aliases neither.
                unsafe {
                    gemm::gemm(
                        c_in,
                        c_out,
                        nt,
                        dst.as_mut_ptr(),
                        1,
                        c_out as isize,
                        true,
                        v.as_ptr().add(k * c_in),
                        (16 * c_in) as isize,
                        1,
                        m.as_ptr().add(k * c_out),
                        1,
                        (16 * c_out) as isize,
                        1.0,
                        1.0,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    );
                }
            }
            t0 += nt;
        }
    }
}

/// `∂L/∂g = Gᵀ (∂L/∂U) G`: the Winograd-domain gradient `[16][c_in][c_out]` of
/// [`accumulate_weight_grad_winograd`] as a 3x3 weight-matrix gradient `[9 * c_in, c_out]`
/// (row `tap * c_in + ci`, the layout [`WinogradConv::new`] reads).
pub(crate) fn weight_grad_from_winograd(d_u: &[f32], c_in: usize, c_out: usize) -> Vec<f32> {
    assert_eq!(d_u.len(), 16 * c_in * c_out);
    let mut dw = vec![0.0f32; 9 * c_in * c_out];
    for (row, dst) in dw.chunks_exact_mut(c_out).enumerate() {
        let (tap, ci) = (row / c_in, row % c_in);
        let (i, j) = (tap / 3, tap % 3);
        for xi in 0..4 {
            for nu in 0..4 {
                let coef = G[xi][i] * G[nu][j];
                if coef == 0.0 {
                    continue;
                }
                let src = &d_u[((xi * 4 + nu) * c_in + ci) * c_out..][..c_out];
                dst.iter_mut().zip(src).for_each(|(d, &u)| *d += coef * u);
            }
        }
    }
    dw
}

/// `A` (4x2) applied to two vectors: `(y0, y0 + y1, y0 − y1, −y1)` (`A = Bᵀ`'s partner in
/// F(2x2, 3x3): `Aᵀ = [[1, 1, 1, 0], [0, 1, −1, −1]]`).
#[inline]
fn a_times(y0: &[f32], y1: &[f32], o0: &mut [f32], o1: &mut [f32], o2: &mut [f32], o3: &mut [f32]) {
    let n = o0.len();
    let (y0, y1) = (&y0[..n], &y1[..n]);
    let (o1, o2, o3) = (&mut o1[..n], &mut o2[..n], &mut o3[..n]);
    for c in 0..n {
        o0[c] = y0[c];
        o1[c] = y0[c] + y1[c];
        o2[c] = y0[c] - y1[c];
        o3[c] = -y1[c];
    }
}

/// Four disjoint `len`-long mutable chunks of `buf` at chunk indices `idx` (increasing).
fn four_mut(buf: &mut [f32], len: usize, idx: [usize; 4]) -> [&mut [f32]; 4] {
    let mut out: [&mut [f32]; 4] = Default::default();
    let mut rest = buf;
    let mut consumed = 0;
    for (k, &i) in idx.iter().enumerate() {
        let (_, tail) = rest.split_at_mut((i - consumed) * len);
        let (chunk, tail) = tail.split_at_mut(len);
        out[k] = chunk;
        rest = tail;
        consumed = i + 1;
    }
    out
}

/// Two disjoint `len`-long mutable chunks of `buf` at chunk indices `idx` (increasing).
fn two_mut(buf: &mut [f32], len: usize, idx: [usize; 2]) -> [&mut [f32]; 2] {
    let (head, tail) = buf.split_at_mut(idx[1] * len);
    [&mut head[idx[0] * len..(idx[0] + 1) * len], &mut tail[..len]]
}

/// 1-D input transform `B^T` on four vectors: `(d0 - d2, d1 + d2, d2 - d1, d1 - d3)`.
#[allow(clippy::too_many_arguments)]
#[inline]
fn bt(d0: &[f32], d1: &[f32], d2: &[f32], d3: &[f32], o0: &mut [f32], o1: &mut [f32], o2: &mut [f32], o3: &mut [f32]) {
    let n = o0.len();
    let (d0, d1, d2, d3) = (&d0[..n], &d1[..n], &d2[..n], &d3[..n]);
    let (o1, o2, o3) = (&mut o1[..n], &mut o2[..n], &mut o3[..n]);
    for c in 0..n {
        o0[c] = d0[c] - d2[c];
        o1[c] = d1[c] + d2[c];
        o2[c] = d2[c] - d1[c];
        o3[c] = d1[c] - d3[c];
    }
}

/// 1-D output transform `A^T` on four vectors: `(m0 + m1 + m2, m1 - m2 - m3)`.
#[inline]
fn at(m0: &[f32], m1: &[f32], m2: &[f32], m3: &[f32], o0: &mut [f32], o1: &mut [f32]) {
    let n = o0.len();
    let (m0, m1, m2, m3) = (&m0[..n], &m1[..n], &m2[..n], &m3[..n]);
    let o1 = &mut o1[..n];
    for c in 0..n {
        o0[c] = m0[c] + m1[c] + m2[c];
        o1[c] = m1[c] - m2[c] - m3[c];
    }
}

/// Output column `b` of `A^T` applied to a row `(r0..r3)`, plus bias, residual, ReLU:
/// writes every element of `dst`.
#[allow(clippy::too_many_arguments)]
#[inline]
fn epilogue(dst: &mut [MaybeUninit<f32>], b: usize, r0: &[f32], r1: &[f32], r2: &[f32], r3: &[f32], bias: &[f32], res: Option<&[f32]>, relu: bool) {
    let n = dst.len();
    let (r0, r1, r2, r3, bias) = (&r0[..n], &r1[..n], &r2[..n], &r3[..n], &bias[..n]);
    // Column 0: r0 + (r1 + r2); column 1: r1 - (r2 + r3). Multiplying by ±1 is exact.
    let (a, x, y, sign) = if b == 0 { (r0, r1, r2, 1.0) } else { (r1, r2, r3, -1.0) };
    let value = |c: usize| a[c] + sign * (x[c] + y[c]) + bias[c];
    // One loop per case, so each vectorises without branches inside.
    match (res.map(|r| &r[..n]), relu) {
        (None, false) => (0..n).for_each(|c| _ = dst[c].write(value(c))),
        (None, true) => (0..n).for_each(|c| _ = dst[c].write(value(c).max(0.0))),
        (Some(res), false) => (0..n).for_each(|c| _ = dst[c].write(value(c) + res[c])),
        (Some(res), true) => (0..n).for_each(|c| _ = dst[c].write((value(c) + res[c]).max(0.0))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{conv_rows, ConvWeights};
    use crate::testutil::max_abs_diff;
    use rand::{Rng, SeedableRng};

    /// The Winograd-domain weight gradient, mapped back, against the definition
    /// `dW[tap·c_in + ci][co] = Σ_{image, y, x} dy[y, x, co] · input[y + i − 1, x + j − 1, ci]`
    /// (zero outside the board), on odd and even boards and more tiles than one chunk.
    #[test]
    fn weight_gradient_matches_the_definition() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(9);
        let mut r = |len: usize| -> Vec<f32> { (0..len).map(|_| rng.random::<f32>() - 0.5).collect() };
        for &(n, h, w, c_in, c_out) in &[(3, 9, 9, 5, 7), (2, 3, 4, 4, 3), (40, 5, 6, 3, 2)] {
            let input = r(n * h * w * c_in);
            let dy = r(n * h * w * c_out);
            let mut want = vec![0.0f64; 9 * c_in * c_out];
            for img in 0..n {
                for (y, x) in (0..h).flat_map(|y| (0..w).map(move |x| (y, x))) {
                    for tap in 0..9 {
                        let (sy, sx) = ((y + tap / 3) as isize - 1, (x + tap % 3) as isize - 1);
                        if sy < 0 || sx < 0 || sy >= h as isize || sx >= w as isize {
                            continue;
                        }
                        let at_in = (img * h * w + sy as usize * w + sx as usize) * c_in;
                        let at_dy = (img * h * w + y * w + x) * c_out;
                        for ci in 0..c_in {
                            for co in 0..c_out {
                                want[(tap * c_in + ci) * c_out + co] += input[at_in + ci] as f64 * dy[at_dy + co] as f64;
                            }
                        }
                    }
                }
            }
            let mut acc = vec![0.0; 16 * c_in * c_out];
            // In two calls, as the training kernel accumulates image groups.
            let split = n / 2;
            let mut scratch = WinogradScratch::default();
            for (imgs, at) in [(split, 0), (n - split, split)] {
                let (i0, d0) = (at * h * w * c_in, at * h * w * c_out);
                let input = &input[i0..i0 + imgs * h * w * c_in];
                let dy = &dy[d0..d0 + imgs * h * w * c_out];
                accumulate_weight_grad_winograd(input, dy, imgs, h, w, c_in, c_out, &mut acc, &mut scratch);
            }
            let got = weight_grad_from_winograd(&acc, c_in, c_out);
            let want: Vec<f32> = want.iter().map(|&v| v as f32).collect();
            let d = max_abs_diff(&want, &got);
            assert!(d < 1e-4, "n={n} {h}x{w} {c_in}->{c_out}: {d}");
        }
    }

    /// Into a buffer full of NaN (standing for uninitialised memory): no element is left
    /// unwritten, on an odd board whose edge tiles stick out.
    #[test]
    fn writes_every_output_element() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let (n, h, w, c_in, c_out) = (3, 9, 7, 4, 5);
        let weight: Vec<f32> = (0..9 * c_in * c_out).map(|_| rng.random::<f32>() - 0.5).collect();
        let input: Vec<f32> = (0..n * h * w * c_in).map(|_| rng.random::<f32>() - 0.5).collect();
        let conv = WinogradConv::new(c_in, c_out, &weight, &vec![0.0; c_out]);
        let mut out = vec![MaybeUninit::new(f32::NAN); n * h * w * c_out];
        conv3x3_winograd_into(&conv, &input, n, h, w, &mut out, None, false, &mut WinogradScratch::default());
        // SAFETY: every element was initialised (to NaN) when the buffer was made.
        assert!(out.iter().all(|v| unsafe { v.assume_init() }.is_finite()));
    }

    #[test]
    fn matches_im2col_convolution() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        let mut r = |len: usize| -> Vec<f32> { (0..len).map(|_| rng.random::<f32>() - 0.5).collect() };
        // Odd and even sides, several images, more tiles than one chunk.
        for &(n, h, w, c_in, c_out) in &[(3, 9, 9, 5, 7), (2, 3, 4, 4, 3), (40, 5, 6, 3, 2)] {
            let weight = r(9 * c_in * c_out);
            let bias = r(c_out);
            let input = r(n * h * w * c_in);
            let residual = r(n * h * w * c_out);
            let conv = WinogradConv::new(c_in, c_out, &weight, &bias);
            let view = ConvWeights { c_in, c_out, kernel: 3, weight: &weight, bias: Some(&bias) };
            for (res, relu) in [(None, false), (Some(&residual[..]), true)] {
                let mut want = vec![0.0; n * h * w * c_out];
                conv_rows(view, &input, h, w, 0, &mut want, res, relu);
                let mut got = vec![0.0; n * h * w * c_out];
                let mut scratch = WinogradScratch::default();
                conv3x3_winograd(&conv, &input, n, h, w, &mut got, res, relu, &mut scratch);
                let d = max_abs_diff(&want, &got);
                assert!(d < 1e-5, "n={n} {h}x{w} {c_in}->{c_out}: {d}");
            }
        }
    }
}
