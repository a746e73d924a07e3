//! SPSA — simultaneous perturbation stochastic approximation — in the form fishtest runs it
//! for engine parameters.
//!
//! References: J. C. Spall, "Implementation of the Simultaneous Perturbation Algorithm for
//! Stochastic Optimization", IEEE Trans. Aerospace and Electronic Systems 34(3), 1998
//! (the gain sequences and α = 0.602, γ = 0.101); fishtest's `spsa_handler.py` (the
//! parameter rows and the update from game results).
//!
//! Each parameter i is a row `name, start, min, max, c_end, r_end`. With N game pairs in
//! all and A = `a_ratio` · N:
//!
//! ```text
//! c_i = c_end_i · N^γ                     c_{k,i} = c_i / k^γ
//! a_i = r_end_i · c_end_i² · (A + N)^α     a_{k,i} = a_i / (A + k)^α
//! ```
//!
//! so the perturbation is `c_end` and the step per unit of result is `r_end · c_end` at the
//! last pair. Iteration k (1-based, counted in game pairs) draws flips Δ_i ∈ {−1, +1},
//! plays θ⁺ = clip(θ + c_k Δ) against θ⁻ = clip(θ − c_k Δ) (or each against a fixed
//! opponent), and with `result` = wins − losses of θ⁺ over the games played:
//!
//! ```text
//! θ_i ← clip(θ_i + (a_{k,i} / c_{k,i}) · result · Δ_i)
//! ```
//!
//! A batch of n pairs played at one θ is one update and advances k by n, as a worker's
//! report does in fishtest (its gains are those of the batch's first pair).

use rand::Rng;
use serde::{Deserialize, Serialize};

/// Spall's recommended decay exponents (fishtest's defaults).
pub const ALPHA: f64 = 0.602;
pub const GAMMA: f64 = 0.101;
/// A as a fraction of the pairs (fishtest: 10%).
pub const A_RATIO: f64 = 0.1;

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("parameter '{row}': {problem}")]
pub struct ParamError {
    pub row: String,
    pub problem: String,
}

/// One tuned parameter: fishtest's row `name, start, min, max, c_end, r_end`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// The player spec key it sets (`board.copper`, `c_puct`, `option.Hash`, …).
    pub name: String,
    pub start: f64,
    pub min: f64,
    pub max: f64,
    /// Perturbation at the last pair, in the parameter's units.
    pub c_end: f64,
    /// Learning rate at the last pair (the step is `r_end · c_end` per unit of result).
    pub r_end: f64,
}

impl Param {
    /// Parses `name, start, min, max, c_end, r_end` (commas, optional spaces).
    pub fn parse(row: &str) -> Result<Param, ParamError> {
        let err = |problem: String| ParamError { row: row.to_string(), problem };
        let cells: Vec<&str> = row.split(',').map(str::trim).collect();
        if cells.len() != 6 {
            return Err(err(format!("expected 6 fields (name, start, min, max, c_end, r_end), found {}", cells.len())));
        }
        if cells[0].is_empty() || cells[0].contains(char::is_whitespace) || cells[0].contains('=') {
            return Err(err(format!("'{}' is not a spec key", cells[0])));
        }
        let mut x = [0.0; 5];
        for (i, (cell, what)) in cells[1..].iter().zip(["start", "min", "max", "c_end", "r_end"]).enumerate() {
            x[i] = cell.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| err(format!("{what} '{cell}' is not a number")))?;
        }
        let p = Param { name: cells[0].to_string(), start: x[0], min: x[1], max: x[2], c_end: x[3], r_end: x[4] };
        if p.min >= p.max {
            return Err(err(format!("min {} must be below max {}", p.min, p.max)));
        }
        if p.start < p.min || p.start > p.max {
            return Err(err(format!("start {} is outside [{}, {}]", p.start, p.min, p.max)));
        }
        if p.c_end <= 0.0 || p.r_end <= 0.0 {
            return Err(err("c_end and r_end must be positive".into()));
        }
        Ok(p)
    }

    /// The row it was parsed from (up to number formatting).
    pub fn row(&self) -> String {
        format!("{}, {}, {}, {}, {}, {}", self.name, self.start, self.min, self.max, self.c_end, self.r_end)
    }

    fn clip(&self, x: f64) -> f64 {
        x.clamp(self.min, self.max)
    }
}

