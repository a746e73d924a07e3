//! A leaf value that mixes the network's with a quiescence search's (`qmix=λ` of a
//! checkpoint player).
//!
//! The network's value misjudges positions where a piece hangs; a capture-only search
//! does not. As AlphaGo mixed its value network with rollouts at every leaf,
//! `V = (1 − λ)·v_net + λ·v_q` (Silver et al., Nature 529, 2016, "Searching with policy
//! and value networks", λ = 0.5 there), where `v_q = 2·P − 1` and `P = 1 / (1 + e^(−q/k))`
//! maps the alpha-beta baseline's quiescence score `q` (centipawns, side to move) to a
//! win probability on the logistic scale `k` (`qscale=K`; the teacher stage fits this
//! scale to game results and writes it to `teacher/fit.json`). Priors stay the
//! network's. Mate scores map to ±1.

use crate::baseline::{AlphaBeta, MATE};
use rules::{Game, Variant};
use search::{EvalRequest, Evaluation, Evaluator};
use std::sync::{Arc, Mutex};

/// Default logistic scale of `qscale`, centipawns: what the loop's `selfplay.qscale`
/// defaults to and every measured player used (it played at least as well as the
/// teacher's fitted 3,000 cp: docs/ABLATIONS.md).
pub(crate) const DEFAULT_QSCALE_CP: f64 = 1000.0;

pub struct QuiescenceMix {
    inner: Arc<dyn Evaluator<Game>>,
    variant: &'static Variant,
    lambda: f32,
    scale_cp: f64,
    /// Searchers for the threads that call at once (each batch takes one).
    searchers: Mutex<Vec<AlphaBeta>>,
}

impl QuiescenceMix {
    pub fn new(inner: Arc<dyn Evaluator<Game>>, variant: &'static Variant, lambda: f32, scale_cp: f64) -> QuiescenceMix {
        QuiescenceMix { inner, variant, lambda: lambda.clamp(0.0, 1.0), scale_cp: scale_cp.max(1.0), searchers: Mutex::new(Vec::new()) }
    }

    /// A quiescence score as a value in [−1, 1] for the side to move.
    pub fn value_of(&self, q: i32) -> f32 {
        if q.abs() >= MATE - 10_000 {
            return q.signum() as f32;
        }
        let p = 1.0 / (1.0 + (-(q as f64) / self.scale_cp).exp());
        (2.0 * p - 1.0) as f32
    }
}

impl Evaluator<Game> for QuiescenceMix {
    fn evaluate(&self, batch: &[EvalRequest<Game>]) -> Vec<Evaluation> {
        let mut out = self.inner.evaluate(batch);
        let mut ab = self.searchers.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_else(|| AlphaBeta::new(self.variant, 1));
        for (e, r) in out.iter_mut().zip(batch) {
            // A request's moves are its state's legal moves (the search generated them to
            // expand the leaf): the quiescence search's root takes its captures from them.
            let q = search::leafprof::time(search::leafprof::Part::Quiescence, || ab.quiescence_among(r.state.position(), &r.moves));
            e.value = (1.0 - self.lambda) * e.value + self.lambda * self.value_of(q);
        }
        self.searchers.lock().unwrap_or_else(|e| e.into_inner()).push(ab);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use search::UniformEvaluator;

    #[test]
    fn the_mixed_value_sees_a_hanging_rook() {
        // White's Rook on 5d hangs to Black's Rook on 5e: a capture-only search finds it.
        let v = Variant::builtin("shogi").unwrap();
        let game = Game::new(rules::Position::from_sfen(v, "4k4/9/9/4r4/4R4/9/9/9/4K4 b - 1").unwrap(), None);
        let moves = game.legal_moves().to_vec();
        let mix = QuiescenceMix::new(Arc::new(UniformEvaluator), v, 0.5, 1000.0);
        let e = mix.evaluate(&[EvalRequest { state: game.clone(), moves: moves.clone() }]);
        let q = AlphaBeta::new(v, 1).quiescence(game.position());
        assert!(q >= 900, "the rook is won: {q}");
        // Hand-computed: uniform value 0, q → 2/(1 + e^(−q/1000)) − 1, halved.
        let expected = 0.5 * (2.0 / (1.0 + (-(q as f64) / 1000.0).exp()) - 1.0);
        assert!((e[0].value as f64 - expected).abs() < 1e-6, "{} vs {expected}", e[0].value);
        assert_eq!(e[0].priors, Evaluation::uniform(moves.len(), 0.0).priors, "priors stay the inner evaluator's");
        assert_eq!((mix.value_of(MATE - 3), mix.value_of(-(MATE - 3))), (1.0, -1.0));
    }
}
