//! One conformance harness over every variant (and every start of the Pocket Shogi
//! Copper family): random games where each position is checked for
//! - generated moves == the moves of the independent reference generator, the
//!   `rules-reference` crate (as sets, no duplicates),
//! - the captures generated alone == the legal moves that land on an enemy piece, in
//!   the same order, and, for a side not in check, those generated onto a subset of
//!   squares == the captures landing there,
//! - incremental Zobrist key == recomputed key,
//! - SFEN round-trip, and USI round-trip of every legal move,
//! - after every legal move, the check judged from the move alone == the full test,
//! - every game ends with a result.

use rand::seq::IndexedRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rules::{Game, Position, Variant};
use rules_reference::Reference;
use std::collections::HashSet;

fn check_position(pos: &Position, oracle: &Reference) {
    let v = pos.variant();
    let sfen = pos.to_sfen();
    let moves = pos.legal_moves();
    let fast: HashSet<_> = moves.iter().copied().collect();
    assert_eq!(fast.len(), moves.len(), "duplicate moves generated in {sfen}");
    let slow: HashSet<_> = oracle.legal_moves(&pos.to_setup()).into_iter().collect();
    if fast != slow {
        let extra: Vec<_> = fast.difference(&slow).map(|&m| v.move_to_usi(m)).collect();
        let missing: Vec<_> = slow.difference(&fast).map(|&m| v.move_to_usi(m)).collect();
        panic!("{}: move generation differs in {sfen}\n  generated but illegal: {extra:?}\n  legal but not generated: {missing:?}", v.name);
    }
    let mut captures = rules::MoveList::new();
    pos.generate_captures(&mut captures);
    let expected: Vec<_> = moves.iter().copied().filter(|&m| matches!(m.kind(), rules::MoveKind::Board { to, .. } if pos.piece_at(to).is_some())).collect();
    assert_eq!(captures.as_slice(), expected.as_slice(), "captures generated alone differ in {sfen}");
    // Out of check, the form that takes a subset of victims' squares (a pseudo-random one
    // from the key: half of them) and finds pins only for the pieces that capture: all
    // squares give the captures, the subset those landing there.
    if !pos.in_check() {
        let key = pos.key();
        let subset = v
            .geometry
            .all
            .into_iter()
            .filter(|sq| (key >> (sq.index() % 64)) & 1 == 1)
            .fold(rules::Bitboard::EMPTY, |b, sq| b | rules::Bitboard::from_square(sq));
        for mask in [v.geometry.all, subset] {
            let mut fast = rules::MoveList::new();
            pos.generate_captures_out_of_check(mask, &mut fast);
            let expected: Vec<_> = captures.iter().copied().filter(|&m| matches!(m.kind(), rules::MoveKind::Board { to, .. } if mask.has(to))).collect();
            assert_eq!(fast.as_slice(), expected.as_slice(), "captures out of check onto {mask:?} differ in {sfen}");
        }
    }
    assert_eq!(pos.key(), pos.compute_key(), "incremental key differs from recomputed key in {sfen}");
    let reparsed = Position::from_sfen(v, &sfen).unwrap_or_else(|e| panic!("own SFEN {sfen} does not parse: {e}"));
    assert_eq!(&reparsed, pos, "SFEN round-trip changed the position {sfen}");
    assert_eq!(reparsed.key(), pos.key());
    for &m in &moves {
        let text = pos.move_to_usi(m);
        assert_eq!(pos.parse_usi(&text), Ok(m), "USI round-trip of {text} in {sfen}");
        let mut child = pos.clone();
        child.play_unchecked(m);
        assert_eq!(child.in_check_after(m), child.in_check(), "check after {text} (judged from the move) in {sfen}");
    }
}

fn random_games(variant: &'static Variant, start_sfen: &str, games: usize, max_plies: u32, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let start = Position::from_sfen(variant, start_sfen).unwrap();
    let oracle = Reference::new(variant);
    for _ in 0..games {
        let mut game = Game::new(start.clone(), Some(max_plies));
        while !game.is_over() {
            check_position(game.position(), &oracle);
            let moves = game.legal_moves();
            let m = *moves.choose(&mut rng).expect("an unfinished game has a legal move");
            game.play_unchecked(m);
        }
        assert!(game.result().is_some(), "{}: game ended without a result", variant.name);
        assert!(game.position().key() == game.position().compute_key());
    }
}

#[test]
fn standard_shogi_random_games() {
    let v = Variant::builtin("shogi").unwrap();
    random_games(v, &v.start_sfen, 40, 200, 1);
}

#[test]
fn minishogi_random_games() {
    let v = Variant::builtin("minishogi").unwrap();
    random_games(v, &v.start_sfen, 150, 200, 2);
}

#[test]
fn hand_shogi_random_games() {
    let v = Variant::builtin("hand-shogi").unwrap();
    random_games(v, &v.start_sfen, 20, 160, 3);
}

#[test]
fn pocket_copper_random_games_every_start() {
    let v = Variant::builtin("pocket-copper").unwrap();
    for (i, (_, sfen)) in v.start_family().into_iter().enumerate() {
        random_games(v, &sfen, 12, 200, 10 + i as u64);
    }
}

#[test]
fn pocket_copper_random_games_every_option() {
    let opts = [("promoted-knight", "gold"), ("flag-win", "off"), ("copper-forced-promotion", "off"), ("no-capture-draw", "on")];
    for (i, (name, choice)) in opts.iter().enumerate() {
        let v = Variant::load("pocket-copper", &[(name.to_string(), choice.to_string())]).unwrap();
        random_games(v, &v.start_sfen, 8, 200, 20 + i as u64);
    }
}
