//! Squares, colours and the eight ray directions: the vocabulary every other module uses.
//!
//! Coordinates follow the shogi convention: files 1..=W numbered from Black's right to
//! left, ranks a.. from White's side to Black's side. Internally a square is
//! `rank_index * W + file_index`, with `file_index = file - 1` and `rank_index = 0` for rank a.
//! The index therefore depends on the board width; a [`crate::Geometry`] converts.

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    #[inline(always)]
    pub const fn new_unchecked(i: u8) -> Square {
        debug_assert!(i < 128, "a square index is below 128");
        Square(i)
    }
    /// The square's index, below 128 (the largest board): masked, so that indexing a
    /// 128-entry table by it needs no bounds check (the mask changes no square).
    #[inline(always)]
    pub const fn index(self) -> usize {
        (self.0 & 127) as usize
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    Black = 0,
    White = 1,
}

impl Color {
    pub const BOTH: [Color; 2] = [Color::Black, Color::White];
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }
    #[inline(always)]
    pub const fn flip(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }
    pub const fn name(self) -> &'static str {
        match self {
            Color::Black => "black",
            Color::White => "white",
        }
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    #[inline(always)]
    fn not(self) -> Color {
        self.flip()
    }
}

/// The eight ray directions as (file delta, rank delta) in board coordinates
/// (file delta +1 = toward higher file numbers, rank delta +1 = toward rank i).
pub const DIRECTIONS: [(i8, i8); 8] = [(0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1)];

/// The direction pointing the other way.
#[inline(always)]
pub const fn opposite_direction(d: usize) -> usize {
    (d + 4) & 7
}

/// Whether a ray direction runs toward increasing square indices, so that its nearest
/// blocker is the lowest set bit.
#[inline(always)]
pub const fn direction_is_positive(d: usize) -> bool {
    // A bit per direction, read at every slide: cheaper than the deltas' comparisons.
    POSITIVE_DIRECTIONS >> (d & 7) & 1 != 0
}

/// Bit d set when direction d is positive: index = rank * W + file, so the rank delta
/// dominates, and with rank delta 0 the file delta decides.
const POSITIVE_DIRECTIONS: u8 = {
    let mut bits = 0u8;
    let mut d = 0;
    while d < 8 {
        let (df, dr) = DIRECTIONS[d];
        if dr > 0 || (dr == 0 && df > 0) {
            bits |= 1 << d;
        }
        d += 1;
    }
    bits
};
