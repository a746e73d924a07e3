//! The statistics of a balance study: everything from Black's point of view (Black =
//! the side to move in the start position), all pure functions of counts.
//!
//! # Formulas
//!
//! A cell's `n = W + D + L` games (W = Black wins, L = White wins) give per-game scores
//! `x_i ∈ {1, ½, 0}` for Black.
//!
//! - **Black's score** `ŝ = (W + D/2)/n`, the mean of the per-game scores. Its interval
//!   is the **profile-likelihood interval of the trinomial mean** ([`score_interval`]):
//!   the games are independent draws from `(p_W, p_D, p_L)`, Black's true score is
//!   `s = p_W + p_D/2`, and the interval is
//!   `{s : 2[ℓ̂ − ℓ_p(s)] ≤ z²}`, `z = Φ⁻¹(1 − α/2)` = 1.959964 at 95%, where
//!   `ℓ(p) = W ln p_W + D ln p_D + L ln p_L` (`0·ln 0 = 0`), `ℓ̂ = ℓ(W/n, D/n, L/n)` and
//!   the profile `ℓ_p(s) = max ℓ(p)` over the `p` of score `s`
//!   ([`profile_log_likelihood`]). With `a = p_W` free, `p_D = 2(s − a)`,
//!   `p_L = 1 − 2s + a`, `a ∈ [max(0, 2s − 1), s]`; `ℓ` is concave in `a` and its
//!   stationary point is a root of `n·a² − B·a − W·s·(1 − 2s) = 0`,
//!   `B = W(3s − 1) − D(1 − 2s) + L·s` (the derivative `W/a − D/(s − a) + L/(1 − 2s + a)`
//!   times the three probabilities), else the maximum sits at an end of the range. The
//!   profile is concave in `s` (a concave function maximised over a slice of a convex
//!   set), so each end is found by bisection between `ŝ` and 0 or 1. The interval is the
//!   likelihood-ratio (Wilks) interval (Y. Pawitan, *In All Likelihood*, Oxford 2001,
//!   profile likelihood; D. J. Venzon and S. H. Moolgavkar, "A method
//!   for computing profile-likelihood-based confidence intervals", Applied Statistics 37
//!   (1988) 87–94): it lies inside [0, 1] by construction, has width for a cell where
//!   every game had the same result (all draws: `½·e^{−z²/2D}` to `1 − ½·e^{−z²/2D}`;
//!   all wins: `e^{−z²/2n}` to 1), reduces to the binomial likelihood-ratio interval when
//!   `D = 0` (then `p_D = 0` maximises), and approaches the normal-approximation (Wald)
//!   interval `ŝ ± z·σ/√n` of cutechess-cli and of the arena's tournaments
//!   ([`arena::stats::Trinomial::score_interval`]) for large `n`. Here
//!   `σ² = (W(1 − ŝ)² + D(½ − ŝ)² + L ŝ²)/n = ŝ(1 − ŝ) − D/(4n)` is the population
//!   variance of the per-game scores: draws make the score less variable than a coin.
//!   The Wald interval gave a cell of one win and one loss `0.5 ± 0.693`, past both ends
//!   of the scale; the profile interval gives [0.038, 0.962] (`4s(1 − s) ≥ e^{−z²/2}`).
//! - **Black's win rate** `W/n` with the Wilson score interval (E. B. Wilson, "Probable
//!   inference, the law of succession, and statistical inference", JASA 22 (1927)
//!   209–212): `(p̂ + z²/2n ± z·√(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n)`, which stays inside
//!   [0, 1] and behaves at 0 or n wins where the Wald interval collapses.
//! - **Elo-equivalent** of Black's edge: `Δ(ŝ) = −400·log10(1/ŝ − 1)` (the logistic Elo
//!   model, [`arena::stats::elo_from_score`], scores clamped to [1e-6, 1 − 1e-6]); its
//!   interval is the (profile) score interval's ends mapped through `Δ`. For scale: 52.6% is +18 Elo.
//! - **Difference between two starts** at one tier (independent samples): still the
//!   normal approximation, the two-sample z-test on the means of the per-game scores,
//!   `z = (ŝ₁ − ŝ₂)/√(σ₁²/n₁ + σ₂²/n₂)`, two-sided `p = 2(1 − Φ(|z|)) = erfc(|z|/√2)`, and
//!   the difference's interval `ŝ₁ − ŝ₂ ± z_{α/2}·√(σ₁²/n₁ + σ₂²/n₂)` (Welch's unpooled
//!   standard error with the normal approximation; fine for the hundreds of games per cell a
//!   study plays, optimistic for a handful).
//! - **Contrasts of several cells** (cross-tier, difference of differences, additivity):
//!   a linear combination `L = Σ cᵢ·ŝᵢ` of independent cells' scores has variance
//!   `Σ cᵢ²·σᵢ²/nᵢ`; [`contrast_test`] gives its z-test and interval as above (the
//!   two-sample test is the contrast `ŝ₁ − ŝ₂`). The **additivity** of two changes to the
//!   start is the interaction `ŝ(both) − ŝ(first) − ŝ(second) + ŝ(neither)`, zero when the
//!   changes' effects add.
//! - **Comparisons sharing a control**: `ŝ_a − ŝ_c` and `ŝ_b − ŝ_c` share the cell `c`, so
//!   they are correlated, `ρ = v_c/√((v_a + v_c)(v_b + v_c))` with `v = σ²/n`
//!   ([`shared_control_correlation`]; ½ for equal cells): separate p-values against one
//!   control overstate the evidence of a pattern. The joint test that every cell of a tier
//!   has the same score is **Cochran's Q** (W. G. Cochran, "The combination of estimates
//!   from different experiments", Biometrics 10 (1954) 101–129), the Wald test of the
//!   `k − 1` correlated contrasts at once: `Q = Σ wᵢ(ŝᵢ − ŝ_w)²`, `wᵢ = nᵢ/σᵢ²`,
//!   `ŝ_w = Σ wᵢŝᵢ/Σ wᵢ`, against χ² with `k − 1` degrees of freedom
//!   ([`homogeneity_test`]); the χ² tail in closed form ([`chi_square_sf`]):
//!   `Q(x; 2m) = e^{−x/2} Σ_{j<m} (x/2)^j/j!` and
//!   `Q(x; 2m + 1) = erfc(√(x/2)) + e^{−x/2} Σ_{j<m} (x/2)^{j+½}/Γ(j + 3/2)`
//!   (M. Abramowitz and I. A. Stegun, *Handbook of Mathematical Functions*, 26.4.4–26.4.5).
//! - **Games per cell for a precision** (planning, by the normal approximation that the
//!   profile interval approaches at these sizes): the interval's half-width `h` needs
//!   `n = z²·p(1 − p)/h²` games ([`games_for_half_width`]; `p(1 − p)` is the no-draw
//!   variance, an upper bound). **Games to detect** a true score `p₁` against `p₀` with a
//!   two-sided test at level α and power `1 − β`:
//!   `n = ((z_{α/2}·√(p₀(1 − p₀)) + z_β·√(p₁(1 − p₁)))/(p₁ − p₀))²` ([`games_to_detect`]):
//!   52.6% against 50% at 95%/80% needs 2,901 games — the "about 2,900" — while
//!   an interval of ±2.6 points around 52.6% needs 1,417.
//!
//! An empty cell's statistics are NaN (JSON `null`), never a panic.

