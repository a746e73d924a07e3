//! `Position::winning_move`, the search's one-ply mate check: hand-made positions for
//! each way to win at once (and the pawn-drop mate that loses instead), and agreement
//! with a brute force over `Game`'s own verdicts on random playouts of every variant.

mod common;
use common::*;
use rand::{Rng, SeedableRng};
use rules::{Game, Outcome, TerminationReason};

fn usi(p: &rules::Position) -> Option<String> {
    p.winning_move().map(|m| p.move_to_usi(m))
}

#[test]
fn a_gold_drop_protected_by_a_pawn_mates_in_the_corner() {
    // Gold on 1b: checks 1a and covers 2a and 2b; the pawn on 1c protects it.
    let p = pos(variant("pocket-copper"), "8k/9/8P/9/9/9/9/9/4K4 b G 1 -");
    assert_eq!(usi(&p).as_deref(), Some("G*1b"));
    // Without the pawn the king takes the gold: no win in one.
    let p = pos(variant("pocket-copper"), "8k/9/9/9/9/9/9/9/4K4 b G 1 -");
    assert_eq!(usi(&p), None);
}

#[test]
fn a_board_move_that_mates_is_found() {
    // The gold steps from 2c to 1b (protected by the pawn on 1c): mate.
    let p = pos(variant("shogi"), "8k/9/7GP/9/9/9/9/9/4K4 b - 1");
    assert_eq!(usi(&p).as_deref(), Some("2c1b"));
}

#[test]
fn the_king_stepping_onto_its_flag_square_wins() {
    let p = pos(variant("pocket-copper"), "9/4K4/9/9/9/9/9/9/k8 b - 1 -");
    assert_eq!(usi(&p).as_deref(), Some("5b5a"));
    // With the flag win off it is an ordinary move.
    let off = pos(variant_with("pocket-copper", "flag-win", "off"), "9/4K4/9/9/9/9/9/9/k8 b - 1 -");
    assert_eq!(usi(&off), None);
}

#[test]
fn a_pawn_drop_mate_loses_so_it_is_no_winning_move() {
    // P*1b would mate (2a and 2b hold White's own pawn and silver, the gold on 2c protects 1b), but
    // in Pocket Shogi Copper the player who drops it loses.
    let sfen = "7pk/7s1/7G1/9/9/9/9/9/4K4 b P 1 -";
    let p = pos(variant("pocket-copper"), sfen);
    let after = game(&p, &["P*1b"]);
    assert_eq!(after.result().map(|r| (r.outcome, r.reason)), Some((Outcome::Win(rules::Color::White), TerminationReason::DropMate)));
    assert_eq!(usi(&p), None);
}

/// Moves after which `Game` says the mover has won by checkmate or the flag.
fn brute_force_wins(g: &Game) -> Vec<rules::Move> {
    let mover = g.position().side_to_move();
    g.legal_moves()
        .iter()
        .copied()
        .filter(|&m| {
            let mut next = g.clone();
            next.play_unchecked(m);
            matches!(next.result(), Some(r) if r.outcome == Outcome::Win(mover) && matches!(r.reason, TerminationReason::Checkmate | TerminationReason::Flag))
        })
        .collect()
}

#[test]
fn agrees_with_the_games_own_verdicts_on_random_playouts() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for name in ["pocket-copper", "shogi", "minishogi", "hand-shogi"] {
        let v = variant(name);
        let (mut positions, mut with_win) = (0, 0);
        for _ in 0..60 {
            let mut g = Game::new(rules::Position::start(v), Some(300));
            while !g.is_over() {
                let wins = brute_force_wins(&g);
                let found = g.position().winning_move();
                positions += 1;
                match found {
                    Some(m) => {
                        with_win += 1;
                        assert!(wins.contains(&m), "{name}: {} is no win in {}", g.position().move_to_usi(m), g.position().to_sfen());
                    }
                    None => assert!(wins.is_empty(), "{name}: missed {} in {}", g.position().move_to_usi(wins[0]), g.position().to_sfen()),
                }
                // Take the win half the time, so games go on past positions that have one.
                let moves = g.legal_moves();
                let m = match found {
                    Some(m) if rng.random_bool(0.5) => m,
                    _ => moves[rng.random_range(0..moves.len())],
                };
                g.play_unchecked(m);
            }
        }
        assert!(with_win >= 20, "{name}: only {with_win} of {positions} positions had a win in one: the test saw too few");
    }
}
