//! Player specifications — how a user names a player on the command line or in a
//! tournament file — and the factories that build one player instance per arena thread.
//!
//! Grammar: `KIND[:ARG][,KEY=VALUE]*`
//!
//! | kind | ARG | keys |
//! |---|---|---|
//! | `checkpoint` | model directory (`…/models/gen-0004`); none: the variant's shipped model ([`shipped_model`]) | limit; `policy=gumbel\|puct`, `gumbel_m=N`, `c_puct=X`, `noise=X`, `mate=on\|off`, `qmix=λ`, `qscale=CP`, `precision=f32\|int8` |
//! | `uniform` | – | as checkpoint: the uniform-prior search |
//! | `random` | – | – |
//! | `greedy` | – | `noise=CP` (one-ply material); piece values |
//! | `alphabeta` | – | `depth=D` or `nodes=N` or a time limit; `tt=ENTRIES`; `noise=CP`; piece values |
//! | `usi` | engine command | limit; `option.NAME=VALUE` (repeatable), `arg=ARG` (repeatable), `dir=PATH` |
//!
//! Every kind takes `name=NAME` (how tables and records call it). A limit is one of
//! `nodes=N` (or `sims=N`), `depth=D`, `movetime=MS`, `time=MS,byoyomi=MS`,
//! `time=MS,inc=MS` (see [`Limit`]). Examples:
//! `checkpoint:data/runs/pocket-copper/models/gen-0004,sims=24`,
//! `alphabeta,depth=2`, `usi:/usr/games/fairy-stockfish,nodes=1000,name=fsf-1k`.
//!
//! `qmix=λ` (0–1, checkpoints): each leaf's value is `(1 − λ)` the network's plus `λ` the
//! alpha-beta baseline's quiescence score on a logistic scale of `qscale=CP` centipawns
//! (default [`crate::qmix::DEFAULT_QSCALE_CP`]); see [`crate::qmix`]. Off by default.
//!
//! Piece values (`alphabeta`, `greedy`): `board.KIND=CP`, `hand.KIND=CP` and
//! `pocket.KIND=CP` replace the value of a kind (by name or SFEN token:
//! `board.copper=420`, `pocket.C=380`, `hand.+p=600`) on the board, in hand or in a
//! pocket; fractions are rounded to whole centipawns. Without them the player uses the
//! default table ([`crate::baseline::values`]), so old ratings stay comparable.
//!
//! Quoting: text between double quotes is taken as it is — commas, `=`, `:` and spaces
//! included — and `""` inside quotes is one `"`; so a path or value with any of those is
//! written in quotes: `checkpoint:"data/runs/a,b=c/models/gen-0004",sims=24`,
//! `usi:"/opt/my engine",option.Book="x,y"` (on a shell command line, the whole spec in
//! single quotes). [`quote`] writes a value so. An unclosed quote is an error.
//!
//! `mate=on` turns on the search's one-ply mate check (`SearchConfig::mate_in_one`: a
//! leaf whose mover can mate or reach the flag at once is a proven win); off by default,
//! so `uniform` stays the fixed anchor earlier ladders were rated against. `mate3=D` adds
//! the three-ply mate check through checks at the nodes up to depth D of the tree (the
//! root is 0; `mate3=all`: every node; `SearchConfig::mate_in_three_depth`) and turns the
//! one-ply check on.
//!
//! `noise=X` makes a deterministic player stochastic, so that a player against itself
//! from one start does not replay one game (the balance study needs that variety):
//! - search players (`checkpoint`, `uniform`): with `policy=gumbel` (the default) the
//!   scale of the root's Gumbel noise (`SearchConfig::gumbel_scale`; 0 is evaluation
//!   play, 1.0 is what self-play uses); with `policy=puct` the move-choice temperature
//!   (`SearchConfig::temperature`: moves sampled ∝ visits^(1/X) on every move);
//! - `alphabeta` and `greedy`: uniform random noise in [−X, +X] centipawns added to each
//!   root move's score before the best is picked, drawn afresh for every move from a
//!   stream seeded per game slot (at most [`MAX_BASELINE_NOISE_CP`]);
//! - `random` is random already and `usi` engines have their own options: both refuse it.

use crate::baseline::{AlphaBeta, Baseline, Greedy, PieceValues, Random, ValueOverride, ValuePlace};
use crate::limits::Limit;
use crate::player::{BaselinePlayer, Player, SearchPlayer, UsiPlayer};
use rules::{Game, Variant};
use search::{Evaluator, RootPolicy, SearchConfig, UniformEvaluator};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use usi::client::EngineConfig;

