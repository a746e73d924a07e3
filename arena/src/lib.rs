//! The arena: every kind of player behind one interface, matches and tournaments between
//! them, their statistics, and our players behind the USI protocol. The protocol's text
//! and the client for external engines are the `usi` crate's; game records and their
//! formats (SFEN, KIF, CSA) are the `gamerecords` crate's.
//!
//! Layers inside the crate (each uses only the ones above it):
//! - [`thought`], [`limits`]: what players say, clocks;
//! - [`stats`], [`plot`], [`baseline`], [`openings`]: the parts;
//! - [`player`], [`spec`]: the one player interface and the specs that build players;
//! - [`runner`]: games in flight on worker threads, every answer checked;
//! - [`report`], [`live`], [`tournament`]: tournaments, resumable, their reports and live views;
//! - [`usi_server`]: one player behind the USI protocol (`copper usi`).

pub mod baseline;
pub mod limits;
pub mod live;
pub mod openings;
pub mod player;
pub mod plot;
pub mod qmix;
pub mod report;
pub mod runner;
pub mod spec;
pub mod stats;
pub mod thought;
pub mod tournament;
pub mod usi_server;

pub use gamerecords::{Ending, GameEnd};
pub use limits::Limit;
pub use player::Player;
pub use spec::{PlayerFactory, PlayerSpec};
pub use thought::{Score, Thought};
pub use tournament::{TournamentConfig, TournamentError};
