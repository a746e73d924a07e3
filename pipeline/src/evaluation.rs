//! The loop's evaluation matches, played by the arena: the new model against the
//! previous generation, the uniform-prior search at the same budget and a fixed anchor
//! (so that Elo is on one scale across generations and runs), every opening twice with
//! colours swapped. Each match is an arena tournament in `eval/gen-N/<opponent>/`, so an
//! interrupted evaluation resumes game by game.

use arena::report::PairingStats;
use arena::stats;
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

    /// 95% Wilson interval of the score; [0, 1] without games. The normal approximation
    /// collapses to a point at a score of 0 or 1, which a short match often has.
    pub fn interval(&self) -> (f64, f64) {
        stats::wilson_interval(self.score(), self.games as f64, stats::z_for_confidence(0.95))
    }

    /// Elo difference implied by the score (the arena's `elo_from_score`, finite at 0 and 1).
    pub fn elo(&self) -> f64 {
        stats::elo_from_score(self.score())
    }

    pub fn line(&self) -> String {
        let (lo, hi) = self.interval();
        // A score of 1 (or 0) has no finite Elo: show the bound the interval gives.
        let elo = if self.games > 0 && self.wins == self.games {
            format!("> {:+.0} Elo", stats::elo_from_score(lo))
        } else if self.games > 0 && self.losses == self.games {
            format!("< {:+.0} Elo", stats::elo_from_score(hi))
        } else {
            format!("{:+.0} Elo", self.elo())
        };
        format!("{:.3} [{:.3}, {:.3}] (+{} ={} -{}, {elo})", self.score(), lo, hi, self.wins, self.draws, self.losses)
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
        // +9 =5 -2 over 16 games: score (9 + 2.5) / 16 = 0.71875. Wilson at z = 1.959964
        // (z² = 3.841459): z²/n = 0.240091, z²/2n = 0.120046, z²/4n² = 0.003751;
        // p(1-p)/n = 0.71875·0.28125/16 = 0.012634; half-width z·sqrt(0.012634 + 0.003751)
        // = 0.250889; ends (0.71875 + 0.120046 ∓ 0.250889) / 1.240091 = 0.474084, 0.878713.
        let r = MatchResult { games: 16, wins: 9, draws: 5, losses: 2, ..Default::default() };
        assert!((r.score() - 0.71875).abs() < 1e-12);
        let (lo, hi) = r.interval();
        assert!((lo - 0.474084).abs() < 1e-5 && (hi - 0.878713).abs() < 1e-5, "{lo} {hi}");
        // Elo = -400 log10(1/0.71875 - 1) = -400 log10(0.391304) = 162.994.
        assert!((r.elo() - 162.994).abs() < 0.001, "{}", r.elo());
        assert_eq!(r.line(), "0.719 [0.474, 0.879] (+9 =5 -2, +163 Elo)");
        assert_eq!(MatchResult::default().interval(), (0.0, 1.0));
    }

    /// A clean sweep is not "[1.000, 1.000] (+2400 Elo)": the Wilson interval
    /// stays open below 1, and the Elo is shown as the bound its lower end gives.
    #[test]
    fn a_clean_sweep_shows_an_interval_and_an_elo_bound() {
        // 16 of 16: the Wilson lower end is (1 + z²/2n − z·sqrt(z²/4n²)) / (1 + z²/n)
        // = 1 / (1 + 3.841459/16) = 1 / 1.240091 = 0.806392; its Elo is
        // -400 log10(1/0.806392 − 1) = -400 log10(0.240091) = 247.85.
        let w = MatchResult { games: 16, wins: 16, ..Default::default() };
        let (lo, hi) = w.interval();
        assert!((lo - 0.806392).abs() < 1e-5 && hi == 1.0, "{lo} {hi}");
        assert_eq!(w.line(), "1.000 [0.806, 1.000] (+16 =0 -0, > +248 Elo)");
        // All lost: the mirror image.
        let l = MatchResult { games: 16, losses: 16, ..Default::default() };
        let (lo, hi) = l.interval();
        assert!(lo == 0.0 && (hi - 0.193608).abs() < 1e-5, "{lo} {hi}");
        assert_eq!(l.line(), "0.000 [0.000, 0.194] (+0 =0 -16, < -248 Elo)");
    }
}
