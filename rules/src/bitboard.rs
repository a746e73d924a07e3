//! A set of squares as a 128-bit mask. Boards are at most 9×9 = 81 squares, so one `u128`
//! holds any board of any variant; bit `i` is square index `i` (see [`crate::Square`]).

use crate::Square;

#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
pub struct Bitboard(pub u128);

impl Bitboard {
    pub const EMPTY: Bitboard = Bitboard(0);

    #[inline(always)]
    pub const fn from_square(sq: Square) -> Bitboard {
        Bitboard(1u128 << sq.index())
    }
    #[inline(always)]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    #[inline(always)]
    pub const fn any(self) -> bool {
        self.0 != 0
    }
    #[inline(always)]
    pub const fn has(self, sq: Square) -> bool {
        self.0 >> sq.index() & 1 != 0
    }
    #[inline(always)]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }
    /// Lowest-index square; the set must not be empty.
    #[inline(always)]
    pub const fn lowest(self) -> Square {
        Square::new_unchecked(self.0.trailing_zeros() as u8)
    }
    /// Highest-index square; the set must not be empty.
    #[inline(always)]
    pub const fn highest(self) -> Square {
        Square::new_unchecked(127 - self.0.leading_zeros() as u8)
    }
    #[inline(always)]
    pub const fn more_than_one(self) -> bool {
        self.0 & self.0.wrapping_sub(1) != 0
    }
    #[inline(always)]
    pub fn set(&mut self, sq: Square) {
        self.0 |= 1u128 << sq.index();
    }
    #[inline(always)]
    pub fn clear(&mut self, sq: Square) {
        self.0 &= !(1u128 << sq.index());
    }
    #[inline(always)]
    pub fn toggle(&mut self, sq: Square) {
        self.0 ^= 1u128 << sq.index();
    }
}

impl std::ops::BitOr for Bitboard {
    type Output = Bitboard;
    #[inline(always)]
    fn bitor(self, o: Bitboard) -> Bitboard {
        Bitboard(self.0 | o.0)
    }
}
impl std::ops::BitAnd for Bitboard {
    type Output = Bitboard;
    #[inline(always)]
    fn bitand(self, o: Bitboard) -> Bitboard {
        Bitboard(self.0 & o.0)
    }
}
impl std::ops::BitXor for Bitboard {
    type Output = Bitboard;
    #[inline(always)]
    fn bitxor(self, o: Bitboard) -> Bitboard {
        Bitboard(self.0 ^ o.0)
    }
}
impl std::ops::Not for Bitboard {
    type Output = Bitboard;
    #[inline(always)]
    fn not(self) -> Bitboard {
        Bitboard(!self.0)
    }
}
impl std::ops::BitOrAssign for Bitboard {
    #[inline(always)]
    fn bitor_assign(&mut self, o: Bitboard) {
        self.0 |= o.0
    }
}
impl std::ops::BitAndAssign for Bitboard {
    #[inline(always)]
    fn bitand_assign(&mut self, o: Bitboard) {
        self.0 &= o.0
    }
}
impl std::ops::BitXorAssign for Bitboard {
    #[inline(always)]
    fn bitxor_assign(&mut self, o: Bitboard) {
        self.0 ^= o.0
    }
}

/// Iterates the squares of a set, lowest index first.
impl Iterator for Bitboard {
    type Item = Square;
    #[inline(always)]
    fn next(&mut self) -> Option<Square> {
        // Half by half: a 128-bit trailing-zero count and borrow are several instructions
        // each, and this is the move generator's inner loop.
        let lo = self.0 as u64;
        if lo != 0 {
            self.0 = (self.0 >> 64 << 64) | (lo & (lo - 1)) as u128;
            return Some(Square::new_unchecked(lo.trailing_zeros() as u8));
        }
        let hi = (self.0 >> 64) as u64;
        if hi != 0 {
            self.0 = ((hi & (hi - 1)) as u128) << 64;
            return Some(Square::new_unchecked(64 + hi.trailing_zeros() as u8));
        }
        None
    }
}

impl std::fmt::Debug for Bitboard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bitboard({:#x})", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The iteration visits exactly the set bits, lowest first, in both halves and across
    /// the boundary between them, for sets of every density.
    #[test]
    fn iterating_a_set_yields_its_squares_in_order() {
        let mut x = 0x2545_f491_4f6c_dd1d_9e37_79b9_7f4a_7c15u128;
        let mut sets = vec![0, 1, 1 << 63, 1 << 64, 1 << 127, u128::MAX, u64::MAX as u128, !(u64::MAX as u128)];
        for _ in 0..500 {
            x = x.rotate_left(23) ^ x.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
            sets.extend([x, x & x.rotate_left(41), x & x.rotate_left(41) & x.rotate_left(83)]);
        }
        for bits in sets {
            let expected: Vec<usize> = (0..128).filter(|&i| bits >> i & 1 == 1).collect();
            let got: Vec<usize> = Bitboard(bits).map(|sq| sq.index()).collect();
            assert_eq!(got, expected, "{bits:#x}");
        }
    }
}
