//! Quantised (int8) residual tower for the folded CPU network.
//!
//! The stem and the residual blocks — almost all of the network's multiply-adds — run as
//! 8-bit integer dot products; the heads stay in f32 on the f32 trunk output, and the f32
//! [`InferenceNet`](crate::InferenceNet) stays the reference.
//!
//! **Scheme.** Every activation a 3x3 convolution reads is non-negative (the encoded input
//! planes, and ReLU outputs), so it is stored as an unsigned code `q = round(x / s_c)` in
//! `0..=Q` with one scale `s_c` per channel, calibrated as the largest value that channel
//! takes on real positions ([`Calibration`]). The per-channel input scale is folded into the
//! weights (`W'[k, o] = W[k, o] · s_c(k)`), which are then quantised per output channel to
//! `-127..=127` with `ws_o = max_k |W'[k, o]| / 127`, and the bias absorbs the rounded
//! weights' mean error. A convolution output is `y_o = ws_o · Σ_k q_k · Wq[k, o] + b_o`
//! (+ the f32 residual, ReLU), exact in i32; it is kept in f32 where a residual or the heads
//! need it and re-quantised for the next layer.
//!
//! `Q` is 255 for AVX-512 VNNI (`vpdpbusd` adds its u8 x s8 products straight into i32) and
//! the scalar reference, and 127 for AVX2: seven bits keep `u8 × s8` pair sums within i16
//! (2 · 127 · 127 = 32,258), so the saturating `vpmaddubsw` cannot saturate. With the same
//! `Q`, every kernel computes the same integers (the tests check it). Each convolution reads
//! its input straight from a zero-padded channels-last image (`(H + 2) x (W + 2)` squares),
//! so no im2col copy is made.
//!
//! The error bound of one output (before ReLU), with `e_x ≤ s_c / 2` the rounding of each
//! input and `e_w ≤ ws_o / 2` that of each scaled weight, is
//! `|y − ŷ| ≤ Σ_k (|q_k| · ws_o / 2 + s_c(k) / 2 · |W[k, o]|)` for inputs within the
//! calibrated range (larger inputs saturate at `Q`); the tests check it.

use crate::config::NetConfig;
use crate::fold::{FoldedConv, FoldedNet};
use crate::kernels::{conv_all, ConvWeights};
use crate::simd::multiversioned;

/// Largest activation code of the AVX2 kernel (7 bits: see the module docs).
pub(crate) const Q_MAX_7: f32 = 127.0;
/// Largest activation code of the other kernels (`vpdpbusd` adds its u8 x s8 products
/// straight into i32, so full 8-bit codes cannot saturate).
pub(crate) const Q_MAX_8: f32 = 255.0;
/// Largest weight code.
const W_MAX: f32 = 127.0;
/// Output rows per AVX-512 tile (8 rows x up to 3 x 16 channels = 24 accumulators).
const ROWS_512: usize = 8;
/// Output rows per AVX2 tile (4 rows x 2 x 8 channels: 16 registers in all).
const ROWS_256: usize = 4;
/// Largest tile height of any kernel (the scratch tile is sized for it).
const MAX_ROWS: usize = 8;

/// Which integer kernel runs the quantised tower.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum QuantKernel {
    /// Plain Rust loops: the reference the tests compare the SIMD kernels to.
    Scalar,
    /// AVX2 `vpmaddubsw` + `vpmaddwd` (8 channels per register).
    Avx2,
    /// AVX-512 VNNI `vpdpbusd` (16 channels x 4 inputs per instruction).
    Avx512Vnni,
}

impl QuantKernel {
    /// The fastest integer kernel this CPU runs, or `None` where it has neither AVX-512 VNNI
    /// nor AVX2 (then the network stays f32: the scalar kernel is slower than the f32 one).
    pub fn best() -> Option<QuantKernel> {
        Self::supported().into_iter().filter(|&k| k != QuantKernel::Scalar).max()
    }

    /// Every kernel this CPU can run, the scalar one included.
    pub fn supported() -> Vec<QuantKernel> {
        let mut v = vec![QuantKernel::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx2") {
                v.push(QuantKernel::Avx2);
            }
            if is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw") && is_x86_feature_detected!("avx512vnni") {
                v.push(QuantKernel::Avx512Vnni);
            }
        }
        v
    }

    /// The largest activation code this kernel takes.
    pub(crate) fn code_max(self) -> f32 {
        match self {
            QuantKernel::Avx2 => Q_MAX_7,
            _ => Q_MAX_8,
        }
    }

    /// A short name (`scalar`, `avx2`, `avx512vnni`).
    pub fn name(self) -> &'static str {
        match self {
            QuantKernel::Scalar => "scalar",
            QuantKernel::Avx2 => "avx2",
            QuantKernel::Avx512Vnni => "avx512vnni",
        }
    }
}

/// Why a network could not be quantised.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QuantError {
    #[error("calibration needs at least one position (got {got} values, {per_position} per position)")]
    Empty { got: usize, per_position: usize },
    #[error("calibration input has {got} values, not a multiple of the {per_position} of one position")]
    Length { got: usize, per_position: usize },
    #[error("calibration input plane {plane} holds {value}: the int8 path needs finite, non-negative inputs")]
    BadInput { plane: usize, value: f32 },
    #[error("the tower's activations are not finite on the calibration positions (layer {layer})")]
    NotFinite { layer: usize },
    #[error("kernel {0} is not supported by this CPU")]
    Unsupported(&'static str),
    #[error("folded network is inconsistent: {0}")]
    Corrupt(String),
}

/// The largest value of every channel each tower convolution reads, over some positions.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    /// Per input plane of the stem.
    pub input: Vec<f32>,
    /// Per block: per channel of the block's input (`a`'s input) and of `b`'s input.
    pub blocks: Vec<[Vec<f32>; 2]>,
    /// The mean of every channel, laid out as `input` and `blocks` (for bias correction:
    /// see [`QuantConv::new`]).
    pub input_mean: Vec<f32>,
    pub block_means: Vec<[Vec<f32>; 2]>,
    /// Positions seen.
    pub positions: usize,
}

