//! The loop's evaluation matches, played by the arena: the new model against the
//! previous generation, the uniform-prior search at the same budget and a fixed anchor
//! (so that Elo is on one scale across generations and runs), every opening twice with
//! colours swapped. Each match is an arena tournament in `eval/gen-N/<opponent>/`, so an
//! interrupted evaluation resumes game by game.

use arena::report::PairingStats;
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
    Ok(MatchResult::from_pairing(&report.pairings[0]))
}
