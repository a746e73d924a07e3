#![allow(dead_code)]
//! Helpers: positions from SFEN, and an exhaustive forced-win check that the tests use
//! to verify their hand-made puzzles with the rules engine itself.

use rules::{Color, Game, Move, Outcome, Position, Variant};

pub fn game(variant: &str, sfen: &str) -> Game {
    let v = Variant::builtin(variant).unwrap();
    let p = Position::from_sfen(v, sfen).unwrap_or_else(|e| panic!("test SFEN {sfen}: {e}"));
    Game::new(p, None)
}

pub fn usi(g: &Game, m: Move) -> String {
    g.position().move_to_usi(m)
}

pub fn after(g: &Game, m: Move) -> Game {
    let mut h = g.clone();
    h.play_unchecked(m);
    h
}

fn won_by(g: &Game, c: Color) -> bool {
    matches!(g.result(), Some(r) if r.outcome == Outcome::Win(c))
}

/// Whether the side to move in `g` wins by force within `n` of its own moves, whatever
/// the opponent plays (exhaustive).
pub fn wins_within(g: &Game, n: u32) -> bool {
    !winning_moves(g, n).is_empty()
}

/// The moves of the side to move that win by force within `n` of its own moves.
pub fn winning_moves(g: &Game, n: u32) -> Vec<Move> {
    let me = g.position().side_to_move();
    g.legal_moves().iter().copied().filter(|&m| move_wins_within(g, m, n, me)).collect()
}

/// Whether playing `m` wins for the side to move within `n` of its own moves (`m` included).
pub fn move_wins(g: &Game, m: Move, n: u32) -> bool {
    move_wins_within(g, m, n, g.position().side_to_move())
}

fn move_wins_within(g: &Game, m: Move, n: u32, me: Color) -> bool {
    if n == 0 {
        return false;
    }
    let h = after(g, m);
    if h.is_over() {
        return won_by(&h, me);
    }
    if n == 1 {
        return false;
    }
    h.legal_moves().iter().all(|&r| {
        let k = after(&h, r);
        if k.is_over() {
            won_by(&k, me)
        } else {
            k.legal_moves().iter().any(|&m2| move_wins_within(&k, m2, n - 1, me))
        }
    })
}
