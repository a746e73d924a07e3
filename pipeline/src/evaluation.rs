//! The loop's evaluation matches, played by the arena: the new model against the
//! previous generation, the uniform-prior search at the same budget and a fixed anchor
//! (so that Elo is on one scale across generations and runs), every opening twice with
//! colours swapped. Each match is an arena tournament in `eval/gen-N/<opponent>/`, so an
//! interrupted evaluation resumes game by game.

use arena::report::PairingStats;
use arena::stats::{self, Trinomial};
use arena::tournament::{Mode, OpeningsConfig, TournamentConfig};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Score of player A against player B.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct MatchResult {
    /// The opponent's name in the arena.
    #[serde(default)]
    pub opponent: String,
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// A's wins as Black and as White, for the colour balance.
    pub wins_as_black: u32,
    pub wins_as_white: u32,
    /// Games by how they ended (`checkmate`, `max-plies`, `resignation`, …).
    #[serde(default)]
    pub endings: std::collections::BTreeMap<String, u64>,
}

impl MatchResult {
    pub fn score(&self) -> f64 {
        if self.games == 0 {
            return 0.5;
        }
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games as f64
    }

    fn trinomial(&self) -> Trinomial {
        Trinomial::new(self.wins as u64, self.draws as u64, self.losses as u64)
    }

    /// 95% interval of the score: the arena's normal approximation over per-game scores
    /// (one formula for the loop and the arena), clipped to [0, 1]; [0, 1] without games.
    pub fn interval(&self) -> (f64, f64) {
        if self.games == 0 {
            return (0.0, 1.0);
        }
        let (lo, hi) = self.trinomial().score_interval(stats::z_for_confidence(0.95));
        (lo.max(0.0), hi.min(1.0))
    }

    /// Elo difference implied by the score (the arena's `elo_from_score`, finite at 0 and 1).
    pub fn elo(&self) -> f64 {
        stats::elo_from_score(self.score())
    }

    pub fn line(&self) -> String {
        let (lo, hi) = self.interval();
        format!("{:.3} [{:.3}, {:.3}] (+{} ={} -{}, {:+.0} Elo)", self.score(), lo, hi, self.wins, self.draws, self.losses, self.elo())
    }
}

impl MatchResult {
    /// From the arena's statistics of a pairing (the new model is its first player).
    pub fn from_pairing(p: &PairingStats) -> MatchResult {
        MatchResult {
            opponent: p.b.clone(),
            games: p.games as u32,
            wins: p.wins as u32,
            draws: p.draws as u32,
            losses: p.losses as u32,
            wins_as_black: p.as_black[0] as u32,
            wins_as_white: p.as_white[0] as u32,
            endings: Default::default(),
        }
    }
}

/// What one evaluation match needs.
pub struct MatchSpec<'a> {
    pub variant: &'a str,
    pub options: &'a std::collections::BTreeMap<String, String>,
    pub new: String,
    pub opponent: String,
    pub pairs: u32,
    pub opening_plies: u32,
    pub max_plies: u32,
    pub threads: usize,
    pub seed: u64,
}

/// Plays (or resumes) one evaluation match in `dir` and returns the new model's result.
pub fn play_match(spec: &MatchSpec, dir: &Path, show_progress: bool) -> anyhow::Result<MatchResult> {
    if spec.pairs == 0 {
        return Ok(MatchResult::default());
    }
    let mut t = TournamentConfig::new(vec![spec.new.clone(), spec.opponent.clone()]);
    t.variant = spec.variant.to_string();
    t.options = spec.options.clone();
    t.mode = Mode::Match;
    t.rounds = spec.pairs;
    t.openings = OpeningsConfig { file: None, starts: Vec::new(), random_plies: spec.opening_plies };
    t.threads = spec.threads;
    t.games_in_flight = 16;
    t.max_plies = spec.max_plies;
    t.seed = spec.seed;
    t.out_dir = dir.to_path_buf();
    let report = arena::tournament::run(&t, show_progress)?;
    Ok(MatchResult { endings: report.endings.clone(), ..MatchResult::from_pairing(&report.pairings[0]) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_interval_and_elo_by_hand() {
        // +9 =5 -2 over 16 games: score (9 + 2.5) / 16 = 0.71875. Per-game variance
        // (9·0.28125² + 5·0.21875² + 2·0.71875²) / 16 = (0.711914 + 0.239258 + 1.033203) / 16
        // = 0.124023; half-width 1.959964·sqrt(0.124023 / 16) = 0.172559.
        let r = MatchResult { games: 16, wins: 9, draws: 5, losses: 2, ..Default::default() };
        assert!((r.score() - 0.71875).abs() < 1e-12);
        let (lo, hi) = r.interval();
        assert!((lo - (0.71875 - 0.172559)).abs() < 1e-5 && (hi - (0.71875 + 0.172559)).abs() < 1e-5, "{lo} {hi}");
        // Elo = -400 log10(1/0.71875 - 1) = -400 log10(0.391304) = 162.994.
        assert!((r.elo() - 162.994).abs() < 0.001, "{}", r.elo());
        // All lost: the interval collapses at 0, the Elo stays finite.
        let l = MatchResult { games: 16, losses: 16, ..Default::default() };
        assert_eq!(l.interval(), (0.0, 0.0));
        assert!(l.elo().is_finite() && l.elo() < -1000.0);
        assert_eq!(MatchResult::default().interval(), (0.0, 1.0));
    }
}
