//! Variants as data: a TOML definition (pieces in Betza notation, promotions, zones,
//! drop rules, win conditions, named options, start positions) becomes a validated
//! [`Variant`] with derived move tables in one fallible step that reports every problem.
//!
//! The shipped definitions live in `rules/variants/*.toml` and are embedded in the binary;
//! a user's file in the same format loads with [`Variant::from_toml`].
//!
//! By concern, lowest layer first (see the crate's layer list):
//! - [`spec`]: the file's schema, TOML parsing and option choices (text only);
//! - this module: the [`Variant`] type and its queries;
//! - [`build`]: spec → validated variant with move tables;
//! - [`load`]: the entry points (`from_toml`, shipped variants, interning); it sits above
//!   [`crate::sfen`] because a variant is only valid if its start positions are.

pub(crate) mod build;
pub(crate) mod load;
pub(crate) mod spec;

pub use self::spec::{Declaration, OptionSpec, VariantError, VariantSpec};
use crate::betza::Movement;
use crate::bitboard::Bitboard;
use crate::geometry::Geometry;
use crate::piece::{DropMate, Piece, PieceKind};
use crate::square::{Color, Square, DIRECTIONS};
use indexmap::IndexMap;

/// Facts about one piece kind, derived from the definition.
#[derive(Clone, Debug)]
pub struct KindInfo {
    pub name: String,
    /// SFEN/USI token for Black: `P`, `+P`, `C`, …
    pub token: String,
    pub promoted: bool,
    pub promotes_to: Option<PieceKind>,
    /// The kind a captured piece of this kind becomes in hand.
    pub unpromoted: PieceKind,
    pub royal: bool,
    pub one_per_file: bool,
    pub drop_mate: DropMate,
    pub drop_only_with_check: bool,
    pub declaration_points: u8,
    pub movement: Movement,
}

/// Move tables of one kind for one colour.
#[derive(Clone, Debug)]
pub(crate) struct KindTables {
    /// Leaper destinations by square.
    pub steps: Box<[Bitboard; 128]>,
    /// Slides as (direction, range), range `UNLIMITED` for a full rider.
    pub slides: Vec<(usize, u8)>,
    /// Squares attacked on an empty board, by square: a capture generator skips a piece
    /// that could not reach any victim even then.
    pub reach: Box<[Bitboard; 128]>,
    /// `slide_range[d]`: how far the kind slides in direction d (0 = not at all).
    pub slide_range: [u8; 8],
    /// Destinations where this kind must promote.
    pub forced_promotion: Bitboard,
    /// Squares this kind may not be dropped on.
    pub no_drop: Bitboard,
    /// Whether some move of this kind changes file (else its one-per-file rule cannot
    /// stop a board move).
    pub leaves_file: bool,
}

/// A validated variant with its derived tables.
#[derive(Debug)]
pub struct Variant {
    pub name: String,
    pub title: String,
    pub geometry: Geometry,
    pub kinds: Vec<KindInfo>,
    pub promotion_zone: [Bitboard; 2],
    pub pockets: bool,
    /// Where each side's king wins on arrival, when the flag win is on.
    pub flag_squares: Option<[Square; 2]>,
    pub declaration: Declaration,
    pub no_capture_draw_plies: u32,
    pub max_plies: u32,
    pub match_consecutive_wins: u32,
    pub start_sfen: String,
    /// Options with the chosen value of each, in definition order.
    pub options: Vec<(String, String)>,
    /// Every option's description and choices, for help text.
    pub option_specs: IndexMap<String, OptionSpec>,
    pub(crate) tables: [Vec<KindTables>; 2],
    /// Kinds that may sit in a hand (unpromoted, not royal).
    pub hand_kinds: Vec<PieceKind>,
    pub royal_kind: PieceKind,
    /// Whether any kind slides (so ray scans are needed at all).
    pub(crate) has_sliders: bool,
    /// Kinds with slides, for attack detection.
    pub(crate) slider_kinds: Vec<PieceKind>,
    /// `king_leaper_zone[sq]`: the squares from which a leap could reach a square one
    /// royal move from `sq` (every square when the royal kind slides).
    pub(crate) king_leaper_zone: Box<[Bitboard; 128]>,
    /// `leap_zone[sq]`: the squares from which a leap could reach `sq` itself (where a
    /// check by a leap can come from).
    pub(crate) leap_zone: Box<[Bitboard; 128]>,
}

