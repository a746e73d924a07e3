//! The alpha-beta baseline's static evaluation: material plus a few cheap positional terms.
//!
//! - Material: [`PieceValues`] for pieces on the board, in hand (×1.1) and in the pocket.
//!   By default a pocketed piece counts its plain board value: a pocket move is reversible
//!   and costs a tempo each way, and a bonus makes the search shuffle pieces into the
//!   pocket. (Whether a different pocket value plays better is for `copper tune` to say.)
//! - Footmen (one-per-file kinds: Pawn, Soldier) gain [`ADVANCE`] per rank advanced.
//! - King shelter: [`SHELTER`] per own piece on a square next to the own king (at most
//!   [`SHELTER_MAX`] pieces).
//! - King exposure: [`KING_OUT`] per rank the king stands beyond its home ranks (the
//!   promotion-zone depth, counted from its own side), scaled by how much of its start
//!   material the opponent still has (so it fades out in the endgame).
//!
//! Everything is from the side to move's point of view, in centipawns.

use super::values::PieceValues;
use rules::{Color, Move, MoveKind, PieceKind, Position, Variant, MAX_KINDS};

pub(crate) const ADVANCE: i32 = 5;
pub(crate) const SHELTER: i32 = 12;
pub(crate) const SHELTER_MAX: u32 = 4;
pub(crate) const KING_OUT: i32 = 20;

/// What the evaluation keeps up to date move by move instead of counting it at every node,
/// by colour index: each side's material, and its footmen's advance (the sum of
/// [`ADVANCE`] × ranks from its back rank over its footmen).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tally {
    pub material: [i32; 2],
    pub advance: [i32; 2],
}

#[derive(Clone, Debug)]
pub struct Evaluator {
    /// The values the tables below were made from (read-only: the tables would not follow).
    pub(crate) values: PieceValues,
    /// What one piece of each kind adds to its side's material on the board (royal: 0),
    /// in hand (kinds that are never held: 0) and in the pocket.
    on_board: [i32; MAX_KINDS],
    in_hand: [i32; MAX_KINDS],
    in_pocket: [i32; MAX_KINDS],
    /// Whether a kind is a footman (one per file, unpromoted), by kind.
    is_footman: [bool; MAX_KINDS],
    /// Material of one side in the variant's start position (board, hand, pocket).
    start_material: i32,
    /// Ranks between each square and its side's back rank (0 on the back rank), by colour
    /// and square: a table, where the rank is a division by the files at every piece.
    from_back: [[u8; 128]; 2],
    home_depth: u8,
    /// Every kind with its board value, most valuable first: the quiescence search's
    /// victims worth at least some value are a prefix of it.
    pub(crate) by_board_value: Vec<(i32, PieceKind)>,
}

impl Evaluator {
    pub fn new(v: &'static Variant) -> Evaluator {
        Evaluator::with_values(v, PieceValues::for_variant(v))
    }

    /// An evaluator counting material with `values` (e.g. with a spec's overrides).
    pub(crate) fn with_values(v: &'static Variant, values: PieceValues) -> Evaluator {
        let (mut on_board, mut in_hand, mut in_pocket) = ([0; MAX_KINDS], [0; MAX_KINDS], [0; MAX_KINDS]);
        for k in v.kinds() {
            on_board[k.index()] = if v.kind(k).royal { 0 } else { values.board(k) };
            in_pocket[k.index()] = values.pocket(k);
        }
        for &k in &v.hand_kinds {
            in_hand[k.index()] = values.hand(k);
        }
        let by_board_value = v.kinds().map(|k| (values.board(k), k)).collect();
        let mut e = Evaluator {
            values,
            on_board,
            in_hand,
            in_pocket,
            is_footman: std::array::from_fn(|i| {
                i < v.num_kinds() && v.kind(PieceKind::from_index(i)).one_per_file && !v.kind(PieceKind::from_index(i)).promoted
            }),
            start_material: 1,
            from_back: Color::BOTH.map(|c| {
                let mut t = [0u8; 128];
                for sq in v.geometry.squares() {
                    t[sq.index()] = v.geometry.ranks - 1 - v.geometry.relative_rank(c, sq);
                }
                t
            }),
            home_depth: v.promotion_zone[0].count().div_ceil(v.geometry.files as u32).max(1) as u8,
            by_board_value,
        };
        e.by_board_value.sort_by_key(|&(value, k)| (std::cmp::Reverse(value), k));
        let start = Position::start(v);
        e.start_material = Color::BOTH.iter().map(|&c| e.material(&start, c)).max().unwrap_or(1).max(1);
        e
    }

