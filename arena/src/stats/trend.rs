//! A straight line through rated points: how fast a training run's Elo rises with compute.
//!
//! # Weighted least squares with known errors
//! Points (xᵢ, yᵢ) with standard errors σᵢ (a rating's 95% interval is ±1.96σ), weights
//! wᵢ = 1/σᵢ². With x̄ = Σwx/Σw, ȳ = Σwy/Σw, Sxx = Σw(x − x̄)², Sxy = Σw(x − x̄)(y − ȳ):
//! slope b = Sxy/Sxx, intercept a = ȳ − b·x̄, and Var(b) = 1/Sxx when the σᵢ are right
//! (e.g. N. Draper, H. Smith, "Applied Regression Analysis", 3rd ed., §9.2).
//!
//! # Correlated points: generalised least squares
//! The ratings of one list are correlated (they share the games against the anchors), so
//! weighting each by its own interval counts the uncertainty they share — which moves
//! every rating together and leaves the slope alone — as if it were independent: the
//! interval comes out far too wide. With the points' covariance matrix Σ, W = Σ⁻¹ and the
//! design X = [1 x], the estimate is β = (XᵀWX)⁻¹XᵀWy with Var(β) = (XᵀWX)⁻¹ (A. C.
//! Aitken, "On least squares and linear combination of observations", Proc. R. Soc.
//! Edinburgh 55, 1935; Draper & Smith §9.2): writing A = XᵀWX = [[a₀₀, a₀₁], [a₀₁, a₁₁]]
//! (a₀₀ = ΣᵢⱼWᵢⱼ, a₀₁ = ΣᵢⱼWᵢⱼxⱼ, a₁₁ = ΣᵢⱼxᵢWᵢⱼxⱼ) and Δ = a₀₀a₁₁ − a₀₁², Var(b) = a₀₀/Δ,
//! and χ² = rᵀWr for the residuals r. A diagonal Σ gives the weighted fit above
//! (a₀₀/Δ = 1/Sxx). A shared offset — the same c added to every entry of Σ — cancels:
//! it is absorbed by the intercept.
//!
//! # When the points scatter more than their errors say
//! χ² = Σw(y − a − bx)² has n − 2 degrees of freedom. Its ratio to them, the Birge ratio
//! R = χ²/(n − 2), above 1 says the errors are too small (ratings of one list are
//! correlated, and a generation's strength varies more than its games show); the
//! interval is then widened as the Particle Data Group does (PDG, "Review of Particle
//! Physics", Introduction §5.2.2): Var(b) = R/Sxx, with Student's t quantile on n − 2
//! degrees of freedom in place of the normal one. With R ≤ 1 the normal interval stands.
//!
//! # Student's t distribution
//! For ν degrees of freedom (a whole number) and θ = atan(t/√ν), A(t|ν) = P(|T| ≤ t) is
//! (M. Abramowitz, I. Stegun, "Handbook of Mathematical Functions", 26.7.3–4):
//! - ν = 1: 2θ/π;
//! - ν odd > 1: (2/π)(θ + sin θ (cos θ + (2/3) cos³θ + … + (2·4⋯(ν−3))/(1·3⋯(ν−2)) cos^(ν−2)θ));
//! - ν even: sin θ (1 + (1/2) cos²θ + (1·3)/(2·4) cos⁴θ + … + (1·3⋯(ν−3))/(2·4⋯(ν−2)) cos^(ν−2)θ).
//!
//! The quantile is found by bisection on A (which increases in t).

use super::special::normal_quantile;

/// A fitted line with the slope's interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LineFit {
    pub slope: f64,
    pub intercept: f64,
    /// The slope's interval at the confidence asked.
    pub slope_lo: f64,
    pub slope_hi: f64,
    /// χ²/(n − 2) of the fit (NaN with two points).
    pub birge_ratio: f64,
    pub points: usize,
}

/// The weighted least-squares line through `(x, y, standard error)` points, with the
/// slope's interval at `confidence` (e.g. 0.95). `None` with fewer than two points of
/// positive finite error, or when every x is the same.
pub fn fit_line(points: &[(f64, f64, f64)], confidence: f64) -> Option<LineFit> {
    let pts: Vec<(f64, f64, f64)> = points.iter().copied().filter(|&(x, y, s)| x.is_finite() && y.is_finite() && s.is_finite() && s > 0.0).collect();
    let n = pts.len();
    let covariance: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| if i == j { pts[i].2 * pts[i].2 } else { 0.0 }).collect()).collect();
    let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = pts.iter().map(|p| p.1).collect();
    fit_line_correlated(&xs, &ys, &covariance, confidence)
}

