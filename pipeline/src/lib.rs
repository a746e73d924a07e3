//! The training loop as a library (floor 5 of the design): generation after generation
//! of self-play → training → evaluation in a run directory, resumable after any kill,
//! with a summary per generation, `summary.tsv` and plots. `copper train` is a thin
//! command over [`train_loop`].

pub mod config;
pub mod distill;
pub mod evaluation;
pub mod fleet;
pub mod ladder;
pub mod reanalyse;
pub mod report;
pub mod run_dir;
pub mod run_loop;
pub mod stages;

pub use config::RunConfig;
pub use run_loop::{train_loop, train_loop_with};
pub use stages::{bench_selfplay, standalone_selfplay, RunDir};
