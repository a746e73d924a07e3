//! The study's arithmetic against values computed by hand (and checked independently with
//! Python's `statistics.NormalDist` and `math.erfc`).

use balance::stats::{
    chi_square_sf, contrast_test, games_for_half_width, games_to_detect, homogeneity_test, precision_table_markdown, shared_control_correlation,
    two_sample_test, wilson_interval, BlackTally, CellStats, CONFIDENCE,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// z for 95%: Φ⁻¹(0.975).
const Z95: f64 = 1.959963984540054;

#[test]
fn cell_statistics_by_hand() {
    // 30 Black wins, 20 draws, 50 White wins (n = 100).
    // score = (30 + 20/2)/100 = 0.4
    // Profile-likelihood interval [0.3173486, 0.4870544]: computed independently in Python
    // by the empirical-likelihood (Lagrange multiplier) form of the constrained maximum,
    // p_i = n_i/(n + λ(x_i − s)) with λ solving Σ n_i(x_i − s)/(n + λ(x_i − s)) = 0,
    // both ends by bisection on 2[ℓ̂ − ℓ_p(s)] = 1.959964². (The old Wald interval
    // 0.4 ± 1.959964·√(0.19/100) = [0.3145672, 0.4854328] is close: n = 100 is large.)
    // Elo = −400·log10(1/0.4 − 1) = −400·log10(1.5) = −70.4365
    // Elo ends: −400·log10(1/0.3173486 − 1) = −133.0649, −400·log10(1/0.4870544 − 1) = −8.9975
    // Wilson for 30/100: centre (0.3 + 3.8415/200)/(1 + 3.8415/100) = 0.3073, half
    // 1.96·√(0.0021 + 3.8415/40000)/1.038415 = 0.0884 → [0.2189489, 0.3958485]
    let s = CellStats::new(&BlackTally::new(30, 20, 50), CONFIDENCE);
    assert_eq!((s.games, s.black_wins, s.draws, s.white_wins), (100, 30, 20, 50));
    assert!(close(s.score, 0.4, 1e-12));
    assert!(close(s.score_lo, 0.3173486, 1e-7), "{}", s.score_lo);
    assert!(close(s.score_hi, 0.4870544, 1e-7), "{}", s.score_hi);
    assert!(close(s.elo, -70.4365, 1e-4), "{}", s.elo);
    assert!(close(s.elo_lo, -133.0649, 1e-4), "{}", s.elo_lo);
    assert!(close(s.elo_hi, -8.9975, 1e-4), "{}", s.elo_hi);
    assert!(close(s.black_win_rate, 0.3, 1e-12));
    assert!(close(s.win_rate_lo, 0.2189489, 1e-7), "{}", s.win_rate_lo);
    assert!(close(s.win_rate_hi, 0.3958485, 1e-7), "{}", s.win_rate_hi);
    assert!(close(s.draw_rate, 0.2, 1e-12));
}

#[test]
fn the_professional_sente_edge_is_18_elo() {
    // −400·log10(1/0.526 − 1) = −400·log10(0.901141) = 18.08
    let s = CellStats::new(&BlackTally::new(526, 0, 474), CONFIDENCE);
    assert!(close(s.elo, 18.08, 0.01), "{}", s.elo);
}

#[test]
fn empty_and_one_sided_cells_do_not_panic() {
    let s = CellStats::new(&BlackTally::default(), CONFIDENCE);
    assert_eq!(s.games, 0);
    assert!(s.score.is_nan() && s.score_lo.is_nan() && s.elo.is_nan() && s.win_rate_lo.is_nan());
    // All Black wins: the profile interval still has width (the Wald interval had none):
    // ℓ̂ = 0, ℓ_p(s) = 10·ln s, so 2·10·ln(1/s) ≤ z² from s = e^{−z²/20} = e^{−0.1920729}
    // = 0.8252467 to 1. Wilson's lower end for 10/10:
    // n = 10: lower = (1 + 0.19208)/(1.38415) − 1.96·√(0 + 3.8415/400)/1.38415 = 0.72246
    let s = CellStats::new(&BlackTally::new(10, 0, 0), CONFIDENCE);
    assert_eq!((s.score, s.score_hi), (1.0, 1.0));
    assert!(close(s.score_lo, 0.8252467, 1e-7), "{}", s.score_lo);
    assert!(close(s.win_rate_lo, 0.72246, 1e-5), "{}", s.win_rate_lo);
    assert_eq!(s.win_rate_hi, 1.0);
    assert!(s.elo.is_finite() && s.elo > 2000.0);
}

#[test]
fn wilson_interval_by_hand() {
    // 5 of 20 at z = 1.96: p = 0.25, z²/n = 0.192074;
    // centre (0.25 + 0.096037)/1.192074 = 0.290281; half 1.96·√(0.009375 + 0.0024009)/1.192074 = 0.178420
    // → [0.1118617, 0.4687009]
    let (lo, hi) = wilson_interval(5, 20, Z95);
    assert!(close(lo, 0.1118617, 1e-6), "{lo}");
    assert!(close(hi, 0.4687009, 1e-6), "{hi}");
    let (lo, hi) = wilson_interval(0, 0, Z95);
    assert!(lo.is_nan() && hi.is_nan());
}

#[test]
fn two_sample_test_by_hand() {
    // a = 60/20/20: ŝ = 0.7, σ² = (60·0.09 + 20·0.04 + 20·0.49)/100 = 0.16
    // b = 30/20/50: ŝ = 0.4, σ² = 0.19
    // se = √(0.16/100 + 0.19/100) = √0.0035 = 0.0591608
    // z = 0.3/0.0591608 = 5.070926, p = erfc(5.070926/√2) = 3.9589e-7
    // interval 0.3 ± 1.959964·0.0591608 = [0.1840470, 0.4159530]
    let d = two_sample_test(&BlackTally::new(60, 20, 20), &BlackTally::new(30, 20, 50), CONFIDENCE);
    assert!(close(d.diff, 0.3, 1e-12));
    assert!(close(d.se, 0.0591608, 1e-7), "{}", d.se);
    assert!(close(d.z, 5.070926, 1e-6), "{}", d.z);
    assert!(close(d.p_value, 3.9589e-7, 1e-10), "{}", d.p_value);
    assert!(close(d.lo, 0.1840470, 1e-7) && close(d.hi, 0.4159530, 1e-7), "{} {}", d.lo, d.hi);

    // 52 of 100 against 50 of 100, no draws: se = √(0.2496/100 + 0.25/100) = 0.0706824,
    // z = 0.02/0.0706824 = 0.282956, p = 0.777211: not significant.
    let d = two_sample_test(&BlackTally::new(52, 0, 48), &BlackTally::new(50, 0, 50), CONFIDENCE);
    assert!(close(d.z, 0.282956, 1e-6), "{}", d.z);
    assert!(close(d.p_value, 0.777211, 1e-6), "{}", d.p_value);

    // Draws on both sides: a = 55/10/35 (ŝ 0.6, σ² = (55·0.16 + 10·0.01 + 35·0.36)/100 =
    // 0.215), b = 48/12/40 (ŝ 0.54, σ² = (48·0.2116 + 12·0.0016 + 40·0.2916)/100 = 0.2184):
    // se = √(0.00215 + 0.002184) = 0.0658331, z = 0.06/0.0658331 = 0.911395, p = 0.362087.
    let d = two_sample_test(&BlackTally::new(55, 10, 35), &BlackTally::new(48, 12, 40), CONFIDENCE);
    assert!(close(d.z, 0.911395, 1e-6), "{}", d.z);
    assert!(close(d.p_value, 0.362087, 1e-6), "{}", d.p_value);
    // Symmetric: b against a flips z and keeps p.
    let e = two_sample_test(&BlackTally::new(48, 12, 40), &BlackTally::new(55, 10, 35), CONFIDENCE);
    assert!(close(e.z, -d.z, 1e-12) && close(e.p_value, d.p_value, 1e-12));
}

/// A far-tail difference keeps its p-value: `2(1 − Φ(10))` is 0 in doubles
/// (Φ(10) rounds to 1), `erfc(10/√2)` is not.
#[test]
fn far_tail_p_values_do_not_underflow() {
    // a = 50/0/50: ŝ 0.5, σ² 0.25; b = 0/0/100: ŝ 0, σ² 0; se = √(0.25/100) = 0.05,
    // z = 0.5/0.05 = 10, p = erfc(10/√2) = 1.5239706048321186e-23 (Python math.erfc).
    let d = two_sample_test(&BlackTally::new(50, 0, 50), &BlackTally::new(0, 0, 100), CONFIDENCE);
    assert!(close(d.z, 10.0, 1e-12), "{}", d.z);
    assert!(close(d.p_value / 1.5239706048321186e-23, 1.0, 1e-9), "{}", d.p_value);
    let e = two_sample_test(&BlackTally::new(0, 0, 100), &BlackTally::new(50, 0, 50), CONFIDENCE);
    assert_eq!(e.p_value, d.p_value);
}

#[test]
fn degenerate_comparisons_are_defined() {
    let nan = two_sample_test(&BlackTally::default(), &BlackTally::new(1, 0, 0), CONFIDENCE);
    assert!(nan.z.is_nan() && nan.p_value.is_nan());
    let same = two_sample_test(&BlackTally::new(0, 4, 0), &BlackTally::new(0, 7, 0), CONFIDENCE);
    assert_eq!((same.z, same.p_value), (0.0, 1.0));
    let apart = two_sample_test(&BlackTally::new(4, 0, 0), &BlackTally::new(0, 0, 4), CONFIDENCE);
    assert_eq!((apart.z, apart.p_value), (f64::INFINITY, 0.0));
}

#[test]
fn games_per_cell_by_hand() {
    // n = z²·p(1 − p)/h²: 1.959964²·0.25/0.01² = 9603.65 → 9604; h = 0.02 → 2400.9 → 2401;
    // h = 0.05 → 384.15 → 385. At p = 0.526: 3.841459·0.249324/h² → 9577.7, 2394.4, 383.1.
    assert_eq!(games_for_half_width(0.5, 0.01, CONFIDENCE), 9604);
    assert_eq!(games_for_half_width(0.5, 0.02, CONFIDENCE), 2401);
    assert_eq!(games_for_half_width(0.5, 0.05, CONFIDENCE), 385);
    assert_eq!(games_for_half_width(0.526, 0.01, CONFIDENCE), 9578);
    assert_eq!(games_for_half_width(0.526, 0.02, CONFIDENCE), 2395);
    assert_eq!(games_for_half_width(0.526, 0.05, CONFIDENCE), 384);
    // The "about 2,900 games" to tell 52.6% from 50%: 95% two-sided, 80% power,
    // ((1.959964·0.5 + 0.841621·√(0.526·0.474))/0.026)² = (1.400230/0.026)² = 2900.3 → 2901.
    assert_eq!(games_to_detect(0.5, 0.526, CONFIDENCE, 0.8), 2901);
}

#[test]
fn the_document_carries_the_computed_tables() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/BALANCE.md")).unwrap();
    let table = precision_table_markdown();
    assert!(doc.contains(&table), "docs/BALANCE.md is out of step with stats::precision_table_markdown():\n{table}");
}

