//! `Game::checkmate_within`, the search's mate search through checks: hand-made positions,
//! agreement with a brute force over `Game`'s own verdicts on random playouts of every
//! variant at three plies, soundness at five, and the budget.

mod common;
use common::*;
use rand::{Rng, SeedableRng};
use rules::{Color, Game, Outcome, TerminationReason};

fn after(g: &Game, m: rules::Move) -> Game {
    let mut h = g.clone();
    h.play_unchecked(m);
    h
}

/// The game says `c` has won, by checkmate or the flag.
fn mated_or_flag(g: &Game, c: Color) -> bool {
    matches!(g.result(), Some(r) if r.outcome == Outcome::Win(c) && matches!(r.reason, TerminationReason::Checkmate | TerminationReason::Flag))
}

/// Whether `m` wins within `plies` plies through checks, by brute force over the game's
/// verdicts: it mates or reaches the flag at once, or (with three plies or more) it checks
/// and every reply either loses at once or leaves such a move within `plies` − 2.
fn forces(g: &Game, m: rules::Move, plies: u32) -> bool {
    let us = g.position().side_to_move();
    let won = |k: &Game| matches!(k.result(), Some(r) if r.outcome == Outcome::Win(us));
    let h = after(g, m);
    if h.is_over() {
        return mated_or_flag(&h, us);
    }
    plies >= 3
        && h.position().in_check()
        && h.legal_moves().iter().all(|&r| {
            let k = after(&h, r);
            if k.is_over() {
                won(&k)
            } else {
                k.legal_moves().iter().any(|&w| forces(&k, w, plies - 2))
            }
        })
}

fn brute_force(g: &Game, plies: u32) -> Vec<rules::Move> {
    g.legal_moves().iter().copied().filter(|&m| forces(g, m, plies)).collect()
}

/// The search's budget (`search` crate, `MATE_BUDGET`): the agreement test below runs with
/// it, so a budget that cut these searches short would fail it.
const SEARCH_BUDGET: u64 = 200;

fn found(v: &'static rules::Variant, sfen: &str) -> Option<String> {
    let p = pos(v, sfen);
    Game::new(p.clone(), None).checkmate_within(3, SEARCH_BUDGET).map(|m| p.move_to_usi(m))
}

#[test]
fn a_rook_drop_then_a_silver_drop_mates() {
    // White's king on 1a and a pawn on 9e (so White always has a move), Black's pawn on
    // 1c, a Rook and a Silver in hand. Nothing mates at once (S*2b is taken by the king). R*1b checks and is guarded by the pawn,
    // and covers 1a, 2b and the b rank, so the king must go to 2a; S*3b then checks it
    // and covers 3a, and the rook guards the silver along the b rank: mate.
    let sfen = "8k/9/8P/9/p8/9/9/9/4K4 b RS 1";
    let v = variant("shogi");
    assert_eq!(pos(v, sfen).winning_move(), None);
    assert_eq!(found(v, sfen).as_deref(), Some("R*1b"));
    let g = game(&pos(v, sfen), &["R*1b"]);
    assert_eq!(g.legal_moves().iter().map(|&m| g.position().move_to_usi(m)).collect::<Vec<_>>(), ["1a2a"]);
    let g = game(&pos(v, sfen), &["R*1b", "1a2a", "S*3b"]);
    assert_eq!(g.result().map(|r| r.reason), Some(TerminationReason::Checkmate));
    // Without the pawn the king takes the rook: no forced mate through checks.
    assert_eq!(found(v, "8k/9/9/9/p8/9/9/9/4K4 b RS 1"), None);
}

#[test]
fn a_mate_in_one_is_a_mate_in_three() {
    // The gold drop on 1b, guarded by the pawn on 1c.
    assert_eq!(found(variant("pocket-copper"), "8k/9/8P/9/9/9/9/9/4K4 b G 1 -").as_deref(), Some("G*1b"));
}

#[test]
fn agrees_with_the_games_own_verdicts_on_random_playouts() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for name in ["pocket-copper", "shogi", "minishogi", "hand-shogi"] {
        let v = variant(name);
        let (mut positions, mut with_mate, mut deeper) = (0, 0, 0);
        for _ in 0..12 {
            let mut g = Game::new(rules::Position::start(v), Some(160));
            while !g.is_over() {
                let forced = brute_force(&g, 3);
                let found = g.checkmate_within(3, SEARCH_BUDGET);
                positions += 1;
                let at = || format!("{name}: {}", g.position().to_sfen());
                match found {
                    Some(m) => {
                        with_mate += 1;
                        deeper += usize::from(g.position().winning_move().is_none());
                        assert!(forced.contains(&m), "{}: {} does not force a win", at(), g.position().move_to_usi(m));
                    }
                    None => assert!(forced.is_empty(), "{}: missed {}", at(), g.position().move_to_usi(forced[0])),
                }
                let moves = g.legal_moves();
                g.play_unchecked(moves[rng.random_range(0..moves.len())]);
            }
        }
        assert!(
            deeper >= 10,
            "{name}: only {deeper} of {positions} positions had a mate in three and not in one ({with_mate} with either): the test saw too few"
        );
    }
}

#[test]
fn five_plies_find_every_mate_in_three_and_only_forced_wins() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
    let v = variant("pocket-copper");
    let mut only_five = 0;
    for _ in 0..6 {
        let mut g = Game::new(rules::Position::start(v), Some(160));
        while !g.is_over() {
            let three = g.checkmate_within(3, u64::MAX);
            let five = g.checkmate_within(5, u64::MAX);
            let at = g.position().to_sfen();
            match five {
                Some(m) => {
                    assert!(forces(&g, m, 5), "{at}: {} does not force a win in five", g.position().move_to_usi(m));
                    only_five += usize::from(three.is_none());
                }
                None => assert!(three.is_none(), "{at}: a mate in three but none in five"),
            }
            let moves = g.legal_moves();
            g.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
    }
    assert!(only_five >= 5, "only {only_five} positions had a mate in five and not in three: the test saw too few");
}

#[test]
fn a_spent_budget_gives_up() {
    // The rook-and-silver mate in three needs the search below R*1b: with one position
    // of budget it answers nothing, with enough it finds the mate.
    let g = Game::new(pos(variant("shogi"), "8k/9/8P/9/p8/9/9/9/4K4 b RS 1"), None);
    // One position is the root itself: the reply after R*1b is left unsearched.
    assert_eq!(g.checkmate_within(3, 1), None);
    assert_eq!(g.checkmate_within(3, 0), None);
    assert!(g.checkmate_within(3, SEARCH_BUDGET).is_some());
}