use arena::stats::{elo_from_score, erfc, normal_quantile, z_for_confidence, Trinomial};
use serde::Serialize;

/// The confidence level of every interval the study reports.
pub const CONFIDENCE: f64 = 0.95;

/// Black's results in one cell: `wins` = Black wins, `losses` = White wins.
pub type BlackTally = Trinomial;

/// Black's score, its profile-likelihood interval, the Elo-equivalent and the Wilson interval of the win
/// rate, for one cell.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CellStats {
    pub games: u64,
    pub black_wins: u64,
    pub draws: u64,
    pub white_wins: u64,
    pub score: f64,
    pub score_lo: f64,
    pub score_hi: f64,
    pub elo: f64,
    pub elo_lo: f64,
    pub elo_hi: f64,
    pub black_win_rate: f64,
    pub win_rate_lo: f64,
    pub win_rate_hi: f64,
    pub draw_rate: f64,
}

impl CellStats {
    pub fn new(t: &BlackTally, confidence: f64) -> CellStats {
        let z = z_for_confidence(confidence);
        let n = t.games();
        let (score_lo, score_hi) = score_interval(t, z);
        let (win_rate_lo, win_rate_hi) = wilson_interval(t.wins, n, z);
        // `+ 0.0` turns the −0 of an even score into 0.
        let nan_if_empty = |x: f64| if n == 0 { f64::NAN } else { x + 0.0 };
        CellStats {
            games: n,
            black_wins: t.wins,
            draws: t.draws,
            white_wins: t.losses,
            score: t.score(),
            score_lo,
            score_hi,
            elo: nan_if_empty(elo_from_score(t.score())),
            elo_lo: nan_if_empty(elo_from_score(score_lo)),
            elo_hi: nan_if_empty(elo_from_score(score_hi)),
            black_win_rate: t.wins as f64 / n as f64,
            win_rate_lo,
            win_rate_hi,
            draw_rate: t.draw_ratio(),
        }
    }
}

