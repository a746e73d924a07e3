//! A faster 3x3 convolution for burn-flex, forward and backward, as a burn backend
//! extension (`#[backend_extension]`, burn's `extension` feature).
//!
//! burn-flex's own conv2d runs one small matrix product per image and its backward uses a
//! transposed convolution plus layout copies; on a 9x9 board most of the matrix kernel's
//! speed is lost. This op computes the same function (3x3 kernel, stride 1, zero padding 1,
//! no bias) on channels-last rows, converting NCHW sides per group of images (see below):
//!
//! - forward: `y = conv3x3(x, W)` with Winograd F(2x2, 3x3) ([`crate::winograd`]) on
//!   whole-image groups; batches smaller than twice the thread count use im2col with the
//!   rows split across threads;
//! - input gradient: `dx = conv3x3(dy, W')` with `W'[c, o, ky, kx] = W[o, c, 2-ky, 2-kx]`
//!   (a stride-1 "same" 3x3 convolution's transpose is the convolution with the kernel
//!   rotated by 180 degrees and the channel axes swapped);
//! - weight gradient: in the Winograd domain, `∂L/∂U = Σ_tiles (A dY Aᵀ) ⊙ (Bᵀ x B)`
//!   accumulated per thread over image groups, then `dW = Gᵀ (∂L/∂U) G`
//!   ([`crate::winograd`]).
//!
//! The kernels compute on channels-last rows. Either side of the op may already be
//! channels-last ([`ImageLayout::Nhwc`]): the training network keeps its whole tower so
//! ([`conv3x3_layout`]) and converts nothing between convolutions; NCHW sides are converted
//! per image group.
//!
//! Only burn-flex (and autodiff over it) implements the extension; [`conv3x3`] falls back to
//! burn's conv2d on every other device (GPU).

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::flex::{FlexTensor, Layout};
use burn::backend::ops::ModuleOps;
use burn::backend::tensor::FloatTensor;
use burn::backend::{backend_extension, Backend, Dispatch, Flex};
use burn::tensor::ops::ConvOptions;
use burn::tensor::{Bytes, DType, Device, Shape, Tensor};
use rayon::prelude::*;
use std::mem::MaybeUninit;

use crate::kernels::{conv_all, sized, ConvWeights};
use crate::winograd::{accumulate_weight_grad_winograd, conv3x3_winograd, conv3x3_winograd_into, weight_grad_from_winograd, WinogradConv, WinogradScratch};

/// How an image batch is laid out: channels first (`[B, C, H, W]`, burn's convention) or
/// channels last (`[B, H, W, C]`: each square's channels together, the rows the kernels
/// compute on, so a tower kept channels-last converts nothing between its convolutions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageLayout {
    /// `[B, C, H, W]`.
    Nchw,
    /// `[B, H, W, C]`.
    Nhwc,
}

impl ImageLayout {
    /// `(batch, channels, height, width)` of a tensor shape in this layout.
    fn bchw(self, [d0, d1, d2, d3]: [usize; 4]) -> [usize; 4] {
        match self {
            ImageLayout::Nchw => [d0, d1, d2, d3],
            ImageLayout::Nhwc => [d0, d3, d1, d2],
        }
    }

    /// The tensor shape of a `(batch, channels, height, width)` batch in this layout.
    fn shape(self, [b, c, h, w]: [usize; 4]) -> Vec<usize> {
        match self {
            ImageLayout::Nchw => vec![b, c, h, w],
            ImageLayout::Nhwc => vec![b, h, w, c],
        }
    }
}

/// 3x3 "same" convolution without bias, with its own backward pass on burn-flex.
#[backend_extension(Flex, Autodiff)]
pub trait Conv3x3Ops: Backend {
    /// `x` (`from` layout, `C` channels), `weight [O, C, 3, 3]` -> the convolution in the
    /// `to` layout (`O` channels); stride 1, zero padding 1.
    fn conv3x3(x: FloatTensor<Self>, weight: FloatTensor<Self>, from: ImageLayout, to: ImageLayout) -> FloatTensor<Self>;

    /// Gradient of [`conv3x3`](Self::conv3x3) with respect to the weight: `x` in `from`
    /// layout, `grad_out` in `to` layout -> `[O, C, 3, 3]`. Not differentiable.
    fn conv3x3_weight_grad(x: FloatTensor<Self>, grad_out: FloatTensor<Self>, from: ImageLayout, to: ImageLayout) -> FloatTensor<Self>;
}

