//! The run configuration: one TOML file (see `configs/default.toml`, every key commented
//! with its unit and range). Unknown keys are rejected, ranges checked on load, and the
//! resolved configuration is saved into the run directory.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    pub variant: String,
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    pub run_dir: PathBuf,
    pub generations: u32,
    pub seed: u64,
    pub threads: usize,
    pub network: NetworkConfig,
    pub selfplay: selfplay::SelfplayConfig,
    pub training: trainer::TrainerConfig,
    pub evaluation: EvaluationConfig,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetworkConfig {
    pub blocks: usize,
    pub channels: usize,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EvaluationConfig {
    /// Game pairs (both colours from one opening) against the previous generation.
    pub previous_pairs: u32,
    /// Game pairs against the uniform-prior search at the same budget.
    pub uniform_pairs: u32,
    pub simulations: u32,
    /// Random plies played from the start before each pair, so pairs differ.
    pub opening_plies: u32,
    /// A fixed opponent (an arena player spec) every generation also plays, so that Elo
    /// is on one scale across generations and across runs.
    #[serde(default = "default_anchor")]
    pub anchor: String,
    /// Game pairs against the anchor.
    #[serde(default = "default_anchor_pairs")]
    pub anchor_pairs: u32,
}

fn default_anchor() -> String {
    "greedy".into()
}

fn default_anchor_pairs() -> u32 {
    8
}

impl RunConfig {
    pub fn load(path: &Path) -> Result<RunConfig> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading config {}", path.display()))?;
        let config: RunConfig = toml::from_str(&text).with_context(|| format!("in config {}", path.display()))?;
        config.validate().with_context(|| format!("in config {}", path.display()))?;
        Ok(config)
    }

    pub fn validate(&self) -> Result<()> {
        if !(1..=1_000_000).contains(&self.generations) {
            bail!("generations: {} is outside 1..=1000000", self.generations);
        }
        if !(1..=256).contains(&self.threads) {
            bail!("threads: {} is outside 1..=256", self.threads);
        }
        if !(1..=40).contains(&self.network.blocks) {
            bail!("network.blocks: {} is outside 1..=40", self.network.blocks);
        }
        if !(8..=512).contains(&self.network.channels) {
            bail!("network.channels: {} is outside 8..=512", self.network.channels);
        }
        if !(1..=100_000).contains(&self.evaluation.simulations) {
            bail!("evaluation.simulations: {} is outside 1..=100000", self.evaluation.simulations);
        }
        if self.evaluation.opening_plies > 40 {
            bail!("evaluation.opening_plies: {} is outside 0..=40", self.evaluation.opening_plies);
        }
        if self.evaluation.anchor_pairs > 0 {
            arena::PlayerSpec::parse(&self.evaluation.anchor).map_err(|e| anyhow::anyhow!("evaluation.anchor: {e}"))?;
        }
        self.selfplay.validate()?;
        self.training.validate()?;
        let variant = self.variant()?;
        // Unknown start names would otherwise fall back to the variant's start silently.
        let family: Vec<String> = variant.start_family().into_iter().map(|(n, _)| n).collect();
        if let Some(bad) = self.selfplay.starts.iter().find(|s| !family.contains(s)) {
            bail!("selfplay.starts: unknown start '{bad}' (the start family of {} is: {})", variant.name, family.join(", "));
        }
        Ok(())
    }

    pub fn variant(&self) -> Result<&'static rules::Variant> {
        let options: Vec<(String, String)> = self.options.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        Ok(rules::Variant::load(&self.variant, &options)?)
    }

    pub fn net_config(&self) -> Result<model::NetConfig> {
        let v = self.variant()?;
        let planes = encoding::InputPlanes::new(v);
        let actions = encoding::ActionSpace::new(v);
        let (h, w) = planes.board_shape();
        let c = model::NetConfig::new(planes.num_planes(), h, w, actions.num_planes()).with_tower(self.network.blocks, self.network.channels);
        c.validate().map_err(|e| anyhow::anyhow!("network: {e}"))?;
        Ok(c)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("configs serialise")
    }
}