/// `k·ln p` with `0·ln 0 = 0` (and `k·ln 0 = −∞` for `k > 0`).
fn k_ln(k: u64, p: f64) -> f64 {
    if k == 0 {
        0.0
    } else {
        k as f64 * p.ln()
    }
}

/// The trinomial log-likelihood `W ln p_W + D ln p_D + L ln p_L` at the maximum-likelihood
/// estimate `(W/n, D/n, L/n)`.
fn max_log_likelihood(t: &BlackTally) -> f64 {
    let n = t.games() as f64;
    k_ln(t.wins, t.wins as f64 / n) + k_ln(t.draws, t.draws as f64 / n) + k_ln(t.losses, t.losses as f64 / n)
}

/// The profile log-likelihood `ℓ_p(s)` of Black's score (module documentation): the
/// largest `W ln p_W + D ln p_D + L ln p_L` over the probabilities with
/// `p_W + p_D/2 = s`; `−∞` where no such probabilities give the tally a chance (e.g.
/// `s = 0` after a Black win) and outside [0, 1].
pub fn profile_log_likelihood(t: &BlackTally, s: f64) -> f64 {
    if !(0.0..=1.0).contains(&s) {
        return f64::NEG_INFINITY;
    }
    let (w, d, l) = (t.wins as f64, t.draws as f64, t.losses as f64);
    let n = w + d + l;
    // a = p_W; p_D = 2(s − a), p_L = 1 − 2s + a, both ≥ 0 on [lo, hi].
    let (lo, hi) = ((2.0 * s - 1.0).max(0.0), s);
    let ll = |a: f64| {
        let a = a.clamp(lo, hi);
        k_ln(t.wins, a) + k_ln(t.draws, (2.0 * (s - a)).max(0.0)) + k_ln(t.losses, (1.0 - 2.0 * s + a).max(0.0))
    };
    // Concave in a: the maximum is at an end or at the stationary point, a root of
    // n·a² − B·a − C = 0 (the roots taken in the cancellation-free form).
    let mut best = ll(lo).max(ll(hi));
    let u = 1.0 - 2.0 * s;
    let b = w * (3.0 * s - 1.0) - d * u + l * s;
    let c = w * s * u;
    let disc = b * b + 4.0 * n * c;
    if n > 0.0 && disc >= 0.0 {
        let q = 0.5 * (b + b.signum() * disc.sqrt());
        if q != 0.0 {
            best = best.max(ll(q / n)).max(ll(-c / q));
        } else {
            best = best.max(ll(0.0));
        }
    }
    best
}

