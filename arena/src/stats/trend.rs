//! A straight line through rated points: how fast a training run's Elo rises with compute.
//!
//! # Weighted least squares with known errors
//! Points (xᵢ, yᵢ) with standard errors σᵢ (a rating's 95% interval is ±1.96σ), weights
//! wᵢ = 1/σᵢ². With x̄ = Σwx/Σw, ȳ = Σwy/Σw, Sxx = Σw(x − x̄)², Sxy = Σw(x − x̄)(y − ȳ):
//! slope b = Sxy/Sxx, intercept a = ȳ − b·x̄, and Var(b) = 1/Sxx when the σᵢ are right
//! (e.g. N. Draper, H. Smith, "Applied Regression Analysis", 3rd ed., §9.2).
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
    if pts.len() < 2 {
        return None;
    }
    let w = |s: f64| 1.0 / (s * s);
    let sw: f64 = pts.iter().map(|p| w(p.2)).sum();
    let xbar = pts.iter().map(|p| w(p.2) * p.0).sum::<f64>() / sw;
    let ybar = pts.iter().map(|p| w(p.2) * p.1).sum::<f64>() / sw;
    let sxx: f64 = pts.iter().map(|p| w(p.2) * (p.0 - xbar).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = pts.iter().map(|p| w(p.2) * (p.0 - xbar) * (p.1 - ybar)).sum();
    let slope = sxy / sxx;
    let intercept = ybar - slope * xbar;
    let dof = pts.len() - 2;
    let (birge, scale, quantile) = if dof == 0 {
        (f64::NAN, 1.0, normal_quantile(0.5 + confidence / 2.0))
    } else {
        let chi2: f64 = pts.iter().map(|p| w(p.2) * (p.1 - intercept - slope * p.0).powi(2)).sum();
        let r = chi2 / dof as f64;
        if r > 1.0 {
            (r, r, student_t_quantile(confidence, dof as u32))
        } else {
            (r, 1.0, normal_quantile(0.5 + confidence / 2.0))
        }
    };
    let half = quantile * (scale / sxx).sqrt();
    Some(LineFit { slope, intercept, slope_lo: slope - half, slope_hi: slope + half, birge_ratio: birge, points: pts.len() })
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
