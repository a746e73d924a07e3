//! How positions become network inputs and moves become policy indices, for every variant.
//!
//! Both are versioned: [`PLANES_VERSION`] and [`ACTION_VERSION`] are stored with every
//! model and training record, and a change of either layout must bump its version (a test
//! pins a fingerprint of each layout to its version).
//!
//! Everything is seen from the side to move: for White the board is rotated 180°, so the
//! side to move always plays "up the board" and a move is the same index whoever plays it.

mod action;
mod planes;

pub use action::{ActionSpace, ACTION_VERSION};
pub use planes::{InputPlanes, PlaneInfo, PLANES_VERSION};

use rules::{Color, Square};

/// Square index as seen by `side`: unchanged for Black, rotated 180° for White.
#[inline(always)]
pub(crate) fn oriented(sq: Square, side: Color, n: usize) -> usize {
    match side {
        Color::Black => sq.index(),
        Color::White => n - 1 - sq.index(),
    }
}