/// The profile-likelihood interval of Black's score at critical value `z` (module
/// documentation): `{s : 2[ℓ̂ − ℓ_p(s)] ≤ z²}`, inside [0, 1]; NaN for an empty tally.
pub fn score_interval(t: &BlackTally, z: f64) -> (f64, f64) {
    if t.games() == 0 {
        return (f64::NAN, f64::NAN);
    }
    let s_hat = t.score();
    let cut = max_log_likelihood(t) - 0.5 * z * z;
    let inside = |s: f64| profile_log_likelihood(t, s) >= cut;
    // The profile is concave in s, so {inside} is an interval around ŝ: bisect between ŝ
    // (inside) and each end of [0, 1] that lies outside.
    let bisect = |mut inner: f64, mut outer: f64| {
        if inside(outer) {
            return outer;
        }
        for _ in 0..200 {
            let mid = 0.5 * (inner + outer);
            if mid == inner || mid == outer {
                break;
            }
            if inside(mid) {
                inner = mid;
            } else {
                outer = mid;
            }
        }
        0.5 * (inner + outer)
    };
    (bisect(s_hat, 0.0), bisect(s_hat, 1.0))
}

/// The Wilson score interval of a proportion `successes/n` at critical value `z`; NaN
/// for `n = 0`.
pub fn wilson_interval(successes: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let n = n as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The difference of Black's scores between two starts (a − b) at one tier.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Difference {
    pub diff: f64,
    /// The standard error `√(σ₁²/n₁ + σ₂²/n₂)`.
    pub se: f64,
    pub lo: f64,
    pub hi: f64,
    pub z: f64,
    /// Two-sided p-value of "no difference".
    pub p_value: f64,
}

/// The two-sample z-test of the module documentation. NaN when either side has no game.
/// With zero variance on both sides (every game the same result), `z` is 0 for equal
/// scores (p = 1) and ±∞ otherwise (p = 0): the normal approximation has nothing to say
/// there, so read such a cell's counts rather than its p-value.
pub fn two_sample_test(a: &BlackTally, b: &BlackTally, confidence: f64) -> Difference {
    contrast_test(&[(1.0, a), (-1.0, b)], confidence)
}

/// The z-test of the contrast `Σ cᵢ·ŝᵢ` of independent cells (module documentation),
/// `terms` = `(cᵢ, tallyᵢ)`; NaN when a cell has no game, zero variance as in
/// [`two_sample_test`].
pub fn contrast_test(terms: &[(f64, &BlackTally)], confidence: f64) -> Difference {
    if terms.is_empty() || terms.iter().any(|(_, t)| t.games() == 0) {
        let nan = f64::NAN;
        return Difference { diff: nan, se: nan, lo: nan, hi: nan, z: nan, p_value: nan };
    }
    let diff: f64 = terms.iter().map(|(c, t)| c * t.score()).sum();
    let se = terms.iter().map(|(c, t)| c * c * t.variance_per_game() / t.games() as f64).sum::<f64>().sqrt();
    let z = if se > 0.0 {
        diff / se
    } else if diff == 0.0 {
        0.0
    } else {
        diff.signum() * f64::INFINITY
    };
    // erfc keeps the far tail that 1 − Φ(|z|) rounds to 0 (from |z| ≈ 8.3 on).
    let p_value = erfc(z.abs() / std::f64::consts::SQRT_2);
    let zc = z_for_confidence(confidence);
    Difference { diff, se, lo: diff - zc * se, hi: diff + zc * se, z, p_value }
}

/// The correlation of the comparisons `a − control` and `b − control` of independent
/// cells (module documentation); NaN when a cell has no game or both comparisons have no
/// variance.
pub fn shared_control_correlation(a: &BlackTally, b: &BlackTally, control: &BlackTally) -> f64 {
    if [a, b, control].iter().any(|t| t.games() == 0) {
        return f64::NAN;
    }
    let v = |t: &BlackTally| t.variance_per_game() / t.games() as f64;
    let (va, vb, vc) = (v(a), v(b), v(control));
    vc / ((va + vc) * (vb + vc)).sqrt()
}

