//! A game: a position plus its history, and the results that need history or rules
//! beyond one position — repetition (fourfold; perpetual check loses), the flag win,
//! pawn-drop mate losing, the 27-point declaration, no-capture and length limits —
//! and Hand shogi's match of consecutive hands.

use crate::moves::{Move, MoveKind, MoveList};
use crate::piece::DropMate;
use crate::position::Position;
use crate::usi::MoveError;
use crate::variant::Declaration;
use crate::Color;

#[derive(Copy, Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub enum Outcome {
    Win(Color),
    Draw,
}

impl Outcome {
    /// +1 win, 0 draw, −1 loss from `c`'s point of view.
    pub fn value_for(self, c: Color) -> f32 {
        match self {
            Outcome::Win(w) if w == c => 1.0,
            Outcome::Win(_) => -1.0,
            Outcome::Draw => 0.0,
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub enum TerminationReason {
    /// The side to move is in check and has no legal move.
    Checkmate,
    /// The side to move is not in check and has no legal move (a loss in shogi).
    NoLegalMoves,
    /// A pawn drop gave checkmate where that loses for the dropper (Pocket Shogi Copper).
    DropMate,
    /// A king reached the opposing king's start square (Pocket Shogi Copper).
    Flag,
    /// Fourfold repetition where one side gave check with every move of the cycle.
    PerpetualCheck,
    /// Fourfold repetition.
    Repetition,
    /// The side to move met the 27-point declaration conditions (CSA rules).
    Declaration,
    /// The variant's plies-without-capture limit.
    NoCapture,
    /// The game's maximum length.
    MaxPlies,
}

impl TerminationReason {
    /// A short name for tables and logs: `checkmate`, `repetition`, `max-plies`, …
    pub fn name(self) -> &'static str {
        match self {
            TerminationReason::Checkmate => "checkmate",
            TerminationReason::NoLegalMoves => "no-legal-moves",
            TerminationReason::DropMate => "pawn-drop-mate",
            TerminationReason::Flag => "flag",
            TerminationReason::PerpetualCheck => "perpetual-check",
            TerminationReason::Repetition => "repetition",
            TerminationReason::Declaration => "declaration",
            TerminationReason::NoCapture => "no-capture",
            TerminationReason::MaxPlies => "max-plies",
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct GameResult {
    pub outcome: Outcome,
    pub reason: TerminationReason,
}

#[derive(Clone, Copy, Debug)]
struct Ply {
    /// Key of the position after this ply.
    key: u64,
    gave_check: bool,
    capture: bool,
}

/// A position with its history. Plays only legal moves; once the result is known no
/// further move is accepted.
#[derive(Clone, Debug)]
pub struct Game {
    start: Position,
    position: Position,
    moves: Vec<Move>,
    plies: Vec<Ply>,
    max_plies: u32,
    result: Option<GameResult>,
}

impl Game {
    /// The game from `start` after `plies` uniformly random legal plies (fewer where a
    /// position has no move), drawn again where they end the game, at most `tries` times;
    /// `None` if every try ended it. The openings of arena matches and of self-play games.
    pub fn random_opening(start: &Position, max_plies: Option<u32>, plies: u32, tries: u32, rng: &mut impl rand::Rng) -> Option<Game> {
        use rand::seq::IndexedRandom;
        for _ in 0..tries {
            let mut g = Game::new(start.clone(), max_plies);
            for _ in 0..plies {
                let moves = g.legal_moves();
                let Some(&m) = moves.choose(rng) else { break };
                g.play_unchecked(m);
            }
            if !g.is_over() {
                return Some(g);
            }
        }
        None
    }

    /// A game from `start`, drawn after `max_plies` plies (the variant's default when `None`).
    pub fn new(start: Position, max_plies: Option<u32>) -> Game {
        let max_plies = max_plies.unwrap_or(start.variant().max_plies);
        let mut g = Game { position: start.clone(), start, moves: Vec::new(), plies: Vec::new(), max_plies, result: None };
        g.result = g.compute_result(None);
        g
    }

    pub fn position(&self) -> &Position {
        &self.position
    }
    pub fn start(&self) -> &Position {
        &self.start
    }
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }
    pub fn ply(&self) -> usize {
        self.moves.len()
    }
    /// Whether this game is `earlier` played on: the same start, `earlier`'s moves, then
    /// at least one more (what a search keeps its tree across).
    pub fn continues(&self, earlier: &Game) -> bool {
        self.moves.len() > earlier.moves.len() && self.moves.starts_with(&earlier.moves) && self.start.to_sfen() == earlier.start.to_sfen()
    }
    pub fn max_plies(&self) -> u32 {
        self.max_plies
    }
    pub fn result(&self) -> Option<GameResult> {
        self.result
    }
    pub fn is_over(&self) -> bool {
        self.result.is_some()
    }

    /// Legal moves, none once the game is over.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate_legal(&mut list);
        list
    }

    /// Appends [`Game::legal_moves`] to `list`: for a caller that keeps the moves
    /// elsewhere, without the list's by-value copy (room for the most moves any position
    /// has, 6 KB).
    pub fn generate_legal(&self, list: &mut MoveList) {
        if !self.is_over() {
            self.position.generate_legal(list);
        }
    }

    /// Times the current position (board, hands, pockets, side) has occurred, this one included.
    pub fn repetitions(&self) -> usize {
        let key = self.position.key();
        usize::from(self.start.key() == key) + self.plies.iter().filter(|p| p.key == key).count()
    }

    /// Plays a move after checking it is legal and the game is not over.
    pub fn play(&mut self, m: Move) -> Result<(), MoveError> {
        if self.is_over() || !self.position.is_legal(m) {
            return Err(MoveError::Illegal { text: self.position.move_to_usi(m) });
        }
        self.play_unchecked(m);
        Ok(())
    }

    /// Parses USI text and plays it.
    pub fn play_usi(&mut self, text: &str) -> Result<Move, MoveError> {
        if self.is_over() {
            return Err(MoveError::Illegal { text: text.to_string() });
        }
        let m = self.position.parse_usi(text)?;
        self.play_unchecked(m);
        Ok(m)
    }

    /// Plays a move known to be legal in the current position of an unfinished game.
    pub fn play_unchecked(&mut self, m: Move) {
        self.push_ply(m);
        self.result = self.compute_result(Some(m));
    }

    /// The move on the board and in the history, the verdict not yet judged.
    fn push_ply(&mut self, m: Move) {
        let captured = self.position.play_unchecked(m);
        let gave_check = self.position.in_check_after(m);
        self.moves.push(m);
        self.plies.push(Ply { key: self.position.key(), gave_check, capture: captured.is_some() });
    }

    /// Plays `line`, legal moves one after another, none of which but the last can end
    /// the game (a search's path down its tree of unfinished positions): the game's
    /// verdict, the one costly part of a move, is judged once, after the last move. The
    /// same game as playing the moves one by one.
    pub fn play_line_unchecked(&mut self, line: &[Move]) {
        for &m in line {
            debug_assert!(self.result.is_none(), "a move of the line after the game ended");
            self.push_ply(m);
            if cfg!(debug_assertions) {
                self.result = self.compute_result(Some(m));
            }
        }
        if let Some(&last) = line.last() {
            self.result = self.compute_result(Some(last));
        }
    }

    /// A move that wins by force within `plies` plies (odd; 1, 3, 5, …) through checks, as
    /// tsume shogi and dlshogi's `mateMoveIn3Ply` search: a move that wins at once, or a
    /// check after which every reply leaves the mover such a move within `plies` − 2
    /// (the last one a checkmate or the flag, [`Position::winning_move`]). Quiet moves of
    /// the winning side are not searched, so `None` does not mean there is no forced win.
    /// Every verdict on the way is the game's own ([`Game::result`]), so repetition,
    /// perpetual check, pawn-drop mate and the ply limit are respected.
    ///
    /// `max_positions` bounds the work: the search gives up (`None`) after searching from
    /// that many positions, so a position full of checking drops cannot stall a caller
    /// with a clock.
    pub fn checkmate_within(&self, plies: u32, max_positions: u64) -> Option<Move> {
        self.checkmate_search(plies, &mut { max_positions })
    }

    fn checkmate_search(&self, plies: u32, budget: &mut u64) -> Option<Move> {
        if self.is_over() || plies == 0 || *budget == 0 {
            return None;
        }
        *budget -= 1;
        if plies <= 2 {
            return self.position.winning_move();
        }
        let us = self.position.side_to_move();
        let won = |g: &Game| matches!(g.result, Some(r) if r.outcome == Outcome::Win(us));
        for &m in self.position.legal_moves().iter() {
            // Cheap filter on the position alone: only checks (and the flag) can force.
            let mut after = self.position.clone();
            after.play_unchecked(m);
            if !after.in_check_after(m) && !after.flag_reached() {
                continue;
            }
            let mut g = self.clone();
            g.play_unchecked(m);
            if g.is_over() {
                if won(&g) {
                    return Some(m);
                }
                continue;
            }
            let forced = g.position.legal_moves().iter().all(|&reply| {
                let mut h = g.clone();
                h.play_unchecked(reply);
                if h.is_over() {
                    won(&h)
                } else {
                    h.checkmate_search(plies - 2, budget).is_some()
                }
            });
            // A reply left unproven for want of budget made `forced` false: every proof
            // that did complete holds.
            if forced {
                return Some(m);
            }
            if *budget == 0 {
                return None;
            }
        }
        None
    }

    fn compute_result(&self, last: Option<Move>) -> Option<GameResult> {
        let pos = &self.position;
        let v = pos.variant();
        let to_move = pos.side_to_move();
        let mover = !to_move;
        let win = |c, reason| Some(GameResult { outcome: Outcome::Win(c), reason });
        let draw = |reason| Some(GameResult { outcome: Outcome::Draw, reason });
        if last.is_some() && pos.flag_reached() {
            return win(mover, TerminationReason::Flag);
        }
        if !pos.has_legal_move_king_first() {
            let in_check = pos.in_check();
            if let Some(m) = last {
                let dropped = match m.kind() {
                    MoveKind::Drop { kind, .. } | MoveKind::PocketDrop { kind, .. } => Some(kind),
                    _ => None,
                };
                if in_check && dropped.is_some_and(|k| v.kind(k).drop_mate == DropMate::Loses) {
                    return win(to_move, TerminationReason::DropMate);
                }
            }
            return win(mover, if in_check { TerminationReason::Checkmate } else { TerminationReason::NoLegalMoves });
        }
        if v.declaration == Declaration::Csa27 && declaration_allowed(pos) {
            return win(to_move, TerminationReason::Declaration);
        }
        if let Some(r) = self.repetition_result() {
            return Some(r);
        }
        let n = v.no_capture_draw_plies as usize;
        if n > 0 && self.plies.len() >= n && self.plies[self.plies.len() - n..].iter().all(|p| !p.capture) {
            return draw(TerminationReason::NoCapture);
        }
        if self.plies.len() >= self.max_plies as usize {
            return draw(TerminationReason::MaxPlies);
        }
        None
    }

    /// Fourfold repetition. The span judged for perpetual check runs from the first of
    /// the four occurrences to now: a side that gave check with every one of its moves
    /// in it loses.
    fn repetition_result(&self) -> Option<GameResult> {
        let key = self.position.key();
        // Keys of positions 0..=n (position i is after ply i; 0 is the start).
        let n = self.plies.len();
        let key_at = |i: usize| if i == 0 { self.start.key() } else { self.plies[i - 1].key };
        // The fourth occurrence from the end, found without a list: this runs every move.
        let mut seen = 0;
        let first = (0..=n).rev().find(|&i| {
            seen += usize::from(key_at(i) == key);
            seen == 4
        })?;
        let mover = !self.position.side_to_move();
        // Plies first+1..=n; ply i was made by the side to move in position i-1.
        let mut all_checks = [true, true];
        for i in first + 1..=n {
            let side = if (n - i).is_multiple_of(2) { mover } else { !mover };
            if !self.plies[i - 1].gave_check {
                all_checks[side.index()] = false;
            }
        }
        let loser = if all_checks[mover.index()] {
            Some(mover)
        } else if all_checks[(!mover).index()] {
            Some(!mover)
        } else {
            None
        };
        Some(match loser {
            Some(l) => GameResult { outcome: Outcome::Win(!l), reason: TerminationReason::PerpetualCheck },
            None => GameResult { outcome: Outcome::Draw, reason: TerminationReason::Repetition },
        })
    }
}

/// CSA 27-point declaration for the side to move: king in the opponent's camp (its own
/// promotion zone), not in check, at least ten other own pieces there, and points
/// (rook and bishop forms 5, other pieces 1, counting pieces in the camp and in hand) of
/// at least 28 for Black or 27 for White.
pub fn declaration_allowed(pos: &Position) -> bool {
    let v = pos.variant();
    let us = pos.side_to_move();
    let Some(k) = pos.king_square(us) else { return false };
    let camp = v.promotion_zone[us.index()];
    if !camp.has(k) || pos.in_check() {
        return false;
    }
    let ours = pos.pieces(us) & camp & !crate::Bitboard::from_square(k);
    if ours.count() < 10 {
        return false;
    }
    let mut points: u32 = ours.map(|sq| v.kind(pos.piece_at(sq).unwrap().kind).declaration_points as u32).sum();
    for &hk in &v.hand_kinds {
        points += pos.hand_count(us, hk) as u32 * v.kind(hk).declaration_points as u32;
    }
    points >= if us == Color::Black { 28 } else { 27 }
}

/// Where a match of consecutive hands stands.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum MatchState {
    /// Play on; the first player of the match has `first_player` as their colour next hand.
    Next { first_player: Color },
    /// Player 0 (the one who was Black in the first hand) or player 1 won.
    Won { player: usize },
    /// The hand limit was reached without a winner.
    Drawn,
}

/// Hand shogi's match: won by the first player to win `needed` hands in a row; colours
/// alternate every hand; a drawn hand breaks a streak; drawn after `max_hands` hands.
#[derive(Clone, Debug)]
pub struct HandMatch {
    needed: u32,
    max_hands: u32,
    /// Winner of each hand by player index (None = drawn hand).
    hands: Vec<Option<usize>>,
}

impl HandMatch {
    pub fn new(needed: u32, max_hands: u32) -> HandMatch {
        HandMatch { needed: needed.max(1), max_hands, hands: Vec::new() }
    }

    /// Colour of player 0 in hand `i` (0-based): Black in even hands.
    pub fn color_of_player0(hand: usize) -> Color {
        if hand.is_multiple_of(2) {
            Color::Black
        } else {
            Color::White
        }
    }

    /// Records the result of the next hand.
    pub fn record(&mut self, outcome: Outcome) {
        let hand = self.hands.len();
        let p0 = Self::color_of_player0(hand);
        self.hands.push(match outcome {
            Outcome::Win(c) => Some(if c == p0 { 0 } else { 1 }),
            Outcome::Draw => None,
        });
    }

    pub fn state(&self) -> MatchState {
        if let Some(&Some(last)) = self.hands.last() {
            let streak = self.hands.iter().rev().take_while(|h| **h == Some(last)).count();
            if streak as u32 >= self.needed {
                return MatchState::Won { player: last };
            }
        }
        if self.hands.len() as u32 >= self.max_hands {
            return MatchState::Drawn;
        }
        MatchState::Next { first_player: Self::color_of_player0(self.hands.len()) }
    }

    pub fn hands_played(&self) -> usize {
        self.hands.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    #[test]
    fn a_game_continues_only_its_own_earlier_moves_from_the_same_start() {
        let v = Variant::builtin("shogi").unwrap();
        let start = Game::new(Position::start(v), None);
        let mut one = start.clone();
        one.play_usi("7g7f").unwrap();
        let mut two = one.clone();
        two.play_usi("3c3d").unwrap();
        let mut other = start.clone();
        other.play_usi("2g2f").unwrap();
        other.play_usi("3c3d").unwrap();
        assert!(one.continues(&start) && two.continues(&start) && two.continues(&one));
        assert!(!one.continues(&one), "the same position is not played on");
        assert!(!start.continues(&one) && !other.continues(&one));
        let elsewhere = Game::new(Position::from_sfen(v, "4k4/9/9/9/9/9/9/9/4K4 b - 1").unwrap(), None);
        let mut moved = elsewhere.clone();
        moved.play_usi("5i5h").unwrap();
        assert!(moved.continues(&elsewhere) && !moved.continues(&start), "another start is another game");
    }
}
