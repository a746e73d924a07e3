//! The alpha-beta baseline: iterative-deepening negamax with principal-variation search,
//! a quiescence search on captures (every evasion when in check), a transposition table,
//! and move ordering (table move, MVV-LVA captures and promotions, two killers per ply,
//! a history table for quiet moves).
//!
//! Results inside the tree follow the rules engine: no legal move loses for the side to
//! move, except after a drop of a kind whose drop mate loses for the dropper (Pocket
//! Shogi Copper's pawn), which wins for the side to move; a king reaching its flag square
//! wins for the mover. Repetition is scored as a draw as soon as a position recurs on the
//! path from the game's start (the game's history included); perpetual check, the
//! declaration and the length limits are left to the [`rules::Game`] at the root.

use super::eval::{Evaluator, Tally};
use super::picker::{select, Picker, LINEAR_PICKS};
use super::values::PieceValues;
use super::{Baseline, Budget};
use crate::{Score, Thought};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rules::{Bitboard, DropMate, Game, Move, MoveKind, MoveList, Position, Variant, MAX_KINDS};
use std::time::Instant;

/// Internal score of a mate at the root (a mate `n` plies away is `MATE - n`).
pub(crate) const MATE: i32 = 1_000_000;
/// Scores beyond this are mates.
const MATE_BOUND: i32 = MATE - 10_000;
const INF: i32 = 2_000_000;
/// Deepest ply of the main search plus quiescence.
const MAX_PLY: usize = 128;
/// Most iterations of iterative deepening when only a node or time budget is given.
const MAX_DEPTH: u32 = 64;
/// Most plies of quiescence search below the horizon.
const MAX_QPLY: u32 = 16;
/// Depth when the budget gives no limit at all.
pub(crate) const DEFAULT_DEPTH: u32 = 3;
/// Margin of delta pruning in the quiescence search.
const DELTA_MARGIN: i32 = 200;
/// What delta pruning credits a capture that promotes, on top of its victim, centipawns.
const PROMOTION_GAIN: i32 = 500;

const ORDER_TT: i32 = 1 << 30;
const ORDER_CAPTURE: i32 = 1 << 28;
const ORDER_PROMOTION: i32 = 1 << 27;
const ORDER_KILLER: i32 = 1 << 26;
const HISTORY_MAX: i32 = 1 << 24;
const HISTORY_SIZE: usize = 1 << 17;

#[derive(Copy, Clone, PartialEq, Eq, Default)]
enum Bound {
    #[default]
    Exact,
    Lower,
    Upper,
}

#[derive(Copy, Clone, Default)]
struct TtEntry {
    key: u64,
    mv: Option<Move>,
    score: i32,
    depth: i16,
    bound: Bound,
    used: bool,
}

/// Iterative-deepening alpha-beta over the rules engine with a material-and-position
/// evaluation ([`super::eval`]).
pub struct AlphaBeta {
    variant: &'static Variant,
    eval: Evaluator,
    tt: Vec<TtEntry>,
    killers: Vec<[Option<Move>; 2]>,
    history: Vec<i32>,
    /// Kinds whose drop mate loses for the dropper.
    drop_loses: [bool; MAX_KINDS],
    /// Keys of the positions from the game's start down to the current node's parent.
    path: Vec<u64>,
    /// Reusable move-ordering buffers, one per ply.
    buffers: Vec<Vec<(i32, Move)>>,
    /// Reusable pickers for the main search's long move loops, one per ply.
    pickers: Vec<Picker>,
    nodes: u64,
    node_limit: u64,
    deadline: Option<Instant>,
    /// Set from another thread to end the search now ([`Baseline::set_interrupt`]).
    interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    stop: bool,
    /// Best root move and score of the iteration under way.
    root_best: Option<(Move, i32)>,
    /// Half-width of the uniform root-score noise in centipawns (0: none), and its
    /// random stream.
    noise_cp: f64,
    rng: ChaCha8Rng,
    /// This search's noise per root move (empty without noise).
    root_offsets: Vec<(Move, i32)>,
    /// Whether shallow nodes search their best capture before generating every move
    /// (the same search, faster; off only to test that it is the same).
    capture_first: bool,
}

