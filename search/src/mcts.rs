//! Monte Carlo tree search with two root policies, batched and resumable.
//!
//! # References
//! - **Gumbel AlphaZero**: I. Danihelka, A. Guez, J. Schrittwieser, D. Silver, "Policy
//!   improvement by planning with Gumbel", ICLR 2022 (reference implementation: mctx,
//!   `gumbel_muzero_policy`).
//! - **PUCT**: D. Silver et al., "A general reinforcement learning algorithm that masters
//!   chess, shogi, and Go through self-play", Science 362 (2018) (AlphaZero).
//!
//! # Notation
//! At a node with legal actions a: π(a) the prior (evaluator), logits(a) = ln π(a),
//! v̂ the evaluator's value of the node, N(a) the visit count of the edge, Q(a) the mean
//! value of the simulations through the edge. Every value stored on an edge is from the
//! point of view of the player to move at the edge's parent; a child whose mover differs
//! contributes −v. Terminal nodes (and nodes proven by the solver, see below) have an
//! exact value, which replaces Q(a) of the edge leading to them.
//!
//! # Gumbel AlphaZero ([`RootPolicy::Gumbel`])
//! - Completed Q-values: completedQ(a) = Q(a) if N(a) > 0, else v_mix, with the mixed
//!   value
//!   v_mix = (v̂ + ΣN · Σ_{b: N(b)>0} π(b) Q(b) / Σ_{b: N(b)>0} π(b)) / (1 + ΣN),
//!   where ΣN = Σ_b N(b).
//! - Normalisation ([`QNorm`]): q̂ = (q − min_b q(b)) / max(max_b q(b) − min_b q(b), ε = 10⁻⁸)
//!   over the completed Q-values of the node ([`QNorm::MinMax`], as in mctx), or
//!   q̂ = (q + 1) / 2 ([`QNorm::Bounds`]).
//! - σ(q̂(a)) = (c_visit + max_b N(b)) · c_scale · q̂(a), c_visit = 50, c_scale = 1.
//! - Improved policy: π' = softmax(logits + σ(completedQ)) over ALL legal actions. It is
//!   the training target at the root; its value v_π' = Σ_a π'(a) · completedQ(a) is the
//!   root value that goes with it (`SearchResult::policy_value`; with PUCT's target
//!   N(a)/ΣN the same sum is Σ N(a) Q(a) / ΣN).
//! - Root: sample g(a) ~ Gumbel(0, 1) (times `gumbel_scale`; 0 for evaluation play) and
//!   keep the m = min(gumbel_m, #legal) actions with the largest g(a) + logits(a)
//!   (Gumbel-top-k). Then Sequential Halving over the budget of n simulations in
//!   ⌈log₂ m⌉ phases: in a phase with r remaining actions each is visited
//!   max(1, ⌊n / (⌈log₂ m⌉ · r)⌋) times (round-robin); the last phase (r = 2) splits all
//!   the budget left evenly, max(1, ⌊left / 2⌋) each (so no simulation is lost to
//!   rounding; mctx likewise gives the leftover to the last two actions). After a phase
//!   the best ⌈r / 2⌉ by g(a) + logits(a) + σ(q̂(a)) remain. The move played is, among
//!   the remaining actions with the most visits in this search, the argmax of
//!   g(a) + logits(a) + σ(q̂(a)).
//! - Below the root (the paper's deterministic selection for non-root nodes):
//!   argmax_a [ π'(a) − N(a) / (1 + ΣN) ].
//!
//! # PUCT ([`RootPolicy::Puct`])
//! - Root noise: P'(a) = (1 − ε) π(a) + ε η(a), η ~ Dir(α) (ε = `dirichlet_fraction`).
//! - Selection everywhere: argmax_a [ Q(a) + c_puct · P(a) · sqrt(ΣN) / (1 + N(a)) ] with
//!   ΣN replaced by 1 while it is 0 (so the first visit follows the prior), and for an
//!   unvisited action Q(a) = FPU ([`Fpu`]): an absolute value, or
//!   Q(node) − r · sqrt(Σ_{b: N(b)>0} P(b)) with Q(node) = (v̂ + Σ_b N(b) Q(b)) / (1 + ΣN).
//! - Target: N(a) / ΣN. Move: sampled with p(a) ∝ N(a)^(1/τ); τ = 0 plays the most
//!   visited (ties: higher Q, then higher prior).
//!
//! # Policy temperature (both policies, `policy_temperature` = T)
//! A node's priors are π(a)^(1/T) / Σ_b π(b)^(1/T) of the evaluator's (T = 1: unchanged);
//! as Leela Chess Zero's `PolicyTemperature` and dlshogi's `Softmax_Temperature` options
//! (Leela's default is above 1).
//!
//! # Solver (both policies, `solver = true`)
//! A node with a child whose exact value is +1 for the node's mover is proven +1; a node
//! whose children all have exact values is proven at their maximum. A simulation reaching
//! a proven node below the root stops there and backs up the exact value (no evaluation).
//! The move played overrides the root policy when the root is decided: the proven win
//! with the fewest plies to the end (so a mate in one is played, not a slower win), or,
//! when every move is proven, the best value (a loss as late as possible). Targets are
//! unchanged.
//!
//! # One-ply mate check (`mate_in_one = true`)
//! As dlshogi does at its leaves (T. Yamaoka's dlshogi calls `mateMoveIn1Ply` before the
//! network is asked): a new leaf whose mover has a move that wins at once
//! ([`SearchGame::winning_move`]) is proven +1 at one ply, with no evaluation; the
//! solver then steers every parent away from the move that allowed it. At the root, the
//! winning move is visited first (one simulation), so the root is proven and the mate
//! is played whatever Gumbel-top-k sampled. With 24 simulations a search sees little
//! below the root's children; this gives every child an exact answer to "can the
//! opponent mate (or reach the flag) at once?".
//!
//! # Three-ply mate check (`mate_in_three_depth = Some(d)`)
//! As dlshogi checks its leaves for a mate in three (`mateMoveIn3Ply`): a new leaf at
//! depth ≤ d (the root is 0; `u16::MAX`: every leaf) whose mover can force mate in three
//! through checks ([`SearchGame::checkmate_within`]) is proven +1 at three plies, with
//! no evaluation. With d ≥ 1 every root move after which the opponent mates in three is
//! proven lost at its first visit; a root with such a mate plays it (its first move's
//! child is created proven −1 at two plies, as the one-ply check does). A check costs
//! ~30 µs on positions of random Pocket Shogi Copper playouts (`cargo bench -p rules
//! --bench mate_checks`, two loaded cores), about a tenth of a network call at batch 1.
//!
//! # Batching and resumption
//! [`Search::next_leaf`] runs simulations until one needs an evaluation and returns it
//! (terminal and proven leaves are backed up internally); [`Search::apply`] expands the
//! leaf with the evaluation and backs its value up. At most one leaf is pending per
//! search, so a worker keeps many searches (games) in flight and evaluates one leaf of
//! each in one batched call ([`run_batched`]). Evaluating the root is not a simulation:
//! the budget n counts visits of root actions.
//!
//! # Subtree reuse
//! [`Search::advance`] plays a move and keeps the child's subtree, with all its visit
//! counts and values, as the new root; the arena is compacted. A new search then starts:
//! fresh Gumbel noise and Sequential Halving schedule (or fresh Dirichlet noise) and a
//! new budget of n simulations on top of the reused statistics. With Gumbel, the reused
//! visits enter max_b N(b), completed Q and π' (the formulas take any Q estimates; the
//! reused ones are simply better informed); the halving schedule counts only this
//! search's visits.

