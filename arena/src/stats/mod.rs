//! Match and tournament statistics, as chess and shogi engine testers know them from
//! cutechess-cli, fastchess, fishtest, Ordo and BayesElo. Everything here is a pure
//! function of counts, or a small serde-serialisable struct. One module per family, each
//! with its formulas and references at the top:
//!
//! - [`elo`]: the logistic Elo model, W/D/L (trinomial) and game-pair (pentanomial)
//!   counts with their intervals and LOS;
//! - [`sprt`]: fishtest's generalised sequential probability ratio test;
//! - [`ratings`]: Bradley–Terry rating lists fitted by maximum likelihood (Ordo, BayesElo),
//!   with the first-move advantage as an optional parameter;
//! - [`trend`]: a straight line through rated points (Elo against CPU-hours), weighted by
//!   their errors and their correlations, with Student's t where the points scatter more
//!   than their errors;
//! - [`special`]: the error function and the normal quantile they rest on.

pub mod elo;
pub mod ratings;
pub mod special;
pub mod sprt;
pub mod trend;

pub use elo::{elo_from_score, score_from_elo, wilson_interval, z_for_confidence, Pentanomial, Trinomial, ELO_PER_NAT, SCORE_CLAMP};
pub use ratings::{
    fit_ratings, fit_ratings_with_colour, fit_ratings_with_covariance, ColouredGame, FirstMoveAdvantage, PairResult, Rating, RatingList, RATING_CONFIDENCE,
    VIRTUAL_DRAWS_PER_PAIRING,
};
pub use special::{erf, erfc, normal_cdf, normal_quantile};
pub use sprt::{max_likelihood_distribution, Sprt, SprtDecision};
pub use trend::{fit_line, fit_line_correlated, student_t_quantile, LineFit};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("{0} is not a game score (expected 0, 0.5 or 1)")]
    NotAGameScore(f64),
}