    /// Material of `c`: board, hand and pocket.
    #[inline]
    pub fn material(&self, pos: &Position, c: Color) -> i32 {
        let mut m = 0;
        let v = pos.variant();
        for k in v.kinds() {
            m += pos.pieces_of(c, k).count() as i32 * self.on_board[k.index()];
        }
        for &k in &v.hand_kinds {
            m += pos.hand_count(c, k) as i32 * self.in_hand[k.index()];
        }
        if let Some(k) = pos.pocket(c) {
            m += self.in_pocket[k.index()];
        }
        m
    }

    /// The footmen's advance of `c`, walked kind by kind (what [`Evaluator::tally`] counts in
    /// one pass).
    #[cfg(test)]
    fn advance(&self, pos: &Position, c: Color) -> i32 {
        let from_back = &self.from_back[c.index()];
        let mut s = 0;
        for k in pos.variant().kinds().filter(|k| self.is_footman[k.index()]) {
            for sq in pos.pieces_of(c, k) {
                s += ADVANCE * from_back[sq.index()] as i32;
            }
        }
        s
    }

    /// Both sides' material and advance, counted: the board in one pass over its pieces
    /// (a population count per kind and side costs more without `popcnt`), then the
    /// hands and pockets as [`Evaluator::material`] counts them.
    pub(crate) fn tally(&self, pos: &Position) -> Tally {
        let mut t = Tally { material: [0; 2], advance: [0; 2] };
        for sq in pos.occupied() {
            let p = pos.piece_at(sq).expect("an occupied square holds a piece");
            let (c, k) = (p.color.index(), p.kind.index());
            t.material[c] += self.on_board[k];
            if self.is_footman[k] {
                t.advance[c] += ADVANCE * self.from_back[c][sq.index()] as i32;
            }
        }
        let v = pos.variant();
        for c in Color::BOTH {
            let m = &mut t.material[c.index()];
            for &k in &v.hand_kinds {
                *m += pos.hand_count(c, k) as i32 * self.in_hand[k.index()];
            }
            if let Some(k) = pos.pocket(c) {
                *m += self.in_pocket[k.index()];
            }
        }
        t
    }

    /// The tally after `m` is played at `pos`, from `before`, the one at `pos`: what
    /// [`Evaluator::tally`] gives for the position after `m`, without counting.
    #[inline(always)]
    pub(crate) fn tally_after(&self, pos: &Position, m: Move, before: Tally) -> Tally {
        let us = pos.side_to_move().index();
        let (mut after, mut advance) = (before.material, before.advance);
        let step = |c: usize, sq: rules::Square| ADVANCE * self.from_back[c][sq.index()] as i32;
        match m.kind() {
            MoveKind::Board { from, to, promote } => {
                if let Some(p) = pos.piece_at(from) {
                    let v = pos.variant();
                    let kind = if promote { v.kind(p.kind).promotes_to.unwrap_or(p.kind) } else { p.kind };
                    after[us] += self.on_board[kind.index()] - self.on_board[p.kind.index()];
                    if self.is_footman[p.kind.index()] {
                        advance[us] -= step(us, from);
                    }
                    if self.is_footman[kind.index()] {
                        advance[us] += step(us, to);
                    }
                    if let Some(cap) = pos.piece_at(to) {
                        after[1 - us] -= self.on_board[cap.kind.index()];
                        if !v.kind(cap.kind).royal {
                            after[us] += self.in_hand[v.kind(cap.kind).unpromoted.index()];
                        }
                        if self.is_footman[cap.kind.index()] {
                            advance[1 - us] -= step(1 - us, to);
                        }
                    }
                }
            }
            MoveKind::Drop { kind, to } => {
                after[us] += self.on_board[kind.index()] - self.in_hand[kind.index()];
                if self.is_footman[kind.index()] {
                    advance[us] += step(us, to);
                }
            }
            MoveKind::PocketIn { from } => {
                if let Some(p) = pos.piece_at(from) {
                    after[us] += self.in_pocket[p.kind.index()] - self.on_board[p.kind.index()];
                    if self.is_footman[p.kind.index()] {
                        advance[us] -= step(us, from);
                    }
                }
            }
            MoveKind::PocketDrop { kind, to } => {
                after[us] += self.on_board[kind.index()] - self.in_pocket[kind.index()];
                if self.is_footman[kind.index()] {
                    advance[us] += step(us, to);
                }
            }
        }
        Tally { material: after, advance }
    }

