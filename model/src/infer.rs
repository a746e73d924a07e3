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
use crate::kernels::{conv_all, matmul_acc, relu_in_place, sized, ConvWeights};
use crate::net::Net;
use crate::quant::{Calibration, QuantError, QuantKernel, QuantScratch, QuantTower};
use crate::winograd::{conv3x3_winograd, WinogradConv, WinogradScratch};
/// Most images one thread runs through the network at once (4, 8, 16 within noise).
const MAX_GROUP: usize = 8;
/// Channels from which a batch smaller than the thread pool splits each layer across the
/// threads instead of running on the calling thread.
const LAYER_SPLIT_CHANNELS: usize = 128;

/// Outputs of [`InferenceNet::forward`].
#[derive(Debug, Clone, PartialEq)]
pub struct InferenceOutput {
    /// Policy logits `[batch, policy_planes * H * W]`.
    pub policy: Vec<f32>,
    /// Win/draw/loss logits `[batch, 3]`.
    pub value: Vec<f32>,
}

/// The arithmetic of the residual tower (the heads are always f32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// f32 everywhere: the reference.
    #[default]
    F32,
    /// 8-bit integer stem and residual blocks (see [`crate::quant`]), on AVX-512 VNNI or
    /// AVX2; f32 on a CPU with neither.
    Int8,
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f32" => Ok(Precision::F32),
            "int8" => Ok(Precision::Int8),
            other => Err(format!("precision {other:?}: expected f32 or int8")),
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        })
    }
}

/// Eval-only network with folded batch norm (CPU; f32, or an int8 tower by choice).
#[derive(Debug, Clone)]
pub struct InferenceNet {
    net: FoldedNet,
    /// Winograd-transformed stem and tower convolutions (`None`: im2col everywhere).
    winograd: Option<WinogradTower>,
    /// The quantised tower, when [`with_int8`](Self::with_int8) chose one: it then runs
    /// instead of the f32 tower.
    quant: Option<QuantTower>,
}

#[derive(Debug, Clone)]
struct WinogradTower {
    stem: WinogradConv,
    blocks: Vec<[WinogradConv; 2]>,
}

impl WinogradTower {
    fn new(net: &FoldedNet) -> Self {
        let w = |c: &FoldedConv| WinogradConv::new(c.c_in, c.c_out, &c.weight, &c.bias);
        Self { stem: w(&net.stem), blocks: net.blocks.iter().map(|[a, b]| [w(a), w(b)]).collect() }
    }
}

/// Per-thread reusable buffers (avoids page-faulting fresh allocations on every call).
#[derive(Default)]
struct Scratch {
    wino: WinogradScratch,
    input: Vec<f32>,
    x: Vec<f32>,
    y: Vec<f32>,
    t: Vec<f32>,
    head: Vec<f32>,
    hidden: Vec<f32>,
    quant: QuantScratch,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl FoldedConv {
    fn view(&self) -> ConvWeights<'_> {
        ConvWeights { c_in: self.c_in, c_out: self.c_out, kernel: self.kernel, weight: &self.weight, bias: Some(&self.bias) }
    }
}

fn dense_rows(layer: &FoldedDense, input: &[f32], rows: usize, out: &mut [f32], relu: bool) {
    for dst in out.chunks_exact_mut(layer.d_out) {
        dst.copy_from_slice(&layer.bias);
    }
    matmul_acc(rows, layer.d_out, layer.d_in, out, layer.d_out, input, layer.d_in, &layer.weight, layer.d_out);
    if relu {
        relu_in_place(out);
    }
}

impl InferenceNet {
    /// Wraps already folded weights (Winograd on, see [`with_winograd`](Self::with_winograd)).
    pub fn new(net: FoldedNet) -> Self {
        Self { winograd: Some(WinogradTower::new(&net)), net, quant: None }
    }

