//! Self-play settings (the `[selfplay]` section of a run config).

use serde::{Deserialize, Serialize};

#[derive(Debug, thiserror::Error)]
#[error("selfplay.{key}: {problem}")]
pub struct ConfigError {
    pub key: &'static str,
    pub problem: String,
}

/// Every field is documented with its unit and range in `configs/default.toml`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SelfplayConfig {
    /// Games per generation.
    pub games: u32,
    /// Games in flight per worker thread; their leaves form one network batch.
    pub games_in_flight: u32,
    /// Root policy: "gumbel" or "puct".
    pub root_policy: String,
    /// Simulations of a full search (moves that become policy targets).
    pub simulations: u32,
    /// Simulations of a fast search (playout-cap randomisation); equal to `simulations` to turn it off.
    pub fast_simulations: u32,
    /// Probability that a move gets the full search.
    pub full_search_fraction: f32,
    /// Gumbel: root actions sampled (m).
    pub gumbel_m: u32,
    /// Plies in which PUCT samples its move by visit count (temperature 1); it plays the
    /// most visited move after. Gumbel keeps its noise (see `gumbel_noise_plies`).
    pub temperature_plies: u32,
    /// Gumbel: plies whose searches sample the root's actions with Gumbel noise; after
    /// them the root takes the top actions by prior and plays the Sequential Halving
    /// winner without noise (as evaluation play does). Absent: noise at every ply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gumbel_noise_plies: Option<u32>,
    /// Resign when the root value for the side to move stays below this for
    /// `resign_consecutive` of its moves; -1 turns resignation off.
    pub resign_threshold: f32,
    pub resign_consecutive: u32,
    /// Fraction of games where resignation is disabled, to measure how often it was wrong.
    pub no_resign_fraction: f32,
    /// Game length limit in plies (a draw).
    pub max_plies: u32,
    /// Start positions: names from the variant's start family, played in rotation;
    /// empty = the variant's configured start.
    pub starts: Vec<String>,
    /// Each game opens with a uniformly drawn 0..=this many uniformly random legal plies,
    /// neither searched nor recorded, so that the window holds the positions that
    /// random-ply openings (the arena's, a person's odd first moves) lead to; 0 = none.
    #[serde(default)]
    pub opening_random_plies: u32,
    /// Entries of the evaluation cache of each model, shared by the worker threads
    /// (0 = no cache).
    pub cache_entries: usize,
    /// One-ply mate check at every leaf of the search ([`search::SearchConfig::mate_in_one`]).
    /// Runs whose saved config predates this key resume without it.
    #[serde(default)]
    pub mate_in_one: bool,
    /// Three-ply mate check through checks at every leaf as well
    /// ([`search::SearchConfig::mate_in_three_depth`]); turns the one-ply check on.
    #[serde(default)]
    pub mate_in_three: bool,
    /// Gumbel: c_scale in σ(q̂) = (c_visit + max N) · c_scale · q̂, how far the
    /// improved-policy target moves from the prior towards the best completed Q.
    #[serde(default = "default_c_scale")]
    pub c_scale: f32,
    /// Gumbel: how completed Q-values are normalised before σ: "minmax" (over the node's
    /// actions, as mctx) or "bounds" (the value range [−1, 1] mapped to [0, 1]).
    #[serde(default = "default_q_norm")]
    pub q_norm: String,
    /// Which root value a position's record keeps as its search value (the value
    /// target's search share): "mean" (over all the root's simulations) or "target"
    /// (Σ π·completedQ of the policy target, [`search::SearchResult::policy_value`]).
    #[serde(default = "default_record_value")]
    pub record_value: String,
    /// Share of the alpha-beta baseline's quiescence score in every leaf value (0: the
    /// network's value alone; see `players::qmix`). The pipeline wraps the network in it.
    #[serde(default)]
    pub qmix: f32,
    /// Logistic scale, in centipawns, mapping that score to a value.
    #[serde(default = "default_qscale")]
    pub qscale: f64,
    /// Where the self-play network runs: "cpu" (each worker its own batch, the folded
    /// CPU kernels) or an accelerator ("vulkan", "wgpu", "cuda", "cuda:N"), which the workers share
    /// through a batching queue. Parsed and checked by the pipeline (`model::DeviceSpec`).
    #[serde(default = "cpu")]
    pub device: String,
    /// On an accelerator: batches in flight at once (the batching queue's servers), so
    /// that the next batch is gathered and sent while one runs.
    #[serde(default = "default_device_batches")]
    pub device_batches: u32,
    /// The arithmetic of the network's tower on the CPU: "f32" or "int8" (8-bit integer
    /// kernels on AVX-512 VNNI or AVX2, calibrated on positions the f32 network plays when
    /// each generation's model is loaded; f32 on a CPU with neither).
    #[serde(default = "f32_precision")]
    pub precision: String,
}

fn f32_precision() -> String {
    "f32".into()
}

fn default_device_batches() -> u32 {
    2
}

fn cpu() -> String {
    "cpu".into()
}

fn default_record_value() -> String {
    "mean".into()
}

fn default_q_norm() -> String {
    "minmax".into()
}

fn default_c_scale() -> f32 {
    1.0
}

