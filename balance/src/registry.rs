//! `study.toml`: what a study directory holds — the settings its games were played
//! under and a fixed index for every cell (tier × start) it has ever scheduled.
//!
//! Job ids are `cell index · 1_000_000 + game index`. A cell keeps its index for the life
//! of the directory, so raising `games_per_cell` only adds ids at the end of each cell and
//! adding a tier or a start only adds cells (new indices after the old ones, assigned in
//! the order of (tier name, start name)); no earlier id ever changes meaning. Settings
//! that change what a game *is* (variant and options, a tier's spec, the seed, the length
//! limit, the noise, the opening plies, a start's position) are refused on resume once
//! games played under them exist; before the first game they may still change.

use crate::config::{NoiseConfig, Start, StudyConfig, Tier};
use crate::error::{io_err, BalanceError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Games per cell in the id space: `id = cell · CELL_STRIDE + game`.
pub const CELL_STRIDE: u64 = 1_000_000;

/// The saved identity of a study directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Registry {
    pub variant: String,
    pub seed: u64,
    pub max_plies: u32,
    pub opening_plies: u32,
    /// The last requested games per cell (informational; it may change).
    pub games_per_cell: u32,
    pub options: BTreeMap<String, String>,
    pub noise: NoiseConfig,
    /// Every tier ever played here, with the spec it was played with.
    pub tiers: Vec<SavedTier>,
    /// Every start ever played here, with its position.
    pub starts: Vec<SavedStart>,
    /// Every cell ever scheduled, with its fixed index.
    pub cells: Vec<SavedCell>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedTier {
    pub name: String,
    pub spec: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedStart {
    pub name: String,
    pub sfen: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedCell {
    pub index: u64,
    pub tier: String,
    pub start: String,
}

impl Registry {
    /// The registry a fresh directory gets for `cfg`.
    fn empty(cfg: &StudyConfig) -> Registry {
        Registry {
            variant: cfg.variant.clone(),
            seed: cfg.seed,
            max_plies: cfg.max_plies,
            opening_plies: cfg.opening_plies,
            games_per_cell: cfg.games_per_cell,
            options: cfg.options.clone(),
            noise: cfg.noise,
            tiers: Vec::new(),
            starts: Vec::new(),
            cells: Vec::new(),
        }
    }

    /// Reads `dir/study.toml`; `None` for a new directory.
    pub fn load(dir: &Path) -> Result<Option<Registry>, BalanceError> {
        let path = dir.join("study.toml");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&path)(e)),
        };
        let r: Registry =
            toml::from_str(&text).map_err(|e| BalanceError::File { path: path.display().to_string(), problem: e.to_string().trim_end().to_string() })?;
        let mut seen = std::collections::HashSet::new();
        for c in &r.cells {
            if !seen.insert(c.index) || !r.tiers.iter().any(|t| t.name == c.tier) || !r.starts.iter().any(|s| s.name == c.start) {
                return Err(BalanceError::File {
                    path: path.display().to_string(),
                    problem: format!("cell {} ({} / {}) is repeated or names an unknown tier or start", c.index, c.tier, c.start),
                });
            }
        }
        Ok(Some(r))
    }

    /// A registry for reading the results of a directory that has none yet: every
    /// result in it is then foreign.
    pub fn none(cfg: &StudyConfig) -> Registry {
        Registry::empty(cfg)
    }

    /// The directory's registry extended by `cfg`'s tiers, starts and cells; an error if
    /// `cfg` changes what a game already played is. `played` says which tiers and starts
    /// have games: only those are held to their saved spec or position, and the
    /// study-wide settings only once any game exists.
    pub fn merge(dir: &Path, old: Option<Registry>, cfg: &StudyConfig, tiers: &[Tier], starts: &[Start], played: &Played) -> Result<Registry, BalanceError> {
        let mut r = old.unwrap_or_else(|| Registry::empty(cfg));
        if played.any() {
            check_same(dir, &r, cfg)?;
        } else {
            let cells = std::mem::take(&mut r.cells);
            let (saved_tiers, saved_starts) = (std::mem::take(&mut r.tiers), std::mem::take(&mut r.starts));
            r = Registry { cells, tiers: saved_tiers, starts: saved_starts, ..Registry::empty(cfg) };
        }
        r.games_per_cell = cfg.games_per_cell;
        let refuse = |what: String| BalanceError::Resume { dir: dir.display().to_string(), what };
        for t in tiers {
            match r.tiers.iter_mut().find(|s| s.name == t.name) {
                Some(s) if s.spec != t.text && played.tiers.contains(&t.name) => {
                    return Err(refuse(format!("tier '{}' was played as '{}', now '{}' (give the new spec another name=…)", t.name, s.spec, t.text)))
                }
                Some(s) => s.spec = t.text.clone(),
                None => r.tiers.push(SavedTier { name: t.name.clone(), spec: t.text.clone() }),
            }
        }
        for s in starts {
            match r.starts.iter_mut().find(|x| x.name == s.name) {
                Some(x) if x.sfen != s.sfen && played.starts.contains(&s.name) => {
                    return Err(refuse(format!("start '{}' was {}, now {}", s.name, x.sfen, s.sfen)))
                }
                Some(x) => x.sfen = s.sfen.clone(),
                None => r.starts.push(SavedStart { name: s.name.clone(), sfen: s.sfen.clone() }),
            }
        }
        let mut new: Vec<(String, String)> = Vec::new();
        for t in tiers {
            for s in starts {
                if r.cell_index(&t.name, &s.name).is_none() {
                    new.push((t.name.clone(), s.name.clone()));
                }
            }
        }
        new.sort();
        let mut next = r.cells.iter().map(|c| c.index + 1).max().unwrap_or(0);
        for (tier, start) in new {
            r.cells.push(SavedCell { index: next, tier, start });
            next += 1;
        }
        if next.saturating_mul(CELL_STRIDE) >= u64::MAX / 2 {
            return Err(refuse("too many cells".into()));
        }
        Ok(r)
    }

    pub fn cell_index(&self, tier: &str, start: &str) -> Option<u64> {
        self.cells.iter().find(|c| c.tier == tier && c.start == start).map(|c| c.index)
    }

    pub fn cell(&self, index: u64) -> Option<&SavedCell> {
        self.cells.iter().find(|c| c.index == index)
    }

    /// Writes `dir/study.toml` atomically.
    pub fn save(&self, dir: &Path) -> Result<(), BalanceError> {
        let path = dir.join("study.toml");
        let text = toml::to_string(self).map_err(|e| BalanceError::File { path: path.display().to_string(), problem: e.to_string() })?;
        let text =
            format!("# The identity of this balance study (written by `copper balance`; do not edit).\n# Job id = cell index * 1000000 + game index.\n{text}");
        records::write_atomic(&path, text.as_bytes()).map_err(io_err(&path))
    }
}

