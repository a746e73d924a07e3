//! Backend selection.
//!
//! burn 0.22 has no backend type parameter on modules or tensors: a tensor's
//! [`Device`] says which backend runs it, and autodiff is a property of the device
//! (`device.autodiff()`). So instead of `type CpuBackend = ...` aliases this module
//! gives device constructors:
//!
//! | what                  | function              | burn device                    |
//! |-----------------------|-----------------------|--------------------------------|
//! | CPU inference         | [`cpu_device`]        | `Device::flex()`               |
//! | CPU training          | [`cpu_train_device`]  | `Device::flex().autodiff()`    |
//! | GPU inference (`gpu`) | `gpu_device`          | `Device::wgpu(DefaultDevice)`  |
//! | GPU training (`gpu`)  | `gpu_train_device`    | `gpu_device().autodiff()`      |
//!
//! Flex is burn's pure-Rust CPU backend (features `flex`, `rayon`, `simd`). It runs
//! its parallel work on rayon's global pool; [`init_cpu_threads`] sizes that pool.

pub use burn::tensor::Device;

/// The CPU backend type (burn-flex). Model code does not need it — modules and tensors
/// carry no backend parameter in burn 0.22 — only backend-level code such as extensions.
pub type CpuBackend = burn::backend::Flex;
/// The CPU training backend type, `Autodiff<CpuBackend>` (what [`cpu_train_device`] runs).
pub type CpuTrainBackend = burn::backend::Autodiff<CpuBackend>;
/// The GPU backend type (wgpu through cubecl), with the `gpu` feature.
#[cfg(feature = "gpu")]
pub type GpuBackend = burn::backend::Wgpu;

/// Device for CPU inference (burn-flex, no autodiff: batch norm uses running statistics).
pub fn cpu_device() -> Device {
    Device::flex()
}

/// Device for CPU training (burn-flex wrapped in autodiff: batch norm uses batch statistics
/// and updates its running statistics).
pub fn cpu_train_device() -> Device {
    Device::flex().autodiff()
}

/// Device for GPU inference (wgpu: Vulkan/Metal/DX12, picked at runtime).
#[cfg(feature = "gpu")]
pub fn gpu_device() -> Device {
    Device::wgpu(burn::tensor::DeviceKind::DefaultDevice)
}

/// Device for GPU training.
#[cfg(feature = "gpu")]
pub fn gpu_train_device() -> Device {
    gpu_device().autodiff()
}

/// Sizes rayon's global thread pool, which burn-flex (and the folded CPU inference path)
/// use for their parallel kernels. Must run before the first tensor operation; returns
/// `false` when the pool was already built (then its size is whatever it was).
///
/// Setting the environment variable `RAYON_NUM_THREADS` has the same effect.
pub fn init_cpu_threads(threads: usize) -> bool {
    let ok = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global().is_ok();
    if ok {
        tracing::debug!(threads, "rayon global pool sized");
    } else {
        tracing::warn!(threads, actual = rayon::current_num_threads(), "rayon global pool already built; thread count unchanged");
    }
    ok
}

/// Threads in rayon's global pool (what burn-flex uses).
pub fn cpu_threads() -> usize {
    rayon::current_num_threads()
}