#[test]
fn chi_square_tail_matches_the_tables() {
    // Upper 5% and 1% points of χ² (NIST/SEMATECH e-Handbook of Statistical Methods, 1.3.6.7.4).
    for (x, df, p) in [
        (3.841, 1, 0.05),
        (5.991, 2, 0.05),
        (7.815, 3, 0.05),
        (9.488, 4, 0.05),
        (11.070, 5, 0.05),
        (6.635, 1, 0.01),
        (13.277, 4, 0.01),
        (15.086, 5, 0.01),
        (23.209, 10, 0.01),
    ] {
        assert!(close(chi_square_sf(x, df), p, 2e-4 * p / 0.01), "df {df} x {x}: {}", chi_square_sf(x, df));
    }
    // Two degrees of freedom: exactly e^{−x/2}; one: erfc(√(x/2)), 2·(1 − Φ(√x)).
    assert!(close(chi_square_sf(3.0, 2), (-1.5f64).exp(), 1e-15));
    assert!(close(chi_square_sf(Z95 * Z95, 1), 0.05, 1e-12));
    assert_eq!(chi_square_sf(0.0, 3), 1.0);
    assert_eq!(chi_square_sf(1e6, 5), 0.0);
    assert!(chi_square_sf(1.0, 0).is_nan());
}

