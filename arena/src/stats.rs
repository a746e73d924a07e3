//! Match and tournament statistics, as chess and shogi engine testers know them from
//! cutechess-cli, fastchess, fishtest, Ordo and BayesElo. Everything here is a pure
//! function of counts, or a small serde-serialisable struct.
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
//!
//! # GSPRT (fishtest)
//!
//! The sequential test of fishtest (`server/fishtest/stats/LLRcalc.py`, `LLR_logistic`):
//! H0: Elo = elo0 against H1: Elo = elo1, where elo0 and elo1 are **logistic** Elo (as
//! above), not fishtest's "normalized Elo". A unit is a game for trinomial counts (classes
//! valued 0, ½, 1) and a pair for pentanomial counts (0, ¼, ½, ¾, 1). With counts `nᵢ` of
//! classes valued `xᵢ`, `N = Σ nᵢ` and the empirical distribution `p̂ᵢ = nᵢ/N`, the
//! generalised log-likelihood ratio compares the most likely distribution under each
//! hypothesis:
//!
//! ```text
//! LLR = Σᵢ nᵢ · ln(p1ᵢ / p0ᵢ),   p_s = argmax { Σ nᵢ ln pᵢ : Σ pᵢ = 1, Σ pᵢ xᵢ = s },
//! s0 = s(elo0), s1 = s(elo1)
//! ```
//!
//! The maximiser (M. Van den Bergh, <https://www.cantate.be/Fishtest/support_MLE_multinomial.pdf>,
//! Proposition 1.1; fishtest's `MLE_expected`) is `pᵢ = p̂ᵢ / (1 + λ(xᵢ − s))`, with the
//! Lagrange multiplier `λ` the root of the secular equation
//! `f(λ) = Σ p̂ᵢ (xᵢ − s)/(1 + λ(xᵢ − s)) = 0` in `[−1/(1 − s), 1/s]` (where
//! `1 + λ(x − s) ≥ 0` for every class, observed or not). `f` decreases, so safeguarded
//! Newton steps (bisection whenever a step leaves the bracket) find the one root. Where the
//! observed classes all lie on one side of `s` there is no root: `λ` stops at the bound,
//! and the mass the observed classes leave goes to the extreme class on the other side, which
//! has no games. A single won pair thus gives `LLR = ln(s1/s0)`: 0.0284 for elo0 = 0,
//! elo1 = 10. Empty classes contribute nothing; no games give LLR 0. fishtest first replaces
//! empty counts by 0.001 (`regularize`); we keep the counts as played, which moves the LLR
//! little (0.02842 against 0.02837 for that pair) and keeps it a function of the games.
//!
//! The test stops at the Wald bounds `ln(β/(1 − α))` (accept H0) and `ln((1 − β)/α)`
//! (accept H1), ±2.944 for α = β = 0.05, checked after every complete unit. (fishtest also
//! moves its bounds by an estimate of the overshoot; we don't.) Simulated with α = β = 0.05,
//! elo0 = 0 and elo1 = 5, 10, 20 (`arena/tests/stats.rs`, 1000 tests each), H1 is accepted
//! in 4.0–4.8% of the tests at a true Elo of elo0 and in 93.6–96.1% at elo1. The
//! large-sample approximation `N·(s1 − s0)·(2ŝ − s0 − s1)/(2σ̂²)` (fishtest's `LLR_alt2`)
//! is not used: early in a match, with placeholder counts for the empty classes, it gave a
//! single won pair LLR 3.81 at elo0 = 0, elo1 = 10 and stopped the test after two games.
//!
//! # Rating lists: Bradley–Terry maximum likelihood (Ordo, BayesElo)
//!
//! Every player `k` has a rating `r_k`, and `P(i beats j) = 1/(1 + 10^((r_j − r_i)/400))`;
//! a draw counts as half a win for each side. Writing `θ = r · ln 10 / 400` (natural
//! units), the log-likelihood of scores `s_ij` (points of `i` against `j` in `n_ij` games) is
//! `ℓ = Σ_{i<j} s_ij ln σ(θ_i − θ_j) + s_ji ln σ(θ_j − θ_i)`, with gradient
//! `∂ℓ/∂θ_i = S_i − E_i` (actual minus expected points) — so at the maximum every player's
//! expected points equal its actual points — and information matrix
//! `I = −∇²ℓ = Σ n_ij p_ij (1 − p_ij) (e_i − e_j)(e_i − e_j)ᵀ`. One player, the anchor, is
//! fixed at the requested rating, which removes its row and column and makes `I` invertible
//! for the players connected to it. [`fit_ratings`] maximises `ℓ` by Newton's method with
//! step halving (`ℓ` is concave, so this converges from zero), and reports
//! `r_k ± z · √((I⁻¹)_kk) · 400/ln 10` — the usual Wald interval, relative to the anchor (the
//! anchor's own interval has zero width).
//!
//! The maximum exists only when the players cannot be split into two groups one of which
//! never scored against the other (Zermelo, Ford 1957); otherwise a player with all wins
//! would have an infinite rating. Where that happens, the fit adds one virtual draw
//! ([`VIRTUAL_DRAWS_PER_PAIRING`]) to each pairing that crosses such a split — pairings
//! between different strongly connected components of the "scored at least half a point
//! against" graph — and nowhere else, so tables where the maximum exists are fitted exactly.
//! (BayesElo's default prior, expressed as virtual draws, is the same idea applied to the
//! whole table.) [`RatingList::virtual_draws`] says how many were added; a perfect score of
//! `n` wins between two players then reads as `400·log10(2n + 1)` Elo.
//!
//! Players with no chain of games to the anchor have no rating relative to it: their `elo`,
//! `lo`, `hi` are NaN (never a panic; JSON writes NaN as `null`, and [`Rating`] reads `null`
//! back as NaN). The same holds if the information matrix is singular to working precision
//! (a table so lopsided that `p(1 − p)` underflows): the intervals are NaN.
//!
//! [`fit_ratings_with_colour`] fits the same model per game with one more shared parameter,
//! the first-move advantage `η` (Black moves first in shogi):
//! `P(Black wins) = σ(θ_black − θ_white + η)`. To keep `η` finite when one colour won every
//! game, it adds one virtual drawn game between two equal players with `η` applying.
//!
//! # Special functions
//!
//! [`erf`]/[`erfc`] are W. J. Cody's rational Chebyshev approximations ("Rational Chebyshev
//! approximations for the error function", Math. Comp. 23 (1969) 631–637; Netlib
//! `specfun/calerf`), accurate to about 1e-16. [`normal_quantile`] is P. J. Acklam's
//! rational approximation (relative error 1.15e-9) followed by one Halley step against
//! [`erfc`], which brings it to full double precision: `normal_quantile(0.975) =
//! 1.959963984540054`.

