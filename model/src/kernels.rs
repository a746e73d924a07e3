//! CPU matrix kernels for channels-last convolutions, on the `gemm` crate (the matrix
//! kernel burn-flex itself uses).
//!
//! Activations are `[images * H * W, C]` row-major ("NHWC rows"). A 3x3 "same" convolution
//! of rows `r0..r1` gathers each row's 3x3 neighbourhood into an im2col tile
//! `[rows, 9 * C_in]` (column `(ky * 3 + kx) * C_in + c`, zeros off the board) and multiplies
//! it by the weight matrix `[9 * C_in, C_out]`; a 1x1 convolution multiplies the rows directly.
//! Used by the folded inference engine and by the burn-flex conv extension.

use std::cell::RefCell;

use rayon::prelude::*;

/// Output rows per im2col tile (`TILE_ROWS * 9 * C_in` floats). Measured on 6x64, 9x9:
/// 128..648 all within noise, 96 slightly slower (more weight re-packing per product).
pub(crate) const TILE_ROWS: usize = 256;

thread_local! {
    static COLS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// A convolution's weights as a matrix, borrowed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConvWeights<'a> {
    /// Input channels.
    pub c_in: usize,
    /// Output channels.
    pub c_out: usize,
    /// Kernel side, 1 or 3.
    pub kernel: usize,
    /// `[kernel * kernel * c_in, c_out]`, row `(ky * kernel + kx) * c_in + ci`.
    pub weight: &'a [f32],
    /// `[c_out]`, or none (zero).
    pub bias: Option<&'a [f32]>,
}

/// Runs `f` with this thread's im2col buffer (a fresh one if it is already borrowed).
pub(crate) fn with_cols<R>(f: impl FnOnce(&mut Vec<f32>) -> R) -> R {
    COLS.with(|cols| {
        let mut fresh = Vec::new();
        let mut guard = cols.try_borrow_mut();
        let cols = match guard.as_mut() {
            Ok(cols) => &mut **cols,
            Err(_) => &mut fresh,
        };
        f(cols)
    })
}

pub(crate) fn sized(buf: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buf.len() < len {
        buf.resize(len, 0.0);
    }
    &mut buf[..len]
}

/// `dst[m, n] (+)= lhs[m, k] * rhs[k, n]`, all row-major with the given row strides.
///
/// # Safety
/// Slices must cover the strided extents (checked by the callers' `debug_assert`s).
#[allow(clippy::too_many_arguments)]
pub(crate) fn matmul_acc(m: usize, n: usize, k: usize, dst: &mut [f32], dst_rs: usize, lhs: &[f32], lhs_rs: usize, rhs: &[f32], rhs_rs: usize) {
    if m == 0 || n == 0 {
        return;
    }
    assert!(dst.len() >= (m - 1) * dst_rs + n);
    assert!(lhs.len() >= (m - 1) * lhs_rs + k);
    assert!(rhs.len() >= (k - 1) * rhs_rs + n);
    // SAFETY: bounds asserted above; dst does not alias lhs/rhs (distinct borrows).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            dst_rs as isize,
            true,
            lhs.as_ptr(),
            1,
            lhs_rs as isize,
            rhs.as_ptr(),
            1,
            rhs_rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// `e^x` in f32 without a library call, so loops over it vectorise (glibc's `expf` is
/// scalar; the policy loss takes two exponentials per logit per step, 4% of a training
/// step with it). Cody–Waite reduction `x = n·ln 2 + r`, `|r| ≤ ln 2 / 2`, then the Taylor
/// polynomial of `e^r` to degree 7 (truncation below 1e-8 relative) and `2^n` built in the
/// exponent bits: within a few f32 ulps of `e^x`. Below −87 (`e^x` < 2⁻¹²⁵, next to the
/// bottom of f32's normal range, 2⁻¹²⁶) the result is 0; above 88 it saturates at `e^88`;
/// NaN stays NaN.
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // ln 2 = LN2_HI + LN2_LO with LN2_HI = 355/512 (9 significant bits), so n·LN2_HI is
    // exact for every n here (Cody & Waite 1980; the constants of Cephes' expf).
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // 1.5·2^23: adding it rounds to an integer held in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    let xc = x.clamp(-87.0, 88.0);
    let t = xc * LOG2_E + ROUND;
    let n = t - ROUND;
    let n_int = t.to_bits().wrapping_sub(ROUND.to_bits()) as i32;
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    let scale = f32::from_bits(((n_int + 127) as u32) << 23);
    if x < -87.0 {
        0.0
    } else {
        p * scale
    }
}

pub(crate) fn relu_in_place(x: &mut [f32]) {
    for v in x {
        *v = v.max(0.0);
    }
}

/// Copies the 3x3 neighbourhoods of output rows `row0..row0 + rows` into `cols`
/// (`[rows, 9 * c]`), zero outside the board. `input` holds whole images `[n * h * w, c]`.
pub(crate) fn im2col3x3(input: &[f32], c: usize, h: usize, w: usize, row0: usize, rows: usize, cols: &mut [f32]) {
    let squares = h * w;
    let stride = 9 * c;
    for r in 0..rows {
        let row = row0 + r;
        let image = row / squares;
        let sq = row % squares;
        let (y, x) = ((sq / w) as isize, (sq % w) as isize);
        let base = image * squares;
        let dst_row = &mut cols[r * stride..(r + 1) * stride];
        for dy in -1..=1isize {
            for dx in -1..=1isize {
                let tap = ((dy + 1) * 3 + (dx + 1)) as usize;
                let dst = &mut dst_row[tap * c..(tap + 1) * c];
                let (yy, xx) = (y + dy, x + dx);
                if yy < 0 || xx < 0 || yy >= h as isize || xx >= w as isize {
                    dst.fill(0.0);
                } else {
                    let src = (base + yy as usize * w + xx as usize) * c;
                    dst.copy_from_slice(&input[src..src + c]);
                }
            }
        }
    }
}

