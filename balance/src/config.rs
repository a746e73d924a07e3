//! The study file (TOML, see `configs/balance.toml`) and the command-line overrides, and
//! their resolution into tiers (players with their noise) and starts (named positions of
//! the variant's start family). Unknown keys are rejected and every check names the key.

use crate::error::{io_err, BalanceError};
use players::spec::{Kind, PlayerSpec};
use rules::{Position, Variant};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Most games per cell: job ids are `cell · 1_000_000 + game`.
pub const MAX_GAMES_PER_CELL: u32 = 999_999;
/// Most random plies before play.
pub const MAX_OPENING_PLIES: u32 = 40;

/// A balance study: every tier against itself from every start.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyConfig {
    /// Names the default output directory, `data/balance/<name>`.
    #[serde(default = "default_name")]
    pub name: String,
    #[serde(default = "default_variant")]
    pub variant: String,
    /// Strength tiers: arena player specs, e.g. `alphabeta,depth=2` or
    /// `checkpoint:DIR,sims=64,name=gen30-64` (`name=` labels the tier).
    #[serde(default)]
    pub tiers: Vec<String>,
    /// Start-family names, or `["all"]`.
    #[serde(default = "default_starts")]
    pub starts: Vec<String>,
    /// Games of each tier against itself from each start.
    #[serde(default = "default_games")]
    pub games_per_cell: u32,
    /// Game length limit in plies (a draw); 0 = the variant's.
    #[serde(default)]
    pub max_plies: u32,
    /// Random legal plies from each start before the tier plays (0 = none). It changes the
    /// start, so every table says it; a second source of variety beside `noise`.
    #[serde(default)]
    pub opening_plies: u32,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Worker threads; 0 = all cores.
    #[serde(default)]
    pub threads: usize,
    /// Games each thread keeps in flight (a network's leaves are batched across them).
    #[serde(default = "default_in_flight")]
    pub games_in_flight: usize,
    /// Output directory (default `data/balance/<name>`).
    #[serde(default)]
    pub out_dir: Option<PathBuf>,
    /// A training run directory: plots the network's value of each start over its
    /// generations (`eval/gen-NNNN-starts.json`, written by the loop).
    #[serde(default)]
    pub run_dir: Option<PathBuf>,
    /// The network that judges every game at the phase plies (`games.csv`'s `value_*`,
    /// `plots/value-by-ply.svg`); default: the first checkpoint tier's network.
    #[serde(default)]
    pub value_model: Option<PathBuf>,
    /// Extra start comparisons, each `"A,B"` (every start is compared with `seed` anyway).
    #[serde(default)]
    pub compare: Vec<String>,
    /// Rule options (NAME = "CHOICE"); the start is chosen by `starts`, not here.
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// The noise of tiers whose spec gives no `noise=`.
    #[serde(default)]
    pub noise: NoiseConfig,
}

/// Default play noise by kind of player (see `players::spec`): a player against itself
/// from one start must not replay one game.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseConfig {
    /// Checkpoints and the uniform search: the Gumbel scale (or PUCT temperature). 1.0 is
    /// what self-play uses, so the games are the kind the network was trained on.
    #[serde(default = "default_search_noise")]
    pub search: f64,
    /// Alpha-beta and greedy: uniform noise of ± this many centipawns on each root move's
    /// score. 20 cp (a fifth of a pawn) only reorders moves the baseline finds about
    /// equal, so its strength barely changes while its games diverge.
    #[serde(default = "default_baseline_noise")]
    pub baseline_cp: f64,
}

impl Default for NoiseConfig {
    fn default() -> Self {
        NoiseConfig { search: default_search_noise(), baseline_cp: default_baseline_noise() }
    }
}

impl NoiseConfig {
    /// Reads `search=X,cp=Y` (either part may be left out; `baseline_cp` is `cp`'s long name).
    pub fn parse_into(&mut self, text: &str) -> Result<(), BalanceError> {
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || BalanceError::Invalid(format!("--noise '{text}': expected search=X,cp=Y (e.g. search=1.0,cp=20)"));
            let (k, v) = part.split_once('=').ok_or_else(bad)?;
            let x: f64 = v.trim().parse().map_err(|_| bad())?;
            match k.trim() {
                "search" => self.search = x,
                "cp" | "baseline_cp" => self.baseline_cp = x,
                _ => return Err(bad()),
            }
        }
        Ok(())
    }
}

fn default_name() -> String {
    "study".into()
}
fn default_variant() -> String {
    "pocket-copper".into()
}
fn default_starts() -> Vec<String> {
    vec!["all".into()]
}
fn default_games() -> u32 {
    100
}
fn default_seed() -> u64 {
    1
}
fn default_in_flight() -> usize {
    16
}
fn default_search_noise() -> f64 {
    1.0
}
fn default_baseline_noise() -> f64 {
    20.0
}

impl Default for StudyConfig {
    fn default() -> Self {
        toml::from_str("").expect("every key has a default")
    }
}