use std::cmp::Ordering;
use std::collections::{BTreeMap, VecDeque};
use std::ops::{Add, AddAssign};

use rules::{Color, Outcome};
use serde::{Deserialize, Serialize};

/// Elo per natural unit of log-odds: a rating difference `Δ` Elo is `Δ / ELO_PER_NAT` in
/// the logistic model's natural units.
pub const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// [`elo_from_score`] clamps scores to `[SCORE_CLAMP, 1 − SCORE_CLAMP]` (about ±2400 Elo).
pub const SCORE_CLAMP: f64 = 1e-6;

/// The confidence level of the intervals in a [`RatingList`].
pub const RATING_CONFIDENCE: f64 = 0.95;

/// Virtual draws added to a pairing that crosses a split where one side never scored (see
/// the module documentation). One draw turns `n` straight wins into a score of
/// `(n + ½)/(n + 1)`.
pub const VIRTUAL_DRAWS_PER_PAIRING: u64 = 1;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("{0} is not a game score (expected 0, 0.5 or 1)")]
    NotAGameScore(f64),
}

// ---------------------------------------------------------------------------------------
// Elo
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// GSPRT
// ---------------------------------------------------------------------------------------

/// A sequential probability ratio test of H0: Elo = `elo0` against H1: Elo = `elo1`,
/// with false-positive rate `alpha` and false-negative rate `beta`, as fishtest runs it.
/// `elo0` and `elo1` are logistic Elo (the scale of [`elo_from_score`]), not fishtest's
/// normalized Elo.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// What an SPRT concludes from the log-likelihood ratio so far.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SprtDecision {
    /// The LLR reached the lower bound: no better than `elo0`.
    AcceptH0,
    /// The LLR reached the upper bound: at least `elo1`.
    AcceptH1,
    /// Keep playing.
    Continue,
}

impl Sprt {
    pub fn new(elo0: f64, elo1: f64, alpha: f64, beta: f64) -> Sprt {
        Sprt { elo0, elo1, alpha, beta }
    }

