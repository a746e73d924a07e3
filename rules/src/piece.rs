//! Piece kinds and pieces. Kinds are indices into a variant's piece table, so the same
//! code plays every variant; promoted forms are kinds of their own.

use crate::Color;

/// Most piece kinds (unpromoted and promoted together) a variant may define.
pub const MAX_KINDS: usize = 20;
/// Bits of a kind's index in a board code ([`Piece::code`]).
const KIND_BITS: u8 = 5;
const _: () = assert!(MAX_KINDS <= 1 << KIND_BITS);

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct PieceKind(pub(crate) u8);

impl PieceKind {
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    pub const fn from_index(i: usize) -> PieceKind {
        PieceKind(i as u8)
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct Piece {
    pub color: Color,
    pub kind: PieceKind,
}

impl Piece {
    pub const fn new(color: Color, kind: PieceKind) -> Piece {
        Piece { color, kind }
    }
    /// Compact code for the mailbox board: 0 is an empty square, then the kind in the low
    /// five bits and the colour above them (a shift and a mask to decode, not a division
    /// by [`MAX_KINDS`]: the move generator and the quiescence search decode every move's
    /// pieces).
    #[inline(always)]
    pub(crate) const fn code(self) -> u8 {
        1 + (self.kind.0 | (self.color as u8) << KIND_BITS)
    }
    #[inline(always)]
    pub(crate) const fn from_code(c: u8) -> Option<Piece> {
        if c == 0 {
            None
        } else {
            let i = c - 1;
            let color = if i >> KIND_BITS != 0 { Color::White } else { Color::Black };
            Some(Piece { color, kind: PieceKind(i & ((1 << KIND_BITS) - 1)) })
        }
    }
}

/// What happens when a drop of this kind gives checkmate.
#[derive(Copy, Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DropMate {
    /// No special rule.
    Allowed,
    /// The drop is not a legal move (uchifuzume in standard shogi).
    Illegal,
    /// The drop is legal and the player who made it loses at once (Pocket Shogi Copper).
    Loses,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every piece of every colour and kind has its own non-zero board code, and decodes
    /// back to itself.
    #[test]
    fn a_board_code_decodes_to_its_piece() {
        let mut seen = std::collections::HashSet::new();
        for color in Color::BOTH {
            for k in 0..MAX_KINDS {
                let p = Piece { color, kind: PieceKind::from_index(k) };
                let c = p.code();
                assert_ne!(c, 0, "{p:?}");
                assert!(seen.insert(c), "{p:?} shares code {c}");
                assert_eq!(Piece::from_code(c), Some(p));
            }
        }
        assert_eq!(Piece::from_code(0), None);
    }
}
