//! The loop's two roles over a store (`store` crate; the keys are `records::run_dir::keys`):
//!
//! - a **worker** plays self-play games with the newest published model and uploads each
//!   finished game (its log line, then its shard: the shard is the commit) the moment it
//!   ends, until generation N has its `selfplay.games`, then waits for model N;
//! - the **trainer** claims each generation (`store::race`: a second trainer on the same
//!   run loses and stops), waits for its games, writes the step manifest of every
//!   finished game no earlier step consumed (write-once, so a restarted trainer consumes
//!   the same games), trains on the window of the last manifests, publishes the model
//!   (files, then the manifest with their hash) and evaluates it.
//!
//! `copper train` is both roles in one process over a local root; `copper worker` and
//! `copper trainer` run them apart, on one machine or many. Either is safe to kill at any
//! point: a game is in the store whole or not at all, a model is visible only with its
//! manifest, and a restarted role goes on from what the store holds.
//!
//! The store protocol (what each key holds, how a model is published, checked and
//! fetched, how the config is agreed) is in `protocol`; the worker role in `worker`; the
//! trainer role in `trainer`. They import the stages (`crate::stages`) and the protocol,
//! never each other; `copper train` (`crate::run_loop`) composes the two roles.

mod protocol;
mod trainer;
mod worker;

pub use protocol::{copy_for_reading, fetch_model, publish_config, stored_config, upload_report};
pub use trainer::{run_trainer, TrainerOptions};
pub use worker::{run_worker, run_worker_with, WorkerOptions, WorkerReport};