use crate::config::{Fpu, QNorm, RootPolicy, SearchConfig};
use crate::eval::{EvalRequest, Evaluation, Evaluator};
use crate::game::SearchGame;
use crate::leafprof::{self, Part};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma, Gumbel};

/// The random generator of a search (Gumbel and Dirichlet noise, temperature sampling).
pub type SearchRng = ChaCha8Rng;

const NONE: u32 = u32::MAX;
/// Logit of a zero prior.
const MIN_PRIOR: f32 = 1e-30;
/// Positions a three-ply mate check may search from, so that a position full of checking
/// drops cannot stall a search with a clock (no position of the rules tests' random
/// playouts of every variant needs as many: `rules/tests/checkmate_within.rs`).
const MATE_BUDGET: u64 = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expansion {
    Unexpanded,
    Pending,
    Expanded,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    /// Children: edges `first..first + len` (contiguous in the arena).
    first: u32,
    len: u32,
    to_move: u8,
    expansion: Expansion,
    /// v̂: the evaluator's value for the side to move here (terminal: the exact value).
    raw_value: f32,
    /// Exact value for the side to move here: terminal, or proven by the solver.
    exact: Option<f32>,
    /// With `exact`: plies to the end of the game along the proof (0 when terminal).
    exact_plies: u16,
    /// Σ max(π(a), MIN_PRIOR) over the children, set at expansion: the Gumbel interior
    /// selection takes the unvisited children's mass as this less the visited ones'.
    prior_mass: f64,
}

impl Node {
    fn new(to_move: usize, terminal: Option<f32>) -> Node {
        Node {
            first: 0,
            len: 0,
            to_move: to_move as u8,
            expansion: if terminal.is_some() { Expansion::Expanded } else { Expansion::Unexpanded },
            raw_value: terminal.unwrap_or(0.0),
            exact: terminal,
            exact_plies: 0,
            prior_mass: 0.0,
        }
    }
    fn is_terminal(&self) -> bool {
        self.len == 0 && self.exact.is_some()
    }
}

#[derive(Clone, Copy, Debug)]
struct Edge<M> {
    mv: M,
    /// π(a), or P'(a) with Dirichlet noise at a PUCT root (logits(a) = ln π(a) is
    /// computed where Gumbel's formulas need it, [`logit`]: not stored, an edge is a
    /// quarter smaller and an expansion takes no logarithm per move).
    prior: f32,
    visits: u32,
    /// Sum of the backed-up values, for the player to move at the parent.
    value_sum: f64,
    child: u32,
}

/// One phase of Sequential Halving: the actions it visits and how often each.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseRecord<M> {
    pub actions: Vec<M>,
    pub visits_per_action: u32,
}

#[derive(Clone, Debug)]
struct Halving<M> {
    /// g(a) per root edge (offset from the root's first edge), noise scale applied.
    gumbel: Vec<f32>,
    /// Root edge offsets still in the running, in visiting order.
    remaining: Vec<u32>,
    num_phases: u32,
    per_action: u32,
    round: u32,
    cursor: usize,
    /// Visits of each root edge in this search.
    visits: Vec<u32>,
    log: Vec<PhaseRecord<M>>,
}

impl<M> Halving<M> {
    /// Visits per remaining action for a phase starting after `used` of `n` simulations.
    fn per_action(&self, n: u32, used: u32) -> u32 {
        let r = self.remaining.len() as u32;
        let left = n.saturating_sub(used);
        let k = match r {
            0 | 1 => left,
            2 => left / 2,
            _ => n / (self.num_phases * r),
        };
        k.max(1)
    }
}

struct Pending<M> {
    node: u32,
    moves: Vec<M>,
}

/// What a search says about its root.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult<M> {
    /// The move to play (Sequential Halving winner, or by visit count and temperature);
    /// `None` when the root is terminal.
    pub chosen: Option<M>,
    /// Training target over all legal root moves: π' (Gumbel) or N(a)/ΣN (PUCT).
    pub policy: Vec<(M, f32)>,
    /// Root value for the side to move: the exact value if known, else
    /// (v̂ + Σ_a N(a) Q(a)) / (1 + ΣN).
    pub value: f32,
    /// The value of the training target: Σ_a π(a) · completedQ(a) with π the target
    /// above (Gumbel: π', unvisited moves completed with v_mix; PUCT: N(a)/ΣN over the
    /// visited moves); the exact value if known. Sequential Halving spreads a Gumbel
    /// root's visits over moves it then drops, so the root mean `value` counts them all
    /// alike; this counts them as the improved policy would play them.
    pub policy_value: f32,
    /// Exact root value (terminal or proven).
    pub exact: Option<f32>,
    /// N(a), aligned with `policy` (statistics reused from earlier searches included).
    pub visits: Vec<u32>,
    /// Q(a) for the side to move at the root (exact where proven), `None` if unvisited.
    pub q_values: Vec<Option<f32>>,
    /// Priors used by the search (with Dirichlet noise at a PUCT root).
    pub priors: Vec<f32>,
    /// Simulations run by this search.
    pub simulations: u32,
}

/// Most edges of an arena kept for reuse after a compaction (24 MB at 24 bytes an edge).
const SPARE_EDGES: usize = 1 << 20;

/// A resumable search from one root. See the module documentation.
pub struct Search<G: SearchGame> {
    root: G,
    config: SearchConfig,
    rng: SearchRng,
    nodes: Vec<Node>,
    edges: Vec<Edge<G::Move>>,
    /// (node, edge) pairs from the root to the current leaf.
    path: Vec<(u32, u32)>,
    pending: Option<Pending<G::Move>>,
    sims: u32,
    prepared: bool,
    halving: Option<Halving<G::Move>>,
    done: bool,
    chosen: Option<G::Move>,
    /// The root's priors before a PUCT root's Dirichlet noise.
    root_clean_priors: Vec<f32>,
    /// The visited children's (offset, Q then z, e^(z − max)), for the interior selection.
    scratch_visited: Vec<(u32, f32, f64)>,
    /// The arena `compact` builds into, kept between moves with its capacity: a fresh
    /// one per move grew by reallocation into newly mapped pages every search.
    spare: (Vec<Node>, Vec<Edge<G::Move>>),
}

