//! Channels-last forward pass of [`Net`] built from burn tensor ops (im2col + one large
//! matrix product per convolution), the same function as [`Net::forward`] with the same
//! parameters.
//!
//! Why: burn-flex's conv2d (and its backward) does one small matrix product per image
//! (`[C_out, 9*C_in] x [9*C_in, H*W]`, `H*W = 81`) and converts layouts on every call. On a
//! 9x9 board that wastes most of the matrix kernel's speed. Here activations are kept as
//! `[batch * H * W, C]` ("NHWC" rows), a 3x3 convolution gathers the nine shifted views
//! into `[batch * H * W, 9 * C]` and multiplies once by `[9 * C, C_out]`; autodiff then
//! differentiates plain matmul/slice/concat ops whose backward passes are large matrix
//! products too. Batch norm runs on the `[rows, C]` matrix (channels at dim 1, as burn's
//! `BatchNorm` expects).

use burn::tensor::activation::relu;
use burn::tensor::ops::PadMode;
use burn::tensor::Tensor;

use crate::net::{ConvBn, Net, NetOutput};

/// Conv weight `[C_out, C_in, k, k]` as the matrix `[k * k * C_in, C_out]`
/// (row `(ky * k + kx) * C_in + ci`).
fn weight_matrix(weight: Tensor<4>) -> Tensor<2> {
    let [c_out, c_in, kh, kw] = weight.dims();
    weight
        .permute([2, 3, 1, 0])
        .reshape([kh * kw * c_in, c_out])
}

/// `rows = [B * H * W, C_in]` convolved by `cb.conv` (3x3, padding 1, or 1x1), then BN:
/// `[B * H * W, C_out]`.
fn conv_bn_rows(cb: &ConvBn, rows: Tensor<2>, batch: usize, h: usize, w: usize) -> Tensor<2> {
    let [_, c_in, k, _] = cb.conv.weight.dims();
    let wm = weight_matrix(cb.conv.weight.val());
    let out = if k == 1 {
        rows.matmul(wm)
    } else {
        let x = rows.reshape([batch, h, w, c_in]);
        let xp = x.pad([(1, 1), (1, 1), (0, 0)], PadMode::Constant(0.0));
        let mut taps = Vec::with_capacity(9);
        for dy in 0..3 {
            for dx in 0..3 {
                taps.push(xp.clone().slice([0..batch, dy..dy + h, dx..dx + w, 0..c_in]));
            }
        }
        Tensor::cat(taps, 3)
            .reshape([batch * h * w, 9 * c_in])
            .matmul(wm)
    };
    cb.bn.forward(out)
}

impl Net {
    /// Same result as [`Net::forward`], computed channels-last with im2col matrix
    /// products (see the module docs). Input `[B, input_planes, H, W]`.
    pub fn forward_nhwc(&self, input: Tensor<4>) -> NetOutput {
        let cfg = self.config();
        let [batch, planes, h, w] = input.dims();
        let squares = h * w;
        let rows = input.permute([0, 2, 3, 1]).reshape([batch * squares, planes]);

        let mut x = relu(conv_bn_rows(&self.stem, rows, batch, h, w));
        for block in &self.blocks {
            let y = relu(conv_bn_rows(&block.a, x.clone(), batch, h, w));
            x = relu(conv_bn_rows(&block.b, y, batch, h, w) + x);
        }

        // Policy: [B*S, Cp] -> 1x1 conv with bias -> [B, S, P] -> [B, P, S] -> [B, P*S].
        let p = relu(conv_bn_rows(&self.policy.conv, x.clone(), batch, h, w));
        let out = &self.policy.out;
        let mut p = p.matmul(weight_matrix(out.weight.val()));
        if let Some(bias) = &out.bias {
            p = p + bias.val().unsqueeze::<2>();
        }
        let policy = p
            .reshape([batch, squares, cfg.policy_planes])
            .swap_dims(1, 2)
            .reshape([batch, cfg.policy_len()]);

        // Value: [B*S, Cv] -> [B, Cv, S] flattened channels-first, as Net::forward.
        let v = relu(conv_bn_rows(&self.value.conv, x, batch, h, w));
        let v = v
            .reshape([batch, squares, cfg.value_head_channels])
            .swap_dims(1, 2)
            .reshape([batch, cfg.value_head_channels * squares]);
        let v = relu(self.value.fc1.forward(v));
        let value = self.value.fc2.forward(v);
        NetOutput { policy, value }
    }
}

#[cfg(test)]
mod tests {
    use burn::module::Module;

    use crate::device::{cpu_device, cpu_train_device};
    use crate::net::Net;
    use crate::tensor_util::{input_tensor, to_vec};
    use crate::testutil::{max_abs_diff, tiny_config, trained_tiny_net, OwnedBatch};

    #[test]
    fn channels_last_forward_matches_conv_forward() {
        let cfg = tiny_config();
        let data = OwnedBatch::random(&cfg, 4, 3);
        // Eval mode, trained BN statistics.
        let d = cpu_device();
        let net = trained_tiny_net(3).valid();
        let a = net.forward(input_tensor(&cfg, &data.input, 4, &d));
        let b = net.forward_nhwc(input_tensor(&cfg, &data.input, 4, &d));
        assert!(max_abs_diff(&to_vec(a.policy), &to_vec(b.policy)) < 1e-4);
        assert!(max_abs_diff(&to_vec(a.value), &to_vec(b.value)) < 1e-4);
        // Training mode (batch statistics) on the autodiff device.
        let td = cpu_train_device();
        let net = Net::new(&cfg, &td).unwrap();
        let a = net.forward(input_tensor(&cfg, &data.input, 4, &td));
        let b = net.forward_nhwc(input_tensor(&cfg, &data.input, 4, &td));
        assert!(max_abs_diff(&to_vec(a.policy), &to_vec(b.policy)) < 1e-4);
        assert!(max_abs_diff(&to_vec(a.value), &to_vec(b.value)) < 1e-4);
    }
}
