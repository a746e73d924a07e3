//! Evaluation matches between two players (an evaluator and a search budget), with
//! paired colours: every opening is played twice, each player taking Black once. Games
//! of all pairs are in flight together and each player's leaves go to it in one batch.

use rand::seq::IndexedRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rules::{Color, Game, Outcome, Position};
use search::{EvalRequest, Evaluator, Search, SearchConfig};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

pub struct Player<'a> {
    pub evaluator: &'a (dyn Evaluator<Game> + 'a),
    pub search: SearchConfig,
}

/// Score of player A against player B.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct MatchResult {
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// A's wins as Black and as White, for the colour balance.
    pub wins_as_black: u32,
    pub wins_as_white: u32,
}

impl MatchResult {
    pub fn score(&self) -> f64 {
        if self.games == 0 {
            return 0.5;
        }
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games as f64
    }

    /// 95% confidence interval of the score (normal approximation over per-game scores).
    pub fn interval(&self) -> (f64, f64) {
        let n = self.games as f64;
        if n < 2.0 {
            return (0.0, 1.0);
        }
        let m = self.score();
        let var = (self.wins as f64 * (1.0 - m).powi(2) + self.draws as f64 * (0.5 - m).powi(2) + self.losses as f64 * m.powi(2)) / (n - 1.0);
        let half = 1.96 * (var / n).sqrt();
        ((m - half).max(0.0), (m + half).min(1.0))
    }

    /// Elo difference implied by the score (±inf at 0 or 1, clamped to ±1000).
    pub fn elo(&self) -> f64 {
        let s = self.score().clamp(1e-3, 1.0 - 1e-3);
        (-400.0 * (1.0 / s - 1.0).log10()).clamp(-1000.0, 1000.0)
    }

    pub fn line(&self) -> String {
        let (lo, hi) = self.interval();
        format!("{:.3} [{:.3}, {:.3}] (+{} ={} -{}, {:+.0} Elo)", self.score(), lo, hi, self.wins, self.draws, self.losses, self.elo())
    }
}

struct Slot {
    game: Game,
    a_is_black: bool,
    search: Option<Search<Game>>,
    seed: u64,
}

fn opening(start: &Position, plies: u32, max_plies: u32, seed: u64) -> Game {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    loop {
        let mut g = Game::new(start.clone(), Some(max_plies));
        for _ in 0..plies {
            let moves = g.legal_moves();
            let Some(&m) = moves.choose(&mut rng) else { break };
            g.play_unchecked(m);
        }
        if !g.is_over() {
            return g;
        }
    }
}

/// Plays `pairs` pairs of games between `a` and `b` on `threads` threads.
#[allow(clippy::too_many_arguments)]
pub fn play_match(
    start: &Position,
    a: &Player,
    b: &Player,
    pairs: u32,
    opening_plies: u32,
    max_plies: u32,
    seed: u64,
    threads: usize,
    on_game: &(dyn Fn(&MatchResult) + Sync),
) -> MatchResult {
    let next = AtomicUsize::new(0);
    let result = Mutex::new(MatchResult::default());
    let games = (pairs * 2) as usize;
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                let claim = || {
                    let i = next.fetch_add(1, Relaxed);
                    (i < games).then(|| {
                        let pair = (i / 2) as u64;
                        let g = opening(start, opening_plies, max_plies, seed ^ pair.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                        Slot { game: g, a_is_black: i % 2 == 0, search: None, seed: seed ^ i as u64 }
                    })
                };
                let mut slots: Vec<Slot> = Vec::new();
                let per_thread = 32;
                while slots.len() < per_thread {
                    match claim() {
                        Some(s) => slots.push(s),
                        None => break,
                    }
                }
                while !slots.is_empty() {
                    // Start a search for each game's side to move.
                    for s in slots.iter_mut() {
                        if s.search.is_none() {
                            let a_to_move = (s.game.position().side_to_move() == Color::Black) == s.a_is_black;
                            let cfg = if a_to_move { a.search.clone() } else { b.search.clone() };
                            s.seed = s.seed.wrapping_add(1);
                            s.search = Some(Search::with_seed(s.game.clone(), cfg, s.seed));
                        }
                    }
                    for a_turn in [true, false] {
                        let player = if a_turn { a } else { b };
                        let mut batch: Vec<EvalRequest<Game>> = Vec::new();
                        let mut owners = Vec::new();
                        for (i, s) in slots.iter_mut().enumerate() {
                            let a_to_move = (s.game.position().side_to_move() == Color::Black) == s.a_is_black;
                            if a_to_move == a_turn {
                                if let Some(req) = s.search.as_mut().unwrap().next_leaf() {
                                    batch.push(req);
                                    owners.push(i);
                                }
                            }
                        }
                        if !batch.is_empty() {
                            for (i, e) in owners.into_iter().zip(player.evaluator.evaluate(&batch)) {
                                slots[i].search.as_mut().unwrap().apply(e);
                            }
                        }
                    }
                    let mut i = 0;
                    while i < slots.len() {
                        // A game claimed during this sweep has no search yet.
                        let done = slots[i].search.as_ref().is_some_and(|s| s.is_done());
                        if done {
                            let r = slots[i].search.take().unwrap().result();
                            match r.chosen {
                                Some(m) => slots[i].game.play_unchecked(m),
                                None => debug_assert!(slots[i].game.is_over()),
                            }
                            if let Some(res) = slots[i].game.result() {
                                let s = slots.swap_remove(i);
                                let a_color = if s.a_is_black { Color::Black } else { Color::White };
                                let mut r = result.lock().unwrap();
                                r.games += 1;
                                match res.outcome {
                                    Outcome::Draw => r.draws += 1,
                                    Outcome::Win(c) if c == a_color => {
                                        r.wins += 1;
                                        if c == Color::Black { r.wins_as_black += 1 } else { r.wins_as_white += 1 }
                                    }
                                    Outcome::Win(_) => r.losses += 1,
                                }
                                on_game(&r);
                                drop(r);
                                if let Some(n) = claim() {
                                    slots.push(n);
                                }
                                continue;
                            }
                        }
                        i += 1;
                    }
                }
            });
        }
    });
    result.into_inner().unwrap()
}
