//! The network's own view of the starts: what a checkpoint tier's value head says about
//! each start before a move is played (beside the scores it actually makes there), and
//! how a training run's networks judged the starts generation by generation (the loop's
//! `eval/gen-NNNN-starts.json`).

use crate::config::{Start, Tier};
use crate::error::BalanceError;
use records::run_dir::{RunDir, StartValues};
use rules::Variant;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A network's outlook at one start, for Black.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetView {
    /// P(Black wins) − P(White wins).
    pub value: f64,
    pub black_win: f64,
    pub draw: f64,
    pub white_win: f64,
}

/// The view of every checkpoint tier at every start: tier name → start name → view.
pub fn tier_views(
    tiers: &[Tier],
    starts: &[Start],
    variant: &'static Variant,
    max_plies: Option<u32>,
) -> Result<BTreeMap<String, BTreeMap<String, NetView>>, BalanceError> {
    let mut out = BTreeMap::new();
    for t in tiers {
        let Some(dir) = t.checkpoint() else { continue };
        let eval = neteval::load(dir, variant).map_err(|e| BalanceError::Network(format!("tier '{}': {e}", t.name)))?;
        let views: BTreeMap<String, NetView> = eval
            .start_values(variant, max_plies)
            .into_iter()
            .filter(|v| starts.iter().any(|s| s.name == v.name))
            .map(|v| (v.name, NetView { value: v.value as f64, black_win: v.wdl[0] as f64, draw: v.wdl[1] as f64, white_win: v.wdl[2] as f64 }))
            .collect();
        out.insert(t.name.clone(), views);
    }
    Ok(out)
}

/// Every generation's start values found in a run directory, in generation order.
/// Generations without the file (older runs, generation 0) are skipped; an unreadable
/// file is an error naming it.
pub fn run_start_values(run_dir: &Path) -> Result<Vec<StartValues>, BalanceError> {
    if !run_dir.join("config.toml").exists() {
        return Err(BalanceError::Network(format!("--run {}: not a run directory (no config.toml)", run_dir.display())));
    }
    let run = RunDir(run_dir.to_path_buf());
    let eval = run_dir.join("eval");
    let mut gens: Vec<u32> = match std::fs::read_dir(&eval) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                name.strip_prefix("gen-")?.strip_suffix("-starts.json")?.parse().ok()
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    gens.sort_unstable();
    gens.into_iter()
        .map(|g| {
            let path = run.start_values(g);
            let bytes = std::fs::read(&path).map_err(|e| BalanceError::Io { path: path.display().to_string(), error: e })?;
            serde_json::from_slice(&bytes).map_err(|e| BalanceError::Results { path: path.display().to_string(), problem: e.to_string() })
        })
        .collect()
}

/// The generation number of a checkpoint directory named like `…/gen-0012`.
pub fn generation_of(dir: &Path) -> Option<u32> {
    dir.file_name()?.to_str()?.strip_prefix("gen-")?.parse().ok()
}
