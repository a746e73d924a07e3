//! Board geometry: a board's size and the square tables (rays, lines, distances, files,
//! ranks) every variant derives from it. Above [`crate::Bitboard`], which it fills.

use crate::bitboard::Bitboard;
use crate::square::{Color, Square, DIRECTIONS};

/// The entry of `Geometry::direction` for two squares not on one line.
const NO_DIRECTION: u8 = u8::MAX;

/// Board dimensions and the square tables every variant derives from them.
#[derive(Clone, Debug)]
pub struct Geometry {
    pub files: u8,
    pub ranks: u8,
    pub all: Bitboard,
    /// `rays[d][sq]`: squares from `sq` (exclusive) to the edge in direction `d`.
    pub rays: Box<[[Bitboard; 8]; 128]>,
    /// `between[a * N + b]`: squares strictly between `a` and `b` on a line, else empty.
    between: Vec<Bitboard>,
    /// `within[(sq * 8 + d) * 10 + n]`: the first `n` squares of the ray (n ≤ 9).
    within: Vec<Bitboard>,
    /// Chebyshev distance between two squares.
    distance: Vec<u8>,
    /// `direction[a * N + b]`: the direction index from `a` toward `b` when they share a
    /// rank, file or diagonal, else [`NO_DIRECTION`].
    direction: Vec<u8>,
    /// Files as masks, by file index.
    pub file_masks: Vec<Bitboard>,
    /// Ranks as masks, by rank index (0 = rank a).
    pub rank_masks: Vec<Bitboard>,
    /// `square_files[sq]`: the file of `sq` as a mask (no division in the move generator).
    square_files: Box<[Bitboard; 128]>,
}

impl Geometry {
    pub fn new(files: u8, ranks: u8) -> Geometry {
        assert!(files >= 1 && ranks >= 1 && (files as usize) * (ranks as usize) <= 128);
        let n = files as usize * ranks as usize;
        let mut g = Geometry {
            files,
            ranks,
            all: Bitboard(if n == 128 { u128::MAX } else { (1u128 << n) - 1 }),
            rays: Box::new([[Bitboard::EMPTY; 8]; 128]),
            between: vec![Bitboard::EMPTY; n * n],
            within: vec![Bitboard::EMPTY; n * 8 * 10],
            distance: vec![0; n * n],
            direction: vec![NO_DIRECTION; n * n],
            file_masks: vec![Bitboard::EMPTY; files as usize],
            rank_masks: vec![Bitboard::EMPTY; ranks as usize],
            square_files: Box::new([Bitboard::EMPTY; 128]),
        };
        for sq in g.squares() {
            let (f, r) = g.coords(sq);
            g.file_masks[f as usize].set(sq);
            g.rank_masks[r as usize].set(sq);
            for (d, &(df, dr)) in DIRECTIONS.iter().enumerate() {
                let mut line = Bitboard::EMPTY;
                // Checked: a 128-rank board's last rank is i8::MAX.
                let next = |(x, y): (i8, i8)| x.checked_add(df).zip(y.checked_add(dr));
                let mut at = next((f as i8, r as i8));
                let mut steps = 0;
                while let Some(t) = at.and_then(|(x, y)| g.square_at(x, y)) {
                    steps += 1;
                    for k in steps..10 {
                        g.within[(sq.index() * 8 + d) * 10 + k].set(t);
                    }
                    g.direction[sq.index() * n + t.index()] = d as u8;
                    if g.between[sq.index() * n + t.index()].is_empty() {
                        g.between[sq.index() * n + t.index()] = line;
                    }
                    line.set(t);
                    at = at.and_then(next);
                }
                g.rays[sq.index()][d] = line;
            }
            for t in g.squares() {
                let (tf, tr) = g.coords(t);
                g.distance[sq.index() * n + t.index()] = (tf as i8 - f as i8).unsigned_abs().max((tr as i8 - r as i8).unsigned_abs());
            }
        }
        for sq in g.squares() {
            g.square_files[sq.index()] = g.file_masks[sq.index() % files as usize];
        }
        g
    }

    /// The first `n` squares of the ray from `sq` in direction `d` (the whole ray for n ≥ 9).
    #[inline(always)]
    pub fn ray_within(&self, sq: Square, d: usize, n: u8) -> Bitboard {
        self.within[(sq.index() * 8 + d) * 10 + (n.min(9) as usize)]
    }

    #[inline(always)]
    pub fn distance(&self, a: Square, b: Square) -> u8 {
        self.distance[a.index() * self.num_squares() + b.index()]
    }

    /// Files (as a mask) holding any square of `bb`.
    #[inline(always)]
    pub fn files_of(&self, bb: Bitboard) -> Bitboard {
        // Square index = rank × files + file: fold every rank onto the first (rank r takes
        // ranks r..r+2k after the step of 2k ranks), then copy the first back over all
        // ranks, in log2(ranks) shifts each way rather than a loop over the squares.
        let w = self.files as u32;
        let ranks = self.ranks as u32;
        let mut x = bb.0;
        let mut step = 1;
        while step < ranks {
            x |= x >> (step * w);
            step *= 2;
        }
        x &= self.rank_masks[0].0;
        let mut step = 1;
        while step < ranks {
            x |= x << (step * w);
            step *= 2;
        }
        Bitboard(x & self.all.0)
    }

