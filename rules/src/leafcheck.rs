//! The search's leaf checks made cheap: [`Position::winning_move_among`] (the one-ply
//! mate and flag win, from a legal-move list the caller already has) and
//! [`Game::checkmate_within_fast`] (the three-ply mate through checks). Both answer
//! exactly what [`Position::winning_move`] and [`Game::checkmate_within`] answer, the
//! same move included; they only skip work that cannot change the answer:
//!
//! - A move can mate only if it gives check, and can win by the flag only if the mover's
//!   king stands on its flag square after it. Whether a move gives check is read off the
//!   position before it: directly, when the moved piece (promoted, if it promotes) lands
//!   on a square from which its kind attacks the enemy king; by discovery, only when it
//!   leaves a square that is the first piece on one of the king's eight lines (a drop
//!   adds a piece, so it uncovers nothing). Only those candidates are played and judged
//!   as before, in the legal list's order, so the first winning move is the same one.
//! - After a check, "the opponent has a legal move" is first asked of the king alone
//!   (its legal moves as move generation makes them); only a king with none generates
//!   the whole list.
//!
//! A position whose side not to move is already in check (an illegal position no game
//! reaches) takes the plain path.

use crate::game::{Game, Outcome};
use crate::moves::{Move, MoveKind};
use crate::piece::{DropMate, MAX_KINDS};
use crate::position::Position;
use crate::Bitboard;

impl Position {
    /// The first piece on each line from `king` (none without a king or a slider in the
    /// variant): the only squares whose emptying can uncover a check on it.
    fn first_on_lines_of(&self, king: Option<crate::Square>, occ: Bitboard) -> Bitboard {
        let mut lines = Bitboard::EMPTY;
        if let Some(k) = king {
            if self.variant.has_sliders {
                for d in 0..8 {
                    lines |= self.slide(k, d, occ);
                }
            }
        }
        lines
    }

    /// [`Position::winning_move`] from `legal`, which must be this position's legal moves
    /// in [`Position::legal_moves`]'s order: the same answer, the same move.
    pub fn winning_move_among(&self, legal: &[Move]) -> Option<Move> {
        let v = self.variant;
        let us = self.side;
        let occ = self.occupied();
        let enemy_king = self.kings[(!us).index()];
        let flag = v.flag_squares.map(|f| f[us.index()]);
        // A flag win is possible after a board move only onto the flag or with the king
        // already there; a pocket move only with the king already there.
        let king_on_flag = flag.is_some() && self.kings[us.index()] == flag;
        if let Some(ek) = enemy_king {
            if self.attackers_to(ek, us, occ).any() {
                return self.winning_move_in(legal);
            }
        }
        // The first piece on each of the enemy king's lines: the only squares whose
        // emptying can uncover a check.
        let lines = self.first_on_lines_of(enemy_king, occ);
        let mut checking: [Option<Bitboard>; MAX_KINDS] = [None; MAX_KINDS];
        let mut gives_check_from = |k: crate::PieceKind, to| match enemy_king {
            Some(ek) => checking[k.index()].get_or_insert_with(|| self.attacks_from(!us, k, ek, occ)).has(to),
            None => false,
        };
        for &m in legal {
            let (candidate, dropped) = match m.kind() {
                MoveKind::Drop { kind, to } | MoveKind::PocketDrop { kind, to } => {
                    (v.kind(kind).drop_mate != DropMate::Loses && gives_check_from(kind, to), true)
                }
                MoveKind::Board { from, to, promote } => {
                    let check = enemy_king.is_some()
                        && (lines.has(from)
                            || self.piece_at(from).is_none_or(|p| {
                                let after = if promote { v.kind(p.kind).promotes_to.unwrap_or(p.kind) } else { p.kind };
                                gives_check_from(after, to)
                            }));
                    (king_on_flag || flag == Some(to) || check, false)
                }
                MoveKind::PocketIn { from } => (king_on_flag || (enemy_king.is_some() && lines.has(from)), false),
            };
            if !candidate {
                continue;
            }
            let mut child = self.clone();
            child.play_unchecked(m);
            if !dropped && child.flag_reached() {
                return Some(m);
            }
            if enemy_king.is_some() && child.in_check() && !child.has_legal_move_king_first() {
                return Some(m);
            }
        }
        None
    }