/// Command-line settings that replace the study file's (`None`/empty: keep it).
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// Replace the tiers.
    pub tiers: Vec<String>,
    /// Replace the starts (names, or `all`).
    pub starts: Vec<String>,
    pub games_per_cell: Option<u32>,
    pub threads: Option<usize>,
    pub games_in_flight: Option<usize>,
    pub max_plies: Option<u32>,
    /// `search=X,cp=Y`.
    pub noise: Option<String>,
    pub opening_plies: Option<u32>,
    /// The seed of the noise and the opening plies.
    pub seed: Option<u64>,
    pub out_dir: Option<PathBuf>,
    pub run_dir: Option<PathBuf>,
    pub value_model: Option<PathBuf>,
    /// Added comparisons, each `A,B`.
    pub compare: Vec<String>,
}

/// One strength tier, resolved.
#[derive(Clone, Debug)]
pub struct Tier {
    pub name: String,
    /// The spec as given (what `study.toml` keeps and compares).
    pub text: String,
    /// The parsed spec with the effective noise filled in.
    pub spec: PlayerSpec,
}

impl Tier {
    /// The checkpoint directory of a network tier.
    pub fn checkpoint(&self) -> Option<&Path> {
        match &self.spec.kind {
            Kind::Checkpoint(dir) => Some(dir),
            _ => None,
        }
    }
}

/// One start, resolved.
#[derive(Clone, Debug)]
pub struct Start {
    pub name: String,
    pub sfen: String,
    pub position: Position,
}

impl StudyConfig {
    /// Reads a study file; a syntax error or an unknown key names the file.
    pub fn load(path: &Path) -> Result<StudyConfig, BalanceError> {
        let text = std::fs::read_to_string(path).map_err(io_err(path))?;
        toml::from_str(&text).map_err(|e| BalanceError::File { path: path.display().to_string(), problem: e.to_string().trim_end().to_string() })
    }

    /// The study file (if any) with the command line's settings on top, checked.
    pub fn resolve(file: Option<&Path>, o: Overrides) -> Result<StudyConfig, BalanceError> {
        let mut c = match file {
            Some(p) => StudyConfig::load(p)?,
            None => StudyConfig::default(),
        };
        if !o.tiers.is_empty() {
            c.tiers = o.tiers;
        }
        if !o.starts.is_empty() {
            c.starts = o.starts;
        }
        if let Some(n) = o.games_per_cell {
            c.games_per_cell = n;
        }
        if let Some(t) = o.threads {
            c.threads = t;
        }
        if let Some(g) = o.games_in_flight {
            c.games_in_flight = g;
        }
        if let Some(m) = o.max_plies {
            c.max_plies = m;
        }
        if let Some(n) = o.noise {
            c.noise.parse_into(&n)?;
        }
        if let Some(p) = o.opening_plies {
            c.opening_plies = p;
        }
        if let Some(s) = o.seed {
            c.seed = s;
        }
        if o.out_dir.is_some() {
            c.out_dir = o.out_dir;
        }
        if o.run_dir.is_some() {
            c.run_dir = o.run_dir;
        }
        if o.value_model.is_some() {
            c.value_model = o.value_model;
        }
        c.compare.extend(o.compare);
        c.validate()?;
        Ok(c)
    }