impl<G: SearchGame> Search<G> {
    pub fn new(root: G, config: SearchConfig, rng: SearchRng) -> Search<G> {
        let node = Node::new(root.to_move(), root.terminal_value());
        Search {
            root,
            config,
            rng,
            nodes: vec![node],
            edges: Vec::new(),
            path: Vec::new(),
            pending: None,
            sims: 0,
            prepared: false,
            halving: None,
            done: false,
            chosen: None,
            root_clean_priors: Vec::new(),
            scratch_visited: Vec::new(),
            spare: (Vec::new(), Vec::new()),
        }
    }

    pub fn with_seed(root: G, config: SearchConfig, seed: u64) -> Search<G> {
        Search::new(root, config, SearchRng::seed_from_u64(seed))
    }

    pub fn root(&self) -> &G {
        &self.root
    }
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }
    /// Settings can be changed between searches (e.g. the temperature by move number);
    /// a change of `simulations` during a search changes its budget.
    pub fn config_mut(&mut self) -> &mut SearchConfig {
        &mut self.config
    }
    pub fn is_done(&self) -> bool {
        self.done
    }
    /// Simulations run by this search so far.
    pub fn simulations_done(&self) -> u32 {
        self.sims
    }
    /// Nodes and edges in the arena.
    pub fn tree_size(&self) -> (usize, usize) {
        (self.nodes.len(), self.edges.len())
    }
    /// Whether a leaf returned by [`Search::next_leaf`] awaits [`Search::apply`].
    pub fn has_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The root's proven value and the plies to the end of the game along the proof
    /// (solver or terminal root), for `score mate N` reports.
    pub fn proven(&self) -> Option<(f32, u16)> {
        let root = &self.nodes[0];
        root.exact.map(|v| (v, root.exact_plies))
    }

    /// The principal variation: from the root, the most visited child at every node, as
    /// far as the tree is expanded (at most `max_len` moves).
    pub fn principal_variation(&self, max_len: usize) -> Vec<G::Move> {
        let mut pv = Vec::new();
        let mut node = 0u32;
        while pv.len() < max_len && self.nodes[node as usize].expansion == Expansion::Expanded {
            let Some(best) = self.children(node).iter().filter(|e| e.visits > 0).max_by_key(|e| e.visits) else { break };
            pv.push(best.mv);
            if best.child == NONE {
                break;
            }
            node = best.child;
        }
        pv
    }

    /// Sequential Halving phases started so far in this search (Gumbel).
    pub fn gumbel_phases(&self) -> &[PhaseRecord<G::Move>] {
        self.halving.as_ref().map_or(&[], |h| &h.log)
    }

    /// g(a) of every root move (scaled; Gumbel, once the root is prepared).
    pub fn root_gumbel(&self) -> Option<Vec<(G::Move, f32)>> {
        let h = self.halving.as_ref()?;
        Some(self.root_edges().iter().zip(&h.gumbel).map(|(e, &g)| (e.mv, g)).collect())
    }

    /// Visit counts N(a) of the children of the node reached from the root by `path`
    /// (`None` if that node is not in the tree or not expanded).
    pub fn node_visits(&self, path: &[G::Move]) -> Option<Vec<(G::Move, u32)>> {
        let mut node = 0u32;
        for &m in path {
            let e = self.children(node).iter().find(|e| e.mv == m)?;
            if e.child == NONE {
                return None;
            }
            node = e.child;
        }
        if self.nodes[node as usize].expansion != Expansion::Expanded {
            return None;
        }
        Some(self.children(node).iter().map(|e| (e.mv, e.visits)).collect())
    }

    fn root_edges(&self) -> &[Edge<G::Move>] {
        self.children(0)
    }

    #[inline]
    fn children(&self, node: u32) -> &[Edge<G::Move>] {
        let n = &self.nodes[node as usize];
        &self.edges[n.first as usize..(n.first + n.len) as usize]
    }

    /// Runs simulations until a leaf needs an evaluation and returns it, or returns
    /// `None` once the budget is spent (then [`Search::is_done`] holds). Terminal and
    /// proven leaves are handled here. Panics if the previous leaf was not applied.
    pub fn next_leaf(&mut self) -> Option<EvalRequest<G>> {
        assert!(self.pending.is_none(), "next_leaf called before the pending leaf was applied");
        loop {
            if self.done {
                return None;
            }
            let root = self.nodes[0];
            if root.is_terminal() {
                self.finish();
                return None;
            }
            if root.expansion != Expansion::Expanded {
                self.path.clear();
                let state = self.root.clone();
                if let Some(req) = self.request(0, state) {
                    return Some(req);
                }
                continue;
            }
            if !self.prepared {
                self.prepare_root();
            }
            if self.sims >= self.config.simulations {
                self.finish();
                return None;
            }
            if let Some(req) = self.simulate() {
                return Some(req);
            }
        }
    }

    /// Expands the pending leaf with its evaluation and backs the value up.
    pub fn apply(&mut self, eval: Evaluation) {
        let p = self.pending.take().expect("apply called without a pending leaf");
        assert_eq!(eval.priors.len(), p.moves.len(), "evaluation has {} priors for {} moves", eval.priors.len(), p.moves.len());
        let exponent = 1.0 / self.config.policy_temperature as f64;
        // No `powf` per move at the default T = 1: this runs at every expansion.
        let tempered = |x: f32| match x.is_finite() && x > 0.0 {
            false => 0.0,
            true if exponent == 1.0 => x as f64,
            true => (x as f64).powf(exponent),
        };
        let sum: f64 = eval.priors.iter().map(|&x| tempered(x)).sum();
        let uniform = 1.0 / p.moves.len() as f32;
        let first = self.edges.len() as u32;
        let mut prior_mass = 0.0f64;
        self.edges.extend(p.moves.iter().zip(&eval.priors).map(|(&mv, &x)| {
            let prior = if sum > 0.0 { (tempered(x) / sum) as f32 } else { uniform };
            prior_mass += prior.max(MIN_PRIOR) as f64;
            Edge { mv, prior, visits: 0, value_sum: 0.0, child: NONE }
        }));
        let value = if eval.value.is_finite() { eval.value.clamp(-1.0, 1.0) } else { 0.0 };
        let node = &mut self.nodes[p.node as usize];
        node.first = first;
        node.len = p.moves.len() as u32;
        node.prior_mass = prior_mass;
        node.raw_value = value;
        node.expansion = Expansion::Expanded;
        if p.node != 0 {
            self.backup(p.node, value);
            if self.sims >= self.config.simulations {
                self.finish();
            }
        }
    }

    /// Runs the search to the end, one leaf per evaluator call.
    pub fn run<E: Evaluator<G> + ?Sized>(&mut self, evaluator: &E) -> SearchResult<G::Move> {
        while let Some(req) = self.next_leaf() {
            let eval = evaluator.evaluate(std::slice::from_ref(&req)).pop().expect("evaluator returned no result");
            self.apply(eval);
        }
        self.result()
    }

    /// Plays `mv` (a legal root move) and keeps its subtree as the new root, then starts
    /// a new search (fresh noise and budget). A pending leaf is dropped.
    pub fn advance(&mut self, mv: G::Move) {
        assert!(self.root.legal_moves().contains(&mv), "advance: {mv:?} is not a legal root move");
        self.drop_pending();
        let child = self.root_edges().iter().find(|e| e.mv == mv).map(|e| e.child).filter(|&c| c != NONE);
        self.root.play(mv);
        self.root_clean_priors.clear();
        match child {
            // A leaf proven by the mate check is not a terminal: as the root it must be
            // expanded.
            Some(c) if self.nodes[c as usize].len > 0 || self.root.terminal_value().is_some() => self.compact(c),
            _ => {
                self.nodes.clear();
                self.edges.clear();
                self.nodes.push(Node::new(self.root.to_move(), self.root.terminal_value()));
            }
        }
        self.reset();
    }

    /// Starts a new search on the same root, keeping the tree (fresh noise and budget).
    pub fn restart(&mut self) {
        self.drop_pending();
        self.reset();
    }

    fn drop_pending(&mut self) {
        if let Some(p) = self.pending.take() {
            self.nodes[p.node as usize].expansion = Expansion::Unexpanded;
        }
    }

    fn reset(&mut self) {
        self.path.clear();
        self.sims = 0;
        self.prepared = false;
        self.halving = None;
        self.done = false;
        self.chosen = None;
    }

    /// Rebuilds the arena with `new_root`'s subtree only (breadth first).
    fn compact(&mut self, new_root: u32) {
        let (mut nodes, mut edges) = std::mem::take(&mut self.spare);
        nodes.clear();
        edges.clear();
        nodes.push(self.nodes[new_root as usize]);
        let mut queue = std::collections::VecDeque::new();
        queue.push_back((new_root, 0u32));
        while let Some((old, new)) = queue.pop_front() {
            let first = edges.len() as u32;
            for e in self.children(old) {
                let mut e = *e;
                if e.child != NONE {
                    let idx = nodes.len() as u32;
                    nodes.push(self.nodes[e.child as usize]);
                    queue.push_back((e.child, idx));
                    e.child = idx;
                }
                edges.push(e);
            }
            nodes[new as usize].first = first;
        }
        let old = (std::mem::replace(&mut self.nodes, nodes), std::mem::replace(&mut self.edges, edges));
        // A long analysis's arena is not kept twice: only self-play's small ones are reused.
        self.spare = if old.1.capacity() <= SPARE_EDGES { old } else { Default::default() };
    }

    /// Asks for an evaluation of `node` (state `state`), or handles a state without moves.
    fn request(&mut self, node: u32, state: G) -> Option<EvalRequest<G>> {
        let moves = leafprof::time(Part::LegalMoves, || state.legal_moves());
        if moves.is_empty() {
            // Not terminal by the game's word yet without moves: treat as a draw.
            let n = &mut self.nodes[node as usize];
            n.exact = Some(0.0);
            n.expansion = Expansion::Expanded;
            if node != 0 {
                self.backup(node, 0.0);
            }
            return None;
        }
        if node != 0 {
            let depth = self.path.len();
            let plies = if self.checks_mate_in_one() && leafprof::time(Part::MateInOne, || state.winning_move_among(&moves).is_some()) {
                Some(1)
            } else if self.config.mate_in_three_depth.is_some_and(|d| depth <= d as usize)
                && leafprof::time(Part::MateInThree, || state.checkmate_within(3, MATE_BUDGET).is_some())
            {
                Some(3)
            } else {
                None
            };
            if let Some(plies) = plies {
                let n = &mut self.nodes[node as usize];
                n.exact = Some(1.0);
                n.exact_plies = plies;
                n.expansion = Expansion::Expanded;
                self.backup(node, 1.0);
                return None;
            }
        }
        self.nodes[node as usize].expansion = Expansion::Pending;
        self.pending = Some(Pending { node, moves: moves.clone() });
        Some(EvalRequest { state, moves })
    }

    /// The root state played down the current path.
    fn replay(&self) -> G {
        let mut g = self.root.clone();
        let line: Vec<G::Move> = self.path.iter().map(|&(_, e)| self.edges[e as usize].mv).collect();
        g.play_line(&line);
        g
    }

    /// One simulation: returns a leaf to evaluate, or `None` if it ended at a terminal
    /// or proven node (already backed up).
    fn simulate(&mut self) -> Option<EvalRequest<G>> {
        self.path.clear();
        let mut node = 0u32;
        loop {
            let e = if node == 0 { self.select_root() } else { self.select_interior(node) };
            self.path.push((node, e));
            let child = self.edges[e as usize].child;
            if child == NONE {
                let state = leafprof::time(Part::Replay, || self.replay());
                let idx = self.nodes.len() as u32;
                let terminal = state.terminal_value();
                self.nodes.push(Node::new(state.to_move(), terminal));
                self.edges[e as usize].child = idx;
                return match terminal {
                    Some(v) => {
                        self.backup(idx, v);
                        None
                    }
                    None => self.request(idx, state),
                };
            }
            let n = self.nodes[child as usize];
            if let Some(v) = n.exact {
                self.backup(child, v);
                return None;
            }
            match n.expansion {
                Expansion::Expanded => node = child,
                Expansion::Unexpanded => {
                    let state = leafprof::time(Part::Replay, || self.replay());
                    return self.request(child, state);
                }
                Expansion::Pending => unreachable!("a pending node is reached only by its own simulation"),
            }
        }
    }

    /// Backs `value` (for the side to move at `leaf`) up the current path.
    fn backup(&mut self, leaf: u32, value: f32) {
        let mut v = value;
        let mut child_to_move = self.nodes[leaf as usize].to_move;
        let mut proven = self.config.solver && self.nodes[leaf as usize].exact.is_some();
        for i in (0..self.path.len()).rev() {
            let (parent, e) = self.path[i];
            let pm = self.nodes[parent as usize].to_move;
            if pm != child_to_move {
                v = -v;
            }
            let edge = &mut self.edges[e as usize];
            edge.visits += 1;
            edge.value_sum += v as f64;
            if proven {
                proven = self.nodes[parent as usize].exact.is_none() && self.try_prove(parent);
            }
            child_to_move = pm;
        }
        self.sims += 1;
    }

    /// Marks `node` proven if its children decide it; returns whether it did.
    fn try_prove(&mut self, node: u32) -> bool {
        let n = self.nodes[node as usize];
        if n.len == 0 {
            return false;
        }
        match self.proven_best(node) {
            Some((value, plies, _)) => {
                let n = &mut self.nodes[node as usize];
                n.exact = Some(value);
                n.exact_plies = plies.saturating_add(1);
                true
            }
            None => false,
        }
    }

    /// The best proven child of `node` if its children decide the node's value: a child
    /// worth +1 for the node's mover (the fastest such win), or, when every child is
    /// proven, the best value (the fastest win, else the slowest draw or loss). Returns
    /// (value, plies of the child, child edge offset).
    fn proven_best(&self, node: u32) -> Option<(f32, u16, usize)> {
        let n = self.nodes[node as usize];
        let mut win: Option<(u16, usize)> = None;
        let mut best: Option<(f32, u16, usize)> = None;
        let mut all = true;
        for (i, e) in self.children(node).iter().enumerate() {
            let Some(q) = self.exact_q(e, n.to_move) else {
                all = false;
                continue;
            };
            let plies = self.nodes[e.child as usize].exact_plies;
            if q >= 1.0 {
                if win.is_none_or(|(p, _)| plies < p) {
                    win = Some((plies, i));
                }
            } else if best.is_none_or(|(v, p, _)| q > v || (q == v && plies > p)) {
                best = Some((q, plies, i));
            }
        }
        match (win, best) {
            (Some((p, i)), _) => Some((1.0, p, i)),
            (None, Some(b)) if all => Some(b),
            _ => None,
        }
    }

    /// The exact value of an edge's child for the parent's mover, if known.
    #[inline]
    fn exact_q(&self, e: &Edge<G::Move>, parent_to_move: u8) -> Option<f32> {
        if e.child == NONE {
            return None;
        }
        let c = &self.nodes[e.child as usize];
        c.exact.map(|x| if c.to_move == parent_to_move { x } else { -x })
    }

    /// Q(a) for the parent's mover: exact where known, the mean if visited.
    #[inline]
    fn q(&self, e: &Edge<G::Move>, parent_to_move: u8) -> Option<f32> {
        if let Some(x) = self.exact_q(e, parent_to_move) {
            return Some(x);
        }
        (e.visits > 0).then(|| (e.value_sum / e.visits as f64) as f32)
    }

    /// completedQ(a) over the children of `node`, into `out`; returns max_b N(b).
    fn completed_q(&self, node: u32, out: &mut Vec<f32>) -> u32 {
        let n = self.nodes[node as usize];
        let edges = self.children(node);
        out.clear();
        let (mut sum_n, mut max_n) = (0u64, 0u32);
        let (mut sum_pq, mut sum_p) = (0.0f64, 0.0f64);
        for e in edges {
            sum_n += e.visits as u64;
            max_n = max_n.max(e.visits);
            if e.visits > 0 {
                let q = self.q(e, n.to_move).unwrap();
                let p = e.prior.max(f32::MIN_POSITIVE) as f64;
                sum_p += p;
                sum_pq += p * q as f64;
                out.push(q);
            } else {
                out.push(f32::NAN);
            }
        }
        let v_mix = if sum_p > 0.0 { ((n.raw_value as f64 + sum_n as f64 * sum_pq / sum_p) / (1.0 + sum_n as f64)) as f32 } else { n.raw_value };
        for q in out.iter_mut() {
            if q.is_nan() {
                *q = v_mix;
            }
        }
        max_n
    }

    /// σ(q̂(completedQ(a))) for every child of `node`, written to `out`.
    fn sigma_completed_q(&self, node: u32, out: &mut Vec<f32>) {
        let max_n = self.completed_q(node, out);
        let scale = (self.config.c_visit + max_n as f32) * self.config.c_scale;
        match self.config.q_norm {
            QNorm::MinMax => {
                let (lo, hi) = out.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &q| (lo.min(q), hi.max(q)));
                let inv = 1.0 / (hi - lo).max(1e-8);
                for q in out.iter_mut() {
                    *q = scale * (*q - lo) * inv;
                }
            }
            QNorm::Bounds => {
                for q in out.iter_mut() {
                    *q = scale * (*q + 1.0) * 0.5;
                }
            }
        }
    }

    /// π' = softmax(logits + σ(completedQ)) over the children of `node`, into `out`.
    fn improved_policy(&self, node: u32, out: &mut Vec<f32>) {
        self.sigma_completed_q(node, out);
        for (z, e) in out.iter_mut().zip(self.children(node)) {
            *z += logit(e.prior);
        }
        softmax_in_place(out);
    }

    fn select_root(&mut self) -> u32 {
        match self.config.root_policy {
            RootPolicy::Gumbel => self.select_root_gumbel(),
            RootPolicy::Puct => self.select_puct(0, self.config.fpu_root),
        }
    }

    fn select_interior(&mut self, node: u32) -> u32 {
        match self.config.root_policy {
            RootPolicy::Gumbel => self.select_gumbel_interior(node),
            RootPolicy::Puct => self.select_puct(node, self.config.fpu),
        }
    }

    /// argmax_a [ π'(a) − N(a) / (1 + ΣN) ], computed over the visited children and
    /// the best unvisited one only. Every unvisited child has completedQ = v_mix, so its
    /// π'(a) ∝ e^(σ(v_mix)) · π(a) and the best of them is the one of highest prior; the
    /// softmax's sum over the unvisited is e^(σ(v_mix) − M) · Σ_unvisited π(b). A node holds
    /// ~100 children of which a 64-simulation tree visits a few: this spares the exp of
    /// every child at every step down the tree. The same choice as the softmax over every
    /// child up to rounding (`tests::interior_selection_matches_the_full_softmax`).
    fn select_gumbel_interior(&mut self, node: u32) -> u32 {
        let n = self.nodes[node as usize];
        let mut visited = std::mem::take(&mut self.scratch_visited);
        visited.clear();
        let (mut sum_n, mut max_n) = (0u64, 0u32);
        let (mut sum_pq, mut sum_p) = (0.0f64, 0.0f64);
        let mut visited_mass = 0.0f64;
        let mut best_unvisited: Option<(u32, f32)> = None;
        for (i, e) in self.children(node).iter().enumerate() {
            if e.visits > 0 {
                visited_mass += e.prior.max(MIN_PRIOR) as f64;
                sum_n += e.visits as u64;
                max_n = max_n.max(e.visits);
                let q = self.q(e, n.to_move).unwrap();
                let p = e.prior.max(f32::MIN_POSITIVE) as f64;
                sum_p += p;
                sum_pq += p * q as f64;
                visited.push((i as u32, q, 0.0));
            } else {
                // Compared as the logit sees it: priors under MIN_PRIOR tie, the first wins.
                let p = e.prior.max(MIN_PRIOR);
                if best_unvisited.is_none_or(|(_, best)| p > best) {
                    best_unvisited = Some((i as u32, p));
                }
            }
        }
        // Not summed over the unvisited children: that is a chain of ~100 dependent
        // additions at every node of every path.
        let unvisited_mass = (n.prior_mass - visited_mass).max(0.0);
        let v_mix = if sum_p > 0.0 { ((n.raw_value as f64 + sum_n as f64 * sum_pq / sum_p) / (1.0 + sum_n as f64)) as f32 } else { n.raw_value };
        let scale = (self.config.c_visit + max_n as f32) * self.config.c_scale;
        // σ(q̂): min–max over the completed Q-values (the visited children's, and v_mix
        // where a child is unvisited), or the fixed bounds.
        let (min_max, lo, inv) = match self.config.q_norm {
            QNorm::MinMax => {
                let completed = visited.iter().map(|&(_, q, _)| q).chain(best_unvisited.map(|_| v_mix));
                let (lo, hi) = completed.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), q| (lo.min(q), hi.max(q)));
                (true, lo, 1.0 / (hi - lo).max(1e-8))
            }
            QNorm::Bounds => (false, 0.0, 0.0),
        };
        let sigma = |q: f32| if min_max { scale * (q - lo) * inv } else { scale * (q + 1.0) * 0.5 };
        let edges = self.children(node);
        let logit_of = |i: u32| logit(edges[i as usize].prior);
        // Each visited child's Q becomes its z = σ(q̂) + logit, then its e^(z − max).
        let mut max = f32::NEG_INFINITY;
        for v in visited.iter_mut() {
            v.1 = sigma(v.1) + logit_of(v.0);
            max = max.max(v.1);
        }
        let sigma_u = sigma(v_mix);
        let z_u = best_unvisited.map(|(i, _)| sigma_u + logit_of(i));
        max = z_u.map_or(max, |z| max.max(z));
        let mut sum = if best_unvisited.is_some() { ((sigma_u - max) as f64).exp() * unvisited_mass } else { 0.0 };
        for v in visited.iter_mut() {
            v.2 = ((v.1 - max) as f64).exp();
            sum += v.2;
        }
        let inv_sum = 1.0 / sum;
        let inv_n = 1.0 / (1.0 + sum_n as f64);
        // Candidates in index order; ties go to the lower index, as a scan of every child would.
        let mut best = (u32::MAX, f64::NEG_INFINITY);
        let mut consider = |i: u32, score: f64| {
            if score > best.1 || (score == best.1 && i < best.0) {
                best = (i, score);
            }
        };
        for &(i, _, e) in &visited {
            consider(i, e * inv_sum - edges[i as usize].visits as f64 * inv_n);
        }
        if let (Some((i, _)), Some(zu)) = (best_unvisited, z_u) {
            consider(i, ((zu - max) as f64).exp() * inv_sum);
        }
        self.scratch_visited = visited;
        // No score compared (NaN everywhere): the first child, as the full scan would take.
        n.first + if best.0 == u32::MAX { 0 } else { best.0 }
    }

    /// The softmax over every child that [`Search::select_gumbel_interior`] stands in for.
    #[cfg(test)]
    fn select_gumbel_interior_by_full_softmax(&self, node: u32) -> (u32, Vec<f32>) {
        let mut pi = Vec::new();
        self.improved_policy(node, &mut pi);
        let edges = self.children(node);
        let sum_n: u64 = edges.iter().map(|e| e.visits as u64).sum();
        let inv = 1.0 / (1.0 + sum_n as f32);
        let scores: Vec<f32> = edges.iter().zip(&pi).map(|(e, &p)| p - e.visits as f32 * inv).collect();
        let mut best = 0;
        for (i, &s) in scores.iter().enumerate() {
            if s > scores[best] {
                best = i;
            }
        }
        (self.nodes[node as usize].first + best as u32, scores)
    }

    /// argmax_a [ Q(a) + c_puct · P(a) · sqrt(ΣN) / (1 + N(a)) ], FPU for unvisited.
    fn select_puct(&self, node: u32, fpu: Fpu) -> u32 {
        let n = self.nodes[node as usize];
        let edges = self.children(node);
        let (mut sum_n, mut sum_v, mut visited_p) = (0u64, 0.0f64, 0.0f32);
        for e in edges {
            if e.visits > 0 {
                sum_n += e.visits as u64;
                sum_v += e.value_sum;
                visited_p += e.prior;
            }
        }
        let fpu_value = match fpu {
            Fpu::Absolute(x) => x,
            Fpu::Reduction(r) => ((n.raw_value as f64 + sum_v) / (1.0 + sum_n as f64)) as f32 - r * visited_p.sqrt(),
        };
        let c = self.config.c_puct * (sum_n.max(1) as f32).sqrt();
        let mut best = 0;
        let mut best_score = f32::NEG_INFINITY;
        for (i, e) in edges.iter().enumerate() {
            let q = self.q(e, n.to_move).unwrap_or(fpu_value);
            let s = q + c * e.prior / (1.0 + e.visits as f32);
            if s > best_score {
                best_score = s;
                best = i;
            }
        }
        n.first + best as u32
    }

    /// g(a) + logits(a) + σ(q̂(a)) for every root edge.
    fn root_scores(&self, gumbel: &[f32]) -> Vec<f32> {
        let mut s = Vec::with_capacity(gumbel.len());
        self.sigma_completed_q(0, &mut s);
        for ((x, e), g) in s.iter_mut().zip(self.root_edges()).zip(gumbel) {
            *x += g + logit(e.prior);
        }
        s
    }

    fn select_root_gumbel(&mut self) -> u32 {
        let h = self.halving.as_mut().expect("root prepared");
        if h.cursor == h.remaining.len() {
            h.cursor = 0;
            h.round += 1;
        }
        if h.round >= h.per_action {
            let mut h = self.halving.take().unwrap();
            let scores = self.root_scores(&h.gumbel);
            if h.remaining.len() > 1 {
                h.remaining.sort_by(|&a, &b| scores[b as usize].total_cmp(&scores[a as usize]));
                h.remaining.truncate(h.remaining.len().div_ceil(2));
            }
            h.round = 0;
            h.cursor = 0;
            h.per_action = h.per_action(self.config.simulations, self.sims);
            let first = self.nodes[0].first as usize;
            h.log.push(PhaseRecord { actions: h.remaining.iter().map(|&a| self.edges[first + a as usize].mv).collect(), visits_per_action: h.per_action });
            self.halving = Some(h);
        }
        let h = self.halving.as_mut().unwrap();
        let a = h.remaining[h.cursor];
        h.cursor += 1;
        h.visits[a as usize] += 1;
        self.nodes[0].first + a
    }

    /// Root noise, Gumbel-top-k and the halving schedule, at the start of a search.
    fn prepare_root(&mut self) {
        self.prepared = true;
        if self.checks_mate_in_one() {
            self.visit_root_win();
        }
        let root = self.nodes[0];
        let k = root.len as usize;
        let first = root.first as usize;
        match self.config.root_policy {
            RootPolicy::Gumbel => {
                // A root noised by an earlier PUCT search of this tree gets its priors back.
                if self.root_clean_priors.len() == k {
                    for (e, &p) in self.edges[first..first + k].iter_mut().zip(&self.root_clean_priors) {
                        e.prior = p;
                    }
                }
                let scale = self.config.gumbel_scale;
                let gumbel: Vec<f32> = if scale > 0.0 {
                    let d = Gumbel::new(0.0f32, 1.0).unwrap();
                    (0..k).map(|_| scale * d.sample(&mut self.rng)).collect()
                } else {
                    vec![0.0; k]
                };
                let m = self.config.gumbel_m.clamp(1, k);
                let edges = &self.edges[first..first + k];
                let mut order: Vec<u32> = (0..k as u32).collect();
                let key = |a: u32| gumbel[a as usize] + logit(edges[a as usize].prior);
                order.sort_by(|&a, &b| key(b).total_cmp(&key(a)));
                order.truncate(m);
                let num_phases = if m > 1 { usize::BITS - (m - 1).leading_zeros() } else { 0 };
                let mut h = Halving { gumbel, remaining: order, num_phases, per_action: 0, round: 0, cursor: 0, visits: vec![0; k], log: Vec::new() };
                h.per_action = h.per_action(self.config.simulations, 0);
                h.log.push(PhaseRecord { actions: h.remaining.iter().map(|&a| edges[a as usize].mv).collect(), visits_per_action: h.per_action });
                self.halving = Some(h);
            }
            RootPolicy::Puct => {
                // Noise always on the clean priors, kept from the root's first search, so
                // a restarted root is not noised twice.
                if self.root_clean_priors.len() != k {
                    self.root_clean_priors = self.edges[first..first + k].iter().map(|e| e.prior).collect();
                }
                let eps = self.config.dirichlet_fraction;
                let mut noise = Vec::new();
                if eps > 0.0 && k > 1 {
                    let d = Gamma::new(self.config.dirichlet_alpha.max(1e-3) as f64, 1.0).unwrap();
                    noise = (0..k).map(|_| d.sample(&mut self.rng)).collect::<Vec<f64>>();
                    let s: f64 = noise.iter().sum();
                    if s > 0.0 && s.is_finite() {
                        noise.iter_mut().for_each(|x| *x /= s);
                    } else {
                        noise = vec![1.0 / k as f64; k];
                    }
                }
                for (i, (e, &clean)) in self.edges[first..first + k].iter_mut().zip(&self.root_clean_priors).enumerate() {
                    e.prior = match noise.get(i) {
                        Some(&eta) => (1.0 - eps) * clean + eps * eta as f32,
                        None => clean,
                    };
                }
            }
        }
    }

    /// The one-ply mate check runs when asked for, and under the three-ply one (which would
    /// otherwise report a mate in one as three plies).
    fn checks_mate_in_one(&self) -> bool {
        self.config.mate_in_one || self.config.mate_in_three_depth.is_some()
    }

    /// Mate check at the root: the winning move's child is created and backed up as one
    /// simulation, so the solver proves the root and [`Search::choose`] plays it. A mate
    /// in three's child is proven lost for its mover in two plies.
    fn visit_root_win(&mut self) {
        let one = self.root.winning_move();
        let three = || if self.config.mate_in_three_depth.is_some() { self.root.checkmate_within(3, MATE_BUDGET) } else { None };
        let Some(win) = one.or_else(three) else { return };
        let first = self.nodes[0].first;
        let Some(i) = self.root_edges().iter().position(|e| e.mv == win) else { return };
        let e = first + i as u32;
        if self.edges[e as usize].child != NONE {
            return;
        }
        let mut state = self.root.clone();
        state.play(win);
        let (v, plies) = match state.terminal_value() {
            Some(v) => (v, 0),
            None if one.is_none() => (-1.0, 2),
            None => return,
        };
        let idx = self.nodes.len() as u32;
        let mut child = Node::new(state.to_move(), Some(v));
        child.exact_plies = plies;
        self.nodes.push(child);
        self.edges[e as usize].child = idx;
        self.path.clear();
        self.path.push((0, e));
        self.backup(idx, v);
    }

    /// The move to play; `rng` samples with the temperature (PUCT), else greedy.
    fn choose(&self, rng: Option<&mut SearchRng>) -> Option<G::Move> {
        let root = self.nodes[0];
        if root.len == 0 {
            return None;
        }
        let edges = self.root_edges();
        // Solver: a proven win is played at once (the fastest one); when every move is
        // proven, the best (a loss as late as possible).
        if self.config.solver {
            if let Some((_, _, i)) = self.proven_best(0) {
                return Some(edges[i].mv);
            }
        }
        match self.config.root_policy {
            RootPolicy::Gumbel => {
                let h = self.halving.as_ref()?;
                let scores = self.root_scores(&h.gumbel);
                let most = h.remaining.iter().map(|&a| h.visits[a as usize]).max()?;
                let best = h.remaining.iter().copied().filter(|&a| h.visits[a as usize] == most).fold(None::<u32>, |b, a| match b {
                    Some(b) if scores[b as usize] >= scores[a as usize] => Some(b),
                    _ => Some(a),
                })?;
                Some(edges[best as usize].mv)
            }
            RootPolicy::Puct => {
                let total: u64 = edges.iter().map(|e| e.visits as u64).sum();
                let greedy = || {
                    let key = |e: &Edge<G::Move>| (e.visits, self.q(e, root.to_move).unwrap_or(f32::NEG_INFINITY), e.prior);
                    let mut best = &edges[0];
                    for e in &edges[1..] {
                        let (a, b) = (key(e), key(best));
                        if a.0 > b.0 || (a.0 == b.0 && (a.1 > b.1 || (a.1 == b.1 && a.2 > b.2))) {
                            best = e;
                        }
                    }
                    best.mv
                };
                let tau = self.config.temperature;
                match rng {
                    Some(rng) if tau > 0.0 && total > 0 => {
                        let lmax = edges.iter().filter(|e| e.visits > 0).map(|e| (e.visits as f64).ln()).fold(f64::NEG_INFINITY, f64::max);
                        let w: Vec<f64> =
                            edges.iter().map(|e| if e.visits == 0 { 0.0 } else { (((e.visits as f64).ln() - lmax) / tau as f64).exp() }).collect();
                        let s: f64 = w.iter().sum();
                        let mut x = rng.random::<f64>() * s;
                        for (e, wi) in edges.iter().zip(&w) {
                            if *wi > 0.0 {
                                if x < *wi {
                                    return Some(e.mv);
                                }
                                x -= wi;
                            }
                        }
                        Some(edges.iter().rev().find(|e| e.visits > 0).unwrap().mv)
                    }
                    _ => Some(greedy()),
                }
            }
        }
    }

    fn finish(&mut self) {
        if self.done {
            return;
        }
        let mut rng = self.rng.clone();
        self.chosen = self.choose(Some(&mut rng));
        self.rng = rng;
        self.done = true;
        if tracing::enabled!(tracing::Level::TRACE) {
            let chosen = self.chosen.map(|m| self.root.move_text(m));
            tracing::trace!(simulations = self.sims, nodes = self.nodes.len(), ?chosen, "search finished");
        }
    }

    /// The root's statistics, target and move. Once the search is done the move is the
    /// one chosen at the end (sampled with the temperature for PUCT); before, the greedy
    /// choice from the statistics so far.
    pub fn result(&self) -> SearchResult<G::Move> {
        let root = self.nodes[0];
        let edges = self.root_edges();
        let sum_n: u64 = edges.iter().map(|e| e.visits as u64).sum();
        let sum_v: f64 = edges.iter().map(|e| e.value_sum).sum();
        let value = root.exact.unwrap_or(((root.raw_value as f64 + sum_v) / (1.0 + sum_n as f64)) as f32);
        let mut target = Vec::new();
        if !edges.is_empty() {
            match self.config.root_policy {
                RootPolicy::Gumbel => self.improved_policy(0, &mut target),
                RootPolicy::Puct => {
                    target = if sum_n > 0 {
                        edges.iter().map(|e| (e.visits as f64 / sum_n as f64) as f32).collect()
                    } else {
                        edges.iter().map(|e| e.prior).collect()
                    }
                }
            }
        }
        let policy_value = match root.exact {
            Some(v) => v,
            None if edges.is_empty() || sum_n == 0 => value,
            None => {
                let mut q = Vec::new();
                match self.config.root_policy {
                    RootPolicy::Gumbel => {
                        self.completed_q(0, &mut q);
                    }
                    // Unvisited moves have no target mass under N(a)/ΣN.
                    RootPolicy::Puct => q.extend(edges.iter().map(|e| self.q(e, root.to_move).unwrap_or(0.0))),
                }
                let v: f64 = target.iter().zip(&q).map(|(&p, &q)| p as f64 * q as f64).sum();
                v.clamp(-1.0, 1.0) as f32
            }
        };
        SearchResult {
            chosen: if self.done { self.chosen } else { self.choose(None) },
            policy: edges.iter().zip(&target).map(|(e, &p)| (e.mv, p)).collect(),
            value,
            policy_value,
            exact: root.exact,
            visits: edges.iter().map(|e| e.visits).collect(),
            q_values: edges.iter().map(|e| self.q(e, root.to_move)).collect(),
            priors: edges.iter().map(|e| e.prior).collect(),
            simulations: self.sims,
        }
    }
}

