//! The trainer: reads a sliding window of recent self-play shards, shuffles across the
//! window, mirrors where the rules allow, caps how often a sample is used, trains with
//! the documented loss, validates on held-out games, checkpoints atomically and resumes
//! exactly where it stopped, and exports a model for self-play.
//!
//! Loss (per sample, averaged over the batch; see `model::train`):
//! `L = −Σ_a π(a) log p(a) − Σ_{w,d,l} z log q + λ‖θ‖²`, where π is the search policy
//! target (zero for moves without a full search), p the softmax of the policy logits over
//! the legal moves, z the one-hot game result (win/draw/loss for the side to move), q the
//! value head's WDL softmax, and the L2 term is AdamW's decoupled weight decay λ. With
//! `search_value_share` s > 0, z is (1 − s)·onehot(result) + s·((1 − d)(1 + q)/2, d,
//! (1 − d)(1 − q)/2) for the search's (or the teacher's) root value q and the window's
//! share d of positions from drawn games.

pub mod calibration;
mod checkpoint;
mod config;
pub mod data;
mod train;

pub use checkpoint::{Checkpoint, CheckpointError};
pub use config::{TrainerConfig, TrainerConfigError};
pub use train::{
    game_tag, prune_uses, split_losses, start_from_model, train_generation, validation_indices, GenerationReport, SplitLosses, StepLoss, TrainError, TrainJob,
    UseSummary,
};