#[derive(Debug, thiserror::Error)]
#[error("player '{spec}': {problem}")]
pub struct SpecError {
    pub spec: String,
    pub problem: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Checkpoint(PathBuf),
    Uniform,
    Random,
    Greedy,
    AlphaBeta,
    Usi(PathBuf),
}

/// A parsed player specification.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerSpec {
    /// The text it was parsed from.
    pub text: String,
    pub name: String,
    pub kind: Kind,
    pub limit: Option<Limit>,
    /// USI options (`option.NAME=VALUE`).
    pub options: Vec<(String, String)>,
    /// Engine arguments (`arg=…`) and working directory (`dir=…`).
    pub args: Vec<String>,
    pub dir: Option<PathBuf>,
    pub root_policy: RootPolicy,
    pub gumbel_m: Option<usize>,
    pub c_puct: Option<f32>,
    /// `ptemp=T`: the search's policy softmax temperature.
    pub policy_temperature: Option<f32>,
    /// `reuse=on`: each search starts from the subtree of the player's previous one.
    pub reuse_tree: bool,
    /// `mate=on`: the one-ply mate check at the search's leaves.
    pub mate_in_one: bool,
    /// `mate3=D`: the three-ply mate check at the nodes up to depth D.
    pub mate_in_three_depth: Option<u16>,
    pub tt_entries: usize,
    /// Play noise (`noise=X`, see the module documentation); `None`: none.
    pub noise: Option<f64>,
    /// Piece values replacing the default table (`board.KIND=CP`, …), in spec order.
    pub values: Vec<ValueOverride>,
    /// `qmix=λ`: the quiescence score's share of each leaf value (0: the network's alone).
    pub qmix: f32,
    /// `qscale=CP`: the logistic scale mapping that score to a value.
    pub qscale_cp: f64,
    /// `precision=int8`: the network's residual tower in 8-bit integers (calibrated at
    /// load; f32 where the CPU has neither AVX-512 VNNI nor AVX2); `f32` (the default) is
    /// the reference.
    pub precision: neteval::quant::Precision,
}

/// The most transposition-table entries a spec may ask for (each is a few words: 2^28
/// entries are several GB).
pub(crate) const MAX_TT_ENTRIES: usize = 1 << 28;

/// The largest piece value a spec may set, in centipawns: far below the mate scores.
pub(crate) const MAX_PIECE_VALUE_CP: f64 = 100_000.0;
/// `text` as one spec value: as it is when it holds nothing the spec grammar reads (no
/// comma, `=`, `:` or `"`, no space at either end, not empty), else in double quotes with
/// each `"` doubled (the quoting rule of the module documentation).
pub fn quote(text: &str) -> String {
    let plain = !text.is_empty() && !text.contains([',', '=', ':', '"']) && text.trim() == text;
    if plain {
        text.to_string()
    } else {
        format!("\"{}\"", text.replace('"', "\"\""))
    }
}

/// One comma-separated field of a spec, each character marked whether it was quoted
/// (quoted characters are never separators and never trimmed).
#[derive(Clone, Debug, Default)]
struct Field(Vec<(char, bool)>);

impl Field {
    fn text(&self) -> String {
        self.0.iter().map(|&(c, _)| c).collect()
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Without unquoted whitespace at either end.
    fn trim(self) -> Field {
        let blank = |&(c, quoted): &(char, bool)| !quoted && c.is_whitespace();
        let start = self.0.iter().position(|x| !blank(x)).unwrap_or(self.0.len());
        let end = self.0.iter().rposition(|x| !blank(x)).map_or(start, |e| e + 1);
        Field(self.0[start..end].to_vec())
    }
    /// Split at the first unquoted `sep`.
    fn split_once(&self, sep: char) -> Option<(Field, Field)> {
        let at = self.0.iter().position(|&(c, quoted)| c == sep && !quoted)?;
        Some((Field(self.0[..at].to_vec()), Field(self.0[at + 1..].to_vec())))
    }
}

/// `text` split at its unquoted commas, quotes removed (see the module documentation).
fn fields(text: &str) -> Result<Vec<Field>, String> {
    let mut fields = vec![Field::default()];
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().expect("one field at least").0.push(('"', true));
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(Field::default()),
            c => fields.last_mut().expect("one field at least").0.push((c, quoted)),
        }
    }
    if quoted {
        return Err("a quote (\") is never closed".into());
    }
    Ok(fields)
}

/// The most root-score noise a baseline takes, in centipawns: well inside the gap
/// between ordinary scores and mate scores, so noise never hides a mate.
pub const MAX_BASELINE_NOISE_CP: f64 = 1000.0;

