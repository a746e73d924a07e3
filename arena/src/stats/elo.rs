//! Elo: the logistic model; intervals and LOS from game and game-pair counts.
//!
//! # Elo
//!
//! The logistic Elo model: a player `Δ` Elo stronger than its opponent expects the score
//! (wins plus half the draws, per game)
//!
//! ```text
//! s(Δ) = 1 / (1 + 10^(−Δ/400))          Δ(s) = −400 · log10(1/s − 1)
//! ```
//!
//! ([`score_from_elo`], [`elo_from_score`]). A score of 0 or 1 has no finite Elo;
//! [`elo_from_score`] clamps the score to `[1e-6, 1 − 1e-6]`, so the Elo is always finite,
//! at most about ±2400 (infinities would not survive JSON).
//!
//! # Game results: trinomial (W/D/L)
//!
//! With `n = W + D + L` games, the score is `ŝ = (W + D/2)/n` and the per-game variance is
//! the population variance of the per-game scores 1, ½, 0:
//! `σ² = (W(1 − ŝ)² + D(½ − ŝ)² + L ŝ²)/n`. The confidence interval of the score is the
//! normal approximation `ŝ ± z·σ/√n`, and the Elo interval is its two ends mapped through
//! `Δ(s)` — cutechess-cli's `Elo::errorMargin` (which prints half the width as "±").
//! The likelihood of superiority is cutechess-cli's
//! `LOS = ½ · (1 + erf((W − L)/√(2(W + L))))` (draws carry no information on who is better).
//!
//! # Game pairs: pentanomial
//!
//! Engine matches play every opening twice with the colours swapped; the two games are
//! correlated (a lopsided opening favours whoever has the good side), so fishtest and
//! fastchess count *pairs* by their total: LL, LD+DL, LW+DD+WL, DW+WD, WW, scoring 0, ¼, ½,
//! ¾, 1 per pair. The score is the mean of those per-pair scores, its variance is their
//! population variance `σ²_pair`, and the interval is `ŝ ± z·σ_pair/√pairs`. Pairing removes
//! the opening's variance, so this interval is the honest one for paired matches; it is
//! usually narrower than the trinomial one computed from the same games.

use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};

use super::special::{erf, normal_quantile};
use super::StatsError;

/// Elo per natural unit of log-odds: a rating difference `Δ` Elo is `Δ / ELO_PER_NAT` in
/// the logistic model's natural units.
pub const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// [`elo_from_score`] clamps scores to `[SCORE_CLAMP, 1 − SCORE_CLAMP]` (about ±2400 Elo).
pub const SCORE_CLAMP: f64 = 1e-6;

/// The Elo difference that makes `score` the expected score: `−400 · log10(1/s − 1)`.
/// The score is clamped to `[1e-6, 1 − 1e-6]` first, so 0 and 1 give about ∓2400 rather
/// than infinities; NaN stays NaN.
pub fn elo_from_score(score: f64) -> f64 {
    let s = score.clamp(SCORE_CLAMP, 1.0 - SCORE_CLAMP);
    -400.0 * (1.0 / s - 1.0).log10()
}

/// The expected score of a player `elo` Elo stronger than its opponent.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The two-sided normal critical value for a confidence level: `z` with
/// `P(|Z| ≤ z) = confidence` (1.959963984540054 for 0.95).
pub fn z_for_confidence(confidence: f64) -> f64 {
    normal_quantile(0.5 + confidence / 2.0)
}

/// The Wilson score interval of a proportion `score` over `n` trials at critical value
/// `z`, within [0, 1]; [0, 1] when `n` is 0. Unlike `score ± z·σ` it does not collapse
/// at 0 or 1 (16 wins in 16 games: [0.806, 1] at 95%). A game score is taken as a
/// proportion of points, so draws make it wider than the trinomial's (conservative).
pub fn wilson_interval(score: f64, n: f64, z: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let z2n = z * z / n;
    let centre = score + z2n / 2.0;
    let half_width = z * (score * (1.0 - score) / n + z2n / (4.0 * n)).sqrt();
    let d = 1.0 + z2n;
    // At a score of 0 (1) the lower (upper) end is exactly 0 (1), whatever the rounding.
    let lo = if score <= 0.0 { 0.0 } else { ((centre - half_width) / d).clamp(0.0, 1.0) };
    let hi = if score >= 1.0 { 1.0 } else { ((centre + half_width) / d).clamp(0.0, 1.0) };
    (lo, hi)
}