    /// Wald's stopping bounds `(ln(β/(1 − α)), ln((1 − β)/α))`: ±2.944 for α = β = 0.05.
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }

    /// The generalised LLR of game results (a unit is one game).
    pub fn llr_trinomial(&self, results: &Trinomial) -> f64 {
        // fishtest's order: the value of class i is i/(k − 1).
        self.llr(&[results.losses as f64, results.draws as f64, results.wins as f64])
    }

    /// The generalised LLR of game pairs (a unit is one pair). This is the one to use for
    /// paired openings: the trinomial LLR over-counts their evidence.
    pub fn llr_pentanomial(&self, results: &Pentanomial) -> f64 {
        self.llr(&results.counts().map(|c| c as f64))
    }

    /// The generalised LLR `Σ nᵢ·ln(p1ᵢ/p0ᵢ)` of counts `nᵢ` of `k ≥ 2` outcome classes
    /// valued 0, 1/(k − 1), …, 1 (fishtest's `results`: L, D, W, or the pentanomial
    /// order), where `p0`, `p1` are the maximum-likelihood distributions with expected
    /// value `s(elo0)`, `s(elo1)` (see the module documentation). Counts may be fractional:
    /// fishtest's `LLR_logistic` is this function of its `regularize`d counts. Empty
    /// classes contribute nothing; no counts (or fewer than two classes) give 0, a negative
    /// or non-finite count NaN. Hypotheses beyond about ±2400 Elo are clamped there, as in
    /// [`elo_from_score`].
    pub fn llr(&self, counts: &[f64]) -> f64 {
        if counts.iter().any(|c| !c.is_finite() || *c < 0.0) || self.elo0.is_nan() || self.elo1.is_nan() {
            return f64::NAN;
        }
        let Some(observed) = observed_classes(counts) else {
            return 0.0;
        };
        let (s0, s1) = (hypothesis_score(self.elo0), hypothesis_score(self.elo1));
        let (l0, l1) = (mle_multiplier(&observed, s0).0, mle_multiplier(&observed, s1).0);
        // ln(p1ᵢ/p0ᵢ) = ln(1 + λ0(xᵢ − s0)) − ln(1 + λ1(xᵢ − s1)): the p̂ᵢ cancel.
        observed.iter().map(|o| o.count * ((l0 * (o.value - s0)).ln_1p() - (l1 * (o.value - s1)).ln_1p())).sum()
    }

    /// Accept H1 at or above the upper bound, H0 at or below the lower bound.
    pub fn decide(&self, llr: f64) -> SprtDecision {
        let (lower, upper) = self.bounds();
        if llr >= upper {
            SprtDecision::AcceptH1
        } else if llr <= lower {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        }
    }
}

/// The distribution over classes valued 0, 1/(k − 1), …, 1 with expected value `score`
/// that maximises the likelihood `Σ nᵢ·ln pᵢ` of `counts` (fishtest's `MLE_expected`, but
/// without its placeholder counts: where the observed classes all lie on one side of
/// `score`, the rest of the mass goes to the extreme class on the other side). `None`
/// without counts, for a negative or non-finite count, or a `score` outside (0, 1).
pub fn max_likelihood_distribution(counts: &[f64], score: f64) -> Option<Vec<f64>> {
    if counts.iter().any(|c| !c.is_finite() || *c < 0.0) || !(score > 0.0 && score < 1.0) {
        return None;
    }
    let observed = observed_classes(counts)?;
    let (lambda, bound) = mle_multiplier(&observed, score);
    let mut p = vec![0.0; counts.len()];
    for o in &observed {
        p[o.index] = o.frequency / (1.0 + lambda * (o.value - score));
    }
    if let Some(value) = bound {
        let rest = (1.0 - p.iter().sum::<f64>()).max(0.0);
        let index = if value > 0.0 { p.len() - 1 } else { 0 };
        p[index] = rest;
    }
    Some(p)
}

/// A class with games: its index, value `i/(k − 1)`, count and frequency `p̂ᵢ`.
struct ObservedClass {
    index: usize,
    value: f64,
    count: f64,
    frequency: f64,
}

/// The classes with a positive count; `None` if there are none (or fewer than two classes,
/// which have no values spread over [0, 1]).
fn observed_classes(counts: &[f64]) -> Option<Vec<ObservedClass>> {
    let total: f64 = counts.iter().sum();
    if counts.len() < 2 || total <= 0.0 {
        return None;
    }
    let last = (counts.len() - 1) as f64;
    Some(
        counts
            .iter()
            .enumerate()
            .filter(|&(_, &count)| count > 0.0)
            .map(|(index, &count)| ObservedClass { index, value: index as f64 / last, count, frequency: count / total })
            .collect(),
    )
}

/// The expected score of a hypothesis, kept inside (0, 1) so that the multiplier's
/// interval `[−1/(1 − s), 1/s]` is finite.
fn hypothesis_score(elo: f64) -> f64 {
    score_from_elo(elo).clamp(SCORE_CLAMP, 1.0 - SCORE_CLAMP)
}

/// Safeguarded Newton steps on the secular equation: enough for any root, since Newton
/// converges quadratically and each bisection halves the bracket.
const MAX_SECULAR_ITERATIONS: usize = 200;

