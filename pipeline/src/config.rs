//! The run configuration: one TOML file (see `configs/default.toml`, every key commented
//! with its unit and range). Unknown keys are rejected, ranges checked on load, and the
//! resolved configuration is saved into the run directory.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
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
    /// A trained model to start from as generation 0 (instead of the uniform search or
    /// the teacher stage); it must have the run's variant and network. With a teacher
    /// stage as well, the teacher's games are played only for the self-play batches'
    /// teacher share: generation 0 is this model, not trained on them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_model: Option<PathBuf>,
    /// The teacher stage before the first self-play generation (none when absent).
    #[serde(default)]
    pub teacher: teacher::TeacherConfig,
    /// How workers and the trainer share the run (docs/FLEET.md); absent: the defaults.
    #[serde(default)]
    pub fleet: FleetConfig,
}

/// How workers and the trainer share the run.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FleetConfig {
    /// Workers keep playing with the newest model once a generation has its games, while
    /// the trainer trains (a fleet's workers never idle); the extra games go to the next
    /// training step. Off: a worker waits for the next model, and a run on one machine is
    /// the same for a seed.
    pub play_ahead: bool,
    /// A training step consumes games from its own generation's directory and the
    /// `max_game_lag` before it: a game is trained on at most this many generations after
    /// the model that played it (older ones are dropped), and a step's work does not grow
    /// with the run's length.
    pub max_game_lag: u32,
    /// A step consumes at most this many times `selfplay.games` games (workers playing
    /// ahead can make more while the trainer trains): the newest first; the others wait
    /// for the next step, within `max_game_lag`. So the samples trained per new sample
    /// stay above `steps_per_generation × batch_size / (step_games × games × plies)`, and
    /// a step's downloads and memory are bounded.
    pub step_games: u32,
}

impl Default for FleetConfig {
    fn default() -> FleetConfig {
        FleetConfig { play_ahead: false, max_game_lag: 2, step_games: 4 }
    }
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

    /// A config from TOML text (the one a run saved), checked.
    pub fn from_toml_str(text: &str) -> Result<RunConfig> {
        let config: RunConfig = toml::from_str(text)?;
        config.validate()?;
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
        // Evaluation games start with `opening_plies` random plies and end at the self-play
        // length limit: an opening as long as the game would leave nothing to play.
        if self.evaluation.opening_plies >= self.selfplay.max_plies {
            bail!("evaluation.opening_plies ({}) must be below selfplay.max_plies ({})", self.evaluation.opening_plies, self.selfplay.max_plies);
        }
        // Game ids are generation × GAME_ID_STRIDE + index: more games would collide with
        // the next generation's ids (and seeds).
        if self.selfplay.games as u64 > GAME_ID_STRIDE {
            bail!("selfplay.games: {} is more than {} per generation (game ids would collide across generations)", self.selfplay.games, GAME_ID_STRIDE);
        }
        if self.evaluation.anchor_pairs > 0 {
            players::PlayerSpec::parse(&self.evaluation.anchor).map_err(|e| anyhow::anyhow!("evaluation.anchor: {e}"))?;
        }
        if !(1..=100).contains(&self.fleet.step_games) {
            bail!("fleet.step_games: {} is outside 1..=100", self.fleet.step_games);
        }
        if !(1..=100).contains(&self.fleet.max_game_lag) {
            bail!("fleet.max_game_lag: {} is outside 1..=100", self.fleet.max_game_lag);
        }
        self.selfplay.validate()?;
        self.training.validate()?;
        self.teacher.validate()?;
        // A device this build cannot drive is refused at load time, with the feature to
        // build with; one the machine lacks, when training first touches it.
        self.training.device.device().map_err(|e| anyhow::anyhow!("training.{e}"))?;
        self.selfplay_device()?.device().map_err(|e| anyhow::anyhow!("selfplay.{e}"))?;
        let variant = self.variant()?;
        // Unknown start names would otherwise fall back to the variant's start silently.
        let family: Vec<String> = variant.start_family().into_iter().map(|(n, _)| n).collect();
        if let Some(bad) = self.selfplay.starts.iter().find(|s| !family.contains(s)) {
            bail!("selfplay.starts: unknown start '{bad}' (the start family of {} is: {})", variant.name, family.join(", "));
        }
        Ok(())
    }