    /// Runs the stem and the residual blocks in 8-bit integers with the fastest kernel this
    /// CPU has ([`QuantKernel::best`]: AVX-512 VNNI, else AVX2), activation scales calibrated
    /// on `calibration`, `[positions, input_planes, H, W]` encoded from real play (a few
    /// thousand positions; the result depends only on them, so a seeded sample gives the same
    /// network every time). On a CPU with neither instruction set the network stays f32
    /// ([`precision`](Self::precision) says which one runs). Inputs must be finite and
    /// non-negative, as the encoded planes are.
    pub fn with_int8(self, calibration: &[f32]) -> Result<Self, QuantError> {
        match QuantKernel::best() {
            Some(kernel) => self.with_int8_on(calibration, kernel),
            None => Ok(self),
        }
    }

    /// [`with_int8`](Self::with_int8) on a chosen kernel (an error if this CPU cannot run
    /// it).
    pub fn with_int8_on(self, calibration: &[f32], kernel: QuantKernel) -> Result<Self, QuantError> {
        let cal = Calibration::measure(&self.net, calibration)?;
        self.with_int8_calibrated(&cal, kernel)
    }

    /// [`with_int8`](Self::with_int8) with measured scales and a chosen kernel (an error if
    /// this CPU cannot run it).
    pub fn with_int8_calibrated(mut self, calibration: &Calibration, kernel: QuantKernel) -> Result<Self, QuantError> {
        self.quant = Some(QuantTower::new(&self.net, calibration, kernel, None)?);
        Ok(self)
    }

    #[cfg(test)]
    pub(crate) fn with_quant_tower(mut self, tower: QuantTower) -> Self {
        self.quant = Some(tower);
        self
    }

    /// [`Precision::F32`] as is; [`Precision::Int8`] as [`with_int8`](Self::with_int8).
    pub fn with_precision(self, precision: Precision, calibration: &[f32]) -> Result<Self, QuantError> {
        match precision {
            Precision::F32 => Ok(self.without_int8()),
            Precision::Int8 => self.with_int8(calibration),
        }
    }

    /// Back to the f32 tower.
    pub fn without_int8(mut self) -> Self {
        self.quant = None;
        self
    }

    /// What the tower runs in.
    pub fn precision(&self) -> Precision {
        if self.quant.is_some() {
            Precision::Int8
        } else {
            Precision::F32
        }
    }

    /// The integer kernel of an int8 network.
    pub fn int8_kernel(&self) -> Option<QuantKernel> {
        self.quant.as_ref().map(|q| q.kernel)
    }