/// Which tiers and starts of a directory have games.
#[derive(Clone, Debug, Default)]
pub struct Played {
    pub tiers: std::collections::HashSet<String>,
    pub starts: std::collections::HashSet<String>,
}

impl Played {
    /// From the games read back (their cells are in `registry`).
    pub fn of(results: &[arena::runner::JobResult], registry: &Registry) -> Played {
        let mut p = Played::default();
        for r in results {
            if let Some(c) = registry.cell(r.job.id / CELL_STRIDE) {
                p.tiers.insert(c.tier.clone());
                p.starts.insert(c.start.clone());
            }
        }
        p
    }

    pub fn any(&self) -> bool {
        !self.tiers.is_empty()
    }
}

/// Refuses a configuration that changes what a game of the saved study is.
fn check_same(dir: &Path, old: &Registry, cfg: &StudyConfig) -> Result<(), BalanceError> {
    let mut diffs = Vec::new();
    if old.variant != cfg.variant {
        diffs.push(format!("variant was {}, now {}", old.variant, cfg.variant));
    }
    if old.options != cfg.options {
        diffs.push(format!("options were {:?}, now {:?}", old.options, cfg.options));
    }
    if old.seed != cfg.seed {
        diffs.push(format!("seed was {}, now {}", old.seed, cfg.seed));
    }
    if old.max_plies != cfg.max_plies {
        diffs.push(format!("max_plies was {}, now {}", old.max_plies, cfg.max_plies));
    }
    if old.noise != cfg.noise {
        diffs.push(format!("noise was search={} cp={}, now search={} cp={}", old.noise.search, old.noise.baseline_cp, cfg.noise.search, cfg.noise.baseline_cp));
    }
    if old.opening_plies != cfg.opening_plies {
        diffs.push(format!("opening_plies was {}, now {}", old.opening_plies, cfg.opening_plies));
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(BalanceError::Resume { dir: dir.display().to_string(), what: diffs.join("; ") })
    }
}
