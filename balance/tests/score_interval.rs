//! Black's score interval (the profile-likelihood interval of the trinomial mean) against
//! independent computations: a brute-force grid over the probability simplex, the binomial
//! likelihood-ratio interval when there are no draws, closed forms for one-sided cells, and
//! coverage by simulation.

use balance::stats::{score_interval, BlackTally, CellStats, CONFIDENCE};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// z for 95%: Φ⁻¹(0.975).
const Z95: f64 = 1.959963984540054;

fn tally(w: u64, d: u64, l: u64) -> BlackTally {
    BlackTally::new(w, d, l)
}

/// `k·ln p` with `0·ln 0 = 0`.
fn k_ln(k: u64, p: f64) -> f64 {
    if k == 0 {
        0.0
    } else {
        k as f64 * p.ln()
    }
}

/// The log-likelihood at the MLE `(W/n, D/n, L/n)`.
fn l_hat(w: u64, d: u64, l: u64) -> f64 {
    let n = (w + d + l) as f64;
    k_ln(w, w as f64 / n) + k_ln(d, d as f64 / n) + k_ln(l, l as f64 / n)
}

/// An independent method: the interval is the projection onto `s = p_W + p_D/2` of the
/// likelihood region `{p : 2[ℓ̂ − ℓ(p)] ≤ z²}` (the profile interval by definition: `s` is
/// inside iff some `p` of score `s` has `ℓ(p) ≥ ℓ̂ − z²/2`). Every point of the grid
/// `(p_W, p_D) = (i/N, j/N)`, `i + j ≤ N`, is tried; no profile, no quadratic, no bisection.
/// The grid's points are in the region, so its ends lie inside the true interval, within
/// about a grid step of it.
fn grid_interval(w: u64, d: u64, l: u64, grid: usize) -> (f64, f64) {
    let cut = l_hat(w, d, l) - 0.5 * Z95 * Z95;
    // k·ln(i/N) for each count, looked up rather than computed in the loop.
    let table = |k: u64| -> Vec<f64> { (0..=grid).map(|i| k_ln(k, i as f64 / grid as f64)).collect() };
    let (tw, td, tl) = (table(w), table(d), table(l));
    let (mut lo, mut hi) = (usize::MAX, 0usize);
    for i in 0..=grid {
        for j in 0..=grid - i {
            if tw[i] + td[j] + tl[grid - i - j] >= cut {
                // 2s·N = 2i + j, an integer: the ends are exact grid values.
                let twice_s = 2 * i + j;
                lo = lo.min(twice_s);
                hi = hi.max(twice_s);
            }
        }
    }
    (lo as f64 / (2 * grid) as f64, hi as f64 / (2 * grid) as f64)
}

#[test]
fn agrees_with_a_brute_force_grid_over_the_simplex() {
    const GRID: usize = 4000;
    for (w, d, l) in [(2, 0, 0), (1, 0, 1), (0, 2, 0), (1, 1, 0), (7, 3, 10), (120, 30, 50), (0, 0, 5), (0, 1, 3), (30, 20, 50)] {
        let (lo, hi) = score_interval(&tally(w, d, l), Z95);
        let (glo, ghi) = grid_interval(w, d, l, GRID);
        // The grid's ends are inside the interval (up to rounding) and within ~1e-3 of its ends.
        assert!(lo <= glo + 1e-9 && ghi <= hi + 1e-9, "{w}/{d}/{l}: [{lo}, {hi}] does not hold the grid's [{glo}, {ghi}]");
        assert!(glo - lo <= 1e-3 && hi - ghi <= 1e-3, "{w}/{d}/{l}: [{lo}, {hi}] against the grid's [{glo}, {ghi}]");
        assert!((0.0..=1.0).contains(&lo) && (0.0..=1.0).contains(&hi) && lo < hi, "{w}/{d}/{l}: [{lo}, {hi}]");
    }
}

/// The binomial likelihood-ratio interval of `w` successes in `n`, by bisection on
/// `2[ℓ̂ − ℓ(p)] = z²` with `ℓ(p) = w ln p + (n − w) ln(1 − p)` on each side of `w/n`.
fn binomial_lr_interval(w: u64, n: u64) -> (f64, f64) {
    let ll = |p: f64| k_ln(w, p) + k_ln(n - w, 1.0 - p);
    let p_hat = w as f64 / n as f64;
    let cut = ll(p_hat) - 0.5 * Z95 * Z95;
    let solve = |mut inner: f64, mut outer: f64| {
        if ll(outer) >= cut {
            return outer;
        }
        for _ in 0..100 {
            let mid = 0.5 * (inner + outer);
            if ll(mid) >= cut {
                inner = mid;
            } else {
                outer = mid;
            }
        }
        0.5 * (inner + outer)
    };
    (solve(p_hat, 0.0), solve(p_hat, 1.0))
}