/// The Lagrange multiplier `λ` of the maximum-likelihood distribution with expected value
/// `s` (0 < s < 1), `pᵢ = p̂ᵢ/(1 + λ(xᵢ − s))` on the observed classes: the root of the
/// decreasing secular function `f(λ) = Σ p̂ᵢ(xᵢ − s)/(1 + λ(xᵢ − s))` on
/// `[−1/(1 − s), 1/s]`, or the bound where `f` keeps one sign (see the module
/// documentation). At a bound, also the value (1 at the lower, 0 at the upper) of the class
/// without games that takes the rest of the mass.
fn mle_multiplier(observed: &[ObservedClass], s: f64) -> (f64, Option<f64>) {
    // Every class in [0, 1], observed or not, needs 1 + λ(x − s) ≥ 0.
    let (mut lo, mut hi) = (-1.0 / (1.0 - s), 1.0 / s);
    // f at the bounds, where 1 + λ(x − s) is (1 − x)/(1 − s) and x/s; infinite when the
    // class that sets the bound has games.
    let at_lo: f64 = observed.iter().map(|o| if o.value >= 1.0 { f64::INFINITY } else { o.frequency * (o.value - s) * (1.0 - s) / (1.0 - o.value) }).sum();
    if at_lo <= 0.0 {
        return (lo, Some(1.0));
    }
    let at_hi: f64 = observed.iter().map(|o| if o.value <= 0.0 { f64::NEG_INFINITY } else { o.frequency * (o.value - s) * s / o.value }).sum();
    if at_hi >= 0.0 {
        return (hi, Some(0.0));
    }
    let mut lambda = 0.0;
    for _ in 0..MAX_SECULAR_ITERATIONS {
        let (mut f, mut slope) = (0.0, 0.0);
        for o in observed {
            let a = o.value - s;
            let q = a / (1.0 + lambda * a);
            f += o.frequency * q;
            slope -= o.frequency * q * q;
        }
        if f > 0.0 {
            lo = lambda;
        } else if f < 0.0 {
            hi = lambda;
        } else {
            return (lambda, None);
        }
        let newton = lambda - f / slope;
        let next = if newton > lo && newton < hi { newton } else { 0.5 * (lo + hi) };
        // The LLR is stationary in λ at the root, so this leaves no trace in it.
        if (next - lambda).abs() <= 1e-14 * (1.0 + lambda.abs()) {
            return (next, None);
        }
        lambda = next;
    }
    (lambda, None)
}

// ---------------------------------------------------------------------------------------
// Bradley–Terry rating lists
// ---------------------------------------------------------------------------------------

/// The games between players `i` and `j` (indices into the player list): `i`'s wins, the
/// draws, `j`'s wins. The same two players may appear in several results; they add up.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairResult {
    pub i: usize,
    pub j: usize,
    pub wins_i: u64,
    pub draws: u64,
    pub wins_j: u64,
}

/// One game with its colours, for [`fit_ratings_with_colour`]: indices into the player list.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColouredGame {
    /// The player who moved first.
    pub black: usize,
    pub white: usize,
    pub outcome: Outcome,
}

/// One player's line in a [`RatingList`]. Missing values are NaN (written as `null` in
/// JSON, and read back as NaN).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub name: String,
    /// NaN for a player with no chain of games to the anchor.
    #[serde(deserialize_with = "nan_from_null")]
    pub elo: f64,
    /// The lower end of the [`RATING_CONFIDENCE`] interval (the anchor's is its rating).
    #[serde(deserialize_with = "nan_from_null")]
    pub lo: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub hi: f64,
    /// Standard error of `elo` relative to the anchor, in Elo (0 for the anchor).
    #[serde(deserialize_with = "nan_from_null")]
    pub std_error: f64,
    /// Games actually played (virtual draws are not counted).
    pub games: u64,
    /// Points actually scored: wins plus half the draws.
    pub points: f64,
    /// `points / games`; NaN without games.
    #[serde(deserialize_with = "nan_from_null")]
    pub score: f64,
}

impl Rating {
    /// Whether the player has a rating (is connected to the anchor by games).
    pub fn is_rated(&self) -> bool {
        !self.elo.is_nan()
    }
}

/// The fitted first-move advantage: how many Elo moving first is worth.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FirstMoveAdvantage {
    pub elo: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub lo: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub hi: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub std_error: f64,
}

/// A fitted rating list, best first (players without a rating last, in input order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingList {
    pub entries: Vec<Rating>,
    /// The anchor's name (empty if the anchor index was out of range).
    pub anchor: String,
    pub anchor_elo: f64,
    /// The confidence level of `lo`/`hi`.
    pub confidence: f64,
    /// Virtual draws added between players to keep perfect scores finite (0 when the
    /// maximum-likelihood ratings exist as they are).
    pub virtual_draws: u64,
    /// The pairings that got them (names in player order): their rating differences
    /// rest on the virtual draws, not on a score either side conceded.
    #[serde(default)]
    pub virtual_pairings: Vec<(String, String)>,
    /// Results or games left out because an index was out of range or a player was paired
    /// with itself.
    pub skipped_results: u64,
    /// Whether Newton's method met its tolerance (it always should; `false` flags a
    /// numerically hopeless table, or an anchor out of range).
    pub converged: bool,
    /// Only from [`fit_ratings_with_colour`], when the anchor's group has games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_move_advantage: Option<FirstMoveAdvantage>,
}

impl RatingList {
    pub fn get(&self, name: &str) -> Option<&Rating> {
        self.entries.iter().find(|r| r.name == name)
    }
}

/// serde_json writes NaN as `null`; read it back as NaN rather than failing.
fn nan_from_null<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

/// Fits Bradley–Terry ratings by maximum likelihood (see the module documentation), with
/// `players[anchor]` fixed at `anchor_elo`, and [`RATING_CONFIDENCE`] intervals from the
/// inverse information matrix. Players with no chain of games to the anchor get NaN.
/// Results naming a player out of range, or a player against itself, are skipped and
/// counted in [`RatingList::skipped_results`]; an anchor out of range rates nobody.
pub fn fit_ratings(players: &[String], results: &[PairResult], anchor: usize, anchor_elo: f64) -> RatingList {
    let tallies: Vec<Tally> = results
        .iter()
        .map(|r| Tally { plus: r.i, minus: r.j, coloured: false, games: r.wins_i + r.draws + r.wins_j, half_points: 2 * r.wins_i + r.draws })
        .collect();
    fit(players, &tallies, anchor, anchor_elo, false)
}

