//! The run directory of a training run: where every file lives (the one place that
//! knows the layout), and the files that readers outside the training loop need (the
//! network's view of the start family, read by the balance study). The per-generation
//! reports the loop writes there are the `pipeline` crate's. The layout:
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
//! - `summary.tsv`, `plots/*.svg` — the run's report (see `pipeline::report`)
//! - `ladder/` — the ladder of the run's generations (see `pipeline::ladder`)

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A run directory; its methods name the files in it.
pub struct RunDir(pub PathBuf);

impl RunDir {
    fn gen(g: u32) -> String {
        format!("gen-{g:04}")
    }
    pub fn config(&self) -> PathBuf {
        self.0.join("config.toml")
    }
    pub fn selfplay(&self, g: u32) -> PathBuf {
        self.0.join("selfplay").join(Self::gen(g))
    }
    pub fn selfplay_summary(&self, g: u32) -> PathBuf {
        self.selfplay(g).join("summary.json")
    }
    pub fn teacher(&self) -> PathBuf {
        self.0.join("teacher")
    }
    pub fn model(&self, g: u32) -> PathBuf {
        self.0.join("models").join(Self::gen(g))
    }
    pub fn train_report(&self, g: u32) -> PathBuf {
        self.0.join("train").join(format!("{}.json", Self::gen(g)))
    }
    /// The evaluation matches' arena directories.
    pub fn eval_dir(&self, g: u32) -> PathBuf {
        self.0.join("eval").join(Self::gen(g))
    }
    pub fn eval_report(&self, g: u32) -> PathBuf {
        self.0.join("eval").join(format!("{}.json", Self::gen(g)))
    }
    pub fn checkpoint(&self) -> PathBuf {
        self.0.join("trainer.ckpt")
    }
    /// The model's view of the start family after generation `g` ([`StartValues`]).
    pub fn start_values(&self, g: u32) -> PathBuf {
        self.0.join("eval").join(format!("{}-starts.json", Self::gen(g)))
    }
    pub fn summary_tsv(&self) -> PathBuf {
        self.0.join("summary.tsv")
    }
    pub fn plots(&self) -> PathBuf {
        self.0.join("plots")
    }
    pub fn ladder(&self) -> PathBuf {
        self.0.join("ladder")
    }
}

/// `eval/gen-NNNN-starts.json`: what generation `g`'s network thinks of each start of the
/// variant's start family, for Black, before a move is played — how its judgement of
/// the starts' balance changes over training.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StartValues {
    pub generation: u32,
    /// The game length limit the positions were encoded with (the self-play limit).
    pub max_plies: u32,
    pub starts: Vec<StartValueEntry>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StartValueEntry {
    pub name: String,
    pub sfen: String,
    /// P(Black wins) − P(White wins).
    pub value: f32,
    pub black_win: f32,
    pub draw: f32,
    pub white_win: f32,
}