fn add_sums(sums: &mut [f64], rows: &[f32]) {
    for row in rows.chunks_exact(sums.len()) {
        for (s, &v) in sums.iter_mut().zip(row) {
            *s += f64::from(v);
        }
    }
}

fn update_max(max: &mut [f32], rows: &[f32]) {
    for row in rows.chunks_exact(max.len()) {
        for (m, &v) in max.iter_mut().zip(row) {
            // NaN compares false: kept out of the maximum, caught by the finiteness check.
            if v > *m || v.is_nan() {
                *m = if v.is_nan() { f32::NAN } else { v };
            }
        }
    }
}

impl Calibration {
    /// Runs the f32 tower over `input` (`[positions, planes, H, W]`, positions from real
    /// play) and records the largest value of every channel.
    pub fn measure(net: &FoldedNet, input: &[f32]) -> Result<Calibration, QuantError> {
        let cfg = &net.config;
        let per = cfg.input_len();
        if input.is_empty() || per == 0 {
            return Err(QuantError::Empty { got: input.len(), per_position: per });
        }
        if !input.len().is_multiple_of(per) {
            return Err(QuantError::Length { got: input.len(), per_position: per });
        }
        check_folded(net)?;
        let (h, w, squares, planes, c) = (cfg.board_height, cfg.board_width, cfg.squares(), cfg.input_planes, cfg.channels);
        let positions = input.len() / per;
        let mut cal = Calibration {
            input: vec![0.0; planes],
            blocks: vec![[vec![0.0; c], vec![0.0; c]]; net.blocks.len()],
            input_mean: vec![],
            block_means: vec![],
            positions,
        };
        let mut input_sum = vec![0.0f64; planes];
        let mut block_sums = vec![[vec![0.0f64; c], vec![0.0f64; c]]; net.blocks.len()];
        const CHUNK: usize = 64;
        let (mut rows_in, mut x, mut y, mut t) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for chunk in input.chunks(CHUNK * per) {
            let n = chunk.len() / per;
            let rows = n * squares;
            rows_in.resize(rows * planes, 0.0);
            for (img_in, img_out) in chunk.chunks_exact(per).zip(rows_in.chunks_exact_mut(per)) {
                for p in 0..planes {
                    for sq in 0..squares {
                        let v = img_in[p * squares + sq];
                        if !(v.is_finite() && v >= 0.0) {
                            return Err(QuantError::BadInput { plane: p, value: v });
                        }
                        img_out[sq * planes + p] = v;
                    }
                }
            }
            update_max(&mut cal.input, &rows_in);
            add_sums(&mut input_sum, &rows_in);
            for buf in [&mut x, &mut y, &mut t] {
                buf.resize(rows * c, 0.0);
            }
            conv_all(view(&net.stem), &rows_in, h, w, &mut x, None, true, false);
            for (i, [a, b]) in net.blocks.iter().enumerate() {
                update_max(&mut cal.blocks[i][0], &x);
                add_sums(&mut block_sums[i][0], &x);
                conv_all(view(a), &x, h, w, &mut t, None, true, false);
                update_max(&mut cal.blocks[i][1], &t);
                add_sums(&mut block_sums[i][1], &t);
                conv_all(view(b), &t, h, w, &mut y, Some(&x), true, false);
                std::mem::swap(&mut x, &mut y);
            }
        }
        let rows = (positions * squares) as f64;
        let mean = |s: &[f64]| s.iter().map(|v| (v / rows) as f32).collect::<Vec<f32>>();
        cal.input_mean = mean(&input_sum);
        cal.block_means = block_sums.iter().map(|[a, b]| [mean(a), mean(b)]).collect();
        for (i, [a, b]) in cal.blocks.iter().enumerate() {
            if a.iter().chain(b).any(|v| !v.is_finite()) {
                return Err(QuantError::NotFinite { layer: i });
            }
        }
        Ok(cal)
    }
}

fn view(c: &FoldedConv) -> ConvWeights<'_> {
    ConvWeights { c_in: c.c_in, c_out: c.c_out, kernel: c.kernel, weight: &c.weight, bias: Some(&c.bias) }
}

/// Refuses a folded tower whose public fields do not fit its config (the quantiser and the
/// kernels index by the config).
fn check_folded(net: &FoldedNet) -> Result<(), QuantError> {
    let cfg = &net.config;
    let check = |what: &str, conv: &FoldedConv, c_in: usize| -> Result<(), QuantError> {
        if conv.kernel != 3
            || conv.c_in != c_in
            || conv.c_out != cfg.channels
            || conv.weight.len() != 9 * c_in * cfg.channels
            || conv.bias.len() != cfg.channels
        {
            return Err(QuantError::Corrupt(format!(
                "{what}: kernel {} c_in {} c_out {} with {} weights and {} biases, expected 3x3 {c_in} -> {}",
                conv.kernel,
                conv.c_in,
                conv.c_out,
                conv.weight.len(),
                conv.bias.len(),
                cfg.channels
            )));
        }
        Ok(())
    };
    check("stem", &net.stem, cfg.input_planes)?;
    for (i, [a, b]) in net.blocks.iter().enumerate() {
        check(&format!("block {i} a"), a, cfg.channels)?;
        check(&format!("block {i} b"), b, cfg.channels)?;
    }
    Ok(())
}

/// The scale of a channel whose largest calibrated value is `max`; `None` for a channel that
/// never fired (see [`layer_scales`]).
fn scale_of(max: f32, q_max: f32) -> Option<f32> {
    (max > 0.0 && max.is_finite()).then(|| max / q_max)
}