/// Cochran's Q test that cells have one score (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Homogeneity {
    pub chi2: f64,
    /// Degrees of freedom: cells − 1.
    pub df: u32,
    pub p_value: f64,
}

/// Cochran's Q over `cells`; NaN with fewer than two cells, an empty cell or a cell
/// without variance (its weight would be infinite).
pub fn homogeneity_test(cells: &[&BlackTally]) -> Homogeneity {
    let df = cells.len().saturating_sub(1) as u32;
    let weights: Vec<f64> = cells.iter().map(|t| t.games() as f64 / t.variance_per_game()).collect();
    if cells.len() < 2 || weights.iter().any(|w| !w.is_finite() || *w <= 0.0) {
        return Homogeneity { chi2: f64::NAN, df, p_value: f64::NAN };
    }
    let total: f64 = weights.iter().sum();
    let mean = cells.iter().zip(&weights).map(|(t, w)| w * t.score()).sum::<f64>() / total;
    let chi2: f64 = cells.iter().zip(&weights).map(|(t, w)| w * (t.score() - mean).powi(2)).sum();
    Homogeneity { chi2, df, p_value: chi_square_sf(chi2, df) }
}

/// `P(χ²_df > x)` in closed form (module documentation); 1 for `x ≤ 0`, NaN for `df = 0`.
pub fn chi_square_sf(x: f64, df: u32) -> f64 {
    if df == 0 || x.is_nan() {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 1.0;
    }
    let h = x / 2.0;
    // The series' first term: (x/2)^0/0! for even df, (x/2)^½/Γ(3/2) (Γ(3/2) = √π/2) for odd.
    let (head, mut term, offset) = if df.is_multiple_of(2) { (0.0, 1.0, 0.0) } else { (erfc(h.sqrt()), h.sqrt() * 2.0 / std::f64::consts::PI.sqrt(), 0.5) };
    let mut series = 0.0;
    for j in 0..df / 2 {
        series += term;
        term *= h / (j as f64 + 1.0 + offset);
    }
    (head + series * (-h).exp()).clamp(0.0, 1.0)
}

/// Games needed for a score interval of half-width `h` around `p` at `confidence`:
/// `⌈z²·p(1 − p)/h²⌉`.
pub fn games_for_half_width(p: f64, h: f64, confidence: f64) -> u64 {
    let z = z_for_confidence(confidence);
    (z * z * p * (1.0 - p) / (h * h)).ceil() as u64
}

/// Games needed to tell a true score `p1` from `p0` with a two-sided test at `confidence`
/// (level α = 1 − confidence) and `power`:
/// `⌈((z_{α/2}·√(p₀(1 − p₀)) + z_β·√(p₁(1 − p₁)))/(p₁ − p₀))²⌉`.
pub fn games_to_detect(p0: f64, p1: f64, confidence: f64, power: f64) -> u64 {
    let za = z_for_confidence(confidence);
    let zb = normal_quantile(power);
    let n = (za * (p0 * (1.0 - p0)).sqrt() + zb * (p1 * (1.0 - p1)).sqrt()) / (p1 - p0);
    (n * n).ceil() as u64
}

/// The games-per-cell tables of docs/BALANCE.md, as Markdown (a test keeps the document
/// and this function in step).
pub fn precision_table_markdown() -> String {
    let mut s = String::from("| Black's score p | half-width h = 0.01 | h = 0.02 | h = 0.05 |\n|---|---|---|---|\n");
    for p in [0.5, 0.526] {
        s += &format!("| {p} |");
        for h in [0.01, 0.02, 0.05] {
            s += &format!(" {} |", games_for_half_width(p, h, CONFIDENCE));
        }
        s.push('\n');
    }
    s += "\n| true score p₁ against p₀ = 0.5 | games for 95% confidence and 80% power |\n|---|---|\n";
    for p1 in [0.51, 0.52, 0.526, 0.55] {
        s += &format!("| {p1} | {} |\n", games_to_detect(0.5, p1, CONFIDENCE, 0.8));
    }
    s
}