/// The gain schedule's constants.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// N: game pairs in the whole run.
    pub pairs: u64,
    pub alpha: f64,
    pub gamma: f64,
    /// A / N.
    pub a_ratio: f64,
}

impl Schedule {
    pub fn new(pairs: u64) -> Schedule {
        Schedule { pairs, alpha: ALPHA, gamma: GAMMA, a_ratio: A_RATIO }
    }

    fn big_a(&self) -> f64 {
        self.a_ratio * self.pairs as f64
    }

    /// c_{k,i} at 1-based pair `k`.
    pub fn c(&self, p: &Param, k: u64) -> f64 {
        let n = self.pairs.max(1) as f64;
        p.c_end * n.powf(self.gamma) / (k.max(1) as f64).powf(self.gamma)
    }

    /// a_{k,i} at 1-based pair `k`.
    pub fn a(&self, p: &Param, k: u64) -> f64 {
        let n = self.pairs.max(1) as f64;
        p.r_end * p.c_end * p.c_end * (self.big_a() + n).powf(self.alpha) / (self.big_a() + k.max(1) as f64).powf(self.alpha)
    }
}

/// The perturbation played in one update.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// Pairs done before it (its gains are those of pair `k + 1`).
    pub k: u64,
    pub flips: Vec<i8>,
    pub c: Vec<f64>,
    pub plus: Vec<f64>,
    pub minus: Vec<f64>,
}

/// The optimiser's whole state: enough to resume.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spsa {
    pub params: Vec<Param>,
    pub schedule: Schedule,
    pub theta: Vec<f64>,
    /// Game pairs done.
    pub k: u64,
}

impl Spsa {
    pub fn new(params: Vec<Param>, schedule: Schedule) -> Spsa {
        let theta = params.iter().map(|p| p.start).collect();
        Spsa { params, schedule, theta, k: 0 }
    }

    pub fn done(&self) -> bool {
        self.k >= self.schedule.pairs
    }

    /// Draws the flips for the next update and the two parameter vectors to play.
    pub fn probe(&self, rng: &mut impl Rng) -> Probe {
        let k1 = self.k + 1;
        let flips: Vec<i8> = self.params.iter().map(|_| if rng.random::<bool>() { 1 } else { -1 }).collect();
        let c: Vec<f64> = self.params.iter().map(|p| self.schedule.c(p, k1)).collect();
        let shifted = |sign: f64| -> Vec<f64> { self.params.iter().enumerate().map(|(i, p)| p.clip(self.theta[i] + sign * c[i] * flips[i] as f64)).collect() };
        Probe { k: self.k, plus: shifted(1.0), minus: shifted(-1.0), flips, c }
    }

    /// Applies the result of `pairs` game pairs played at `probe`: `result` is wins − losses
    /// of θ⁺ over them.
    pub fn update(&mut self, probe: &Probe, result: f64, pairs: u64) {
        let k1 = probe.k + 1;
        for (i, p) in self.params.iter().enumerate() {
            let step = self.schedule.a(p, k1) / probe.c[i] * result * probe.flips[i] as f64;
            self.theta[i] = p.clip(self.theta[i] + step);
        }
        self.k = probe.k + pairs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn param(row: &str) -> Param {
        Param::parse(row).unwrap()
    }

    #[test]
    fn rows_parse_and_bad_rows_say_what_is_wrong() {
        let p = param("board.copper, 420, 100, 900, 30, 0.002");
        assert_eq!((p.name.as_str(), p.start, p.min, p.max, p.c_end, p.r_end), ("board.copper", 420.0, 100.0, 900.0, 30.0, 0.002));
        assert_eq!(Param::parse(&p.row()).unwrap(), p);
        for (row, says) in [
            ("a, 1, 0, 2, 1", "expected 6 fields"),
            ("a, x, 0, 2, 1, 1", "start 'x' is not a number"),
            ("a, 1, 2, 0, 1, 1", "must be below max"),
            ("a, 5, 0, 2, 1, 1", "outside"),
            ("a, 1, 0, 2, 0, 1", "must be positive"),
            ("a=1, 1, 0, 2, 1, 1", "not a spec key"),
            ("a, nan, 0, 2, 1, 1", "not a number"),
        ] {
            let e = Param::parse(row).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains(row), "{row}: {e}");
        }
    }