impl Variant {
    #[inline(always)]
    pub fn kind(&self, k: PieceKind) -> &KindInfo {
        &self.kinds[k.index()]
    }

    #[inline(always)]
    pub(crate) fn tables(&self, c: Color, k: PieceKind) -> &KindTables {
        &self.tables[c.index()][k.index()]
    }

    /// The squares a piece of colour `c` and kind `k` on `sq` attacks on an empty board.
    #[inline(always)]
    pub fn empty_board_attacks(&self, c: Color, k: PieceKind, sq: Square) -> Bitboard {
        self.tables(c, k).reach[sq.index()]
    }

    pub fn num_kinds(&self) -> usize {
        self.kinds.len()
    }

    pub fn kinds(&self) -> impl Iterator<Item = PieceKind> + '_ {
        (0..self.kinds.len()).map(PieceKind::from_index)
    }

    /// Kind for an SFEN token such as `P` or `+R` (case ignored), if the variant has it.
    pub fn kind_by_token(&self, token: &str) -> Option<PieceKind> {
        let up = token.to_ascii_uppercase();
        self.kinds.iter().position(|k| k.token == up).map(PieceKind::from_index)
    }

    /// Whether a piece of colour `by` attacks `target` on a mailbox board (by square index),
    /// by the move tables. For checking a position as written, before it becomes a
    /// [`crate::Position`] with faster attack tests (which needs a `&'static Variant`, and
    /// start positions are checked while the variant is being built).
    pub(crate) fn attacks_on_board(&self, board: &[Option<Piece>], target: Square, by: Color) -> bool {
        let g = &self.geometry;
        let mut occupied = Bitboard::EMPTY;
        for (i, p) in board.iter().enumerate() {
            if p.is_some() {
                occupied.set(Square::new_unchecked(i as u8));
            }
        }
        board.iter().enumerate().any(|(i, p)| match p {
            Some(p) if p.color == by => {
                let from = Square::new_unchecked(i as u8);
                let t = self.tables(by, p.kind);
                t.steps[from.index()].has(target)
                    || t.slides.iter().any(|&(d, n)| g.ray_within(from, d, n).has(target) && (g.between(from, target) & occupied).is_empty())
            }
            _ => false,
        })
    }

    /// Whether the left–right mirror maps legal play onto legal play (every piece moves
    /// symmetrically and the start and special squares are symmetric).
    pub fn mirror_symmetric(&self) -> bool {
        let mirror = |m: &Movement| Movement {
            leaps: m.leaps.iter().map(|&(f, r)| (-f, r)).collect(),
            slides: m
                .slides
                .iter()
                .map(|&(d, n)| {
                    let (f, r) = DIRECTIONS[d];
                    (DIRECTIONS.iter().position(|&x| x == (-f, r)).unwrap(), n)
                })
                .collect(),
        };
        self.kinds.iter().all(|k| mirror(&k.movement) == k.movement)
    }

    /// The start positions this variant names (the choices of its `start` option), as
    /// (name, SFEN); the family the balance research compares.
    pub fn start_family(&self) -> Vec<(String, String)> {
        match self.option_specs.get("start") {
            Some(spec) => {
                spec.choices.iter().filter_map(|(name, patch)| patch.get("start").and_then(|v| v.as_str()).map(|s| (name.clone(), s.to_string()))).collect()
            }
            None => vec![("default".into(), self.start_sfen.clone())],
        }
    }
}