/// Like [`fit_ratings`], from individual games, fitting besides the ratings one shared
/// first-move advantage `η` (in Elo): `P(Black wins) = 1/(1 + 10^((r_white − r_black −
/// η)/400))`. One virtual drawn game with `η` applying keeps `η` finite when one colour
/// won everything; its pull is that of one game among all of them.
pub fn fit_ratings_with_colour(players: &[String], games: &[ColouredGame], anchor: usize, anchor_elo: f64) -> RatingList {
    let tallies: Vec<Tally> = games
        .iter()
        .map(|g| Tally {
            plus: g.black,
            minus: g.white,
            coloured: true,
            games: 1,
            half_points: match g.outcome {
                Outcome::Win(Color::Black) => 2,
                Outcome::Draw => 1,
                Outcome::Win(Color::White) => 0,
            },
        })
        .collect();
    fit(players, &tallies, anchor, anchor_elo, true)
}

/// Games between `plus` and `minus` with `plus`'s points, in half points (exact).
#[derive(Copy, Clone, Debug)]
struct Tally {
    plus: usize,
    minus: usize,
    /// Whether `plus` moved first in all of them (the advantage applies).
    coloured: bool,
    games: u64,
    half_points: u64,
}

/// A term of the log-likelihood: `games` games whose logit is
/// `θ[plus] − θ[minus] + θ[advantage]`, scoring `points` for the plus side. `None` stands for
/// a parameter fixed at 0 (the anchor, or no advantage).
#[derive(Copy, Clone, Debug)]
struct Observation {
    plus: Option<usize>,
    minus: Option<usize>,
    advantage: Option<usize>,
    games: f64,
    points: f64,
}

impl Observation {
    /// The nonzero entries of the design vector: `logit = Σ coefficient · θ[index]`.
    fn design(&self) -> impl Iterator<Item = (usize, f64)> {
        [(self.plus, 1.0), (self.minus, -1.0), (self.advantage, 1.0)].into_iter().filter_map(|(index, coefficient)| index.map(|i| (i, coefficient)))
    }

    fn logit(&self, theta: &[f64]) -> f64 {
        self.design().map(|(i, c)| c * theta[i]).sum()
    }
}

const MAX_NEWTON_ITERATIONS: usize = 200;
const MAX_STEP_HALVINGS: usize = 60;
/// Newton stops once no parameter moves more than this (natural units; ~2e-8 Elo).
const NEWTON_STEP_TOLERANCE: f64 = 1e-10;