/// The scales of one layer's channels from their calibrated maxima. A channel that never
/// fired on the calibration positions gets the median scale of the others: it must not get a
/// far larger one, because its scale multiplies its weights before they are quantised per
/// output channel, and one oversized weight coarsens every other weight of that output.
fn layer_scales(max: &[f32], q_max: f32) -> Vec<f32> {
    let mut live: Vec<f32> = max.iter().filter_map(|&m| scale_of(m, q_max)).collect();
    live.sort_by(f32::total_cmp);
    let fill = live.get(live.len() / 2).copied().unwrap_or(1.0 / q_max);
    max.iter().map(|&m| scale_of(m, q_max).unwrap_or(fill)).collect()
}

/// One 3x3 convolution with int8 weights.
#[derive(Debug, Clone)]
pub(crate) struct QuantConv {
    /// Input channels, and padded to a multiple of 4 (the layout of the u8 images read).
    pub c_in: usize,
    pub c_in_pad: usize,
    pub c_out: usize,
    /// Output channels padded to a multiple of 16 (zero weights beyond `c_out`).
    pub c_out_pad: usize,
    /// `[9][c_in_pad / 4][c_out_pad][4]`: element `(tap, ci, o)` at
    /// `((tap * c_in_pad / 4 + ci / 4) * c_out_pad + o) * 4 + ci % 4`.
    pub weight: Vec<i8>,
    /// `ws_o`: i32 sum to f32, per output channel.
    pub scale: Vec<f32>,
    pub bias: Vec<f32>,
    /// `1 / s` of the output's channels as the next convolution's input (empty: the output
    /// is not re-quantised).
    pub out_inv: Vec<f32>,
}

impl QuantConv {
    /// Quantises `conv`, whose input channel `c` has scale `in_scale[c]`. With the inputs'
    /// means, the bias absorbs the expected error of the rounded weights: the quantised
    /// convolution computes with effective weights `ws_o · Wq / s_c` instead of `W`, which
    /// shifts output `o` by `Σ_k mean_c(k) · (ws_o · Wq[k, o] / s_c(k) − W[k, o])` on average
    /// (rounding errors of the activations average out; those of a fixed weight do not).
    pub(crate) fn new(conv: &FoldedConv, in_scale: &[f32], in_mean: Option<&[f32]>, out_scale: Option<&[f32]>) -> QuantConv {
        let (c_in, c_out) = (conv.c_in, conv.c_out);
        let c_in_pad = c_in.div_ceil(4) * 4;
        let c_out_pad = c_out.div_ceil(16) * 16;
        let k4 = c_in_pad / 4;
        let mut scale = vec![1.0f32; c_out_pad];
        for (o, s) in scale.iter_mut().enumerate().take(c_out) {
            let mut m = 0.0f32;
            for tap in 0..9 {
                for (ci, is) in in_scale.iter().enumerate() {
                    m = m.max((conv.weight[(tap * c_in + ci) * c_out + o] * is).abs());
                }
            }
            if m > 0.0 {
                *s = m / W_MAX;
            }
        }
        let mut weight = vec![0i8; 9 * k4 * c_out_pad * 4];
        for tap in 0..9 {
            for (ci, is) in in_scale.iter().enumerate() {
                for o in 0..c_out {
                    let wv = conv.weight[(tap * c_in + ci) * c_out + o] * is / scale[o];
                    weight[((tap * k4 + ci / 4) * c_out_pad + o) * 4 + ci % 4] = wv.round().clamp(-W_MAX, W_MAX) as i8;
                }
            }
        }
        let mut bias = conv.bias.clone();
        bias.resize(c_out_pad, 0.0);
        if let Some(mean) = in_mean {
            for (o, b) in bias.iter_mut().enumerate().take(c_out) {
                let mut shift = 0.0f64;
                for tap in 0..9 {
                    for ci in 0..c_in {
                        let wq = f64::from(weight[((tap * k4 + ci / 4) * c_out_pad + o) * 4 + ci % 4]);
                        let effective = f64::from(scale[o]) * wq / f64::from(in_scale[ci]);
                        shift += f64::from(mean[ci]) * (effective - f64::from(conv.weight[(tap * c_in + ci) * c_out + o]));
                    }
                }
                *b -= shift as f32;
            }
        }
        let out_inv = out_scale.map_or_else(Vec::new, |s| s.iter().map(|s| 1.0 / s).collect());
        QuantConv { c_in, c_in_pad, c_out, c_out_pad, weight, scale, bias, out_inv }
    }
}

/// The quantised stem and residual blocks of a [`FoldedNet`].
#[derive(Debug, Clone)]
pub(crate) struct QuantTower {
    pub kernel: QuantKernel,
    /// The largest activation code.
    pub q_max: f32,
    h: usize,
    w: usize,
    channels: usize,
    /// `1 / s` per input plane.
    in_inv: Vec<f32>,
    stem: QuantConv,
    blocks: Vec<[QuantConv; 2]>,
    /// Per board square: the padded index of its 3x3 window's top-left, and its own.
    top: Vec<usize>,
    centre: Vec<usize>,
}

/// Reusable buffers of one thread.
#[derive(Default)]
pub(crate) struct QuantScratch {
    /// Zero-padded u8 images: the stem's input, the blocks' input, `b`'s input.
    input: Vec<u8>,
    a: Vec<u8>,
    t: Vec<u8>,
    /// The second f32 trunk buffer.
    y: Vec<f32>,
    acc: Vec<i32>,
}

