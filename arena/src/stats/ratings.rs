//! Rating lists: a pool of players rated at once by maximum likelihood.
//!
//! # Rating lists: Bradley–Terry maximum likelihood (Ordo, BayesElo)
//!
//! Every player `k` has a rating `r_k`, and `P(i beats j) = 1/(1 + 10^((r_j − r_i)/400))`;
//! a draw counts as half a win for each side. Writing `θ = r · ln 10 / 400` (natural
//! units), the log-likelihood of scores `s_ij` (points of `i` against `j` in `n_ij` games) is
//! `ℓ = Σ_{i<j} s_ij ln σ(θ_i − θ_j) + s_ji ln σ(θ_j − θ_i)`, with gradient
//! `∂ℓ/∂θ_i = S_i − E_i` (actual minus expected points) — so at the maximum every player's
//! expected points equal its actual points — and information matrix
//! `I = −∇²ℓ = Σ n_ij p_ij (1 − p_ij) (e_i − e_j)(e_i − e_j)ᵀ`. One player, the anchor, is
//! fixed at the requested rating, which removes its row and column and makes `I` invertible
//! for the players connected to it. [`fit_ratings`] maximises `ℓ` by Newton's method with
//! step halving (`ℓ` is concave, so this converges from zero), and reports
//! `r_k ± z · √((I⁻¹)_kk) · 400/ln 10` — the usual Wald interval, relative to the anchor (the
//! anchor's own interval has zero width). [`fit_ratings_with_covariance`] also returns
//! `I⁻¹` itself (in Elo²): the ratings share their games with the anchor, so they are
//! correlated, and a line through several of them needs that (`trend`).
//!
//! The maximum exists only when the players cannot be split into two groups one of which
//! never scored against the other (Zermelo, Ford 1957); otherwise a player with all wins
//! would have an infinite rating. Where that happens, the fit adds one virtual draw
//! ([`VIRTUAL_DRAWS_PER_PAIRING`]) to each pairing that crosses such a split — pairings
//! between different strongly connected components of the "scored at least half a point
//! against" graph — and nowhere else, so tables where the maximum exists are fitted exactly.
//! (BayesElo's default prior, expressed as virtual draws, is the same idea applied to the
//! whole table.) [`RatingList::virtual_draws`] says how many were added; a perfect score of
//! `n` wins between two players then reads as `400·log10(2n + 1)` Elo.
//!
//! Players with no chain of games to the anchor have no rating relative to it: their `elo`,
//! `lo`, `hi` are NaN (never a panic; JSON writes NaN as `null`, and [`Rating`] reads `null`
//! back as NaN). The same holds if the information matrix is singular to working precision
//! (a table so lopsided that `p(1 − p)` underflows): the intervals are NaN.
//!
//! [`fit_ratings_with_colour`] fits the same model per game with one more shared parameter,
//! the first-move advantage `η` (Black moves first in shogi):
//! `P(Black wins) = σ(θ_black − θ_white + η)`. To keep `η` finite when one colour won every

use std::cmp::Ordering;
use std::collections::{BTreeMap, VecDeque};

use rules::{Color, Outcome};
use serde::{Deserialize, Serialize};

use super::elo::{z_for_confidence, ELO_PER_NAT};

/// The confidence level of the intervals in a [`RatingList`].
pub const RATING_CONFIDENCE: f64 = 0.95;

/// Virtual draws added to a pairing that crosses a split where one side never scored (see
/// the module documentation). One draw turns `n` straight wins into a score of
/// `(n + ½)/(n + 1)`.
pub const VIRTUAL_DRAWS_PER_PAIRING: u64 = 1;

/// The games between players `i` and `j` (indices into the player list): `i`'s wins, the
/// draws, `j`'s wins. The same two players may appear in several results; they add up.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairResult {
    pub i: usize,
    pub j: usize,
    pub wins_i: u64,
    pub draws: u64,
    pub wins_j: u64,
}