    #[inline(always)]
    pub fn file_of(&self, sq: Square) -> Bitboard {
        self.square_files[sq.index() & 127]
    }

    #[inline(always)]
    pub fn num_squares(&self) -> usize {
        self.files as usize * self.ranks as usize
    }

    pub fn squares(&self) -> impl Iterator<Item = Square> {
        (0..self.num_squares() as u8).map(Square::new_unchecked)
    }

    /// (file index, rank index) of a square.
    #[inline(always)]
    pub fn coords(&self, sq: Square) -> (u8, u8) {
        let i = sq.index() as u8;
        (i % self.files, i / self.files)
    }

    /// The square at (file index, rank index), if on the board.
    #[inline(always)]
    pub fn square_at(&self, file: i8, rank: i8) -> Option<Square> {
        if file >= 0 && rank >= 0 && (file as u8) < self.files && (rank as u8) < self.ranks {
            Some(Square::new_unchecked(rank as u8 * self.files + file as u8))
        } else {
            None
        }
    }

    #[inline(always)]
    pub fn ray(&self, sq: Square, dir: usize) -> Bitboard {
        self.rays[sq.index()][dir]
    }

    /// Squares strictly between `a` and `b` if they share a rank, file or diagonal.
    #[inline(always)]
    pub fn between(&self, a: Square, b: Square) -> Bitboard {
        self.between[a.index() * self.num_squares() + b.index()]
    }

    /// Rank counted from `color`'s far side: 0 is the last rank `color` moves toward.
    #[inline(always)]
    pub fn relative_rank(&self, color: Color, sq: Square) -> u8 {
        let (_, r) = self.coords(sq);
        match color {
            Color::Black => r,
            Color::White => self.ranks - 1 - r,
        }
    }

    /// The `n` ranks farthest from `color` (its promotion zone when `n` is the zone depth).
    pub fn far_ranks(&self, color: Color, n: u8) -> Bitboard {
        let mut bb = Bitboard::EMPTY;
        for sq in self.squares() {
            if self.relative_rank(color, sq) < n {
                bb.set(sq);
            }
        }
        bb
    }

    /// Square name such as `7g`.
    pub fn square_name(&self, sq: Square) -> String {
        let (f, r) = self.coords(sq);
        format!("{}{}", f + 1, (b'a' + r) as char)
    }

    /// Parses a square name such as `7g`; `None` if malformed or off this board.
    pub fn parse_square(&self, s: &str) -> Option<Square> {
        let b = s.as_bytes();
        if b.len() != 2 || !b[0].is_ascii_digit() || !b[1].is_ascii_lowercase() {
            return None;
        }
        let file = b[0] - b'0';
        if file == 0 {
            return None;
        }
        self.square_at(file as i8 - 1, (b[1] - b'a') as i8)
    }

    /// (file delta, rank delta) of a direction index.
    pub fn direction_vector(d: usize) -> (i8, i8) {
        DIRECTIONS[d]
    }

    /// Direction index from `from` toward `to` if they are aligned, with the distance.
    #[inline(always)]
    pub fn direction_to(&self, from: Square, to: Square) -> Option<(usize, u8)> {
        let i = from.index() * self.num_squares() + to.index();
        match self.direction[i] {
            NO_DIRECTION => None,
            d => Some((d as usize, self.distance[i])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table's direction and distance are those of the two squares' coordinates.
    #[test]
    fn direction_to_is_the_unit_step_between_aligned_squares() {
        for (files, ranks) in [(9, 9), (5, 5), (3, 4), (16, 8), (1, 128)] {
            let g = Geometry::new(files, ranks);
            let mut aligned = 0;
            for a in g.squares() {
                for b in g.squares() {
                    let ((f0, r0), (f1, r1)) = (g.coords(a), g.coords(b));
                    let (df, dr) = (f1 as i8 - f0 as i8, r1 as i8 - r0 as i8);
                    let expected = ((df, dr) != (0, 0) && (df == 0 || dr == 0 || df.abs() == dr.abs())).then(|| {
                        let d = DIRECTIONS.iter().position(|&x| x == (df.signum(), dr.signum())).unwrap();
                        (d, df.abs().max(dr.abs()) as u8)
                    });
                    assert_eq!(g.direction_to(a, b), expected, "{files}×{ranks}: {a:?} to {b:?}");
                    aligned += expected.is_some() as usize;
                }
            }
            assert!(aligned > 0);
        }
    }

    #[test]
    fn files_of_matches_the_files_of_each_square() {
        for (files, ranks) in [(9, 9), (5, 5), (3, 4), (1, 9), (9, 1), (11, 11), (16, 8), (8, 16), (2, 64), (1, 128)] {
            let g = Geometry::new(files, ranks);
            let mut x = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834u128;
            for _ in 0..200 {
                x = x.rotate_left(17) ^ x.wrapping_mul(0x2545_f491_4f6c_dd1d);
                let bb = Bitboard(x & g.all.0 & (x >> 7));
                let naive = bb.fold(Bitboard::EMPTY, |acc, sq| acc | g.file_masks[sq.index() % files as usize]);
                assert_eq!(g.files_of(bb), naive, "{files}×{ranks}");
                for sq in bb {
                    assert_eq!(g.file_of(sq), g.file_masks[sq.index() % files as usize]);
                }
            }
        }
    }
}
