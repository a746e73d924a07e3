//! Evaluators: what the search asks about a leaf (its state and legal moves) and what it
//! gets back (priors aligned with the moves, and a value for the side to move).
//!
//! Evaluators take a batch: one self-play worker collects one leaf from each of its
//! games in flight and makes a single call (one network forward pass) for all of them.

use crate::game::SearchGame;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A leaf to evaluate: a non-terminal state and its legal moves (in
/// [`SearchGame::legal_moves`] order).
#[derive(Clone, Debug)]
pub struct EvalRequest<G: SearchGame> {
    pub state: G,
    pub moves: Vec<G::Move>,
}

/// The answer for one [`EvalRequest`]: `priors[i]` belongs to `moves[i]` (probabilities;
/// the search renormalises them and treats non-finite or negative entries as 0), and
/// `value` in `[-1, 1]` is for the side to move in the request's state.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    pub priors: Vec<f32>,
    pub value: f32,
}

impl Evaluation {
    pub fn uniform(n: usize, value: f32) -> Evaluation {
        Evaluation { priors: vec![1.0 / n.max(1) as f32; n], value }
    }
}

/// Batched evaluation: returns one [`Evaluation`] per request, in order.
pub trait Evaluator<G: SearchGame>: Send + Sync {
    fn evaluate(&self, batch: &[EvalRequest<G>]) -> Vec<Evaluation>;
}

impl<G: SearchGame, E: Evaluator<G> + ?Sized> Evaluator<G> for &E {
    fn evaluate(&self, batch: &[EvalRequest<G>]) -> Vec<Evaluation> {
        (**self).evaluate(batch)
    }
}

impl<G: SearchGame, E: Evaluator<G> + ?Sized> Evaluator<G> for Box<E> {
    fn evaluate(&self, batch: &[EvalRequest<G>]) -> Vec<Evaluation> {
        (**self).evaluate(batch)
    }
}

impl<G: SearchGame, E: Evaluator<G> + ?Sized> Evaluator<G> for std::sync::Arc<E> {
    fn evaluate(&self, batch: &[EvalRequest<G>]) -> Vec<Evaluation> {
        (**self).evaluate(batch)
    }
}

/// Uniform priors, value 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl<G: SearchGame> Evaluator<G> for UniformEvaluator {
    fn evaluate(&self, batch: &[EvalRequest<G>]) -> Vec<Evaluation> {
        batch.iter().map(|r| Evaluation::uniform(r.moves.len(), 0.0)).collect()
    }
}

/// An evaluator from a function of one request (tests, hand-made priors).
pub struct FnEvaluator<F>(pub F);

impl<G, F> Evaluator<G> for FnEvaluator<F>
where
    G: SearchGame,
    F: Fn(&EvalRequest<G>) -> Evaluation + Send + Sync,
{
    fn evaluate(&self, batch: &[EvalRequest<G>]) -> Vec<Evaluation> {
        batch.iter().map(&self.0).collect()
    }
}

/// Uniform priors; the value is the mean result of `playouts` uniformly random games
/// from the leaf, each cut off (as a draw) after `max_plies` plies. Deterministic: the
/// random generator of each request is seeded from `seed` and the state's key, so the
/// same leaf always gets the same value, whatever the batch or thread.
#[derive(Clone, Copy, Debug)]
pub struct RolloutEvaluator {
    pub playouts: u32,
    pub max_plies: u32,
    pub seed: u64,
}

impl RolloutEvaluator {
    pub fn new(playouts: u32, max_plies: u32, seed: u64) -> RolloutEvaluator {
        RolloutEvaluator { playouts, max_plies, seed }
    }

    /// Mean playout value for the side to move in `state`.
    pub fn rollout_value<G: SearchGame>(&self, state: &G) -> f32 {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ state.key().wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let me = state.to_move();
        let mut total = 0.0f64;
        for _ in 0..self.playouts {
            let mut g = state.clone();
            let mut plies = 0;
            let v = loop {
                if let Some(v) = g.terminal_value() {
                    break if g.to_move() == me { v } else { -v };
                }
                if plies >= self.max_plies {
                    break 0.0;
                }
                let moves = g.legal_moves();
                if moves.is_empty() {
                    break 0.0;
                }
                g.play(moves[rng.random_range(0..moves.len())]);
                plies += 1;
            };
            total += v as f64;
        }
        (total / self.playouts.max(1) as f64) as f32
    }
}