const KNOWN_KEYS: [&str; 27] = [
    "name",
    "nodes",
    "sims",
    "simulations",
    "depth",
    "movetime",
    "time",
    "byoyomi",
    "inc",
    "arg",
    "dir",
    "policy",
    "gumbel_m",
    "c_puct",
    "ptemp",
    "reuse",
    "mate",
    "mate3",
    "tt",
    "noise",
    "qmix",
    "qscale",
    "precision",
    "option.*",
    "board.*",
    "hand.*",
    "pocket.*",
];

impl PlayerSpec {
    pub fn parse(text: &str) -> Result<PlayerSpec, SpecError> {
        let err = |problem: String| SpecError { spec: text.to_string(), problem };
        let mut parts = fields(text).map_err(err)?.into_iter().map(Field::trim);
        let head = parts.next().unwrap_or_default();
        let (kind_name, arg) = match head.split_once(':') {
            Some((k, a)) => (k.trim().text(), Some(a.trim().text())),
            None => (head.text(), None),
        };
        let kind_name = kind_name.as_str();
        let mut pairs = Vec::new();
        for p in parts.filter(|p| !p.is_empty()) {
            let (k, v) = p.split_once('=').ok_or_else(|| err(format!("'{}' is not KEY=VALUE", p.text())))?;
            let k = k.trim().text();
            let k = k.as_str();
            if !KNOWN_KEYS.contains(&k) && !k.starts_with("option.") && ValuePlace::from_key(k).is_none() {
                return Err(err(format!("unknown key '{k}' (keys: {})", KNOWN_KEYS.join(", "))));
            }
            pairs.push((k.to_string(), v.trim().text()));
        }
        let need_arg = |what: &str| arg.clone().filter(|a| !a.is_empty()).ok_or_else(|| err(format!("{kind_name} needs {what}: {kind_name}:{what}")));
        let kind = match kind_name {
            // No directory: the shipped model of the variant, found when the player is built.
            "checkpoint" | "model" => Kind::Checkpoint(arg.clone().map(PathBuf::from).unwrap_or_default()),
            "uniform" => Kind::Uniform,
            "random" => Kind::Random,
            "greedy" => Kind::Greedy,
            "alphabeta" | "ab" => Kind::AlphaBeta,
            "usi" => Kind::Usi(PathBuf::from(need_arg("an engine command")?)),
            other => return Err(err(format!("unknown kind '{other}' (checkpoint, uniform, random, greedy, alphabeta, usi)"))),
        };
        if arg.is_some() && !matches!(kind, Kind::Checkpoint(_) | Kind::Usi(_)) {
            return Err(err(format!("{kind_name} takes no ':' argument")));
        }
        let get = |k: &str| pairs.iter().rev().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let limit = Limit::from_pairs(&pairs).map_err(err)?;
        let root_policy = match get("policy").as_deref() {
            None | Some("gumbel") => RootPolicy::Gumbel,
            Some("puct") => RootPolicy::Puct,
            Some(p) => return Err(err(format!("policy={p}: expected gumbel or puct"))),
        };
        let gumbel_m = get("gumbel_m").map(|v| v.parse::<usize>().map_err(|_| err(format!("gumbel_m={v}: expected a whole number")))).transpose()?;
        let c_puct = get("c_puct")
            .map(|v| v.parse::<f32>().ok().filter(|x| x.is_finite() && *x > 0.0).ok_or_else(|| err(format!("c_puct={v}: expected a number > 0"))))
            .transpose()?;
        let policy_temperature = get("ptemp")
            .map(|v| v.parse::<f32>().ok().filter(|x| x.is_finite() && *x > 0.0).ok_or_else(|| err(format!("ptemp={v}: expected a temperature > 0"))))
            .transpose()?;
        if policy_temperature.is_some() && !matches!(kind, Kind::Checkpoint(_) | Kind::Uniform) {
            return Err(err(format!("ptemp is a search setting: {kind_name} has no search")));
        }
        let switch = |key: &str| match get(key).as_deref() {
            None | Some("off") | Some("0") | Some("false") => Ok(false),
            Some("on") | Some("1") | Some("true") => Ok(true),
            Some(x) => Err(err(format!("{key}={x}: expected on or off"))),
        };
        let reuse_tree = switch("reuse")?;
        if reuse_tree && !matches!(kind, Kind::Checkpoint(_) | Kind::Uniform) {
            return Err(err(format!("reuse=on keeps a search tree: {kind_name} has none")));
        }
        let mate_in_one = switch("mate")?;
        if mate_in_one && !matches!(kind, Kind::Checkpoint(_) | Kind::Uniform) {
            return Err(err(format!("mate=on is a search setting: {kind_name} has no search to check")));
        }
        let mate_in_three_depth = get("mate3")
            .map(|v| match v.as_str() {
                "all" => Ok(u16::MAX),
                _ => v.parse::<u16>().map_err(|_| err(format!("mate3={v}: expected a tree depth (0 is the root) or all"))),
            })
            .transpose()?;
        if mate_in_three_depth.is_some() && !matches!(kind, Kind::Checkpoint(_) | Kind::Uniform) {
            return Err(err(format!("mate3 is a search setting: {kind_name} has no search to check")));
        }
        let mate_in_one = mate_in_one || mate_in_three_depth.is_some();
        let tt_entries = get("tt")
            .map(|v| {
                v.parse::<usize>()
                    .ok()
                    .filter(|n| (1..=MAX_TT_ENTRIES).contains(n))
                    .ok_or_else(|| err(format!("tt={v}: expected a whole number of entries in 1..={MAX_TT_ENTRIES}")))
            })
            .transpose()?
            .unwrap_or(1 << 16);
        let noise = get("noise")
            .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0).ok_or_else(|| err(format!("noise={v}: expected a number >= 0"))))
            .transpose()?;
        if let Some(x) = noise {
            check_noise(&kind, x).map_err(err)?;
        }
        let qmix = get("qmix")
            .map(|v| v.parse::<f32>().ok().filter(|x| (0.0..=1.0).contains(x)).ok_or_else(|| err(format!("qmix={v}: expected a share in 0..=1"))))
            .transpose()?
            .unwrap_or(0.0);
        let qscale_cp = get("qscale")
            .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0).ok_or_else(|| err(format!("qscale={v}: expected centipawns > 0"))))
            .transpose()?
            .unwrap_or(crate::qmix::DEFAULT_QSCALE_CP);
        if (qmix > 0.0 || get("qscale").is_some()) && !matches!(kind, Kind::Checkpoint(_)) {
            return Err(err(format!("qmix and qscale mix a network's value: {kind_name} has none")));
        }
        let precision = get("precision").map(|v| v.parse::<neteval::quant::Precision>().map_err(&err)).transpose()?.unwrap_or_default();
        if get("precision").is_some() && !matches!(kind, Kind::Checkpoint(_)) {
            return Err(err(format!("precision sets a network's arithmetic: {kind_name} has none")));
        }
        let mut values = Vec::new();
        for (k, v) in &pairs {
            if let Some((place, piece)) = ValuePlace::from_key(k) {
                if !matches!(kind, Kind::AlphaBeta | Kind::Greedy) {
                    return Err(err(format!("{k}: piece values are for alphabeta and greedy, not {kind_name}")));
                }
                let centipawns = v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && x.abs() <= MAX_PIECE_VALUE_CP)
                    .ok_or_else(|| err(format!("{k}={v}: expected centipawns within ±{MAX_PIECE_VALUE_CP}")))?;
                values.push(ValueOverride { place, kind: piece.to_string(), centipawns });
            }
        }
        let default_name = match &kind {
            Kind::Checkpoint(dir) => {
                let gen = dir.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_else(|| "shipped".into());
                format!("{gen}{}", limit.map(|l| format!("-{}", l.to_spec())).unwrap_or_default())
            }
            Kind::Usi(cmd) => {
                let base = cmd.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_else(|| "engine".into());
                format!("{base}{}", limit.map(|l| format!("-{}", l.to_spec())).unwrap_or_default())
            }
            _ => format!("{kind_name}{}", limit.map(|l| format!("-{}", l.to_spec())).unwrap_or_default()),
        };
        Ok(PlayerSpec {
            text: text.to_string(),
            name: get("name").unwrap_or(default_name),
            kind,
            limit,
            options: pairs.iter().filter_map(|(k, v)| k.strip_prefix("option.").map(|n| (n.to_string(), v.clone()))).collect(),
            args: pairs.iter().filter(|(k, _)| k == "arg").map(|(_, v)| v.clone()).collect(),
            dir: get("dir").map(PathBuf::from),
            root_policy,
            gumbel_m,
            c_puct,
            policy_temperature,
            reuse_tree,
            mate_in_one,
            mate_in_three_depth,
            tt_entries,
            noise,
            values,
            qmix,
            qscale_cp,
            precision,
        })
    }

    /// Whether `noise=X` means something for this kind of player (search players and
    /// the alpha-beta and greedy baselines).
    pub fn takes_noise(&self) -> bool {
        matches!(self.kind, Kind::Checkpoint(_) | Kind::Uniform | Kind::AlphaBeta | Kind::Greedy)
    }

    /// Whether the noise is in centipawns (baselines) rather than a Gumbel scale or a
    /// temperature (search players).
    pub fn noise_in_centipawns(&self) -> bool {
        matches!(self.kind, Kind::AlphaBeta | Kind::Greedy)
    }

    /// The spec with a directory-less checkpoint pointed at the variant's shipped model, for
    /// callers that read the model directory themselves (the balance study's network view).
    pub fn with_shipped_model(mut self, variant: &Variant) -> Result<PlayerSpec, SpecError> {
        if let Kind::Checkpoint(dir) = &mut self.kind {
            *dir = model_dir(dir, variant).map_err(|problem| SpecError { spec: self.text.clone(), problem })?;
        }
        Ok(self)
    }

    /// The program this player starts (a `usi` engine's command); `None` for players that
    /// run inside this process. [`crate::allow::EngineAllowList`] decides from this, never
    /// from the spec's text.
    pub fn program(&self) -> Option<&Path> {
        match &self.kind {
            Kind::Usi(command) => Some(command),
            _ => None,
        }
    }

    /// Whether the player needs a limit from the tournament when its spec gives none.
    pub(crate) fn needs_limit(&self) -> bool {
        matches!(self.kind, Kind::Checkpoint(_) | Kind::Uniform | Kind::Usi(_))
    }
}

