//! Special functions behind the intervals and tests.
//!
//!
//! # Special functions
//!
//! [`erf`]/[`erfc`] are W. J. Cody's rational Chebyshev approximations ("Rational Chebyshev
//! approximations for the error function", Math. Comp. 23 (1969) 631–637; Netlib
//! `specfun/calerf`), accurate to about 1e-16. [`normal_quantile`] is P. J. Acklam's
//! rational approximation (relative error 1.15e-9) followed by one Halley step against
//! [`erfc`], which brings it to full double precision: `normal_quantile(0.975) =
//! 1.959963984540054`.

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
