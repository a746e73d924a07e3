//! Fast CPU inference with batch norm folded into the convolutions.
//!
//! [`InferenceNet`] runs a [`FoldedNet`] without burn, straight on the `gemm` crate (the
//! matrix kernel burn-flex itself uses), because the general-purpose conv2d of burn-flex
//! does one small matrix product per image and converts layouts on every call. Here:
//!
//! - activations are channels-last, `[images * H * W, C]` row-major, so a 3x3 convolution is
//!   one im2col tile `[rows, 9 * C_in]` times the weight `[9 * C_in, C_out]`;
//! - bias, residual addition and ReLU are fused around the product (the output tile is
//!   pre-filled with `bias (+ residual)`, the product accumulates into it, ReLU in place);
//! - a batch is split into groups of whole images, each group runs the *whole network* on
//!   one thread, so its activations stay in that core's cache and threads never wait on one
//!   another between layers; a batch with fewer images than threads splits each layer's
//!   rows across threads instead.
//!
//! Input and output layouts are the same as [`crate::Net`]'s (see [`NetConfig`]).

use std::cell::RefCell;

use rayon::prelude::*;

use crate::config::NetConfig;
use crate::fold::{FoldedConv, FoldedDense, FoldedNet};
use crate::net::Net;

/// Output rows per im2col tile (`TILE_ROWS * 9 * C_in` floats). Measured on 6x64, 9x9:
/// 128..648 all within noise, 96 slightly slower (more weight re-packing per product).
const TILE_ROWS: usize = 256;
/// Most images one thread runs through the network at once (4, 8, 16 within noise).
const MAX_GROUP: usize = 8;

/// Outputs of [`InferenceNet::forward`].
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Policy logits `[batch, policy_planes * H * W]`.
    pub policy: Vec<f32>,
    /// Win/draw/loss logits `[batch, 3]`.
    pub value: Vec<f32>,
}

/// Eval-only network with folded batch norm (CPU, f32).
#[derive(Debug, Clone)]
pub struct InferenceNet {
    net: FoldedNet,
}

