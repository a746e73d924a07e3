//! The arena: every kind of player behind one interface, matches and tournaments between
//! them, their statistics, game records, and our own USI engine.
//!
//! Layers inside the crate (each uses only the ones above it):
//! - [`thought`], [`ending`], [`limits`]: what players say, how games end, clocks;
//! - [`stats`], [`record`], [`plot`], [`baseline`], [`usi_client`], [`openings`]: the parts;
//! - [`player`], [`spec`]: the one player interface and the specs that build players;
//! - [`runner`]: games in flight on worker threads, every answer checked;
//! - [`report`], [`live`], [`tournament`]: tournaments, resumable, their reports and live views.

pub mod baseline;
pub mod ending;
pub mod limits;
pub mod live;
pub mod openings;
pub mod player;
pub mod plot;
pub mod qmix;
pub mod record;
pub mod report;
pub mod runner;
pub mod spec;
pub mod stats;
pub mod thought;
pub mod tournament;
pub mod usi_client;
pub mod usi_server;

pub use ending::{Ending, GameEnd};
pub use limits::Limit;
pub use player::Player;
pub use spec::{PlayerFactory, PlayerSpec};
pub use thought::{Score, Thought};
pub use tournament::{TournamentConfig, TournamentError};
