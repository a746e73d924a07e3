//! Rules engine for shogi variants: Pocket Shogi Copper, standard shogi, Hand shogi and
//! minishogi, each defined as data (`rules/variants/*.toml`).
//!
//! A [`Variant`] (built from its definition) → a [`Position`] (one SFEN, no history) with
//! legal move generation → a [`Game`] (history, repetition, results) → [`perft`]. Text
//! enters through [`Variant::from_toml`], [`Position::from_sfen`] and
//! [`Position::parse_usi`], the only fallible steps.
//!
//! # Layers
//!
//! Lowest first. A module uses only modules on the lines before its own, and modules on
//! one line do not use each other, so there is no import cycle (`tests/layers.rs` checks
//! every `crate::` and `super::` path of `src/` against this list):
//!
//! 1. `square` — squares, colours, the eight directions: the vocabulary of everything else.
//! 2. `bitboard` — sets of squares.
//! 3. `geometry` — a board size and the square tables derived from it, as bitboards.
//! 4. `piece` — piece kinds (indices into a variant's piece table) and pieces.
//! 5. `moves`, `zobrist` — packed moves; hash keys of board, hands and pockets.
//! 6. `betza` — piece moves in Betza notation, the one notation a definition contains.
//! 7. `variant::spec` — the definition file's schema, parsing and option choices (text only).
//! 8. `variant` — the [`Variant`] type and its queries.
//! 9. `variant::build` — definition → validated variant with its move tables.
//! 10. `sfen` — SFEN text ⇄ [`Setup`] (a position as written) and its validation, which
//!     needs a variant's pieces and tables.
//! 11. `variant::load` — [`Variant::from_toml`], the shipped variants and loading: above
//!     `sfen`, because a variant is only valid if its start positions are.
//! 12. `position` — a validated setup as bitboards, with attack tests and move making.
//! 13. `movegen` — legal moves of a position.
//! 14. `usi` — USI move text, checked against a position's legal moves.
//! 15. `game` — history, repetition, declaration, results (reports USI errors).
//! 16. `perft`, `leafcheck` — counts of the legal-move tree; the search's one- and
//!     three-ply mate checks made cheap (the same answers as `movegen`'s and `game`'s).
//!
//! The tests compare `movegen` with a slow, independent generator, the `rules-reference`
//! crate: a test oracle, so no production code depends on it, and it reads the rules
//! from the definition text rather than from the tables `variant::build` derives.

pub mod betza;
mod bitboard;
mod game;
mod geometry;
mod leafcheck;
mod movegen;
mod moves;
pub mod perft;
mod piece;
mod position;
mod sfen;
mod square;
mod usi;
mod variant;
pub mod zobrist;

pub use bitboard::Bitboard;
pub use game::{Game, GameResult, HandMatch, MatchState, Outcome, TerminationReason};
pub use geometry::Geometry;
pub use moves::{Move, MoveKind, MoveList, MAX_MOVES};
pub use piece::{DropMate, Piece, PieceKind, MAX_KINDS};
pub use position::Position;
pub use sfen::{piece_token, Setup, SfenError};
pub use square::{Color, Square};
pub use usi::MoveError;
pub use variant::load::{builtin_source, BUILTIN};
pub use variant::{Declaration, KindInfo, Variant, VariantError, VariantSpec};
