//! What a player says about a position besides its move: the evaluation and how far it
//! looked. Shared by every kind of player, the arena's logs and the USI `info` line.

use rules::Move;
use serde::{Deserialize, Serialize};

/// An evaluation from the point of view of the side to move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Score {
    /// Centipawns (a pawn is 100).
    Cp(i32),
    /// A forced mate in this many plies: positive when the side to move mates, negative
    /// when it is mated (USI `score mate N`, plies).
    Mate(i32),
}

impl Score {
    /// The score of a USI engine's `info` line (`None` when it gave none).
    pub fn of_usi_info(info: &usi::client::EngineInfo) -> Option<Score> {
        match (info.score_mate, info.score_cp) {
            (Some(m), _) => Some(Score::Mate(m)),
            (None, Some(cp)) => Some(Score::Cp(cp)),
            _ => None,
        }
    }
}

/// A player's answer for one position.
#[derive(Clone, Debug, PartialEq)]
pub struct Thought {
    /// The move chosen; `None` only when the position has no legal move.
    pub best: Option<Move>,
    pub score: Score,
    /// Nominal depth reached (alpha-beta iterations; for MCTS the principal variation's length).
    pub depth: u32,
    /// Nodes searched (alpha-beta nodes, or MCTS simulations).
    pub nodes: u64,
    /// Principal variation, starting with `best`.
    pub pv: Vec<Move>,
}

impl Thought {
    /// A thought with only a move (random play, forced moves).
    pub fn just(best: Option<Move>) -> Thought {
        Thought { best, score: Score::Cp(0), depth: 0, nodes: 0, pv: best.into_iter().collect() }
    }
}