fn fit(players: &[String], tallies: &[Tally], anchor: usize, anchor_elo: f64, fit_advantage: bool) -> RatingList {
    let n = players.len();
    let valid = |t: &&Tally| t.plus < n && t.minus < n && t.plus != t.minus;
    let skipped_results = tallies.iter().filter(|t| !valid(t)).count() as u64;

    // Actual games and points, and the same per ordered pairing (exact, in half points).
    let mut games = vec![0u64; n];
    let mut half_points = vec![0u64; n];
    let mut pairings: BTreeMap<(usize, usize, bool), (u64, u64)> = BTreeMap::new();
    for t in tallies.iter().filter(valid).filter(|t| t.games > 0) {
        games[t.plus] += t.games;
        games[t.minus] += t.games;
        half_points[t.plus] += t.half_points;
        half_points[t.minus] += 2 * t.games - t.half_points;
        let entry = pairings.entry((t.plus, t.minus, t.coloured)).or_default();
        entry.0 += t.games;
        entry.1 += t.half_points;
    }

    // Who played whom (undirected) and who scored against whom (directed).
    let mut opponents = vec![Vec::new(); n];
    let mut scored_against = vec![Vec::new(); n];
    for (&(plus, minus, _), &(games, half_points)) in &pairings {
        opponents[plus].push(minus);
        opponents[minus].push(plus);
        if half_points > 0 {
            scored_against[plus].push(minus);
        }
        if half_points < 2 * games {
            scored_against[minus].push(plus);
        }
    }
    let rated = if anchor < n { reachable(&opponents, anchor) } else { vec![false; n] };

    // Virtual draws on pairings between different strongly connected components of the
    // "scored against" graph: exactly where the likelihood has no finite maximum.
    let reach: Vec<Vec<bool>> = (0..n).map(|k| if rated[k] { reachable(&scored_against, k) } else { Vec::new() }).collect();
    let mut virtual_pairings: Vec<(usize, usize)> =
        pairings.keys().map(|&(plus, minus, _)| (plus.min(minus), plus.max(minus))).filter(|&(i, j)| rated[i] && !(reach[i][j] && reach[j][i])).collect();
    virtual_pairings.sort_unstable();
    virtual_pairings.dedup();

    // Parameters: the rated players but the anchor, then the advantage.
    let mut parameter = vec![None; n];
    let mut dimension = 0;
    for k in (0..n).filter(|&k| rated[k] && k != anchor) {
        parameter[k] = Some(dimension);
        dimension += 1;
    }
    let coloured_games: u64 = pairings.iter().filter(|(&(plus, _, coloured), _)| coloured && rated[plus]).map(|(_, &(games, _))| games).sum();
    let advantage = if fit_advantage && coloured_games > 0 {
        dimension += 1;
        Some(dimension - 1)
    } else {
        None
    };

    let mut observations: Vec<Observation> = pairings
        .iter()
        .filter(|(&(plus, _, _), _)| rated[plus])
        .map(|(&(plus, minus, coloured), &(games, half_points))| Observation {
            plus: parameter[plus],
            minus: parameter[minus],
            advantage: if coloured { advantage } else { None },
            games: games as f64,
            points: half_points as f64 / 2.0,
        })
        .collect();
    let virtual_draw = VIRTUAL_DRAWS_PER_PAIRING as f64;
    observations.extend(virtual_pairings.iter().map(|&(i, j)| Observation {
        plus: parameter[i],
        minus: parameter[j],
        advantage: None,
        games: virtual_draw,
        points: virtual_draw / 2.0,
    }));
    if advantage.is_some() {
        observations.push(Observation { plus: None, minus: None, advantage, games: 1.0, points: 0.5 });
    }

    let fitted = maximise_likelihood(&observations, dimension);
    let z = z_for_confidence(RATING_CONFIDENCE);
    let std_error = |index: usize| {
        let variance = fitted.covariance.as_ref().map_or(f64::NAN, |c| c[index * dimension + index]);
        if variance >= 0.0 {
            variance.sqrt() * ELO_PER_NAT
        } else {
            f64::NAN
        }
    };

    let mut entries: Vec<Rating> = (0..n)
        .map(|k| {
            let (elo, se) = if k == anchor {
                (anchor_elo, 0.0)
            } else {
                match parameter[k] {
                    Some(index) => (anchor_elo + fitted.theta[index] * ELO_PER_NAT, std_error(index)),
                    None => (f64::NAN, f64::NAN),
                }
            };
            let points = half_points[k] as f64 / 2.0;
            Rating {
                name: players[k].clone(),
                elo,
                lo: elo - z * se,
                hi: elo + z * se,
                std_error: se,
                games: games[k],
                points,
                score: points / games[k] as f64,
            }
        })
        .collect();
    // Best first; the unrated (NaN) keep their order at the end.
    entries.sort_by(|x, y| match (x.is_rated(), y.is_rated()) {
        (true, true) => y.elo.total_cmp(&x.elo),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => Ordering::Equal,
    });

    let first_move_advantage = advantage.map(|index| {
        let elo = fitted.theta[index] * ELO_PER_NAT;
        let se = std_error(index);
        FirstMoveAdvantage { elo, lo: elo - z * se, hi: elo + z * se, std_error: se }
    });

    RatingList {
        entries,
        anchor: players.get(anchor).cloned().unwrap_or_default(),
        anchor_elo,
        confidence: RATING_CONFIDENCE,
        virtual_draws: virtual_pairings.len() as u64 * VIRTUAL_DRAWS_PER_PAIRING,
        virtual_pairings: virtual_pairings.iter().map(|&(i, j)| (players[i].clone(), players[j].clone())).collect(),
        skipped_results,
        converged: anchor < n && fitted.converged,
        first_move_advantage,
    }
}

/// Which nodes a breadth-first search from `start` reaches along `edges`.
fn reachable(edges: &[Vec<usize>], start: usize) -> Vec<bool> {
    let mut seen = vec![false; edges.len()];
    let mut queue = VecDeque::from([start]);
    seen[start] = true;
    while let Some(node) = queue.pop_front() {
        for &next in &edges[node] {
            if !seen[next] {
                seen[next] = true;
                queue.push_back(next);
            }
        }
    }
    seen
}

/// The maximum-likelihood parameters (natural units) and their covariance, the inverse
/// information matrix (row-major, `None` if singular).
struct LikelihoodFit {
    theta: Vec<f64>,
    covariance: Option<Vec<f64>>,
    converged: bool,
}

/// Newton's method with step halving on the concave log-likelihood, from θ = 0.
fn maximise_likelihood(observations: &[Observation], dimension: usize) -> LikelihoodFit {
    let mut theta = vec![0.0; dimension];
    let mut likelihood = log_likelihood(observations, &theta);
    let mut converged = dimension == 0;
    for _ in 0..MAX_NEWTON_ITERATIONS {
        if converged {
            break;
        }
        let (gradient, information) = gradient_and_information(observations, &theta);
        let Some(inverse) = invert(&information, dimension) else {
            break;
        };
        let step: Vec<f64> = (0..dimension).map(|r| (0..dimension).map(|c| inverse[r * dimension + c] * gradient[c]).sum()).collect();
        let largest = step.iter().fold(0.0f64, |m, s| m.max(s.abs()));
        if !largest.is_finite() {
            break;
        }
        // Halve the step until the likelihood does not drop (beyond rounding).
        let mut scale = 1.0;
        let mut moved = false;
        for _ in 0..MAX_STEP_HALVINGS {
            let trial: Vec<f64> = theta.iter().zip(&step).map(|(t, s)| t + scale * s).collect();
            let trial_likelihood = log_likelihood(observations, &trial);
            if trial_likelihood >= likelihood - 1e-12 * (1.0 + likelihood.abs()) {
                theta = trial;
                likelihood = trial_likelihood;
                moved = true;
                break;
            }
            scale *= 0.5;
        }
        if largest * scale < NEWTON_STEP_TOLERANCE {
            converged = true;
        } else if !moved {
            break;
        }
    }
    let (_, information) = gradient_and_information(observations, &theta);
    LikelihoodFit { covariance: invert(&information, dimension), theta, converged }
}