impl<G: SearchGame> Evaluator<G> for RolloutEvaluator {
    fn evaluate(&self, batch: &[EvalRequest<G>]) -> Vec<Evaluation> {
        batch.iter().map(|r| Evaluation::uniform(r.moves.len(), self.rollout_value(&r.state))).collect()
    }
}

/// Wraps an evaluator with a bounded cache keyed by [`SearchGame::key`] (first in, first
/// out once `capacity` entries are held). Thread safe (one mutex; the inner evaluator is
/// called outside it, with the misses only). A cached entry whose number of priors
/// differs from the request's number of moves counts as a miss (a key collision).
/// For [`rules::Game`] the key covers the position, its repetition count and the game's
/// progress — everything the network's input planes read — so a network's answers can be
/// cached across histories (see `SearchGame for rules::Game`).
pub struct CachedEvaluator<E> {
    inner: E,
    capacity: usize,
    cache: Mutex<Cache>,
    hits: AtomicU64,
    misses: AtomicU64,
}

#[derive(Default)]
struct Cache {
    map: HashMap<u64, Evaluation>,
    order: VecDeque<u64>,
}

impl<E> CachedEvaluator<E> {
    pub fn new(inner: E, capacity: usize) -> CachedEvaluator<E> {
        CachedEvaluator { inner, capacity, cache: Mutex::new(Cache::default()), hits: AtomicU64::new(0), misses: AtomicU64::new(0) }
    }
    pub fn inner(&self) -> &E {
        &self.inner
    }
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
    pub fn misses(&self) -> u64 {
        self.misses.load(Ordering::Relaxed)
    }
    /// Entries held now.
    pub fn len(&self) -> usize {
        self.cache.lock().unwrap().map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn clear(&self) {
        let mut c = self.cache.lock().unwrap();
        c.map.clear();
        c.order.clear();
    }
}

impl<G: SearchGame, E: Evaluator<G>> Evaluator<G> for CachedEvaluator<E> {
    fn evaluate(&self, batch: &[EvalRequest<G>]) -> Vec<Evaluation> {
        let mut out: Vec<Option<Evaluation>> = Vec::with_capacity(batch.len());
        let mut missing = Vec::new();
        {
            let c = self.cache.lock().unwrap();
            for (i, r) in batch.iter().enumerate() {
                match c.map.get(&r.state.key()) {
                    Some(e) if e.priors.len() == r.moves.len() => out.push(Some(e.clone())),
                    _ => {
                        out.push(None);
                        missing.push(i);
                    }
                }
            }
        }
        self.hits.fetch_add((batch.len() - missing.len()) as u64, Ordering::Relaxed);
        self.misses.fetch_add(missing.len() as u64, Ordering::Relaxed);
        if missing.is_empty() {
            return out.into_iter().map(Option::unwrap).collect();
        }
        let fresh = if missing.len() == batch.len() {
            self.inner.evaluate(batch)
        } else {
            let sub: Vec<EvalRequest<G>> = missing.iter().map(|&i| batch[i].clone()).collect();
            self.inner.evaluate(&sub)
        };
        assert_eq!(fresh.len(), missing.len(), "evaluator returned {} results for {} requests", fresh.len(), missing.len());
        let mut c = self.cache.lock().unwrap();
        for (&i, e) in missing.iter().zip(fresh) {
            if self.capacity > 0 {
                let key = batch[i].state.key();
                if c.map.insert(key, e.clone()).is_none() {
                    c.order.push_back(key);
                    while c.order.len() > self.capacity {
                        let old = c.order.pop_front().unwrap();
                        c.map.remove(&old);
                    }
                }
            }
            out[i] = Some(e);
        }
        out.into_iter().map(Option::unwrap).collect()
    }
}
