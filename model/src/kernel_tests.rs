//! Every kernel that writes an output it did not initialise, against a plain reference.
//!
//! Each of these kernels takes its output from [`crate::kernels::output_buffer`] (or, for
//! the Winograd convolution, the caller's buffer), which in tests arrives full of NaN: an
//! element a kernel leaves unwritten stays NaN, and every check here asserts every element
//! finite and within a tolerance of a reference written as the formula, in f64, one
//! element at a time. The kernels compiled once per instruction set ([`crate::simd`]) are
//! checked under every level this CPU supports, the scalar clone included, not only the
//! host's best.

use crate::fastbn::Tail;
use crate::fastconv::ImageLayout;
use crate::simd::testing::for_each_level;
use crate::winograd::{conv3x3_winograd_into, WinogradConv, WinogradScratch};
use rand::{Rng, SeedableRng};
use std::mem::MaybeUninit;

fn random(len: usize, seed: u64) -> Vec<f32> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..len).map(|_| rng.random::<f32>() * 2.0 - 1.0).collect()
}

/// Every element finite and within `tol` (relative above 1) of the reference.
#[track_caller]
fn assert_close(what: &str, got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(g.is_finite(), "{what}: element {i} of {} is {g} (never written?)", got.len());
        assert!((g as f64 - w).abs() <= tol * w.abs().max(1.0), "{what}: element {i} is {g}, the reference {w}");
    }
}

/// Which tail: 0 none, 1 ReLU, 2 skip added then ReLU.
fn tail_of(kind: usize, skip: &[f32]) -> Tail<'_> {
    match kind {
        0 => Tail::None,
        1 => Tail::Relu,
        _ => Tail::AddRelu(skip),
    }
}