/// `conv3x3(x, weight)` on tensors: the extension on burn-flex devices, burn's conv2d with
/// padding 1 elsewhere. `x [B, C, H, W]`, `weight [O, C, 3, 3]` -> `[B, O, H, W]`.
pub fn conv3x3(x: Tensor<4>, weight: Tensor<4>) -> Tensor<4> {
    conv3x3_layout(x, weight, ImageLayout::Nchw, ImageLayout::Nchw)
}

/// [`conv3x3`] from a batch in layout `from` to one in layout `to`: the extension on
/// burn-flex devices, burn's conv2d between permutations elsewhere.
pub fn conv3x3_layout(x: Tensor<4>, weight: Tensor<4>, from: ImageLayout, to: ImageLayout) -> Tensor<4> {
    if is_flex(&x.device()) {
        Tensor::from_dispatch(<Dispatch as Conv3x3Ops>::conv3x3(x.into_dispatch(), weight.into_dispatch(), from, to))
    } else {
        let x = if from == ImageLayout::Nhwc { x.permute([0, 3, 1, 2]) } else { x };
        let y = burn::tensor::module::conv2d(x, weight, None, same_padding());
        if to == ImageLayout::Nhwc {
            y.permute([0, 2, 3, 1])
        } else {
            y
        }
    }
}

/// 1x1 convolution `x [B, C, H, W]`, `weight [O, C, 1, 1]` (+ `bias [O]`) -> `[B, O, H, W]`
/// as one batched matrix product `W [1, O, C] · x [B, C, H·W]`. burn-flex runs that (and
/// its backward) in parallel over the batch, where its conv2d runs 1x1 kernels on one
/// thread; the function is the same on every device.
pub fn conv1x1(x: Tensor<4>, weight: Tensor<4>, bias: Option<Tensor<1>>) -> Tensor<4> {
    let [b, c, h, w] = x.dims();
    let [o, c2, kh, kw] = weight.dims();
    assert!(c == c2 && kh == 1 && kw == 1, "conv1x1: weight must be [O, C, 1, 1]");
    let y = weight.reshape([1, o, c]).matmul(x.reshape([b, c, h * w]));
    let y = match bias {
        Some(bias) => y + bias.reshape([1, o, 1]),
        None => y,
    };
    y.reshape([b, o, h, w])
}

/// Whether `device` is burn-flex (with or without autodiff).
pub fn is_flex(device: &Device) -> bool {
    // Device equality compares hardware identity and ignores autodiff.
    *device == Device::flex()
}

fn same_padding() -> ConvOptions<2> {
    ConvOptions::new([1, 1], [1, 1], [1, 1], 1)
}

/// Images per parallel task.
fn group_size(batch: usize) -> usize {
    batch.div_ceil(rayon::current_num_threads().max(1)).clamp(1, 4)
}

/// `[n, c, s]` (NCHW, one group of images) -> `[n * s, c]` rows.
fn to_rows(src: &[f32], c: usize, s: usize, dst: &mut [f32]) {
    // Blocks of 8 squares: per block the output rows being filled (8·c values) stay in L1
    // while every channel's plane is read in order.
    const SQ_BLOCK: usize = 8;
    for (img_in, img_out) in src.chunks_exact(c * s).zip(dst.chunks_exact_mut(c * s)) {
        for sq0 in (0..s).step_by(SQ_BLOCK) {
            let sq1 = (sq0 + SQ_BLOCK).min(s);
            let rows = &mut img_out[sq0 * c..sq1 * c];
            for ch in 0..c {
                let part = &img_in[ch * s + sq0..ch * s + sq1];
                for (k, v) in part.iter().enumerate() {
                    rows[k * c + ch] = *v;
                }
            }
        }
    }
}

/// `[n * s, c]` rows -> `[n, c, s]` (NCHW), into a buffer not yet initialised: every
/// element of `dst` is written when `dst.len() == src.len()` (asserted).
fn from_rows(src: &[f32], c: usize, s: usize, dst: &mut [MaybeUninit<f32>]) {
    assert_eq!(src.len(), dst.len(), "from_rows writes every element of dst");
    for (img_in, img_out) in src.chunks_exact(c * s).zip(dst.chunks_exact_mut(c * s)) {
        for ch in 0..c {
            let plane = &mut img_out[ch * s..(ch + 1) * s];
            for (sq, v) in plane.iter_mut().enumerate() {
                v.write(img_in[sq * c + ch]);
            }
        }
    }
}

