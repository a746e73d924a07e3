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
use crate::{Bitboard, PieceKind, Square};

/// Which moves of a position can give check, read off the position before them: a move
/// gives check only directly, when the moved piece (promoted, if it promotes) lands where
/// its kind attacks the enemy king, or by discovery, when it leaves the first square of one
/// of the king's lines that holds a slider of the mover's behind it (a drop uncovers
/// nothing). For a legal position (the side not to move not in check) a move that is not a
/// candidate never gives check; a candidate may or may not.
pub(crate) struct CheckCandidates<'a> {
    pos: &'a Position,
    king: Option<Square>,
    lines: Bitboard,
    checking: [Option<Bitboard>; MAX_KINDS],
}

impl CheckCandidates<'_> {
    /// Whether `m`, a move of the position, may give check.
    #[inline]
    pub(crate) fn may_give_check(&mut self, m: Move) -> bool {
        let Some(ek) = self.king else { return false };
        let pos = self.pos;
        let mut attacks = |k: PieceKind, to: Square| self.checking[k.index()].get_or_insert_with(|| pos.attacks_from(!pos.side, k, ek, pos.occupied())).has(to);
        match m.kind() {
            MoveKind::Drop { kind, to } | MoveKind::PocketDrop { kind, to } => attacks(kind, to),
            MoveKind::Board { from, to, promote } => {
                self.lines.has(from)
                    || pos.piece_at(from).is_none_or(|p| {
                        let after = if promote { pos.variant.kind(p.kind).promotes_to.unwrap_or(p.kind) } else { p.kind };
                        attacks(after, to)
                    })
            }
            MoveKind::PocketIn { from } => self.lines.has(from),
        }
    }
}

impl Position {
    /// The [`CheckCandidates`] of this position's moves.
    pub(crate) fn check_candidates(&self) -> CheckCandidates<'_> {
        let king = self.kings[(!self.side).index()];
        let mut lines = Bitboard::EMPTY;
        if let Some(k) = king {
            let (occ, sliders) = (self.occupied(), self.sliders_of(self.side));
            // Only a line holding a slider of the mover's can be uncovered.
            if sliders.any() {
                for d in 0..8 {
                    if (self.variant.geometry.ray(k, d) & sliders).any() {
                        if let Some(first) = self.nearest(k, d, occ) {
                            lines.set(first);
                        }
                    }
                }
            }
        }
        CheckCandidates { pos: self, king, lines, checking: [None; MAX_KINDS] }
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
        let mut checks = self.check_candidates();
        for &m in legal {
            let (dropped, candidate) = match m.kind() {
                MoveKind::Drop { kind, .. } | MoveKind::PocketDrop { kind, .. } => {
                    (true, v.kind(kind).drop_mate != DropMate::Loses && checks.may_give_check(m))
                }
                MoveKind::Board { to, .. } => (false, king_on_flag || flag == Some(to) || checks.may_give_check(m)),
                MoveKind::PocketIn { .. } => (false, king_on_flag || checks.may_give_check(m)),
            };
            if !candidate {
                continue;
            }
            let mut child = self.clone();
            child.play_unchecked(m);
            if !dropped && child.flag_reached() {
                return Some(m);
            }
            if enemy_king.is_some() && child.in_check_after(m) && !child.has_legal_move_king_first() {
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
    let mut checks = pos.check_candidates();
    legal.iter().copied().filter(move |&m| {
        let onto_flag = matches!(m.kind(), MoveKind::Board { to, .. } if flag == Some(to));
        let candidate = plain || king_on_flag || onto_flag || checks.may_give_check(m);
        if !candidate {
            return false;
        }
        let mut after = pos.clone();
        after.play_unchecked(m);
        after.in_check_after(m) || after.flag_reached()
    })
}

#[cfg(test)]
mod tests {
    use crate::{Game, Position, Variant};
    use rand::{Rng, SeedableRng};

    /// `CheckCandidates`: a legal move it does not name never gives check, and it names few
    /// enough of them to save the check test (most moves of a playout do not check). On
    /// random playouts of every shipped variant in which a check, where there is one, is
    /// played half of the time (so that checks are common).
    #[test]
    fn a_move_that_is_not_a_check_candidate_gives_no_check() {
        for (i, name) in ["pocket-copper", "shogi", "hand-shogi", "minishogi"].into_iter().enumerate() {
            let v = Variant::builtin(name).unwrap();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(701 + i as u64);
            let (mut candidates, mut checks, mut n) = (0, 0, 0);
            for _ in 0..20 {
                let mut g = Game::new(Position::start(v), Some(300));
                while !g.is_over() {
                    let p = g.position().clone();
                    let mut filter = p.check_candidates();
                    let mut checking = Vec::new();
                    for m in p.legal_moves() {
                        let mut c = p.clone();
                        c.play_unchecked(m);
                        let (may, gives) = (filter.may_give_check(m), c.in_check());
                        assert!(may || !gives, "{name}: {m:?} gives check from {}", p.to_sfen());
                        (candidates, checks, n) = (candidates + may as usize, checks + gives as usize, n + 1);
                        if gives {
                            checking.push(m);
                        }
                    }
                    let moves = p.legal_moves();
                    let m = if !checking.is_empty() && rng.random::<bool>() {
                        checking[rng.random_range(0..checking.len())]
                    } else {
                        moves[rng.random_range(0..moves.len())]
                    };
                    g.play_unchecked(m);
                }
            }
            assert!(checks > 0 && candidates * 2 < n, "{name}: {candidates} candidates, {checks} checks of {n} moves");
        }
    }
}
