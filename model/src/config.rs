//! Network hyper-parameters, independent of any game encoding.

use serde::{Deserialize, Serialize};

/// Shape and size of a policy/value network.
///
/// The rules engine decides `input_planes`, `policy_planes` and the board size; the
/// rest is the capacity of the residual tower. Tensor layouts (all row-major):
///
/// - input: `[batch, input_planes, board_height, board_width]`
/// - policy logits: `[batch, policy_planes * board_height * board_width]`, flattened
///   from `[batch, policy_planes, board_height, board_width]`, so the logit of move
///   plane `p` at square `(row, col)` is at `p * H * W + row * W + col`.
/// - value logits: `[batch, 3]`, ordered win, draw, loss (see [`crate::Wdl`]) from the
///   point of view of the side to move.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetConfig {
    /// Feature planes of the input encoding.
    pub input_planes: usize,
    /// Board rows (ranks).
    pub board_height: usize,
    /// Board columns (files).
    pub board_width: usize,
    /// Move planes per square of the policy encoding.
    pub policy_planes: usize,
    /// Residual blocks in the tower.
    pub blocks: usize,
    /// Channels of the stem and of every residual block.
    pub channels: usize,
    /// Channels of the policy head's 1x1 convolution before the final 1x1 convolution.
    pub policy_head_channels: usize,
    /// Channels of the value head's 1x1 convolution.
    pub value_head_channels: usize,
    /// Width of the value head's hidden fully-connected layer.
    pub value_hidden: usize,
    /// Batch-norm epsilon (PyTorch's default, 1e-5).
    #[serde(default = "default_bn_epsilon")]
    pub bn_epsilon: f64,
    /// Batch-norm running-statistics momentum (PyTorch's convention: weight of the new batch).
    #[serde(default = "default_bn_momentum")]
    pub bn_momentum: f64,
}

fn default_bn_epsilon() -> f64 {
    1e-5
}

fn default_bn_momentum() -> f64 {
    0.1
}

/// Errors of a configuration that cannot build a network.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid network config: {0}")]
pub struct ConfigError(pub String);

impl NetConfig {
    /// A config with the default CPU tower (6 blocks x 64 channels) for the given encoding.
    pub fn new(input_planes: usize, board_height: usize, board_width: usize, policy_planes: usize) -> Self {
        Self {
            input_planes,
            board_height,
            board_width,
            policy_planes,
            blocks: 6,
            channels: 64,
            policy_head_channels: 32,
            value_head_channels: 4,
            value_hidden: 128,
            bn_epsilon: default_bn_epsilon(),
            bn_momentum: default_bn_momentum(),
        }
    }

    /// Same config with another tower size.
    pub fn with_tower(mut self, blocks: usize, channels: usize) -> Self {
        self.blocks = blocks;
        self.channels = channels;
        self
    }

    /// Squares on the board, `H * W`.
    pub fn squares(&self) -> usize {
        self.board_height * self.board_width
    }

    /// Length of one input sample, `input_planes * H * W`.
    pub fn input_len(&self) -> usize {
        self.input_planes * self.squares()
    }

    /// Number of policy logits, `policy_planes * H * W`.
    pub fn policy_len(&self) -> usize {
        self.policy_planes * self.squares()
    }

    /// A lower bound on the bytes of this network's saved weights: its convolution and
    /// linear weights as f32 (the stem and tower are 3×3, the heads 1×1), computed without
    /// overflow. Loaders refuse a config that needs more than its weights file holds before
    /// allocating any tensor, so a crafted manifest cannot make them allocate gigabytes.
    pub fn min_weight_bytes(&self) -> u128 {
        let [planes, c, h, w, blocks, pc, pp, vc, vh] = [
            self.input_planes,
            self.channels,
            self.board_height,
            self.board_width,
            self.blocks,
            self.policy_head_channels,
            self.policy_planes,
            self.value_head_channels,
            self.value_hidden,
        ]
        .map(|x| x as u128);
        // Saturating: four factors of up to 2^64 overflow even u128.
        let product = |xs: &[u128]| xs.iter().fold(1u128, |a, &x| a.saturating_mul(x));
        let weights = [
            product(&[planes, c, 9]),
            product(&[blocks, 2, c, c, 9]),
            product(&[c, pc]),
            product(&[pc, pp]),
            product(&[c, vc]),
            product(&[vc, h, w, vh]),
            product(&[vh, 3]),
        ];
        weights.iter().fold(0u128, |a, &x| a.saturating_add(x)).saturating_mul(4)
    }

    /// Checks that every size is usable.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let sizes = [
            ("input_planes", self.input_planes),
            ("board_height", self.board_height),
            ("board_width", self.board_width),
            ("policy_planes", self.policy_planes),
            ("channels", self.channels),
            ("policy_head_channels", self.policy_head_channels),
            ("value_head_channels", self.value_head_channels),
            ("value_hidden", self.value_hidden),
        ];
        for (name, value) in sizes {
            if value == 0 {
                return Err(ConfigError(format!("{name} must be positive")));
            }
        }
        // Far above any trainable network (40×512 is 0.75 GB), and keeps every size
        // product below usize's range.
        const MAX_WEIGHT_BYTES: u128 = 1 << 36;
        if self.min_weight_bytes() > MAX_WEIGHT_BYTES || self.board_height > 64 || self.board_width > 64 {
            return Err(ConfigError(format!(
                "sizes imply at least {} bytes of weights on a {}x{} board; the most this build accepts is {MAX_WEIGHT_BYTES} bytes and 64x64",
                self.min_weight_bytes(),
                self.board_height,
                self.board_width
            )));
        }
        if !(self.bn_epsilon.is_finite() && self.bn_epsilon > 0.0) {
            return Err(ConfigError("bn_epsilon must be finite and positive".into()));
        }
        if !(0.0..=1.0).contains(&self.bn_momentum) {
            return Err(ConfigError("bn_momentum must be within [0, 1]".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_and_defaults() {
        let cfg = NetConfig::new(100, 9, 9, 140).with_tower(4, 48);
        let json = serde_json::to_string(&cfg).unwrap();
        let back: NetConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(cfg, back);
        assert_eq!(cfg.policy_len(), 140 * 81);
        assert_eq!(cfg.input_len(), 100 * 81);

        // Optional BN fields may be omitted.
        let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
        v.as_object_mut().unwrap().remove("bn_epsilon");
        let back: NetConfig = serde_json::from_value(v).unwrap();
        assert_eq!(back.bn_epsilon, 1e-5);
    }

    #[test]
    fn validate_rejects_zero_sizes() {
        let mut cfg = NetConfig::new(10, 5, 5, 7);
        assert!(cfg.validate().is_ok());
        cfg.channels = 0;
        assert!(cfg.validate().is_err());
    }
}