impl QuantTower {
    /// `code_max`: the activations' largest code (tests only; `None`: the kernel's own).
    pub(crate) fn new(net: &FoldedNet, cal: &Calibration, kernel: QuantKernel, code_max: Option<f32>) -> Result<QuantTower, QuantError> {
        if !QuantKernel::supported().contains(&kernel) {
            return Err(QuantError::Unsupported(kernel.name()));
        }
        check_folded(net)?;
        let cfg: &NetConfig = &net.config;
        let fits = |v: &[f32], n: usize| v.len() == n;
        let blocks_fit = |b: &[[Vec<f32>; 2]]| b.len() == net.blocks.len() && b.iter().all(|[a, b]| fits(a, cfg.channels) && fits(b, cfg.channels));
        if !fits(&cal.input, cfg.input_planes) || !fits(&cal.input_mean, cfg.input_planes) || !blocks_fit(&cal.blocks) || !blocks_fit(&cal.block_means) {
            return Err(QuantError::Corrupt("calibration does not fit the network".into()));
        }
        let q_max = code_max.unwrap_or_else(|| kernel.code_max());
        let s = |m: &[f32]| layer_scales(m, q_max);
        let in_scale = s(&cal.input);
        let blocks_in: Vec<[Vec<f32>; 2]> = cal.blocks.iter().map(|[a, b]| [s(a), s(b)]).collect();
        let first = blocks_in.first().map(|[a, _]| a.as_slice());
        let stem = QuantConv::new(&net.stem, &in_scale, Some(&cal.input_mean), first);
        let blocks = net
            .blocks
            .iter()
            .enumerate()
            .map(|(i, [a, b])| {
                let next = blocks_in.get(i + 1).map(|[a, _]| a.as_slice());
                let [ma, mb] = &cal.block_means[i];
                [QuantConv::new(a, &blocks_in[i][0], Some(ma), Some(&blocks_in[i][1])), QuantConv::new(b, &blocks_in[i][1], Some(mb), next)]
            })
            .collect();
        Ok(QuantTower {
            kernel,
            q_max,
            h: cfg.board_height,
            w: cfg.board_width,
            channels: cfg.channels,
            in_inv: in_scale.iter().map(|s| 1.0 / s).collect(),
            stem,
            blocks,
            top: (0..cfg.squares()).map(|sq| sq / cfg.board_width * (cfg.board_width + 2) + sq % cfg.board_width).collect(),
            centre: (0..cfg.squares()).map(|sq| (sq / cfg.board_width + 1) * (cfg.board_width + 2) + sq % cfg.board_width + 1).collect(),
        })
    }

    /// Squares of one padded image.
    fn padded_squares(&self) -> usize {
        (self.h + 2) * (self.w + 2)
    }

    /// The tower over `n` images: `input` `[n, planes, H, W]` (f32, as the network's input),
    /// the trunk written to `x` `[n * H * W, channels]`.
    pub(crate) fn forward(&self, s: &mut QuantScratch, input: &[f32], n: usize, x: &mut Vec<f32>) {
        let (h, w, c) = (self.h, self.w, self.channels);
        let squares = h * w;
        let rows = n * squares;
        let ps = self.padded_squares();
        let planes = self.stem.c_in;
        assert_eq!(input.len(), n * planes * squares, "input must be [batch, planes, H, W]");

        // Quantise the input planes into zero-padded channels-last images.
        let cin = self.stem.c_in_pad;
        let qin = zeroed(&mut s.input, n * ps * cin);
        for (img_in, img_out) in input.chunks_exact(planes * squares).zip(qin.chunks_exact_mut(ps * cin)) {
            for (p, inv) in self.in_inv.iter().enumerate() {
                let plane = &img_in[p * squares..(p + 1) * squares];
                for (&v, &at) in plane.iter().zip(&self.centre) {
                    // Most planes are mostly zero, and the image already is.
                    if v != 0.0 {
                        img_out[at * cin + p] = quantise(v, *inv, self.q_max);
                    }
                }
            }
        }

        let cp = self.blocks.first().map_or(0, |[a, _]| a.c_in_pad);
        zeroed(&mut s.a, n * ps * cp);
        zeroed(&mut s.t, n * ps * cp);
        if x.len() < rows * c {
            x.resize(rows * c, 0.0);
        }
        let mut y = std::mem::take(&mut s.y);
        if y.len() < rows * c {
            y.resize(rows * c, 0.0);
        }
        let stem_out = if self.stem.out_inv.is_empty() { None } else { Some(&mut s.a[..]) };
        self.conv(&self.stem, &s.input, n, &mut s.acc, None, Some(&mut x[..rows * c]), stem_out);
        for [a, b] in &self.blocks {
            self.conv(a, &s.a, n, &mut s.acc, None, None, Some(&mut s.t[..]));
            let out_q = if b.out_inv.is_empty() { None } else { Some(&mut s.a[..]) };
            self.conv(b, &s.t, n, &mut s.acc, Some(&x[..rows * c]), Some(&mut y[..rows * c]), out_q);
            std::mem::swap(x, &mut y);
        }
        s.y = y;
    }

