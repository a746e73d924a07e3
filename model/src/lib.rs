//! Neural network for the shogi self-play pipeline (burn 0.22).
//!
//! Independent of the game encoding: the rules engine supplies the number of input planes,
//! move planes and the board size through [`NetConfig`].
//!
//! - [`Net`]: the trainable burn module (residual tower, convolutional policy head, WDL
//!   value head); runs on any burn device ([`cpu_device`], [`cpu_train_device`], GPU with
//!   the `gpu` feature).
//! - [`save_model`] / [`load_model`]: `model.json` (config) + burnpack weights, atomic;
//!   [`average_models`]: the mean of several saved models.
//! - [`InferenceNet`]: eval-only CPU copy with batch norm folded into the convolutions.
//! - [`TrainStep`]: one AdamW step on a batch, for benchmarks and tests.

pub mod allocator;
mod average;
mod bn_rows;
pub mod config;
pub mod device;
pub mod device_net;
pub mod fastbn;
pub mod fastconv;
pub mod fastloss;
pub mod fold;
mod grow;
pub mod infer;
mod kernels;
pub mod net;
pub mod quant;
mod simd;
pub mod store;
pub mod tensor_util;
pub mod train;
pub mod wdl;
mod winograd;

pub use average::average_models;
pub use config::{ConfigError, NetConfig};
pub use device::{cpu_device, cpu_threads, cpu_train_device, init_cpu_threads, CpuBackend, CpuTrainBackend, Device, DeviceError, DeviceSpec};
#[cfg(feature = "gpu")]
pub use device::{gpu_device, gpu_train_device, GpuBackend};
pub use device_net::{DeviceNet, DeviceNetError};
pub use fold::FoldedNet;
pub use grow::grow_model;
pub use infer::{InferenceNet, InferenceOutput, Precision};
pub use net::{Net, NetOutput};
pub use quant::{Calibration, QuantError, QuantKernel};
pub use store::{load_inference, load_model, read_manifest, save_model, save_model_tagged, GameTag, ModelIoError};
pub use train::{LossStats, TrainBatch, TrainConfig, TrainStep};
pub use wdl::Wdl;
#[cfg(test)]
mod kernel_tests;
#[cfg(test)]
mod testutil;