/// One game with its colours, for [`fit_ratings_with_colour`]: indices into the player list.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColouredGame {
    /// The player who moved first.
    pub black: usize,
    pub white: usize,
    pub outcome: Outcome,
}

/// One player's line in a [`RatingList`]. Missing values are NaN (written as `null` in
/// JSON, and read back as NaN).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub name: String,
    /// NaN for a player with no chain of games to the anchor.
    #[serde(deserialize_with = "nan_from_null")]
    pub elo: f64,
    /// The lower end of the [`RATING_CONFIDENCE`] interval (the anchor's is its rating).
    #[serde(deserialize_with = "nan_from_null")]
    pub lo: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub hi: f64,
    /// Standard error of `elo` relative to the anchor, in Elo (0 for the anchor).
    #[serde(deserialize_with = "nan_from_null")]
    pub std_error: f64,
    /// Games actually played (virtual draws are not counted).
    pub games: u64,
    /// Points actually scored: wins plus half the draws.
    pub points: f64,
    /// `points / games`; NaN without games.
    #[serde(deserialize_with = "nan_from_null")]
    pub score: f64,
}

impl Rating {
    /// Whether the player has a rating (is connected to the anchor by games).
    pub fn is_rated(&self) -> bool {
        !self.elo.is_nan()
    }
}

/// The fitted first-move advantage: how many Elo moving first is worth.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FirstMoveAdvantage {
    pub elo: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub lo: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub hi: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub std_error: f64,
}

/// A fitted rating list, best first (players without a rating last, in input order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RatingList {
    pub entries: Vec<Rating>,
    /// The anchor's name (empty if the anchor index was out of range).
    pub anchor: String,
    pub anchor_elo: f64,
    /// The confidence level of `lo`/`hi`.
    pub confidence: f64,
    /// Virtual draws added between players to keep perfect scores finite (0 when the
    /// maximum-likelihood ratings exist as they are).
    pub virtual_draws: u64,
    /// The pairings that got them (names in player order): their rating differences
    /// rest on the virtual draws, not on a score either side conceded.
    #[serde(default)]
    pub virtual_pairings: Vec<(String, String)>,
    /// Results or games left out because an index was out of range or a player was paired
    /// with itself.
    pub skipped_results: u64,
    /// Whether Newton's method met its tolerance (it always should; `false` flags a
    /// numerically hopeless table, or an anchor out of range).
    pub converged: bool,
    /// Only from [`fit_ratings_with_colour`], when the anchor's group has games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_move_advantage: Option<FirstMoveAdvantage>,
}

impl RatingList {
    pub fn get(&self, name: &str) -> Option<&Rating> {
        self.entries.iter().find(|r| r.name == name)
    }
}

/// serde_json writes NaN as `null`; read it back as NaN rather than failing.
fn nan_from_null<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

/// Fits Bradley–Terry ratings by maximum likelihood (see the module documentation), with
/// `players[anchor]` fixed at `anchor_elo`, and [`RATING_CONFIDENCE`] intervals from the
/// inverse information matrix. Players with no chain of games to the anchor get NaN.
/// Results naming a player out of range, or a player against itself, are skipped and
/// counted in [`RatingList::skipped_results`]; an anchor out of range rates nobody.
pub fn fit_ratings(players: &[String], results: &[PairResult], anchor: usize, anchor_elo: f64) -> RatingList {
    fit_ratings_with_covariance(players, results, anchor, anchor_elo).0
}

/// [`fit_ratings`], with the covariance of the ratings: `c[i][j]` in Elo², by index into
/// `players` (the anchor's row and column are 0; a player without a rating has NaN). The
/// ratings of one list share their games with the anchors, so they are correlated: a
/// difference between two players is known to `√(c_ii + c_jj − 2c_ij)`, often far better
/// than their intervals relative to the anchor say.
pub fn fit_ratings_with_covariance(players: &[String], results: &[PairResult], anchor: usize, anchor_elo: f64) -> (RatingList, Vec<Vec<f64>>) {
    let tallies: Vec<Tally> = results
        .iter()
        .map(|r| Tally { plus: r.i, minus: r.j, coloured: false, games: r.wins_i + r.draws + r.wins_j, half_points: 2 * r.wins_i + r.draws })
        .collect();
    fit(players, &tallies, anchor, anchor_elo, false)
}

