//! Small games with known values, for tests and benchmarks.

use crate::game::SearchGame;

/// One decision: player 0 picks an arm, then the game ends. `values[a]` is the exact
/// value of arm `a` for player 0.
#[derive(Clone, Debug)]
pub struct Bandit {
    pub values: Vec<f32>,
    pub picked: Option<usize>,
}

impl Bandit {
    pub fn new(values: Vec<f32>) -> Bandit {
        Bandit { values, picked: None }
    }
}

impl SearchGame for Bandit {
    type Move = usize;
    fn to_move(&self) -> usize {
        usize::from(self.picked.is_some())
    }
    fn legal_moves(&self) -> Vec<usize> {
        if self.picked.is_some() {
            Vec::new()
        } else {
            (0..self.values.len()).collect()
        }
    }
    fn play(&mut self, m: usize) {
        assert!(self.picked.is_none() && m < self.values.len());
        self.picked = Some(m);
    }
    fn terminal_value(&self) -> Option<f32> {
        // Player 1 is to move once an arm is picked: its value is the negation.
        self.picked.map(|a| -self.values[a])
    }
    fn key(&self) -> u64 {
        self.picked.map_or(u64::MAX, |a| a as u64)
    }
}

/// Subtraction Nim: take 1..=`max_take` stones; whoever cannot move (no stones left)
/// loses. The winning moves leave a multiple of `max_take + 1`.
#[derive(Clone, Debug)]
pub struct Nim {
    pub stones: u32,
    pub max_take: u32,
    pub player: usize,
}

impl Nim {
    pub fn new(stones: u32, max_take: u32) -> Nim {
        Nim { stones, max_take, player: 0 }
    }
}

impl SearchGame for Nim {
    type Move = u32;
    fn to_move(&self) -> usize {
        self.player
    }
    fn legal_moves(&self) -> Vec<u32> {
        (1..=self.max_take.min(self.stones)).collect()
    }
    fn play(&mut self, m: u32) {
        assert!(m >= 1 && m <= self.max_take.min(self.stones));
        self.stones -= m;
        self.player ^= 1;
    }
    fn terminal_value(&self) -> Option<f32> {
        (self.stones == 0).then_some(-1.0)
    }
    fn key(&self) -> u64 {
        (self.stones as u64) << 1 | self.player as u64
    }
}

/// An explicit game tree: node `i` of `nodes` has a player to move and either children
/// (moves are child positions 0, 1, …) or an exact value for its player to move.
#[derive(Clone, Debug)]
pub struct Tree {
    pub nodes: std::sync::Arc<Vec<TreeNode>>,
    pub at: usize,
}

#[derive(Clone, Debug)]
pub struct TreeNode {
    pub to_move: usize,
    pub children: Vec<usize>,
    /// Exact value for `to_move` at a leaf (ignored where there are children).
    pub value: f32,
}

impl Tree {
    pub fn new(nodes: Vec<TreeNode>) -> Tree {
        Tree { nodes: std::sync::Arc::new(nodes), at: 0 }
    }
    pub fn node(&self) -> &TreeNode {
        &self.nodes[self.at]
    }
}

impl SearchGame for Tree {
    type Move = usize;
    fn to_move(&self) -> usize {
        self.node().to_move
    }
    fn legal_moves(&self) -> Vec<usize> {
        (0..self.node().children.len()).collect()
    }
    fn play(&mut self, m: usize) {
        self.at = self.node().children[m];
    }
    fn terminal_value(&self) -> Option<f32> {
        self.node().children.is_empty().then(|| self.node().value)
    }
    fn key(&self) -> u64 {
        self.at as u64
    }
}
