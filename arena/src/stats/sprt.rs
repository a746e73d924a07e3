//! The GSPRT of fishtest: when a match may stop.
//!
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

use serde::{Deserialize, Serialize};

use super::elo::{score_from_elo, Pentanomial, Trinomial, SCORE_CLAMP};

/// A sequential probability ratio test of H0: Elo = `elo0` against H1: Elo = `elo1`,
/// with false-positive rate `alpha` and false-negative rate `beta`, as fishtest runs it.
/// `elo0` and `elo1` are logistic Elo (the scale of [`elo_from_score`](super::elo::elo_from_score)), not fishtest's
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
    /// [`elo_from_score`](super::elo::elo_from_score).
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