/// Like [`fit_ratings`], from individual games, fitting besides the ratings one shared
/// first-move advantage `η` (in Elo): `P(Black wins) = 1/(1 + 10^((r_white − r_black −
/// η)/400))`. One virtual drawn game with `η` applying keeps `η` finite when one colour
/// won everything; its pull is that of one game among all of them.
pub fn fit_ratings_with_colour(players: &[String], games: &[ColouredGame], anchor: usize, anchor_elo: f64) -> RatingList {
    let tallies: Vec<Tally> = games
        .iter()
        .map(|g| Tally {
            plus: g.black,
            minus: g.white,
            coloured: true,
            games: 1,
            half_points: match g.outcome {
                Outcome::Win(Color::Black) => 2,
                Outcome::Draw => 1,
                Outcome::Win(Color::White) => 0,
            },
        })
        .collect();
    fit(players, &tallies, anchor, anchor_elo, true).0
}

/// Games between `plus` and `minus` with `plus`'s points, in half points (exact).
#[derive(Copy, Clone, Debug)]
struct Tally {
    plus: usize,
    minus: usize,
    /// Whether `plus` moved first in all of them (the advantage applies).
    coloured: bool,
    games: u64,
    half_points: u64,
}

/// A term of the log-likelihood: `games` games whose logit is
/// `θ[plus] − θ[minus] + θ[advantage]`, scoring `points` for the plus side. `None` stands for
/// a parameter fixed at 0 (the anchor, or no advantage).
#[derive(Copy, Clone, Debug)]
struct Observation {
    plus: Option<usize>,
    minus: Option<usize>,
    advantage: Option<usize>,
    games: f64,
    points: f64,
}

impl Observation {
    /// The nonzero entries of the design vector: `logit = Σ coefficient · θ[index]`.
    fn design(&self) -> impl Iterator<Item = (usize, f64)> {
        [(self.plus, 1.0), (self.minus, -1.0), (self.advantage, 1.0)].into_iter().filter_map(|(index, coefficient)| index.map(|i| (i, coefficient)))
    }

    fn logit(&self, theta: &[f64]) -> f64 {
        self.design().map(|(i, c)| c * theta[i]).sum()
    }
}

const MAX_NEWTON_ITERATIONS: usize = 200;
const MAX_STEP_HALVINGS: usize = 60;
/// Newton stops once no parameter moves more than this (natural units; ~2e-8 Elo).
const NEWTON_STEP_TOLERANCE: f64 = 1e-10;

