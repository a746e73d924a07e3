//! Monte Carlo tree search for AlphaZero-style self-play on shogi variants.
//!
//! - [`SearchGame`]: the game interface, implemented for [`rules::Game`] (so checkmate,
//!   the flag win, repetition, perpetual check, declaration and the ply limit are exact
//!   terminal values in the tree) and for the toy games in [`toy`].
//! - [`Evaluator`]: batched leaf evaluation (priors aligned with the legal moves, value
//!   for the side to move): [`UniformEvaluator`], [`RolloutEvaluator`],
//!   [`CachedEvaluator`], [`FnEvaluator`]; a network evaluator lives in the neteval crate.
//!   [`BatchingEvaluator`] merges the calls of many search threads into large batches
//!   for one accelerator.
//! - [`Search`]: one resumable search with the Gumbel AlphaZero (default) or PUCT root
//!   policy, formulas in [`mcts`].
//!
//! # Batching across games
//! ```no_run
//! use search::{Search, SearchConfig, SearchGame, UniformEvaluator, Evaluator};
//! # fn new_game() -> rules::Game { unimplemented!() }
//! let evaluator = UniformEvaluator; // the network in self-play
//! let mut games: Vec<Search<rules::Game>> =
//!     (0..64).map(|i| Search::with_seed(new_game(), SearchConfig::gumbel(32), i)).collect();
//! loop {
//!     let (mut batch, mut owners) = (Vec::new(), Vec::new());
//!     for (i, s) in games.iter_mut().enumerate() {
//!         if let Some(req) = s.next_leaf() { batch.push(req); owners.push(i); }
//!     }
//!     if !batch.is_empty() {
//!         let evals = evaluator.evaluate(&batch); // ONE call for all games
//!         for (i, e) in owners.into_iter().zip(evals) { games[i].apply(e); }
//!     }
//!     for s in games.iter_mut().filter(|s| s.is_done()) {
//!         let r = s.result();               // record r.policy as the training target
//!         match r.chosen {
//!             Some(m) => s.advance(m),      // keeps the subtree, starts the next search
//!             None => { /* game over: r.exact / s.root().result(); start a new game */ }
//!         }
//!     }
//! #   break;
//! }
//! ```

pub mod batching;
pub mod config;
pub mod eval;
pub mod game;
pub mod leafprof;
pub mod mcts;
pub mod toy;

pub use batching::{BatchingConfig, BatchingEvaluator, BatchingStats};
pub use config::{Fpu, QNorm, RootPolicy, SearchConfig};
pub use eval::{CachedEvaluator, EvalRequest, Evaluation, Evaluator, FnEvaluator, RolloutEvaluator, UniformEvaluator};
pub use game::SearchGame;
pub use mcts::{run_batched, PhaseRecord, Search, SearchResult, SearchRng};
