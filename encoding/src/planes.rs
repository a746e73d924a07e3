//! Input planes: a position as a `[C, H, W]` tensor of `f32`, from the side to move's view.
//!
//! | planes | count | value |
//! |---|---|---|
//! | own pieces by kind (promoted kinds included) | K | 1 on the piece's square |
//! | opponent pieces by kind | K | 1 on the piece's square |
//! | own hand, by hand kind | Hk | count / normaliser, on every square |
//! | opponent hand, by hand kind | Hk | count / normaliser |
//! | own pocket, by pocketable kind (pocket variants only) | P | 1 everywhere if it holds that kind |
//! | opponent pocket (pocket variants only) | P | same |
//! | side to move is Black | 1 | 1 everywhere if Black |
//! | repetitions: position seen at least 2 / at least 3 times | 2 | 1 everywhere if so |
//! | game progress | 1 | ply / max plies |
//! | ones | 1 | 1 everywhere (lets convolutions see the board edge) |
//!
//! K = the variant's kinds, Hk = kinds that can be in hand, P = non-royal kinds. The
//! normaliser of a hand kind is the number of pieces of that kind in the start position
//! (both sides, board, hands and pockets; at least 1).

use crate::oriented;
use rules::{Color, Position, Variant};

/// Bump when the table above changes.
pub const PLANES_VERSION: u32 = 1;

/// One row of the plane table, for documentation and checks.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaneInfo {
    pub first: usize,
    pub count: usize,
    pub what: String,
}

/// The input-plane layout of one variant.
#[derive(Clone, Debug)]
pub struct InputPlanes {
    variant: &'static Variant,
    num_kinds: usize,
    hand_norm: Vec<f32>,
    pocket_kinds: Vec<usize>,
    /// Plane index of each kind in the pocket one-hot (usize::MAX if never pocketable).
    pocket_slot: Vec<usize>,
    num_planes: usize,
}

impl InputPlanes {
    pub fn new(variant: &'static Variant) -> InputPlanes {
        let start = Position::start(variant);
        let hand_norm = variant
            .hand_kinds
            .iter()
            .map(|&k| {
                let mut n = 0u32;
                for c in Color::BOTH {
                    n += start.hand_count(c, k) as u32;
                    n += start.pieces(c).filter(|&s| start.piece_at(s).is_some_and(|p| variant.kind(p.kind).unpromoted == k)).count() as u32;
                    n += start.pocket(c).is_some_and(|p| variant.kind(p).unpromoted == k) as u32;
                }
                n.max(1) as f32
            })
            .collect();
        let pocket_kinds: Vec<usize> =
            if variant.pockets { variant.kinds().filter(|&k| !variant.kind(k).royal).map(|k| k.index()).collect() } else { Vec::new() };
        let mut pocket_slot = vec![usize::MAX; variant.num_kinds()];
        for (i, &k) in pocket_kinds.iter().enumerate() {
            pocket_slot[k] = i;
        }
        let num_kinds = variant.num_kinds();
        let num_planes = 2 * num_kinds + 2 * variant.hand_kinds.len() + 2 * pocket_kinds.len() + 5;
        InputPlanes { variant, num_kinds, hand_norm, pocket_kinds, pocket_slot, num_planes }
    }

    pub fn variant(&self) -> &'static Variant {
        self.variant
    }
    pub fn num_planes(&self) -> usize {
        self.num_planes
    }
    /// (height, width) = (ranks, files).
    pub fn board_shape(&self) -> (usize, usize) {
        (self.variant.geometry.ranks as usize, self.variant.geometry.files as usize)
    }
    /// Floats per position: C × H × W.
    pub fn size(&self) -> usize {
        self.num_planes * self.variant.geometry.num_squares()
    }

    /// The plane table of this variant.
    pub fn describe(&self) -> Vec<PlaneInfo> {
        let k = self.num_kinds;
        let h = self.variant.hand_kinds.len();
        let p = self.pocket_kinds.len();
        let mut rows = Vec::new();
        let mut at = 0;
        let mut push = |count: usize, what: &str| {
            rows.push(PlaneInfo { first: at, count, what: what.to_string() });
            at += count;
        };
        push(k, "own pieces by kind");
        push(k, "opponent pieces by kind");
        push(h, "own hand counts");
        push(h, "opponent hand counts");
        push(p, "own pocket");
        push(p, "opponent pocket");
        push(1, "side to move is Black");
        push(2, "repetitions >= 2, >= 3");
        push(1, "game progress");
        push(1, "ones");
        rows
    }

    /// Writes the planes of `pos` into `out` (length [`InputPlanes::size`]), layout
    /// `[C, H, W]`. `repetitions` counts occurrences of this position so far (1 = first).
    pub fn encode(&self, pos: &Position, repetitions: usize, ply: usize, max_plies: u32, out: &mut [f32]) {
        let v = self.variant;
        let n = v.geometry.num_squares();
        assert_eq!(out.len(), self.size(), "plane buffer has the wrong size");
        out.fill(0.0);
        let us = pos.side_to_move();
        let k = self.num_kinds;
        for c in Color::BOTH {
            let base = if c == us { 0 } else { k };
            for sq in pos.pieces(c) {
                let p = pos.piece_at(sq).unwrap();
                out[(base + p.kind.index()) * n + oriented(sq, us, n)] = 1.0;
            }
        }
        let mut plane = 2 * k;
        let fill = |out: &mut [f32], plane: usize, value: f32| out[plane * n..(plane + 1) * n].fill(value);
        for c in [us, !us] {
            for (i, &hk) in v.hand_kinds.iter().enumerate() {
                let count = pos.hand_count(c, hk);
                if count > 0 {
                    fill(out, plane + i, count as f32 / self.hand_norm[i]);
                }
            }
            plane += v.hand_kinds.len();
        }
        for c in [us, !us] {
            if let Some(pk) = pos.pocket(c) {
                fill(out, plane + self.pocket_slot[pk.index()], 1.0);
            }
            plane += self.pocket_kinds.len();
        }
        if us == Color::Black {
            fill(out, plane, 1.0);
        }
        plane += 1;
        if repetitions >= 2 {
            fill(out, plane, 1.0);
        }
        if repetitions >= 3 {
            fill(out, plane + 1, 1.0);
        }
        plane += 2;
        fill(out, plane, (ply as f32 / max_plies.max(1) as f32).min(1.0));
        plane += 1;
        fill(out, plane, 1.0);
        debug_assert_eq!(plane + 1, self.num_planes);
    }

    /// Left–right mirror of encoded planes (file f → W−1−f on every plane).
    pub fn mirror(&self, planes: &[f32], out: &mut [f32]) {
        let (h, w) = self.board_shape();
        for c in 0..self.num_planes {
            for r in 0..h {
                for f in 0..w {
                    out[(c * h + r) * w + f] = planes[(c * h + r) * w + (w - 1 - f)];
                }
            }
        }
    }

    /// A fingerprint of the layout; tests pin it to [`PLANES_VERSION`].
    pub fn fingerprint(&self) -> String {
        let rows: Vec<String> = self.describe().iter().map(|r| format!("{}:{}", r.what, r.count)).collect();
        format!("v{} {}x{} {}", PLANES_VERSION, self.board_shape().0, self.board_shape().1, rows.join(","))
    }
}