/// The model a checkpoint spec plays: its own directory, or none and the variant's shipped model.
fn model_dir(dir: &Path, variant: &Variant) -> Result<PathBuf, String> {
    if dir.as_os_str().is_empty() {
        shipped_model(variant)
    } else {
        Ok(dir.to_path_buf())
    }
}

/// The model shipped for `variant`: `models/<variant name>/` of the repository this
/// binary was built from, or of `$COPPER_MODELS` when set.
pub(crate) fn shipped_model(variant: &Variant) -> Result<PathBuf, String> {
    let root = std::env::var_os("COPPER_MODELS").map(PathBuf::from).unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../models"));
    let dir = root.join(&variant.name);
    if dir.join("model.json").exists() {
        Ok(dir)
    } else {
        Err(format!("no shipped model for {} (looked for {}/model.json; set COPPER_MODELS or give checkpoint:DIR)", variant.name, dir.display()))
    }
}

/// Whether `noise=X` is allowed for `kind` at this size.
fn check_noise(kind: &Kind, x: f64) -> Result<(), String> {
    match kind {
        Kind::Random => Err("random takes no noise (its moves are random already)".into()),
        Kind::Usi(_) => Err("usi engines take no noise (set the engine's own options with option.NAME=VALUE)".into()),
        Kind::AlphaBeta | Kind::Greedy if x > MAX_BASELINE_NOISE_CP => Err(format!("noise={x}: at most {MAX_BASELINE_NOISE_CP} centipawns")),
        _ => Ok(()),
    }
}

