//! How well the value head predicts the results of held-out games: its WDL cross-entropy
//! beside the best constant prediction (the held-out results' own frequencies, which a
//! head that learned nothing about positions could still reach), by phase of the game,
//! and a reliability table of predicted value against the actual result.

use serde::{Deserialize, Serialize};

/// The value head on held-out positions.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Calibration {
    pub all: PhaseCalibration,
    /// Opening, middlegame and endgame: the first, middle and last third of each game's
    /// positions.
    pub phases: Vec<PhaseCalibration>,
    /// Positions by predicted value (P(win) − P(loss)) in ten bins over [−1, 1].
    pub bins: Vec<CalibrationBin>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct PhaseCalibration {
    pub name: String,
    pub positions: usize,
    /// Mean WDL cross-entropy of the head's predictions (nats).
    pub value_loss: f64,
    /// Mean WDL cross-entropy of the best constant prediction for these positions: the
    /// entropy of their results' frequencies. A head above this predicts worse than
    /// knowing nothing about the position.
    pub constant_value_loss: f64,
    /// Mean predicted value and mean actual result (+1 win, 0 draw, −1 loss for the side
    /// to move).
    pub mean_predicted: f64,
    pub mean_result: f64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct CalibrationBin {
    pub lo: f64,
    pub hi: f64,
    pub positions: usize,
    pub mean_predicted: f64,
    pub mean_result: f64,
}

pub const PHASES: [&str; 3] = ["opening", "middlegame", "endgame"];
const BINS: usize = 10;

/// One held-out position: the head's WDL for the side to move, the game's result for
/// that side (+1, 0, −1), and how far through its game the position is, in [0, 1).
#[derive(Clone, Copy, Debug)]
pub struct Prediction {
    pub wdl: [f32; 3],
    pub result: i8,
    pub progress: f32,
}

fn phase(name: &str, preds: &[&Prediction]) -> PhaseCalibration {
    let n = preds.len();
    let mut counts = [0usize; 3];
    let (mut loss, mut predicted, mut result) = (0.0f64, 0.0f64, 0.0f64);
    for p in preds {
        let k = outcome_index(p.result);
        counts[k] += 1;
        loss -= (p.wdl[k].max(1e-7) as f64).ln();
        predicted += (p.wdl[0] - p.wdl[2]) as f64;
        result += p.result.signum() as f64;
    }
    let nf = n.max(1) as f64;
    let constant = counts.iter().filter(|&&c| c > 0).map(|&c| -(c as f64 / nf) * (c as f64 / nf).ln()).sum();
    PhaseCalibration {
        name: name.to_string(),
        positions: n,
        value_loss: loss / nf,
        constant_value_loss: constant,
        mean_predicted: predicted / nf,
        mean_result: result / nf,
    }
}

fn outcome_index(result: i8) -> usize {
    match result.signum() {
        1 => 0,
        0 => 1,
        _ => 2,
    }
}

/// The calibration of `preds`.
pub fn calibrate(preds: &[Prediction]) -> Calibration {
    let all: Vec<&Prediction> = preds.iter().collect();
    let phases = (0..3)
        .map(|i| {
            let these: Vec<&Prediction> = preds.iter().filter(|p| ((p.progress.clamp(0.0, 0.999_999) * 3.0) as usize).min(2) == i).collect();
            phase(PHASES[i], &these)
        })
        .collect();
    let bins = (0..BINS)
        .map(|b| {
            let lo = -1.0 + 2.0 * b as f64 / BINS as f64;
            let hi = lo + 2.0 / BINS as f64;
            let these: Vec<&Prediction> = preds.iter().filter(|p| bin_of((p.wdl[0] - p.wdl[2]) as f64) == b).collect();
            let s = phase("", &these);
            CalibrationBin { lo, hi, positions: s.positions, mean_predicted: s.mean_predicted, mean_result: s.mean_result }
        })
        .collect();
    Calibration { all: phase("all", &all), phases, bins }
}

fn bin_of(value: f64) -> usize {
    (((value + 1.0) / 2.0 * BINS as f64).floor().max(0.0) as usize).min(BINS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(wdl: [f32; 3], result: i8, progress: f32) -> Prediction {
        Prediction { wdl, result, progress }
    }

    #[test]
    fn losses_and_constant_baseline_by_hand() {
        // Two wins and two losses; the head says (0.5, 0, 0.5) everywhere. Its loss is
        // −ln 0.5 = ln 2 at every position; the results' frequencies (½, 0, ½) have
        // entropy ln 2 too: no better than constant.
        let preds = vec![p([0.5, 0.0, 0.5], 1, 0.1), p([0.5, 0.0, 0.5], -1, 0.5), p([0.5, 0.0, 0.5], 1, 0.9), p([0.5, 0.0, 0.5], -1, 0.95)];
        let c = calibrate(&preds);
        let ln2 = 2f64.ln();
        assert!((c.all.value_loss - ln2).abs() < 1e-6 && (c.all.constant_value_loss - ln2).abs() < 1e-12);
        assert_eq!(c.all.positions, 4);
        assert_eq!(c.phases.iter().map(|x| x.positions).collect::<Vec<_>>(), vec![1, 1, 2]);
        // The endgame third holds a win and a loss: constant loss ln 2; the opening one
        // win only: constant loss 0, while the head pays ln 2 there.
        assert!((c.phases[2].constant_value_loss - ln2).abs() < 1e-12);
        assert_eq!(c.phases[0].constant_value_loss, 0.0);
        assert!((c.phases[0].value_loss - ln2).abs() < 1e-6);
        assert_eq!(c.all.mean_result, 0.0);
    }

    #[test]
    fn a_confident_wrong_head_is_worse_than_constant() {
        // Predicts a win at 0.9 (value 0.9 − 0.05 = 0.85) where half the games are lost:
        // loss (−ln 0.9 − ln 0.05) / 2 = (0.105361 + 2.995732) / 2 = 1.550547 > ln 2.
        let preds = vec![p([0.9, 0.05, 0.05], 1, 0.2), p([0.9, 0.05, 0.05], -1, 0.2)];
        let c = calibrate(&preds);
        assert!((c.all.value_loss - 1.550547).abs() < 1e-5, "{}", c.all.value_loss);
        assert!(c.all.value_loss > c.all.constant_value_loss);
        // Both in the bin [0.8, 1.0): mean predicted 0.85, mean result 0.
        let bin = &c.bins[9];
        assert_eq!(bin.positions, 2);
        assert!((bin.lo - 0.8).abs() < 1e-12 && (bin.mean_predicted - 0.85).abs() < 1e-6 && bin.mean_result == 0.0);
        assert_eq!(c.bins.iter().map(|b| b.positions).sum::<usize>(), 2);
    }

    #[test]
    fn bins_cover_the_ends() {
        assert_eq!(bin_of(-1.0), 0);
        assert_eq!(bin_of(-0.81), 0);
        assert_eq!(bin_of(-0.79), 1);
        assert_eq!(bin_of(0.0), 5);
        assert_eq!(bin_of(1.0), 9);
    }
}