/// A game score as half points (0, 1, 2), rejecting anything that is not 0, ½ or 1.
fn half_points(score: f64) -> Result<usize, StatsError> {
    if score == 0.0 {
        Ok(0)
    } else if score == 0.5 {
        Ok(1)
    } else if score == 1.0 {
        Ok(2)
    } else {
        Err(StatsError::NotAGameScore(score))
    }
}

/// Mean and population variance of a distribution given as `(value, weight)` pairs;
/// `None` without any weight.
fn mean_and_variance(outcomes: &[(f64, f64)]) -> Option<(f64, f64)> {
    let total: f64 = outcomes.iter().map(|&(_, w)| w).sum();
    if total <= 0.0 {
        return None;
    }
    let mean = outcomes.iter().map(|&(v, w)| v * w).sum::<f64>() / total;
    let variance = outcomes.iter().map(|&(v, w)| w * (v - mean) * (v - mean)).sum::<f64>() / total;
    Some((mean, variance))
}

/// `mean ± z·√(variance/units)`.
fn normal_interval(mean: f64, variance: f64, units: f64, z: f64) -> (f64, f64) {
    let half_width = z * (variance / units).sqrt();
    (mean - half_width, mean + half_width)
}

fn elo_pair((lo, hi): (f64, f64)) -> (f64, f64) {
    (elo_from_score(lo), elo_from_score(hi))
}

// ---------------------------------------------------------------------------------------
// Trinomial
// ---------------------------------------------------------------------------------------

/// Wins, draws and losses of one player (or engine) against the field.
///
/// Every statistic of an empty tally is NaN (there is nothing to estimate), except
/// [`Trinomial::los`], which is ½.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trinomial {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Trinomial {
    pub fn new(wins: u64, draws: u64, losses: u64) -> Trinomial {
        Trinomial { wins, draws, losses }
    }

    /// Counts one game scored 1, ½ or 0.
    pub fn add_score(&mut self, score: f64) -> Result<(), StatsError> {
        match half_points(score)? {
            0 => self.losses += 1,
            1 => self.draws += 1,
            _ => self.wins += 1,
        }
        Ok(())
    }

    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Points per game: `(W + D/2)/n`.
    pub fn score(&self) -> f64 {
        self.mean_and_variance().map_or(f64::NAN, |(mean, _)| mean)
    }

    pub fn draw_ratio(&self) -> f64 {
        self.draws as f64 / self.games() as f64
    }

    /// Population variance of the per-game scores (1, ½, 0).
    pub fn variance_per_game(&self) -> f64 {
        self.mean_and_variance().map_or(f64::NAN, |(_, variance)| variance)
    }

    /// The score's normal-approximation interval `ŝ ± z·√(σ²/n)`. Not clamped to [0, 1].
    pub fn score_interval(&self, z: f64) -> (f64, f64) {
        match self.mean_and_variance() {
            Some((mean, variance)) => normal_interval(mean, variance, self.games() as f64, z),
            None => (f64::NAN, f64::NAN),
        }
    }

    /// The Elo difference the score corresponds to.
    pub fn elo(&self) -> f64 {
        elo_from_score(self.score())
    }

    /// The Elo interval at `confidence` (e.g. 0.95): the ends of the score interval mapped
    /// through [`elo_from_score`], as cutechess-cli does. Asymmetric around [`Self::elo`].
    pub fn elo_interval(&self, confidence: f64) -> (f64, f64) {
        elo_pair(self.score_interval(z_for_confidence(confidence)))
    }

    /// Half the width of [`Self::elo_interval`]: cutechess-cli's "±" figure.
    pub fn elo_error_margin(&self, confidence: f64) -> f64 {
        let (lo, hi) = self.elo_interval(confidence);
        (hi - lo) / 2.0
    }

    /// Likelihood of superiority, `½·(1 + erf((W − L)/√(2(W + L))))` (cutechess-cli): the
    /// probability that this side is the stronger one, from the decisive games alone.
    /// ½ when there are no decisive games.
    pub fn los(&self) -> f64 {
        let decisive = (self.wins + self.losses) as f64;
        if decisive == 0.0 {
            return 0.5;
        }
        0.5 * (1.0 + erf((self.wins as f64 - self.losses as f64) / (2.0 * decisive).sqrt()))
    }

    fn mean_and_variance(&self) -> Option<(f64, f64)> {
        mean_and_variance(&[(1.0, self.wins as f64), (0.5, self.draws as f64), (0.0, self.losses as f64)])
    }
}

impl Add for Trinomial {
    type Output = Trinomial;
    fn add(self, other: Trinomial) -> Trinomial {
        Trinomial { wins: self.wins + other.wins, draws: self.draws + other.draws, losses: self.losses + other.losses }
    }
}

