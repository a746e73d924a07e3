//! Trainer settings (the `[training]` section of a run config).

use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
#[error("training.{key}: {problem}")]
pub struct TrainerConfigError {
    pub key: &'static str,
    pub problem: String,
}

/// Every field is documented with its unit and range in `configs/default.toml`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrainerConfig {
    pub batch_size: usize,
    /// Optimiser steps per generation (fewer when the window cannot supply them under the use cap).
    pub steps_per_generation: u32,
    pub learning_rate: f64,
    pub weight_decay: f32,
    /// Weight of the value loss against the policy loss.
    pub value_weight: f32,
    /// Share of the value target taken from the search's root value instead of the game's
    /// result (0 = the result only). Missing in configs written before it existed: 0.
    #[serde(default)]
    pub search_value_share: f32,
    /// Generations of self-play data in the training window.
    pub window_generations: u32,
    /// Most times one sample may be trained on, over all generations.
    pub max_sample_uses: u8,
    /// Fraction of games held out for validation.
    pub validation_fraction: f32,
    /// Most validation positions evaluated per generation.
    pub validation_positions: usize,
    /// Augment with the left–right mirror (where the variant is symmetric).
    pub mirror: bool,
    /// Steps between checkpoints within a generation.
    pub checkpoint_every: u32,
    /// The device that trains: `cpu`, `cuda[:N]` (a build with `--features cuda`) or
    /// `wgpu` (`--features gpu`). Missing in older configs: `cpu`.
    #[serde(default)]
    pub device: model::DeviceSpec,
}

impl Default for TrainerConfig {
    fn default() -> Self {
        TrainerConfig {
            batch_size: 128,
            steps_per_generation: 200,
            learning_rate: 1e-3,
            weight_decay: 1e-4,
            value_weight: 1.0,
            search_value_share: 0.0,
            window_generations: 4,
            max_sample_uses: 4,
            validation_fraction: 0.05,
            validation_positions: 2048,
            mirror: true,
            checkpoint_every: 50,
            device: model::DeviceSpec::Cpu,
        }
    }
}

impl TrainerConfig {
    pub fn validate(&self) -> Result<(), TrainerConfigError> {
        let bad = |key, problem: String| Err(TrainerConfigError { key, problem });
        if !(1..=8192).contains(&self.batch_size) {
            return bad("batch_size", format!("{} is outside 1..=8192", self.batch_size));
        }
        if !(self.learning_rate > 0.0 && self.learning_rate <= 1.0) {
            return bad("learning_rate", format!("{} is outside (0, 1]", self.learning_rate));
        }
        if !(0.0..=1.0).contains(&self.weight_decay) {
            return bad("weight_decay", format!("{} is outside 0..=1", self.weight_decay));
        }
        if !(0.0..=10.0).contains(&self.value_weight) {
            return bad("value_weight", format!("{} is outside 0..=10", self.value_weight));
        }
        if !(0.0..=1.0).contains(&self.search_value_share) {
            return bad("search_value_share", format!("{} is outside 0..=1", self.search_value_share));
        }
        if self.window_generations == 0 {
            return bad("window_generations", "must be at least 1".into());
        }
        if self.max_sample_uses == 0 {
            return bad("max_sample_uses", "must be at least 1".into());
        }
        if !(0.0..0.5).contains(&self.validation_fraction) {
            return bad("validation_fraction", format!("{} is outside 0..0.5", self.validation_fraction));
        }
        if self.checkpoint_every == 0 {
            return bad("checkpoint_every", "must be at least 1".into());
        }
        Ok(())
    }
}
