//! How an arena game ended: by the rules (checkmate, repetition, …, decided by
//! [`rules::Game`]) or by the arena (resignation, an illegal move, time, a crashed
//! engine, adjudication).

use rules::{Color, Outcome, TerminationReason};
use serde::{Deserialize, Serialize};

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Ending {
    /// The rules ended the game (the reason says how).
    Rules(TerminationReason),
    /// The loser resigned (`bestmove resign`).
    Resignation,
    /// The loser sent a move that is not legal in the position (or a declaration
    /// `bestmove win` whose conditions do not hold, or unparseable text).
    IllegalMove,
    /// The loser ran out of time.
    TimeForfeit,
    /// The loser's engine exited or stopped answering the protocol.
    Crash,
    /// The arena adjudicated a win: both sides' scores agreed on it for long enough.
    AdjudicatedWin,
    /// The arena adjudicated a draw: both sides' scores stayed near zero for long enough.
    AdjudicatedDraw,
}

/// The result of an arena game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameEnd {
    pub outcome: Outcome,
    pub ending: Ending,
}

impl GameEnd {
    pub fn loss_of(loser: Color, ending: Ending) -> GameEnd {
        GameEnd { outcome: Outcome::Win(!loser), ending }
    }

    /// A short name for tables and logs: `checkmate`, `resignation`, `time`, …
    pub fn name(&self) -> &'static str {
        match self.ending {
            Ending::Rules(r) => r.name(),
            Ending::Resignation => "resignation",
            Ending::IllegalMove => "illegal-move",
            Ending::TimeForfeit => "time-forfeit",
            Ending::Crash => "crash",
            Ending::AdjudicatedWin => "adjudicated-win",
            Ending::AdjudicatedDraw => "adjudicated-draw",
        }
    }
}