impl AddAssign for Trinomial {
    fn add_assign(&mut self, other: Trinomial) {
        *self = *self + other;
    }
}

// ---------------------------------------------------------------------------------------
// Pentanomial
// ---------------------------------------------------------------------------------------

/// The score of a pair, as a fraction of its two games, for each pentanomial class.
const PAIR_SCORES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// Game pairs (one opening, both colours) counted by the pair's total for one side:
/// 0, ½, 1, 1½ or 2 points out of 2 (fishtest's order).
///
/// Every statistic of an empty tally is NaN.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pentanomial {
    /// Lost both games.
    pub ll: u64,
    /// A loss and a draw.
    pub ld_dl: u64,
    /// One point out of two: a win and a loss, or two draws.
    pub lw_dd_wl: u64,
    /// A draw and a win.
    pub dw_wd: u64,
    /// Won both games.
    pub ww: u64,
}

impl Pentanomial {
    /// From counts in the order LL, LD+DL, LW+DD+WL, DW+WD, WW (fishtest's `results`).
    pub fn from_counts(counts: [u64; 5]) -> Pentanomial {
        let [ll, ld_dl, lw_dd_wl, dw_wd, ww] = counts;
        Pentanomial { ll, ld_dl, lw_dd_wl, dw_wd, ww }
    }

    /// The counts in the order LL, LD+DL, LW+DD+WL, DW+WD, WW.
    pub fn counts(&self) -> [u64; 5] {
        [self.ll, self.ld_dl, self.lw_dd_wl, self.dw_wd, self.ww]
    }

    /// A tally of the single pair whose games this side scored `game1` and `game2`
    /// (each 0, ½ or 1).
    pub fn from_pair(game1: f64, game2: f64) -> Result<Pentanomial, StatsError> {
        let mut pair = Pentanomial::default();
        pair.add_pair(game1, game2)?;
        Ok(pair)
    }

    /// Counts one pair whose games this side scored `game1` and `game2` (each 0, ½ or 1).
    /// Nothing is counted if either is not a game score.
    pub fn add_pair(&mut self, game1: f64, game2: f64) -> Result<(), StatsError> {
        let class = half_points(game1)? + half_points(game2)?;
        let mut counts = self.counts();
        counts[class] += 1;
        *self = Pentanomial::from_counts(counts);
        Ok(())
    }

    pub fn pairs(&self) -> u64 {
        self.counts().iter().sum()
    }

    pub fn games(&self) -> u64 {
        2 * self.pairs()
    }

    /// Points per game (the mean per-pair score).
    pub fn score(&self) -> f64 {
        self.mean_and_variance().map_or(f64::NAN, |(mean, _)| mean)
    }

    /// Population variance of the per-pair scores (0, ¼, ½, ¾, 1).
    pub fn variance_per_pair(&self) -> f64 {
        self.mean_and_variance().map_or(f64::NAN, |(_, variance)| variance)
    }

    /// The score's normal-approximation interval `ŝ ± z·√(σ²_pair/pairs)`. Not clamped.
    pub fn score_interval(&self, z: f64) -> (f64, f64) {
        match self.mean_and_variance() {
            Some((mean, variance)) => normal_interval(mean, variance, self.pairs() as f64, z),
            None => (f64::NAN, f64::NAN),
        }
    }

    pub fn elo(&self) -> f64 {
        elo_from_score(self.score())
    }

    /// The Elo interval at `confidence`: the ends of the score interval mapped through
    /// [`elo_from_score`].
    pub fn elo_interval(&self, confidence: f64) -> (f64, f64) {
        elo_pair(self.score_interval(z_for_confidence(confidence)))
    }

    /// Half the width of [`Self::elo_interval`].
    pub fn elo_error_margin(&self, confidence: f64) -> f64 {
        let (lo, hi) = self.elo_interval(confidence);
        (hi - lo) / 2.0
    }

    fn mean_and_variance(&self) -> Option<(f64, f64)> {
        let counts = self.counts();
        let outcomes: Vec<(f64, f64)> = PAIR_SCORES.iter().zip(counts).map(|(&value, count)| (value, count as f64)).collect();
        mean_and_variance(&outcomes)
    }
}

impl Add for Pentanomial {
    type Output = Pentanomial;
    fn add(self, other: Pentanomial) -> Pentanomial {
        let (a, b) = (self.counts(), other.counts());
        Pentanomial::from_counts(std::array::from_fn(|i| a[i] + b[i]))
    }
}

impl AddAssign for Pentanomial {
    fn add_assign(&mut self, other: Pentanomial) {
        *self = *self + other;
    }
}
