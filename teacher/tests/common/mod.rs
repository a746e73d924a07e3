//! Helpers shared by the teacher's tests.

use rules::{Game, Move, Outcome};

/// The moves of the game's position after which the side to move has won, as the rules
/// say.
pub fn winning_moves(game: &Game) -> Vec<Move> {
    let side = game.position().side_to_move();
    game.legal_moves()
        .into_iter()
        .filter(|&m| {
            let mut g = game.clone();
            g.play_unchecked(m);
            g.result().is_some_and(|r| r.outcome == Outcome::Win(side))
        })
        .collect()
}
