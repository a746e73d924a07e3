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
    /// The learning rate of a generation's last step as a fraction of `learning_rate`,
    /// reached by cosine decay over the generation's steps; 1 = constant. Missing in
    /// configs written before it existed: 1.
    #[serde(default = "constant_rate")]
    pub final_lr_fraction: f64,
    /// Steps over which a fresh optimiser's rate rises linearly to the schedule's (the
    /// first steps of a run, or of one started from a model): Adam's moment estimates are
    /// noise over the first few batches, and a trained network takes full steps on them.
    /// 0 = none; missing in configs written before it existed: 0.
    #[serde(default)]
    pub warmup_steps: u32,
    pub weight_decay: f32,
    /// Weight of the value loss against the policy loss.
    pub value_weight: f32,
    /// Share of the value target taken from the search's root value instead of the game's
    /// result (0 = the result only). Missing in configs written before it existed: 0.
    #[serde(default)]
    pub search_value_share: f32,
    /// Plies ahead in the game whose search value stands in for the position's own in
    /// the value target's search share (0 = the position's own; the game's result where
    /// the game ends sooner): an n-step target. Missing in older configs: 0.
    #[serde(default)]
    pub value_horizon: u32,
    /// Share of each self-play position's sampling weight given by its policy surprise,
    /// KL(target ‖ prior) under the generation's starting network, over the mean; the rest
    /// is uniform (KataGo's policy-surprise weighting, half and half there). Positions
    /// without a policy target and the teacher's keep weight 1. 0 = uniform sampling;
    /// missing in older configs: 0.
    #[serde(default)]
    pub policy_surprise_weight: f32,
    /// Share of the window's older self-play positions (those played by a model before
    /// the newest) searched again by the newest model before each generation trains,
    /// their policy target and search value replaced (MuZero Reanalyse; the trainer role
    /// runs it, `pipeline::reanalyse`). 0 = none; missing in older configs: 0.
    #[serde(default)]
    pub reanalyse_fraction: f32,
    /// Share of a reanalysed position's previous policy target and search value kept in
    /// its new ones: each reanalysis then averages searches, where one 64-simulation
    /// search writes a noisy label. 0 = replaced; missing in older configs: 0.
    #[serde(default)]
    pub reanalyse_keep: f32,
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
    /// The device that trains: `cpu`, `vulkan` (a build with `--features vulkan`), `wgpu`
    /// (`--features gpu`) or `cuda[:N]` (`--features cuda`). Missing in older configs: `cpu`.
    #[serde(default)]
    pub device: model::DeviceSpec,
}

fn constant_rate() -> f64 {
    1.0
}

