//! Counters shared by the workers, read by the progress display.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

#[derive(Debug)]
pub struct Stats {
    start: Instant,
    pub games: AtomicU64,
    pub positions: AtomicU64,
    pub simulations: AtomicU64,
    pub evaluations: AtomicU64,
    pub batches: AtomicU64,
    /// Nanoseconds spent inside the evaluator (the network).
    pub eval_nanos: AtomicU64,
    pub plies: AtomicU64,
    pub black_wins: AtomicU64,
    pub white_wins: AtomicU64,
    pub draws: AtomicU64,
    pub resignations: AtomicU64,
    /// Games with resignation disabled where a side would have resigned.
    pub would_resign: AtomicU64,
    /// ... and that side did not lose.
    pub false_resign: AtomicU64,
}

/// A consistent-enough reading of the counters.
#[derive(Clone, Debug, Default)]
pub struct StatsSnapshot {
    pub seconds: f64,
    pub games: u64,
    pub positions: u64,
    pub simulations: u64,
    pub evaluations: u64,
    pub batches: u64,
    pub eval_seconds: f64,
    pub average_plies: f64,
    pub black_wins: u64,
    pub white_wins: u64,
    pub draws: u64,
    pub resignations: u64,
    pub would_resign: u64,
    pub false_resign: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            start: Instant::now(),
            games: 0.into(),
            positions: 0.into(),
            simulations: 0.into(),
            evaluations: 0.into(),
            batches: 0.into(),
            eval_nanos: 0.into(),
            plies: 0.into(),
            black_wins: 0.into(),
            white_wins: 0.into(),
            draws: 0.into(),
            resignations: 0.into(),
            would_resign: 0.into(),
            false_resign: 0.into(),
        }
    }
}

impl Stats {
    pub fn snapshot(&self) -> StatsSnapshot {
        let games = self.games.load(Relaxed);
        StatsSnapshot {
            seconds: self.start.elapsed().as_secs_f64(),
            games,
            positions: self.positions.load(Relaxed),
            simulations: self.simulations.load(Relaxed),
            evaluations: self.evaluations.load(Relaxed),
            batches: self.batches.load(Relaxed),
            eval_seconds: self.eval_nanos.load(Relaxed) as f64 * 1e-9,
            average_plies: if games > 0 { self.plies.load(Relaxed) as f64 / games as f64 } else { 0.0 },
            black_wins: self.black_wins.load(Relaxed),
            white_wins: self.white_wins.load(Relaxed),
            draws: self.draws.load(Relaxed),
            resignations: self.resignations.load(Relaxed),
            would_resign: self.would_resign.load(Relaxed),
            false_resign: self.false_resign.load(Relaxed),
        }
    }
}

impl StatsSnapshot {
    /// One line for the progress bar and the logs.
    pub fn line(&self) -> String {
        let s = self.seconds.max(1e-9);
        format!(
            "{} games, {:.0} pos/s, {:.0} sims/s, avg {:.0} plies, B/W/D {}/{}/{}, batch {:.0}",
            self.games,
            self.positions as f64 / s,
            self.simulations as f64 / s,
            self.average_plies,
            self.black_wins,
            self.white_wins,
            self.draws,
            if self.batches > 0 { self.evaluations as f64 / self.batches as f64 } else { 0.0 },
        )
    }
}
