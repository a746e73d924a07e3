//! The search finds forced wins with the uniform evaluator (no knowledge but the rules):
//! mates in one and three in standard shogi, the flag win in Pocket Shogi Copper, with
//! both root policies. Every puzzle is first verified exhaustively with the rules engine.

mod common;
use common::*;
use search::{Fpu, RootPolicy, Search, SearchConfig, UniformEvaluator};

/// Evaluation-play settings for a knowledge-free search (uniform priors, value 0):
/// Gumbel considers every root move (m ≥ #legal); PUCT uses an optimistic first-play
/// urgency so every move is tried once before any is deepened (with the default FPU
/// reduction and all values 0 it dives down a few lines and finds no mate).
fn config(policy: RootPolicy, n: u32) -> SearchConfig {
    let base = match policy {
        RootPolicy::Gumbel => SearchConfig { gumbel_m: 128, ..SearchConfig::gumbel(n) },
        RootPolicy::Puct => SearchConfig { fpu: Fpu::Absolute(1.0), fpu_root: Fpu::Absolute(1.0), ..SearchConfig::puct(n) },
    };
    base.for_evaluation()
}

fn search(g: &rules::Game, policy: RootPolicy, n: u32, seed: u64) -> search::SearchResult<rules::Move> {
    let mut s = Search::with_seed(g.clone(), config(policy, n), seed);
    s.run(&UniformEvaluator)
}

const POLICIES: [RootPolicy; 2] = [RootPolicy::Gumbel, RootPolicy::Puct];

#[test]
fn mate_in_one() {
    // Gold drop on 5b, protected by the pawn on 5c ("atama-kin").
    let g = game("shogi", "4k4/9/4P4/9/9/9/9/9/4K4 b G 1");
    let mates: Vec<String> = winning_moves(&g, 1).iter().map(|&m| usi(&g, m)).collect();
    assert_eq!(mates, ["G*5b"]);
    for policy in POLICIES {
        let r = search(&g, policy, 200, 1);
        let m = r.chosen.unwrap();
        assert_eq!(usi(&g, m), "G*5b", "{policy:?}");
        assert_eq!(r.exact, Some(1.0), "{policy:?}: the solver proves the root");
    }
}

/// Mate-in-3 puzzles in the shogi sense (three plies: key, any reply, mate — a forced
/// win within two moves of the side to move, none in one), with their unique key move.
const MATES_IN_THREE: [(&str, &str); 3] = [
    // Quiet key: the dragon cuts the king off on the b-rank first.
    ("7k1/9/4+R4/9/9/9/9/9/K8 b - 1", "5c4b"),
    // Rook takes the silver and promotes, then mates with the horse or dragon.
    ("8k/3R2s2/8p/3+B5/9/9/9/9/1K7 b - 1", "6b3b+"),
    // Bishop sacrifice on 6c.
    ("5k3/5n1+R1/4s4/9/5B3/9/9/9/2K6 b - 1", "4e6c+"),
];

#[test]
fn mate_in_three_puzzles_are_sound() {
    for (sfen, key) in MATES_IN_THREE {
        let g = game("shogi", sfen);
        assert!(!wins_within(&g, 1), "{sfen}: no mate in one");
        let keys: Vec<String> = winning_moves(&g, 2).iter().map(|&m| usi(&g, m)).collect();
        assert_eq!(keys, [key], "{sfen}");
    }
}

/// Budgets: with uniform priors and values Gumbel's Sequential Halving has no signal
/// until a mate is found below a root move, so that move must get enough visits in the
/// first phase (n / (⌈log₂ 39⌉ · 39) ≈ 68 visits at n = 16000) to prove it; PUCT with
/// optimistic FPU tries every reply and every mate in breadth first.
#[test]
fn mate_in_three() {
    for (sfen, key) in MATES_IN_THREE {
        let g = game("shogi", sfen);
        for (policy, n) in [(RootPolicy::Gumbel, 16000), (RootPolicy::Puct, 3000)] {
            let r = search(&g, policy, n, 7);
            let m = r.chosen.unwrap();
            assert_eq!(usi(&g, m), key, "{policy:?} in {sfen}: q={:?}", r.q_values);
            assert_eq!(r.exact, Some(1.0), "{policy:?} in {sfen}: the solver proves the win");
        }
    }
}

#[test]
fn pocket_copper_flag_win() {
    // King on 5b steps onto 5a; king on 5c needs two moves.
    for (sfen, moves) in [("k8/4K4/9/9/9/9/9/9/9 b - 1 -", 1), ("k8/9/4K4/9/9/9/9/9/9 b - 1 -", 2)] {
        let g = game("pocket-copper", sfen);
        assert!(!winning_moves(&g, moves).is_empty() && (moves == 1 || !wins_within(&g, moves - 1)));
        for policy in POLICIES {
            let r = search(&g, policy, 400, 3);
            let m = r.chosen.unwrap();
            assert!(move_wins(&g, m, moves), "{policy:?} {sfen}: {} does not win in {moves}", usi(&g, m));
            if moves == 1 {
                assert_eq!(usi(&g, m), "5b5a");
                let end = after(&g, m).result().unwrap();
                assert_eq!(end.reason, rules::TerminationReason::Flag);
            }
        }
    }
}

#[test]
fn mate_in_three_with_self_play_noise() {
    // Gumbel noise on, several seeds.
    for (sfen, key) in MATES_IN_THREE {
        let g = game("shogi", sfen);
        for seed in 0..3 {
            let cfg = SearchConfig { gumbel_m: 128, ..SearchConfig::gumbel(16000) };
            let r = Search::with_seed(g.clone(), cfg, seed).run(&UniformEvaluator);
            assert_eq!(usi(&g, r.chosen.unwrap()), key, "seed {seed} in {sfen}");
        }
    }
}
