//! The action space: the only place where a move becomes a policy index.
//!
//! The policy is a stack of planes over the board, `[A, H, W]` flattened plane-major, so
//! a convolutional head can output it directly. Plane groups, all from the side to
//! move's view (White's moves rotated 180°):
//!
//! | planes | indexed square | one plane per |
//! |---|---|---|
//! | board moves without promotion | origin | displacement (df, dr) any piece can make |
//! | board moves with promotion | origin | displacement any promotable piece can make |
//! | drops from hand | destination | hand kind |
//! | pocket drops (pocket variants) | destination | non-royal kind (promoted kinds included) |
//! | pocket moves (pocket variants) | origin | — (one plane) |
//!
//! Displacements are derived from the variant's Betza moves: every leap, and every
//! multiple of every slide that fits on the board.

use crate::oriented;
use rules::{Color, Move, MoveKind, PieceKind, Position, Square, Variant};

/// Bump when the layout above changes.
pub const ACTION_VERSION: u32 = 1;

const SPAN: i32 = 17; // displacements -8..=8 on each axis

#[derive(Clone, Debug)]
pub struct ActionSpace {
    variant: &'static Variant,
    n: usize,
    /// Displacements (df, dr) of the plain-move planes, as Black sees them.
    displacements: Vec<(i8, i8)>,
    /// `plain_plane[(dr+8)*17 + df+8]`, `promo_plane[..]`: plane of a displacement.
    plain_plane: Vec<Option<u16>>,
    promo_plane: Vec<Option<u16>>,
    promo_displacements: Vec<(i8, i8)>,
    drop_base: usize,
    pocket_drop_base: usize,
    /// Plane offset (from pocket_drop_base) of each kind.
    pocket_slot: Vec<Option<u16>>,
    pocket_kinds: Vec<PieceKind>,
    pocket_in_plane: Option<usize>,
    num_planes: usize,
}

fn slot(df: i32, dr: i32) -> usize {
    ((dr + 8) * SPAN + df + 8) as usize
}

impl ActionSpace {
    pub fn new(variant: &'static Variant) -> ActionSpace {
        let g = &variant.geometry;
        let reach = g.files.max(g.ranks) as i32 - 1;
        let mut plain = std::collections::BTreeSet::new();
        let mut promo = std::collections::BTreeSet::new();
        for k in variant.kinds() {
            let info = variant.kind(k);
            let mut disp = Vec::new();
            for &(df, dr) in &info.movement.leaps {
                if (df as i32).abs() <= reach && (dr as i32).abs() <= reach {
                    disp.push((df, dr));
                }
            }
            for &(d, range) in &info.movement.slides {
                let (df, dr) = rules::Geometry::direction_vector(d);
                for step in 1..=(range as i32).min(reach) {
                    disp.push(((df as i32 * step) as i8, (dr as i32 * step) as i8));
                }
            }
            plain.extend(disp.iter().copied());
            if info.promotes_to.is_some() {
                promo.extend(disp.iter().copied());
            }
        }
        let displacements: Vec<(i8, i8)> = plain.into_iter().collect();
        let promo_displacements: Vec<(i8, i8)> = promo.into_iter().collect();
        let mut plain_plane = vec![None; (SPAN * SPAN) as usize];
        let mut promo_plane = vec![None; (SPAN * SPAN) as usize];
        for (i, &(df, dr)) in displacements.iter().enumerate() {
            plain_plane[slot(df as i32, dr as i32)] = Some(i as u16);
        }
        for (i, &(df, dr)) in promo_displacements.iter().enumerate() {
            promo_plane[slot(df as i32, dr as i32)] = Some((displacements.len() + i) as u16);
        }
        let drop_base = displacements.len() + promo_displacements.len();
        let pocket_drop_base = drop_base + variant.hand_kinds.len();
        let pocket_kinds: Vec<PieceKind> = if variant.pockets { variant.kinds().filter(|&k| !variant.kind(k).royal).collect() } else { Vec::new() };
        let mut pocket_slot = vec![None; variant.num_kinds()];
        for (i, k) in pocket_kinds.iter().enumerate() {
            pocket_slot[k.index()] = Some(i as u16);
        }
        let pocket_in_plane = variant.pockets.then_some(pocket_drop_base + pocket_kinds.len());
        let num_planes = pocket_drop_base + pocket_kinds.len() + usize::from(variant.pockets);
        ActionSpace {
            variant,
            n: g.num_squares(),
            displacements,
            plain_plane,
            promo_plane,
            promo_displacements,
            drop_base,
            pocket_drop_base,
            pocket_slot,
            pocket_kinds,
            pocket_in_plane,
            num_planes,
        }
    }