/// Builds instances of one player for the arena's threads, sharing what is loaded once
/// (a checkpoint's network).
pub struct PlayerFactory {
    pub spec: PlayerSpec,
    pub variant: &'static Variant,
    /// The effective limit (the spec's, else the tournament's default).
    pub limit: Option<Limit>,
    evaluator: Option<Arc<dyn Evaluator<Game>>>,
    /// The baselines' piece values when the spec overrides any.
    values: Option<PieceValues>,
    move_timeout: Duration,
}

impl PlayerFactory {
    /// Loads what the player needs. `threads` > 1 makes a network evaluate each batch on
    /// the calling thread only (every arena thread then runs its own batches).
    pub fn new(
        spec: PlayerSpec,
        variant: &'static Variant,
        default_limit: Option<Limit>,
        threads: usize,
        move_timeout: Duration,
    ) -> Result<PlayerFactory, SpecError> {
        let err = |problem: String| SpecError { spec: spec.text.clone(), problem };
        let limit = spec.limit.or(default_limit);
        if limit.is_none() && spec.needs_limit() {
            return Err(err("no limit: give nodes=N (sims=N), depth=D, movetime=MS or time=MS with byoyomi=MS or inc=MS".into()));
        }
        let evaluator: Option<Arc<dyn Evaluator<Game>>> = match &spec.kind {
            Kind::Checkpoint(dir) => {
                let dir = model_dir(dir, variant).map_err(err)?;
                let e = neteval::quant::load_with_precision(&dir, variant, spec.precision).map_err(|e| err(e.to_string()))?;
                let net: Arc<dyn Evaluator<Game>> = Arc::new(e.serial(threads > 1));
                if spec.qmix > 0.0 {
                    Some(Arc::new(crate::qmix::QuiescenceMix::new(net, variant, spec.qmix, spec.qscale_cp)))
                } else {
                    Some(net)
                }
            }
            Kind::Uniform => Some(Arc::new(UniformEvaluator)),
            Kind::Usi(cmd) => {
                if cmd.components().count() > 1 && !cmd.exists() {
                    return Err(err(format!("engine {} does not exist", cmd.display())));
                }
                None
            }
            _ => None,
        };
        let values = if spec.values.is_empty() {
            None
        } else {
            let mut table = PieceValues::for_variant(variant);
            table.apply(variant, &spec.values).map_err(err)?;
            Some(table)
        };
        Ok(PlayerFactory { spec, variant, limit, evaluator, values, move_timeout })
    }

