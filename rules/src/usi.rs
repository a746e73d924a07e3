//! USI move text, with the project's extension for pockets (see `docs/NOTATION.md`):
//! - board move `7g7f`, with promotion `8h2b+`
//! - drop from hand `P*5e`
//! - pocket move (board piece into the pocket) `7g&`
//! - pocket drop `C&5e`, a promoted pocket piece `+B&5e`

use crate::moves::{Move, MoveKind};
use crate::piece::Piece;
use crate::position::Position;
use crate::variant::Variant;

/// Why a move text was refused, naming the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("move '{text}': malformed ({why})")]
    Malformed { text: String, why: String },
    #[error("move '{text}': no piece on {square}")]
    NoPiece { text: String, square: String },
    #[error("move '{text}': the piece on {square} belongs to the opponent")]
    NotYourPiece { text: String, square: String },
    #[error("move '{text}': no {piece} in hand")]
    NotInHand { text: String, piece: String },
    #[error("move '{text}': the pocket does not hold {piece}")]
    NotInPocket { text: String, piece: String },
    #[error("move '{text}': this variant has no pockets")]
    NoPockets { text: String },
    #[error("move '{text}': not legal in this position")]
    Illegal { text: String },
}

impl Variant {
    /// USI text of a move.
    pub fn move_to_usi(&self, m: Move) -> String {
        let g = &self.geometry;
        match m.kind() {
            MoveKind::Board { from, to, promote } => {
                format!("{}{}{}", g.square_name(from), g.square_name(to), if promote { "+" } else { "" })
            }
            MoveKind::Drop { kind, to } => format!("{}*{}", self.kind(kind).token, g.square_name(to)),
            MoveKind::PocketIn { from } => format!("{}&", g.square_name(from)),
            MoveKind::PocketDrop { kind, to } => format!("{}&{}", self.kind(kind).token, g.square_name(to)),
        }
    }

    /// Parses move text into a move of this variant's geometry, without a position
    /// (so without knowing whether it is legal).
    pub fn parse_usi_syntax(&self, text: &str) -> Result<Move, MoveError> {
        let g = &self.geometry;
        let bad = |why: &str| MoveError::Malformed { text: text.to_string(), why: why.to_string() };
        let sq = |s: &str| g.parse_square(s).ok_or_else(|| bad(&format!("'{s}' is not a square of this board")));
        let piece_kind = |t: &str| {
            self.kind_by_token(t)
                .filter(|_| t.chars().last().is_some_and(|c| c.is_ascii_uppercase()))
                .ok_or_else(|| bad(&format!("'{t}' is not a piece letter of this variant (upper case)")))
        };
        if !text.is_ascii() {
            return Err(bad("non-ASCII character"));
        }
        if let Some((piece, to)) = text.split_once('*') {
            let kind = piece_kind(piece)?;
            return Ok(Move::drop(kind, sq(to)?));
        }
        if let Some((left, right)) = text.split_once('&') {
            if !self.pockets {
                return Err(MoveError::NoPockets { text: text.to_string() });
            }
            return if right.is_empty() { Ok(Move::pocket_in(sq(left)?)) } else { Ok(Move::pocket_drop(piece_kind(left)?, sq(right)?)) };
        }
        let (body, promote) = match text.strip_suffix('+') {
            Some(b) => (b, true),
            None => (text, false),
        };
        if body.len() != 4 {
            return Err(bad("expected <from><to>[+], <piece>*<to>, <from>& or <piece>&<to>"));
        }
        Ok(Move::board(sq(&body[..2])?, sq(&body[2..])?, promote))
    }
}

impl Position {
    /// USI text of a move in this position.
    pub fn move_to_usi(&self, m: Move) -> String {
        self.variant.move_to_usi(m)
    }

    /// Parses move text and checks it is legal here; the error says why not.
    pub fn parse_usi(&self, text: &str) -> Result<Move, MoveError> {
        let v = self.variant;
        let m = v.parse_usi_syntax(text)?;
        let us = self.side_to_move();
        let name = |sq| v.geometry.square_name(sq);
        let own_piece = |sq| -> Result<Piece, MoveError> {
            match self.piece_at(sq) {
                None => Err(MoveError::NoPiece { text: text.to_string(), square: name(sq) }),
                Some(p) if p.color != us => Err(MoveError::NotYourPiece { text: text.to_string(), square: name(sq) }),
                Some(p) => Ok(p),
            }
        };
        match m.kind() {
            MoveKind::Board { from, .. } | MoveKind::PocketIn { from } => {
                own_piece(from)?;
            }
            MoveKind::Drop { kind, .. } => {
                if self.hand_count(us, kind) == 0 {
                    return Err(MoveError::NotInHand { text: text.to_string(), piece: v.kind(kind).name.clone() });
                }
            }
            MoveKind::PocketDrop { kind, .. } => {
                if self.pocket(us) != Some(kind) {
                    return Err(MoveError::NotInPocket { text: text.to_string(), piece: v.kind(kind).name.clone() });
                }
            }
        }
        if self.is_legal(m) {
            Ok(m)
        } else {
            Err(MoveError::Illegal { text: text.to_string() })
        }
    }
}