    #[test]
    fn gains_end_at_c_end_and_r_end() {
        let p = param("x, 0, -100, 100, 4, 0.01");
        let s = Schedule::new(1000);
        // Hand-derived: at k = N, c_k = c_end and a_k = r_end · c_end².
        assert!((s.c(&p, 1000) - 4.0).abs() < 1e-12);
        assert!((s.a(&p, 1000) - 0.01 * 16.0).abs() < 1e-12);
        // At k = 1: c = 4 · 1000^0.101 = 8.0364…; a = 0.16 · (1100 / 101)^0.602 = 0.67365…
        assert!((s.c(&p, 1) - 8.03637).abs() < 1e-4, "{}", s.c(&p, 1));
        assert!((s.a(&p, 1) - 0.673654).abs() < 1e-5, "{}", s.a(&p, 1));
    }

    #[test]
    fn an_update_moves_each_parameter_by_its_gain_towards_the_winner() {
        let mut s = Spsa::new(vec![param("x, 0, -100, 100, 4, 0.01"), param("y, 99, -100, 100, 4, 0.01")], Schedule::new(1000));
        let probe = Probe { k: 0, flips: vec![1, -1], c: vec![8.0, 8.0], plus: vec![8.0, 91.0], minus: vec![-8.0, 100.0] };
        s.update(&probe, 2.0, 1);
        let a1 = Schedule::new(1000).a(&s.params[0], 1);
        // θ⁺ won both games: x moves up (its flip is +1), y down, by a/c · 2.
        assert!((s.theta[0] - a1 / 8.0 * 2.0).abs() < 1e-12);
        assert!((s.theta[1] - (99.0 - a1 / 8.0 * 2.0)).abs() < 1e-12);
        assert_eq!(s.k, 1);
        // Clipped at the bounds.
        let probe = Probe { k: 1, flips: vec![1, 1], c: vec![8.0, 8.0], plus: vec![0.0; 2], minus: vec![0.0; 2] };
        s.update(&probe, 1e9, 3);
        assert_eq!((s.theta[0], s.theta[1], s.k), (100.0, 100.0, 4));
    }

    /// Expected score of θ⁺ against θ⁻ when a player's Elo is −scale·Σ((θ_i − opt_i)/width_i)².
    fn simulated_pair(plus: &[f64], minus: &[f64], opt: &[f64], rng: &mut impl Rng) -> f64 {
        let elo = |t: &[f64]| -> f64 { -200.0 * t.iter().zip(opt).map(|(x, o)| ((x - o) / 100.0).powi(2)).sum::<f64>() };
        let p = 1.0 / (1.0 + 10f64.powf(-(elo(plus) - elo(minus)) / 400.0));
        // Two games, no draws: wins − losses.
        (0..2).map(|_| if rng.random::<f64>() < p { 1.0 } else { -1.0 }).sum()
    }

    #[test]
    fn spsa_finds_a_known_optimum_of_a_simulated_match() {
        // Two parameters whose Elo peaks at (250, −40): 200 Elo lost 100 units away. Every
        // one of 20 seeds must end within 25 units of the optimum on each axis.
        let opt = [250.0, -40.0];
        for seed in 0..20 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let params = vec![param("x, 0, -500, 500, 20, 0.05"), param("y, 150, -500, 500, 20, 0.05")];
            let mut s = Spsa::new(params, Schedule::new(4000));
            while !s.done() {
                let probe = s.probe(&mut rng);
                let r = simulated_pair(&probe.plus, &probe.minus, &opt, &mut rng);
                s.update(&probe, r, 1);
            }
            for (t, o) in s.theta.iter().zip(opt) {
                assert!((t - o).abs() < 25.0, "seed {seed}: θ = {:?}", s.theta);
            }
        }
    }
}