    /// Chooses how batches of at least one image per thread compute the 3x3 convolutions:
    /// Winograd F(2x2, 3x3) (`true`, default: fewer multiply-adds) or im2col + one matrix
    /// product (`false`). Both give the same outputs within float rounding. Batches smaller
    /// than the thread count always use im2col, split across threads.
    pub fn with_winograd(mut self, on: bool) -> Self {
        self.winograd = on.then(|| WinogradTower::new(&self.net));
        self
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
    pub fn forward(&self, input: &[f32], batch: usize) -> InferenceOutput {
        let cfg = &self.net.config;
        let mut policy = vec![0.0; batch * cfg.policy_len()];
        let mut value = vec![0.0; batch * 3];
        self.forward_into(input, batch, &mut policy, &mut value);
        InferenceOutput { policy, value }
    }

    /// Panics unless the buffers fit `batch` positions of this network.
    fn check_buffers(&self, input: &[f32], batch: usize, policy: &[f32], value: &[f32]) {
        let cfg = &self.net.config;
        assert_eq!(input.len(), batch * cfg.input_len(), "input must be [batch, planes, H, W]");
        assert_eq!(policy.len(), batch * cfg.policy_len(), "policy must be [batch, P*H*W]");
        assert_eq!(value.len(), batch * 3, "value must be [batch, 3]");
    }

    /// Like [`forward`](Self::forward), writing into caller buffers: `policy`
    /// `[batch, policy_planes * H * W]`, `value` `[batch, 3]`.
    pub fn forward_into(&self, input: &[f32], batch: usize, policy: &mut [f32], value: &mut [f32]) {
        let cfg = &self.net.config;
        self.check_buffers(input, batch, policy, value);
        if batch == 0 {
            return;
        }
        let threads = rayon::current_num_threads().max(1);
        if batch < threads {
            // Too few images to give each thread its own. Splitting a layer across threads
            // pays only for wide layers: at 4x48 and batch 1 one thread (with Winograd)
            // evaluates about twice what two threads splitting each layer do
            // (docs/PERFORMANCE.md, "One search on one core").
            let split = cfg.channels >= LAYER_SPLIT_CHANNELS;
            self.forward_group(input, batch, policy, value, split);
            return;
        }
        let group = batch.div_ceil(threads).clamp(1, MAX_GROUP);
        input.par_chunks(group * cfg.input_len()).zip(policy.par_chunks_mut(group * cfg.policy_len())).zip(value.par_chunks_mut(group * 3)).for_each(
            |((input, policy), value)| {
                let n = value.len() / 3;
                self.forward_group(input, n, policy, value, false);
            },
        );
    }

    /// Like [`forward_into`](Self::forward_into) but entirely on the calling thread (no rayon):
    /// for callers that already run one evaluator per core (e.g. one self-play worker per
    /// thread) and must not oversubscribe the CPU.
    pub fn forward_serial_into(&self, input: &[f32], batch: usize, policy: &mut [f32], value: &mut [f32]) {
        let cfg = &self.net.config;
        self.check_buffers(input, batch, policy, value);
        for ((input, policy), value) in
            input.chunks(MAX_GROUP * cfg.input_len()).zip(policy.chunks_mut(MAX_GROUP * cfg.policy_len())).zip(value.chunks_mut(MAX_GROUP * 3))
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

    fn forward_group_with(&self, s: &mut Scratch, input: &[f32], n: usize, policy: &mut [f32], value: &mut [f32], par: bool) {
        let net = &self.net;
        let cfg = &net.config;
        let squares = cfg.squares();
        let rows = n * squares;
        let c = cfg.channels;

        let mut x = std::mem::take(&mut s.x);
        let mut y = std::mem::take(&mut s.y);
        let mut t = std::mem::take(&mut s.t);
        sized(&mut x, rows * c);

        if let Some(q) = &self.quant {
            q.forward(&mut s.quant, input, n, &mut x);
        } else {
            // [n, planes, S] -> [n * S, planes]
            let planes = cfg.input_planes;
            let x_in = sized(&mut s.input, rows * planes);
            for (img_in, img_out) in input.chunks_exact(planes * squares).zip(x_in.chunks_exact_mut(planes * squares)) {
                for p in 0..planes {
                    for sq in 0..squares {
                        img_out[sq * planes + p] = img_in[p * squares + sq];
                    }
                }
            }
            sized(&mut y, rows * c);
            sized(&mut t, rows * c);
            self.f32_tower(s, n, par, &mut x, &mut y, &mut t);
        }
        let trunk = &x[..rows * c];
        self.heads(s, trunk, n, policy, value, par);

        s.x = x;
        s.y = y;
        s.t = t;
    }

    /// The stem and the residual blocks in f32, from `s.input` (channels-last) into `x`.
    #[allow(clippy::too_many_arguments)]
    fn f32_tower(&self, s: &mut Scratch, n: usize, par: bool, x: &mut Vec<f32>, y: &mut Vec<f32>, t: &mut [f32]) {
        let net = &self.net;
        let cfg = &net.config;
        let (h, w) = (cfg.board_height, cfg.board_width);
        let rows = n * cfg.squares();
        let c = cfg.channels;
        let planes = cfg.input_planes;
        match (&self.winograd, par) {
            (Some(wt), false) => {
                let ws = &mut s.wino;
                let input = &s.input[..rows * planes];
                conv3x3_winograd(&wt.stem, input, n, h, w, &mut x[..rows * c], None, true, ws);
                for [a, b] in &wt.blocks {
                    conv3x3_winograd(a, &x[..rows * c], n, h, w, &mut t[..rows * c], None, true, ws);
                    let res = Some(&x[..rows * c]);
                    conv3x3_winograd(b, &t[..rows * c], n, h, w, &mut y[..rows * c], res, true, ws);
                    std::mem::swap(x, y);
                }
            }
            _ => {
                let input = &s.input[..rows * planes];
                conv_all(net.stem.view(), input, h, w, &mut x[..rows * c], None, true, par);
                for [a, b] in &net.blocks {
                    conv_all(a.view(), &x[..rows * c], h, w, &mut t[..rows * c], None, true, par);
                    let res = Some(&x[..rows * c]);
                    conv_all(b.view(), &t[..rows * c], h, w, &mut y[..rows * c], res, true, par);
                    std::mem::swap(x, y);
                }
            }
        }
    }

    /// The policy and value heads (f32) on the trunk `[n * S, channels]`.
    fn heads(&self, s: &mut Scratch, trunk: &[f32], n: usize, policy: &mut [f32], value: &mut [f32], par: bool) {
        let net = &self.net;
        let cfg = &net.config;
        let (h, w) = (cfg.board_height, cfg.board_width);
        let squares = cfg.squares();
        let rows = n * squares;

        // Policy head: 1x1 conv + ReLU, then per image dst[p, s] = sum_c W[c, p] x[s, c] + b[p].
        let pc = &net.policy_conv;
        let ph = sized(&mut s.head, rows * pc.c_out);
        conv_all(pc.view(), trunk, h, w, ph, None, true, par);
        let po = &net.policy_out;
        let planes_out = po.c_out;
        // FoldedConv's fields are public, so safe code can hand us any lengths: check the
        // extents the unsafe product below reads before it reads them.
        assert!(
            po.weight.len() >= planes_out * po.c_in && po.bias.len() >= planes_out,
            "policy_out holds {} weights and {} biases for {} x {} (corrupt folded network)",
            po.weight.len(),
            po.bias.len(),
            po.c_in,
            planes_out
        );
        for (img, dst) in ph.chunks_exact(squares * po.c_in).zip(policy.chunks_exact_mut(planes_out * squares)) {
            for (p, row) in dst.chunks_exact_mut(squares).enumerate() {
                row.fill(po.bias[p]);
            }
            // SAFETY: dst is [P, S] (row stride S): its last element is P·S − 1 <
            // dst.len() = P·S (chunks_exact); lhs (W^T) element (p, c) is at p + c·P, at most
            // P·Cp − 1 < weight.len() (asserted above); rhs (img^T) element (c, s) is at
            // c + s·Cp, at most S·Cp − 1 < img.len() = S·Cp (chunks_exact); dst is a
            // distinct &mut borrow, so it aliases neither input.
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
        conv_all(vc.view(), trunk, h, w, vh, None, true, par);
        let fc1 = &net.value_fc1;
        let hidden = sized(&mut s.hidden, n * fc1.d_out);
        dense_rows(fc1, &s.head[..rows * vc.c_out], n, hidden, true);
        dense_rows(&net.value_fc2, &s.hidden[..n * fc1.d_out], n, value, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::cpu_device;
    use crate::tensor_util::to_vec;
    use crate::testutil::{max_abs_diff, trained_tiny_net, OwnedBatch};
    use burn::module::Module;

    #[test]
    #[should_panic(expected = "policy_out holds")]
    fn a_truncated_policy_weight_is_refused_not_read_out_of_bounds() {
        let net = trained_tiny_net(5);
        let mut folded = FoldedNet::from_net(&net);
        let keep = folded.policy_out.weight.len() / 2;
        folded.policy_out.weight.truncate(keep);
        folded.policy_out.weight.shrink_to_fit();
        let inf = InferenceNet::new(folded);
        let c = inf.config().clone();
        let input = vec![0.5f32; c.input_len()];
        let _ = inf.forward(&input, 1);
    }

    #[test]
    fn folded_matches_eval_mode_net() {
        let net = trained_tiny_net(5);
        let eval = net.valid().to_device(&cpu_device());
        for winograd in [true, false] {
            check_folded(&eval, &InferenceNet::from_net(&net).with_winograd(winograd));
        }
    }

    fn check_folded(eval: &Net, folded: &InferenceNet) {
        let cfg = eval.config().clone();
        let device = cpu_device();

        // batch 1: one group on the calling thread (the layer-parallel path has its own
        // test); 5 and 19: whole-image groups of uneven size.
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
            assert!(max_abs_diff(&p, &got.policy) < 1e-4 && max_abs_diff(&v, &got.value) < 1e-4);
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
        assert!(max_abs_diff(&p, &want.policy) < 1e-4);
        assert!(max_abs_diff(&v, &want.value) < 1e-4);
    }

    #[test]
    fn int8_tower_is_close_to_f32_and_the_same_under_every_kernel() {
        use crate::quant::{Calibration, QuantKernel};
        let net = trained_tiny_net(5);
        let f32_net = InferenceNet::from_net(&net);
        let cfg = f32_net.config().clone();
        let cal = Calibration::measure(f32_net.folded(), &OwnedBatch::random(&cfg, 200, 1).input).unwrap();
        assert_eq!(cal.positions, 200);
        let batch = 19;
        let data = OwnedBatch::random(&cfg, batch, 2);
        let want = f32_net.forward(&data.input, batch);
        let spread = want.policy.iter().fold(0.0f32, |m, v| m.max(v.abs())).max(want.value.iter().fold(0.0f32, |m, v| m.max(v.abs())));
        for kernel in QuantKernel::supported() {
            let q = f32_net.clone().with_int8_calibrated(&cal, kernel).unwrap();
            assert_eq!((q.precision(), q.int8_kernel()), (Precision::Int8, Some(kernel)));
            let got = q.forward(&data.input, batch);
            let (dp, dv) = (max_abs_diff(&want.policy, &got.policy), max_abs_diff(&want.value, &got.value));
            // 7-bit activations and weights: a few per cent of the logits' range.
            assert!(dp < 0.05 * spread && dv < 0.05 * spread, "{kernel:?}: policy {dp}, value {dv}, logits up to {spread}");
            let mut p = vec![0.0; got.policy.len()];
            let mut v = vec![0.0; got.value.len()];
            q.forward_serial_into(&data.input, batch, &mut p, &mut v);
            assert!(p == got.policy && v == got.value, "{kernel:?}: serial and parallel differ");
            // The scalar kernel with the same activation codes computes the same numbers.
            let tower = crate::quant::QuantTower::new(f32_net.folded(), &cal, QuantKernel::Scalar, Some(kernel.code_max())).unwrap();
            let reference = f32_net.clone().with_quant_tower(tower).forward(&data.input, batch);
            assert!(reference.policy == got.policy && reference.value == got.value, "{kernel:?} differs from the scalar kernel");
        }
        assert_eq!(f32_net.clone().with_precision(Precision::F32, &[]).unwrap().precision(), Precision::F32);
        let best = f32_net.clone().with_int8(&OwnedBatch::random(&cfg, 8, 1).input).unwrap();
        assert_eq!(best.int8_kernel(), QuantKernel::best());
    }

    #[test]
    fn bad_calibration_input_is_an_error() {
        use crate::quant::QuantError;
        let net = InferenceNet::from_net(&trained_tiny_net(0));
        let per = net.config().input_len();
        assert!(matches!(net.clone().with_int8(&[]), Err(QuantError::Empty { .. })));
        assert!(matches!(net.clone().with_int8(&vec![0.0; per + 1]), Err(QuantError::Length { .. })));
        let mut neg = vec![0.0; per];
        neg[3] = -1.0;
        assert!(matches!(net.clone().with_int8(&neg), Err(QuantError::BadInput { value, .. }) if value == -1.0));
        neg[3] = f32::NAN;
        assert!(matches!(net.clone().with_int8(&neg), Err(QuantError::BadInput { .. })));
        assert!("int4".parse::<Precision>().is_err());
        assert_eq!("int8".parse::<Precision>(), Ok(Precision::Int8));
    }

    #[test]
    fn empty_batch() {
        let folded = InferenceNet::from_net(&trained_tiny_net(0));
        let out = folded.forward(&[], 0);
        assert!(out.policy.is_empty() && out.value.is_empty());
    }
}
