//! Self-play: many games in flight per worker thread, the leaves of all of them evaluated
//! in one batched call, training records written one shard per finished game (so a
//! killed run loses no finished game).

mod config;
mod game_log;
mod play;
mod reanalyse;
mod stats;

pub use config::{ConfigError, SelfplayConfig};
pub use game_log::{entropy_and_kl, games_path, read_games, GameLine, GamesSummary, GAMES_FILE};
pub use play::{play_games, shard_path, start_positions, EndReason, FinishedGame, GameEnd, GameSink, SelfplayError, SelfplayJob};
pub use reanalyse::{reanalyse, replay, Reanalysed, ReplayError};
pub use stats::{Stats, StatsSnapshot};