/// Weight `[O, C, 3, 3]` -> matrix `[9 * C, O]`, row `tap * C + c`.
pub(crate) fn weight_matrix(w: &[f32], o: usize, c: usize) -> Vec<f32> {
    assert_eq!(w.len(), o * c * 9);
    let mut m = vec![0.0; 9 * c * o];
    // Sequential writes; each output row gathers one (tap, c) column of the weight.
    for (row, dst) in m.chunks_exact_mut(o).enumerate() {
        let (tap, cc) = (row / c, row % c);
        let src = &w[cc * 9 + tap..];
        for (oo, d) in dst.iter_mut().enumerate() {
            *d = src[oo * c * 9];
        }
    }
    m
}

/// Row-major contents of an f32 flex tensor (copied to contiguous if needed).
pub(crate) fn f32_data(t: &FlexTensor) -> std::borrow::Cow<'_, [f32]> {
    match t.as_slice::<f32>() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(t.to_contiguous().as_slice::<f32>().expect("contiguous").to_vec()),
    }
}

pub(crate) fn flex_f32(values: Vec<f32>, shape: Vec<usize>) -> FlexTensor {
    FlexTensor::new(Bytes::from_elems(values), Layout::contiguous(Shape::from(shape)), DType::F32)
}

/// Forward kernel: `x` (`b` images of `c` channels in layout `from`), weight matrix
/// `[9c, o]` -> `b` images of `o` channels in layout `to`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn conv3x3_kernel(x: &[f32], wm: &[f32], b: usize, c: usize, o: usize, h: usize, w: usize, from: ImageLayout, to: ImageLayout) -> Vec<f32> {
    let s = h * w;
    let n = b * o * s;
    let g = group_size(b);
    let threads = rayon::current_num_threads().max(1);
    if b < 2 * threads {
        // Few images: the Winograd filter transform would not pay off and whole-image groups
        // would leave threads idle; im2col with the rows split across threads instead.
        let weights = ConvWeights { c_in: c, c_out: o, kernel: 3, weight: wm, bias: None };
        let mut buf = Vec::new();
        let rows_in = rows_of(x, c, s, from, &mut buf);
        let mut rows_out = vec![0.0; b * s * o];
        conv_all(weights, rows_in, h, w, &mut rows_out, None, false, true);
        return match to {
            ImageLayout::Nhwc => rows_out,
            ImageLayout::Nchw => {
                let mut out = crate::kernels::output_buffer(n);
                from_rows(&rows_out, o, s, &mut out.spare_capacity_mut()[..n]);
                // SAFETY: from_rows asserts that it writes all of its n-element destination.
                unsafe { out.set_len(n) };
                out
            }
        };
    }
    // Written whole below, so not zero-filled first (a memset of every activation was 5%
    // of a training step).
    let mut out = crate::kernels::output_buffer(n);
    let conv = WinogradConv::new(c, o, wm, &vec![0.0; o]);
    // Each image is contiguous in both layouts, so groups of whole images split both.
    x.par_chunks(g * c * s).zip(out.spare_capacity_mut()[..n].par_chunks_mut(g * o * s)).for_each(|(xg, og)| {
        with_scratch(|ConvScratch { rows_in, rows_out, winograd }| {
            let n = xg.len() / (c * s);
            let input = rows_of(xg, c, s, from, rows_in);
            match to {
                ImageLayout::Nhwc => conv3x3_winograd_into(&conv, input, n, h, w, og, None, false, winograd),
                ImageLayout::Nchw => {
                    let rows_out = sized(rows_out, n * s * o);
                    conv3x3_winograd(&conv, input, n, h, w, rows_out, None, false, winograd);
                    from_rows(rows_out, o, s, og);
                }
            }
        })
    });
    // SAFETY: every element was written: the chunks of x (g images of c·s) and of the
    // output (g images of o·s) pair up one to one over the b images, and each output chunk
    // is written whole, by conv3x3_winograd_into (which writes all of its n·s·o outputs)
    // or by from_rows (which asserts that it writes its whole destination).
    unsafe { out.set_len(n) };
    out
}

/// One thread's buffers for these kernels.
#[derive(Default)]
struct ConvScratch {
    /// Input images converted to rows.
    rows_in: Vec<f32>,
    /// Output rows (or, for the weight gradient, the output gradient's rows).
    rows_out: Vec<f32>,
    winograd: WinogradScratch,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<ConvScratch> = std::cell::RefCell::default();
}