/// Output rows `row0..row0 + out.len() / c_out` of `conv` applied to `input` (whole images,
/// channels-last), with bias, optional residual (`[rows, c_out]`, aligned with `out`) and
/// optional ReLU.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_rows(conv: ConvWeights<'_>, input: &[f32], h: usize, w: usize, row0: usize, out: &mut [f32], residual: Option<&[f32]>, relu: bool) {
    let (c_in, c_out) = (conv.c_in, conv.c_out);
    let rows = out.len() / c_out;
    // Pre-fill with bias (+ residual): the product accumulates into it.
    for (r, dst) in out.chunks_exact_mut(c_out).enumerate() {
        let res = residual.map(|res| &res[r * c_out..(r + 1) * c_out]);
        match (conv.bias, res) {
            (Some(bias), Some(res)) => {
                for ((d, b), x) in dst.iter_mut().zip(bias).zip(res) {
                    *d = b + x;
                }
            }
            (Some(bias), None) => dst.copy_from_slice(bias),
            (None, Some(res)) => dst.copy_from_slice(res),
            (None, None) => dst.fill(0.0),
        }
    }
    match conv.kernel {
        1 => {
            let lhs = &input[row0 * c_in..(row0 + rows) * c_in];
            matmul_acc(rows, c_out, c_in, out, c_out, lhs, c_in, conv.weight, c_out);
        }
        3 => with_cols(|cols| {
            let k = 9 * c_in;
            let mut done = 0;
            while done < rows {
                let t = TILE_ROWS.min(rows - done);
                let tile = sized(cols, t * k);
                im2col3x3(input, c_in, h, w, row0 + done, t, tile);
                let dst = &mut out[done * c_out..(done + t) * c_out];
                matmul_acc(t, c_out, k, dst, c_out, tile, k, conv.weight, c_out);
                done += t;
            }
        }),
        k => unreachable!("kernel {k} not supported"),
    }
    if relu {
        relu_in_place(out);
    }
}

/// Runs `conv` over all rows of `input` into `out`, splitting rows across threads if `par`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_all(conv: ConvWeights<'_>, input: &[f32], h: usize, w: usize, out: &mut [f32], residual: Option<&[f32]>, relu: bool, par: bool) {
    let rows = out.len() / conv.c_out;
    if !par || rows < 2 {
        conv_rows(conv, input, h, w, 0, out, residual, relu);
        return;
    }
    let threads = rayon::current_num_threads().max(1);
    let chunk_rows = rows.div_ceil(threads);
    out.par_chunks_mut(chunk_rows * conv.c_out).enumerate().for_each(|(i, chunk)| {
        let row0 = i * chunk_rows;
        let res = residual.map(|r| &r[row0 * conv.c_out..row0 * conv.c_out + chunk.len()]);
        conv_rows(conv, input, h, w, row0, chunk, res, relu);
    });
}

/// An empty vector with room for `len` f32, for a kernel that writes every one of them
/// through `spare_capacity_mut` and then calls `set_len` (not zero-filled first: a memset of
/// every activation was 5% of a training step). In tests it arrives full of NaN, so an
/// element a kernel leaves unwritten is a NaN in its output, which the tests' comparisons
/// against a reference catch (`testutil::max_abs_diff` is NaN if either side has one).
pub(crate) fn output_buffer(len: usize) -> Vec<f32> {
    #[allow(unused_mut)]
    let mut v = Vec::with_capacity(len);
    #[cfg(test)]
    v.spare_capacity_mut()[..len].fill(std::mem::MaybeUninit::new(f32::NAN));
    v
}

/// A zero-filled buffer, filled in parallel: a serial `vec![0.0; n]` of an activation was a
/// visible part of the training step's serial time.
pub(crate) fn par_zeros(n: usize) -> Vec<f32> {
    let mut v: Vec<f32> = Vec::with_capacity(n);
    v.spare_capacity_mut()[..n].par_chunks_mut(1 << 14).for_each(|c| c.fill(std::mem::MaybeUninit::new(0.0)));
    // SAFETY: the capacity is n and every one of the n elements was written just above.
    unsafe { v.set_len(n) };
    v
}

#[cfg(test)]
mod tests {
    use super::exp_f32;

    /// Against f64's `exp` on a fine grid of the whole range the loss uses (every
    /// shifted logit is ≤ 0; positives checked too), at integers and halves of ln 2 (the
    /// edges of the reduction), and the cut-off below −87.
    #[test]
    fn exp_is_within_a_few_ulps_of_the_exact_value() {
        let mut worst = 0.0f64;
        let mut check = |x: f32| {
            let want = (x as f64).exp();
            let got = exp_f32(x) as f64;
            worst = worst.max((got - want).abs() / want);
        };
        // -87 to 88 (the last step would round just past 88, where the result saturates).
        for i in 0..175_000 {
            check(-87.0 + i as f32 * 1e-3);
        }
        for k in -125..=126 {
            for half in [0.0, 0.5, -0.5] {
                check((k as f32 + half) * std::f32::consts::LN_2);
            }
        }
        assert!(worst < 4.0 * f32::EPSILON as f64, "worst relative error {worst:e}");
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-87.5), 0.0);
        assert_eq!(exp_f32(-1e9), 0.0);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(f32::INFINITY), exp_f32(88.0));
        assert!(exp_f32(88.0).is_finite());
    }
}