fn default_qscale() -> f64 {
    1000.0
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        SelfplayConfig {
            games: 64,
            games_in_flight: 32,
            root_policy: "gumbel".into(),
            simulations: 32,
            fast_simulations: 8,
            full_search_fraction: 0.25,
            gumbel_m: 16,
            temperature_plies: 30,
            gumbel_noise_plies: None,
            resign_threshold: -0.95,
            resign_consecutive: 3,
            no_resign_fraction: 0.2,
            max_plies: 320,
            starts: Vec::new(),
            opening_random_plies: 0,
            cache_entries: 50_000,
            mate_in_one: false,
            mate_in_three: false,
            c_scale: default_c_scale(),
            q_norm: default_q_norm(),
            record_value: default_record_value(),
            qmix: 0.0,
            qscale: default_qscale(),
            device: cpu(),
            device_batches: default_device_batches(),
            precision: f32_precision(),
        }
    }
}

impl SelfplayConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key, problem: String| Err(ConfigError { key, problem });
        if self.games == 0 {
            return bad("games", "must be at least 1".into());
        }
        if !(1..=16).contains(&self.device_batches) {
            return bad("device_batches", format!("{} is outside 1..=16", self.device_batches));
        }
        if !(1..=4096).contains(&self.games_in_flight) {
            return bad("games_in_flight", format!("{} is outside 1..=4096", self.games_in_flight));
        }
        if !matches!(self.root_policy.as_str(), "gumbel" | "puct") {
            return bad("root_policy", format!("'{}' is not gumbel or puct", self.root_policy));
        }
        if !(1..=100_000).contains(&self.simulations) {
            return bad("simulations", format!("{} is outside 1..=100000", self.simulations));
        }
        if self.fast_simulations == 0 || self.fast_simulations > self.simulations {
            return bad("fast_simulations", format!("{} must be 1..=simulations ({})", self.fast_simulations, self.simulations));
        }
        for (key, v) in [("full_search_fraction", self.full_search_fraction), ("no_resign_fraction", self.no_resign_fraction)] {
            if !(0.0..=1.0).contains(&v) {
                return bad(key, format!("{v} is outside 0..=1"));
            }
        }
        if !(-1.0..=0.0).contains(&self.resign_threshold) {
            return bad("resign_threshold", format!("{} is outside -1..=0", self.resign_threshold));
        }
        if self.gumbel_m < 2 {
            return bad("gumbel_m", "must be at least 2".into());
        }
        if !(self.c_scale.is_finite() && self.c_scale > 0.0 && self.c_scale <= 100.0) {
            return bad("c_scale", format!("{} is outside (0, 100]", self.c_scale));
        }
        if !matches!(self.record_value.as_str(), "mean" | "target") {
            return bad("record_value", format!("'{}' is not mean or target", self.record_value));
        }
        if !matches!(self.precision.as_str(), "f32" | "int8") {
            return bad("precision", format!("'{}' is not f32 or int8", self.precision));
        }
        if !matches!(self.q_norm.as_str(), "minmax" | "bounds") {
            return bad("q_norm", format!("'{}' is not minmax or bounds", self.q_norm));
        }
        if !(0.0..=1.0).contains(&self.qmix) {
            return bad("qmix", format!("{} is outside 0..=1", self.qmix));
        }
        if !(self.qscale.is_finite() && self.qscale > 0.0) {
            return bad("qscale", format!("{} must be a positive number of centipawns", self.qscale));
        }
        if !(1..=65_535).contains(&self.max_plies) {
            return bad("max_plies", format!("{} is outside 1..=65535", self.max_plies));
        }
        if self.opening_random_plies > 40 || self.opening_random_plies >= self.max_plies {
            return bad("opening_random_plies", format!("{} is outside 0..=40 or not below max_plies ({})", self.opening_random_plies, self.max_plies));
        }
        Ok(())
    }

    /// The search of the move at `ply` (plies played before it): full or fast, with the
    /// exploration schedule — PUCT samples by visit count for `temperature_plies` plies
    /// and plays the most visited move after (Dirichlet noise stays); Gumbel keeps its
    /// noise for `gumbel_noise_plies` (every ply when absent): it is the sampling that
    /// makes Sequential Halving a policy improvement, and without it uninformed early
    /// networks tie-break into cycles.
    pub fn search_config(&self, full: bool, ply: usize) -> search::SearchConfig {
        let mut c = self.search_budget(full);
        if ply as u64 >= self.temperature_plies as u64 {
            c.temperature = 0.0;
        }
        if self.gumbel_noise_plies.is_some_and(|n| ply as u64 >= n as u64) {
            c.gumbel_scale = 0.0;
        }
        c
    }

    fn search_budget(&self, full: bool) -> search::SearchConfig {
        let n = if full { self.simulations } else { self.fast_simulations };
        let mut c = if self.root_policy == "puct" { search::SearchConfig::puct(n) } else { search::SearchConfig::gumbel(n) };
        c.gumbel_m = self.gumbel_m as usize;
        c.c_scale = self.c_scale;
        c.q_norm = if self.q_norm == "bounds" { search::QNorm::Bounds } else { search::QNorm::MinMax };
        c.mate_in_one = self.mate_in_one || self.mate_in_three;
        c.mate_in_three_depth = self.mate_in_three.then_some(u16::MAX);
        c
    }

    /// The player-spec keys that make an arena player search as self-play does:
    /// `,mate=on` (or `,mate3=all`) and `,qmix=X,qscale=Y` where set.
    pub fn search_spec_keys(&self) -> String {
        let mut s = String::new();
        if self.mate_in_three {
            s += ",mate3=all";
        } else if self.mate_in_one {
            s += ",mate=on";
        }
        if self.qmix > 0.0 {
            s += &format!(",qmix={},qscale={}", self.qmix, self.qscale);
        }
        s
    }
}
