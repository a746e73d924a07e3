//! Conversions between flat `f32` buffers and burn tensors.

use burn::tensor::{Device, Tensor, TensorData};

use crate::config::NetConfig;

/// Builds the input tensor `[batch, input_planes, H, W]` from a flat row-major buffer.
///
/// # Panics
/// If `input.len() != batch * config.input_len()`.
pub fn input_tensor(config: &NetConfig, input: &[f32], batch: usize, device: &Device) -> Tensor<4> {
    assert_eq!(input.len(), batch * config.input_len(), "input buffer must be [batch, input_planes, H, W]");
    let data = TensorData::new(input.to_vec(), [batch, config.input_planes, config.board_height, config.board_width]);
    Tensor::from_data(data, device)
}

/// Builds a `[rows, cols]` tensor from a flat row-major buffer.
///
/// # Panics
/// If `values.len() != rows * cols`.
pub fn matrix(values: &[f32], rows: usize, cols: usize, device: &Device) -> Tensor<2> {
    assert_eq!(values.len(), rows * cols, "buffer must be [rows, cols]");
    Tensor::from_data(TensorData::new(values.to_vec(), [rows, cols]), device)
}

/// Reads any float tensor back as a flat row-major `Vec<f32>`.
pub fn to_vec<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    tensor.into_data().convert::<f32>().try_into_vec::<f32>().expect("float tensor converts to f32")
}