impl AlphaBeta {
    /// A searcher for `variant` with a transposition table of `tt_entries` entries (at least 1).
    pub fn new(variant: &'static Variant, tt_entries: usize) -> AlphaBeta {
        let mut drop_loses = [false; MAX_KINDS];
        for k in variant.kinds() {
            drop_loses[k.index()] = variant.kind(k).drop_mate == DropMate::Loses;
        }
        AlphaBeta {
            variant,
            eval: Evaluator::new(variant),
            tt: vec![TtEntry::default(); tt_entries.max(1)],
            killers: vec![[None; 2]; MAX_PLY + 1],
            history: vec![0; 2 * HISTORY_SIZE],
            drop_loses,
            path: Vec::new(),
            buffers: (0..=MAX_PLY).map(|_| Vec::new()).collect(),
            pickers: (0..=MAX_PLY).map(|_| Picker::default()).collect(),
            nodes: 0,
            node_limit: u64::MAX,
            deadline: None,
            interrupt: None,
            stop: false,
            root_best: None,
            noise_cp: 0.0,
            rng: ChaCha8Rng::seed_from_u64(0),
            root_offsets: Vec::new(),
            capture_first: true,
        }
    }

    /// Evaluates with `values` instead of the variant's default table.
    pub(crate) fn with_values(mut self, values: PieceValues) -> AlphaBeta {
        self.eval = Evaluator::with_values(self.variant, values);
        self
    }

    /// Adds uniform noise in [−`cp`, +`cp`] centipawns (drawn afresh for every search
    /// from a stream seeded by `seed`) to each root move's score, so that games against
    /// itself differ. The search stays exact for the noised root scores: each root move's
    /// window is shifted by its offset. 0 keeps the plain, deterministic search.
    pub(crate) fn with_noise(mut self, cp: f64, seed: u64) -> AlphaBeta {
        self.noise_cp = if cp.is_finite() { cp.max(0.0) } else { 0.0 };
        self.rng = ChaCha8Rng::seed_from_u64(seed);
        self
    }

    /// The noise of a root move (0 without noise).
    #[inline(always)]
    fn root_offset(&self, m: Move) -> i32 {
        self.root_offsets.iter().find(|(x, _)| *x == m).map_or(0, |&(_, r)| r)
    }

    #[inline(always)]
    fn tt_index(&self, key: u64) -> usize {
        ((key as u128 * self.tt.len() as u128) >> 64) as usize
    }

    #[inline(always)]
    fn tt_probe(&self, key: u64) -> Option<TtEntry> {
        let e = self.tt[self.tt_index(key)];
        (e.used && e.key == key).then_some(e)
    }

    #[inline(always)]
    fn tt_store(&mut self, key: u64, mv: Option<Move>, score: i32, depth: i32, bound: Bound, ply: usize) {
        let i = self.tt_index(key);
        let e = &mut self.tt[i];
        // Keep the move of an earlier, shallower search of the same position if this one has none.
        let mv = if mv.is_none() && e.used && e.key == key { e.mv } else { mv };
        *e = TtEntry { key, mv, score: score_to_tt(score, ply), depth: depth as i16, bound, used: true };
    }

    /// Whether the move is a drop of a kind whose drop mate loses for the dropper.
    #[inline(always)]
    fn is_losing_drop(&self, m: Move) -> bool {
        match m.kind() {
            MoveKind::Drop { kind, .. } | MoveKind::PocketDrop { kind, .. } => self.drop_loses[kind.index()],
            _ => false,
        }
    }

    /// Score of a position without legal moves, for the side to move.
    #[inline(always)]
    fn no_moves_score(pos: &Position, ply: usize, after_losing_drop: bool) -> i32 {
        if after_losing_drop && pos.in_check() {
            MATE - ply as i32
        } else {
            -(MATE - ply as i32)
        }
    }