/// The generalised least-squares line through points `(xs[i], ys[i])` whose errors have
/// the covariance matrix `covariance` (`n × n`, rows by point), with the slope's interval
/// at `confidence`. `None` with fewer than two points, a value that is not finite, a
/// covariance that is not of that shape or not invertible, or when every x is the same.
pub fn fit_line_correlated(xs: &[f64], ys: &[f64], covariance: &[Vec<f64>], confidence: f64) -> Option<LineFit> {
    let n = xs.len();
    if n < 2 || ys.len() != n || covariance.len() != n || covariance.iter().any(|row| row.len() != n) {
        return None;
    }
    if xs.iter().chain(ys).chain(covariance.iter().flatten()).any(|v| !v.is_finite()) {
        return None;
    }
    let flat: Vec<f64> = covariance.iter().flatten().copied().collect();
    let w = super::ratings::invert(&flat, n)?;
    let w = |i: usize, j: usize| w[i * n + j];
    let (mut a00, mut a01, mut a11, mut c0, mut c1) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for i in 0..n {
        for j in 0..n {
            a00 += w(i, j);
            a01 += w(i, j) * xs[j];
            a11 += xs[i] * w(i, j) * xs[j];
            c0 += w(i, j) * ys[j];
            c1 += xs[i] * w(i, j) * ys[j];
        }
    }
    let det = a00 * a11 - a01 * a01;
    // Every x the same (or a weight matrix that is not positive): no slope.
    if det.is_nan() || det <= 1e-12 * a00.abs() * a11.abs() || a00 <= 0.0 {
        return None;
    }
    let slope = (a00 * c1 - a01 * c0) / det;
    let intercept = (a11 * c0 - a01 * c1) / det;
    let residual: Vec<f64> = (0..n).map(|i| ys[i] - intercept - slope * xs[i]).collect();
    let dof = n - 2;
    let (birge, scale, quantile) = if dof == 0 {
        (f64::NAN, 1.0, normal_quantile(0.5 + confidence / 2.0))
    } else {
        let chi2: f64 = (0..n).map(|i| (0..n).map(|j| residual[i] * w(i, j) * residual[j]).sum::<f64>()).sum();
        let r = chi2 / dof as f64;
        if r > 1.0 {
            (r, r, student_t_quantile(confidence, dof as u32))
        } else {
            (r, 1.0, normal_quantile(0.5 + confidence / 2.0))
        }
    };
    let half = quantile * (scale * a00 / det).sqrt();
    Some(LineFit { slope, intercept, slope_lo: slope - half, slope_hi: slope + half, birge_ratio: birge, points: n })
}

/// A(t|ν) = P(|T| ≤ t) for Student's t with `nu` ≥ 1 degrees of freedom, t ≥ 0.
pub fn student_t_central(t: f64, nu: u32) -> f64 {
    let nu = nu.max(1);
    let theta = (t / (nu as f64).sqrt()).atan();
    let (s, c) = theta.sin_cos();
    if nu % 2 == 1 {
        let mut sum = 0.0;
        if nu > 1 {
            // cos θ · (1 + (2/3) cos²θ + (2·4)/(3·5) cos⁴θ + …), ν − 2 powers of cos in the last.
            let mut term = c;
            sum = term;
            let mut k = 3;
            while k < nu {
                term *= c * c * (k - 1) as f64 / k as f64;
                sum += term;
                k += 2;
            }
        }
        2.0 / std::f64::consts::PI * (theta + s * sum)
    } else {
        let mut term = 1.0;
        let mut sum = 1.0;
        let mut k = 2;
        while k < nu {
            term *= c * c * (k - 1) as f64 / k as f64;
            sum += term;
            k += 2;
        }
        s * sum
    }
}

/// The t such that P(|T| ≤ t) = `confidence` for Student's t with `nu` degrees of freedom.
pub fn student_t_quantile(confidence: f64, nu: u32) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while student_t_central(hi, nu) < confidence && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t_central(mid, nu) < confidence {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}