fn fit(players: &[String], tallies: &[Tally], anchor: usize, anchor_elo: f64, fit_advantage: bool) -> (RatingList, Vec<Vec<f64>>) {
    let n = players.len();
    let valid = |t: &&Tally| t.plus < n && t.minus < n && t.plus != t.minus;
    let skipped_results = tallies.iter().filter(|t| !valid(t)).count() as u64;

    // Actual games and points, and the same per ordered pairing (exact, in half points).
    let mut games = vec![0u64; n];
    let mut half_points = vec![0u64; n];
    let mut pairings: BTreeMap<(usize, usize, bool), (u64, u64)> = BTreeMap::new();
    for t in tallies.iter().filter(valid).filter(|t| t.games > 0) {
        games[t.plus] += t.games;
        games[t.minus] += t.games;
        half_points[t.plus] += t.half_points;
        half_points[t.minus] += 2 * t.games - t.half_points;
        let entry = pairings.entry((t.plus, t.minus, t.coloured)).or_default();
        entry.0 += t.games;
        entry.1 += t.half_points;
    }

    // Who played whom (undirected) and who scored against whom (directed).
    let mut opponents = vec![Vec::new(); n];
    let mut scored_against = vec![Vec::new(); n];
    for (&(plus, minus, _), &(games, half_points)) in &pairings {
        opponents[plus].push(minus);
        opponents[minus].push(plus);
        if half_points > 0 {
            scored_against[plus].push(minus);
        }
        if half_points < 2 * games {
            scored_against[minus].push(plus);
        }
    }
    let rated = if anchor < n { reachable(&opponents, anchor) } else { vec![false; n] };

    // Virtual draws on pairings between different strongly connected components of the
    // "scored against" graph: exactly where the likelihood has no finite maximum.
    let reach: Vec<Vec<bool>> = (0..n).map(|k| if rated[k] { reachable(&scored_against, k) } else { Vec::new() }).collect();
    let mut virtual_pairings: Vec<(usize, usize)> =
        pairings.keys().map(|&(plus, minus, _)| (plus.min(minus), plus.max(minus))).filter(|&(i, j)| rated[i] && !(reach[i][j] && reach[j][i])).collect();
    virtual_pairings.sort_unstable();
    virtual_pairings.dedup();

    // Parameters: the rated players but the anchor, then the advantage.
    let mut parameter = vec![None; n];
    let mut dimension = 0;
    for k in (0..n).filter(|&k| rated[k] && k != anchor) {
        parameter[k] = Some(dimension);
        dimension += 1;
    }
    let coloured_games: u64 = pairings.iter().filter(|(&(plus, _, coloured), _)| coloured && rated[plus]).map(|(_, &(games, _))| games).sum();
    let advantage = if fit_advantage && coloured_games > 0 {
        dimension += 1;
        Some(dimension - 1)
    } else {
        None
    };

    let mut observations: Vec<Observation> = pairings
        .iter()
        .filter(|(&(plus, _, _), _)| rated[plus])
        .map(|(&(plus, minus, coloured), &(games, half_points))| Observation {
            plus: parameter[plus],
            minus: parameter[minus],
            advantage: if coloured { advantage } else { None },
            games: games as f64,
            points: half_points as f64 / 2.0,
        })
        .collect();
    let virtual_draw = VIRTUAL_DRAWS_PER_PAIRING as f64;
    observations.extend(virtual_pairings.iter().map(|&(i, j)| Observation {
        plus: parameter[i],
        minus: parameter[j],
        advantage: None,
        games: virtual_draw,
        points: virtual_draw / 2.0,
    }));
    if advantage.is_some() {
        observations.push(Observation { plus: None, minus: None, advantage, games: 1.0, points: 0.5 });
    }

    let fitted = maximise_likelihood(&observations, dimension);
    let z = z_for_confidence(RATING_CONFIDENCE);
    let std_error = |index: usize| {
        let variance = fitted.covariance.as_ref().map_or(f64::NAN, |c| c[index * dimension + index]);
        if variance >= 0.0 {
            variance.sqrt() * ELO_PER_NAT
        } else {
            f64::NAN
        }
    };

    let mut entries: Vec<Rating> = (0..n)
        .map(|k| {
            let (elo, se) = if k == anchor {
                (anchor_elo, 0.0)
            } else {
                match parameter[k] {
                    Some(index) => (anchor_elo + fitted.theta[index] * ELO_PER_NAT, std_error(index)),
                    None => (f64::NAN, f64::NAN),
                }
            };
            let points = half_points[k] as f64 / 2.0;
            Rating {
                name: players[k].clone(),
                elo,
                lo: elo - z * se,
                hi: elo + z * se,
                std_error: se,
                games: games[k],
                points,
                score: points / games[k] as f64,
            }
        })
        .collect();
    // Best first; the unrated (NaN) keep their order at the end.
    entries.sort_by(|x, y| match (x.is_rated(), y.is_rated()) {
        (true, true) => y.elo.total_cmp(&x.elo),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => Ordering::Equal,
    });

    let first_move_advantage = advantage.map(|index| {
        let elo = fitted.theta[index] * ELO_PER_NAT;
        let se = std_error(index);
        FirstMoveAdvantage { elo, lo: elo - z * se, hi: elo + z * se, std_error: se }
    });

    let covariance: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| match (parameter[i], parameter[j]) {
                    _ if !rated[i] || !rated[j] => f64::NAN,
                    (Some(a), Some(b)) => fitted.covariance.as_ref().map_or(f64::NAN, |c| c[a * dimension + b] * ELO_PER_NAT * ELO_PER_NAT),
                    // The anchor: fixed, so no variance and no covariance.
                    _ => 0.0,
                })
                .collect()
        })
        .collect();

    let list = RatingList {
        entries,
        anchor: players.get(anchor).cloned().unwrap_or_default(),
        anchor_elo,
        confidence: RATING_CONFIDENCE,
        virtual_draws: virtual_pairings.len() as u64 * VIRTUAL_DRAWS_PER_PAIRING,
        virtual_pairings: virtual_pairings.iter().map(|&(i, j)| (players[i].clone(), players[j].clone())).collect(),
        skipped_results,
        converged: anchor < n && fitted.converged,
        first_move_advantage,
    };
    (list, covariance)
}

