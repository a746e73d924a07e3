//! A teacher's scores as training targets.
//!
//! - Policy: a softmax over the root moves' scores, p(m) ∝ exp(s(m) / T) with T the
//!   temperature in centipawns, over the moves whose score is known (those within the
//!   search's margin of the best; the others get 0). A mate in n plies counts as
//!   `MATE_CP − 100·n` (being mated in n as its negative), so mating moves take the whole
//!   target and a longer defence is preferred to a shorter one.
//! - Value: the best move's score s mapped to a win probability by the logistic
//!   P(win) = 1 / (1 + exp(−s / k)), as an expectation W − L = 2·P − 1 = tanh(s / 2k);
//!   mates are ±1. The scale k is fitted to the games' results by maximum likelihood
//!   ([`fit_scale`]): the Texel tuning method's objective (P. Österlund, 2014,
//!   chessprogramming.org/Texel's_Tuning_Method) with the engine's own scores and one
//!   free parameter, draws counted as half a win.

use players::Score;
use serde::{Deserialize, Serialize};

/// Centipawn value of a mate at the root for the policy's softmax.
pub const MATE_CP: f64 = 30_000.0;

/// A score as centipawns for the policy's softmax.
pub fn policy_cp(s: Score) -> f64 {
    match s {
        Score::Cp(c) => c as f64,
        Score::Mate(n) if n >= 0 => MATE_CP - 100.0 * n as f64,
        Score::Mate(n) => -MATE_CP - 100.0 * n as f64,
    }
}

/// The policy target over `scored` moves (any index type, with their scores): the softmax
/// of their scores at `temperature_cp`; moves without a score get no entry. Empty when no
/// move has a score.
pub fn policy_target<I: Copy>(scored: &[(I, Option<Score>)], temperature_cp: f64) -> Vec<(I, f32)> {
    let known: Vec<(I, f64)> = scored.iter().filter_map(|&(i, s)| s.map(|s| (i, policy_cp(s)))).collect();
    let Some(max) = known.iter().map(|x| x.1).reduce(f64::max) else {
        return Vec::new();
    };
    let t = temperature_cp.max(1e-6);
    let weights: Vec<f64> = known.iter().map(|&(_, c)| ((c - max) / t).exp()).collect();
    let total: f64 = weights.iter().sum();
    known.iter().zip(&weights).map(|(&(i, _), &w)| (i, (w / total) as f32)).collect()
}

/// The expected result W − L for the side to move of a position the teacher scores `s`,
/// with logistic scale `k` centipawns.
pub fn value_of(s: Score, k: f64) -> f32 {
    match s {
        Score::Cp(c) => (c as f64 / (2.0 * k)).tanh() as f32,
        Score::Mate(n) if n >= 0 => 1.0,
        Score::Mate(_) => -1.0,
    }
}

/// The logistic scale fitted to results, and how well it predicts them.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ScaleFit {
    /// k in P(win) = 1 / (1 + exp(−s / k)), centipawns.
    pub k: f64,
    /// Positions the fit used (those with a centipawn score).
    pub positions: u64,
    /// Mean cross-entropy of the results under the fitted k (nats).
    pub loss: f64,
    /// The same for the best constant prediction (the results' own mean): what the
    /// scores add to knowing nothing about the position.
    pub constant_loss: f64,
}

/// Smallest and largest scale searched, centipawns.
const K_RANGE: (f64, f64) = (1.0, 100_000.0);

/// Mean binary cross-entropy of results `y` (1 win, ½ draw, 0 loss for the side to move)
/// under P(win) = σ(s / k).
fn mean_cross_entropy(data: &[(f64, f64)], k: f64) -> f64 {
    let total: f64 = data
        .iter()
        .map(|&(s, y)| {
            // log σ(x) and log(1 − σ(x)) without overflow.
            let x = s / k;
            let log_p = -softplus(-x);
            let log_q = -softplus(x);
            -(y * log_p + (1.0 - y) * log_q)
        })
        .sum();
    total / data.len().max(1) as f64
}

fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// Fits k to (score in centipawns, result for the side to move in [0, 1]) pairs by
/// golden-section search on ln k (the cross-entropy is unimodal in k for data whose
/// scores agree with the results on average). `None` without data.
pub fn fit_scale(data: &[(f64, f64)]) -> Option<ScaleFit> {
    if data.is_empty() {
        return None;
    }
    let f = |lnk: f64| mean_cross_entropy(data, lnk.exp());
    let (mut a, mut b) = (K_RANGE.0.ln(), K_RANGE.1.ln());
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (b - r * (b - a), a + r * (b - a));
    let (mut fc, mut fd) = (f(c), f(d));
    while b - a > 1e-6 {
        if fc < fd {
            (b, d, fd) = (d, c, fc);
            c = b - r * (b - a);
            fc = f(c);
        } else {
            (a, c, fc) = (c, d, fd);
            d = a + r * (b - a);
            fd = f(d);
        }
    }
    let k = ((a + b) / 2.0).exp();
    let mean = data.iter().map(|x| x.1).sum::<f64>() / data.len() as f64;
    let constant_loss = data.iter().map(|&(_, y)| -(y * mean.max(1e-12).ln() + (1.0 - y) * (1.0 - mean).max(1e-12).ln())).sum::<f64>() / data.len() as f64;
    Some(ScaleFit { k, positions: data.len() as u64, loss: mean_cross_entropy(data, k), constant_loss })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn policy_is_the_softmax_of_the_known_scores() {
        // Scores 0, −100 and −200 at T = 100: weights 1, e^−1, e^−2 over their sum
        // 1 + 0.367879 + 0.135335 = 1.503215; the unscored move gets no entry.
        let p = policy_target(&[(7u32, Some(Score::Cp(0))), (8, Some(Score::Cp(-100))), (9, None), (10, Some(Score::Cp(-200)))], 100.0);
        let expect = [(7u32, 0.665241f32), (8, 0.244728), (10, 0.090031)];
        assert_eq!(p.len(), 3);
        for ((i, q), (j, e)) in p.iter().zip(expect) {
            assert_eq!(*i, j);
            assert!((q - e).abs() < 1e-5, "{i}: {q} vs {e}");
        }
        assert!(policy_target::<u32>(&[(1, None)], 100.0).is_empty());
    }

    #[test]
    fn a_mate_takes_the_whole_policy_and_the_longest_defence_is_preferred() {
        let p = policy_target(&[(0u32, Some(Score::Cp(2500))), (1, Some(Score::Mate(3))), (2, Some(Score::Mate(1)))], 100.0);
        // Mate in 1 against mate in 3: 200 "centipawns" apart, e^2 : 1.
        assert!(p[0].1 < 1e-9);
        assert!((p[2].1 / p[1].1 - 2f32.exp()).abs() < 1e-3);
        let q = policy_target(&[(0u32, Some(Score::Mate(-2))), (1, Some(Score::Mate(-6)))], 100.0);
        // Being mated in 6 plies rather than 2: 400 "centipawns" better, e^4 : 1.
        assert!((q[1].1 / q[0].1 - 4f32.exp()).abs() < 0.05, "being mated later is better: {q:?}");
    }

    #[test]
    fn value_is_the_logistic_expectation() {
        // tanh(s / 2k): s = k ln 3 gives P(win) = 3/4, so W − L = 1/2.
        let k = 200.0;
        assert!((value_of(Score::Cp((k * 3f64.ln()).round() as i32), k) - 0.5).abs() < 2e-3);
        assert_eq!(value_of(Score::Cp(0), k), 0.0);
        assert_eq!(value_of(Score::Mate(5), k), 1.0);
        assert_eq!(value_of(Score::Mate(-2), k), -1.0);
    }

    #[test]
    fn the_fit_recovers_the_scale_that_generated_the_results() {
        // Results drawn from the logistic model itself at k = 300: the maximum-likelihood
        // k of 40,000 positions is within a few percent of it (its standard error here is
        // about 1.5%), and it predicts better than the constant.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let true_k = 300.0;
        let data: Vec<(f64, f64)> = (0..40_000)
            .map(|_| {
                let s: f64 = rng.random_range(-1500.0..1500.0);
                let p = 1.0 / (1.0 + (-s / true_k).exp());
                (s, if rng.random::<f64>() < p { 1.0 } else { 0.0 })
            })
            .collect();
        let fit = fit_scale(&data).unwrap();
        assert!((fit.k / true_k - 1.0).abs() < 0.06, "k = {}", fit.k);
        assert!(fit.loss < fit.constant_loss);
        assert!(fit_scale(&[]).is_none());
    }
}
