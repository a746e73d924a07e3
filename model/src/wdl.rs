//! Win/draw/loss value representation.
//!
//! # Why WDL instead of a single scalar
//!
//! The value head predicts three logits — win, draw, loss for the side to move — rather
//! than one `tanh` scalar:
//!
//! - Draws are common in shogi variants: fourfold repetition (sennichite), impasse and
//!   the self-play maximum game length all end games as draws, and small variants such as
//!   minishogi or Pocket Shogi Copper draw often. A scalar target of 0 cannot tell "sure
//!   draw" from "coin flip between win and loss"; WDL can.
//! - Cross-entropy against a categorical target is a richer, better-conditioned training
//!   signal than mean squared error on a scalar, and yields a calibrated draw probability
//!   that search or match adjudication can use (e.g. contempt, draw acceptance).
//! - The scalar value that search needs is recovered as `P(win) - P(loss)` in `[-1, 1]`.

/// Index of each outcome in the value logits `[batch, 3]`.
pub const WIN: usize = 0;
/// Index of the draw logit.
pub const DRAW: usize = 1;
/// Index of the loss logit.
pub const LOSS: usize = 2;

/// Outcome probabilities for the side to move.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wdl {
    /// P(win).
    pub win: f32,
    /// P(draw).
    pub draw: f32,
    /// P(loss).
    pub loss: f32,
}

impl Wdl {
    /// Softmax of `[win, draw, loss]` logits.
    pub fn from_logits(logits: [f32; 3]) -> Self {
        let m = logits[0].max(logits[1]).max(logits[2]);
        let e = logits.map(|l| (l - m).exp());
        let s = e[0] + e[1] + e[2];
        Self { win: e[WIN] / s, draw: e[DRAW] / s, loss: e[LOSS] / s }
    }

    /// Scalar value `P(win) - P(loss)` in `[-1, 1]`.
    pub fn value(&self) -> f32 {
        self.win - self.loss
    }

    /// The same outcome seen from the opponent (win and loss swapped).
    pub fn flip(&self) -> Self {
        Self { win: self.loss, draw: self.draw, loss: self.win }
    }

    /// Decodes a flat `[batch, 3]` logits buffer.
    pub fn batch_from_logits(logits: &[f32]) -> Vec<Self> {
        logits.chunks_exact(3).map(|c| Self::from_logits([c[0], c[1], c[2]])).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_and_value() {
        let w = Wdl::from_logits([0.0, 0.0, 0.0]);
        assert!((w.win - 1.0 / 3.0).abs() < 1e-6);
        assert!(w.value().abs() < 1e-6);
        let w = Wdl::from_logits([100.0, 0.0, 0.0]);
        assert!((w.value() - 1.0).abs() < 1e-6);
        assert!((w.flip().value() + 1.0).abs() < 1e-6);
        assert_eq!(Wdl::batch_from_logits(&[0.0; 6]).len(), 2);
    }
}