    /// One convolution of `n` padded u8 images into f32 rows and/or padded u8 images.
    #[allow(clippy::too_many_arguments)]
    fn conv(
        &self,
        conv: &QuantConv,
        input: &[u8],
        n: usize,
        acc: &mut Vec<i32>,
        residual: Option<&[f32]>,
        mut out_f: Option<&mut [f32]>,
        mut out_q: Option<&mut [u8]>,
    ) {
        let (h, w) = (self.h, self.w);
        let squares = h * w;
        let total = n * squares;
        let ps = self.padded_squares();
        let (cin, cout, coutp) = (conv.c_in_pad, conv.c_out, conv.c_out_pad);
        // The kernels read `base(row) + tap + 4 * c4 .. + 4` with rows inside the n images:
        // this is what makes every read of theirs in bounds.
        assert!(input.len() >= n * ps * cin, "quantised input holds {} bytes, {} needed", input.len(), n * ps * cin);
        assert_eq!(conv.weight.len(), 9 * cin * coutp, "quantised weights do not fit");
        let taps: [usize; 9] = std::array::from_fn(|t| ((t / 3) * (w + 2) + t % 3) * cin);
        let cq = cout.div_ceil(4) * 4;
        let tile = match self.kernel {
            QuantKernel::Avx512Vnni => ROWS_512,
            QuantKernel::Avx2 => ROWS_256,
            QuantKernel::Scalar => MAX_ROWS,
        };
        if acc.len() < MAX_ROWS * coutp {
            acc.resize(MAX_ROWS * coutp, 0);
        }
        // The first row of the tile as (image, square), stepped without divisions.
        let (mut p0, mut img0, mut sq0) = (0, 0, 0);
        while p0 < total {
            let valid = (total - p0).min(tile);
            // Rows past the end repeat the last valid row (computed, then dropped).
            let mut bases = [0usize; MAX_ROWS];
            let mut outs = [0usize; MAX_ROWS];
            let (mut img, mut sq) = (img0, sq0);
            for r in 0..valid {
                bases[r] = img * ps * cin + self.top[sq] * cin;
                outs[r] = (img * ps + self.centre[sq]) * cq;
                sq += 1;
                if sq == squares {
                    sq = 0;
                    img += 1;
                }
            }
            (img0, sq0) = (img, sq);
            for r in valid..MAX_ROWS {
                bases[r] = bases[valid - 1];
            }
            let acc = &mut acc[..MAX_ROWS * coutp];
            match self.kernel {
                // SAFETY: QuantTower::new only keeps a kernel the CPU supports; the reads are
                // in bounds by the asserts above.
                #[cfg(target_arch = "x86_64")]
                QuantKernel::Avx512Vnni => unsafe { x86::tile_vnni(conv, input, &bases, &taps, acc) },
                // SAFETY: as above.
                #[cfg(target_arch = "x86_64")]
                QuantKernel::Avx2 => unsafe { x86::tile_avx2(conv, input, &bases, &taps, acc) },
                _ => tile_scalar(conv, input, &bases[..tile], &taps, acc),
            }
            for r in 0..valid {
                let p = p0 + r;
                let row_acc = &acc[r * coutp..r * coutp + cout];
                let res = residual.map_or(&[][..], |res| &res[p * cout..(p + 1) * cout]);
                let of = match out_f.as_deref_mut() {
                    Some(o) => &mut o[p * cout..(p + 1) * cout],
                    None => &mut [][..],
                };
                let oq = match out_q.as_deref_mut() {
                    Some(o) => &mut o[outs[r]..outs[r] + cout],
                    None => &mut [][..],
                };
                epilogue(row_acc, &conv.scale[..cout], &conv.bias[..cout], res, of, &conv.out_inv, oq, self.q_max);
            }
            p0 += tile;
        }
    }
}

/// `buf[..len]`, zero-filled (the padding of the images must read as zero).
fn zeroed(buf: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if buf.len() < len {
        buf.resize(len, 0);
    }
    let s = &mut buf[..len];
    s.fill(0);
    s
}

/// The code of a non-negative activation (negative and NaN to 0, beyond the
/// calibrated range to `q_max`).
#[inline(always)]
pub(crate) fn quantise(v: f32, inv: f32, q_max: f32) -> u8 {
    // Clamped first (NaN fails both comparisons: 0), so the conversion is in range;
    // +0.5 then truncation rounds half up for v >= 0.
    let t = v * inv + 0.5;
    let t = if t > 0.0 { t } else { 0.0 };
    let t = if t < q_max { t } else { q_max };
    // SAFETY: 0 <= t <= q_max <= 255 (NaN became 0 above), so it fits an i32. Unlike `as`, this
    // conversion has no saturation checks, which keeps the epilogue's loops vectorised.
    unsafe { t.to_int_unchecked::<i32>() as u8 }
}

multiversioned! {
    #[allow(clippy::too_many_arguments)]
    /// `y = max(0, acc · scale + bias (+ res))`, into `out_f` (if not empty) and as codes
    /// into `out_q` (if not empty). All non-empty slices have `acc`'s length.
    fn epilogue<'a>(acc: &'a [i32], scale: &'a [f32], bias: &'a [f32], res: &'a [f32], out_f: &'a mut [f32], inv: &'a [f32], out_q: &'a mut [u8], q_max: f32) {
        // One loop per combination, each over equal-length slices, so that each vectorises.
        match (res.is_empty(), out_f.is_empty(), out_q.is_empty()) {
            (true, true, false) => epilogue_rows::<false, false, true>(acc, scale, bias, res, out_f, inv, out_q, q_max),
            (true, false, false) => epilogue_rows::<false, true, true>(acc, scale, bias, res, out_f, inv, out_q, q_max),
            (true, false, true) => epilogue_rows::<false, true, false>(acc, scale, bias, res, out_f, inv, out_q, q_max),
            (false, false, false) => epilogue_rows::<true, true, true>(acc, scale, bias, res, out_f, inv, out_q, q_max),
            (false, false, true) => epilogue_rows::<true, true, false>(acc, scale, bias, res, out_f, inv, out_q, q_max),
            (false, true, false) => epilogue_rows::<true, false, true>(acc, scale, bias, res, out_f, inv, out_q, q_max),
            (_, true, true) => {}
        }
    }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn epilogue_rows<const RES: bool, const F: bool, const Q: bool>(
    acc: &[i32],
    scale: &[f32],
    bias: &[f32],
    res: &[f32],
    out_f: &mut [f32],
    inv: &[f32],
    out_q: &mut [u8],
    q_max: f32,
) {
    let n = acc.len();
    let (scale, bias) = (&scale[..n], &bias[..n]);
    let res = if RES { &res[..n] } else { &[][..] };
    let out_f = if F { &mut out_f[..n] } else { &mut [][..] };
    let (inv, out_q) = if Q { (&inv[..n], &mut out_q[..n]) } else { (&[][..], &mut [][..]) };
    for i in 0..n {
        let mut y = acc[i] as f32 * scale[i] + bias[i];
        if RES {
            y += res[i];
        }
        let y = y.max(0.0);
        if F {
            out_f[i] = y;
        }
        if Q {
            out_q[i] = quantise(y, inv[i], q_max);
        }
    }
}