impl Default for TrainerConfig {
    fn default() -> Self {
        TrainerConfig {
            batch_size: 128,
            steps_per_generation: 200,
            learning_rate: 1e-3,
            final_lr_fraction: 1.0,
            warmup_steps: 0,
            weight_decay: 1e-4,
            value_weight: 1.0,
            search_value_share: 0.0,
            value_horizon: 0,
            policy_surprise_weight: 0.0,
            reanalyse_fraction: 0.0,
            reanalyse_keep: 0.0,
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
    /// The learning rate of step `step` (from 0) of a generation of `steps` steps: cosine
    /// decay from `learning_rate` towards `final_lr_fraction` of it (Loshchilov & Hutter,
    /// "SGDR", 2017, without restarts), so that each generation's model is taken at a low
    /// rate rather than wherever the last noisy step left it.
    pub(crate) fn learning_rate_at(&self, step: u32, steps: u32) -> f64 {
        let progress = if steps <= 1 { 0.0 } else { step as f64 / (steps - 1) as f64 };
        let f = self.final_lr_fraction;
        self.learning_rate * (f + (1.0 - f) * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()))
    }

    /// The warm-up factor of the optimiser's `optimizer_step`-th step (from 0) since its
    /// state was fresh: (k + 1)/warmup_steps up to 1 (Goyal et al., "Accurate, Large
    /// Minibatch SGD", 2017, §2.2; for Adam, Liu et al., "On the Variance of the Adaptive
    /// Learning Rate and Beyond", 2020).
    pub(crate) fn warmup_factor(&self, optimizer_step: u64) -> f64 {
        if self.warmup_steps == 0 {
            1.0
        } else {
            ((optimizer_step + 1) as f64 / self.warmup_steps as f64).min(1.0)
        }
    }

    pub fn validate(&self) -> Result<(), TrainerConfigError> {
        let bad = |key, problem: String| Err(TrainerConfigError { key, problem });
        if !(1..=8192).contains(&self.batch_size) {
            return bad("batch_size", format!("{} is outside 1..=8192", self.batch_size));
        }
        if !(self.learning_rate > 0.0 && self.learning_rate <= 1.0) {
            return bad("learning_rate", format!("{} is outside (0, 1]", self.learning_rate));
        }
        if !(self.final_lr_fraction > 0.0 && self.final_lr_fraction <= 1.0) {
            return bad("final_lr_fraction", format!("{} is outside (0, 1]", self.final_lr_fraction));
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
        if self.value_horizon > 1000 {
            return bad("value_horizon", format!("{} is outside 0..=1000", self.value_horizon));
        }
        if !(0.0..=1.0).contains(&self.reanalyse_fraction) {
            return bad("reanalyse_fraction", format!("{} is outside 0..=1", self.reanalyse_fraction));
        }
        if !(0.0..1.0).contains(&self.reanalyse_keep) {
            return bad("reanalyse_keep", format!("{} is outside 0..1 (1 would ignore the new search)", self.reanalyse_keep));
        }
        if !(0.0..=1.0).contains(&self.policy_surprise_weight) {
            return bad("policy_surprise_weight", format!("{} is outside 0..=1", self.policy_surprise_weight));
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

#[cfg(test)]
mod tests {
    use super::TrainerConfig;

    #[test]
    fn cosine_decay_runs_from_the_rate_to_its_fraction() {
        let c = TrainerConfig { learning_rate: 0.002, final_lr_fraction: 0.1, ..TrainerConfig::default() };
        // Hand-computed: 0.002·(0.1 + 0.9·(1 + cos(π·p))/2) at p = 0, 1/4, 1/2, 1.
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(c.learning_rate_at(0, 5), 0.002));
        assert!(close(c.learning_rate_at(1, 5), 0.002 * (0.1 + 0.9 * (1.0 + std::f64::consts::FRAC_1_SQRT_2) / 2.0)));
        assert!(close(c.learning_rate_at(2, 5), 0.0011));
        assert!(close(c.learning_rate_at(4, 5), 0.0002));
        let constant = TrainerConfig { learning_rate: 0.002, ..TrainerConfig::default() };
        assert!((0..10).all(|s| close(constant.learning_rate_at(s, 10), 0.002)));
        assert!(close(c.learning_rate_at(0, 1), 0.002), "a one-step generation trains at the full rate");
    }

    #[test]
    fn warmup_rises_linearly_then_stays_at_one() {
        let c = TrainerConfig { warmup_steps: 4, ..TrainerConfig::default() };
        let got: Vec<f64> = (0..6).map(|k| c.warmup_factor(k)).collect();
        assert_eq!(got, vec![0.25, 0.5, 0.75, 1.0, 1.0, 1.0]);
        assert_eq!(TrainerConfig::default().warmup_factor(0), 1.0, "no warm-up by default");
    }

    #[test]
    fn a_surprise_weight_or_reanalysed_share_outside_its_range_is_refused_by_name() {
        for w in [-0.1, 1.5, f32::NAN] {
            let c = TrainerConfig { policy_surprise_weight: w, ..TrainerConfig::default() };
            assert!(c.validate().unwrap_err().to_string().contains("training.policy_surprise_weight"), "{w}");
        }
        assert!(TrainerConfig { policy_surprise_weight: 1.0, ..TrainerConfig::default() }.validate().is_ok());
        for f in [-0.1, 1.5, f32::NAN] {
            let c = TrainerConfig { reanalyse_fraction: f, ..TrainerConfig::default() };
            assert!(c.validate().unwrap_err().to_string().contains("training.reanalyse_fraction"), "{f}");
        }
        assert!(TrainerConfig { reanalyse_fraction: 1.0, ..TrainerConfig::default() }.validate().is_ok());
        for k in [-0.1, 1.0, f32::NAN] {
            let c = TrainerConfig { reanalyse_keep: k, ..TrainerConfig::default() };
            assert!(c.validate().unwrap_err().to_string().contains("training.reanalyse_keep"), "{k}");
        }
        assert!(TrainerConfig { reanalyse_keep: 0.5, ..TrainerConfig::default() }.validate().is_ok());
    }

    #[test]
    fn a_final_fraction_outside_its_range_is_refused_by_name() {
        for f in [0.0, -0.5, 1.5, f64::NAN] {
            let c = TrainerConfig { final_lr_fraction: f, ..TrainerConfig::default() };
            assert!(c.validate().unwrap_err().to_string().contains("training.final_lr_fraction"), "{f}");
        }
    }
}