    /// [`Position::has_legal_move`], trying the king's moves before generating the rest.
    pub fn has_legal_move_king_first(&self) -> bool {
        let us = self.side;
        if let Some(ksq) = self.kings[us.index()] {
            let v = self.variant;
            let occ = self.occupied();
            let targets = self.attacks_from(us, v.royal_kind, ksq, occ) & !self.by_color[us.index()];
            if targets.any() {
                let occ_without_king = occ ^ Bitboard::from_square(ksq);
                let sliders = self.sliders_of(!us);
                for to in targets {
                    if !self.is_attacked(to, !us, occ_without_king, sliders) {
                        return true;
                    }
                }
            }
        }
        self.has_legal_move()
    }

    /// [`Position::winning_move`], with the cheap path of [`Position::winning_move_among`].
    pub fn winning_move_fast(&self) -> Option<Move> {
        self.winning_move_among(&self.legal_moves())
    }
}

impl Game {
    /// [`Game::checkmate_within`] with the cheap checks above: the same answer, the same
    /// move, the same positions counted against `max_positions`.
    pub fn checkmate_within_fast(&self, plies: u32, max_positions: u64) -> Option<Move> {
        checkmate_search(self, plies, &mut { max_positions })
    }
}

fn checkmate_search(game: &Game, plies: u32, budget: &mut u64) -> Option<Move> {
    if game.is_over() || plies == 0 || *budget == 0 {
        return None;
    }
    *budget -= 1;
    let pos = game.position();
    if plies <= 2 {
        return pos.winning_move_fast();
    }
    let us = pos.side_to_move();
    let won = |g: &Game| matches!(g.result(), Some(r) if r.outcome == Outcome::Win(us));
    let legal = pos.legal_moves();
    for m in checks_and_flag_moves(pos, &legal) {
        let mut g = game.clone();
        g.play_unchecked(m);
        if g.is_over() {
            if won(&g) {
                return Some(m);
            }
            continue;
        }
        let forced = g.position().legal_moves().iter().all(|&reply| {
            let mut h = g.clone();
            h.play_unchecked(reply);
            if h.is_over() {
                won(&h)
            } else {
                checkmate_search(&h, plies - 2, budget).is_some()
            }
        });
        if forced {
            return Some(m);
        }
        if *budget == 0 {
            return None;
        }
    }
    None
}

/// The moves of `legal` (in its order) after which the opponent is in check or the
/// mover's king stands on its flag: [`Game::checkmate_within`]'s filter.
fn checks_and_flag_moves<'a>(pos: &'a Position, legal: &'a [Move]) -> impl Iterator<Item = Move> + 'a {
    let v = pos.variant;
    let us = pos.side;
    let occ = pos.occupied();
    let enemy_king = pos.kings[(!us).index()];
    let flag = v.flag_squares.map(|f| f[us.index()]);
    let king_on_flag = flag.is_some() && pos.kings[us.index()] == flag;
    let plain = enemy_king.is_some_and(|ek| pos.attackers_to(ek, us, occ).any());
    let lines = pos.first_on_lines_of(enemy_king, occ);
    let mut checking: [Option<Bitboard>; MAX_KINDS] = [None; MAX_KINDS];
    legal.iter().copied().filter(move |&m| {
        let mut gives_check_from = |k: crate::PieceKind, to| match enemy_king {
            Some(ek) => checking[k.index()].get_or_insert_with(|| pos.attacks_from(!us, k, ek, occ)).has(to),
            None => false,
        };
        let candidate = plain
            || match m.kind() {
                MoveKind::Drop { kind, to } | MoveKind::PocketDrop { kind, to } => king_on_flag || gives_check_from(kind, to),
                MoveKind::Board { from, to, promote } => match pos.piece_at(from) {
                    Some(p) => {
                        let after = if promote { v.kind(p.kind).promotes_to.unwrap_or(p.kind) } else { p.kind };
                        king_on_flag || flag == Some(to) || lines.has(from) || gives_check_from(after, to)
                    }
                    None => true,
                },
                MoveKind::PocketIn { from } => king_on_flag || lines.has(from),
            };
        if !candidate {
            return false;
        }
        let mut after = pos.clone();
        after.play_unchecked(m);
        after.in_check() || after.flag_reached()
    })
}