/// Which nodes a breadth-first search from `start` reaches along `edges`.
fn reachable(edges: &[Vec<usize>], start: usize) -> Vec<bool> {
    let mut seen = vec![false; edges.len()];
    let mut queue = VecDeque::from([start]);
    seen[start] = true;
    while let Some(node) = queue.pop_front() {
        for &next in &edges[node] {
            if !seen[next] {
                seen[next] = true;
                queue.push_back(next);
            }
        }
    }
    seen
}

/// The maximum-likelihood parameters (natural units) and their covariance, the inverse
/// information matrix (row-major, `None` if singular).
struct LikelihoodFit {
    theta: Vec<f64>,
    covariance: Option<Vec<f64>>,
    converged: bool,
}

/// Newton's method with step halving on the concave log-likelihood, from θ = 0.
fn maximise_likelihood(observations: &[Observation], dimension: usize) -> LikelihoodFit {
    let mut theta = vec![0.0; dimension];
    let mut likelihood = log_likelihood(observations, &theta);
    let mut converged = dimension == 0;
    for _ in 0..MAX_NEWTON_ITERATIONS {
        if converged {
            break;
        }
        let (gradient, information) = gradient_and_information(observations, &theta);
        let Some(inverse) = invert(&information, dimension) else {
            break;
        };
        let step: Vec<f64> = (0..dimension).map(|r| (0..dimension).map(|c| inverse[r * dimension + c] * gradient[c]).sum()).collect();
        let largest = step.iter().fold(0.0f64, |m, s| m.max(s.abs()));
        if !largest.is_finite() {
            break;
        }
        // Halve the step until the likelihood does not drop (beyond rounding).
        let mut scale = 1.0;
        let mut moved = false;
        for _ in 0..MAX_STEP_HALVINGS {
            let trial: Vec<f64> = theta.iter().zip(&step).map(|(t, s)| t + scale * s).collect();
            let trial_likelihood = log_likelihood(observations, &trial);
            if trial_likelihood >= likelihood - 1e-12 * (1.0 + likelihood.abs()) {
                theta = trial;
                likelihood = trial_likelihood;
                moved = true;
                break;
            }
            scale *= 0.5;
        }
        if largest * scale < NEWTON_STEP_TOLERANCE {
            converged = true;
        } else if !moved {
            break;
        }
    }
    let (_, information) = gradient_and_information(observations, &theta);
    LikelihoodFit { covariance: invert(&information, dimension), theta, converged }
}

/// `ln σ(x) = −ln(1 + e^(−x))`, without overflow for large |x|.
fn ln_sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        -(-x).exp().ln_1p()
    } else {
        x - x.exp().ln_1p()
    }
}

fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

fn log_likelihood(observations: &[Observation], theta: &[f64]) -> f64 {
    observations
        .iter()
        .map(|o| {
            let x = o.logit(theta);
            o.points * ln_sigmoid(x) + (o.games - o.points) * ln_sigmoid(-x)
        })
        .sum()
}

