//! The search as a component: reproducibility, subtree reuse, batching across games,
//! the evaluators, PUCT targets and the edge cases of the resumable interface.

mod common;
use common::*;
use search::toy::{Bandit, Nim};
use search::{
    run_batched, CachedEvaluator, EvalRequest, Evaluation, Evaluator, FnEvaluator, RolloutEvaluator, Search, SearchConfig, SearchGame, SearchResult,
    UniformEvaluator,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

fn copper_start() -> rules::Game {
    let v = rules::Variant::builtin("pocket-copper").unwrap();
    rules::Game::new(rules::Position::start(v), None)
}

fn rollout() -> RolloutEvaluator {
    RolloutEvaluator::new(1, 16, 99)
}

/// Self-play with subtree reuse: the moves played and the targets recorded.
fn self_play(cfg: &SearchConfig, seed: u64, moves: usize) -> Vec<SearchResult<rules::Move>> {
    let mut s = Search::with_seed(copper_start(), cfg.clone(), seed);
    let mut out = Vec::new();
    for _ in 0..moves {
        let r = s.run(&rollout());
        let Some(m) = r.chosen else { break };
        out.push(r);
        s.advance(m);
    }
    out
}

#[test]
fn same_seed_same_moves_and_targets() {
    for cfg in [SearchConfig::gumbel(48), SearchConfig::puct(48)] {
        let a = self_play(&cfg, 5, 6);
        let b = self_play(&cfg, 5, 6);
        assert_eq!(a.len(), 6);
        assert_eq!(a, b, "{:?}", cfg.root_policy);
        let c = self_play(&cfg, 6, 6);
        assert_ne!(a, c, "{:?}: another seed, other noise", cfg.root_policy);
    }
}

#[test]
fn evaluation_play_is_deterministic_whatever_the_seed() {
    for cfg in [SearchConfig::gumbel(48).for_evaluation(), SearchConfig::puct(48).for_evaluation()] {
        assert_eq!(self_play(&cfg, 1, 3), self_play(&cfg, 2, 3), "{:?}", cfg.root_policy);
    }
}

#[test]
fn subtree_reuse_keeps_the_chosen_childs_statistics() {
    for cfg in [SearchConfig::gumbel(200), SearchConfig::puct(200)] {
        let mut s = Search::with_seed(copper_start(), cfg.clone(), 3);
        let r = s.run(&UniformEvaluator);
        let m = r.chosen.unwrap();
        let i = r.policy.iter().position(|&(x, _)| x == m).unwrap();
        let before = s.node_visits(&[m]).expect("the chosen child is expanded");
        let below: u32 = before.iter().map(|&(_, n)| n).sum();
        // Every visit of the child but the one that expanded it went on to a grandchild.
        assert_eq!(below, r.visits[i] - 1, "{:?}", cfg.root_policy);
        let size = s.tree_size();
        s.advance(m);
        assert!(!s.is_done() && s.simulations_done() == 0);
        assert!(s.tree_size().0 < size.0);
        assert_eq!(s.node_visits(&[]).unwrap(), before, "{:?}", cfg.root_policy);
        assert_eq!(s.result().visits, before.iter().map(|&(_, n)| n).collect::<Vec<_>>());
        // The root is expanded already: no evaluation of it, n new simulations on top.
        let calls = AtomicUsize::new(0);
        let counting = FnEvaluator(|r: &EvalRequest<rules::Game>| {
            calls.fetch_add(1, Ordering::Relaxed);
            Evaluation::uniform(r.moves.len(), 0.0)
        });
        let r2 = s.run(&counting);
        assert_eq!(r2.simulations, 200);
        assert_eq!(r2.visits.iter().sum::<u32>(), below + 200);
        assert!(calls.load(Ordering::Relaxed) <= 200);
    }
}

#[test]
fn advancing_by_an_unexplored_move_starts_a_fresh_tree() {
    let mut s = Search::with_seed(copper_start(), SearchConfig::gumbel(8), 1);
    let r = s.run(&UniformEvaluator);
    let unvisited = r.policy.iter().zip(&r.visits).find(|(_, &n)| n == 0).map(|(&(m, _), _)| m).unwrap();
    s.advance(unvisited);
    assert_eq!(s.tree_size(), (1, 0));
    assert_eq!(s.root().moves().len(), 1);
    let req = s.next_leaf().expect("the new root needs an evaluation");
    assert_eq!(req.state.key(), s.root().key());
    assert_eq!(req.moves, rules::Game::legal_moves(s.root()).to_vec());
}

/// An evaluator that records the size of every batch.
struct Recording<E> {
    inner: E,
    batches: Mutex<Vec<usize>>,
}

impl<G: SearchGame, E: Evaluator<G>> Evaluator<G> for Recording<E> {
    fn evaluate(&self, batch: &[EvalRequest<G>]) -> Vec<Evaluation> {
        self.batches.lock().unwrap().push(batch.len());
        self.inner.evaluate(batch)
    }
}

#[test]
fn batched_searches_match_searches_run_alone() {
    let configs = [SearchConfig::gumbel(32), SearchConfig::puct(32), SearchConfig::gumbel(64), SearchConfig::puct(16)];
    let new = || configs.iter().enumerate().map(|(i, c)| Search::with_seed(copper_start(), c.clone(), i as u64)).collect::<Vec<_>>();
    let alone: Vec<_> = new().iter_mut().map(|s| s.run(&rollout())).collect();
    let ev = Recording { inner: rollout(), batches: Mutex::new(Vec::new()) };
    let mut searches = new();
    run_batched(&mut searches, &ev);
    let together: Vec<_> = searches.iter().map(|s| s.result()).collect();
    assert_eq!(alone, together);
    let batches = ev.batches.lock().unwrap();
    assert_eq!(batches[0], 4, "one root evaluation per game in the first call");
    assert!(batches.iter().all(|&b| b <= 4));
    assert!(batches.len() <= 65 + 1, "about one call per simulation of the longest search: {}", batches.len());
}

/// The loop a self-play worker runs: many games, one batched call per round, moves
/// played (with subtree reuse) as searches finish, games replaced as they end.
#[test]
fn self_play_driver_keeps_games_in_flight() {
    let ev = Recording { inner: UniformEvaluator, batches: Mutex::new(Vec::new()) };
    let cfg = SearchConfig::gumbel(16);
    let mut games: Vec<Search<rules::Game>> = (0..8).map(|i| Search::with_seed(copper_start(), cfg.clone(), i)).collect();
    let mut records: Vec<Vec<(rules::Move, usize)>> = vec![Vec::new(); 8];
    let mut rounds = 0;
    while records.iter().any(|r| r.len() < 5) {
        rounds += 1;
        assert!(rounds < 1000);
        let (mut batch, mut owners) = (Vec::new(), Vec::new());
        for (i, s) in games.iter_mut().enumerate() {
            if records[i].len() < 5 {
                if let Some(req) = s.next_leaf() {
                    batch.push(req);
                    owners.push(i);
                }
            }
        }
        if !batch.is_empty() {
            let evals = ev.evaluate(&batch);
            for (i, e) in owners.into_iter().zip(evals) {
                games[i].apply(e);
            }
        }
        for (i, s) in games.iter_mut().enumerate() {
            if s.is_done() && records[i].len() < 5 {
                let r = s.result();
                let m = r.chosen.unwrap();
                records[i].push((m, r.policy.len()));
                s.advance(m);
            }
        }
    }
    for (i, s) in games.iter().enumerate() {
        assert_eq!(s.root().moves().len(), 5);
        assert_eq!(s.root().moves(), records[i].iter().map(|r| r.0).collect::<Vec<_>>().as_slice());
    }
    let batches = ev.batches.lock().unwrap();
    assert_eq!(batches[0], 8);
    let total: usize = batches.iter().sum();
    assert!(total as f64 / batches.len() as f64 > 4.0, "batches stay large: {batches:?}");
}

#[test]
fn cached_evaluator_returns_the_inner_answers_and_counts() {
    let cached = CachedEvaluator::new(rollout(), 100_000);
    let plain = Search::with_seed(copper_start(), SearchConfig::puct(300), 4).run(&rollout());
    let with_cache = Search::with_seed(copper_start(), SearchConfig::puct(300), 4).run(&cached);
    assert_eq!(plain, with_cache);
    // Transpositions (a move order swapped) hit the cache.
    assert!(cached.hits() > 0, "hits {} misses {}", cached.hits(), cached.misses());
    assert_eq!(cached.len() as u64, cached.misses());
    let again = Search::with_seed(copper_start(), SearchConfig::puct(300), 4).run(&cached);
    assert_eq!(plain, again);
    assert!(cached.hits() >= 301);
}

#[test]
fn cached_evaluator_is_bounded_and_checks_the_move_count() {
    let cached = CachedEvaluator::new(UniformEvaluator, 10);
    Search::with_seed(copper_start(), SearchConfig::gumbel(100), 4).run(&cached);
    assert!(cached.len() <= 10);
    // Two bandits share a key but not their number of moves: no wrong hit.
    let three = EvalRequest { state: Bandit::new(vec![0.0; 3]), moves: vec![0, 1, 2] };
    let two = EvalRequest { state: Bandit::new(vec![0.0; 2]), moves: vec![0, 1] };
    let c = CachedEvaluator::new(UniformEvaluator, 10);
    assert_eq!(c.evaluate(std::slice::from_ref(&three))[0].priors.len(), 3);
    assert_eq!(c.evaluate(std::slice::from_ref(&two))[0].priors.len(), 2);
    // The two-move entry replaced the three-move one: both are misses again.
    assert_eq!(c.evaluate(&[three.clone(), three.clone()])[1].priors.len(), 3);
    assert_eq!((c.hits(), c.misses()), (0, 4));
    assert_eq!(c.evaluate(&[three])[0].priors.len(), 3);
    assert_eq!((c.hits(), c.misses()), (1, 4));
}

#[test]
fn cached_evaluator_is_shared_between_threads() {
    let cached = CachedEvaluator::new(rollout(), 1 << 16);
    // One search per thread, the second after the first (running them at the same time
    // would make the hit count depend on timing): the second finds every leaf cached.
    let results: Vec<_> = (0..2)
        .map(|_| std::thread::scope(|sc| sc.spawn(|| Search::with_seed(copper_start(), SearchConfig::gumbel(200), 8).run(&cached)).join().unwrap()))
        .collect();
    assert_eq!(results[0], results[1]);
    assert_eq!(results[0], Search::with_seed(copper_start(), SearchConfig::gumbel(200), 8).run(&rollout()));
    assert!(cached.hits() >= 150);
}

#[test]
fn rollout_values_are_deterministic_and_see_terminal_results() {
    let ev = RolloutEvaluator::new(8, 50, 1);
    let g = copper_start();
    assert_eq!(ev.rollout_value(&g), ev.rollout_value(&g));
    // A flag win in one for Black: most random playouts from White's view still lose
    // sometimes; from a lost-in-one position for White the value must be negative.
    let lost = game("pocket-copper", "k8/4K4/9/9/9/9/9/9/9 w - 1 -");
    assert!(RolloutEvaluator::new(64, 2, 3).rollout_value(&lost) < 0.0);
}

#[test]
fn both_policies_solve_nim() {
    // 10 stones, take 1–3: take 2 to leave a multiple of 4.
    for cfg in [SearchConfig::gumbel(400), SearchConfig::puct(400)] {
        let policy = cfg.root_policy;
        for eval_play in [false, true] {
            let cfg = if eval_play { cfg.clone().for_evaluation() } else { cfg.clone() };
            let r = Search::with_seed(Nim::new(10, 3), cfg, 1).run(&UniformEvaluator);
            assert_eq!(r.chosen, Some(2), "{policy:?}: {r:?}");
            assert_eq!(r.exact, Some(1.0), "{policy:?}");
        }
    }
    // A lost position is proven lost.
    let r = Search::with_seed(Nim::new(8, 3), SearchConfig::puct(2000), 1).run(&UniformEvaluator);
    assert_eq!(r.exact, Some(-1.0));
}

#[test]
fn puct_target_is_the_visit_distribution() {
    let values = vec![0.9, 0.0, -0.5, 0.3];
    let cfg = SearchConfig { solver: false, ..SearchConfig::puct(100).for_evaluation() };
    let r = Search::with_seed(Bandit::new(values), cfg, 0).run(&UniformEvaluator);
    assert_eq!(r.visits.iter().sum::<u32>(), 100);
    for (&(_, p), &n) in r.policy.iter().zip(&r.visits) {
        assert!((p - n as f32 / 100.0).abs() < 1e-6);
    }
    let most = (0..4).max_by_key(|&i| r.visits[i]).unwrap();
    assert_eq!(most, 0);
    assert_eq!(r.chosen, Some(0), "temperature 0 plays the most visited");
    assert_eq!(r.priors, vec![0.25; 4], "no noise in evaluation play");
}

#[test]
fn puct_root_noise_and_temperature() {
    let values = vec![0.2, 0.1, 0.0, -0.1, -0.2];
    let mut chosen = std::collections::BTreeSet::new();
    for seed in 0..30 {
        let cfg = SearchConfig { solver: false, temperature: 1.0, ..SearchConfig::puct(40) };
        let r = Search::with_seed(Bandit::new(values.clone()), cfg, seed).run(&UniformEvaluator);
        assert!((r.priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(r.priors.iter().any(|&p| (p - 0.2).abs() > 1e-3), "Dirichlet noise changes the priors");
        chosen.insert(r.chosen.unwrap());
    }
    assert!(chosen.len() >= 3, "temperature 1 samples several moves: {chosen:?}");
}

#[test]
fn root_evaluation_is_not_a_simulation() {
    let calls = AtomicUsize::new(0);
    let ev = FnEvaluator(|r: &EvalRequest<rules::Game>| {
        calls.fetch_add(1, Ordering::Relaxed);
        Evaluation::uniform(r.moves.len(), 0.0)
    });
    let r = Search::with_seed(copper_start(), SearchConfig::gumbel(10), 0).run(&ev);
    assert_eq!(r.simulations, 10);
    assert_eq!(r.visits.iter().sum::<u32>(), 10);
    assert_eq!(calls.load(Ordering::Relaxed), 11);
}

#[test]
fn terminal_root_needs_no_search() {
    // Black is checkmated (gold on 5b protected by the pawn on 5c).
    let g = game("shogi", "4k4/4G4/4P4/9/9/9/9/9/4K4 w - 1");
    assert!(g.is_over());
    let mut s = Search::with_seed(g, SearchConfig::gumbel(50), 0);
    assert!(s.next_leaf().is_none());
    assert!(s.is_done());
    let r = s.result();
    assert_eq!((r.chosen, r.exact, r.value, r.policy.len()), (None, Some(-1.0), -1.0, 0));
}

#[test]
fn forced_move_gets_the_whole_budget() {
    let r = Search::with_seed(Nim::new(1, 3), SearchConfig::gumbel(20), 0).run(&UniformEvaluator);
    assert_eq!(r.chosen, Some(1));
    assert_eq!(r.visits, vec![20]);
    assert_eq!(r.policy, vec![(1, 1.0)]);
}

#[test]
#[should_panic(expected = "priors")]
fn misaligned_priors_are_rejected() {
    let bad = FnEvaluator(|_: &EvalRequest<Nim>| Evaluation { priors: vec![1.0], value: 0.0 });
    Search::with_seed(Nim::new(5, 3), SearchConfig::gumbel(4), 0).run(&bad);
}

#[test]
#[should_panic(expected = "pending")]
fn a_leaf_must_be_applied_before_the_next() {
    let mut s = Search::with_seed(Nim::new(5, 3), SearchConfig::gumbel(4), 0);
    let _ = s.next_leaf();
    let _ = s.next_leaf();
}

#[test]
fn bad_priors_fall_back_to_uniform_and_values_are_clamped() {
    let odd = FnEvaluator(|r: &EvalRequest<Bandit>| Evaluation { priors: vec![f32::NAN; r.moves.len()], value: 7.0 });
    let mut s = Search::with_seed(Bandit::new(vec![0.0, 0.0]), SearchConfig::gumbel(0), 0);
    let r = s.run(&odd);
    assert_eq!(r.priors, vec![0.5, 0.5]);
    assert_eq!(r.value, 1.0);
}

/// The cache must not hand an evaluation of one history to another that the network sees
/// differently: the same position reached with a different repetition count (the
/// repetition planes) or at another ply (the progress plane) is a different input.
#[test]
fn cached_evaluations_do_not_cross_histories() {
    use rules::{Game, Position, Variant};
    use search::{CachedEvaluator, EvalRequest, Evaluation, Evaluator, FnEvaluator, SearchGame};
    let v = Variant::builtin("shogi").unwrap();
    let start = Game::new(Position::start(v), None);
    // Shuffle the rooks out and back: the start position again, seen twice now, 4 plies on.
    let mut twice = start.clone();
    for m in ["2h3h", "8b7b", "3h2h", "7b8b"] {
        twice.play_usi(m).unwrap();
    }
    assert_eq!(twice.position().key(), start.position().key());
    assert_eq!((start.repetitions(), twice.repetitions()), (1, 2));
    assert_ne!(start.key(), twice.key(), "repetition count and ply are part of the key");
    // A stand-in network that reads what the real one reads: the repetition count and ply.
    let net = FnEvaluator(|r: &EvalRequest<Game>| Evaluation::uniform(r.moves.len(), 0.1 * r.state.repetitions() as f32 + 0.001 * r.state.ply() as f32));
    let cached = CachedEvaluator::new(net, 1000);
    let ask = |g: &Game| cached.evaluate(&[EvalRequest { state: g.clone(), moves: SearchGame::legal_moves(g) }])[0].value;
    let first = ask(&start);
    let second = ask(&twice);
    assert!((first - 0.1).abs() < 1e-6 && (second - 0.204).abs() < 1e-6, "{first} {second}");
    assert_eq!(cached.hits(), 0);
    // The same history again is a hit with the same answer.
    assert_eq!(ask(&twice), second);
    assert_eq!(cached.hits(), 1);
}