    pub fn name(&self) -> &str {
        &self.spec.name
    }

    fn search_config(&self) -> SearchConfig {
        let base = match self.spec.root_policy {
            RootPolicy::Gumbel => SearchConfig::gumbel(1),
            RootPolicy::Puct => SearchConfig::puct(1),
        };
        let mut c = base.for_evaluation();
        if let Some(m) = self.spec.gumbel_m {
            c.gumbel_m = m.max(2);
        }
        if let Some(x) = self.spec.c_puct {
            c.c_puct = x;
        }
        if let Some(t) = self.spec.policy_temperature {
            c.policy_temperature = t;
        }
        c.mate_in_one = self.spec.mate_in_one;
        c.mate_in_three_depth = self.spec.mate_in_three_depth;
        if let Some(x) = self.spec.noise {
            match self.spec.root_policy {
                RootPolicy::Gumbel => c.gumbel_scale = x as f32,
                RootPolicy::Puct => c.temperature = x as f32,
            }
        }
        c
    }

    /// A new instance for one arena thread; `seed` makes its random choices reproducible.
    pub fn instance(&self, seed: u64) -> Box<dyn Player> {
        let name = self.spec.name.as_str();
        let variant = self.variant;
        match &self.spec.kind {
            Kind::Checkpoint(_) | Kind::Uniform => {
                let eval = self.evaluator.clone().expect("search players have an evaluator");
                Box::new(SearchPlayer::new(name, eval, self.search_config(), seed, self.spec.reuse_tree))
            }
            Kind::Random => Box::new(BaselinePlayer::new(name, Box::new(move |slot: u64| Box::new(Random::new(seed ^ slot)) as Box<dyn Baseline>))),
            Kind::Greedy => {
                let noise = self.spec.noise.unwrap_or(0.0);
                let values = self.values.clone();
                Box::new(BaselinePlayer::new(
                    name,
                    Box::new(move |slot: u64| {
                        let mut g = Greedy::new(variant, seed ^ slot).with_noise(noise);
                        if let Some(v) = &values {
                            g = g.with_values(variant, v.clone());
                        }
                        Box::new(g) as Box<dyn Baseline>
                    }),
                ))
            }
            Kind::AlphaBeta => {
                let tt = self.spec.tt_entries;
                let noise = self.spec.noise.unwrap_or(0.0);
                let values = self.values.clone();
                Box::new(BaselinePlayer::new(
                    name,
                    Box::new(move |slot: u64| {
                        let mut ab = AlphaBeta::new(variant, tt).with_noise(noise, seed ^ slot);
                        if let Some(v) = &values {
                            ab = ab.with_values(v.clone());
                        }
                        Box::new(ab) as Box<dyn Baseline>
                    }),
                ))
            }
            Kind::Usi(cmd) => {
                let config = EngineConfig {
                    name: name.to_string(),
                    command: cmd.clone(),
                    args: self.spec.args.clone(),
                    working_dir: self.spec.dir.clone(),
                    options: self.spec.options.clone(),
                    init_timeout: Duration::from_secs(30),
                };
                Box::new(UsiPlayer::new(name, config, self.move_timeout))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        let s = PlayerSpec::parse("usi:/usr/games/fairy-stockfish,nodes=1000,option.UCI_Variant=shogi,option.Threads=1,name=fsf").unwrap();
        assert_eq!(s.kind, Kind::Usi(PathBuf::from("/usr/games/fairy-stockfish")));
        assert_eq!(s.limit, Some(Limit::Nodes(1000)));
        assert_eq!(s.options, vec![("UCI_Variant".to_string(), "shogi".to_string()), ("Threads".to_string(), "1".to_string())]);
        assert_eq!(s.name, "fsf");
        let s = PlayerSpec::parse("alphabeta,depth=2").unwrap();
        assert_eq!((s.kind.clone(), s.limit, s.name.as_str()), (Kind::AlphaBeta, Some(Limit::Depth(2)), "alphabeta-depth=2"));
        let s = PlayerSpec::parse("checkpoint:runs/x/models/gen-0003,sims=24,policy=puct").unwrap();
        assert_eq!(s.name, "gen-0003-nodes=24");
        assert_eq!(s.root_policy, RootPolicy::Puct);
        assert_eq!(PlayerSpec::parse("random").unwrap().name, "random");
        let s = PlayerSpec::parse("alphabeta,depth=1,noise=20").unwrap();
        assert_eq!((s.noise, s.takes_noise(), s.noise_in_centipawns()), (Some(20.0), true, true));
        assert_eq!(PlayerSpec::parse("alphabeta").unwrap().noise, None);
    }

    /// Quoted text keeps its commas, `=`, `:` and spaces; `""` inside quotes is a quote;
    /// and `quote` writes any value so that it parses back to itself.
    #[test]
    fn quoted_values_keep_commas_equals_and_colons() {
        let s = PlayerSpec::parse(r#"checkpoint:"/data/a,b=c:d/gen-1",sims=4"#).unwrap();
        assert_eq!(s.kind, Kind::Checkpoint(PathBuf::from("/data/a,b=c:d/gen-1")));
        assert_eq!((s.limit, s.name.as_str()), (Some(Limit::Nodes(4)), "gen-1-nodes=4"));
        let s = PlayerSpec::parse(r#" usi : "/opt/my engine" , option.Book = " x,""y"" " ,name="a=b""#).unwrap();
        assert_eq!(s.kind, Kind::Usi(PathBuf::from("/opt/my engine")));
        assert_eq!(s.options, vec![("Book".to_string(), r#" x,"y" "#.to_string())]);
        assert_eq!(s.name, "a=b");
        for value in ["/data/a,b=c", "plain/path", " edge ", r#"q"uote"#, "", "a:b", "x,,y"] {
            let s = PlayerSpec::parse(&format!("checkpoint:{},sims=4,name={}", quote(value), quote(value))).unwrap();
            assert_eq!((s.kind, s.name.as_str()), (Kind::Checkpoint(PathBuf::from(value)), value), "{value:?} as {}", quote(value));
        }
        assert_eq!(quote("plain/path"), "plain/path");
    }

    #[test]
    fn noise_and_mate_checks_reach_the_search_configuration() {
        let v = Variant::builtin("minishogi").unwrap();
        let f = |text: &str| PlayerFactory::new(PlayerSpec::parse(text).unwrap(), v, None, 1, Duration::from_secs(1)).unwrap().search_config();
        assert_eq!(f("uniform,sims=8").gumbel_scale, 0.0);
        assert_eq!(f("uniform,sims=8,noise=1").gumbel_scale, 1.0);
        let c = f("uniform,sims=8,policy=puct,noise=0.5");
        assert_eq!((c.temperature, c.gumbel_scale), (0.5, 0.0));
        assert!(!f("uniform,sims=8").mate_in_one);
        assert!(f("uniform,sims=8,mate=on").mate_in_one);
        let c = f("uniform,sims=8,mate3=1");
        assert_eq!((c.mate_in_one, c.mate_in_three_depth), (true, Some(1)), "mate3 turns the one-ply check on");
        assert_eq!(f("uniform,sims=8").mate_in_three_depth, None);
        assert_eq!(f("uniform,sims=8,mate3=all").mate_in_three_depth, Some(u16::MAX));
    }

    #[test]
    fn piece_values_in_a_spec_replace_the_default_table() {
        let v = Variant::builtin("pocket-copper").unwrap();
        let kind = |name: &str| v.kinds().find(|&k| v.kind(k).name == name).unwrap();
        let (copper, tokin) = (kind("Copper"), kind("Tokin"));
        let default = PieceValues::for_variant(v);
        let s = PlayerSpec::parse("alphabeta,depth=1,board.copper=420,pocket.C=379.6,hand.Copper=470,board.+p=700").unwrap();
        assert_eq!(s.values.len(), 4);
        let f = PlayerFactory::new(s, v, None, 1, Duration::from_secs(1)).unwrap();
        let t = f.values.as_ref().expect("overridden");
        assert_eq!((t.board(copper), t.pocket(copper), t.hand(copper), t.board(tokin)), (420, 380, 470, 700));
        assert_eq!(t.board(kind("Gold")), default.board(kind("Gold")), "other kinds keep their value");
        assert_ne!(default.board(copper), 420);
        let f = PlayerFactory::new(PlayerSpec::parse("alphabeta,depth=1").unwrap(), v, None, 1, Duration::from_secs(1)).unwrap();
        assert!(f.values.is_none(), "no keys: the default table");

        let build = |text: &str| PlayerFactory::new(PlayerSpec::parse(text).unwrap(), v, None, 1, Duration::from_secs(1)).err().unwrap().to_string();
        assert!(build("greedy,board.dragonfly=5").contains("has no piece 'dragonfly'"));
        assert!(build("alphabeta,depth=1,hand.king=5").contains("royal"));
        for (text, says) in [("uniform,sims=8,board.pawn=1", "piece values are for alphabeta and greedy"), ("greedy,board.pawn=lots", "expected centipawns")] {
            let e = PlayerSpec::parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn a_checkpoint_without_a_directory_is_the_variants_shipped_model() {
        let s = PlayerSpec::parse("checkpoint,sims=8").unwrap();
        assert_eq!(s.kind, Kind::Checkpoint(PathBuf::new()));
        let v = Variant::builtin("pocket-copper").unwrap();
        let dir = shipped_model(v).unwrap();
        assert!(dir.ends_with("models/pocket-copper"));
        PlayerFactory::new(s, v, None, 1, Duration::from_secs(1)).expect("the shipped model loads for its variant");
        let e = shipped_model(Variant::builtin("minishogi").unwrap()).unwrap_err();
        assert!(e.contains("no shipped model for minishogi"), "{e}");
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        for (text, says) in [
            ("usi:", "needs an engine command"),
            ("random:x", "takes no ':' argument"),
            ("alphabeta,depth=two", "expected a whole number"),
            ("alphabeta,depth=99", "expected 1..=64"),
            ("alphabeta,depth=3,nodes=4", "give one limit"),
            ("uniform,sims", "not KEY=VALUE"),
            ("uniform,foo=1", "unknown key 'foo'"),
            ("knight", "unknown kind 'knight'"),
            ("uniform,policy=best", "expected gumbel or puct"),
            ("uniform,noise=-1", "expected a number >= 0"),
            ("random,noise=1", "random takes no noise"),
            ("usi:/bin/engine,noise=1", "usi engines take no noise"),
            ("alphabeta,noise=5000", "at most 1000 centipawns"),
            ("uniform,mate=maybe", "expected on or off"),
            ("uniform,mate3=-1", "expected a tree depth"),
            ("alphabeta,mate3=1", "alphabeta has no search"),
            ("uniform,sims=8,c_puct=NaN", "expected a number > 0"),
            ("uniform,sims=8,c_puct=-1", "expected a number > 0"),
            ("uniform,sims=8,ptemp=0", "expected a temperature > 0"),
            ("alphabeta,depth=2,ptemp=1.5", "ptemp is a search setting"),
            ("uniform,sims=8,reuse=maybe", "expected on or off"),
            ("greedy,reuse=on", "keeps a search tree"),
            ("alphabeta,tt=0", "entries in 1..="),
            ("alphabeta,tt=99999999999", "entries in 1..="),
            ("greedy,mate=on", "greedy has no search"),
            ("checkpoint,sims=8,qmix=2", "expected a share in 0..=1"),
            ("checkpoint,sims=8,precision=fp16", "expected f32 or int8"),
            ("uniform,sims=8,precision=int8", "uniform has none"),
            ("checkpoint,sims=8,qscale=0", "expected centipawns > 0"),
            ("uniform,sims=8,qmix=0.5", "uniform has none"),
            ("checkpoint:\"/a,b,sims=4", "never closed"),
        ] {
            let e = PlayerSpec::parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
            assert!(e.contains(text), "{text}: {e}");
        }
    }

    #[test]
    fn a_missing_limit_or_model_is_refused() {
        let v = Variant::builtin("minishogi").unwrap();
        let e = PlayerFactory::new(PlayerSpec::parse("uniform").unwrap(), v, None, 1, Duration::from_secs(1)).err().unwrap().to_string();
        assert!(e.contains("no limit"), "{e}");
        let e = PlayerFactory::new(PlayerSpec::parse("checkpoint:/nonexistent/gen-1,sims=4").unwrap(), v, None, 1, Duration::from_secs(1))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("/nonexistent/gen-1"), "{e}");
        assert!(PlayerFactory::new(PlayerSpec::parse("greedy").unwrap(), v, None, 1, Duration::from_secs(1)).is_ok());
    }
}
