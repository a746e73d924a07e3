//! The network evaluated by burn on a chosen device: how self-play and evaluation run
//! the network on an accelerator (`cuda` or `wgpu` builds), with
//! `search::BatchingEvaluator` in front so many search threads fill its batches. On the
//! CPU the folded [`crate::InferenceNet`] is several times faster; `cpu` works here too,
//! so tests can check that a model plays the same wherever it runs.

use crate::config::NetConfig;
use crate::device::{Device, DeviceError, DeviceSpec};
use crate::net::Net;
use crate::store::ModelIoError;
use crate::tensor_util::{input_tensor, to_vec};
use burn::module::Module;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum DeviceNetError {
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Model(#[from] ModelIoError),
}

/// A network in inference mode (batch norm with running statistics) on one device.
#[derive(Clone, Debug)]
pub struct DeviceNet {
    net: Net,
    device: Device,
    spec: DeviceSpec,
}

impl DeviceNet {
    /// Loads the model in `dir` onto `spec`'s device; an unavailable device or a bad
    /// model is an error naming it.
    pub fn load(dir: &Path, spec: DeviceSpec) -> Result<DeviceNet, DeviceNetError> {
        let device = spec.device()?;
        let net = crate::store::load_model(dir, &device)?;
        Ok(DeviceNet { net, device, spec })
    }

    /// Copies `net` (trained anywhere) onto `spec`'s device for inference.
    pub fn from_net(net: &Net, spec: DeviceSpec) -> Result<DeviceNet, DeviceError> {
        let device = spec.device()?;
        let net = net.valid().to_device(&device);
        Ok(DeviceNet { net, device, spec })
    }

    pub fn config(&self) -> &NetConfig {
        self.net.config()
    }

    pub fn spec(&self) -> DeviceSpec {
        self.spec
    }

    /// Evaluates `batch` positions (`input` `[batch, planes, H, W]`) into `policy`
    /// `[batch, policy_planes * H * W]` logits and `value` `[batch, 3]` W/D/L logits: one
    /// transfer to the device, one forward pass, one transfer back.
    ///
    /// # Panics
    /// If the buffers do not fit `batch` positions of this network.
    pub fn forward_into(&self, input: &[f32], batch: usize, policy: &mut [f32], value: &mut [f32]) {
        let cfg = self.net.config();
        assert_eq!(policy.len(), batch * cfg.policy_len(), "policy must be [batch, P*H*W]");
        assert_eq!(value.len(), batch * 3, "value must be [batch, 3]");
        if batch == 0 {
            return;
        }
        let out = self.net.forward(input_tensor(cfg, input, batch, &self.device));
        policy.copy_from_slice(&to_vec(out.policy));
        value.copy_from_slice(&to_vec(out.value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{max_abs_diff, tiny_config, trained_tiny_net, OwnedBatch};

    #[test]
    fn gives_what_the_folded_cpu_network_gives() {
        let cfg = tiny_config();
        let net = trained_tiny_net(3);
        let batch = OwnedBatch::random(&cfg, 5, 3);
        let folded = crate::InferenceNet::from_net(&net).forward(&batch.input, 5);
        let on_device = DeviceNet::from_net(&net, DeviceSpec::Cpu).unwrap();
        let mut policy = vec![0.0; 5 * cfg.policy_len()];
        let mut value = vec![0.0; 15];
        on_device.forward_into(&batch.input, 5, &mut policy, &mut value);
        assert!(max_abs_diff(&policy, &folded.policy) < 1e-3, "policy differs by {}", max_abs_diff(&policy, &folded.policy));
        assert!(max_abs_diff(&value, &folded.value) < 1e-3, "value differs by {}", max_abs_diff(&value, &folded.value));
    }

    #[test]
    fn a_device_this_build_lacks_is_refused_naming_the_feature() {
        let net = Net::new(&tiny_config(), &crate::cpu_device()).unwrap();
        if cfg!(not(feature = "cuda")) {
            let e = DeviceNet::from_net(&net, DeviceSpec::Cuda(1)).unwrap_err().to_string();
            assert!(e.contains("cuda:1") && e.contains("--features cuda"), "{e}");
        }
        if cfg!(not(feature = "gpu")) {
            let e = DeviceNet::from_net(&net, DeviceSpec::Wgpu).unwrap_err().to_string();
            assert!(e.contains("wgpu") && e.contains("--features gpu"), "{e}");
        }
    }
}