#[test]
fn without_draws_it_is_the_binomial_likelihood_ratio_interval() {
    for (w, l) in [(1, 1), (2, 0), (0, 5), (3, 7), (13, 7), (52, 48), (526, 474), (1, 999)] {
        let (lo, hi) = score_interval(&tally(w, 0, l), Z95);
        let (blo, bhi) = binomial_lr_interval(w, w + l);
        assert!((lo - blo).abs() < 1e-9 && (hi - bhi).abs() < 1e-9, "{w}/0/{l}: [{lo}, {hi}] against [{blo}, {bhi}]");
    }
}

#[test]
fn one_sided_and_tiny_cells_by_hand() {
    let e = (-Z95 * Z95 / 4.0).exp(); // e^{−z²/4} = 0.382843
                                      // 2 wins: ℓ_p(s) = 2 ln s, ℓ̂ = 0 → s ≥ e^{−z²/4}, up to 1.
    let (lo, hi) = score_interval(&tally(2, 0, 0), Z95);
    assert!((lo - e).abs() < 1e-9 && hi == 1.0, "[{lo}, {hi}]");
    // 2 draws: p_D ≤ 2s and ≤ 2(1 − s), ℓ_p(s) = 2 ln(2s) below ½ → s ≥ ½·e^{−z²/4}; by
    // symmetry up to 1 − ½·e^{−z²/4}. Not a point, unlike the Wald interval.
    let (lo, hi) = score_interval(&tally(0, 2, 0), Z95);
    assert!((lo - e / 2.0).abs() < 1e-9 && (hi - (1.0 - e / 2.0)).abs() < 1e-9, "[{lo}, {hi}]");
    // One win, one loss: ℓ_p(s) = ln s + ln(1 − s), ℓ̂ = 2 ln ½ → 4s(1 − s) ≥ e^{−z²/2},
    // s = (1 ∓ √(1 − 0.1465001))/2 = (1 ∓ 0.9238506)/2 = 0.0380747, 0.9619253. Wald gave 0.5 ± 0.693.
    let root = (1.0 - (-Z95 * Z95 / 2.0).exp()).sqrt();
    let (lo, hi) = score_interval(&tally(1, 0, 1), Z95);
    assert!((lo - (1.0 - root) / 2.0).abs() < 1e-9 && (hi - (1.0 + root) / 2.0).abs() < 1e-9, "[{lo}, {hi}]");
    assert!((lo - 0.0380747).abs() < 1e-7, "{lo}");
    // The cell's statistics carry it, and its Elo ends map those ends.
    let c = CellStats::new(&tally(1, 0, 1), CONFIDENCE);
    assert!(0.0 < c.score_lo && c.score_lo < 0.5 && 0.5 < c.score_hi && c.score_hi < 1.0, "[{}, {}]", c.score_lo, c.score_hi);
    assert!((c.score_lo - lo).abs() < 1e-12 && (c.score_hi - hi).abs() < 1e-12);
    // −400·log10(1/0.0380747 − 1) = −400·log10(25.26418) = −561.0; symmetric above.
    assert!((c.elo_lo + 561.0).abs() < 0.1 && (c.elo_hi - 561.0).abs() < 0.1, "{} {}", c.elo_lo, c.elo_hi);
    // Empty: NaN.
    let (lo, hi) = score_interval(&BlackTally::default(), Z95);
    assert!(lo.is_nan() && hi.is_nan());
}

#[test]
fn covers_the_true_score_at_the_nominal_rate() {
    let mut rng = ChaCha8Rng::seed_from_u64(35);
    const CELLS: usize = 4000;
    for n in [20u64, 100] {
        // The last truth sits near an end of the scale, where a discrete tally of 20 games
        // makes the interval conservative (about 0.977 here): there it only has to reach
        // 0.92 and stay under 0.99.
        for (pw, pd, pl, most) in [(0.45, 0.1, 0.45, 0.975), (0.7, 0.2, 0.1, 0.975), (0.3, 0.5, 0.2, 0.975), (0.05, 0.05, 0.9, 0.99)] {
            let s: f64 = pw + pd / 2.0;
            assert!((pw + pd + pl - 1.0f64).abs() < 1e-12);
            let mut covered = 0usize;
            for _ in 0..CELLS {
                let (mut w, mut d, mut l) = (0, 0, 0);
                for _ in 0..n {
                    let u: f64 = rng.random();
                    if u < pw {
                        w += 1;
                    } else if u < pw + pd {
                        d += 1;
                    } else {
                        l += 1;
                    }
                }
                let (lo, hi) = score_interval(&tally(w, d, l), Z95);
                assert!(0.0 <= lo && lo <= hi && hi <= 1.0, "{w}/{d}/{l}: [{lo}, {hi}]");
                if lo <= s && s <= hi {
                    covered += 1;
                }
            }
            let coverage = covered as f64 / CELLS as f64;
            assert!((0.92..=most).contains(&coverage), "n = {n}, ({pw}, {pd}, {pl}): coverage {coverage}");
        }
    }
}
