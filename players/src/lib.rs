//! Every kind of player behind one interface: checkpoints with the search, the uniform-prior
//! search, the alpha-beta baseline and its evaluation, external USI engines, the specs that
//! build them, and one player behind the USI protocol. Matches and tournaments between
//! players are the `arena` crate's; the protocol's text and the client for external engines
//! are the `usi` crate's.
//!
//! Layers inside the crate (each uses only the ones above it):
//! - [`thought`], [`limits`]: what players say, clocks;
//! - [`baseline`], [`qmix`]: the alpha-beta baseline and its evaluation, and its quiescence
//!   mixed into a network's value;
//! - [`player`], [`spec`], [`allow`]: the one player interface, the specs that build
//!   players, and which programs a spec from elsewhere may start;
//! - [`usi_server`]: one player behind the USI protocol (`copper usi`).

pub mod allow;
pub mod baseline;
pub mod limits;
pub mod player;
pub mod qmix;
pub mod spec;
pub mod thought;
pub mod usi_server;

pub use allow::EngineAllowList;
pub use limits::Limit;
pub use player::Player;
pub use spec::{PlayerFactory, PlayerSpec};
pub use thought::{Score, Thought};
