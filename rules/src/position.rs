//! A position: board, hands, pockets and side to move — what one SFEN says. It owns no
//! history; repetition, move limits and results that need the past live in [`crate::Game`].

use crate::betza::UNLIMITED;
use crate::moves::{Move, MoveKind};
use crate::piece::{Piece, PieceKind, MAX_KINDS};
use crate::sfen::{Setup, SfenError};
use crate::square::{direction_is_positive, opposite_direction, Color};
use crate::variant::Variant;
use crate::{zobrist, Bitboard, Square};

#[derive(Clone)]
pub struct Position {
    pub(crate) variant: &'static Variant,
    /// Mailbox: piece code per square (0 = empty), see [`Piece::code`].
    pub(crate) board: [u8; 128],
    pub(crate) by_kind: [Bitboard; MAX_KINDS],
    pub(crate) by_color: [Bitboard; 2],
    pub(crate) hands: [[u8; MAX_KINDS]; 2],
    pub(crate) pockets: [Option<PieceKind>; 2],
    pub(crate) side: Color,
    pub(crate) move_number: u32,
    pub(crate) key: u64,
    pub(crate) kings: [Option<Square>; 2],
    /// Bit k of `kinds_on_board[c]`: colour c has a piece of kind k on the board (the
    /// move generator visits those kinds alone; most promoted kinds are absent).
    pub(crate) kinds_on_board: [u32; 2],
}

/// Pieces of the side to move that may only move along a line through their king.
#[derive(Default, Clone)]
pub(crate) struct Pins {
    pub pinned: Bitboard,
    lines: arrayvec::ArrayVec<(Square, Bitboard), 8>,
}

impl Pins {
    /// Squares a pinned piece may move to (between king and pinner, pinner included).
    #[inline(always)]
    pub fn line(&self, sq: Square) -> Bitboard {
        self.lines.iter().find(|(s, _)| *s == sq).map(|(_, b)| *b).unwrap_or_default()
    }
}

impl Position {
    /// The variant's default start position.
    pub fn start(variant: &'static Variant) -> Position {
        Position::from_sfen(variant, &variant.start_sfen).expect("start positions are validated with the variant")
    }

    /// Parses and validates an SFEN (with the pocket extension where the variant has pockets).
    pub fn from_sfen(variant: &'static Variant, sfen: &str) -> Result<Position, SfenError> {
        let setup = Setup::parse(variant, sfen)?;
        setup.validate(variant)?;
        Ok(Position::from_valid_setup(variant, &setup))
    }

    pub(crate) fn from_valid_setup(variant: &'static Variant, s: &Setup) -> Position {
        let mut p = Position {
            variant,
            board: [0; 128],
            by_kind: [Bitboard::EMPTY; MAX_KINDS],
            by_color: [Bitboard::EMPTY; 2],
            hands: s.hands,
            pockets: s.pockets,
            side: s.side,
            move_number: s.move_number,
            key: 0,
            kings: [None; 2],
            kinds_on_board: [0; 2],
        };
        for (i, pc) in s.board.iter().enumerate() {
            if let Some(pc) = pc {
                p.put(*pc, Square::new_unchecked(i as u8));
            }
        }
        p.key = p.compute_key();
        p
    }

    pub fn to_setup(&self) -> Setup {
        Setup {
            board: (0..self.variant.geometry.num_squares()).map(|i| Piece::from_code(self.board[i])).collect(),
            hands: self.hands,
            pockets: self.pockets,
            side: self.side,
            move_number: self.move_number,
        }
    }

    pub fn to_sfen(&self) -> String {
        self.to_setup().to_sfen(self.variant)
    }