/// The gradient of the log-likelihood (actual minus expected points along each parameter)
/// and the information matrix `Σ games·p(1 − p)·d dᵀ` (row-major).
fn gradient_and_information(observations: &[Observation], theta: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let dimension = theta.len();
    let mut gradient = vec![0.0; dimension];
    let mut information = vec![0.0; dimension * dimension];
    for o in observations {
        let x = o.logit(theta);
        let (p, q) = (sigmoid(x), sigmoid(-x));
        let residual = o.points - o.games * p;
        let weight = o.games * p * q;
        for (i, ci) in o.design() {
            gradient[i] += ci * residual;
            for (j, cj) in o.design() {
                information[i * dimension + j] += weight * ci * cj;
            }
        }
    }
    (gradient, information)
}

/// The inverse of a square row-major matrix by Gauss–Jordan elimination with partial
/// pivoting; `None` when it is singular to working precision (or not finite).
pub(super) fn invert(matrix: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut a = matrix.to_vec();
    let mut inverse = vec![0.0; n * n];
    for i in 0..n {
        inverse[i * n + i] = 1.0;
    }
    let largest = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    // A pivot this small is rounding noise: the matrix is singular.
    let negligible = largest * f64::EPSILON * n as f64;
    for col in 0..n {
        let pivot_row = (col..n).max_by(|&r, &s| a[r * n + col].abs().total_cmp(&a[s * n + col].abs()))?;
        let pivot = a[pivot_row * n + col];
        if !pivot.is_finite() || pivot.abs() <= negligible {
            return None;
        }
        if pivot_row != col {
            for c in 0..n {
                a.swap(pivot_row * n + c, col * n + c);
                inverse.swap(pivot_row * n + c, col * n + c);
            }
        }
        for c in 0..n {
            a[col * n + c] /= pivot;
            inverse[col * n + c] /= pivot;
        }
        for r in (0..n).filter(|&r| r != col) {
            let factor = a[r * n + col];
            if factor != 0.0 {
                for c in 0..n {
                    a[r * n + c] -= factor * a[col * n + c];
                    inverse[r * n + c] -= factor * inverse[col * n + c];
                }
            }
        }
    }
    Some(inverse)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invert_matches_a_hand_inverse() {
        // [[4, 7], [2, 6]]⁻¹ = 1/(24 − 14) · [[6, −7], [−2, 4]] = [[0.6, −0.7], [−0.2, 0.4]].
        let inverse = invert(&[4.0, 7.0, 2.0, 6.0], 2).unwrap();
        for (got, want) in inverse.iter().zip([0.6, -0.7, -0.2, 0.4]) {
            assert!((got - want).abs() < 1e-14, "{inverse:?}");
        }
        // A zero in the first pivot position needs the row swap: [[0, 1], [1, 0]] is its
        // own inverse.
        assert_eq!(invert(&[0.0, 1.0, 1.0, 0.0], 2).unwrap(), vec![0.0, 1.0, 1.0, 0.0]);
    }

    #[test]
    fn invert_refuses_singular_matrices() {
        assert!(invert(&[1.0, 2.0, 2.0, 4.0], 2).is_none());
        assert!(invert(&[f64::NAN, 0.0, 0.0, 1.0], 2).is_none());
        assert_eq!(invert(&[], 0), Some(vec![]));
    }

    #[test]
    fn ln_sigmoid_is_stable_in_both_tails() {
        // ln σ(0) = ln ½; ln σ(−1000) ≈ −1000; ln σ(1000) ≈ −e^(−1000) = −0.
        assert!((ln_sigmoid(0.0) - 0.5f64.ln()).abs() < 1e-15);
        assert!((ln_sigmoid(-1000.0) + 1000.0).abs() < 1e-12);
        assert!(ln_sigmoid(1000.0) <= 0.0 && ln_sigmoid(1000.0) > -1e-300);
    }
}
