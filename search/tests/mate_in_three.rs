//! The three-ply mate check (`SearchConfig::mate_in_three_depth`): a root mate in three
//! is played even when Gumbel-top-k did not sample it, and, with depth 1, every root move
//! that lets the opponent force mate in three is proven lost after a single visit.

mod common;
use common::*;
use search::{Search, SearchConfig, UniformEvaluator};

fn with_depth(cfg: SearchConfig, depth: Option<u16>) -> SearchConfig {
    SearchConfig { mate_in_one: true, mate_in_three_depth: depth, ..cfg }
}

#[test]
fn a_root_mate_in_three_outside_the_sampled_actions_is_played() {
    // R*1b (guarded by the pawn) forces K2a, then S*3b mates; nothing wins at once (the
    // pawn on 9e keeps White from being stalemated).
    let g = game("shogi", "8k/9/8P/9/p8/9/9/9/4K4 b RS 1");
    assert!(winning_moves(&g, 1).is_empty());
    let mates: Vec<String> = winning_moves(&g, 2).iter().map(|&m| usi(&g, m)).collect();
    // The helpers' brute force also finds quiet wins (R*2c: stalemate or mate next).
    assert!(mates.contains(&"R*1b".to_string()), "{mates:?}");
    // m = 2 roots sampled by prior (uniform: the first two legal moves), 4 simulations.
    let narrow = SearchConfig { gumbel_m: 2, ..SearchConfig::gumbel(4).for_evaluation() };
    let without = Search::with_seed(g.clone(), with_depth(narrow.clone(), None), 1).run(&UniformEvaluator);
    let chosen = usi(&g, without.chosen.unwrap());
    assert!(!mates.contains(&chosen), "the two sampled actions include no forced win: {chosen}");
    let mut s = Search::with_seed(g.clone(), with_depth(narrow, Some(0)), 1);
    let with = s.run(&UniformEvaluator);
    assert_eq!(with.chosen.map(|m| usi(&g, m)).as_deref(), Some("R*1b"));
    assert_eq!(s.proven(), Some((1.0, 3)), "the root is proven, a win in three plies");
}

/// Positions from random Pocket Shogi Copper playouts where some moves let the opponent
/// force mate in three (and none mates at once either way), and some do not.
fn mixed_positions(count: usize) -> Vec<rules::Game> {
    playout_positions(5, count, |g| {
        let moves = g.legal_moves();
        let allows = |m: rules::Move| {
            let next = after(g, m);
            !next.is_over() && next.position().winning_move().is_none() && next.checkmate_within(3, u64::MAX).is_some()
        };
        let n = moves.iter().filter(|&&m| allows(m)).count();
        let quiet = g.position().winning_move().is_none() && g.checkmate_within(3, u64::MAX).is_none();
        let no_quick_loss = moves.iter().all(|&m| after(g, m).is_over() || after(g, m).position().winning_move().is_none());
        n > 0 && n < moves.len() && quiet && no_quick_loss
    })
}

#[test]
fn with_depth_one_moves_that_allow_a_mate_in_three_are_proven_lost_after_one_visit() {
    for g in mixed_positions(8) {
        for depth in [Some(0), Some(1)] {
            let (by_move, _) = q_after_one_visit_each(&g, with_depth(SearchConfig::gumbel(1).for_evaluation(), depth));
            for &m in g.legal_moves().iter() {
                let q = by_move[&m];
                let next = after(&g, m);
                let mate = if next.is_over() { None } else { next.checkmate_within(3, u64::MAX) };
                if let Some(w) = mate {
                    assert!(move_wins(&next, w, 2), "{} does not force a win in {}", usi(&next, w), next.position().to_sfen());
                }
                let expected = if next.is_over() {
                    q
                } else if depth == Some(1) && mate.is_some() {
                    -1.0
                } else {
                    0.0 // the uniform evaluator's value
                };
                assert_eq!(q, expected, "{} in {} (depth {depth:?})", usi(&g, m), g.position().to_sfen());
            }
        }
    }
}
