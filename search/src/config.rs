//! Search settings. See the formulas at the top of [`crate::mcts`].

/// How the root picks the actions to simulate and the move to play, and what the
/// training target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootPolicy {
    /// Gumbel AlphaZero: Gumbel-top-k, Sequential Halving, improved-policy target.
    Gumbel,
    /// AlphaZero PUCT with Dirichlet noise; visit-count target.
    Puct,
}

/// Normalisation of Q-values before σ (Gumbel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QNorm {
    /// q̂ = (q − min_b q(b)) / max(max_b q(b) − min_b q(b), ε) over the node's completed
    /// Q-values (as in the paper's reference implementation, mctx).
    MinMax,
    /// q̂ = (q + 1) / 2: the known value range [−1, 1] mapped to [0, 1].
    Bounds,
}

/// First-play urgency: the Q used by PUCT for an unvisited action.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fpu {
    /// A fixed value (e.g. −1 pessimistic, 0, +1 optimistic: every action visited once).
    Absolute(f32),
    /// The node's mean value minus `r · sqrt(Σ_{b visited} P(b))` (Leela Chess Zero).
    Reduction(f32),
}

#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    /// Simulations per search (n): visits of root actions. Evaluating the root itself is
    /// not counted.
    pub simulations: u32,
    pub root_policy: RootPolicy,

    // --- Gumbel AlphaZero ---
    /// Root actions sampled by Gumbel-top-k (m = min(gumbel_m, #legal)).
    pub gumbel_m: usize,
    /// Scale of the Gumbel noise g(a): 1 for self-play, 0 for evaluation play (then the
    /// m actions are the top-m by prior and the choice is deterministic).
    pub gumbel_scale: f32,
    /// c_visit in σ(q̂) = (c_visit + max_b N(b)) · c_scale · q̂.
    pub c_visit: f32,
    /// c_scale in σ.
    pub c_scale: f32,
    pub q_norm: QNorm,

    // --- PUCT ---
    /// c_puct in U(a) = c_puct · P(a) · sqrt(ΣN) / (1 + N(a)).
    pub c_puct: f32,
    /// Dirichlet(α) noise at the root.
    pub dirichlet_alpha: f32,
    /// ε: P'(a) = (1 − ε) P(a) + ε η(a). 0 turns the noise off.
    pub dirichlet_fraction: f32,
    /// FPU below the root.
    pub fpu: Fpu,
    /// FPU at the root.
    pub fpu_root: Fpu,
    /// Move choice by visit count: p(a) ∝ N(a)^(1/τ); τ = 0 plays the most visited.
    pub temperature: f32,

    // --- both ---
    /// Propagate exact values: a node with a child proven to be a win for it (value +1)
    /// is a proven win; one whose children are all proven takes their best value.
    pub solver: bool,
    /// One-ply mate check (as dlshogi does at its leaves): a new leaf whose mover has a
    /// move that wins at once ([`crate::SearchGame::winning_move`]) is proven a win
    /// without asking the evaluator, and a root with such a move visits it first (so
    /// the solver plays it). Off by default; it needs `solver` to steer the search.
    pub mate_in_one: bool,
    /// Three-ply mate check through checks ([`crate::SearchGame::checkmate_within`]) at
    /// nodes up to this depth of the tree (the root is 0): such a node whose mover can
    /// force mate in three is proven a win, and a root with such a move plays it. Each check
    /// costs about a tenth of a network call at batch 1. `None`: off (the default). Turns
    /// the one-ply check on too; needs `solver`.
    pub mate_in_three_depth: Option<u16>,
    /// Policy softmax temperature T: each node's priors become π(a)^(1/T) / Σ_b π(b)^(1/T)
    /// when it is expanded (1: the evaluator's priors). T > 1 flattens a confident policy so
    /// that moves it rates low (a refutation it does not see) still get visits, as Leela
    /// Chess Zero's `PolicyTemperature` and dlshogi's `Softmax_Temperature` do.
    pub policy_temperature: f32,
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            simulations: 64,
            root_policy: RootPolicy::Gumbel,
            gumbel_m: 16,
            gumbel_scale: 1.0,
            c_visit: 50.0,
            c_scale: 1.0,
            q_norm: QNorm::MinMax,
            c_puct: 1.25,
            dirichlet_alpha: 0.15,
            dirichlet_fraction: 0.25,
            fpu: Fpu::Reduction(0.2),
            fpu_root: Fpu::Reduction(0.2),
            temperature: 1.0,
            solver: true,
            mate_in_one: false,
            mate_in_three_depth: None,
            policy_temperature: 1.0,
        }
    }
}

impl SearchConfig {
    /// Gumbel AlphaZero with `n` simulations, for self-play (Gumbel noise on).
    pub fn gumbel(n: u32) -> SearchConfig {
        SearchConfig { simulations: n, ..SearchConfig::default() }
    }
    /// PUCT with `n` simulations, for self-play (Dirichlet noise, temperature 1).
    pub fn puct(n: u32) -> SearchConfig {
        SearchConfig { simulations: n, root_policy: RootPolicy::Puct, ..SearchConfig::default() }
    }
    /// The same settings without exploration noise and with a greedy move choice, for
    /// evaluation play.
    pub fn for_evaluation(mut self) -> SearchConfig {
        self.gumbel_scale = 0.0;
        self.dirichlet_fraction = 0.0;
        self.temperature = 0.0;
        self
    }
}
