//! The policy softmax temperature: each node's priors become π^(1/T), renormalised.

use search::toy::Bandit;
use search::{EvalRequest, Evaluation, FnEvaluator, Search, SearchConfig};

fn root_priors(priors: &[f32], temperature: f32) -> Vec<f32> {
    let priors = priors.to_vec();
    let ev = FnEvaluator(move |_: &EvalRequest<Bandit>| Evaluation { priors: priors.clone(), value: 0.0 });
    let cfg = SearchConfig { policy_temperature: temperature, ..SearchConfig::puct(4).for_evaluation() };
    let mut s = Search::with_seed(Bandit::new(vec![0.0, 0.0, 0.0]), cfg, 1);
    s.run(&ev);
    s.result().priors
}

fn assert_close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-6, "{a:?} vs {b:?}");
    }
}

/// T = 2: √0.64 = 0.8, √0.36 = 0.6, a zero prior stays zero: [0.8, 0.6, 0] / 1.4.
#[test]
fn a_temperature_of_two_takes_the_square_root_of_the_priors() {
    assert_close(&root_priors(&[0.64, 0.36, 0.0], 2.0), &[0.8 / 1.4, 0.6 / 1.4, 0.0]);
}

/// T = 1 only renormalises; T = 0.5 squares: [0.25, 0.0625] / 0.3125 = [0.8, 0.2].
#[test]
fn a_temperature_of_one_keeps_the_priors_and_below_one_sharpens_them() {
    assert_close(&root_priors(&[0.32, 0.18, 0.0], 1.0), &[0.64, 0.36, 0.0]);
    assert_close(&root_priors(&[0.5, 0.25, 0.0], 0.5), &[0.8, 0.2, 0.0]);
}
