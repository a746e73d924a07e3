//! The one-ply mate check (`SearchConfig::mate_in_one`): a root mate is played even when
//! Gumbel-top-k did not sample it, every root move that lets the opponent win at once is
//! proven lost after a single visit, and a root reached through such a proven leaf is
//! searched afresh.

mod common;
use common::*;
use search::{Search, SearchConfig, UniformEvaluator};

/// Evaluation play, m = 2 roots sampled by prior (uniform: the first two legal moves).
fn narrow(n: u32, mate_in_one: bool) -> SearchConfig {
    SearchConfig { gumbel_m: 2, mate_in_one, ..SearchConfig::gumbel(n).for_evaluation() }
}

#[test]
fn a_mate_in_one_outside_the_sampled_actions_is_played() {
    let g = game("pocket-copper", "4k4/9/4P4/9/9/9/9/9/4K4 b G 1 -");
    let mates: Vec<String> = winning_moves(&g, 1).iter().map(|&m| usi(&g, m)).collect();
    assert_eq!(mates, ["G*5b"]);
    let without = Search::with_seed(g.clone(), narrow(4, false), 1).run(&UniformEvaluator);
    assert_ne!(without.chosen.map(|m| usi(&g, m)).as_deref(), Some("G*5b"), "the two sampled actions do not include the mate");
    let with = Search::with_seed(g.clone(), narrow(4, true), 1).run(&UniformEvaluator);
    assert_eq!(with.chosen.map(|m| usi(&g, m)).as_deref(), Some("G*5b"));
    assert_eq!(with.exact, Some(1.0), "the root is proven");
}

/// Positions from random Pocket Shogi Copper playouts where some moves let the opponent
/// win at once and some do not.
fn mixed_positions(count: usize) -> Vec<rules::Game> {
    playout_positions(11, count, |g| {
        let moves = g.legal_moves();
        let allows = moves.iter().filter(|&&m| after(g, m).winning_move_for_test()).count();
        allows > 0 && allows < moves.len() && g.position().winning_move().is_none()
    })
}

trait WinsAtOnce {
    fn winning_move_for_test(&self) -> bool;
}
impl WinsAtOnce for rules::Game {
    fn winning_move_for_test(&self) -> bool {
        !self.is_over() && self.position().winning_move().is_some()
    }
}

#[test]
fn moves_that_allow_a_win_in_one_are_proven_lost_after_one_visit() {
    for g in mixed_positions(12) {
        for mate_in_one in [false, true] {
            let (by_move, chosen) = q_after_one_visit_each(&g, SearchConfig { mate_in_one, ..SearchConfig::gumbel(1).for_evaluation() });
            for &m in g.legal_moves().iter() {
                let q = by_move[&m];
                let next = after(&g, m);
                let allows = next.winning_move_for_test();
                let expected = if next.is_over() {
                    q
                } else if allows && mate_in_one {
                    -1.0
                } else {
                    0.0 // the uniform evaluator's value
                };
                assert_eq!(q, expected, "{} in {} (allows a win in one: {allows}, check on: {mate_in_one})", usi(&g, m), g.position().to_sfen());
            }
            if mate_in_one {
                let chosen = chosen.unwrap();
                assert!(!after(&g, chosen).winning_move_for_test(), "{}: played a move that loses at once", g.position().to_sfen());
            }
        }
    }
}

#[test]
fn advancing_into_a_leaf_proven_by_the_check_searches_it_afresh() {
    let g = mixed_positions(1).pop().unwrap();
    let moves = g.legal_moves();
    let cfg = SearchConfig { gumbel_m: 1000, mate_in_one: true, ..SearchConfig::gumbel(moves.len() as u32).for_evaluation() };
    let mut s = Search::with_seed(g.clone(), cfg, 5);
    s.run(&UniformEvaluator);
    let blunder = moves.iter().copied().find(|&m| after(&g, m).winning_move_for_test()).unwrap();
    s.advance(blunder);
    let r = s.run(&UniformEvaluator);
    let next = after(&g, blunder);
    let win = r.chosen.expect("the new root has moves");
    let end = after(&next, win);
    assert!(end.is_over() && end.result().unwrap().outcome == rules::Outcome::Win(next.position().side_to_move()), "{} does not win", usi(&next, win));
    assert_eq!(r.exact, Some(1.0));
}