    /// Refuses a config that came from a store or a run directory, not from the caller,
    /// when it would start a program `allowed` does not allow, or start one otherwise
    /// than `allowed` starts it: a USI evaluation anchor or teacher.
    pub fn check_programs(&self, allowed: &players::EngineAllowList) -> Result<()> {
        if self.evaluation.anchor_pairs > 0 {
            let anchor = players::PlayerSpec::parse(&self.evaluation.anchor).map_err(|e| anyhow::anyhow!("evaluation.anchor: {e}"))?;
            allowed.check(&anchor).map_err(|e| anyhow::anyhow!("evaluation.anchor: {e}"))?;
        }
        if let Some(command) = self.teacher.usi_command().filter(|_| self.teacher.enabled()) {
            let options: Vec<(String, String)> = self.teacher.engine_options.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            allowed
                .check_engine(std::path::Path::new(command), &[], None, &options)
                .map_err(|e| anyhow::anyhow!("teacher.engine '{}': {e}", self.teacher.engine))?;
        }
        Ok(())
    }

    /// The self-play network's device (`selfplay.device`).
    pub fn selfplay_device(&self) -> Result<model::DeviceSpec> {
        self.selfplay.device.parse().map_err(|e| anyhow::anyhow!("selfplay.{e}"))
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

/// Self-play game ids are `generation × GAME_ID_STRIDE + index` (unique within a run; they
/// seed each game). `RunConfig::validate` keeps `selfplay.games` within the stride.
pub const GAME_ID_STRIDE: u64 = 1_000_000;

/// The keys a trainer may change in a stored run's config: how many generations the run
/// has (it can be extended), its own threads and local directory, and the arithmetic of
/// self-play's CPU network (how a machine computes, like its threads; a CPU without the
/// int8 kernels runs f32 whatever the run says).
const CHANGEABLE_KEYS: [&str; 4] = ["generations", "threads", "run_dir", "selfplay.precision"];

/// The dotted keys whose values differ between two configs, [`CHANGEABLE_KEYS`] aside.
pub fn config_differences(stored: &RunConfig, given: &RunConfig) -> Vec<String> {
    fn walk(prefix: &str, a: &toml::Value, b: &toml::Value, out: &mut Vec<String>) {
        match (a, b) {
            (toml::Value::Table(x), toml::Value::Table(y)) => {
                let names: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in names {
                    let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    match (x.get(k), y.get(k)) {
                        (Some(v), Some(w)) => walk(&key, v, w, out),
                        _ => out.push(key),
                    }
                }
            }
            _ if a != b => out.push(prefix.to_string()),
            _ => {}
        }
    }
    let value = |c: &RunConfig| toml::Value::Table(toml::from_str(&c.to_toml()).expect("a config's own TOML parses"));
    let mut out = Vec::new();
    walk("", &value(stored), &value(given), &mut out);
    out.retain(|k| !CHANGEABLE_KEYS.contains(&k.as_str()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_config() -> RunConfig {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/default.toml");
        RunConfig::load(&path).unwrap()
    }

    /// A stored run's config may differ from a trainer's only in how long the run is and
    /// in the trainer's own threads and directory; every other difference is named.
    #[test]
    fn config_differences_name_every_key_but_the_changeable_ones() {
        let a = default_config();
        let mut b = a.clone();
        b.generations += 5;
        b.threads = 1;
        b.run_dir = "elsewhere".into();
        b.selfplay.precision = if a.selfplay.precision == "int8" { "f32" } else { "int8" }.into();
        assert!(config_differences(&a, &b).is_empty());
        b.selfplay.games = 7;
        b.teacher.batch_share = Some(0.3);
        b.fleet.play_ahead = true;
        assert_eq!(config_differences(&a, &b), ["fleet.play_ahead", "selfplay.games", "teacher.batch_share"]);
    }

    /// Cross-field constraints are refused at load time with a message naming the keys
    /// (an opening as long as the game would loop forever; more games than the id
    /// stride would reuse the next generation's ids and seeds).
    #[test]
    fn cross_field_constraints_name_their_keys() {
        let mut c = default_config();
        c.evaluation.opening_plies = 10;
        c.selfplay.max_plies = 10;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("evaluation.opening_plies") && e.contains("selfplay.max_plies"), "{e}");
        c.selfplay.max_plies = 11;
        c.validate().unwrap();

        let mut c = default_config();
        c.selfplay.games = GAME_ID_STRIDE as u32 + 1;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("selfplay.games") && e.contains("collide"), "{e}");
        c.selfplay.games = GAME_ID_STRIDE as u32;
        c.validate().unwrap();

        #[cfg(not(feature = "cuda"))]
        {
            let mut c = default_config();
            c.training.device = model::DeviceSpec::Cuda(0);
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains("training.device 'cuda:0'") && e.contains("--features cuda"), "{e}");
            let mut c = default_config();
            c.selfplay.device = "cuda:1".into();
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains("selfplay.device 'cuda:1'") && e.contains("--features cuda"), "{e}");
        }
        let mut c = default_config();
        c.selfplay.device = "tpu".into();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("selfplay.device 'tpu': unknown"), "{e}");

