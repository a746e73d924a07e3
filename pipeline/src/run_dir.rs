//! The run directory: where every file of a training run lives, and the per-generation
//! reports written there. The one place that knows the layout:
//!
//! - `config.toml` — the resolved configuration
//! - `teacher/` — the teacher stage's games, value-scale fit and summary (see the
//!   `teacher` crate); its shards are `selfplay/gen-0000/`, and the model trained on
//!   them is `models/gen-0000/` (it plays generation 1)
//! - `selfplay/gen-NNNN/game-*.shard` — one shard per finished game; `games.jsonl` — one
//!   line per finished game (how it ended); `summary.json`
//! - `trainer.ckpt` — trainer checkpoint (weights, optimiser, progress, sample uses)
//! - `models/gen-NNNN/` — the model trained in generation N (plays generation N+1)
//! - `train/gen-NNNN.json`, `eval/gen-NNNN.json` — training and evaluation reports
//! - `eval/gen-NNNN/<opponent>/` — the evaluation matches (arena tournaments)
//! - `eval/gen-NNNN-starts.json` — the model's view of the start family
//! - `summary.tsv`, `plots/*.svg` — the run's report (see [`crate::report`])
//! - `ladder/` — the ladder of the run's generations (see [`crate::ladder`])

use crate::evaluation::MatchResult;
use anyhow::{Context, Result};
pub use records::run_dir::RunDir;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The three reports of generation `g` in `run`, if all exist.
pub fn read_generation(run: &RunDir, g: u32) -> Result<Option<Generation>> {
    let (Some(selfplay), Some(train), Some(eval)) = (
        read_json::<SelfplaySummary>(&run.selfplay_summary(g))?,
        read_json::<TrainSummary>(&run.train_report(g))?,
        read_json::<EvalSummary>(&run.eval_report(g))?,
    ) else {
        return Ok(None);
    };
    Ok(Some(Generation { generation: g, selfplay, train, eval }))
}

/// One finished generation's reports.
#[derive(Clone, Debug)]
pub struct Generation {
    pub generation: u32,
    pub selfplay: SelfplaySummary,
    pub train: TrainSummary,
    pub eval: EvalSummary,
}

impl Generation {
    /// Seconds of self-play, training and evaluation.
    pub fn seconds(&self) -> f64 {
        self.selfplay.seconds + self.train.seconds + self.eval.seconds
    }
}

/// `selfplay/gen-NNNN/summary.json`. Counts are over all the generation's games (from
/// `games.jsonl`, so a resumed generation counts the games of every invocation); rates
/// and seconds are of the invocation that finished the generation.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct SelfplaySummary {
    pub games: u64,
    pub seconds: f64,
    pub positions_per_second: f64,
    pub simulations_per_second: f64,
    pub average_plies: f64,
    pub black_wins: u64,
    pub white_wins: u64,
    pub draws: u64,
    pub resignations: u64,
    pub false_resignations: u64,
    pub would_resign: u64,
    pub network_share: f64,
    /// Games by how they ended (`checkmate`, `resignation`, `max-plies`, …).
    #[serde(default)]
    pub endings: BTreeMap<String, u64>,
    /// Mean entropy of the network's prior at full searches (nats).
    #[serde(default)]
    pub prior_entropy: f64,
    /// Mean KL(improved policy ‖ prior) at full searches (nats): how far search moves
    /// the policy it is trained towards.
    #[serde(default)]
    pub improvement_kl: f64,
    #[serde(default)]
    pub positions: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct TrainSummary {
    pub steps: u32,
    pub train_samples: usize,
    pub validation_samples: usize,
    pub losses: Vec<trainer::StepLoss>,
    pub validation: Option<[f32; 3]>,
    pub skipped: Vec<String>,
    /// Wall-clock seconds of training (this generation, resumed parts included).
    #[serde(default)]
    pub seconds: f64,
    /// The value head on held-out games: loss beside the constant baseline, by phase,
    /// and a reliability table.
    #[serde(default)]
    pub calibration: Option<trainer::calibration::Calibration>,
    #[serde(default)]
    pub uses: trainer::UseSummary,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct EvalSummary {
    pub generation: u32,
    pub vs_previous: MatchResult,
    pub vs_uniform: MatchResult,
    /// Against the fixed anchor (`evaluation.anchor`).
    #[serde(default)]
    pub vs_anchor: Option<MatchResult>,
    pub simulations: u32,
    /// Wall-clock seconds of the evaluation matches (this invocation's).
    #[serde(default)]
    pub seconds: f64,
}

pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    records::write_atomic(path, &serde_json::to_vec_pretty(value)?).with_context(|| format!("writing {}", path.display()))
}

/// Every file under `dir`, in its subdirectories too, sorted; none if it cannot be read.
pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `None` if the file does not exist; an error naming it if it cannot be read or parsed.
pub fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(serde_json::from_slice(&b).with_context(|| format!("{} is corrupt", path.display()))?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}
