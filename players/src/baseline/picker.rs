//! Move picking for the search's move loop: the same moves in the same order as selection
//! (at step i, the best-scored move of `buf[i..]`, the earliest on ties, swapped into
//! place), which the search's ties between equal history scores depend on, but in
//! O(log n) a pick through a segment tree once a node has searched more than a few moves.
//! Most nodes cut off after one or two moves, where plain selection is cheapest; a node
//! that searches all of a long list (every drop of a shogi position) paid n²/2 before.

/// Picks made by plain selection before the tree is built.
pub(crate) const LINEAR_PICKS: usize = 3;

/// A max segment tree over a move list's positions: (score, position), ties to the
/// lower position.
#[derive(Default)]
pub(crate) struct Picker {
    tree: Vec<(i32, u32)>,
    leaves: usize,
}

const NONE: (i32, u32) = (i32::MIN, u32::MAX);

#[inline(always)]
fn better(a: (i32, u32), b: (i32, u32)) -> (i32, u32) {
    if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
        b
    } else {
        a
    }
}

/// Plain selection: moves the best-scored entry of `buf[i..]` (the earliest on ties) to
/// `i` and returns its move.
#[inline(always)]
pub(crate) fn select<T: Copy>(buf: &mut [(i32, T)], i: usize) -> T {
    let mut best = i;
    for j in i + 1..buf.len() {
        if buf[j].0 > buf[best].0 {
            best = j;
        }
    }
    buf.swap(i, best);
    buf[i].1
}

impl Picker {
    /// Builds the tree over `buf[from..]`.
    pub(crate) fn build<T>(&mut self, buf: &[(i32, T)], from: usize) {
        let n = buf.len();
        self.leaves = n.next_power_of_two().max(1);
        self.tree.clear();
        self.tree.resize(2 * self.leaves, NONE);
        for (j, e) in buf.iter().enumerate().skip(from) {
            self.tree[self.leaves + j] = (e.0, j as u32);
        }
        for k in (1..self.leaves).rev() {
            self.tree[k] = better(self.tree[2 * k], self.tree[2 * k + 1]);
        }
    }

    fn set(&mut self, j: usize, v: (i32, u32)) {
        let mut k = self.leaves + j;
        self.tree[k] = v;
        while k > 1 {
            k /= 2;
            self.tree[k] = better(self.tree[2 * k], self.tree[2 * k + 1]);
        }
    }

    /// [`select`] at step `i`, for a tree built over `buf[from..]` with `from <= i` and
    /// picked through this tree at every step since `from`.
    pub(crate) fn pick<T: Copy>(&mut self, buf: &mut [(i32, T)], i: usize) -> T {
        // Every entry below i has been taken out, so the root is the best of buf[i..].
        let (_, j) = self.tree[1];
        let j = j as usize;
        buf.swap(i, j);
        // Position i leaves the tree; position j now holds what stood at i.
        self.set(i, NONE);
        if j != i {
            self.set(j, (buf[j].0, j as u32));
        }
        buf[i].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Every pick matches plain selection, over lists full of ties, built after 0 to 5
    /// plain picks.
    #[test]
    fn picks_match_plain_selection_move_for_move() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut picker = Picker::default();
        for case in 0..2000 {
            let n = rng.random_range(0..200usize);
            let spread = [1, 3, 50, 1_000_000][case % 4];
            let list: Vec<(i32, usize)> = (0..n).map(|k| (rng.random_range(0..spread), k)).collect();
            let (mut plain, mut fast) = (list.clone(), list.clone());
            let start = rng.random_range(0..6usize);
            for i in 0..n {
                let want = select(&mut plain, i);
                let got = if i < start {
                    select(&mut fast, i)
                } else {
                    if i == start {
                        picker.build(&fast, i);
                    }
                    picker.pick(&mut fast, i)
                };
                assert_eq!(got, want, "case {case}: n {n}, pick {i}");
            }
            assert_eq!(fast, plain, "case {case}");
        }
    }
}