/// `ln σ(x) = −ln(1 + e^(−x))`, without overflow for large |x|.
fn ln_sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

fn log_likelihood(observations: &[Observation], theta: &[f64]) -> f64 {
    observations
        .iter()
        .map(|o| {
            let x = o.logit(theta);
            o.points * ln_sigmoid(x) + (o.games - o.points) * ln_sigmoid(-x)
        })
        .sum()
}

/// The gradient of the log-likelihood (actual minus expected points along each parameter)
/// and the information matrix `Σ games·p(1 − p)·d dᵀ` (row-major).
fn gradient_and_information(observations: &[Observation], theta: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let dimension = theta.len();
    let mut gradient = vec![0.0; dimension];
    let mut information = vec![0.0; dimension * dimension];
    for o in observations {
        let x = o.logit(theta);
        let (p, q) = (sigmoid(x), sigmoid(-x));
        let residual = o.points - o.games * p;
        let weight = o.games * p * q;
        for (i, ci) in o.design() {
            gradient[i] += ci * residual;
            for (j, cj) in o.design() {
                information[i * dimension + j] += weight * ci * cj;
            }
        }
    }
    (gradient, information)
}

/// The inverse of a square row-major matrix by Gauss–Jordan elimination with partial
/// pivoting; `None` when it is singular to working precision (or not finite).
fn invert(matrix: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut a = matrix.to_vec();
    let mut inverse = vec![0.0; n * n];
    for i in 0..n {
        inverse[i * n + i] = 1.0;
    }
    let largest = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    // A pivot this small is rounding noise: the matrix is singular.
    let negligible = largest * f64::EPSILON * n as f64;
    for col in 0..n {
        let pivot_row = (col..n).max_by(|&r, &s| a[r * n + col].abs().total_cmp(&a[s * n + col].abs()))?;
        let pivot = a[pivot_row * n + col];
        if !pivot.is_finite() || pivot.abs() <= negligible {
            return None;
        }
        if pivot_row != col {
            for c in 0..n {
                a.swap(pivot_row * n + c, col * n + c);
                inverse.swap(pivot_row * n + c, col * n + c);
            }
        }
        for c in 0..n {
            a[col * n + c] /= pivot;
            inverse[col * n + c] /= pivot;
        }
        for r in (0..n).filter(|&r| r != col) {
            let factor = a[r * n + col];
            if factor != 0.0 {
                for c in 0..n {
                    a[r * n + c] -= factor * a[col * n + c];
                    inverse[r * n + c] -= factor * inverse[col * n + c];
                }
            }
        }
    }
    Some(inverse)
}

// ---------------------------------------------------------------------------------------
// Special functions
// ---------------------------------------------------------------------------------------

// W. J. Cody's coefficients (Netlib specfun/calerf), at their published precision.
#[allow(clippy::excessive_precision)]
mod cody {
    /// erf on |x| ≤ 0.46875.
    pub const A: [f64; 5] = [3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02, 3.20937758913846947e03, 1.85777706184603153e-1];
    pub const B: [f64; 4] = [2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03];
    /// erfc·exp(x²) on 0.46875 < x ≤ 4.
    pub const C: [f64; 9] = [
        5.64188496988670089e-1,
        8.88314979438837594e00,
        6.61191906371416295e01,
        2.98635138197400131e02,
        8.81952221241769090e02,
        1.71204761263407058e03,
        2.05107837782607147e03,
        1.23033935479799725e03,
        2.15311535474403846e-8,
    ];
    pub const D: [f64; 8] = [
        1.57449261107098347e01,
        1.17693950891312499e02,
        5.37181101862009858e02,
        1.62138957456669019e03,
        3.29079923573345963e03,
        4.36261909014324716e03,
        3.43936767414372164e03,
        1.23033935480374942e03,
    ];
    /// erfc·exp(x²)·x on x > 4, in 1/x².
    pub const P: [f64; 6] =
        [3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2];
    pub const Q: [f64; 5] = [2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1, 6.05183413124413191e-2, 2.33520497626869185e-3];
    /// 1/√π.
    pub const ONE_OVER_SQRT_PI: f64 = 5.6418958354775628695e-1;
    /// erfc underflows to 0 beyond this.
    pub const XBIG: f64 = 26.543;
}