    #[inline(always)]
    pub fn variant(&self) -> &'static Variant {
        self.variant
    }
    #[inline(always)]
    pub fn side_to_move(&self) -> Color {
        self.side
    }
    #[inline(always)]
    pub fn move_number(&self) -> u32 {
        self.move_number
    }
    /// Zobrist key of board, hands, pockets and side to move (maintained incrementally).
    #[inline(always)]
    pub fn key(&self) -> u64 {
        self.key
    }
    #[inline(always)]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        Piece::from_code(self.board[sq.index()])
    }
    #[inline(always)]
    pub fn hand_count(&self, c: Color, k: PieceKind) -> u8 {
        self.hands[c.index()][k.index()]
    }
    #[inline(always)]
    pub fn pocket(&self, c: Color) -> Option<PieceKind> {
        self.pockets[c.index()]
    }
    #[inline(always)]
    pub fn king_square(&self, c: Color) -> Option<Square> {
        self.kings[c.index()]
    }
    #[inline(always)]
    pub fn pieces(&self, c: Color) -> Bitboard {
        self.by_color[c.index()]
    }
    #[inline(always)]
    pub fn pieces_of(&self, c: Color, k: PieceKind) -> Bitboard {
        self.by_color[c.index()] & self.by_kind[k.index()]
    }
    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    /// Recomputes the Zobrist key from scratch (the conformance tests compare it with the
    /// incrementally maintained one).
    pub fn compute_key(&self) -> u64 {
        let mut key = if self.side == Color::White { zobrist::SIDE } else { 0 };
        for sq in self.occupied() {
            let p = self.piece_at(sq).unwrap();
            key ^= zobrist::board(p.color, p.kind, sq);
        }
        for c in Color::BOTH {
            for k in self.variant.kinds() {
                key ^= zobrist::hand(c, k, self.hands[c.index()][k.index()]);
            }
            if let Some(k) = self.pockets[c.index()] {
                key ^= zobrist::pocket(c, k);
            }
        }
        key
    }

    #[inline(always)]
    fn put(&mut self, p: Piece, sq: Square) {
        self.board[sq.index()] = p.code();
        self.by_kind[p.kind.index()].set(sq);
        self.by_color[p.color.index()].set(sq);
        self.kinds_on_board[p.color.index()] |= 1 << p.kind.index();
        self.key ^= zobrist::board(p.color, p.kind, sq);
        if self.variant.kinds[p.kind.index()].royal {
            self.kings[p.color.index()] = Some(sq);
        }
    }

    #[inline(always)]
    fn remove(&mut self, p: Piece, sq: Square) {
        self.board[sq.index()] = 0;
        self.by_kind[p.kind.index()].clear(sq);
        self.by_color[p.color.index()].clear(sq);
        if (self.by_kind[p.kind.index()] & self.by_color[p.color.index()]).is_empty() {
            self.kinds_on_board[p.color.index()] &= !(1 << p.kind.index());
        }
        self.key ^= zobrist::board(p.color, p.kind, sq);
    }

    #[inline(always)]
    fn add_to_hand(&mut self, c: Color, k: PieceKind, delta: i8) {
        let n = &mut self.hands[c.index()][k.index()];
        self.key ^= zobrist::hand(c, k, *n);
        *n = (*n as i8 + delta) as u8;
        self.key ^= zobrist::hand(c, k, *n);
    }

    /// Plays a move known to be legal here (from [`Position::legal_moves`] or a parsed
    /// and checked USI move). Returns the captured piece, if any. A move that is not
    /// legal leaves the position in an unspecified (but memory-safe) state.
    #[inline]
    pub fn play_unchecked(&mut self, m: Move) -> Option<Piece> {
        let us = self.side;
        let mut captured = None;
        match m.kind() {
            MoveKind::Board { from, to, promote } => {
                let p = self.piece_at(from).expect("a board move starts on a piece");
                self.remove(p, from);
                if let Some(cap) = self.piece_at(to) {
                    self.remove(cap, to);
                    if self.variant.kinds[cap.kind.index()].royal {
                        self.kings[cap.color.index()] = None;
                    } else {
                        let base = self.variant.kinds[cap.kind.index()].unpromoted;
                        self.add_to_hand(us, base, 1);
                    }
                    captured = Some(cap);
                }
                let kind = if promote { self.variant.kinds[p.kind.index()].promotes_to.unwrap_or(p.kind) } else { p.kind };
                self.put(Piece::new(us, kind), to);
            }
            MoveKind::Drop { kind, to } => {
                self.add_to_hand(us, kind, -1);
                self.put(Piece::new(us, kind), to);
            }
            MoveKind::PocketIn { from } => {
                let p = self.piece_at(from).expect("a pocket move starts on a piece");
                self.remove(p, from);
                self.pockets[us.index()] = Some(p.kind);
                self.key ^= zobrist::pocket(us, p.kind);
            }
            MoveKind::PocketDrop { kind, to } => {
                self.pockets[us.index()] = None;
                self.key ^= zobrist::pocket(us, kind);
                self.put(Piece::new(us, kind), to);
            }
        }
        self.side = !us;
        self.key ^= zobrist::SIDE;
        self.move_number += 1;
        captured
    }

    /// Attacks of a piece of kind `k` and colour `c` standing on `sq`, given the occupancy.
    #[inline(always)]
    pub fn attacks_from(&self, c: Color, k: PieceKind, sq: Square, occ: Bitboard) -> Bitboard {
        let t = self.variant.tables(c, k);
        let mut a = t.steps[sq.index()];
        for &(d, n) in &t.slides {
            let s = self.slide(sq, d, occ);
            a |= if n == UNLIMITED { s } else { s & self.variant.geometry.ray_within(sq, d, n) };
        }
        a
    }

    /// Squares reached along direction `d` from `sq`, up to and including the first blocker.
    #[inline(always)]
    pub(crate) fn slide(&self, sq: Square, d: usize, occ: Bitboard) -> Bitboard {
        let g = &self.variant.geometry;
        let ray = g.ray(sq, d);
        let blockers = ray & occ;
        if blockers.is_empty() {
            ray
        } else {
            let first = if direction_is_positive(d) { blockers.lowest() } else { blockers.highest() };
            ray ^ g.ray(first, d)
        }
    }

    /// The nearest occupied square from `sq` in direction `d`.
    #[inline(always)]
    pub(crate) fn nearest(&self, sq: Square, d: usize, occ: Bitboard) -> Option<Square> {
        let blockers = self.variant.geometry.ray(sq, d) & occ;
        if blockers.is_empty() {
            None
        } else if direction_is_positive(d) {
            Some(blockers.lowest())
        } else {
            Some(blockers.highest())
        }
    }

    /// Whether the piece on `from` slides along direction `d` at least `dist` squares.
    #[inline(always)]
    fn slides_far_enough(&self, from: Square, d: usize, dist: u8) -> bool {
        let p = Piece::from_code(self.board[from.index()]).unwrap();
        let r = self.variant.tables(p.color, p.kind).slide_range[d];
        r >= dist
    }

    /// Pieces of colour `by` attacking `sq`, given the occupancy.
    pub fn attackers_to(&self, sq: Square, by: Color, occ: Bitboard) -> Bitboard {
        let v = self.variant;
        let them = self.by_color[by.index()] & occ;
        let mut att = Bitboard::EMPTY;
        for from in v.leap_zone[sq.index()] & them {
            let k = Piece::from_code(self.board[from.index()]).expect("a piece").kind;
            if v.tables(by, k).steps[from.index()].has(sq) {
                att.set(from);
            }
        }
        let sliders = if v.has_sliders { self.sliders_of(by) & occ } else { Bitboard::EMPTY };
        if sliders.any() {
            for d in 0..8 {
                if (v.geometry.ray(sq, d) & sliders).is_empty() {
                    continue;
                }
                if let Some(b) = self.nearest(sq, d, occ) {
                    if them.has(b) && self.slides_far_enough(b, opposite_direction(d), v.geometry.distance(sq, b)) {
                        att.set(b);
                    }
                }
            }
        }
        att
    }

    /// Pieces of colour `by` that slide in some direction.
    #[inline]
    pub(crate) fn sliders_of(&self, by: Color) -> Bitboard {
        let mut bb = Bitboard::EMPTY;
        for &k in &self.variant.slider_kinds {
            bb |= self.by_kind[k.index()];
        }
        bb & self.by_color[by.index()]
    }

    /// Whether any piece of colour `by` attacks `sq` (stops at the first attacker);
    /// `sliders` must be [`Position::sliders_of`]`(by)`, computed once by the caller.
    #[inline]
    pub(crate) fn is_attacked(&self, sq: Square, by: Color, occ: Bitboard, sliders: Bitboard) -> bool {
        let v = self.variant;
        let them = self.by_color[by.index()] & occ;
        for from in v.leap_zone[sq.index()] & them {
            let k = Piece::from_code(self.board[from.index()]).expect("a piece").kind;
            if v.tables(by, k).steps[from.index()].has(sq) {
                return true;
            }
        }
        self.slider_attacks(sq, occ, sliders & occ)
    }

    /// Whether one of `sliders` (pieces of one colour that slide, all on `occ`) attacks
    /// `sq` by a slide, given the occupancy.
    #[inline]
    pub(crate) fn slider_attacks(&self, sq: Square, occ: Bitboard, sliders: Bitboard) -> bool {
        let g = &self.variant.geometry;
        if sliders.any() {
            for d in 0..8 {
                if (g.ray(sq, d) & sliders).is_empty() {
                    continue;
                }
                if let Some(b) = self.nearest(sq, d, occ) {
                    if sliders.has(b) && self.slides_far_enough(b, opposite_direction(d), g.distance(sq, b)) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Whether the side to move is in check.
    pub fn in_check(&self) -> bool {
        match self.kings[self.side.index()] {
            Some(k) => self.is_attacked(k, !self.side, self.occupied(), self.sliders_of(!self.side)),
            None => false,
        }
    }

    /// [`Position::in_check`] where `m` is the move that led here from a legal position
    /// (the mover's opponent, now to move, was not in check before it): only the piece
    /// that landed and a slider on a line through the square left can give check, so
    /// only those are looked at, not every enemy piece near the king and all eight lines.
    #[inline]
    pub fn in_check_after(&self, m: Move) -> bool {
        let gives = self.checked_by_move(m);
        debug_assert_eq!(gives, self.in_check(), "in_check_after({m:?}) in {}", self.to_sfen());
        gives
    }

    fn checked_by_move(&self, m: Move) -> bool {
        let Some(ksq) = self.kings[self.side.index()] else { return false };
        let g = &self.variant.geometry;
        let occ = self.occupied();
        let (left, landed) = match m.kind() {
            MoveKind::Board { from, to, .. } => (Some(from), Some(to)),
            MoveKind::Drop { to, .. } | MoveKind::PocketDrop { to, .. } => (None, Some(to)),
            MoveKind::PocketIn { from } => (Some(from), None),
        };
        if let Some(to) = landed {
            let p = Piece::from_code(self.board[to.index()]).expect("the piece that moved");
            let t = self.variant.tables(p.color, p.kind);
            if t.steps[to.index()].has(ksq) {
                return true;
            }
            if let Some((d, dist)) = g.direction_to(to, ksq) {
                if t.slide_range[d] >= dist && (g.between(to, ksq) & occ).is_empty() {
                    return true;
                }
            }
        }
        if let Some(from) = left {
            if let Some((d, _)) = g.direction_to(ksq, from) {
                if let Some(b) = self.nearest(ksq, d, occ) {
                    let mover = self.by_color[(!self.side).index()];
                    return mover.has(b) && self.slides_far_enough(b, opposite_direction(d), g.distance(ksq, b));
                }
            }
        }
        false
    }

    /// Pieces giving check to the side to move, the squares where a piece would block the
    /// check (empty unless the only checker checks along a slide and not by a leap too),
    /// and the side to move's pinned pieces.
    /// `pins` is filled in place (it is large to return).
    pub(crate) fn checkers_and_pins(&self, ksq: Square, pins: &mut Pins) -> (Bitboard, Bitboard) {
        let v = self.variant;
        let us = self.side;
        let them = !us;
        let occ = self.occupied();
        let theirs = self.by_color[them.index()];
        let mut checkers = Bitboard::EMPTY;
        // Leaps: only the few enemy pieces within a leap of the king, each by its own kind.
        for from in v.leap_zone[ksq.index()] & theirs {
            let k = Piece::from_code(self.board[from.index()]).expect("an enemy piece").kind;
            if v.tables(them, k).steps[from.index()].has(ksq) {
                checkers.set(from);
            }
        }
        let leaper_checkers = checkers;
        pins.pinned = Bitboard::EMPTY;
        pins.lines.clear();
        // Only rays that hold an enemy slider can check or pin (most rays of most positions).
        let sliders = self.sliders_of(them);
        if sliders.any() {
            for d in 0..8 {
                if (v.geometry.ray(ksq, d) & sliders).is_empty() {
                    continue;
                }
                let Some(first) = self.nearest(ksq, d, occ) else { continue };
                let back = opposite_direction(d);
                if theirs.has(first) {
                    if self.slides_far_enough(first, back, v.geometry.distance(ksq, first)) {
                        checkers.set(first);
                    }
                } else if let Some(second) = self.nearest(first, d, occ) {
                    if theirs.has(second) && self.slides_far_enough(second, back, v.geometry.distance(ksq, second)) {
                        pins.pinned.set(first);
                        pins.lines.push((first, v.geometry.between(ksq, second) | Bitboard::from_square(second)));
                    }
                }
            }
        }
        let block =
            if checkers.any() && !checkers.more_than_one() && !leaper_checkers.any() { v.geometry.between(ksq, checkers.lowest()) } else { Bitboard::EMPTY };
        (checkers, block)
    }

    /// Where the side to move's piece on `sq` may go if it is pinned to its king on `ksq`
    /// (the squares between them and the pinner, the pinner included); `None` when it is
    /// not pinned. The same line as [`Position::checkers_and_pins`] finds, for one piece.
    #[inline]
    pub(crate) fn pin_line(&self, ksq: Square, sq: Square, occ: Bitboard) -> Option<Bitboard> {
        let g = &self.variant.geometry;
        let (d, _) = g.direction_to(ksq, sq)?;
        if self.nearest(ksq, d, occ) != Some(sq) {
            return None;
        }
        let pinner = self.nearest(sq, d, occ)?;
        let theirs = self.by_color[(!self.side).index()];
        (theirs.has(pinner) && self.slides_far_enough(pinner, opposite_direction(d), g.distance(ksq, pinner)))
            .then(|| g.between(ksq, pinner) | Bitboard::from_square(pinner))
    }

    /// The side that just moved won by bringing its king to its flag square.
    pub fn flag_reached(&self) -> bool {
        match self.variant.flag_squares {
            Some(flags) => {
                let mover = !self.side;
                self.kings[mover.index()] == Some(flags[mover.index()])
            }
            None => false,
        }
    }
}

impl PartialEq for Position {
    fn eq(&self, o: &Position) -> bool {
        std::ptr::eq(self.variant, o.variant)
            && self.board == o.board
            && self.hands == o.hands
            && self.pockets == o.pockets
            && self.side == o.side
            && self.move_number == o.move_number
    }
}
impl Eq for Position {}

impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Position({} {})", self.variant.name, self.to_sfen())
    }
}
