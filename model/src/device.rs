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
//! | Vulkan (`vulkan`)     | `DeviceSpec::Vulkan`  | `Device::vulkan(DefaultDevice)`|
//!
//! `vulkan` is wgpu pinned to Vulkan with cubecl's SPIR-V compiler (cooperative-matrix
//! products where the driver has them), where `wgpu` compiles WGSL for any adapter.
//! Both build without downloads; `cuda` does not (docs/PERFORMANCE.md, "On a GPU").
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

/// Which device trains (and, where it is not the CPU, evaluates) the network: the
/// `device` setting of a run config and the `--device` flag. `cpu` always works;
/// `vulkan` needs a build with the `vulkan` feature, `wgpu` one with the `gpu` feature,
/// `cuda[:N]` one with the `cuda` feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DeviceSpec {
    #[default]
    Cpu,
    /// CUDA device index N (`cuda` = `cuda:0`).
    Cuda(usize),
    /// The default wgpu adapter (Vulkan, Metal, DX12).
    Wgpu,
    /// The default Vulkan adapter through wgpu, SPIR-V kernels.
    Vulkan,
    /// CUDA device index N through LibTorch (`libtorch` = `libtorch:0`).
    LibTorch(usize),
    /// LibTorch's own CPU kernels (`libtorch-cpu`): the LibTorch build checked on a
    /// machine without a GPU before a GPU lease is spent on it.
    LibTorchCpu,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DeviceError {
    #[error("device '{0}': unknown (expected cpu, cuda, cuda:N, wgpu, vulkan, libtorch, libtorch:N or libtorch-cpu)")]
    Unknown(String),
    #[error("device '{spec}': this build has no {what} backend; rebuild with `--features {feature}` (e.g. cargo build --release -p cli --features {feature})")]
    NotBuilt { spec: String, what: &'static str, feature: &'static str },
    #[error("device '{spec}' is not available: {problem}")]
    Unavailable { spec: String, problem: String },
}

impl std::str::FromStr for DeviceSpec {
    type Err = DeviceError;
    fn from_str(s: &str) -> Result<DeviceSpec, DeviceError> {
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "cpu" => Ok(DeviceSpec::Cpu),
            "wgpu" => Ok(DeviceSpec::Wgpu),
            "vulkan" => Ok(DeviceSpec::Vulkan),
            "cuda" => Ok(DeviceSpec::Cuda(0)),
            "libtorch" => Ok(DeviceSpec::LibTorch(0)),
            "libtorch-cpu" => Ok(DeviceSpec::LibTorchCpu),
            _ => {
                let index = |prefix: &str| t.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok());
                if let Some(n) = index("cuda:") {
                    Ok(DeviceSpec::Cuda(n))
                } else if let Some(n) = index("libtorch:") {
                    Ok(DeviceSpec::LibTorch(n))
                } else {
                    Err(DeviceError::Unknown(s.to_string()))
                }
            }
        }
    }
}

impl std::fmt::Display for DeviceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSpec::Cpu => write!(f, "cpu"),
            DeviceSpec::Cuda(n) => write!(f, "cuda:{n}"),
            DeviceSpec::Wgpu => write!(f, "wgpu"),
            DeviceSpec::Vulkan => write!(f, "vulkan"),
            DeviceSpec::LibTorch(n) => write!(f, "libtorch:{n}"),
            DeviceSpec::LibTorchCpu => write!(f, "libtorch-cpu"),
        }
    }
}