/// The first interval's boundary: below it erf is computed directly, above it erfc.
const ERF_SMALL: f64 = 0.46875;

/// erf on |x| ≤ 0.46875.
fn erf_small(x: f64) -> f64 {
    use cody::{A, B};
    let y = x * x;
    let mut numerator = A[4] * y;
    let mut denominator = y;
    for (a, b) in A[..3].iter().zip(&B[..3]) {
        numerator = (numerator + a) * y;
        denominator = (denominator + b) * y;
    }
    x * (numerator + A[3]) / (denominator + B[3])
}

/// erfc for y > 0.46875.
fn erfc_large(y: f64) -> f64 {
    use cody::{C, D, P, Q};
    if y >= cody::XBIG {
        return 0.0;
    }
    let r = if y <= 4.0 {
        let mut numerator = C[8] * y;
        let mut denominator = y;
        for (c, d) in C[..7].iter().zip(&D[..7]) {
            numerator = (numerator + c) * y;
            denominator = (denominator + d) * y;
        }
        (numerator + C[7]) / (denominator + D[7])
    } else {
        let z = 1.0 / (y * y);
        let mut numerator = P[5] * z;
        let mut denominator = z;
        for (p, q) in P[..4].iter().zip(&Q[..4]) {
            numerator = (numerator + p) * z;
            denominator = (denominator + q) * z;
        }
        let r = z * (numerator + P[4]) / (denominator + Q[4]);
        (cody::ONE_OVER_SQRT_PI - r) / y
    };
    // exp(−y²) split as exp(−y_r²)·exp(−(y − y_r)(y + y_r)) with y_r = y rounded down to
    // sixteenths, so that y² loses no bits (Cody's trick).
    let rounded = (y * 16.0).trunc() / 16.0;
    let delta = (y - rounded) * (y + rounded);
    (-rounded * rounded).exp() * (-delta).exp() * r
}

/// The error function `erf(x) = 2/√π ∫₀ˣ e^(−t²) dt` (Cody 1969, ~1e-16).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let y = x.abs();
    if y <= ERF_SMALL {
        erf_small(x)
    } else {
        let value = (0.5 - erfc_large(y)) + 0.5;
        if x < 0.0 {
            -value
        } else {
            value
        }
    }
}

/// The complementary error function `1 − erf(x)`, accurate in the far tail too.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let y = x.abs();
    if y <= ERF_SMALL {
        1.0 - erf_small(x)
    } else if x < 0.0 {
        2.0 - erfc_large(y)
    } else {
        erfc_large(y)
    }
}

/// The standard normal distribution function `Φ(x) = ½·erfc(−x/√2)`.
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

/// The standard normal quantile `Φ⁻¹(p)`: Acklam's approximation refined by one Halley
/// step. −∞ for `p ≤ 0`, +∞ for `p ≥ 1`, NaN for NaN.
#[allow(clippy::excessive_precision)] // Acklam's coefficients as published
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] =
        [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00];
    const B: [f64; 5] = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01];
    const C: [f64; 6] =
        [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00];
    const D: [f64; 4] = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00];
    const P_LOW: f64 = 0.02425;

    if p.is_nan() {
        return f64::NAN;
    }
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0);
    let x = if p < P_LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p <= 1.0 - P_LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    };
    // One Halley step on Φ(x) − p: e/φ(x) is the Newton correction, the denominator the
    // second-order term. Φ comes from erfc, which keeps its relative accuracy in the tails.
    let error = normal_cdf(x) - p;
    let u = error * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invert_matches_a_hand_inverse() {
        // [[4, 7], [2, 6]]⁻¹ = 1/(24 − 14) · [[6, −7], [−2, 4]] = [[0.6, −0.7], [−0.2, 0.4]].
        let inverse = invert(&[4.0, 7.0, 2.0, 6.0], 2).unwrap();
        for (got, want) in inverse.iter().zip([0.6, -0.7, -0.2, 0.4]) {
            assert!((got - want).abs() < 1e-14, "{inverse:?}");
        }
        // A zero in the first pivot position needs the row swap: [[0, 1], [1, 0]] is its
        // own inverse.
        assert_eq!(invert(&[0.0, 1.0, 1.0, 0.0], 2).unwrap(), vec![0.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn invert_refuses_singular_matrices() {
        assert!(invert(&[1.0, 2.0, 2.0, 4.0], 2).is_none());
        assert!(invert(&[f64::NAN, 0.0, 0.0, 1.0], 2).is_none());
        assert_eq!(invert(&[], 0), Some(vec![]));
    }

    #[test]
    fn ln_sigmoid_is_stable_in_both_tails() {
        // ln σ(0) = ln ½; ln σ(−1000) ≈ −1000; ln σ(1000) ≈ −e^(−1000) = −0.
        assert!((ln_sigmoid(0.0) - 0.5f64.ln()).abs() < 1e-15);
        assert!((ln_sigmoid(-1000.0) + 1000.0).abs() < 1e-12);
        assert!(ln_sigmoid(1000.0) <= 0.0 && ln_sigmoid(1000.0) > -1e-300);
    }
}