    pub fn num_planes(&self) -> usize {
        self.num_planes
    }
    /// Number of policy logits: planes × squares.
    pub fn size(&self) -> usize {
        self.num_planes * self.n
    }

    /// Policy index of a legal move of the side to move `side`.
    pub fn encode(&self, side: Color, m: Move) -> usize {
        let g = &self.variant.geometry;
        let n = self.n;
        match m.kind() {
            MoveKind::Board { from, to, promote } => {
                let (f0, r0) = g.coords(from);
                let (f1, r1) = g.coords(to);
                let (mut df, mut dr) = (f1 as i32 - f0 as i32, r1 as i32 - r0 as i32);
                if side == Color::White {
                    df = -df;
                    dr = -dr;
                }
                let table = if promote { &self.promo_plane } else { &self.plain_plane };
                let plane = table[slot(df, dr)].expect("a legal move's displacement is in the action space") as usize;
                plane * n + oriented(from, side, n)
            }
            MoveKind::Drop { kind, to } => {
                let i = self.variant.hand_kinds.iter().position(|&k| k == kind).expect("drops are of hand kinds");
                (self.drop_base + i) * n + oriented(to, side, n)
            }
            MoveKind::PocketDrop { kind, to } => {
                let i = self.pocket_slot[kind.index()].expect("pocketable kind") as usize;
                (self.pocket_drop_base + i) * n + oriented(to, side, n)
            }
            MoveKind::PocketIn { from } => self.pocket_in_plane.expect("pocket variant") * n + oriented(from, side, n),
        }
    }

    /// The move an index stands for when `side` is to move (structurally: it may not be
    /// legal); `None` if the index names no move on this board.
    pub fn decode(&self, side: Color, index: usize) -> Option<Move> {
        let g = &self.variant.geometry;
        let n = self.n;
        if index >= self.size() {
            return None;
        }
        let (plane, sq) = (index / n, index % n);
        let square = |i: usize| Square::new_unchecked(if side == Color::Black { i } else { n - 1 - i } as u8);
        let board_move = |(df, dr): (i8, i8), promote: bool| {
            let from = square(sq);
            let (f0, r0) = g.coords(from);
            let (df, dr) = if side == Color::White { (-df, -dr) } else { (df, dr) };
            g.square_at(f0 as i8 + df, r0 as i8 + dr).map(|to| Move::board(from, to, promote))
        };
        if plane < self.displacements.len() {
            board_move(self.displacements[plane], false)
        } else if plane < self.drop_base {
            board_move(self.promo_displacements[plane - self.displacements.len()], true)
        } else if plane < self.pocket_drop_base {
            Some(Move::drop(self.variant.hand_kinds[plane - self.drop_base], square(sq)))
        } else if plane < self.pocket_drop_base + self.pocket_kinds.len() {
            Some(Move::pocket_drop(self.pocket_kinds[plane - self.pocket_drop_base], square(sq)))
        } else {
            Some(Move::pocket_in(square(sq)))
        }
    }

    /// Indices of the legal moves of `pos`, in `legal_moves()` order.
    pub fn legal_indices(&self, pos: &Position) -> Vec<usize> {
        pos.legal_moves().iter().map(|&m| self.encode(pos.side_to_move(), m)).collect()
    }

    /// The index of the left–right mirror image of the move at `index`.
    pub fn mirror(&self, index: usize) -> usize {
        let w = self.variant.geometry.files as usize;
        let (plane, sq) = (index / self.n, index % self.n);
        let (r, f) = (sq / w, sq % w);
        let msq = r * w + (w - 1 - f);
        let mplane = if plane < self.drop_base {
            let (promote, (df, dr)) = if plane < self.displacements.len() {
                (false, self.displacements[plane])
            } else {
                (true, self.promo_displacements[plane - self.displacements.len()])
            };
            let table = if promote { &self.promo_plane } else { &self.plain_plane };
            table[slot(-(df as i32), dr as i32)].expect("mirror-symmetric variant") as usize
        } else {
            plane
        };
        mplane * self.n + msq
    }

    /// A fingerprint of the layout; tests pin it to [`ACTION_VERSION`].
    pub fn fingerprint(&self) -> String {
        format!(
            "v{} planes={} plain={:?} promo={:?} drops={} pocket={}",
            ACTION_VERSION,
            self.num_planes,
            self.displacements,
            self.promo_displacements,
            self.variant.hand_kinds.len(),
            self.pocket_kinds.len()
        )
    }
}
