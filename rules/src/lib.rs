//! Rules engine for shogi variants: Pocket Shogi Copper, standard shogi, Hand shogi and
//! minishogi, each defined as data (`rules/variants/*.toml`).
//!
//! Layers, each using only the ones before it:
//! [`betza`] → [`Variant`] → [`Position`] (one SFEN, no history) with legal move generation
//! → [`Game`] (history, repetition, results) → [`perft`]. Text enters through
//! [`Position::from_sfen`] and [`Position::parse_usi`], the only fallible steps.

pub mod betza;
mod bitboard;
mod game;
mod movegen;
mod moves;
pub mod perft;
mod piece;
mod position;
pub mod reference;
mod sfen;
mod square;
mod usi;
mod variant;
pub mod zobrist;

pub use bitboard::Bitboard;
pub use game::{Game, GameResult, HandMatch, MatchState, Outcome, TerminationReason};
pub use moves::{Move, MoveKind, MoveList, MAX_MOVES};
pub use piece::{DropMate, Piece, PieceKind, MAX_KINDS};
pub use position::Position;
pub use sfen::{piece_token, Setup, SfenError};
pub use square::{Color, Geometry, Square};
pub use usi::MoveError;
pub use variant::{builtin_source, Declaration, KindInfo, Variant, VariantError, VariantSpec, BUILTIN};