/// The depth-4 study's four cells of the 2×2 of the Copper's places (docs/results/
/// balance-d4-2400-cells.csv), computed independently in Python with the same formulas.
#[test]
fn additivity_and_shared_control_by_hand() {
    let seed = BlackTally::new(1109, 11, 1281);
    let both_in_hand = BlackTally::new(1177, 17, 1206);
    let both_in_pocket = BlackTally::new(1156, 8, 1236);
    let swapped = BlackTally::new(1311, 15, 1074);
    let d = contrast_test(&[(1.0, &swapped), (-1.0, &both_in_hand), (-1.0, &both_in_pocket), (1.0, &seed)], CONFIDENCE);
    assert!(close(d.diff, 0.0362649, 1e-7), "{}", d.diff);
    assert!(close(d.se, 0.0203157, 1e-7), "{}", d.se);
    assert!(close(d.z, 1.785066, 1e-6), "{}", d.z);
    assert!(close(d.p_value, 0.0742506, 1e-7), "{}", d.p_value);
    assert!(close(d.lo, -0.0035532, 1e-7) && close(d.hi, 0.0760830, 1e-7), "{} {}", d.lo, d.hi);
    // The two-sample test is the contrast (+1, −1).
    assert_eq!(two_sample_test(&swapped, &seed, CONFIDENCE), contrast_test(&[(1.0, &swapped), (-1.0, &seed)], CONFIDENCE));
    assert!(close(shared_control_correlation(&swapped, &both_in_hand, &seed), 0.5003778, 1e-7));
    // With no-copper (1175, 7, 1218), Cochran's Q over the five starts.
    let no_copper = BlackTally::new(1175, 7, 1218);
    let h = homogeneity_test(&[&seed, &no_copper, &both_in_hand, &both_in_pocket, &swapped]);
    assert_eq!(h.df, 4);
    assert!(close(h.chi2, 39.42643, 1e-5), "{}", h.chi2);
    assert!(close(h.p_value, 5.687312e-8, 1e-13), "{}", h.p_value);
    assert!(homogeneity_test(&[&seed]).chi2.is_nan());
    assert!(homogeneity_test(&[&seed, &BlackTally::new(0, 5, 0)]).p_value.is_nan());
    assert!(contrast_test(&[(1.0, &seed), (-1.0, &BlackTally::default())], CONFIDENCE).z.is_nan());
}