/// logits(a) = ln π(a), a zero prior at ln 10⁻³⁰.
#[inline]
fn logit(prior: f32) -> f32 {
    prior.max(MIN_PRIOR).ln()
}

fn softmax_in_place(z: &mut [f32]) {
    let max = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0f32;
    for x in z.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    let inv = 1.0 / sum;
    for x in z.iter_mut() {
        *x *= inv;
    }
}

/// Drives many searches to the end together: each round takes one leaf from every
/// search still running and evaluates them in ONE batched call. This is how a self-play
/// worker keeps many games in flight (it would also play moves and start new searches
/// between rounds; see the crate documentation).
pub fn run_batched<G: SearchGame, E: Evaluator<G> + ?Sized>(searches: &mut [Search<G>], evaluator: &E) {
    let mut batch = Vec::with_capacity(searches.len());
    let mut owners = Vec::with_capacity(searches.len());
    loop {
        batch.clear();
        owners.clear();
        for (i, s) in searches.iter_mut().enumerate() {
            if let Some(req) = s.next_leaf() {
                batch.push(req);
                owners.push(i);
            }
        }
        if batch.is_empty() {
            return;
        }
        let evals = evaluator.evaluate(&batch);
        assert_eq!(evals.len(), batch.len(), "evaluator returned {} results for {} requests", evals.len(), batch.len());
        for (&i, e) in owners.iter().zip(evals) {
            searches[i].apply(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{EvalRequest, Evaluator, FnEvaluator};
    use crate::SearchGame;

    /// Priors and a value drawn from the position's key: peaked priors (a softmax of
    /// logits spread over ±6) and values over (−1, 1), as a network's look.
    fn hashed<G: SearchGame>(req: &EvalRequest<G>) -> Evaluation {
        use rand::Rng;
        let mut rng = SearchRng::seed_from_u64(req.state.key());
        let logits: Vec<f32> = req.moves.iter().map(|_| rng.random_range(-6.0f32..6.0)).collect();
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = logits.iter().map(|l| (l - max).exp()).collect();
        let s: f32 = e.iter().sum();
        Evaluation { priors: e.iter().map(|x| x / s).collect(), value: rng.random_range(-0.95f32..0.95) }
    }

    /// Runs a search from `game`, and after every simulation compares the two interior
    /// selections at every expanded node below the root: (comparisons, differences).
    fn compare<G: SearchGame>(game: G, config: SearchConfig, seed: u64) -> (usize, usize) {
        let eval = FnEvaluator(hashed::<G>);
        let (mut compared, mut differ) = (0, 0);
        let mut s = Search::with_seed(game, config, seed);
        while let Some(req) = s.next_leaf() {
            let e = eval.evaluate(std::slice::from_ref(&req)).pop().unwrap();
            s.apply(e);
            for node in 1..s.nodes.len() as u32 {
                let n = s.nodes[node as usize];
                if n.expansion != Expansion::Expanded || n.len == 0 {
                    continue;
                }
                let (full, scores) = s.select_gumbel_interior_by_full_softmax(node);
                let fast = s.select_gumbel_interior(node);
                assert!(fast >= n.first && fast < n.first + n.len, "node {node}: edge {fast} is not a child");
                compared += 1;
                if fast != full {
                    let (a, b) = (scores[(full - n.first) as usize], scores[(fast - n.first) as usize]);
                    assert!(
                        (a - b).abs() <= 1e-6 * a.abs().max(1e-3),
                        "node {node}: child {} by the softmax ({a}), {} here ({b})",
                        full - n.first,
                        fast - n.first
                    );
                    differ += 1;
                }
            }
        }
        (compared, differ)
    }

    /// An edge of a shogi tree is 24 bytes (the arena's size in `SPARE_EDGES` assumes it).
    #[test]
    fn a_shogi_edge_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Edge<rules::Move>>(), 24);
    }

    /// The selection over the visited children and the best unvisited one picks what the
    /// softmax over every child picks, at every expanded interior node after every
    /// simulation: searches from Pocket Shogi Copper's start and random positions (~100
    /// children a node, few visited) and from Nim (three children a node, every one
    /// visited), both normalisations and three c_scale values. Where they could differ
    /// (the softmax's best two scores tied within rounding) they may; in these 59,096
    /// comparisons they never do.
    #[test]
    fn interior_selection_matches_the_full_softmax() {
        use rand::Rng;
        let variant = rules::Variant::builtin("pocket-copper").unwrap();
        let (mut compared, mut differ) = (0usize, 0usize);
        let mut walk = SearchRng::seed_from_u64(5);
        for (k, (q_norm, c_scale)) in [(QNorm::MinMax, 1.0), (QNorm::MinMax, 0.1), (QNorm::Bounds, 1.0), (QNorm::MinMax, 5.0)].into_iter().enumerate() {
            let config = SearchConfig { q_norm, c_scale, ..SearchConfig::gumbel(160) };
            let mut game = rules::Game::new(rules::Position::start(variant), None);
            for _ in 0..(k * 7) {
                let moves = game.legal_moves();
                game.play(moves[walk.random_range(0..moves.len())]).unwrap();
            }
            let (c, d) = compare(game, config.clone(), k as u64);
            let (nc, nd) = compare(crate::toy::Nim::new(9, 3), config, k as u64);
            compared += c + nc;
            differ += d + nd;
        }
        assert!(compared > 20_000, "{compared}");
        assert!(differ * 1000 <= compared, "{differ} of {compared}");
    }
}