/// Runs `f` with this thread's [`ConvScratch`] (a fresh one if it is already borrowed).
/// Per-thread rather than per task: rayon calls a `for_each_init` initialiser once per
/// split, and fresh buffers are zero-filled and page-faulted each time.
fn with_scratch<R>(f: impl FnOnce(&mut ConvScratch) -> R) -> R {
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => f(&mut scratch),
        Err(_) => f(&mut ConvScratch::default()),
    })
}

/// Images `[n, ...]` of `c` channels and `s` squares as channels-last rows `[n * s, c]`:
/// the slice itself when it is already channels-last, else converted into `buf`.
fn rows_of<'a>(x: &'a [f32], c: usize, s: usize, layout: ImageLayout, buf: &'a mut Vec<f32>) -> &'a [f32] {
    match layout {
        ImageLayout::Nhwc => x,
        ImageLayout::Nchw => {
            let rows = sized(buf, x.len());
            to_rows(x, c, s, rows);
            rows
        }
    }
}

/// Weight-gradient kernel: `x` (`b` images of `c` channels, layout `from`), `dy` (`o`
/// channels, layout `to`) -> `dW` matrix `[9c, o]`, accumulated per thread in the Winograd
/// domain over image groups ([`accumulate_weight_grad_winograd`]), then mapped back once.
#[allow(clippy::too_many_arguments)]
fn weight_grad_kernel(x: &[f32], dy: &[f32], b: usize, c: usize, o: usize, h: usize, w: usize, from: ImageLayout, to: ImageLayout) -> Vec<f32> {
    let s = h * w;
    let g = group_size(b);
    let acc_len = 16 * c * o;
    let d_u = x
        .par_chunks(g * c * s)
        .zip(dy.par_chunks(g * o * s))
        .fold(
            || vec![0.0f32; acc_len],
            |mut acc, (xg, dg)| {
                let n = xg.len() / (c * s);
                with_scratch(|ConvScratch { rows_in, rows_out, winograd }| {
                    let x_rows = rows_of(xg, c, s, from, rows_in);
                    let dy_rows = rows_of(dg, o, s, to, rows_out);
                    accumulate_weight_grad_winograd(x_rows, dy_rows, n, h, w, c, o, &mut acc, winograd);
                });
                acc
            },
        )
        .reduce(
            || vec![0.0f32; acc_len],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );
    weight_grad_from_winograd(&d_u, c, o)
}

impl Conv3x3Ops for Flex {
    fn conv3x3(x: FlexTensor, weight: FlexTensor, from: ImageLayout, to: ImageLayout) -> FlexTensor {
        if x.dtype() != DType::F32 || weight.dtype() != DType::F32 {
            // Not a training dtype of this crate; burn's conv2d, between permutations.
            let x = if from == ImageLayout::Nhwc { x.permute(&[0, 3, 1, 2]) } else { x };
            let y = <Flex as ModuleOps<Flex>>::conv2d(x, weight, None, same_padding());
            return if to == ImageLayout::Nhwc { y.permute(&[0, 2, 3, 1]) } else { y };
        }
        let [b, c, h, w] = from.bchw(dims4(&x));
        let [o, c2, kh, kw] = dims4(&weight);
        assert!(c == c2 && kh == 3 && kw == 3, "conv3x3: weight must be [O, C, 3, 3]");
        let wm = weight_matrix(&f32_data(&weight), o, c);
        let out = conv3x3_kernel(&f32_data(&x), &wm, b, c, o, h, w, from, to);
        flex_f32(out, to.shape([b, o, h, w]))
    }

    fn conv3x3_weight_grad(x: FlexTensor, grad_out: FlexTensor, from: ImageLayout, to: ImageLayout) -> FlexTensor {
        let [b, c, h, w] = from.bchw(dims4(&x));
        let [b2, o, h2, w2] = to.bchw(dims4(&grad_out));
        assert!(b == b2 && h == h2 && w == w2, "conv3x3_weight_grad: shape mismatch");
        if x.dtype() != DType::F32 || grad_out.dtype() != DType::F32 {
            let x = if from == ImageLayout::Nhwc { x.permute(&[0, 3, 1, 2]) } else { x };
            let grad_out = if to == ImageLayout::Nhwc { grad_out.permute(&[0, 3, 1, 2]) } else { grad_out };
            let weight = FlexTensor::zeros(Shape::from(vec![o, c, 3, 3]), x.dtype());
            return <Flex as ModuleOps<Flex>>::conv2d_weight_backward(x, weight, grad_out, same_padding());
        }
        let dwm = weight_grad_kernel(&f32_data(&x), &f32_data(&grad_out), b, c, o, h, w, from, to);
        // [9C, O] (row tap * C + c) -> [O, C, 3, 3], written sequentially.
        let mut dw = vec![0.0; o * c * 9];
        for (i, d) in dw.iter_mut().enumerate() {
            let (oo, cc, tap) = (i / (9 * c), (i / 9) % c, i % 9);
            *d = dwm[(tap * c + cc) * o + oo];
        }
        flex_f32(dw, vec![o, c, 3, 3])
    }
}

