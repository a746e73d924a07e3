//! A faster 3x3 convolution for burn-flex, forward and backward, as a burn backend
//! extension (`#[backend_extension]`, burn's `extension` feature).
//!
//! burn-flex's own conv2d runs one small matrix product per image and its backward uses a
//! transposed convolution plus layout copies; on a 9x9 board most of the matrix kernel's
//! speed is lost. This op computes the same function (3x3 kernel, stride 1, zero padding 1,
//! no bias, NCHW tensors) by converting groups of images to channels-last rows:
//!
//! - forward: `y = conv3x3(x, W)` with Winograd F(2x2, 3x3) ([`crate::winograd`]) on
//!   whole-image groups; batches smaller than twice the thread count use im2col with the
//!   rows split across threads;
//! - input gradient: `dx = conv3x3(dy, W')` with `W'[c, o, ky, kx] = W[o, c, 2-ky, 2-kx]`
//!   (a stride-1 "same" 3x3 convolution's transpose is the convolution with the kernel
//!   rotated by 180 degrees and the channel axes swapped);
//! - weight gradient: `dW = im2col(x)^T @ dy` ([`crate::kernels`] im2col tiles), accumulated
//!   per thread over image groups.
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

use crate::kernels::{conv_all, im2col3x3, sized, with_cols, ConvWeights};
use crate::winograd::{conv3x3_winograd, WinogradConv, WinogradScratch};

