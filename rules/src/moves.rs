//! Moves, packed in 32 bits, and the fixed-capacity list the generator fills.

use crate::{PieceKind, Square};

/// A move of any variant:
/// - a board move (from, to, promote?),
/// - a drop of a hand piece,
/// - a pocket move (a board piece into its owner's empty pocket),
/// - a pocket drop (the pocketed piece, promoted or not, onto an empty square).
///
/// Layout: bits 0–6 `to`, 7–13 `from` or the dropped kind, 14–15 the move type, 16 promotion.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Move(u32);

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum MoveKind {
    Board { from: Square, to: Square, promote: bool },
    Drop { kind: PieceKind, to: Square },
    PocketIn { from: Square },
    PocketDrop { kind: PieceKind, to: Square },
}

const BOARD: u32 = 0;
const DROP: u32 = 1;
const POCKET_IN: u32 = 2;
const POCKET_DROP: u32 = 3;

impl Move {
    #[inline(always)]
    pub const fn board(from: Square, to: Square, promote: bool) -> Move {
        Move(to.index() as u32 | (from.index() as u32) << 7 | BOARD << 14 | (promote as u32) << 16)
    }
    #[inline(always)]
    pub const fn drop(kind: PieceKind, to: Square) -> Move {
        Move(to.index() as u32 | (kind.index() as u32) << 7 | DROP << 14)
    }
    #[inline(always)]
    pub const fn pocket_in(from: Square) -> Move {
        Move(from.index() as u32 | (from.index() as u32) << 7 | POCKET_IN << 14)
    }
    #[inline(always)]
    pub const fn pocket_drop(kind: PieceKind, to: Square) -> Move {
        Move(to.index() as u32 | (kind.index() as u32) << 7 | POCKET_DROP << 14)
    }

    #[inline(always)]
    pub fn kind(self) -> MoveKind {
        let to = Square::new_unchecked((self.0 & 127) as u8);
        let mid = ((self.0 >> 7) & 127) as u8;
        match (self.0 >> 14) & 3 {
            BOARD => MoveKind::Board { from: Square::new_unchecked(mid), to, promote: self.0 >> 16 & 1 != 0 },
            DROP => MoveKind::Drop { kind: PieceKind::from_index(mid as usize), to },
            POCKET_IN => MoveKind::PocketIn { from: to },
            _ => MoveKind::PocketDrop { kind: PieceKind::from_index(mid as usize), to },
        }
    }

    /// The square a piece lands on (for a pocket move, the square it leaves).
    #[inline(always)]
    pub const fn to(self) -> Square {
        Square::new_unchecked((self.0 & 127) as u8)
    }
    #[inline(always)]
    pub const fn is_promotion(self) -> bool {
        self.0 >> 16 & 1 != 0
    }
    #[inline(always)]
    pub const fn is_board_move(self) -> bool {
        (self.0 >> 14) & 3 == BOARD
    }
    /// A drop from hand or pocket.
    #[inline(always)]
    pub const fn is_any_drop(self) -> bool {
        let t = (self.0 >> 14) & 3;
        t == DROP || t == POCKET_DROP
    }
    /// Raw bits, stable within one build; for hashing and compact storage.
    pub const fn to_bits(self) -> u32 {
        self.0
    }
}

impl std::fmt::Debug for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.kind())
    }
}

/// Capacity of a move list: more than any position of the shipped variants can have
/// (at most 81 squares × 10 hand kinds of drops plus board, pocket and pocket-drop moves).
pub const MAX_MOVES: usize = 1536;

pub type MoveList = arrayvec::ArrayVec<Move, MAX_MOVES>;