fn dims4(t: &FlexTensor) -> [usize; 4] {
    let shape = t.layout().shape();
    assert_eq!(shape.num_dims(), 4, "conv3x3: rank-4 tensors expected");
    [shape[0], shape[1], shape[2], shape[3]]
}

impl<B: Backend + Conv3x3Ops, C: CheckpointStrategy> Conv3x3Ops for Autodiff<B, C> {
    fn conv3x3(x: FloatTensor<Self>, weight: FloatTensor<Self>, from: ImageLayout, to: ImageLayout) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct Conv3x3Backward;

        impl<B: Backend + Conv3x3Ops> Backward<B, 2> for Conv3x3Backward {
            type State = (NodeId, NodeId, ImageLayout, ImageLayout);

            fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let [node_x, node_w] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let (x_state, w_state, from, to) = ops.state;
                let x = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(x_state);
                let w = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(w_state);
                if let Some(node) = node_x {
                    // dx = conv3x3(dy, rotate180(W) with C and O swapped), from the output's
                    // layout back to the input's.
                    let w_t = B::float_swap_dims(B::float_flip(w, &[2, 3]), 0, 1);
                    grads.register::<B>(node.id, B::conv3x3(grad.clone(), w_t, to, from));
                }
                if let Some(node) = node_w {
                    grads.register::<B>(node.id, B::conv3x3_weight_grad(x, grad, from, to));
                }
            }
        }

        match Conv3x3Backward.prepare::<C>([x.node(), weight.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let x_state = prep.checkpoint(&x);
                let w_state = prep.checkpoint(&weight);
                prep.finish((x_state, w_state, from, to), B::conv3x3(x.into_primitive(), weight.into_primitive(), from, to))
            }
            OpsKind::UnTracked(prep) => prep.finish(B::conv3x3(x.into_primitive(), weight.into_primitive(), from, to)),
        }
    }

    fn conv3x3_weight_grad(x: FloatTensor<Self>, grad_out: FloatTensor<Self>, from: ImageLayout, to: ImageLayout) -> FloatTensor<Self> {
        // Not differentiable: the result is a graph leaf.
        leaf::<B, C>(B::conv3x3_weight_grad(x.into_primitive(), grad_out.into_primitive(), from, to))
    }
}