/// 3x3 "same" convolution without bias, with its own backward pass on burn-flex.
#[backend_extension(Flex, Autodiff)]
pub trait Conv3x3Ops: Backend {
    /// `x [B, C, H, W]`, `weight [O, C, 3, 3]` -> `[B, O, H, W]`; stride 1, zero padding 1.
    fn conv3x3(x: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self>;

    /// Gradient of [`conv3x3`](Self::conv3x3) with respect to the weight:
    /// `x [B, C, H, W]`, `grad_out [B, O, H, W]` -> `[O, C, 3, 3]`. Not differentiable.
    fn conv3x3_weight_grad(x: FloatTensor<Self>, grad_out: FloatTensor<Self>) -> FloatTensor<Self>;
}

/// `conv3x3(x, weight)` on tensors: the extension on burn-flex devices, burn's conv2d with
/// padding 1 elsewhere. `x [B, C, H, W]`, `weight [O, C, 3, 3]` -> `[B, O, H, W]`.
pub fn conv3x3(x: Tensor<4>, weight: Tensor<4>) -> Tensor<4> {
    if is_flex(&x.device()) {
        Tensor::from_dispatch(<Dispatch as Conv3x3Ops>::conv3x3(x.into_dispatch(), weight.into_dispatch()))
    } else {
        burn::tensor::module::conv2d(x, weight, None, same_padding())
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
fn weight_matrix(w: &[f32], o: usize, c: usize) -> Vec<f32> {
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

/// Forward kernel on NCHW buffers: `x [b, c, h*w]`, weight matrix `[9c, o]`.
fn conv3x3_nchw(x: &[f32], wm: &[f32], b: usize, c: usize, o: usize, h: usize, w: usize) -> Vec<f32> {
    let s = h * w;
    let n = b * o * s;
    // Written whole by from_rows below, so not zero-filled first (a memset of every
    // activation was 5% of a training step).
    let mut out: Vec<f32> = Vec::with_capacity(n);
    let g = group_size(b);
    let threads = rayon::current_num_threads().max(1);
    if b < 2 * threads {
        // Few images: the Winograd filter transform would not pay off and whole-image groups
        // would leave threads idle; im2col with the rows split across threads instead.
        let weights = ConvWeights { c_in: c, c_out: o, kernel: 3, weight: wm, bias: None };
        let mut rows_in = vec![0.0; b * s * c];
        to_rows(x, c, s, &mut rows_in);
        let mut rows_out = vec![0.0; b * s * o];
        conv_all(weights, &rows_in, h, w, &mut rows_out, None, false, true);
        from_rows(&rows_out, o, s, &mut out.spare_capacity_mut()[..n]);
    } else {
        let conv = WinogradConv::new(c, o, wm, &vec![0.0; o]);
        x.par_chunks(g * c * s).zip(out.spare_capacity_mut()[..n].par_chunks_mut(g * o * s)).for_each_init(
            || (Vec::new(), Vec::new(), WinogradScratch::default()),
            |(rows_in, rows_out, scratch), (xg, og)| {
                let n = xg.len() / (c * s);
                let rows_in = sized(rows_in, n * s * c);
                to_rows(xg, c, s, rows_in);
                let rows_out = sized(rows_out, n * s * o);
                conv3x3_winograd(&conv, rows_in, n, h, w, rows_out, None, false, scratch);
                from_rows(rows_out, o, s, og);
            },
        );
    }
    // SAFETY: from_rows wrote all n elements: the chunks of x (g images of c·s) and of the
    // output (g images of o·s) pair up one to one over the b images, and from_rows asserts
    // that it writes the whole of each output chunk.
    unsafe { out.set_len(n) };
    out
}

/// Rows per im2col tile of the weight gradient: a whole group of 4 images of 9x9 (324) in
/// one product, so no short remainder tile, and the `[9C, O]` accumulator is read and
/// written once per group.
const WGRAD_TILE_ROWS: usize = 4 * 81;

/// Weight-gradient kernel: `x [b, c, s]`, `dy [b, o, s]` -> `dW` matrix `[9c, o]`.
fn weight_grad_nchw(x: &[f32], dy: &[f32], b: usize, c: usize, o: usize, h: usize, w: usize) -> Vec<f32> {
    let s = h * w;
    let g = group_size(b);
    let k = 9 * c;
    x.par_chunks(g * c * s)
        .zip(dy.par_chunks(g * o * s))
        .fold(
            || (vec![0.0f32; k * o], Vec::new(), Vec::new()),
            |(mut acc, mut xr, mut dr), (xg, dg)| {
                let n = xg.len() / (c * s);
                let rows = n * s;
                to_rows(xg, c, s, sized(&mut xr, rows * c));
                to_rows(dg, o, s, sized(&mut dr, rows * o));
                with_cols(|cols| {
                    let mut done = 0;
                    while done < rows {
                        let t = WGRAD_TILE_ROWS.min(rows - done);
                        let tile = sized(cols, t * k);
                        im2col3x3(&xr[..rows * c], c, h, w, done, t, tile);
                        // acc[k, o] += tile^T [k, t] @ dy_rows[t, o]
                        matmul_acc_lhs_t(k, o, t, &mut acc, tile, &dr[done * o..(done + t) * o]);
                        done += t;
                    }
                });
                (acc, xr, dr)
            },
        )
        .map(|(acc, _, _)| acc)
        .reduce(
            || vec![0.0f32; k * o],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        )
}

/// `dst[m, n] += lhs^T * rhs` with `lhs` stored `[k, m]` row-major and `rhs` `[k, n]`.
fn matmul_acc_lhs_t(m: usize, n: usize, k: usize, dst: &mut [f32], lhs_t: &[f32], rhs: &[f32]) {
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    assert!(dst.len() >= m * n && lhs_t.len() >= k * m && rhs.len() >= k * n);
    // SAFETY: extents asserted above; dst is distinct from lhs and rhs.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            true,
            lhs_t.as_ptr(),
            m as isize,
            1,
            rhs.as_ptr(),
            1,
            n as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

impl Conv3x3Ops for Flex {
    fn conv3x3(x: FlexTensor, weight: FlexTensor) -> FlexTensor {
        if x.dtype() != DType::F32 || weight.dtype() != DType::F32 {
            return <Flex as ModuleOps<Flex>>::conv2d(x, weight, None, same_padding());
        }
        let [b, c, h, w] = dims4(&x);
        let [o, c2, kh, kw] = dims4(&weight);
        assert!(c == c2 && kh == 3 && kw == 3, "conv3x3: weight must be [O, C, 3, 3]");
        let wm = weight_matrix(&f32_data(&weight), o, c);
        let out = conv3x3_nchw(&f32_data(&x), &wm, b, c, o, h, w);
        flex_f32(out, vec![b, o, h, w])
    }

    fn conv3x3_weight_grad(x: FlexTensor, grad_out: FlexTensor) -> FlexTensor {
        let [b, c, h, w] = dims4(&x);
        let [b2, o, h2, w2] = dims4(&grad_out);
        assert!(b == b2 && h == h2 && w == w2, "conv3x3_weight_grad: shape mismatch");
        if x.dtype() != DType::F32 || grad_out.dtype() != DType::F32 {
            let weight = FlexTensor::zeros(Shape::from(vec![o, c, 3, 3]), x.dtype());
            return <Flex as ModuleOps<Flex>>::conv2d_weight_backward(x, weight, grad_out, same_padding());
        }
        let dwm = weight_grad_nchw(&f32_data(&x), &f32_data(&grad_out), b, c, o, h, w);
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
    fn conv3x3(x: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct Conv3x3Backward;

        impl<B: Backend + Conv3x3Ops> Backward<B, 2> for Conv3x3Backward {
            type State = (NodeId, NodeId);

            fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, checkpointer: &mut Checkpointer) {
                let [node_x, node_w] = ops.parents;
                let grad = grads.consume::<B>(&ops.node);
                let (x_state, w_state) = ops.state;
                let x = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(x_state);
                let w = checkpointer.retrieve_node_output::<B::FloatTensorPrimitive>(w_state);
                if let Some(node) = node_x {
                    // dx = conv3x3(dy, rotate180(W) with C and O swapped)
                    let w_t = B::float_swap_dims(B::float_flip(w, &[2, 3]), 0, 1);
                    grads.register::<B>(node.id, B::conv3x3(grad.clone(), w_t));
                }
                if let Some(node) = node_w {
                    grads.register::<B>(node.id, B::conv3x3_weight_grad(x, grad));
                }
            }
        }

        match Conv3x3Backward.prepare::<C>([x.node(), weight.node()]).compute_bound().stateful() {
            OpsKind::Tracked(mut prep) => {
                let x_state = prep.checkpoint(&x);
                let w_state = prep.checkpoint(&weight);
                prep.finish((x_state, w_state), B::conv3x3(x.into_primitive(), weight.into_primitive()))
            }
            OpsKind::UnTracked(prep) => prep.finish(B::conv3x3(x.into_primitive(), weight.into_primitive())),
        }
    }

    fn conv3x3_weight_grad(x: FloatTensor<Self>, grad_out: FloatTensor<Self>) -> FloatTensor<Self> {
        // Not differentiable: the result is a graph leaf.
        leaf::<B, C>(B::conv3x3_weight_grad(x.into_primitive(), grad_out.into_primitive()))
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
        // 7 images: Winograd on uneven groups; non-square board.
        let x = random([7, 5, 4, 6], &d);
        let w = random([3, 5, 3, 3], &d);
        let diff = max_abs_diff(&to_vec(conv3x3(x.clone(), w.clone())), &to_vec(reference(x.clone(), w.clone())));
        assert!(diff < 1e-4, "{diff}");
        // Non-contiguous input (a permuted view).
        let xt = random([7, 4, 5, 6], &d).swap_dims(1, 2);
        let diff = max_abs_diff(&to_vec(conv3x3(xt.clone(), w.clone())), &to_vec(reference(xt, w)));
        assert!(diff < 1e-4, "{diff}");
    }

    #[test]
    fn gradients_match_burn_conv2d() {
        let d = cpu_train_device();
        let x = random([5, 4, 3, 5], &d).require_grad();
        let w = random([6, 4, 3, 3], &d).require_grad();
        let r = random([5, 6, 3, 5], &d);

        let g_fast = (conv3x3(x.clone(), w.clone()) * r.clone()).sum().backward();
        let g_ref = (reference(x.clone(), w.clone()) * r).sum().backward();

        let dx = max_abs_diff(&to_vec(x.grad(&g_fast).unwrap()), &to_vec(x.grad(&g_ref).unwrap()));
        let dw = max_abs_diff(&to_vec(w.grad(&g_fast).unwrap()), &to_vec(w.grad(&g_ref).unwrap()));
        assert!(dx < 1e-3 && dw < 1e-3, "dx {dx}, dw {dw}");
    }
}
