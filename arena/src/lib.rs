//! The arena: the tournament manager. Matches and tournaments between players, their
//! statistics, reports and live views. The players themselves (the one interface, the
//! specs that build them, the baseline, USI engines, `copper usi`) come from the `players`
//! crate; game records and their formats (SFEN, KIF, CSA) are the `gamerecords` crate's.
//!
//! Layers inside the crate (each uses only the ones above it):
//! - [`stats`], [`plot`], [`openings`]: the parts;
//! - [`runner`]: games in flight on worker threads, every answer checked;
//! - [`report`], [`live`], [`tournament`]: tournaments, resumable, their reports and live views.

pub mod live;
pub mod openings;
pub mod plot;
pub mod report;
pub mod runner;
pub mod stats;
pub mod tournament;

pub use gamerecords::{Ending, GameEnd};
pub use tournament::{TournamentConfig, TournamentError};