/// A tensor computed by one of this crate's autodiff ops that no gradient flows through
/// (weight gradients, batch statistics, saved log-sum-exps): a graph leaf, no parents,
/// nothing tracked.
pub(crate) fn leaf<B: Backend, C: CheckpointStrategy>(t: B::FloatTensorPrimitive) -> FloatTensor<Autodiff<B, C>> {
    #[derive(Debug)]
    struct Leaf;

    impl<B: Backend> Backward<B, 0> for Leaf {
        type State = ();

        fn backward(self, _: Ops<(), 0>, _: &mut Gradients, _: &mut Checkpointer) {}
    }

    Leaf.prepare::<C>([]).compute_bound().stateless(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{cpu_device, cpu_train_device};
    use crate::tensor_util::to_vec;
    use crate::testutil::max_abs_diff;
    use burn::tensor::Distribution;

    fn random<const D: usize>(shape: [usize; D], device: &Device) -> Tensor<D> {
        Tensor::random(shape, Distribution::Normal(0.0, 1.0), device)
    }

    fn reference(x: Tensor<4>, w: Tensor<4>) -> Tensor<4> {
        burn::tensor::module::conv2d(x, w, None, same_padding())
    }

    #[test]
    fn forward_matches_burn_conv2d() {
        let d = cpu_device();
        // 1 image: row-split im2col path.
        let x1 = random([1, 5, 4, 6], &d);
        let w1 = random([3, 5, 3, 3], &d);
        let diff = max_abs_diff(&to_vec(conv3x3(x1.clone(), w1.clone())), &to_vec(reference(x1, w1)));
        assert!(diff < 1e-4, "{diff}");
        // More images than twice the threads: Winograd on uneven groups; non-square board.
        let b = batches_for_both_paths()[1];
        let x = random([b, 5, 4, 6], &d);
        let w = random([3, 5, 3, 3], &d);
        let diff = max_abs_diff(&to_vec(conv3x3(x.clone(), w.clone())), &to_vec(reference(x.clone(), w.clone())));
        assert!(diff < 1e-4, "{diff}");
        // Non-contiguous input (a permuted view).
        let xt = random([b, 4, 5, 6], &d).swap_dims(1, 2);
        let diff = max_abs_diff(&to_vec(conv3x3(xt.clone(), w.clone())), &to_vec(reference(xt, w)));
        assert!(diff < 1e-4, "{diff}");
    }

    /// `x` in `layout` (from an NCHW tensor).
    fn laid_out(x: Tensor<4>, layout: ImageLayout) -> Tensor<4> {
        match layout {
            ImageLayout::Nchw => x,
            ImageLayout::Nhwc => x.permute([0, 2, 3, 1]),
        }
    }

    /// Batch sizes that take each path of the forward kernel whatever the thread count:
    /// one image (im2col, rows split across threads) and more than twice the threads
    /// (Winograd on image groups, the last one short).
    fn batches_for_both_paths() -> [usize; 2] {
        [1, 2 * rayon::current_num_threads() + 3]
    }

    #[test]
    fn every_pair_of_layouts_computes_burns_convolution() {
        use ImageLayout::{Nchw, Nhwc};
        let d = cpu_device();
        // A non-square board.
        for b in batches_for_both_paths() {
            let x = random([b, 5, 4, 6], &d);
            let w = random([3, 5, 3, 3], &d);
            let want = reference(x.clone(), w.clone());
            for (from, to) in [(Nchw, Nhwc), (Nhwc, Nhwc), (Nhwc, Nchw)] {
                // A contiguous copy, so the channels-last input is read as channels-last
                // memory, not as a permuted view of NCHW memory.
                let input = Tensor::<4>::from_data(laid_out(x.clone(), from).into_data(), &d);
                let got = conv3x3_layout(input, w.clone(), from, to);
                let diff = max_abs_diff(&to_vec(got), &to_vec(laid_out(want.clone(), to)));
                assert!(diff < 1e-4, "b {b}, {from:?} -> {to:?}: {diff}");
            }
        }
    }

    #[test]
    fn channels_last_gradients_match_burn_conv2d() {
        let d = cpu_train_device();
        for b in batches_for_both_paths() {
            let x = random([b, 4, 3, 5], &d).require_grad();
            let w = random([6, 4, 3, 3], &d).require_grad();
            let r = random([b, 6, 3, 5], &d);

            // x -> channels-last -> conv -> channels-last output, weighted by r (made
            // channels-last).
            let x_nhwc = x.clone().permute([0, 2, 3, 1]);
            let y = conv3x3_layout(x_nhwc, w.clone(), ImageLayout::Nhwc, ImageLayout::Nhwc);
            let g_fast = (y * r.clone().permute([0, 2, 3, 1])).sum().backward();
            let g_ref = (reference(x.clone(), w.clone()) * r).sum().backward();

            let dx = max_abs_diff(&to_vec(x.grad(&g_fast).unwrap()), &to_vec(x.grad(&g_ref).unwrap()));
            let dw = max_abs_diff(&to_vec(w.grad(&g_fast).unwrap()), &to_vec(w.grad(&g_ref).unwrap()));
            assert!(dx < 1e-3 && dw < 1e-3, "batch {b}: dx {dx}, dw {dw}");
        }
    }

    #[test]
    fn gradients_match_burn_conv2d() {
        let d = cpu_train_device();
        let b = batches_for_both_paths()[1];
        let x = random([b, 4, 3, 5], &d).require_grad();
        let w = random([6, 4, 3, 3], &d).require_grad();
        let r = random([b, 6, 3, 5], &d);

        let g_fast = (conv3x3(x.clone(), w.clone()) * r.clone()).sum().backward();
        let g_ref = (reference(x.clone(), w.clone()) * r).sum().backward();

        let dx = max_abs_diff(&to_vec(x.grad(&g_fast).unwrap()), &to_vec(x.grad(&g_ref).unwrap()));
        let dw = max_abs_diff(&to_vec(w.grad(&g_fast).unwrap()), &to_vec(w.grad(&g_ref).unwrap()));
        assert!(dx < 1e-3 && dw < 1e-3, "dx {dx}, dw {dw}");
    }
}
