//! Piece kinds and pieces. Kinds are indices into a variant's piece table, so the same
//! code plays every variant; promoted forms are kinds of their own.

use crate::Color;

/// Most piece kinds (unpromoted and promoted together) a variant may define.
pub const MAX_KINDS: usize = 20;

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
    /// Compact code for the mailbox board: 0 is an empty square.
    #[inline(always)]
    pub(crate) const fn code(self) -> u8 {
        1 + self.kind.0 + (self.color as u8) * MAX_KINDS as u8
    }
    #[inline(always)]
    pub(crate) const fn from_code(c: u8) -> Option<Piece> {
        if c == 0 {
            None
        } else {
            let i = c - 1;
            let color = if i >= MAX_KINDS as u8 { Color::White } else { Color::Black };
            Some(Piece { color, kind: PieceKind(i % MAX_KINDS as u8) })
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