/// Batch norm by the formula on `x` seen through `at(i, j)` = index of element `i` of
/// channel `j` (`n` per channel): (y, mean, variance) with y indexed as x.
#[allow(clippy::too_many_arguments)]
fn bn_reference(
    x: &[f32],
    gamma: &[f32],
    beta: &[f32],
    skip: &[f32],
    kind: usize,
    c: usize,
    n: usize,
    at: impl Fn(usize, usize) -> usize,
    eps: f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut y = vec![f64::NAN; x.len()];
    let (mut means, mut vars) = (Vec::new(), Vec::new());
    for j in 0..c {
        let mean = (0..n).map(|i| x[at(i, j)] as f64).sum::<f64>() / n as f64;
        let var = (0..n).map(|i| (x[at(i, j)] as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        for i in 0..n {
            let k = at(i, j);
            let v = (x[k] as f64 - mean) / (var + eps).sqrt() * gamma[j] as f64 + beta[j] as f64;
            y[k] = match kind {
                0 => v,
                1 => v.max(0.0),
                _ => (v + skip[k] as f64).max(0.0),
            };
        }
        means.push(mean);
        vars.push(var);
    }
    (y, means, vars)
}

/// The batch norm's input gradient by the formula, the incoming gradient masked where
/// `output` (if any) is not positive: (dx, dγ, dβ, masked gradient).
#[allow(clippy::too_many_arguments)]
fn bn_backward_reference(
    x: &[f32],
    dy: &[f32],
    output: Option<&[f32]>,
    gamma: &[f32],
    c: usize,
    n: usize,
    at: impl Fn(usize, usize) -> usize,
    eps: f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let g: Vec<f64> = (0..x.len()).map(|k| if output.is_none_or(|o| o[k] > 0.0) { dy[k] as f64 } else { 0.0 }).collect();
    let mut dx = vec![f64::NAN; x.len()];
    let (mut d_gamma, mut d_beta) = (Vec::new(), Vec::new());
    for j in 0..c {
        let mean = (0..n).map(|i| x[at(i, j)] as f64).sum::<f64>() / n as f64;
        let var = (0..n).map(|i| (x[at(i, j)] as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        let inv = 1.0 / (var + eps).sqrt();
        let xhat = |i: usize| (x[at(i, j)] as f64 - mean) * inv;
        let db: f64 = (0..n).map(|i| g[at(i, j)]).sum();
        let dg: f64 = (0..n).map(|i| g[at(i, j)] * xhat(i)).sum();
        for i in 0..n {
            dx[at(i, j)] = gamma[j] as f64 * inv * (g[at(i, j)] - db / n as f64 - xhat(i) * dg / n as f64);
        }
        d_gamma.push(dg);
        d_beta.push(db);
    }
    (dx, d_gamma, d_beta, g)
}

/// Channels-last rows (`bn_rows`): 200 rows of 5 channels, three blocks of 81 rows, the
/// last one short; every tail; under every instruction set.
#[test]
fn channels_last_batch_norm_forward_writes_every_element() {
    let (rows, c, eps) = (200, 5, 1e-5);
    let (x, skip) = (random(rows * c, 1), random(rows * c, 2));
    let (gamma, beta) = (random(c, 3), random(c, 4));
    for_each_level(|level| {
        for kind in 0..3 {
            let (y, mean, var) = crate::bn_rows::forward(&x, &gamma, &beta, tail_of(kind, &skip), c, eps);
            let (want, want_mean, want_var) = bn_reference(&x, &gamma, &beta, &skip, kind, c, rows, |i, j| i * c + j, eps);
            assert_close(&format!("{level:?} tail {kind}: y"), &y, &want, 1e-4);
            assert_close(&format!("{level:?}: mean"), &mean, &want_mean, 1e-5);
            assert_close(&format!("{level:?}: variance"), &var, &want_var, 1e-5);
        }
    });
}

/// Channels-last backward: dx, and the masked gradient (the skip's) when asked for, with
/// the gradient sums, under every instruction set.
#[test]
fn channels_last_batch_norm_backward_writes_every_element() {
    let (rows, c, eps) = (200, 5, 1e-5);
    let (x, dy) = (random(rows * c, 5), random(rows * c, 6));
    let (gamma, beta) = (random(c, 7), random(c, 8));
    let (output, mean, variance) = crate::bn_rows::forward(&x, &gamma, &beta, Tail::Relu, c, eps);
    let clipped = output.iter().filter(|&&v| v == 0.0).count();
    assert!(clipped > x.len() / 10 && clipped < x.len() * 9 / 10, "{clipped} clipped: the mask is not exercised");
    let saved = crate::bn_rows::Saved { x: &x, output: &output, gamma: &gamma, mean: &mean, variance: &variance, epsilon: eps };
    let (want_dx, want_dg, want_db, want_g) = bn_backward_reference(&x, &dy, Some(&output), &gamma, c, rows, |i, j| i * c + j, eps);
    for_each_level(|level| {
        for want_masked in [false, true] {
            let (dx, dg, db, d_skip) = crate::bn_rows::backward(&saved, &dy, want_masked, c);
            let case = format!("{level:?}, masked {want_masked}");
            assert_close(&format!("{case}: dx"), &dx, &want_dx, 1e-4);
            assert_close(&format!("{case}: dgamma"), &dg, &want_dg, 1e-4);
            assert_close(&format!("{case}: dbeta"), &db, &want_db, 1e-4);
            match d_skip {
                Some(d_skip) => assert_close(&format!("{case}: d_skip"), &d_skip, &want_g, 0.0),
                None => assert!(!want_masked),
            }
        }
    });
}

/// Channels-first (`fastbn`): 3 images of 4 channels of 5x7 squares, every tail.
#[test]
fn channels_first_batch_norm_forward_writes_every_element() {
    let (b, c, s, eps) = (3, 4, 35, 1e-5);
    let (x, skip) = (random(b * c * s, 11), random(b * c * s, 12));
    let (gamma, beta) = (random(c, 13), random(c, 14));
    let at = |i: usize, j: usize| ((i / s) * c + j) * s + i % s;
    for kind in 0..3 {
        let (y, mean, var) = crate::fastbn::bn_forward(&x, &gamma, &beta, tail_of(kind, &skip), b, c, s, eps);
        let (want, want_mean, want_var) = bn_reference(&x, &gamma, &beta, &skip, kind, c, b * s, at, eps);
        assert_close(&format!("tail {kind}: y"), &y, &want, 1e-4);
        assert_close("mean", &mean, &want_mean, 1e-5);
        assert_close("variance", &var, &want_var, 1e-5);
    }
}

/// Channels-first backward: without a ReLU, with one, and with the masked gradient.
#[test]
fn channels_first_batch_norm_backward_writes_every_element() {
    let (b, c, s, eps) = (3, 4, 35, 1e-5);
    let (x, dy) = (random(b * c * s, 15), random(b * c * s, 16));
    let (gamma, beta) = (random(c, 17), random(c, 18));
    let at = |i: usize, j: usize| ((i / s) * c + j) * s + i % s;
    let (output, mean, var) = crate::fastbn::bn_forward(&x, &gamma, &beta, Tail::Relu, b, c, s, eps);
    for (relu, want_masked) in [(false, false), (true, false), (true, true)] {
        let relu_output = relu.then_some(&output[..]);
        let (dx, dg, db, g) = crate::fastbn::bn_backward(&x, &dy, relu_output, want_masked, &gamma, &mean, &var, b, c, s, eps);
        let (want_dx, want_dg, want_db, want_g) = bn_backward_reference(&x, &dy, relu_output, &gamma, c, b * s, at, eps);
        let case = format!("relu {relu}, masked {want_masked}");
        assert_close(&format!("{case}: dx"), &dx, &want_dx, 1e-4);
        assert_close(&format!("{case}: dgamma"), &dg, &want_dg, 1e-4);
        assert_close(&format!("{case}: dbeta"), &db, &want_db, 1e-4);
        if let Some(g) = g {
            assert_close(&format!("{case}: masked gradient"), &g, &want_g, 0.0);
        }
    }
}

/// The policy loss's forward (per-row log-sum-exp, target mass) and backward
/// (`(T·softmax(e) − t)·upstream/mass`, e the logits with illegal moves pushed to −1e9),
/// with and without a mask, on rows longer than one 64-column block, under every
/// instruction set.
#[test]
fn policy_loss_kernels_write_every_element() {
    let (rows, cols, upstream) = (6, 150, 2.5f32);
    let logits: Vec<f32> = random(rows * cols, 21).iter().map(|v| v * 4.0).collect();
    let mask: Vec<f32> = random(rows * cols, 22).iter().map(|&v| if v > -0.4 { 1.0 } else { 0.0 }).collect();
    // Soft targets on legal moves; one row without a target.
    let target: Vec<f32> =
        random(rows * cols, 23).iter().zip(&mask).enumerate().map(|(k, (&v, &m))| if k / cols == 2 { 0.0 } else { (v + 1.0) * m / 75.0 }).collect();
    for_each_level(|level| {
        for masked in [false, true] {
            let m = masked.then_some(&mask[..]);
            let e = |k: usize| logits[k] as f64 + if masked { (mask[k] as f64 - 1.0) * 1e9 } else { 0.0 };
            let lse: Vec<f64> = (0..rows)
                .map(|r| {
                    let max = (0..cols).map(|j| e(r * cols + j)).fold(f64::NEG_INFINITY, f64::max);
                    max + (0..cols).map(|j| (e(r * cols + j) - max).exp()).sum::<f64>().ln()
                })
                .collect();
            let row_mass: Vec<f64> = (0..rows).map(|r| (0..cols).map(|j| target[r * cols + j] as f64).sum()).collect();
            let mass = row_mass.iter().sum::<f64>();
            let loss =
                (0..rows).map(|r| row_mass[r] * lse[r] - (0..cols).map(|j| target[r * cols + j] as f64 * e(r * cols + j)).sum::<f64>()).sum::<f64>() / mass;
            let (got_loss, got_lse, got_mass) = crate::fastloss::forward(&logits, &target, m, rows, cols);
            let case = format!("{level:?}, masked {masked}");
            assert_close(&format!("{case}: loss"), &[got_loss], &[loss], 1e-4);
            assert_close(&format!("{case}: lse"), &got_lse, &lse, 1e-5);
            assert_close(&format!("{case}: mass"), &[got_mass], &[mass], 1e-5);
            let dl = crate::fastloss::backward(&logits, &target, m, &got_lse, got_mass, upstream, rows, cols);
            let want: Vec<f64> = (0..rows * cols)
                .map(|k| {
                    let r = k / cols;
                    (row_mass[r] * (e(k) - lse[r]).exp() - target[k] as f64) * upstream as f64 / mass
                })
                .collect();
            assert_close(&format!("{case}: gradient"), &dl, &want, 1e-4);
        }
    });
}

/// A 3x3 "same" convolution by the definition: `x` images `[b, c, h, w]`, weight `[o, c, 3,
/// 3]`, out `[b, o, h, w]`.
#[allow(clippy::too_many_arguments)]
fn conv_reference(x: &[f32], weight: &[f32], b: usize, c: usize, o: usize, h: usize, w: usize) -> Vec<f64> {
    let mut out = vec![0.0f64; b * o * h * w];
    for img in 0..b {
        for oo in 0..o {
            for y in 0..h {
                for xx in 0..w {
                    let mut acc = 0.0f64;
                    for cc in 0..c {
                        for tap in 0..9 {
                            let (sy, sx) = ((y + tap / 3) as isize - 1, (xx + tap % 3) as isize - 1);
                            if sy >= 0 && sx >= 0 && sy < h as isize && sx < w as isize {
                                let v = x[((img * c + cc) * h + sy as usize) * w + sx as usize] as f64;
                                acc += v * weight[(oo * c + cc) * 9 + tap] as f64;
                            }
                        }
                    }
                    out[((img * o + oo) * h + y) * w + xx] = acc;
                }
            }
        }
    }
    out
}

/// NCHW `[b, c, s]` -> NHWC `[b, s, c]`.
fn nhwc<T: Copy>(x: &[T], b: usize, c: usize, s: usize) -> Vec<T> {
    (0..b * s * c).map(|k| x[((k / (s * c)) * c + k % c) * s + (k / c) % s]).collect()
}

/// The training convolution's forward, both of its paths (one image: im2col, rows split;
/// more than twice the threads: Winograd on image groups, the last one short), every pair
/// of layouts, on an odd, non-square board.
#[test]
fn conv3x3_forward_writes_every_element() {
    let (c, o, h, w) = (3, 4, 5, 7);
    let s = h * w;
    let weight = random(o * c * 9, 31);
    let wm = crate::fastconv::weight_matrix(&weight, o, c);
    for b in [1, 2 * rayon::current_num_threads() + 3] {
        let x = random(b * c * s, 32 + b as u64);
        let want = conv_reference(&x, &weight, b, c, o, h, w);
        for (from, to) in [
            (ImageLayout::Nchw, ImageLayout::Nchw),
            (ImageLayout::Nchw, ImageLayout::Nhwc),
            (ImageLayout::Nhwc, ImageLayout::Nchw),
            (ImageLayout::Nhwc, ImageLayout::Nhwc),
        ] {
            let input = if from == ImageLayout::Nhwc { nhwc(&x, b, c, s) } else { x.clone() };
            let got = crate::fastconv::conv3x3_kernel(&input, &wm, b, c, o, h, w, from, to);
            let want = if to == ImageLayout::Nhwc { nhwc(&want, b, o, s) } else { want.clone() };
            assert_close(&format!("{b} images, {from:?} -> {to:?}"), &got, &want, 1e-4);
        }
    }
}

/// The Winograd convolution into a caller's buffer full of NaN, on odd and even boards
/// whose edge tiles stick out and more tiles than one chunk, with and without the bias,
/// residual and ReLU, under every instruction set.
#[test]
fn winograd_convolution_writes_every_element() {
    for_each_level(|level| {
        for &(n, h, w, c_in, c_out) in &[(3, 9, 7, 4, 5), (2, 4, 6, 3, 2), (40, 5, 5, 2, 3)] {
            let s = h * w;
            let weight = random(c_out * c_in * 9, 41);
            // The channels-last matrix [9·c_in, c_out] the Winograd filter transform takes.
            let wm = crate::fastconv::weight_matrix(&weight, c_out, c_in);
            let (bias, x, residual) = (random(c_out, 42), random(n * c_in * s, 43), random(n * s * c_out, 44));
            let input = nhwc(&x, n, c_in, s);
            let plain = nhwc(&conv_reference(&x, &weight, n, c_in, c_out, h, w), n, c_out, s);
            let conv = WinogradConv::new(c_in, c_out, &wm, &bias);
            for (res, relu) in [(None, false), (Some(&residual[..]), true)] {
                let want: Vec<f64> = plain
                    .iter()
                    .enumerate()
                    .map(|(k, &v)| {
                        let v = v + bias[k % c_out] as f64 + res.map_or(0.0, |r| r[k] as f64);
                        if relu {
                            v.max(0.0)
                        } else {
                            v
                        }
                    })
                    .collect();
                let mut out = vec![MaybeUninit::new(f32::NAN); n * s * c_out];
                conv3x3_winograd_into(&conv, &input, n, h, w, &mut out, res, relu, &mut WinogradScratch::default());
                // SAFETY: every element was initialised (to NaN) when the buffer was made.
                let got: Vec<f32> = out.iter().map(|v| unsafe { v.assume_init() }).collect();
                assert_close(&format!("{level:?}: n={n} {h}x{w} {c_in}->{c_out}, relu {relu}"), &got, &want, 1e-4);
            }
        }
    });
}

/// The Winograd weight gradient (its input-tile transform and accumulation are
/// multiversioned) against the definition, under every instruction set.
#[test]
fn winograd_weight_gradient_matches_the_definition_at_every_level() {
    let (n, h, w, c_in, c_out) = (5, 5, 7, 3, 4);
    let (input, dy) = (random(n * h * w * c_in, 51), random(n * h * w * c_out, 52));
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
    for_each_level(|level| {
        let mut acc = vec![0.0; 16 * c_in * c_out];
        crate::winograd::accumulate_weight_grad_winograd(&input, &dy, n, h, w, c_in, c_out, &mut acc, &mut WinogradScratch::default());
        let got = crate::winograd::weight_grad_from_winograd(&acc, c_in, c_out);
        assert_close(&format!("{level:?}: weight gradient"), &got, &want, 1e-4);
    });
}

/// The buffer the kernels write into does arrive full of NaN in tests (else the checks
/// above could not see an unwritten element).
#[test]
fn output_buffers_arrive_full_of_nan_in_tests() {
    let mut v = crate::kernels::output_buffer(1000);
    assert!(v.is_empty() && v.capacity() >= 1000);
    // SAFETY: output_buffer initialised the first 1000 elements (to NaN) under cfg(test).
    unsafe { v.set_len(1000) };
    assert!(v.iter().all(|x| x.is_nan()));
}