    /// Checks every key; the error names the key and what is allowed.
    pub fn validate(&self) -> Result<(), BalanceError> {
        let bad = |s: String| Err(BalanceError::Invalid(s));
        if self.tiers.is_empty() {
            return bad("no tiers: give tiers = [\"SPEC\", …] in the study file or --tier SPEC".into());
        }
        if !(1..=MAX_GAMES_PER_CELL).contains(&self.games_per_cell) {
            return bad(format!("games_per_cell: {} is outside 1..={MAX_GAMES_PER_CELL}", self.games_per_cell));
        }
        if self.opening_plies > MAX_OPENING_PLIES {
            return bad(format!("opening_plies: {} is outside 0..={MAX_OPENING_PLIES}", self.opening_plies));
        }
        if self.threads > 256 {
            return bad(format!("threads: {} is outside 0..=256 (0 = all cores)", self.threads));
        }
        if !(1..=4096).contains(&self.games_in_flight) {
            return bad(format!("games_in_flight: {} is outside 1..=4096", self.games_in_flight));
        }
        if !(self.noise.search.is_finite() && self.noise.search >= 0.0) {
            return bad(format!("noise.search: {} must be a number >= 0", self.noise.search));
        }
        if !(0.0..=players::spec::MAX_BASELINE_NOISE_CP).contains(&self.noise.baseline_cp) {
            return bad(format!("noise.baseline_cp: {} is outside 0..={}", self.noise.baseline_cp, players::spec::MAX_BASELINE_NOISE_CP));
        }
        if self.options.contains_key("start") {
            return bad("options.start: choose the starts with `starts` (or --starts), not the rule option".into());
        }
        if self.name.trim().is_empty() {
            return bad("name: must not be empty".into());
        }
        let variant = self.variant()?;
        if variant.match_consecutive_wins > 0 {
            return bad(format!("variant {}: decided by a match of hands with alternating colours; a balance study needs single games", variant.name));
        }
        let tiers = self.tiers()?;
        let mut names: Vec<&str> = tiers.iter().map(|t| t.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return bad(format!("tiers: two tiers are named '{}'; label them with name=…", w[0]));
        }
        let starts = self.starts_resolved()?;
        for c in &self.compare {
            let (a, b) = parse_pair(c)?;
            for s in [a, b] {
                if !starts.iter().any(|x| x.name == s) {
                    return bad(format!(
                        "compare '{c}': '{s}' is not one of the study's starts ({})",
                        starts.iter().map(|x| x.name.as_str()).collect::<Vec<_>>().join(", ")
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn variant(&self) -> Result<&'static Variant, BalanceError> {
        let options: Vec<(String, String)> = self.options.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        Ok(Variant::load(&self.variant, &options)?)
    }

    /// The tiers with their effective noise: the spec's `noise=`, else the study's
    /// default for that kind of player (none for `random` and `usi`).
    pub fn tiers(&self) -> Result<Vec<Tier>, BalanceError> {
        self.tiers.iter().map(|text| self.tier_from_text(text)).collect()
    }

    /// One tier from its spec, with the study's default noise where the spec has none.
    pub fn tier_from_text(&self, text: &str) -> Result<Tier, BalanceError> {
        let mut spec = PlayerSpec::parse(text)?.with_shipped_model(self.variant()?)?;
        if spec.noise.is_none() && spec.takes_noise() {
            let x = if spec.noise_in_centipawns() { self.noise.baseline_cp } else { self.noise.search };
            spec.noise = (x > 0.0).then_some(x);
        }
        Ok(Tier { name: spec.name.clone(), text: text.to_string(), spec })
    }

    /// The starts, in the family's order for `all`, else as listed.
    pub fn starts_resolved(&self) -> Result<Vec<Start>, BalanceError> {
        let variant = self.variant()?;
        let family = variant.start_family();
        let known = || family.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ");
        let names: Vec<String> = if self.starts.iter().any(|s| s == "all") { family.iter().map(|(n, _)| n.clone()).collect() } else { self.starts.clone() };
        if names.is_empty() {
            return Err(BalanceError::Invalid(format!("starts: empty; give start names ({}) or \"all\"", known())));
        }
        let mut out: Vec<Start> = Vec::new();
        for name in names {
            let Some((_, sfen)) = family.iter().find(|(n, _)| *n == name) else {
                return Err(BalanceError::UnknownStart { key: "starts".into(), name, variant: variant.name.clone(), known: known() });
            };
            if out.iter().any(|s| s.name == name) {
                return Err(BalanceError::Invalid(format!("starts: '{name}' is listed twice")));
            }
            let position = Position::from_sfen(variant, sfen).map_err(|e| BalanceError::Invalid(format!("start '{name}': {e}")))?;
            out.push(Start { name, sfen: sfen.clone(), position });
        }
        Ok(out)
    }

    /// The start pairs to compare at every tier: every start against `seed` (when the
    /// study has it), then the `compare` pairs, without repeats.
    pub fn comparisons(&self) -> Result<Vec<(String, String)>, BalanceError> {
        let starts = self.starts_resolved()?;
        comparison_pairs(starts.iter().map(|s| s.name.as_str()), &self.compare)
    }

    /// Worker threads (all cores for 0).
    pub fn effective_threads(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
        }
    }

    pub fn out_dir(&self) -> PathBuf {
        self.out_dir.clone().unwrap_or_else(|| Path::new("data/balance").join(&self.name))
    }
}

/// `"A,B"` as two trimmed names.
/// Every start against `seed` (when `seed` is one of `starts`), then each `extra` pair
/// `"A,B"` not already there.
pub(crate) fn comparison_pairs<'a>(starts: impl IntoIterator<Item = &'a str>, extra: &[String]) -> Result<Vec<(String, String)>, BalanceError> {
    let starts: Vec<&str> = starts.into_iter().collect();
    let mut out: Vec<(String, String)> = Vec::new();
    if starts.contains(&"seed") {
        for s in starts.iter().filter(|s| **s != "seed") {
            let p = (s.to_string(), "seed".to_string());
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    for c in extra {
        let (a, b) = parse_pair(c)?;
        let p = (a.to_string(), b.to_string());
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

fn parse_pair(text: &str) -> Result<(&str, &str), BalanceError> {
    match text.split_once(',') {
        Some((a, b)) if !a.trim().is_empty() && !b.trim().is_empty() && !b.contains(',') => Ok((a.trim(), b.trim())),
        _ => Err(BalanceError::Invalid(format!("compare '{text}': expected two start names as A,B"))),
    }
}