        let mut c = default_config();
        c.training.search_value_share = 1.5;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("training.search_value_share"), "{e}");
    }

    #[test]
    fn the_selfplay_precision_is_f32_or_int8() {
        let mut c = default_config();
        assert_eq!(c.selfplay.precision, "int8", "the default config runs self-play in int8");
        c.selfplay.precision = "fp16".into();
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("precision") && e.contains("'fp16' is not f32 or int8"), "{e}");
        c.selfplay.precision = "int8".into();
        c.validate().unwrap();
    }

    #[test]
    fn the_teacher_section_is_checked_and_excludes_a_starting_model() {
        let mut c = default_config();
        assert!(c.teacher.enabled(), "the default learns from a teacher first");
        c.teacher.depth = 0;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("teacher.depth"), "{e}");
        let mut c = default_config();
        c.teacher.value_share = -0.1;
        assert!(c.validate().unwrap_err().to_string().contains("teacher.value_share"));
        let mut c = default_config();
        c.teacher.final_lr_fraction = 0.0;
        assert!(c.validate().unwrap_err().to_string().contains("teacher.final_lr_fraction"));
    }

    /// A run directory's saved config from before `search_value_share`, the teacher
    /// stage or the learning-rate decay existed still loads (as 0, as no teacher and as a
    /// constant rate: what it was trained with).
    #[test]
    fn configs_without_the_newer_keys_load() {
        let text = default_config().to_toml();
        let before_teacher = text.split("[teacher]").next().unwrap();
        let c: RunConfig = toml::from_str(before_teacher).unwrap();
        assert!(!c.teacher.enabled());
        let text = default_config().to_toml();
        let old: String = text.lines().filter(|l| !l.starts_with("search_value_share")).collect::<Vec<_>>().join("\n");
        assert_ne!(old, text);
        let c: RunConfig = toml::from_str(&old).unwrap();
        assert_eq!(c.training.search_value_share, 0.0);
        let old: String = text.lines().filter(|l| !l.starts_with("final_lr_fraction")).collect::<Vec<_>>().join("\n");
        assert_eq!(text.lines().count() - old.lines().count(), 2, "the key is in [training] and [teacher]");
        let c: RunConfig = toml::from_str(&old).unwrap();
        assert_eq!((c.training.final_lr_fraction, c.teacher.final_lr_fraction), (1.0, 1.0));
    }
}