    #[inline(always)]
    fn check_budget(&mut self) -> bool {
        if self.stop {
            return true;
        }
        if self.nodes >= self.node_limit {
            self.stop = true;
        } else if self.nodes & 1023 == 0 {
            if let Some(d) = self.deadline {
                if Instant::now() >= d {
                    self.stop = true;
                }
            }
            if self.interrupt.as_ref().is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed)) {
                self.stop = true;
            }
        }
        self.stop
    }

    /// Whether `key` occurred before on the path with the same side to move.
    #[inline(always)]
    fn repeated(&self, key: u64) -> bool {
        // The last entry is the parent (other side to move); same-side positions are at
        // len-2, len-4, …
        let n = self.path.len();
        let mut i = n as isize - 2;
        while i >= 0 {
            if self.path[i as usize] == key {
                return true;
            }
            i -= 2;
        }
        false
    }

    /// Ordering score of a move: captures by MVV-LVA, promotions by their gain.
    #[inline(always)]
    fn tactical_score(&self, pos: &Position, m: Move) -> Option<i32> {
        if let MoveKind::Board { from, to, promote } = m.kind() {
            let v = &self.eval.values;
            let mover = pos.piece_at(from).map(|p| p.kind);
            let gain = match (promote, mover) {
                (true, Some(k)) => match self.variant.kind(k).promotes_to {
                    Some(pk) => v.board(pk) - v.board(k),
                    None => 0,
                },
                _ => 0,
            };
            if let Some(victim) = pos.piece_at(to) {
                let attacker = mover.map(|k| v.board(k)).unwrap_or(0);
                return Some(ORDER_CAPTURE + 8 * (v.board(victim.kind) + gain) - attacker / 8);
            }
            if promote {
                return Some(ORDER_PROMOTION + gain);
            }
        }
        None
    }

    #[inline(always)]
    fn history_index(pos: &Position, m: Move) -> usize {
        pos.side_to_move().index() * HISTORY_SIZE + (m.to_bits() as usize & (HISTORY_SIZE - 1))
    }

    fn order(&self, pos: &Position, list: &MoveList, tt_move: Option<Move>, ply: usize, buf: &mut Vec<(i32, Move)>) {
        buf.clear();
        let killers = self.killers[ply];
        for &m in list {
            let s = if Some(m) == tt_move {
                ORDER_TT
            } else if let Some(t) = self.tactical_score(pos, m) {
                t
            } else if Some(m) == killers[0] {
                ORDER_KILLER + 1
            } else if Some(m) == killers[1] {
                ORDER_KILLER
            } else {
                self.history[Self::history_index(pos, m)]
            };
            buf.push((s, m));
        }
    }

    /// The negamax score of `pos` (whose [`Tally`] is `tally`) at `depth` plies, `ply` plies
    /// below the root, in the window (`alpha`, `beta`).
    #[allow(clippy::too_many_arguments)]
    fn search(&mut self, pos: &Position, tally: Tally, depth: i32, mut alpha: i32, beta: i32, ply: usize, after_losing_drop: bool) -> i32 {
        if depth <= 0 || ply >= MAX_PLY {
            return self.qsearch(pos, tally, alpha, beta, ply, after_losing_drop, 0, pos.in_check(), None);
        }
        self.nodes += 1;
        if self.check_budget() {
            return 0;
        }
        let key = pos.key();
        if ply > 0 && self.repeated(key) {
            return 0;
        }
        let entry = self.tt_probe(key);
        if let Some(e) = entry {
            if ply > 0 && e.depth as i32 >= depth {
                let s = score_from_tt(e.score, ply);
                match e.bound {
                    Bound::Exact => return s,
                    Bound::Lower if s >= beta => return s,
                    Bound::Upper if s <= alpha => return s,
                    _ => {}
                }
            }
        }
        let tt_move = entry.and_then(|e| e.mv);
        let mut list = MoveList::new();
        // Without a table move the first move searched is the best capture (a capture's
        // ordering score outranks every other move's), so it is searched before the full
        // list exists, which most such nodes never need: they cut off on it. The order
        // stays the full list's only while the capture's subtree cannot change this node's
        // ordering: this side's history, which its nodes two plies down update when they
        // still have depth (from depth 3 up). The killers at this ply are only written here.
        let mut first = None;
        if self.capture_first && ply > 0 && depth <= 2 && tt_move.is_none() {
            pos.generate_captures(&mut list);
            if let Some(m) = self.best_capture(pos, &list) {
                self.path.push(key);
                let (score, _) = self.search_move(pos, tally, m, true, depth, alpha, beta, ply);
                self.path.pop();
                if self.stop {
                    return 0;
                }
                if score >= beta {
                    self.tt_store(key, Some(m), score, depth, Bound::Lower, ply);
                    return score;
                }
                first = Some((m, score));
            }
            list.clear();
        }
        pos.generate_legal(&mut list);
        if list.is_empty() {
            return Self::no_moves_score(pos, ply, after_losing_drop);
        }
        let mut buf = std::mem::take(&mut self.buffers[ply]);
        let mut picker = std::mem::take(&mut self.pickers[ply]);
        self.order(pos, &list, tt_move, ply, &mut buf);
        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_move = None;
        self.path.push(key);
        for i in 0..buf.len() {
            let m = if i < LINEAR_PICKS {
                select(&mut buf, i)
            } else {
                if i == LINEAR_PICKS {
                    picker.build(&buf, i);
                }
                picker.pick(&mut buf, i)
            };
            let (score, captured) = match first {
                Some((fm, fs)) if i == 0 => {
                    debug_assert_eq!(fm, m, "the best capture is the full list's first pick");
                    (fs, true)
                }
                _ => self.search_move(pos, tally, m, i == 0, depth, alpha, beta, ply),
            };
            if self.stop {
                break;
            }
            if score > best {
                best = score;
                best_move = Some(m);
                if ply == 0 {
                    self.root_best = Some((m, score));
                }
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        if !captured && !m.is_promotion() {
                            let k = &mut self.killers[ply];
                            if k[0] != Some(m) {
                                k[1] = k[0];
                                k[0] = Some(m);
                            }
                            let h = &mut self.history[Self::history_index(pos, m)];
                            *h = (*h + depth * depth).min(HISTORY_MAX);
                        }
                        break;
                    }
                }
            }
        }
        self.path.pop();
        self.buffers[ply] = buf;
        self.pickers[ply] = picker;
        if self.stop {
            return 0;
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > alpha0 {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt_store(key, best_move, best, depth, bound, ply);
        best
    }

    /// The score of playing `m` at a node, and whether it captures: the node's first move
    /// is searched with the full window, a later one with a null window first
    /// (principal-variation search).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn search_move(&mut self, pos: &Position, tally: Tally, m: Move, first: bool, depth: i32, alpha: i32, beta: i32, ply: usize) -> (i32, bool) {
        let child_tally = self.eval.tally_after(pos, m, tally);
        let mut child = pos.clone();
        let captured = child.play_unchecked(m).is_some();
        // Root noise: the move's score is its search score plus `r`, so its child is
        // searched in the window shifted by `r` (exact for the noised scores).
        let r = if ply == 0 { self.root_offset(m) } else { 0 };
        let (a, b) = (alpha - r, beta - r);
        let score = r + if child.flag_reached() {
            MATE - (ply as i32 + 1)
        } else {
            let ld = self.is_losing_drop(m);
            if first {
                -self.search(&child, child_tally, depth - 1, -b, -a, ply + 1, ld)
            } else {
                let s = -self.search(&child, child_tally, depth - 1, -a - 1, -a, ply + 1, ld);
                if s > a && s < b && !self.stop {
                    -self.search(&child, child_tally, depth - 1, -b, -a, ply + 1, ld)
                } else {
                    s
                }
            }
        };
        (score, captured)
    }

    /// The capture of `captures` that [`AlphaBeta::order`] scores highest, the earliest on
    /// ties (as selection picks it from the full list, where captures keep their order).
    #[inline(always)]
    fn best_capture(&self, pos: &Position, captures: &MoveList) -> Option<Move> {
        let mut best: Option<(i32, Move)> = None;
        for &m in captures {
            let s = self.tactical_score(pos, m).unwrap_or(i32::MIN);
            if best.is_none_or(|(b, _)| s > b) {
                best = Some((s, m));
            }
        }
        best.map(|(_, m)| m)
    }

    /// The squares of the opponent's pieces worth at least `need` centipawns on the board.
    fn victims_worth(&self, pos: &Position, need: i32) -> Bitboard {
        let mut victims = Bitboard::EMPTY;
        for &(value, k) in &self.eval.by_board_value {
            if value < need {
                break;
            }
            victims |= pos.pieces_of(!pos.side_to_move(), k);
        }
        victims
    }

    /// `in_check`: whether the side to move is in check (the parent knows it cheaply).
    /// `legal`: `pos`'s legal moves in [`Position::generate_legal`] order where the caller
    /// holds them (a search's leaf), so that this node generates none.
    #[allow(clippy::too_many_arguments)]
    fn qsearch(
        &mut self,
        pos: &Position,
        tally: Tally,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        after_losing_drop: bool,
        qply: u32,
        in_check: bool,
        legal: Option<&[Move]>,
    ) -> i32 {
        self.nodes += 1;
        if self.check_budget() {
            return 0;
        }
        debug_assert_eq!(in_check, pos.in_check());
        debug_assert!(legal.is_none_or(|l| l == pos.legal_moves().as_slice()), "the legal moves given are not the position's");
        // In check every evasion is searched; otherwise only captures, generated alone
        // (a shogi position's drops would be most of a full list), or picked from the
        // legal moves given (generate_captures' moves are theirs, in the same order). A side
        // not in check without any move is left to the full-width search: here it stands pat.
        let mut list = MoveList::new();
        if in_check {
            if legal.is_none() {
                pos.generate_legal(&mut list);
            }
            if legal.unwrap_or(&list).is_empty() {
                return Self::no_moves_score(pos, ply, after_losing_drop);
            }
        }
        debug_assert_eq!(tally, self.eval.tally(pos), "incremental tally");
        let stand = self.eval.evaluate_with(pos, tally);
        if qply >= MAX_QPLY || ply >= MAX_PLY {
            return stand;
        }
        let mut best = -INF;
        if !in_check {
            // Captures are generated only when standing pat does not already cut off.
            if stand >= beta {
                return stand;
            }
            best = stand;
            if stand > alpha {
                alpha = stand;
            }
            if legal.is_none() {
                // Delta pruning (below) drops every capture whose victim, even with a
                // promotion, cannot lift the score to alpha: those are not generated.
                let need = alpha - stand - DELTA_MARGIN - PROMOTION_GAIN;
                let victims = if need > 0 { self.victims_worth(pos, need) } else { self.variant.geometry.all };
                pos.generate_captures_out_of_check(victims, &mut list);
            }
        }
        let mut buf = std::mem::take(&mut self.buffers[ply]);
        buf.clear();
        let v = self.variant;
        for &m in legal.unwrap_or(&list) {
            if in_check {
                let s = self.tactical_score(pos, m).unwrap_or(0);
                buf.push((s, m));
                continue;
            }
            let MoveKind::Board { from, to, promote } = m.kind() else { continue };
            let Some(victim) = pos.piece_at(to) else { continue };
            if !promote {
                // Where the capture may promote, only the promoting form is searched.
                let k = pos.piece_at(from).map(|p| p.kind);
                let zone = v.promotion_zone[pos.side_to_move().index()];
                if k.is_some_and(|k| v.kind(k).promotes_to.is_some()) && (zone.has(from) || zone.has(to)) {
                    continue;
                }
            }
            // Delta pruning: even winning the victim outright cannot reach alpha.
            let gain = self.eval.values.board(victim.kind) + if promote { PROMOTION_GAIN } else { 0 };
            if stand + gain + DELTA_MARGIN < alpha {
                continue;
            }
            buf.push((self.tactical_score(pos, m).unwrap_or(0), m));
        }
        // Each child is tested for check by the move alone (`in_check_after`): a node
        // searches one or two captures before it cuts, too few to pay for first finding
        // which moves can give check (as the one-ply mate check does over a leaf's hundred
        // moves).
        for i in 0..buf.len() {
            let m = select(&mut buf, i);
            let child_tally = self.eval.tally_after(pos, m, tally);
            let mut child = pos.clone();
            child.play_unchecked(m);
            let score = if child.flag_reached() {
                MATE - (ply as i32 + 1)
            } else {
                -self.qsearch(&child, child_tally, -beta, -alpha, ply + 1, self.is_losing_drop(m), qply + 1, child.in_check_after(m), None)
            };
            if self.stop {
                break;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        self.buffers[ply] = buf;
        if self.stop {
            return 0;
        }
        best
    }

    /// The quiescence score of `pos` for the side to move, in centipawns: the static
    /// evaluation after the captures (all evasions in check) that pay, without a budget.
    /// Mate scores come back as ±[`MATE`] minus the plies to it.
    pub fn quiescence(&mut self, pos: &Position) -> i32 {
        self.quiescence_root(pos, None)
    }

    /// [`AlphaBeta::quiescence`] where the caller already holds `pos`'s legal moves, in
    /// [`Position::generate_legal`] order (a search's leaf has generated them to expand
    /// it): the same score, without generating them again.
    pub fn quiescence_among(&mut self, pos: &Position, legal: &[Move]) -> i32 {
        self.quiescence_root(pos, Some(legal))
    }

    fn quiescence_root(&mut self, pos: &Position, legal: Option<&[Move]>) -> i32 {
        self.stop = false;
        self.node_limit = u64::MAX;
        self.deadline = None;
        self.path.clear();
        self.qsearch(pos, self.eval.tally(pos), -INF, INF, 0, false, 0, pos.in_check(), legal)
    }

    /// The principal variation: `best`, then the table's moves while they are legal.
    fn principal_variation(&self, root: &Position, best: Move, max_len: usize) -> Vec<Move> {
        let mut pv = vec![best];
        let mut pos = root.clone();
        let mut seen = vec![pos.key()];
        pos.play_unchecked(best);
        while pv.len() < max_len && !pos.flag_reached() && !seen.contains(&pos.key()) {
            seen.push(pos.key());
            let Some(m) = self.tt_probe(pos.key()).and_then(|e| e.mv) else { break };
            if !pos.is_legal(m) {
                break;
            }
            pv.push(m);
            pos.play_unchecked(m);
        }
        pv
    }
}

fn score_to_tt(s: i32, ply: usize) -> i32 {
    if s > MATE_BOUND {
        s + ply as i32
    } else if s < -MATE_BOUND {
        s - ply as i32
    } else {
        s
    }
}

fn score_from_tt(s: i32, ply: usize) -> i32 {
    if s > MATE_BOUND {
        s - ply as i32
    } else if s < -MATE_BOUND {
        s + ply as i32
    } else {
        s
    }
}

/// An internal score as a [`Score`] for the side to move.
fn to_score(s: i32) -> Score {
    if s > MATE_BOUND {
        Score::Mate(MATE - s)
    } else if s < -MATE_BOUND {
        Score::Mate(-(MATE + s))
    } else {
        Score::Cp(s)
    }
}

/// Every root move's score from one search: what a teacher's policy and value targets
/// are made of ([`AlphaBeta::score_root_moves`]).
#[derive(Clone, Debug, PartialEq)]
pub struct RootScores {
    /// Each legal move with its score for the side to move, `None` where it is more than
    /// the margin below the best move (only an upper bound is known).
    pub moves: Vec<(Move, Option<Score>)>,
    /// The best move and its score.
    pub best: Move,
    pub score: Score,
    pub nodes: u64,
}

impl AlphaBeta {
    /// Scores every legal move of the game's position at `depth` plies (and quiescence):
    /// an ordinary iterative-deepening search first (it fills the table and gives the best
    /// score b), then each move's reply searched in the window (b − `margin_cp` − 1, +∞),
    /// so that every move within `margin_cp` of the best gets its score and every other
    /// one only the bound "below b − margin" (exact as far as the quiescence search's
    /// delta pruning, whose cuts depend on the window, allows). `None` when there is no
    /// legal move.
    /// Root noise, if any, is not applied: these are the moves' own scores.
    pub fn score_root_moves(&mut self, game: &Game, depth: u32, margin_cp: i32) -> Option<RootScores> {
        let legal = game.legal_moves();
        if legal.is_empty() {
            return None;
        }
        let noise = std::mem::replace(&mut self.noise_cp, 0.0);
        let t = self.think(game, &Budget { depth: Some(depth.max(1)), ..Budget::default() });
        self.noise_cp = noise;
        self.root_offsets.clear();
        let mut nodes = t.nodes;
        let best_internal = match t.score {
            Score::Cp(c) => c,
            Score::Mate(n) if n >= 0 => MATE - n,
            Score::Mate(n) => -(MATE + n),
        };
        let root = game.position().clone();
        // `think` left the path at the game's history before the root.
        self.path.push(root.key());
        self.nodes = 0;
        self.node_limit = u64::MAX;
        self.deadline = None;
        self.stop = false;
        let mut alpha = best_internal.saturating_sub(margin_cp.max(0)).saturating_sub(1).max(-INF + 1);
        let mut moves = Vec::with_capacity(legal.len());
        let (mut best, mut best_score) = (legal[0], i32::MIN);
        // The table can make a move's second search disagree with the first (search
        // instability); if every move then fails low, all are searched with a full window.
        for _ in 0..2 {
            moves.clear();
            best_score = i32::MIN;
            for &m in &legal {
                let mut child = root.clone();
                child.play_unchecked(m);
                let s = if child.flag_reached() {
                    MATE - 1
                } else {
                    let ld = self.is_losing_drop(m);
                    let child_tally = self.eval.tally(&child);
                    -self.search(&child, child_tally, depth.max(1) as i32 - 1, -INF, -alpha, 1, ld)
                };
                if s > best_score {
                    (best, best_score) = (m, s);
                }
                moves.push((m, (s > alpha).then(|| to_score(s))));
            }
            if best_score > alpha {
                break;
            }
            alpha = -INF + 1;
        }
        self.path.pop();
        nodes += self.nodes;
        Some(RootScores { moves, best, score: to_score(best_score), nodes })
    }
}

impl Baseline for AlphaBeta {
    fn name(&self) -> String {
        "alphabeta".to_string()
    }

    fn new_game(&mut self) {
        // A fresh table each game keeps games independent of one another (reproducible).
        self.tt.iter_mut().for_each(|e| *e = TtEntry::default());
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
        self.history.iter_mut().for_each(|h| *h = 0);
    }

    fn set_interrupt(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.interrupt = Some(flag);
    }

    fn think(&mut self, game: &Game, budget: &Budget) -> Thought {
        let root = game.position().clone();
        let legal = game.legal_moves();
        if legal.is_empty() {
            return Thought::just(None);
        }
        let unlimited = budget.depth.is_none() && budget.nodes.is_none() && budget.deadline.is_none();
        let max_depth = budget.depth.unwrap_or(if unlimited { DEFAULT_DEPTH } else { MAX_DEPTH }).clamp(1, MAX_DEPTH);
        self.nodes = 0;
        self.node_limit = budget.nodes.unwrap_or(u64::MAX).max(1);
        self.deadline = budget.deadline;
        self.stop = false;
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
        self.history.iter_mut().for_each(|h| *h /= 4);
        // The path: every position of the game before the root.
        self.path.clear();
        let mut p = game.start().clone();
        for &m in game.moves() {
            self.path.push(p.key());
            p.play_unchecked(m);
        }
        let start = Instant::now();
        self.root_offsets.clear();
        if self.noise_cp > 0.0 {
            let x = self.noise_cp;
            for &m in &legal {
                let r = self.rng.random_range(-x..=x).round() as i32;
                self.root_offsets.push((m, r));
            }
        }

        // Fallback if not even one root move gets searched: the table's move, else the
        // first move in ordering (best capture).
        let fallback = {
            let tt_move = self.tt_probe(root.key()).and_then(|e| e.mv).filter(|m| legal.contains(m));
            let mut buf = Vec::new();
            self.order(&root, &legal, tt_move, 0, &mut buf);
            let n = buf.len();
            select(&mut buf, 0);
            debug_assert!(n > 0);
            buf[0].1
        };
        let mut completed: Option<(Move, i32, u32)> = None;
        let root_tally = self.eval.tally(&root);
        for d in 1..=max_depth {
            self.root_best = None;
            let score = self.search(&root, root_tally, d as i32, -INF, INF, 0, false);
            if self.stop {
                if completed.is_none() {
                    if let Some((m, s)) = self.root_best {
                        completed = Some((m, s, d));
                    }
                }
                break;
            }
            let Some((m, _)) = self.root_best else { break };
            completed = Some((m, score, d));
            // A mate within the horizon is final.
            let score = score - self.root_offset(m);
            if score.abs() > MATE_BOUND && MATE - score.abs() <= d as i32 {
                break;
            }
            if let Some(dl) = budget.deadline {
                // The next iteration would most likely not finish.
                let now = Instant::now();
                if now >= dl || (now - start) * 2 > dl - now {
                    break;
                }
            }
        }
        let (best, score, depth) = match completed {
            // The reported score is the move's own, without its noise.
            Some((m, s, d)) => (m, s - self.root_offset(m), d),
            None => (fallback, self.eval.evaluate(&root), 0),
        };
        let pv = self.principal_variation(&root, best, depth.max(1) as usize);
        Thought { best: Some(best), score: to_score(score), depth, nodes: self.nodes, pv }
    }
}

#[cfg(test)]
mod noise_tests {
    use super::*;

    /// Every root move's plain score at `depth`, searched one by one with a full window.
    fn plain_root_scores(v: &'static Variant, game: &Game, depth: i32) -> Vec<(Move, i32)> {
        let root = game.position().clone();
        game.legal_moves()
            .into_iter()
            .map(|m| {
                let mut ab = AlphaBeta::new(v, 1 << 12);
                ab.path = vec![root.key()];
                let mut child = root.clone();
                child.play_unchecked(m);
                let s = if child.flag_reached() { MATE - 1 } else { -ab.search(&child, ab.eval.tally(&child), depth - 1, -INF, INF, 1, ab.is_losing_drop(m)) };
                (m, s)
            })
            .collect()
    }

    #[test]
    fn root_move_scores_are_exact_within_the_margin_and_bounded_below_it() {
        // At the start, where the plain search is exact (see the test below).
        let v = Variant::builtin("pocket-copper").unwrap();
        let game = Game::new(Position::start(v), None);
        for d in [1u32, 2] {
            let plain = plain_root_scores(v, &game, d as i32);
            let best = plain.iter().map(|x| x.1).max().unwrap();
            let margin = 20;
            let rs = AlphaBeta::new(v, 1 << 12).score_root_moves(&game, d, margin).unwrap();
            assert_eq!(rs.moves.len(), plain.len());
            assert_eq!(rs.score, to_score(best));
            assert_eq!(plain.iter().find(|x| x.0 == rs.best).unwrap().1, best);
            let (mut inside, mut outside) = (0, 0);
            for (&(m, s), &(m2, p)) in rs.moves.iter().zip(&plain) {
                assert_eq!(m, m2);
                if p >= best - margin {
                    assert_eq!(s, Some(to_score(p)), "depth {d}: {m:?}");
                    inside += 1;
                } else {
                    assert_eq!(s, None, "depth {d}: {m:?} at {p} is below the margin");
                    outside += 1;
                }
            }
            assert!(inside > 1 && outside > 0, "depth {d}: {inside} inside, {outside} outside");
        }
    }

    #[test]
    fn noisy_root_search_maximises_the_noised_scores_exactly() {
        // The shifted windows must give the same answer as scoring every root move on
        // its own and adding its noise: the chosen move's noised score is the maximum.
        // (Checked where the plain search is exact too: delta pruning in the quiescence
        // search makes scores depend on the window once captures come within reach.)
        let v = Variant::builtin("pocket-copper").unwrap();
        let game = Game::new(Position::start(v), None);
        for d in [1u32, 2] {
            let plain = plain_root_scores(v, &game, d as i32);
            let t = AlphaBeta::new(v, 1 << 12).think(&game, &Budget { depth: Some(d), ..Budget::default() });
            assert_eq!(t.score, to_score(plain.iter().map(|x| x.1).max().unwrap()), "the plain search is exact here");
            for seed in 0..6 {
                let mut ab = AlphaBeta::new(v, 1 << 12).with_noise(40.0, seed);
                let t = ab.think(&game, &Budget { depth: Some(d), ..Budget::default() });
                let noised = |m: Move| plain.iter().find(|(x, _)| *x == m).unwrap().1 + ab.root_offset(m);
                let best = plain.iter().map(|&(m, _)| noised(m)).max().unwrap();
                let chosen = t.best.unwrap();
                assert_eq!(noised(chosen), best, "depth {d}, seed {seed}");
                assert!(ab.root_offsets.iter().all(|&(_, r)| r.abs() <= 40));
                assert!(ab.root_offsets.iter().any(|&(_, r)| r != 0));
                // The reported score is the move's own, without its noise.
                assert_eq!(t.score, to_score(noised(chosen) - ab.root_offset(chosen)));
            }
        }
    }
}

#[cfg(test)]
mod capture_first_tests {
    use super::*;

    #[test]
    fn capture_first_searches_exactly_as_the_full_list() {
        // The shortcut must not change a single move, score, principal variation or node
        // count: games played with it on and off stay identical, move for move.
        for (name, plies, depth) in [("pocket-copper", 70, 3), ("shogi", 50, 3), ("hand-shogi", 40, 3), ("pocket-copper", 30, 4)] {
            let v = Variant::builtin(name).unwrap();
            let mut fast = AlphaBeta::new(v, 1 << 16).with_noise(30.0, 7);
            let mut full = AlphaBeta::new(v, 1 << 16).with_noise(30.0, 7);
            full.capture_first = false;
            let mut game = Game::new(Position::start(v), None);
            let budget = Budget { depth: Some(depth), ..Budget::default() };
            let mut captures = 0;
            for ply in 0..plies {
                if game.is_over() {
                    break;
                }
                let a = fast.think(&game, &budget);
                let b = full.think(&game, &budget);
                assert_eq!(a, b, "{name}, ply {ply}");
                let m = a.best.unwrap();
                captures += usize::from(matches!(m.kind(), MoveKind::Board { to, .. } if game.position().piece_at(to).is_some()));
                game.play(m).unwrap();
            }
            // The games reached the middle game, where the shortcut does its work.
            assert!(captures >= 2, "{name}: {captures} captures");
        }
    }
}
