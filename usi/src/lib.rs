//! The USI protocol (Tord Romstad's text with Shogidokoro's extensions), both directions:
//!
//! - [`client`]: drives an external engine run as a subprocess (`usi`, `isready`,
//!   `position`, `go`, `stop`, …), robust to engines that crash, hang or print garbage;
//! - [`command`]: reads the commands a GUI sends to an engine (`setoption`, `position`,
//!   `go`), each argument checked and every move resolved against the rules.
//!
//! Why the engine side (our player behind USI) is not here: serving USI means running an
//! player (a checkpoint, the uniform-prior search, a baseline) on a thread, and the
//! players live in `players`, a floor above. This crate keeps to the protocol and imports
//! only `rules` (to check positions and moves), so `players` uses it for its external
//! engines and `players::usi_server` puts its players behind [`command`]'s parsers.

pub mod client;
pub mod command;

pub use client::{BestMove, EngineConfig, EngineError, EngineInfo, EngineReply, UsiEngine};
pub use command::GoCommand;