/// Per-thread reusable buffers (avoids page-faulting fresh allocations on every call).
#[derive(Default)]
struct Scratch {
    input: Vec<f32>,
    x: Vec<f32>,
    y: Vec<f32>,
    t: Vec<f32>,
    head: Vec<f32>,
    hidden: Vec<f32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
    static COLS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

fn sized(buf: &mut Vec<f32>, len: usize) -> &mut [f32] {
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
fn matmul_acc(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [f32],
    dst_rs: usize,
    lhs: &[f32],
    lhs_rs: usize,
    rhs: &[f32],
    rhs_rs: usize,
) {
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

fn relu_in_place(x: &mut [f32]) {
    for v in x {
        *v = v.max(0.0);
    }
}

/// Copies the 3x3 neighbourhoods of output rows `row0..row0 + rows` into `cols`
/// (`[rows, 9 * c]`), zero outside the board. `input` holds whole images `[n * h * w, c]`.
fn im2col3x3(input: &[f32], c: usize, h: usize, w: usize, row0: usize, rows: usize, cols: &mut [f32]) {
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
fn conv_rows(
    conv: &FoldedConv,
    input: &[f32],
    h: usize,
    w: usize,
    row0: usize,
    out: &mut [f32],
    residual: Option<&[f32]>,
    relu: bool,
) {
    let (c_in, c_out) = (conv.c_in, conv.c_out);
    let rows = out.len() / c_out;
    // Pre-fill with bias (+ residual): the product accumulates into it.
    for (r, dst) in out.chunks_exact_mut(c_out).enumerate() {
        match residual {
            Some(res) => {
                let res = &res[r * c_out..(r + 1) * c_out];
                for ((d, b), x) in dst.iter_mut().zip(&conv.bias).zip(res) {
                    *d = b + x;
                }
            }
            None => dst.copy_from_slice(&conv.bias),
        }
    }
    match conv.kernel {
        1 => {
            let lhs = &input[row0 * c_in..(row0 + rows) * c_in];
            matmul_acc(rows, c_out, c_in, out, c_out, lhs, c_in, &conv.weight, c_out);
        }
        3 => COLS.with(|cols| {
            let mut fresh = Vec::new();
            let mut guard = cols.try_borrow_mut();
            let cols = match guard.as_mut() {
                Ok(cols) => &mut **cols,
                Err(_) => &mut fresh,
            };
            let k = 9 * c_in;
            let mut done = 0;
            while done < rows {
                let t = TILE_ROWS.min(rows - done);
                let tile = sized(cols, t * k);
                im2col3x3(input, c_in, h, w, row0 + done, t, tile);
                let dst = &mut out[done * c_out..(done + t) * c_out];
                matmul_acc(t, c_out, k, dst, c_out, tile, k, &conv.weight, c_out);
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
fn conv_all(
    conv: &FoldedConv,
    input: &[f32],
    h: usize,
    w: usize,
    out: &mut [f32],
    residual: Option<&[f32]>,
    relu: bool,
    par: bool,
) {
    let rows = out.len() / conv.c_out;
    if !par || rows < 2 {
        conv_rows(conv, input, h, w, 0, out, residual, relu);
        return;
    }
    let threads = rayon::current_num_threads().max(1);
    let chunk_rows = rows.div_ceil(threads);
    out.par_chunks_mut(chunk_rows * conv.c_out)
        .enumerate()
        .for_each(|(i, chunk)| {
            let row0 = i * chunk_rows;
            let res = residual.map(|r| &r[row0 * conv.c_out..row0 * conv.c_out + chunk.len()]);
            conv_rows(conv, input, h, w, row0, chunk, res, relu);
        });
}

fn dense_rows(layer: &FoldedDense, input: &[f32], rows: usize, out: &mut [f32], relu: bool) {
    for dst in out.chunks_exact_mut(layer.d_out) {
        dst.copy_from_slice(&layer.bias);
    }
    matmul_acc(
        rows,
        layer.d_out,
        layer.d_in,
        out,
        layer.d_out,
        input,
        layer.d_in,
        &layer.weight,
        layer.d_out,
    );
    if relu {
        relu_in_place(out);
    }
}

impl InferenceNet {
    /// Wraps already folded weights.
    pub fn new(net: FoldedNet) -> Self {
        Self { net }
    }

    /// Folds an (eval-mode copy of) `net`.
    pub fn from_net(net: &Net) -> Self {
        Self::new(FoldedNet::from_net(net))
    }

    /// The network's config.
    pub fn config(&self) -> &NetConfig {
        &self.net.config
    }

    /// The folded weights.
    pub fn folded(&self) -> &FoldedNet {
        &self.net
    }

    /// Evaluates `batch` positions; `input` is `[batch, input_planes, H, W]` row-major.
    ///
    /// # Panics
    /// If `input.len() != batch * input_planes * H * W`.
    pub fn forward(&self, input: &[f32], batch: usize) -> Evaluation {
        let cfg = &self.net.config;
        let mut policy = vec![0.0; batch * cfg.policy_len()];
        let mut value = vec![0.0; batch * 3];
        self.forward_into(input, batch, &mut policy, &mut value);
        Evaluation { policy, value }
    }

    /// Like [`forward`](Self::forward), writing into caller buffers: `policy`
    /// `[batch, policy_planes * H * W]`, `value` `[batch, 3]`.
    pub fn forward_into(&self, input: &[f32], batch: usize, policy: &mut [f32], value: &mut [f32]) {
        let cfg = &self.net.config;
        assert_eq!(input.len(), batch * cfg.input_len(), "input must be [batch, planes, H, W]");
        assert_eq!(policy.len(), batch * cfg.policy_len(), "policy must be [batch, P*H*W]");
        assert_eq!(value.len(), batch * 3, "value must be [batch, 3]");
        if batch == 0 {
            return;
        }
        let threads = rayon::current_num_threads().max(1);
        if batch < threads {
            // Too few images to give each thread its own: parallelise inside each layer.
            self.forward_group(input, batch, policy, value, true);
            return;
        }
        let group = batch.div_ceil(threads).clamp(1, MAX_GROUP);
        input
            .par_chunks(group * cfg.input_len())
            .zip(policy.par_chunks_mut(group * cfg.policy_len()))
            .zip(value.par_chunks_mut(group * 3))
            .for_each(|((input, policy), value)| {
                let n = value.len() / 3;
                self.forward_group(input, n, policy, value, false);
            });
    }

    /// Like [`forward_into`](Self::forward_into) but entirely on the calling thread (no rayon):
    /// for callers that already run one evaluator per core (e.g. one self-play worker per
    /// thread) and must not oversubscribe the CPU.
    pub fn forward_serial_into(
        &self,
        input: &[f32],
        batch: usize,
        policy: &mut [f32],
        value: &mut [f32],
    ) {
        let cfg = &self.net.config;
        assert_eq!(input.len(), batch * cfg.input_len(), "input must be [batch, planes, H, W]");
        assert_eq!(policy.len(), batch * cfg.policy_len(), "policy must be [batch, P*H*W]");
        assert_eq!(value.len(), batch * 3, "value must be [batch, 3]");
        for ((input, policy), value) in input
            .chunks(MAX_GROUP * cfg.input_len())
            .zip(policy.chunks_mut(MAX_GROUP * cfg.policy_len()))
            .zip(value.chunks_mut(MAX_GROUP * 3))
        {
            let n = value.len() / 3;
            self.forward_group(input, n, policy, value, false);
        }
    }

    /// Whole network on `n` images.
    fn forward_group(&self, input: &[f32], n: usize, policy: &mut [f32], value: &mut [f32], par: bool) {
        SCRATCH.with(|scratch| {
            let mut fresh = Scratch::default();
            let mut guard = scratch.try_borrow_mut();
            let s = match guard.as_mut() {
                Ok(s) => &mut **s,
                Err(_) => &mut fresh,
            };
            self.forward_group_with(s, input, n, policy, value, par);
        });
    }

    fn forward_group_with(
        &self,
        s: &mut Scratch,
        input: &[f32],
        n: usize,
        policy: &mut [f32],
        value: &mut [f32],
        par: bool,
    ) {
        let net = &self.net;
        let cfg = &net.config;
        let (h, w) = (cfg.board_height, cfg.board_width);
        let squares = cfg.squares();
        let rows = n * squares;
        let c = cfg.channels;

        // [n, planes, S] -> [n * S, planes]
        let planes = cfg.input_planes;
        let x_in = sized(&mut s.input, rows * planes);
        for (img_in, img_out) in input
            .chunks_exact(planes * squares)
            .zip(x_in.chunks_exact_mut(planes * squares))
        {
            for p in 0..planes {
                for sq in 0..squares {
                    img_out[sq * planes + p] = img_in[p * squares + sq];
                }
            }
        }

        let mut x = std::mem::take(&mut s.x);
        let mut y = std::mem::take(&mut s.y);
        let mut t = std::mem::take(&mut s.t);
        sized(&mut x, rows * c);
        sized(&mut y, rows * c);
        sized(&mut t, rows * c);

        conv_all(&net.stem, &s.input[..rows * planes], h, w, &mut x[..rows * c], None, true, par);
        for [a, b] in &net.blocks {
            conv_all(a, &x[..rows * c], h, w, &mut t[..rows * c], None, true, par);
            conv_all(b, &t[..rows * c], h, w, &mut y[..rows * c], Some(&x[..rows * c]), true, par);
            std::mem::swap(&mut x, &mut y);
        }
        let trunk = &x[..rows * c];

        // Policy head: 1x1 conv + ReLU, then per image dst[p, s] = sum_c W[c, p] x[s, c] + b[p].
        let pc = &net.policy_conv;
        let ph = sized(&mut s.head, rows * pc.c_out);
        conv_all(pc, trunk, h, w, ph, None, true, par);
        let po = &net.policy_out;
        let planes_out = po.c_out;
        for (img, dst) in ph
            .chunks_exact(squares * po.c_in)
            .zip(policy.chunks_exact_mut(planes_out * squares))
        {
            for (p, row) in dst.chunks_exact_mut(squares).enumerate() {
                row.fill(po.bias[p]);
            }
            // SAFETY: extents: dst [P, S], lhs (W^T) [P, Cp] with strides (1, P), rhs
            // (img^T) [Cp, S] with strides (1, Cp); all within the slices.
            unsafe {
                gemm::gemm(
                    planes_out,
                    squares,
                    po.c_in,
                    dst.as_mut_ptr(),
                    1,
                    squares as isize,
                    true,
                    po.weight.as_ptr(),
                    planes_out as isize,
                    1,
                    img.as_ptr(),
                    po.c_in as isize,
                    1,
                    1.0,
                    1.0,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
            }
        }

        // Value head: 1x1 conv + ReLU, flatten channels-last, fc1 + ReLU, fc2.
        let vc = &net.value_conv;
        let vh = sized(&mut s.head, rows * vc.c_out);
        conv_all(vc, trunk, h, w, vh, None, true, par);
        let fc1 = &net.value_fc1;
        let hidden = sized(&mut s.hidden, n * fc1.d_out);
        dense_rows(fc1, &s.head[..rows * vc.c_out], n, hidden, true);
        dense_rows(&net.value_fc2, &s.hidden[..n * fc1.d_out], n, value, false);

        s.x = x;
        s.y = y;
        s.t = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::module::Module;
    use crate::device::cpu_device;
    use crate::tensor_util::to_vec;
    use crate::testutil::{max_abs_diff, trained_tiny_net, OwnedBatch};

    #[test]
    fn folded_matches_eval_mode_net() {
        let net = trained_tiny_net(5);
        let cfg = net.config().clone();
        let device = cpu_device();
        let eval = net.valid().to_device(&device);
        let folded = InferenceNet::from_net(&net);

        // batch 1: layer-parallel path (with 2+ threads); 5 and 19: whole-image groups of
        // uneven size.
        for batch in [1, 5, 19] {
            let data = OwnedBatch::random(&cfg, batch, 100 + batch as u64);
            let reference = eval.forward_flat(&data.input, batch, &device);
            let want_p = to_vec(reference.policy);
            let want_v = to_vec(reference.value);
            let got = folded.forward(&data.input, batch);
            let dp = max_abs_diff(&want_p, &got.policy);
            let dv = max_abs_diff(&want_v, &got.value);
            assert!(dp < 1e-4 && dv < 1e-4, "batch {batch}: policy {dp}, value {dv}");

            let mut p = vec![0.0; got.policy.len()];
            let mut v = vec![0.0; got.value.len()];
            folded.forward_serial_into(&data.input, batch, &mut p, &mut v);
            assert!(max_abs_diff(&p, &got.policy) < 1e-5 && max_abs_diff(&v, &got.value) < 1e-5);
        }
        // The folded biases are not the trivial init values: BN statistics were learned.
        assert!(folded.folded().stem.bias.iter().any(|b| b.abs() > 1e-3));
    }

    #[test]
    fn layer_parallel_path_matches_group_path() {
        let folded = InferenceNet::from_net(&trained_tiny_net(3));
        let cfg = folded.config().clone();
        let batch = 5;
        let data = OwnedBatch::random(&cfg, batch, 9);
        let mut p = vec![0.0; batch * cfg.policy_len()];
        let mut v = vec![0.0; batch * 3];
        folded.forward_group(&data.input, batch, &mut p, &mut v, true);
        let want = folded.forward(&data.input, batch);
        assert!(max_abs_diff(&p, &want.policy) < 1e-5);
        assert!(max_abs_diff(&v, &want.value) < 1e-5);
    }

    #[test]
    fn empty_batch() {
        let folded = InferenceNet::from_net(&trained_tiny_net(0));
        let out = folded.forward(&[], 0);
        assert!(out.policy.is_empty() && out.value.is_empty());
    }
}