/// One simulated cell of `n` games: Black wins with `w`, draws with `d`.
fn simulate(rng: &mut ChaCha8Rng, n: u64, w: f64, d: f64) -> BlackTally {
    let mut t = BlackTally::default();
    for _ in 0..n {
        let u: f64 = rng.random();
        t.add_score(if u < w {
            1.0
        } else if u < w + d {
            0.5
        } else {
            0.0
        })
        .unwrap();
    }
    t
}

/// Against simulated studies where the null holds: the joint test and the additivity
/// contrast reject about 5% of the time, and the comparisons against one control
/// correlate as the formula says.
#[test]
fn joint_tests_hold_their_level_in_simulation() {
    let mut rng = ChaCha8Rng::seed_from_u64(20261128);
    let studies = 3000;
    let (mut q_rejects, mut additivity_rejects) = (0, 0);
    let (mut sx, mut sy, mut sxx, mut syy, mut sxy, mut rho) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for _ in 0..studies {
        // Five starts with one true score (0.47 wins, 0.02 draws).
        let cells: Vec<BlackTally> = (0..5).map(|_| simulate(&mut rng, 400, 0.47, 0.02)).collect();
        let refs: Vec<&BlackTally> = cells.iter().collect();
        if homogeneity_test(&refs).p_value < 0.05 {
            q_rejects += 1;
        }
        // Additive effects: 0.44 + 0.03 (first change) + 0.05 (second) → 0.52 for both.
        let [n0, a, b, ab] = [0.44, 0.47, 0.49, 0.52].map(|w| simulate(&mut rng, 400, w, 0.02));
        if contrast_test(&[(1.0, &ab), (-1.0, &a), (-1.0, &b), (1.0, &n0)], CONFIDENCE).p_value < 0.05 {
            additivity_rejects += 1;
        }
        let (x, y) = (cells[1].score() - cells[0].score(), cells[2].score() - cells[0].score());
        sx += x;
        sy += y;
        sxx += x * x;
        syy += y * y;
        sxy += x * y;
        rho += shared_control_correlation(&cells[1], &cells[2], &cells[0]);
    }
    let n = studies as f64;
    // 5% of 3,000: 150 ± 12 (one standard deviation); allow three.
    for (what, k) in [("Cochran's Q", q_rejects), ("additivity", additivity_rejects)] {
        assert!((114..=186).contains(&k), "{what} rejected {k} of {studies} true nulls at 5%");
    }
    let empirical = (sxy / n - sx / n * sy / n) / ((sxx / n - (sx / n).powi(2)) * (syy / n - (sy / n).powi(2))).sqrt();
    // The sample correlation of 3,000 pairs at ρ = ½ has a standard error of (1 − ρ²)/√n ≈ 0.014.
    assert!(close(empirical, rho / n, 0.05), "empirical {empirical} against the formula's {}", rho / n);
    assert!(close(rho / n, 0.5, 0.01), "{}", rho / n);
}
