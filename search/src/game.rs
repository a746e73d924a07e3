//! The game interface the search needs, and its implementation for [`rules::Game`].

use std::fmt::Debug;
use std::hash::Hash;

/// A two-player, turn-based game as the search sees it.
///
/// Values are always from the point of view of the side to move in the state they
/// describe, in `[-1, 1]` (+1 win, 0 draw, −1 loss). Turns need not alternate: the tree
/// compares [`SearchGame::to_move`] of parent and child to decide whether to negate.
pub trait SearchGame: Clone {
    type Move: Copy + Eq + Hash + Debug;

    /// The player to move, 0 or 1.
    fn to_move(&self) -> usize;
    /// Legal moves in a fixed, deterministic order (evaluators align priors with it).
    /// Empty exactly when [`SearchGame::terminal_value`] is `Some`.
    fn legal_moves(&self) -> Vec<Self::Move>;
    /// Plays a move from [`SearchGame::legal_moves`].
    fn play(&mut self, m: Self::Move);
    /// Plays `line` as [`SearchGame::play`] does move by move, where every move but the
    /// last leads to an unfinished state (a path down the search tree): a game may skip
    /// judging those states.
    fn play_line(&mut self, line: &[Self::Move]) {
        for &m in line {
            self.play(m);
        }
    }
    /// The exact value for the side to move when the game is over, else `None`.
    fn terminal_value(&self) -> Option<f32>;
    /// A legal move that ends the game at once in the mover's favour (mate in one), if
    /// the game can tell cheaply; `None` when there is none or the game does not say.
    /// Must never return a move that does not win. Used by
    /// [`crate::SearchConfig::mate_in_one`].
    fn winning_move(&self) -> Option<Self::Move> {
        None
    }
    /// [`SearchGame::winning_move`] given this state's `legal` moves (as
    /// [`SearchGame::legal_moves`] lists them), so that a game can skip generating them
    /// again: the same answer.
    fn winning_move_among(&self, _legal: &[Self::Move]) -> Option<Self::Move> {
        self.winning_move()
    }
    /// A legal move that wins by force within `plies` plies (odd) through checks, if the
    /// game can tell; `None` when there is none or the game does not say. Must never
    /// return a move that does not force a win. It searches from at most
    /// `max_positions` positions, then answers `None`. Used by
    /// [`crate::SearchConfig::mate_in_three_depth`].
    fn checkmate_within(&self, _plies: u32, _max_positions: u64) -> Option<Self::Move> {
        None
    }
    /// A hash of the state the evaluator sees (for caching evaluations).
    fn key(&self) -> u64;
    /// Human-readable move text, for logs.
    fn move_text(&self, m: Self::Move) -> String {
        format!("{m:?}")
    }
}

/// A shogi-variant game with its history: repetition, perpetual check, the flag win,
/// pawn-drop mate, declaration and the ply limit are all decided by [`rules::Game`], so
/// they enter the tree as exact terminal values.
///
/// [`SearchGame::key`] covers everything the network's input planes read
/// (`encoding::InputPlanes::encode`): the position's Zobrist key (board, hands, pockets,
/// side to move), how often the position has occurred (1, 2, 3 or more: the repetition
/// planes) and the game's progress (ply and length limit: the progress plane). Two
/// histories reaching one position with different repetition counts or at different
/// plies are different inputs, so they must not share a cached evaluation.
impl SearchGame for rules::Game {
    type Move = rules::Move;

    #[inline]
    fn to_move(&self) -> usize {
        self.position().side_to_move().index()
    }
    #[inline]
    fn legal_moves(&self) -> Vec<rules::Move> {
        // Generated in place and copied once: this runs at every leaf.
        let mut list = rules::MoveList::new();
        self.generate_legal(&mut list);
        list.to_vec()
    }
    #[inline]
    fn play(&mut self, m: rules::Move) {
        self.play_unchecked(m)
    }
    fn play_line(&mut self, line: &[rules::Move]) {
        self.play_line_unchecked(line)
    }
    #[inline]
    fn terminal_value(&self) -> Option<f32> {
        self.result().map(|r| r.outcome.value_for(self.position().side_to_move()))
    }
    /// Checkmate or the flag win in one ([`rules::Position::winning_move`], through its
    /// cheap form [`rules::Position::winning_move_fast`]: the same move); both are
    /// decided before repetition and the ply limit, so the history cannot change them.
    fn winning_move(&self) -> Option<rules::Move> {
        if self.is_over() {
            return None;
        }
        self.position().winning_move_fast()
    }
    /// The same from the leaf's legal moves ([`rules::Position::winning_move_among`]).
    fn winning_move_among(&self, legal: &[rules::Move]) -> Option<rules::Move> {
        if self.is_over() {
            return None;
        }
        self.position().winning_move_among(legal)
    }
    /// [`rules::Game::checkmate_within`]: judged by the game itself, history included
    /// (through its cheap form [`rules::Game::checkmate_within_fast`]: the same move).
    fn checkmate_within(&self, plies: u32, max_positions: u64) -> Option<rules::Move> {
        rules::Game::checkmate_within_fast(self, plies, max_positions)
    }
    #[inline]
    fn key(&self) -> u64 {
        let repetitions = self.repetitions().min(3) as u64;
        let mixed = self.position().key()
            ^ repetitions.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (self.ply() as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ (self.max_plies() as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
        // A finaliser (SplitMix64) so that the three small numbers spread over all bits.
        let mut z = mixed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn move_text(&self, m: rules::Move) -> String {
        self.position().move_to_usi(m)
    }
}
