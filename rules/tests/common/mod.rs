#![allow(dead_code)]
use rules::{Game, Position, Variant};
use std::collections::BTreeSet;

pub fn variant(name: &str) -> &'static Variant {
    Variant::builtin(name).unwrap()
}

pub fn variant_with(name: &str, option: &str, choice: &str) -> &'static Variant {
    Variant::load(name, &[(option.to_string(), choice.to_string())]).unwrap()
}

pub fn pos(v: &'static Variant, sfen: &str) -> Position {
    Position::from_sfen(v, sfen).unwrap_or_else(|e| panic!("test SFEN {sfen}: {e}"))
}

/// All legal moves as USI text.
pub fn moves(p: &Position) -> BTreeSet<String> {
    p.legal_moves().iter().map(|&m| p.move_to_usi(m)).collect()
}

/// Legal board moves starting on `from` (pocket moves excluded), as USI text.
pub fn moves_from(p: &Position, from: &str) -> BTreeSet<String> {
    moves(p).into_iter().filter(|m| m.starts_with(from) && !m.ends_with('&')).collect()
}

/// Destination squares of the legal non-promoting board moves from `from`.
pub fn targets(p: &Position, from: &str) -> BTreeSet<String> {
    moves_from(p, from).into_iter().filter(|m| !m.ends_with('+')).map(|m| m[2..4].to_string()).collect()
}

pub fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

pub fn legal(p: &Position, m: &str) -> bool {
    p.parse_usi(m).is_ok()
}

pub fn play(p: &Position, m: &str) -> Position {
    let mv = p.parse_usi(m).unwrap_or_else(|e| panic!("{e} in {}", p.to_sfen()));
    let mut q = p.clone();
    q.play_unchecked(mv);
    q
}

pub fn game(p: &Position, moves: &[&str]) -> Game {
    let mut g = Game::new(p.clone(), None);
    for m in moves {
        g.play_usi(m).unwrap_or_else(|e| panic!("{e} after {:?}", g.moves()));
    }
    g
}