    /// Positional terms of `c` but the footmen's advance, given the opponent's material.
    #[inline]
    fn king_terms(&self, pos: &Position, c: Color, their_material: i32) -> i32 {
        let from_back = &self.from_back[c.index()];
        let mut s = 0;
        if let Some(ksq) = pos.king_square(c) {
            let around = pos.variant().empty_board_attacks(c, pos.variant().royal_kind, ksq) & pos.pieces(c);
            // Counted one by one up to the cap: the build has no popcnt instruction, and a
            // software count of 128 bits costs more than the few pieces beside a king.
            let sheltering = around.take(SHELTER_MAX as usize).count();
            s += SHELTER * sheltering as i32;
            let out = from_back[ksq.index()] as i32 - (self.home_depth as i32 - 1);
            if out > 0 {
                let phase = their_material.min(self.start_material);
                s -= KING_OUT * out * phase / self.start_material;
            }
        }
        s
    }

    /// Evaluation for the side to move.
    #[inline]
    pub fn evaluate(&self, pos: &Position) -> i32 {
        self.evaluate_with(pos, self.tally(pos))
    }

    /// Evaluation for the side to move, given the position's tally ([`Evaluator::tally`]).
    #[inline]
    pub(crate) fn evaluate_with(&self, pos: &Position, tally: Tally) -> i32 {
        let (us, them) = (pos.side_to_move().index(), (!pos.side_to_move()).index());
        let (mu, mt) = (tally.material[us], tally.material[them]);
        mu - mt + tally.advance[us] - tally.advance[them] + self.king_terms(pos, pos.side_to_move(), mt) - self.king_terms(pos, !pos.side_to_move(), mu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::values::{ValueOverride, ValuePlace};
    use rand::{Rng, SeedableRng};

    #[test]
    fn baseline_tally_after_a_move_is_the_tally_counted_after_it() {
        // Every move of random games in every shipped variant, with values that differ by
        // place and kind (so a piece booked to the wrong place shows): the incremental
        // material and footmen's advance equal a fresh count.
        for name in rules::BUILTIN {
            let v = Variant::builtin(name).unwrap();
            let mut values = PieceValues::for_variant(v);
            let overrides: Vec<ValueOverride> =
                v.kinds()
                    .filter(|&k| !v.kind(k).royal)
                    .flat_map(|k| {
                        let name = v.kind(k).name.clone();
                        let base = 100.0 + 37.0 * k.index() as f64;
                        [(ValuePlace::Board, base), (ValuePlace::Hand, base + 11.0), (ValuePlace::Pocket, base + 23.0)]
                            .map(|(place, centipawns)| ValueOverride { place, kind: name.clone(), centipawns })
                    })
                    .collect();
            values.apply(v, &overrides).unwrap();
            let e = Evaluator::with_values(v, values);
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
            let (mut moves, mut captures, mut pocket_moves, mut advances) = (0, 0, 0, 0);
            for _ in 0..12 {
                let mut pos = Position::start(v);
                for _ in 0..160 {
                    let list = pos.legal_moves();
                    if list.is_empty() || pos.flag_reached() {
                        break;
                    }
                    let before = e.tally(&pos);
                    for &m in &list {
                        let mut child = pos.clone();
                        let captured = child.play_unchecked(m);
                        let after = e.tally(&child);
                        assert_eq!(e.tally_after(&pos, m, before), after, "{name}: {} after {}", pos.move_to_usi(m), pos.to_sfen());
                        // The one-pass count against a count kind by kind.
                        let by_kind = Tally { material: Color::BOTH.map(|c| e.material(&child, c)), advance: Color::BOTH.map(|c| e.advance(&child, c)) };
                        assert_eq!(after, by_kind, "{name}: {}", child.to_sfen());
                        advances += usize::from(after.advance != before.advance);
                        moves += 1;
                        captures += usize::from(captured.is_some());
                        pocket_moves += usize::from(matches!(m.kind(), MoveKind::PocketIn { .. } | MoveKind::PocketDrop { .. }));
                    }
                    // Captures first when there are some, so that hands fill up.
                    let caps: Vec<Move> =
                        list.iter().copied().filter(|&m| matches!(m.kind(), MoveKind::Board { to, .. } if pos.piece_at(to).is_some())).collect();
                    let m =
                        if !caps.is_empty() && rng.random_bool(0.7) { caps[rng.random_range(0..caps.len())] } else { list[rng.random_range(0..list.len())] };
                    pos.play_unchecked(m);
                }
            }
            assert!(moves > 10_000 && captures > 500 && advances > 1_000, "{name}: {moves} moves, {captures} captures, {advances} changing an advance");
            assert_eq!(pocket_moves > 0, v.pockets, "{name}: {pocket_moves} pocket moves");
        }
    }

    #[test]
    fn baseline_eval_positional_terms_match_hand_counts() {
        // Standard shogi (9 ranks, a 3-rank zone: home ranks 3). The positional part is the
        // evaluation less the material difference, counted here by hand.
        let v = Variant::builtin("shogi").unwrap();
        let e = Evaluator::new(v);
        let positional = |sfen: &str| {
            let p = Position::from_sfen(v, sfen).unwrap();
            let (us, them) = (p.side_to_move(), !p.side_to_move());
            e.evaluate(&p) - (e.material(&p, us) - e.material(&p, them))
        };
        // A Black pawn on 5e stands 4 ranks up from Black's back rank (i); a White one on 5f,
        // 5 up from White's (a).
        assert_eq!(positional("4k4/9/9/9/4P4/9/9/9/4K4 b - 1"), 4 * ADVANCE);
        assert_eq!(positional("4k4/9/9/9/4P4/9/9/9/4K4 w - 1"), -4 * ADVANCE);
        assert_eq!(positional("4k4/9/9/9/9/4p4/9/9/4K4 w - 1"), 5 * ADVANCE);
        // Shelter: Golds on 4i and 6h next to Black's King on 5i, a Silver on 3g not.
        assert_eq!(positional("4k4/9/9/9/9/9/6S2/3G5/4KG3 b - 1"), 2 * SHELTER);
        // Five neighbours count as the cap of four.
        assert_eq!(positional("4k4/9/9/9/9/9/9/3GGG3/3GKG3 b - 1"), SHELTER_MAX as i32 * SHELTER);
        // King exposure: Black's King on 5e is 4 ranks up, 2 beyond its 3 home ranks; White
        // holds a Rook in hand, so the phase is that Rook's share of the start material.
        let p = Position::from_sfen(v, "4k4/9/9/9/4K4/9/9/9/9 b r 1").unwrap();
        let theirs = e.material(&p, Color::White);
        assert!(theirs > 0 && theirs < e.start_material);
        assert_eq!(positional("4k4/9/9/9/4K4/9/9/9/9 b r 1"), -KING_OUT * 2 * theirs / e.start_material);
        // On its third rank (5g) it is still home.
        assert_eq!(positional("4k4/9/9/9/9/9/4K4/9/9 b r 1"), 0);
    }

    #[test]
    fn baseline_eval_start_positions_are_balanced_and_symmetric() {
        for name in ["shogi", "minishogi", "hand-shogi"] {
            let v = Variant::builtin(name).unwrap();
            let e = Evaluator::new(v);
            let p = Position::start(v);
            assert_eq!(e.evaluate(&p), 0, "{name}: the start is symmetric");
        }
        // Pocket Shogi Copper: Black's Copper is in the pocket, White's in hand (×1.1).
        let v = Variant::builtin("pocket-copper").unwrap();
        let e = Evaluator::new(v);
        let p = Position::start(v);
        assert!(e.evaluate(&p).abs() < 100);
        // A captured rook shifts the balance by about its value and more.
        let v = Variant::builtin("shogi").unwrap();
        let e = Evaluator::new(v);
        let p = Position::from_sfen(v, "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b R 1").unwrap();
        assert!(e.evaluate(&p) > 2000);
    }
}
