//! Baselines: fixed reference opponents that play every variant with no training.
//!
//! - [`Random`]: a uniformly random legal move (seeded).
//! - [`Greedy`]: one ply, material-greedy: the move after which the mover's material
//!   balance is highest; a move that wins at once (checkmate, flag) first, one that loses
//!   at once (Pocket Shogi Copper's pawn-drop mate) last; ties broken at random (seeded).
//!   With [`Greedy::with_noise`], uniform noise of ±X centipawns on each move's score.
//! - [`AlphaBeta`]: iterative-deepening alpha-beta with quiescence search and a
//!   transposition table, at a depth, node or time budget ([`Budget`]). With
//!   [`AlphaBeta::with_noise`], uniform noise of ±X centipawns on each root move's score.
//!
//! Piece values ([`PieceValues`]) come from the standard shogi table where a kind is a
//! standard piece and from a mobility fit otherwise; see [`values`].

mod alphabeta;
pub mod eval;
mod picker;
pub mod values;

#[cfg(test)]
mod tests;

pub(crate) use alphabeta::MATE;
pub use alphabeta::{AlphaBeta, RootScores};
pub use values::{PieceValues, ValueOverride, ValuePlace};

use crate::{Score, Thought};
use eval::Evaluator;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rules::{Game, Outcome};

/// How much a baseline may think: any combination of a depth, a node count and a
/// deadline; the first one reached stops the search. With none, [`AlphaBeta`] searches
/// to depth 3. [`Random`] and [`Greedy`] ignore it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub deadline: Option<std::time::Instant>,
}

/// A built-in player.
pub trait Baseline: Send {
    /// Short name, e.g. `random`, `greedy`, `alphabeta`.
    fn name(&self) -> String;
    /// Chooses a move for the game's side to move; `best` is `None` iff there is no legal
    /// move (the game is over).
    fn think(&mut self, game: &Game, budget: &Budget) -> Thought;
    /// Clears per-game state.
    fn new_game(&mut self) {}
    /// A flag that, once set from any thread, ends the search under way with the best
    /// move found so far (the caller clears it); baselines that answer at once ignore it.
    fn set_interrupt(&mut self, _flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {}
}

/// Uniformly random legal moves from a seeded stream.
pub struct Random {
    rng: ChaCha8Rng,
}

impl Random {
    pub fn new(seed: u64) -> Random {
        Random { rng: ChaCha8Rng::seed_from_u64(seed) }
    }
}

impl Baseline for Random {
    fn name(&self) -> String {
        "random".to_string()
    }

    fn think(&mut self, game: &Game, _budget: &Budget) -> Thought {
        let moves = game.legal_moves();
        if moves.is_empty() {
            return Thought::just(None);
        }
        let m = moves[self.rng.random_range(0..moves.len())];
        Thought { nodes: 1, ..Thought::just(Some(m)) }
    }
}

/// One-ply material-greedy play.
pub struct Greedy {
    eval: Evaluator,
    rng: ChaCha8Rng,
    /// Half-width of the uniform score noise, centipawns (0: none).
    noise_cp: f64,
}

/// Greedy's score of a move that wins at once.
const GREEDY_WIN: i32 = i32::MAX / 2;

impl Greedy {
    pub fn new(variant: &'static rules::Variant, seed: u64) -> Greedy {
        Greedy { eval: Evaluator::new(variant), rng: ChaCha8Rng::seed_from_u64(seed), noise_cp: 0.0 }
    }

    /// Counts material with `values` instead of the variant's default table.
    pub(crate) fn with_values(mut self, variant: &'static rules::Variant, values: PieceValues) -> Greedy {
        self.eval = Evaluator::with_values(variant, values);
        self
    }

    /// Adds uniform noise in [−`cp`, +`cp`] centipawns to each move's material score
    /// before the best is picked (moves that end the game at once are not noised), so
    /// that games against itself differ. 0 keeps the plain greedy choice.
    pub(crate) fn with_noise(mut self, cp: f64) -> Greedy {
        self.noise_cp = if cp.is_finite() { cp.max(0.0) } else { 0.0 };
        self
    }

    /// The values this player counts material with.
    pub fn values(&self) -> &PieceValues {
        &self.eval.values
    }
}

impl Baseline for Greedy {
    fn name(&self) -> String {
        "greedy".to_string()
    }

    fn think(&mut self, game: &Game, _budget: &Budget) -> Thought {
        let moves = game.legal_moves();
        if moves.is_empty() {
            return Thought::just(None);
        }
        let mover = game.position().side_to_move();
        let mut best = i32::MIN;
        let mut ties = Vec::new();
        let noise = self.noise_cp;
        let mut raw_of = Vec::new();
        for &m in &moves {
            let mut g = game.clone();
            g.play_unchecked(m);
            let s = match g.result() {
                Some(r) => match r.outcome {
                    Outcome::Win(c) if c == mover => GREEDY_WIN,
                    Outcome::Win(_) => -GREEDY_WIN,
                    Outcome::Draw => 0,
                },
                None => {
                    let p = g.position();
                    self.eval.material(p, mover) - self.eval.material(p, !mover)
                }
            };
            raw_of.push((m, s));
            let s = if noise > 0.0 && s.abs() != GREEDY_WIN { s + self.rng.random_range(-noise..=noise).round() as i32 } else { s };
            if s > best {
                best = s;
                ties.clear();
            }
            if s == best {
                ties.push(m);
            }
        }
        let m = ties[self.rng.random_range(0..ties.len())];
        // The reported score is the chosen move's own, without the noise.
        let best = raw_of.iter().find(|(x, _)| *x == m).map_or(best, |&(_, s)| s);
        let score = match best {
            GREEDY_WIN => Score::Mate(1),
            s if s == -GREEDY_WIN => Score::Mate(-1),
            s => Score::Cp(s),
        };
        Thought { best: Some(m), score, depth: 1, nodes: moves.len() as u64, pv: vec![m] }
    }
}