/// The reference kernel: `acc[r][o] = Σ_tap Σ_ci x[bases[r] + taps[tap] + ci] · W[tap, ci, o]`.
pub(crate) fn tile_scalar(conv: &QuantConv, input: &[u8], bases: &[usize], taps: &[usize; 9], acc: &mut [i32]) {
    let (cin, coutp) = (conv.c_in_pad, conv.c_out_pad);
    let k4 = cin / 4;
    for (r, &b) in bases.iter().enumerate() {
        let row = &mut acc[r * coutp..(r + 1) * coutp];
        row.fill(0);
        for (tap, &off) in taps.iter().enumerate() {
            let x = &input[b + off..b + off + cin];
            for c4 in 0..k4 {
                let wrow = &conv.weight[(tap * k4 + c4) * coutp * 4..(tap * k4 + c4 + 1) * coutp * 4];
                let xs = &x[c4 * 4..c4 * 4 + 4];
                for (a, w4) in row.iter_mut().zip(wrow.chunks_exact(4)) {
                    *a += xs.iter().zip(w4).map(|(&x, &w)| i32::from(x) * i32::from(w)).sum::<i32>();
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The SIMD tiles. Both read 4 input codes of a row as one i32 broadcast against a
    //! register of `[channel][4]` weights, so they share the weight layout.
    use super::{QuantConv, MAX_ROWS, ROWS_256, ROWS_512};
    use std::arch::x86_64::*;

    /// AVX-512 VNNI tile: rows `bases[..8]`, all output channels, 16 at a time in chunks of
    /// up to 3 registers (24 accumulators stay in the 32 zmm registers).
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW and VNNI; `input` holds every `bases[r] + taps[t] + c_in_pad`
    /// byte; `acc` holds `8 * c_out_pad`; the weights are `9 * c_in_pad * c_out_pad` bytes.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn tile_vnni(conv: &QuantConv, input: &[u8], bases: &[usize; MAX_ROWS], taps: &[usize; 9], acc: &mut [i32]) {
        let blocks = conv.c_out_pad / 16;
        let mut j = 0;
        while j < blocks {
            let nb = (blocks - j).min(3);
            // SAFETY: forwarded from the caller's contract; j + nb <= blocks.
            unsafe {
                match nb {
                    1 => vnni_cols::<1>(conv, input, bases, taps, acc, j),
                    2 => vnni_cols::<2>(conv, input, bases, taps, acc, j),
                    _ => vnni_cols::<3>(conv, input, bases, taps, acc, j),
                }
            }
            j += nb;
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    unsafe fn vnni_cols<const NB: usize>(conv: &QuantConv, input: &[u8], bases: &[usize; MAX_ROWS], taps: &[usize; 9], acc: &mut [i32], j0: usize) {
        let (cin, coutp) = (conv.c_in_pad, conv.c_out_pad);
        let k4 = cin / 4;
        let wstride = coutp * 4;
        let wp = conv.weight.as_ptr();
        let xp = input.as_ptr();
        let mut a = [[_mm512_setzero_si512(); NB]; ROWS_512];
        for (t, &off) in taps.iter().enumerate() {
            // SAFETY (this block): every pointer below stays within the weights (tap t, row c4
            // < k4, bytes (j0 + j) * 64 .. + 64 <= c_out_pad * 4) and within `input` (the
            // caller's contract); unaligned loads.
            unsafe {
                let rows: [*const u8; ROWS_512] = std::array::from_fn(|r| xp.add(bases[r] + off));
                let wt = wp.add(t * k4 * wstride + j0 * 64);
                for c4 in 0..k4 {
                    let wr = wt.add(c4 * wstride);
                    let wv: [__m512i; NB] = std::array::from_fn(|j| _mm512_loadu_si512(wr.add(j * 64) as *const __m512i));
                    for r in 0..ROWS_512 {
                        let x = _mm512_set1_epi32((rows[r].add(c4 * 4) as *const i32).read_unaligned());
                        for j in 0..NB {
                            a[r][j] = _mm512_dpbusd_epi32(a[r][j], x, wv[j]);
                        }
                    }
                }
            }
        }
        for (r, ar) in a.iter().enumerate() {
            for (j, v) in ar.iter().enumerate() {
                let at = r * coutp + (j0 + j) * 16;
                let dst = &mut acc[at..at + 16];
                // SAFETY: dst holds 16 i32.
                unsafe { _mm512_storeu_si512(dst.as_mut_ptr() as *mut __m512i, *v) };
            }
        }
    }

    /// AVX2 tile: rows `bases[..4]`, output channels 16 at a time (2 registers of 8).
    ///
    /// # Safety
    /// The CPU has AVX2; otherwise as [`tile_vnni`] (with 4 rows).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn tile_avx2(conv: &QuantConv, input: &[u8], bases: &[usize; MAX_ROWS], taps: &[usize; 9], acc: &mut [i32]) {
        let (cin, coutp) = (conv.c_in_pad, conv.c_out_pad);
        let k4 = cin / 4;
        let wstride = coutp * 4;
        let wp = conv.weight.as_ptr();
        let xp = input.as_ptr();
        let ones = _mm256_set1_epi16(1);
        for j0 in (0..coutp / 8).step_by(2) {
            let mut a = [[_mm256_setzero_si256(); 2]; ROWS_256];
            for (t, &off) in taps.iter().enumerate() {
                // SAFETY: as in vnni_cols (c_out_pad is a multiple of 16, so j0 + 1 < c_out_pad / 8).
                unsafe {
                    let rows: [*const u8; ROWS_256] = std::array::from_fn(|r| xp.add(bases[r] + off));
                    let wt = wp.add(t * k4 * wstride + j0 * 32);
                    for c4 in 0..k4 {
                        let wr = wt.add(c4 * wstride);
                        let wv = [_mm256_loadu_si256(wr as *const __m256i), _mm256_loadu_si256(wr.add(32) as *const __m256i)];
                        for r in 0..ROWS_256 {
                            let x = _mm256_set1_epi32((rows[r].add(c4 * 4) as *const i32).read_unaligned());
                            for j in 0..2 {
                                // u8 x s8 pairs to i16 (no saturation: codes <= 127), then pairs
                                // of those to i32.
                                let p = _mm256_madd_epi16(_mm256_maddubs_epi16(x, wv[j]), ones);
                                a[r][j] = _mm256_add_epi32(a[r][j], p);
                            }
                        }
                    }
                }
            }
            for (r, ar) in a.iter().enumerate() {
                for (j, v) in ar.iter().enumerate() {
                    let at = r * coutp + (j0 + j) * 8;
                    let dst = &mut acc[at..at + 8];
                    // SAFETY: dst holds 8 i32.
                    unsafe { _mm256_storeu_si256(dst.as_mut_ptr() as *mut __m256i, *v) };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::testing::for_each_level;

    /// A 3x3 conv with `c_in` -> `c_out` and the given weights `[9 * c_in, c_out]`.
    fn conv(c_in: usize, c_out: usize, weight: Vec<f32>, bias: Vec<f32>) -> FoldedConv {
        FoldedConv { c_in, c_out, kernel: 3, weight, bias }
    }

    /// f32 reference: the same convolution in f64 on rows `[h * w, c_in]`, before ReLU.
    fn conv_ref(c: &FoldedConv, x: &[f32], h: usize, w: usize) -> Vec<f64> {
        let mut out = vec![0.0; h * w * c.c_out];
        for y in 0..h {
            for xx in 0..w {
                for o in 0..c.c_out {
                    let mut s = f64::from(c.bias[o]);
                    for tap in 0..9 {
                        let (yy, xi) = (y as isize + tap as isize / 3 - 1, xx as isize + tap as isize % 3 - 1);
                        if yy < 0 || xi < 0 || yy >= h as isize || xi >= w as isize {
                            continue;
                        }
                        for ci in 0..c.c_in {
                            s += f64::from(x[(yy as usize * w + xi as usize) * c.c_in + ci]) * f64::from(c.weight[(tap * c.c_in + ci) * c.c_out + o]);
                        }
                    }
                    out[(y * w + xx) * c.c_out + o] = s;
                }
            }
        }
        out
    }

    /// One quantised conv through `kernel` on one image: (f32 output after ReLU, codes).
    #[allow(clippy::too_many_arguments)]
    fn run_one(c: &FoldedConv, in_scale: &[f32], out_scale: &[f32], x: &[f32], h: usize, w: usize, kernel: QuantKernel, q_max: f32) -> (Vec<f32>, Vec<u8>) {
        let q = QuantConv::new(c, in_scale, None, Some(out_scale));
        let top = (0..h * w).map(|sq| sq / w * (w + 2) + sq % w).collect();
        let centre = (0..h * w).map(|sq| (sq / w + 1) * (w + 2) + sq % w + 1).collect();
        let tower = QuantTower { kernel, q_max, h, w, channels: c.c_out, in_inv: vec![], stem: q.clone(), blocks: vec![], top, centre };
        let ps = (h + 2) * (w + 2);
        let mut img = vec![0u8; ps * q.c_in_pad];
        for p in 0..h * w {
            for ci in 0..c.c_in {
                img[((p / w + 1) * (w + 2) + p % w + 1) * q.c_in_pad + ci] = quantise(x[p * c.c_in + ci], 1.0 / in_scale[ci], q_max);
            }
        }
        let mut out_f = vec![f32::NAN; h * w * c.c_out];
        let mut out_q = vec![0u8; ps * c.c_out.div_ceil(4) * 4];
        tower.conv(&q, &img, 1, &mut Vec::new(), None, Some(&mut out_f), Some(&mut out_q));
        (out_f, out_q)
    }

    #[test]
    fn a_hand_checkable_conv_is_exact_when_everything_is_on_the_grid() {
        // One input channel on a 1x2 board, one output channel. Input scale 0.5, so
        // x = [3.0, 1.5] are the codes 6 and 3 exactly. Weights: centre tap 254, right
        // neighbour (tap 5) -2, the rest 0, bias 0.25. Scaled by the input scale they are 127
        // and -1, so ws = 1 and the weight codes are 127 and -1, also exact.
        // out[0] = 254·3 − 2·1.5 + 0.25 = 759.25; out[1] = 254·1.5 + 0.25 = 381.25 (its right
        // neighbour is off the board). With output scale 8 their codes are
        // round(94.906) = 95 and round(47.656) = 48.
        let mut weight = vec![0.0; 9];
        weight[4] = 254.0;
        weight[5] = -2.0;
        let c = conv(1, 1, weight, vec![0.25]);
        let q = QuantConv::new(&c, &[0.5], None, None);
        assert_eq!(q.scale[0], 1.0);
        assert_eq!((q.weight[4 * 16 * 4], q.weight[5 * 16 * 4]), (127, -1));
        for kernel in QuantKernel::supported() {
            let (f, codes) = run_one(&c, &[0.5], &[8.0], &[3.0, 1.5], 1, 2, kernel, kernel.code_max());
            assert_eq!(f, vec![759.25, 381.25], "{kernel:?}");
            // Padded 3x4 image, 4 channels per square: the board squares are (1, 1), (1, 2).
            assert_eq!((codes[(4 + 1) * 4], codes[(4 + 2) * 4]), (95, 48), "{kernel:?}");
            assert_eq!(codes.iter().map(|&c| u32::from(c)).sum::<u32>(), 95 + 48, "padding written");
        }
        // Off the grid, the error stays within the bound: x = [3.1, 1.5] has code 6 (error
        // 0.1 ≤ s/2 = 0.25), so out[0] moves by 254 · 0.1 = 25.4 ≤ 254 · 0.25.
        let (f, _) = run_one(&c, &[0.5], &[8.0], &[3.1, 1.5], 1, 2, QuantKernel::Scalar, Q_MAX_7);
        let want = 254.0 * 3.1 - 2.0 * 1.5 + 0.25;
        assert!((f64::from(f[0]) - want).abs() <= 254.0 * 0.25 + 2.0 * 0.25, "{} vs {want}", f[0]);
    }

    #[test]
    fn every_kernel_computes_the_same_integers_within_the_error_bound() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        // Odd sizes: c_in not a multiple of 4, c_out not of 16, more than 3 zmm blocks.
        for (c_in, c_out, h, w) in [(5, 8, 3, 4), (13, 70, 5, 5), (48, 48, 9, 9)] {
            let weight: Vec<f32> = (0..9 * c_in * c_out).map(|_| rng.random::<f32>() * 2.0 - 1.0).collect();
            let bias: Vec<f32> = (0..c_out).map(|_| rng.random::<f32>() - 0.5).collect();
            let c = conv(c_in, c_out, weight, bias);
            let x: Vec<f32> = (0..h * w * c_in).map(|_| if rng.random::<f32>() < 0.3 { 0.0 } else { rng.random::<f32>() * 3.0 }).collect();
            let mut in_max = vec![0.0f32; c_in];
            for (i, v) in x.iter().enumerate() {
                in_max[i % c_in] = in_max[i % c_in].max(*v);
            }
            let out_scale = vec![0.05f32; c_out];
            let reference = conv_ref(&c, &x, h, w);
            for kernel in QuantKernel::supported() {
                let q_max = kernel.code_max();
                let in_scale = layer_scales(&in_max, q_max);
                let q = QuantConv::new(&c, &in_scale, None, None);
                let got = run_one(&c, &in_scale, &out_scale, &x, h, w, kernel, q_max);
                for p in 0..h * w {
                    for o in 0..c_out {
                        // The bound over this output's inputs.
                        let mut bound = 1e-4f64;
                        for tap in 0..9 {
                            let (yy, xi) = ((p / w) as isize + tap as isize / 3 - 1, (p % w) as isize + tap as isize % 3 - 1);
                            if yy < 0 || xi < 0 || yy >= h as isize || xi >= w as isize {
                                continue;
                            }
                            for ci in 0..c_in {
                                let xv = x[(yy as usize * w + xi as usize) * c_in + ci];
                                let code = f64::from(quantise(xv, 1.0 / in_scale[ci], q_max));
                                bound += code * f64::from(q.scale[o]) / 2.0
                                    + f64::from(in_scale[ci]) / 2.0 * f64::from(c.weight[(tap * c_in + ci) * c_out + o].abs());
                            }
                        }
                        let want = reference[p * c_out + o].max(0.0);
                        let g = f64::from(got.0[p * c_out + o]);
                        assert!((g - want).abs() <= bound, "{kernel:?} {c_in}->{c_out}: row {p} channel {o}: {g} vs {want}, bound {bound}");
                    }
                }
                let scalar = run_one(&c, &in_scale, &out_scale, &x, h, w, QuantKernel::Scalar, q_max);
                assert!(scalar.0 == got.0 && scalar.1 == got.1, "{kernel:?} differs from the scalar kernel");
            }
        }
    }

    #[test]
    fn the_epilogue_is_the_same_at_every_simd_level() {
        let acc: Vec<i32> = (0..300).map(|i| i * 37 - 5000).collect();
        let scale: Vec<f32> = (0..300).map(|i| 0.001 * (i % 7 + 1) as f32).collect();
        let bias: Vec<f32> = (0..300).map(|i| (i % 5) as f32 - 2.0).collect();
        let res: Vec<f32> = (0..300).map(|i| (i % 3) as f32 * 0.5).collect();
        let inv = vec![10.0f32; 300];
        let mut first: Option<(Vec<f32>, Vec<u8>)> = None;
        for_each_level(|_| {
            let (mut f, mut q) = (vec![f32::NAN; 300], vec![0u8; 300]);
            epilogue(&acc, &scale, &bias, &res, &mut f, &inv, &mut q, Q_MAX_7);
            for i in 0..300 {
                let want = (acc[i] as f32 * scale[i] + bias[i] + res[i]).max(0.0);
                assert_eq!(f[i], want);
                assert_eq!(q[i], quantise(want, 10.0, Q_MAX_7));
            }
            match &first {
                None => first = Some((f, q)),
                Some(x) => assert!(x.0 == f && x.1 == q),
            }
        });
    }

    #[test]
    fn codes_round_to_nearest_and_saturate() {
        assert_eq!(quantise(0.0, 10.0, Q_MAX_7), 0);
        assert_eq!(quantise(0.04, 10.0, Q_MAX_7), 0);
        assert_eq!(quantise(0.05, 10.0, Q_MAX_7), 1);
        assert_eq!(quantise(1.26, 100.0, Q_MAX_7), 126);
        assert_eq!(quantise(5.0, 100.0, Q_MAX_7), 127);
        assert_eq!(quantise(-3.0, 1.0, Q_MAX_7), 0);
        assert_eq!(quantise(f32::NAN, 1.0, Q_MAX_7), 0);
        assert_eq!(quantise(2.0, 100.0, Q_MAX_8), 200);
        assert_eq!(quantise(3.0, 100.0, Q_MAX_8), 255);
    }
}
