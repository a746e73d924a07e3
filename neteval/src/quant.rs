//! The int8 network as a search evaluator: positions from real play to calibrate it on, and
//! the agreement of its choices with the f32 network's.
//!
//! Positions come from games the f32 network plays against itself from the variant's start,
//! each move drawn from its policy over the legal moves (temperature 1) with a seeded
//! generator: the same seed gives the same positions on every machine that computes the same
//! f32 network outputs.

use crate::{check_dir_tag, LoadError, NetEvaluator};
use encoding::InputPlanes;
use model::InferenceNet;
pub use model::Precision;
use rules::{Game, Position, Variant};
use search::{EvalRequest, Evaluator};
use std::collections::HashSet;
use std::path::Path;

/// Positions the int8 network is calibrated on when a player asks for it.
pub const CALIBRATION_POSITIONS: usize = 2048;
/// Their seed (the held-out agreement positions use others: see `quant-agreement`).
pub const CALIBRATION_SEED: u64 = 1;

/// SplitMix64: a tiny seeded generator (this crate has no `rand`).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// `count` distinct positions (by SFEN) from games `eval` plays against itself from the
/// variant's start, 16 games at a time, moves drawn from its priors, each position kept with
/// probability 1/4 (so that even a small sample spans whole games, not only their openings);
/// finished positions are left out (they have no moves to choose).
pub fn play_positions(eval: &NetEvaluator, variant: &'static Variant, count: usize, seed: u64) -> Vec<Game> {
    const GAMES: usize = 16;
    const KEEP: f32 = 0.25;
    let mut rng = SplitMix(seed);
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(count);
    let mut games: Vec<Game> = (0..GAMES).map(|_| Game::new(Position::start(variant), None)).collect();
    while out.len() < count {
        let requests: Vec<EvalRequest<Game>> = games.iter().map(|g| EvalRequest { state: g.clone(), moves: g.legal_moves().to_vec() }).collect();
        let evals = eval.evaluate(&requests);
        for ((game, req), ev) in games.iter_mut().zip(requests).zip(evals) {
            if out.len() < count && rng.unit() < KEEP && seen.insert(game.position().to_sfen()) {
                out.push(game.clone());
            }
            // Draw a move by the priors (the last one if rounding leaves some mass over).
            let mut u = rng.unit();
            let mut pick = req.moves.len() - 1;
            for (i, p) in ev.priors.iter().enumerate() {
                if u < *p {
                    pick = i;
                    break;
                }
                u -= p;
            }
            game.play_unchecked(req.moves[pick]);
            if game.is_over() || game.legal_moves().is_empty() {
                *game = Game::new(Position::start(variant), None);
            }
        }
    }
    out
}

/// The network inputs of `games`, `[games, planes, H, W]`.
pub fn encode(variant: &'static Variant, games: &[Game]) -> Vec<f32> {
    let planes = InputPlanes::new(variant);
    let c = planes.size();
    let mut input = vec![0.0f32; games.len() * c];
    for (g, out) in games.iter().zip(input.chunks_exact_mut(c)) {
        planes.encode(g.position(), g.repetitions(), g.ply(), g.max_plies(), out);
    }
    input
}

/// `net` with its tower in `precision`; for int8, calibrated on [`CALIBRATION_POSITIONS`]
/// positions the f32 network plays from the start ([`CALIBRATION_SEED`]). On a CPU without
/// AVX2 or AVX-512 VNNI the int8 request keeps f32 (the returned net's `precision()` says).
pub fn with_precision(net: InferenceNet, variant: &'static Variant, precision: Precision) -> Result<InferenceNet, String> {
    if precision == Precision::F32 {
        return Ok(net.without_int8());
    }
    let calibration = calibration_inputs(&net, variant)?;
    let net = net.with_precision(precision, &calibration).map_err(|e| e.to_string())?;
    if net.precision() != precision {
        tracing::warn!("{precision} requested, but this CPU has no int8 kernel: the network runs in {}", net.precision());
    }
    Ok(net)
}

/// [`with_precision`]'s int8 on a chosen kernel (an error if this CPU cannot run it): how a
/// CPU with both kernels measures the one a CPU with AVX2 alone would run.
pub fn with_int8_on(net: InferenceNet, variant: &'static Variant, kernel: model::QuantKernel) -> Result<InferenceNet, String> {
    let calibration = calibration_inputs(&net, variant)?;
    net.with_int8_on(&calibration, kernel).map_err(|e| e.to_string())
}

/// The encoded positions int8 is calibrated on: [`CALIBRATION_POSITIONS`] the f32 network
/// plays from the start ([`CALIBRATION_SEED`]).
fn calibration_inputs(net: &InferenceNet, variant: &'static Variant) -> Result<Vec<f32>, String> {
    let f32_eval = NetEvaluator::new(net.clone().without_int8(), variant)?;
    Ok(encode(variant, &play_positions(&f32_eval, variant, CALIBRATION_POSITIONS, CALIBRATION_SEED)))
}

/// [`crate::load`] with the tower in `precision` (see [`with_precision`]).
pub fn load_with_precision(dir: &Path, variant: &'static Variant, precision: Precision) -> Result<NetEvaluator, LoadError> {
    if precision == Precision::F32 {
        return crate::load(dir, variant);
    }
    check_dir_tag(dir, variant)?;
    let mismatch = |problem: String| LoadError::Mismatch { dir: dir.to_path_buf(), problem };
    let net = with_precision(model::load_inference(dir)?, variant, precision).map_err(mismatch)?;
    NetEvaluator::new(net, variant).map_err(mismatch)
}

/// How far two evaluators' answers lie apart on the same positions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agreement {
    pub positions: usize,
    /// Positions whose most probable move is the same.
    pub same_top1: usize,
    /// Mean and largest |value − value'| (values in [−1, 1]).
    pub mean_abs_value: f64,
    pub max_abs_value: f64,
    /// Mean total-variation distance of the priors (½ Σ |p − p'|).
    pub mean_policy_tv: f64,
}

impl Agreement {
    pub fn top1(&self) -> f64 {
        self.same_top1 as f64 / self.positions.max(1) as f64
    }
}

/// Compares `a` and `b` on `games`, in batches of 256.
pub fn agreement(a: &NetEvaluator, b: &NetEvaluator, games: &[Game]) -> Agreement {
    let mut r = Agreement::default();
    let (mut sum_dv, mut sum_tv) = (0.0, 0.0);
    for chunk in games.chunks(256) {
        let requests: Vec<EvalRequest<Game>> = chunk.iter().map(|g| EvalRequest { state: g.clone(), moves: g.legal_moves().to_vec() }).collect();
        for (x, y) in a.evaluate(&requests).iter().zip(b.evaluate(&requests)) {
            let argmax = |p: &[f32]| p.iter().enumerate().fold((0, f32::NEG_INFINITY), |m, (i, &v)| if v > m.1 { (i, v) } else { m }).0;
            r.positions += 1;
            r.same_top1 += usize::from(argmax(&x.priors) == argmax(&y.priors));
            let dv = f64::from((x.value - y.value).abs());
            sum_dv += dv;
            r.max_abs_value = r.max_abs_value.max(dv);
            sum_tv += 0.5 * x.priors.iter().zip(&y.priors).map(|(p, q)| f64::from((p - q).abs())).sum::<f64>();
        }
    }
    r.mean_abs_value = sum_dv / r.positions.max(1) as f64;
    r.mean_policy_tv = sum_tv / r.positions.max(1) as f64;
    r
}
