//! Gumbel AlphaZero on toy games, against values computed by hand (in the comments)
//! or by an independent re-implementation of the paper's formulas in the test.

use search::toy::{Bandit, Tree, TreeNode};
use search::{EvalRequest, Evaluation, FnEvaluator, QNorm, Search, SearchConfig};

fn bandit_search(values: &[f32], priors: &[f32], root_value: f32, cfg: SearchConfig, seed: u64) -> Search<Bandit> {
    let priors = priors.to_vec();
    let ev = FnEvaluator(move |_: &EvalRequest<Bandit>| Evaluation { priors: priors.clone(), value: root_value });
    let mut s = Search::with_seed(Bandit::new(values.to_vec()), cfg, seed);
    s.run(&ev);
    s
}

fn assert_close(a: &[f32], b: &[f32], tol: f32) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol, "{a:?} vs {b:?}");
    }
}

const P8: [f32; 8] = [0.30, 0.20, 0.15, 0.10, 0.10, 0.08, 0.05, 0.02];
const Q8: [f32; 8] = [-0.5, 0.2, 0.9, -1.0, 0.4, 0.0, 0.8, 0.6];

/// m = 8 arms, n = 48 simulations, no noise, c_visit = 2, c_scale = 1, min-max q̂.
/// ⌈log₂ 8⌉ = 3 phases:
/// - phase 0: all 8 arms (ordered by logits; arms 3 and 4 tie and keep their order),
///   ⌊48 / (3·8)⌋ = 2 visits each (16 simulations);
///   q̂ = (q + 1) / 1.9 and σ = (2 + 2) · q̂; scores ln π + σ:
///   0: −0.1513, 1: 0.9169, 2: 2.1029, 3: −2.3026, 4: 0.6448, 5: −0.4205, 6: 0.7937,
///   7: −0.5436 → keep 2, 1, 6, 4 (arm 7 has the better value than 1 and 4 but a prior
///   too small);
/// - phase 1: ⌊48 / (3·4)⌋ = 4 visits each (16); σ = (2 + 6) · q̂; scores 2: 6.1029,
///   6: 4.5832, 4: 3.5922, 1: 3.4432 → keep 2, 6;
/// - phase 2 (last): the 16 left split evenly, 8 each; scores 2: 14.1029, 6: 12.1622.
///
/// Visits: [2, 6, 14, 2, 6, 2, 14, 2]; the move is arm 2; π' = softmax(ln π + σ) with
/// σ = (2 + 14) · q̂ = [1.3e-5, 0.003143, 0.856081, 0.0, 0.008469, 0.000233, 0.122934,
/// 0.009126].
#[test]
fn sequential_halving_phases_visits_and_target_match_hand_computation() {
    let cfg = SearchConfig { gumbel_m: 8, gumbel_scale: 0.0, c_visit: 2.0, c_scale: 1.0, q_norm: QNorm::MinMax, solver: false, ..SearchConfig::gumbel(48) };
    let s = bandit_search(&Q8, &P8, 0.0, cfg, 0);
    let phases: Vec<(Vec<usize>, u32)> = s.gumbel_phases().iter().map(|p| (p.actions.clone(), p.visits_per_action)).collect();
    assert_eq!(phases, vec![(vec![0, 1, 2, 3, 4, 5, 6, 7], 2), (vec![2, 1, 6, 4], 4), (vec![2, 6], 8)]);
    let r = s.result();
    assert_eq!(r.visits, vec![2, 6, 14, 2, 6, 2, 14, 2]);
    assert_eq!(r.simulations, 48);
    assert_eq!(r.chosen, Some(2));
    let pi: Vec<f32> = r.policy.iter().map(|&(_, p)| p).collect();
    assert_close(&pi, &[1.3e-5, 0.003143, 0.856081, 0.0, 0.008469, 0.000233, 0.122934, 0.009126], 2e-6);
    assert!((pi.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    for (i, q) in r.q_values.iter().enumerate() {
        assert_eq!(*q, Some(Q8[i]));
    }
}

/// 3 arms, π = [0.5, 0.3, 0.2], v̂(root) = 0.2, values [0, 0.8, −1], m = 2, n = 2,
/// c_visit = 1, c_scale = 1. Arms 0 and 1 are visited once; arm 2 is not, so its
/// completed Q is v_mix = (0.2 + 2 · (0.5·0 + 0.3·0.8) / 0.8) / 3 = 0.8 / 3.
/// Min-max: q̂ = [0, 1, 1/3], σ = (1 + 1) · q̂ → π' = [0.160965, 0.713628, 0.125407].
/// Bounds: q̂ = (q + 1) / 2 → π' = [0.349948, 0.467294, 0.182758].
#[test]
fn improved_policy_completes_unvisited_actions_with_the_mixed_value() {
    for (norm, expected) in [(QNorm::MinMax, [0.160965, 0.713628, 0.125407]), (QNorm::Bounds, [0.349948, 0.467294, 0.182758])] {
        let cfg = SearchConfig { gumbel_m: 2, gumbel_scale: 0.0, c_visit: 1.0, c_scale: 1.0, q_norm: norm, ..SearchConfig::gumbel(2) };
        let s = bandit_search(&[0.0, 0.8, -1.0], &[0.5, 0.3, 0.2], 0.2, cfg, 0);
        let r = s.result();
        assert_eq!(r.visits, vec![1, 1, 0]);
        assert_eq!(r.q_values, vec![Some(0.0), Some(0.8), None]);
        let pi: Vec<f32> = r.policy.iter().map(|&(_, p)| p).collect();
        assert_close(&pi, &expected, 2e-6);
        assert_eq!(r.chosen, Some(1));
        // Root value: (v̂ + Σ N·Q) / (1 + ΣN) = (0.2 + 0 + 0.8) / 3.
        assert!((r.value - 1.0 / 3.0).abs() < 1e-6);
        // The target's value Σ π'·completedQ over completedQ = [0, 0.8, 0.8/3]:
        // min-max 0.8 · 0.713628 + 0.266667 · 0.125407 = 0.604344,
        // bounds 0.8 · 0.467294 + 0.266667 · 0.182758 = 0.422570.
        let want = if norm == QNorm::MinMax { 0.604344 } else { 0.422570 };
        assert!((r.policy_value - want).abs() < 2e-6, "{} against {want}", r.policy_value);
    }
}

#[test]
fn gumbel_top_k_samples_the_m_best_by_noise_plus_logits() {
    for seed in 0..20 {
        let cfg = SearchConfig { gumbel_m: 4, ..SearchConfig::gumbel(40) };
        let s = bandit_search(&Q8, &P8, 0.0, cfg, seed);
        let g = s.root_gumbel().unwrap();
        let mut order: Vec<usize> = (0..8).collect();
        order.sort_by(|&a, &b| (g[b].1 + P8[b].ln()).total_cmp(&(g[a].1 + P8[a].ln())));
        let first = &s.gumbel_phases()[0];
        assert_eq!(first.actions, order[..4], "seed {seed}");
        // 4 actions, 2 phases: ⌊40 / (2·4)⌋ = 5 each, then the 20 left split 10 / 10.
        assert_eq!(first.visits_per_action, 5);
        assert_eq!(s.gumbel_phases()[1].visits_per_action, 10);
        let r = s.result();
        assert_eq!(r.visits.iter().sum::<u32>(), 40);
        assert_eq!(r.visits.iter().filter(|&&n| n == 15).count(), 2);
        assert_eq!(r.visits.iter().filter(|&&n| n == 5).count(), 2);
        assert_eq!(r.visits.iter().filter(|&&n| n == 0).count(), 4);
        // The winner is the finalist with the best g + ln π + σ(q̂(completedQ)), with σ and
        // q̂ recomputed here from the paper's definitions (Danihelka et al. 2022, eq. 8
        // and appendix D): completedQ is q for visited arms and v_mix for the others, q̂
        // min-max normalises over all 8 completed values, σ = (c_visit + max N)·c_scale·q̂.
        let finalists: Vec<usize> = (0..8).filter(|&a| r.visits[a] == 15).collect();
        let completed = completed_q(&Q8, &P8, &r.visits, 0.0);
        let (lo, hi) = (completed.iter().copied().fold(f64::INFINITY, f64::min), completed.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        let sigma = |a: usize| (50.0 + 15.0) * 1.0 * (completed[a] - lo) / (hi - lo);
        let score = |a: usize| g[a].1 as f64 + (P8[a] as f64).ln() + sigma(a);
        let best = *finalists.iter().max_by(|&&a, &&b| score(a).total_cmp(&score(b))).unwrap();
        assert_eq!(r.chosen, Some(best), "seed {seed}");
        // The code's improved policy uses the same σ: π' = softmax(ln π + σ).
        let z: Vec<f64> = (0..8).map(|a| (P8[a] as f64).ln() + sigma(a)).collect();
        let zmax = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let total: f64 = z.iter().map(|x| (x - zmax).exp()).sum();
        let expected: Vec<f32> = z.iter().map(|x| ((x - zmax).exp() / total) as f32).collect();
        let pi: Vec<f32> = r.policy.iter().map(|&(_, p)| p).collect();
        assert_close(&pi, &expected, 1e-5);
    }
}

/// completedQ (Danihelka et al. 2022, eq. 10 and appendix D): an arm's mean value if it was
/// visited, else v_mix = (v̂ + (Σ_b N(b)) · Σ_visited π(a)·q(a) / Σ_visited π(a)) / (1 + Σ_b N(b)).
fn completed_q(q: &[f32], priors: &[f32], visits: &[u32], root_value: f64) -> Vec<f64> {
    let total: f64 = visits.iter().map(|&n| n as f64).sum();
    let visited = || (0..q.len()).filter(|&a| visits[a] > 0);
    let weighted: f64 = visited().map(|a| priors[a] as f64 * q[a] as f64).sum::<f64>() / visited().map(|a| priors[a] as f64).sum::<f64>();
    let v_mix = (root_value + total * weighted) / (1.0 + total);
    (0..q.len()).map(|a| if visits[a] > 0 { q[a] as f64 } else { v_mix }).collect()
}

/// v_mix by hand for one case: π = P8, visits on arms 2 and 6 only (7 each), v̂ = 0:
/// Σ π·q over {2, 6} = 0.15·0.9 + 0.05·0.8 = 0.175, Σ π = 0.2, so the weighted mean is
/// 0.875 and v_mix = (0 + 14 · 0.875) / 15 = 0.816667.
#[test]
fn completed_q_helper_matches_a_hand_computed_v_mix() {
    let c = completed_q(&Q8, &P8, &[0, 0, 7, 0, 0, 0, 7, 0], 0.0);
    assert_eq!((c[2], c[6]), (0.9f32 as f64, 0.8f32 as f64));
    for a in [0, 1, 3, 4, 5, 7] {
        assert!((c[a] - 0.816667).abs() < 1e-5, "{c:?}");
    }
}

#[test]
fn sequential_halving_with_odd_counts_and_leftover_budget() {
    // m = 5: ⌈log₂ 5⌉ = 3 phases, 5 → 3 → 2 arms; n = 50: ⌊50/15⌋ = 3 each (15),
    // ⌊50/9⌋ = 5 each (15), then the 20 left: 10 each.
    let values = [0.1, 0.5, -0.3, 0.9, 0.0];
    let cfg = SearchConfig { gumbel_m: 5, gumbel_scale: 0.0, solver: false, ..SearchConfig::gumbel(50) };
    let s = bandit_search(&values, &[0.2; 5], 0.0, cfg, 0);
    let phases: Vec<(Vec<usize>, u32)> = s.gumbel_phases().iter().map(|p| (p.actions.clone(), p.visits_per_action)).collect();
    // Equal priors: the values decide.
    assert_eq!(phases, vec![(vec![0, 1, 2, 3, 4], 3), (vec![3, 1, 0], 5), (vec![3, 1], 10)]);
    let r = s.result();
    assert_eq!(r.visits, vec![8, 18, 3, 18, 3]);
    assert_eq!(r.chosen, Some(3));
}

#[test]
fn budget_smaller_than_one_visit_each() {
    // n = 3 < m = 8: the three best by g + logits get a visit; the move is the best of
    // them (all have the most visits, 1).
    let cfg = SearchConfig { gumbel_m: 8, gumbel_scale: 0.0, solver: false, ..SearchConfig::gumbel(3) };
    let s = bandit_search(&Q8, &P8, 0.0, cfg, 0);
    let r = s.result();
    assert_eq!(r.visits, vec![1, 1, 1, 0, 0, 0, 0, 0]);
    assert_eq!(r.chosen, Some(2), "arm 2 has the best value of the three visited");
}

#[test]
fn zero_simulations_play_the_best_prior_plus_noise() {
    let cfg = SearchConfig { gumbel_m: 8, gumbel_scale: 0.0, ..SearchConfig::gumbel(0) };
    let s = bandit_search(&Q8, &P8, 0.0, cfg, 0);
    let r = s.result();
    assert_eq!(r.chosen, Some(0));
    assert_eq!(r.visits, vec![0; 8]);
    // No visit: π' = π.
    for (i, &(_, p)) in r.policy.iter().enumerate() {
        assert!((p - P8[i]).abs() < 1e-6);
    }
}

#[test]
fn solver_plays_the_best_exact_arm_when_all_are_proven() {
    let cfg = SearchConfig { gumbel_m: 8, gumbel_scale: 0.0, ..SearchConfig::gumbel(16) };
    let s = bandit_search(&Q8, &P8, 0.0, cfg, 0);
    let r = s.result();
    assert_eq!(r.exact, Some(0.9));
    assert_eq!(r.chosen, Some(2));
}

/// Below the root the action is argmax_a [π'(a) − N(a) / (1 + ΣN)]. A root with one
/// move leads to node X (player 1 to move) with three leaves; all simulations but the
/// first (which evaluates X) go through X. The test replays the rule with its own
/// implementation of π' (completed Q with v_mix, min-max q̂, σ) and compares the visits.
#[test]
fn interior_selection_follows_the_deterministic_rule() {
    // Leaf values are for player 0 (to move at the leaves): X's player sees −v.
    let leaf_v0 = [-0.5f32, 0.2, -0.1];
    let priors_x = [0.2f32, 0.5, 0.3];
    let v_hat_x = 0.1f32;
    let mut nodes = vec![TreeNode { to_move: 0, children: vec![1], value: 0.0 }, TreeNode { to_move: 1, children: vec![2, 3, 4], value: 0.0 }];
    for v in leaf_v0 {
        nodes.push(TreeNode { to_move: 0, children: vec![], value: v });
    }
    let ev = FnEvaluator(move |r: &EvalRequest<Tree>| match r.state.at {
        0 => Evaluation { priors: vec![1.0], value: 0.0 },
        _ => Evaluation { priors: priors_x.to_vec(), value: v_hat_x },
    });
    let n = 30;
    let cfg = SearchConfig { gumbel_scale: 0.0, solver: false, ..SearchConfig::gumbel(n) };
    let mut s = Search::with_seed(Tree::new(nodes), cfg, 0);
    s.run(&ev);

    let q: Vec<f32> = leaf_v0.iter().map(|v| -v).collect();
    let mut visits = [0u32; 3];
    for _ in 0..n - 1 {
        let sum_n: u32 = visits.iter().sum();
        let max_n = *visits.iter().max().unwrap();
        let (mut sp, mut spq) = (0.0, 0.0);
        for a in 0..3 {
            if visits[a] > 0 {
                sp += priors_x[a];
                spq += priors_x[a] * q[a];
            }
        }
        let v_mix = if sp > 0.0 { (v_hat_x + sum_n as f32 * spq / sp) / (1.0 + sum_n as f32) } else { v_hat_x };
        let cq: Vec<f32> = (0..3).map(|a| if visits[a] > 0 { q[a] } else { v_mix }).collect();
        let (l, h) = (cq.iter().copied().fold(f32::INFINITY, f32::min), cq.iter().copied().fold(f32::NEG_INFINITY, f32::max));
        let z: Vec<f32> = (0..3).map(|a| priors_x[a].ln() + (50.0 + max_n as f32) * (cq[a] - l) / (h - l).max(1e-8)).collect();
        let zmax = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = z.iter().map(|x| (x - zmax).exp()).collect();
        let total: f32 = e.iter().sum();
        let score: Vec<f32> = (0..3).map(|a| e[a] / total - visits[a] as f32 / (1.0 + sum_n as f32)).collect();
        let best = (0..3).fold(0, |b, a| if score[a] > score[b] { a } else { b });
        visits[best] += 1;
    }
    let got: Vec<u32> = s.node_visits(&[0]).unwrap().iter().map(|&(_, n)| n).collect();
    assert_eq!(got, visits.to_vec());
    assert_eq!(visits.iter().sum::<u32>(), n - 1);
    // By hand: first visit by the prior (leaf 1, q = −0.2); then v_mix = −0.05 for leaves
    // 0 and 2, equal q̂, so the larger prior (leaf 2, q = 0.1); then leaf 0's completed
    // Q is v_mix = (0.1 + 2 · (0.5·(−0.2) + 0.3·0.1) / 0.8) / 3 = −0.025 < 0.1, and with
    // c_visit = 50 σ makes π'(leaf 0) negligible: it is never tried.
    assert_eq!(visits, [0, 1, 28]);
}

/// With PUCT the target is N(a)/ΣN, so its value Σ N(a)·Q(a)/ΣN is the root mean
/// (v̂ + Σ N·Q)/(1 + ΣN) without the root's own evaluation: ((1 + ΣN)·value − v̂)/ΣN.
#[test]
fn a_puct_targets_value_is_the_root_mean_without_the_root() {
    let s = bandit_search(&[0.1, 0.6, -0.4, 0.3], &[0.4, 0.3, 0.2, 0.1], -0.5, SearchConfig { solver: false, ..SearchConfig::puct(40) }, 3);
    let r = s.result();
    let n: u32 = r.visits.iter().sum();
    assert_eq!(n, 40);
    let want = ((1.0 + n as f32) * r.value - (-0.5)) / n as f32;
    assert!((r.policy_value - want).abs() < 1e-5, "{} against {want}", r.policy_value);
    let by_hand: f32 = r.visits.iter().zip([0.1, 0.6, -0.4, 0.3]).map(|(&v, q)| v as f32 * q).sum::<f32>() / n as f32;
    assert!((r.policy_value - by_hand).abs() < 1e-5);
}