impl serde::Serialize for DeviceSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> serde::Deserialize<'de> for DeviceSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DeviceSpec, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl DeviceSpec {
    /// The burn device for inference on this spec, or why there is none in this build.
    pub fn device(self) -> Result<Device, DeviceError> {
        match self {
            DeviceSpec::Cpu => Ok(cpu_device()),
            DeviceSpec::Wgpu => {
                #[cfg(feature = "gpu")]
                {
                    Ok(gpu_device())
                }
                #[cfg(not(feature = "gpu"))]
                {
                    Err(DeviceError::NotBuilt { spec: self.to_string(), what: "wgpu", feature: "gpu" })
                }
            }
            DeviceSpec::Vulkan => {
                #[cfg(feature = "vulkan")]
                {
                    Ok(Device::vulkan(burn::tensor::DeviceKind::DefaultDevice))
                }
                #[cfg(not(feature = "vulkan"))]
                {
                    Err(DeviceError::NotBuilt { spec: self.to_string(), what: "Vulkan", feature: "vulkan" })
                }
            }
            DeviceSpec::LibTorch(_index) => {
                #[cfg(feature = "tch")]
                {
                    // burn-tch is deprecated in favour of cubecl's backends, but it is the
                    // one GPU backend here that runs PyTorch's own (cuDNN) kernels.
                    #[allow(deprecated)]
                    let device = Device::libtorch_cuda(_index);
                    Ok(device)
                }
                #[cfg(not(feature = "tch"))]
                {
                    Err(DeviceError::NotBuilt { spec: self.to_string(), what: "LibTorch", feature: "tch" })
                }
            }
            DeviceSpec::LibTorchCpu => {
                #[cfg(feature = "tch")]
                {
                    #[allow(deprecated)]
                    let device = Device::libtorch();
                    Ok(device)
                }
                #[cfg(not(feature = "tch"))]
                {
                    Err(DeviceError::NotBuilt { spec: self.to_string(), what: "LibTorch", feature: "tch" })
                }
            }
            DeviceSpec::Cuda(_index) => {
                #[cfg(feature = "cuda")]
                {
                    Ok(Device::cuda(_index))
                }
                #[cfg(not(feature = "cuda"))]
                {
                    Err(DeviceError::NotBuilt { spec: self.to_string(), what: "CUDA", feature: "cuda" })
                }
            }
        }
    }

    /// The burn device for training (with autodiff) on this spec.
    pub fn train_device(self) -> Result<Device, DeviceError> {
        Ok(self.device()?.autodiff())
    }

    /// Checks the device exists by running one small operation on it: a missing GPU or
    /// driver becomes an error naming the device instead of a panic deep inside a run.
    pub fn probe(self) -> Result<Device, DeviceError> {
        let device = self.train_device()?;
        if self == DeviceSpec::Cpu {
            return Ok(device);
        }
        let d = device.clone();
        let run = std::panic::catch_unwind(move || {
            let t = burn::tensor::Tensor::<1>::from_data(burn::tensor::TensorData::new(vec![1.0f32, 2.0], [2]), &d);
            crate::tensor_util::to_vec(t.clone() + t)
        });
        match run {
            Ok(v) if v == [2.0, 4.0] => Ok(device),
            Ok(v) => Err(DeviceError::Unavailable { spec: self.to_string(), problem: format!("1 + 1 and 2 + 2 gave {v:?}") }),
            Err(payload) => {
                let problem = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "the backend panicked".into());
                Err(DeviceError::Unavailable { spec: self.to_string(), problem })
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_specs_parse_and_print() {
        assert_eq!("cpu".parse::<DeviceSpec>(), Ok(DeviceSpec::Cpu));
        assert_eq!("CUDA".parse::<DeviceSpec>(), Ok(DeviceSpec::Cuda(0)));
        assert_eq!("cuda:3".parse::<DeviceSpec>(), Ok(DeviceSpec::Cuda(3)));
        assert_eq!("wgpu".parse::<DeviceSpec>(), Ok(DeviceSpec::Wgpu));
        assert_eq!("Vulkan".parse::<DeviceSpec>(), Ok(DeviceSpec::Vulkan));
        assert_eq!(DeviceSpec::Vulkan.to_string(), "vulkan");
        assert_eq!("libtorch".parse::<DeviceSpec>(), Ok(DeviceSpec::LibTorch(0)));
        assert_eq!("libtorch:1".parse::<DeviceSpec>(), Ok(DeviceSpec::LibTorch(1)));
        assert_eq!(DeviceSpec::LibTorch(0).to_string(), "libtorch:0");
        assert_eq!("LibTorch-CPU".parse::<DeviceSpec>(), Ok(DeviceSpec::LibTorchCpu));
        assert_eq!(DeviceSpec::LibTorchCpu.to_string(), "libtorch-cpu");
        for bad in ["gpu", "cuda:", "cuda:x", "cuda:-1", "libtorch:", "libtorch-gpu", "torch", ""] {
            let e = bad.parse::<DeviceSpec>().unwrap_err();
            assert!(e.to_string().contains("expected cpu, cuda, cuda:N, wgpu, vulkan, libtorch, libtorch:N or libtorch-cpu"), "{bad}: {e}");
        }
        assert_eq!(DeviceSpec::Cuda(2).to_string(), "cuda:2");
        assert_eq!(DeviceSpec::default(), DeviceSpec::Cpu);
    }

    /// The CPU always works; a GPU this build cannot drive is refused with the feature to
    /// build with (the default build has neither GPU backend).
    #[test]
    fn devices_this_build_lacks_are_refused_clearly() {
        assert!(DeviceSpec::Cpu.probe().is_ok());
        #[cfg(not(feature = "cuda"))]
        {
            let e = DeviceSpec::Cuda(1).probe().unwrap_err().to_string();
            assert!(e.contains("cuda:1") && e.contains("--features cuda"), "{e}");
        }
        #[cfg(not(feature = "gpu"))]
        {
            let e = DeviceSpec::Wgpu.probe().unwrap_err().to_string();
            assert!(e.contains("wgpu") && e.contains("--features gpu"), "{e}");
        }
        #[cfg(not(feature = "vulkan"))]
        {
            let e = DeviceSpec::Vulkan.probe().unwrap_err().to_string();
            assert!(e.contains("'vulkan'") && e.contains("--features vulkan"), "{e}");
        }
        #[cfg(not(feature = "tch"))]
        {
            let e = DeviceSpec::LibTorch(0).probe().unwrap_err().to_string();
            assert!(e.contains("'libtorch:0'") && e.contains("--features tch"), "{e}");
            let e = DeviceSpec::LibTorchCpu.probe().unwrap_err().to_string();
            assert!(e.contains("'libtorch-cpu'") && e.contains("--features tch"), "{e}");
        }
    }
}
