//! The price of the first mover's edge: how much thinking the side with the edge can give
//! away and still score level, from matches where the two sides think for different budgets.
//!
//! # Data
//!
//! Matches between two players of one kind at two budgets (simulations, nodes or
//! milliseconds a move), played from one start with colours paired (`copper arena`): each
//! game gives the first mover's ("Black's") score `y ∈ {1, ½, 0}` and the log budget ratio
//! `x = ln(b_Black / b_White)`. One match at ratio `r` gives games at both `x = +ln r` and
//! `x = −ln r`; a match of equal budgets gives `x = 0`.
//!
//! # Model
//!
//! Black's expected score is logistic in `x`: `E[y] = p(x) = σ(β₀ + β₁·x)`,
//! `σ(t) = 1/(1 + e^{−t})`. `σ(β₀)` is Black's score at equal budgets, `β₁` the
//! value of thinking (`β₁·ln 2·400/ln 10` Elo per doubling), and the **price** of the edge
//! is the ratio at which Black scores ½: `x* = −β₀/β₁`, `r* = e^{x*}` (below 1: Black can
//! think `1/r*` times less and stay level; above 1: White can).
//!
//! # Fit
//!
//! Maximum quasi-likelihood (P. McCullagh and J. A. Nelder, *Generalized Linear Models*,
//! 2nd ed., Chapman & Hall 1989, §9.2): `β̂` solves the binomial estimating equations
//! `Σ (yᵢ − pᵢ)·(1, xᵢ) = 0`, which stay unbiased with draws scored ½, by Newton's method
//! (iteratively reweighted least squares): `β ← β + (XᵀWX)⁻¹Xᵀ(y − p)`, `W = diag(p(1 − p))`.
//! Draws make a game's score less variable than a coin's (as in [`crate::stats`]), so the
//! covariance is `φ̂·(XᵀWX)⁻¹` with the Pearson dispersion
//! `φ̂ = Σ (yᵢ − pᵢ)²/(pᵢ(1 − pᵢ)) / (n − 2)` (ibid. §9.2.4).
//!
//! # Lack of fit
//!
//! The logistic line is a model, and the per-game dispersion cannot see it bend. Grouping
//! the games by budget ratio (`k` groups, `n_g` games, mean score `ȳ_g`, fitted `p_g`), the
//! Pearson statistic `X² = Σ_g n_g(ȳ_g − p_g)²/(p_g(1 − p_g))`, divided by the
//! within-group dispersion `φ̂_w = Σ_g Σ_{i∈g}(yᵢ − ȳ_g)²/(p_g(1 − p_g)) / (n − k)`, is
//! χ² with `k − 2` degrees of freedom when the line holds. Where it does not (p below
//! [`HETEROGENEITY_P`], with `k > 2`), the covariance is multiplied by the
//! **heterogeneity factor** `h = X²/(φ̂_w·(k − 2))` and the intervals use Student's t
//! with `k − 2` degrees of freedom in place of `z` (D. J. Finney, *Probit Analysis*, 3rd
//! ed., Cambridge 1971, §4.4; the rule of SAS/STAT's PROBIT procedure, `HPROB=0.10`):
//! the settings' scatter about the line, not the games' count, then bounds the precision.
//!
//! # Intervals
//!
//! - `σ(β₀)`: `σ(β₀ ± z·√v₀₀)`.
//! - The price, by **Fieller's theorem** (E. C. Fieller, "Some problems in interval
//!   estimation", JRSS B 16 (1954) 175–185), the set of `x` where `β₀ + β₁x` is
//!   indistinguishable from 0: `(β₀ + β₁x)² ≤ z²(v₀₀ + 2x·v₀₁ + x²v₁₁)`, i.e.
//!   `a·x² + 2b·x + c ≤ 0` with `a = β₁² − z²v₁₁`, `b = β₀β₁ − z²v₀₁`, `c = β₀² − z²v₀₀`:
//!   `x ∈ [(−b − √(b² − ac))/a, (−b + √(b² − ac))/a]` when `a > 0` (the slope differs from
//!   zero at level α); otherwise the set is unbounded and no finite price is claimed. The
//!   delta method's symmetric interval for a ratio undercovers when `β₁` is uncertain;
//!   Fieller's is exact for normal estimates.
//! - `r*`'s interval is `e^{x}` at the ends of `x*`'s.

use crate::error::{io_err, BalanceError};
use arena::runner::JobResult;
use arena::stats::{elo_from_score, z_for_confidence};
use players::limits::Limit;
use players::spec::{Kind, PlayerSpec};
use rules::{Color, Outcome};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// One game: the log budget ratio (Black's over White's) and Black's score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OddsGame {
    pub log_ratio: f64,
    pub black_score: f64,
}

/// Below this p of the lack-of-fit test the heterogeneity factor is applied (module docs).
pub const HETEROGENEITY_P: f64 = 0.10;

/// The fitted model with the estimates' covariance (dispersion and heterogeneity included).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LogisticFit {
    pub games: usize,
    pub b0: f64,
    pub b1: f64,
    /// `[v₀₀, v₀₁, v₁₁]`.
    pub cov: [f64; 3],
    pub dispersion: f64,
    /// The test of the line across budget ratios; `None` with two ratios only (then the
    /// line passes through both).
    pub lack_of_fit: Option<LackOfFit>,
}

/// Grouped Pearson test of the logistic line (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LackOfFit {
    /// `X²/φ̂_w`, on `df = k − 2` degrees of freedom.
    pub chi2: f64,
    pub df: u32,
    pub p_value: f64,
    /// The factor the covariance was multiplied by: 1 where the line fits.
    pub heterogeneity: f64,
}

impl LogisticFit {
    /// The multiplier of a standard error for a two-sided interval at `confidence`: the
    /// normal's, or Student's t on the lack of fit's degrees of freedom where the
    /// heterogeneity factor applies.
    pub fn critical_value(&self, confidence: f64) -> f64 {
        match self.lack_of_fit {
            Some(l) if l.heterogeneity > 1.0 => arena::stats::student_t_quantile(confidence, l.df),
            _ => z_for_confidence(confidence),
        }
    }
}

/// Fits `E[y] = σ(β₀ + β₁x)` to the games; an error where they cannot tell the two
/// apart (fewer than three games, one budget ratio only, or one side winning every game
/// at every ratio, which has no finite estimate).
pub fn fit_logistic(games: &[OddsGame]) -> Result<LogisticFit, BalanceError> {
    let n = games.len();
    if n < 3 {
        return Err(BalanceError::Invalid(format!("the price needs games at two budget ratios at least; {n} games")));
    }
    let x0 = games[0].log_ratio;
    if games.iter().all(|g| (g.log_ratio - x0).abs() < 1e-12) {
        return Err(BalanceError::Invalid("every game was played at one budget ratio: the price needs two at least".into()));
    }
    let (mut b0, mut b1) = (0.0f64, 0.0f64);
    let mut converged = false;
    for _ in 0..100 {
        let (mut g0, mut g1, mut h00, mut h01, mut h11) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for g in games {
            let p = sigmoid(b0 + b1 * g.log_ratio);
            let w = p * (1.0 - p);
            let r = g.black_score - p;
            g0 += r;
            g1 += r * g.log_ratio;
            h00 += w;
            h01 += w * g.log_ratio;
            h11 += w * g.log_ratio * g.log_ratio;
        }
        let det = h00 * h11 - h01 * h01;
        if !(det > 0.0 && det.is_finite()) {
            break;
        }
        let (d0, d1) = ((h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det);
        b0 += d0;
        b1 += d1;
        if !(b0.is_finite() && b1.is_finite()) || b0.abs() > 50.0 || b1.abs() > 50.0 {
            break;
        }
        if d0.abs() < 1e-12 && d1.abs() < 1e-12 {
            converged = true;
            break;
        }
    }
    if !converged {
        return Err(BalanceError::Invalid(
            "the scores have no finite logistic fit (one side won every game where it had the larger budget, or every game)".into(),
        ));
    }
    let (mut h00, mut h01, mut h11, mut pearson) = (0.0, 0.0, 0.0, 0.0);
    for g in games {
        let p = sigmoid(b0 + b1 * g.log_ratio);
        let w = p * (1.0 - p);
        h00 += w;
        h01 += w * g.log_ratio;
        h11 += w * g.log_ratio * g.log_ratio;
        pearson += (g.black_score - p).powi(2) / w;
    }
    let dispersion = pearson / (n - 2).max(1) as f64;
    let lack_of_fit = lack_of_fit(games, b0, b1);
    let scale = dispersion * lack_of_fit.map_or(1.0, |l| l.heterogeneity);
    let det = h00 * h11 - h01 * h01;
    let cov = [scale * h11 / det, -scale * h01 / det, scale * h00 / det];
    Ok(LogisticFit { games: n, b0, b1, cov, dispersion, lack_of_fit })
}

/// The grouped test of the line `σ(b0 + b1·x)` (module docs); `None` with fewer than
/// three budget ratios or no scatter within them.
fn lack_of_fit(games: &[OddsGame], b0: f64, b1: f64) -> Option<LackOfFit> {
    // Per ratio (−0 and +0 are one): games, Σy, Σy².
    let mut groups: BTreeMap<u64, (f64, f64, f64)> = BTreeMap::new();
    for g in games {
        let e = groups.entry((g.log_ratio + 0.0).to_bits()).or_default();
        *e = (e.0 + 1.0, e.1 + g.black_score, e.2 + g.black_score * g.black_score);
    }
    let k = groups.len();
    if k < 3 {
        return None;
    }
    let (mut x2, mut within) = (0.0, 0.0);
    for (&bits, &(n, sy, syy)) in &groups {
        let p = sigmoid(b0 + b1 * f64::from_bits(bits));
        let w = p * (1.0 - p);
        let mean = sy / n;
        x2 += n * (mean - p).powi(2) / w;
        within += (syy - sy * mean) / w;
    }
    let phi = within / (games.len() - k) as f64;
    if !(phi > 0.0 && phi.is_finite()) {
        return None;
    }
    let df = (k - 2) as u32;
    let chi2 = x2 / phi;
    let p_value = crate::stats::chi_square_sf(chi2, df);
    let heterogeneity = if p_value < HETEROGENEITY_P { (chi2 / df as f64).max(1.0) } else { 1.0 };
    Some(LackOfFit { chi2, df, p_value, heterogeneity })
}

fn sigmoid(t: f64) -> f64 {
    1.0 / (1.0 + (-t).exp())
}

/// What the fit says, at one confidence.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Price {
    /// Black's score at equal budgets, `σ(β₀)`, with its interval.
    pub level_score: (f64, f64, f64),
    /// Elo per doubling of one side's budget, with its interval.
    pub elo_per_doubling: (f64, f64, f64),
    /// `r*`: Black's budget over White's at which Black scores ½.
    pub ratio: f64,
    /// Fieller's interval of `r*`; `None` where the slope is not distinguishable from zero.
    pub ratio_interval: Option<(f64, f64)>,
}

/// Fieller's interval of `x* = −β₀/β₁` (module docs); `None` when it is unbounded.
pub fn fieller(fit: &LogisticFit, z: f64) -> Option<(f64, f64)> {
    let [v00, v01, v11] = fit.cov;
    let z2 = z * z;
    let a = fit.b1 * fit.b1 - z2 * v11;
    let b = fit.b0 * fit.b1 - z2 * v01;
    let c = fit.b0 * fit.b0 - z2 * v00;
    let disc = b * b - a * c;
    if a <= 0.0 || disc < 0.0 {
        return None;
    }
    let root = disc.sqrt();
    Some(((-b - root) / a, (-b + root) / a))
}

pub fn price(fit: &LogisticFit, confidence: f64) -> Price {
    let z = fit.critical_value(confidence);
    let s0 = fit.cov[0].sqrt();
    let s1 = fit.cov[2].sqrt();
    // Elo of a logit difference d: 400·log10(e)·d; a doubling moves the logit by β₁·ln 2.
    let elo = |b1: f64| 400.0 / std::f64::consts::LN_10 * b1 * std::f64::consts::LN_2;
    Price {
        level_score: (sigmoid(fit.b0), sigmoid(fit.b0 - z * s0), sigmoid(fit.b0 + z * s0)),
        elo_per_doubling: (elo(fit.b1), elo(fit.b1 - z * s1), elo(fit.b1 + z * s1)),
        ratio: (-fit.b0 / fit.b1).exp(),
        ratio_interval: fieller(fit, z).map(|(lo, hi)| (lo.exp(), hi.exp())),
    }
}

/// A player's budget a move: simulations (a search over the network), nodes (alpha-beta,
/// an engine) or milliseconds; the unit names it.
fn budget(spec: &PlayerSpec) -> Result<(f64, &'static str), BalanceError> {
    match spec.limit {
        Some(Limit::Nodes(n)) if n > 0 => Ok((n as f64, if matches!(spec.kind, Kind::Checkpoint(_) | Kind::Uniform) { "simulations" } else { "nodes" })),
        Some(Limit::MoveTime(ms)) if ms > 0 => Ok((ms as f64, "ms")),
        _ => Err(BalanceError::Invalid(format!("player '{}': the price needs a budget of nodes=N (sims=N) or movetime=MS, not {:?}", spec.name, spec.limit))),
    }
}

/// One match's games by budget setting: Black's (the first mover's) and White's budgets and
/// Black's tally.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Setting {
    pub black_budget: f64,
    pub white_budget: f64,
    pub games: u64,
    pub black_points: f64,
    pub black_wins: u64,
    pub draws: u64,
    pub white_wins: u64,
}

impl Setting {
    /// Black's score with a normal interval at `z` (no draw correction: conservative),
    /// clamped to [0, 1].
    pub(crate) fn score_interval(&self, z: f64) -> (f64, f64, f64) {
        let score = self.black_points / self.games as f64;
        let half = z * (score * (1.0 - score) / self.games as f64).sqrt();
        (score, (score - half).max(0.0), (score + half).min(1.0))
    }

    fn add(&mut self, black_score: f64) {
        self.games += 1;
        self.black_points += black_score;
        match black_score {
            x if x > 0.75 => self.black_wins += 1,
            x if x < 0.25 => self.white_wins += 1,
            _ => self.draws += 1,
        }
    }

    /// The setting's games, one per result (the fit depends on the games only through
    /// these counts at each ratio).
    fn games(&self) -> impl Iterator<Item = OddsGame> + '_ {
        let x = (self.black_budget / self.white_budget).ln();
        let of = |n: u64, y: f64| std::iter::repeat_n(OddsGame { log_ratio: x, black_score: y }, n as usize);
        of(self.black_wins, 1.0).chain(of(self.draws, 0.5)).chain(of(self.white_wins, 0.0))
    }
}

/// The budget settings of arena tournament directories' games (`tournament.toml`, `results.jsonl`), each
/// with its budget ratio, all from one start and between players whose budgets are of one
/// unit; and the settings they form. Errors name the directory and what is wrong.
pub fn games_of_matches(dirs: &[&Path]) -> Result<(Vec<Setting>, String, String), BalanceError> {
    let mut settings: BTreeMap<(u64, u64), Setting> = BTreeMap::new();
    let mut start: Option<String> = None;
    let mut unit: Option<&'static str> = None;
    for dir in dirs {
        let bad = |what: String| BalanceError::Invalid(format!("{}: {what}", dir.display()));
        let cfg = arena::tournament::TournamentConfig::load(&dir.join("tournament.toml")).map_err(|e| bad(e.to_string()))?;
        let mut budgets: BTreeMap<String, f64> = BTreeMap::new();
        for text in &cfg.players {
            let spec = PlayerSpec::parse(text).map_err(|e| bad(format!("player '{text}': {e}")))?;
            let (b, u) = budget(&spec).map_err(|e| bad(e.to_string()))?;
            if unit.is_some_and(|x| x != u) {
                return Err(bad(format!("player '{}' has a budget in {u}, the others in {}", spec.name, unit.unwrap_or_default())));
            }
            unit = Some(u);
            budgets.insert(spec.name.clone(), b);
        }
        let results = arena::tournament::read_results(&dir.join("results.jsonl")).map_err(|e| bad(e.to_string()))?;
        for r in &results {
            let (g, (mover, other)) = odds_game(r, &budgets, &mut start).map_err(|e| bad(format!("game {}: {e}", r.job.id)))?;
            let s = settings.entry((mover.to_bits(), other.to_bits())).or_insert(Setting { black_budget: mover, white_budget: other, ..Default::default() });
            s.add(g.black_score);
        }
    }
    let mut settings: Vec<Setting> = settings.into_values().collect();
    settings.sort_by(|a, b| (a.black_budget / a.white_budget).total_cmp(&(b.black_budget / b.white_budget)));
    Ok((settings, start.unwrap_or_default(), unit.unwrap_or("nodes").to_string()))
}

fn black_white_budgets(r: &JobResult, budgets: &BTreeMap<String, f64>) -> Result<(f64, f64), String> {
    let hand = r.hands.first().ok_or("no game in the result")?;
    let of = |name: &str| budgets.get(name).copied().ok_or_else(|| format!("player '{name}' is not in tournament.toml"));
    Ok((of(&hand.record.black)?, of(&hand.record.white)?))
}

/// The game as the first mover ("Black") saw it, and the first mover's and the other
/// side's budgets.
fn odds_game(r: &JobResult, budgets: &BTreeMap<String, f64>, start: &mut Option<String>) -> Result<(OddsGame, (f64, f64)), String> {
    if r.hands.len() != 1 {
        return Err(format!("{} hands: the price is of single games", r.hands.len()));
    }
    let hand = &r.hands[0];
    let sfen = &hand.record.start_sfen;
    if start.as_ref().is_some_and(|s| s != sfen) {
        return Err(format!("starts from '{sfen}', the other games from '{}'", start.as_deref().unwrap_or_default()));
    }
    *start = Some(sfen.clone());
    // "Black" is the side to move at the start (the first mover).
    let mover = match sfen.split_whitespace().nth(1) {
        Some("b") => Color::Black,
        Some("w") => Color::White,
        _ => return Err(format!("start '{sfen}' names no side to move")),
    };
    let (bb, wb) = black_white_budgets(r, budgets)?;
    let (mover_budget, other_budget) = if mover == Color::Black { (bb, wb) } else { (wb, bb) };
    let score = match hand.end.outcome {
        Outcome::Draw => 0.5,
        Outcome::Win(c) if c == mover => 1.0,
        Outcome::Win(_) => 0.0,
    };
    Ok((OddsGame { log_ratio: (mover_budget / other_budget).ln(), black_score: score }, (mover_budget, other_budget)))
}

/// The Elo-equivalent of a score, for tables.
fn elo(score: f64) -> f64 {
    elo_from_score(score.clamp(1e-6, 1.0 - 1e-6))
}

/// `price.json`: everything the report says.
#[derive(Clone, Debug, Serialize)]
pub struct PriceReport {
    pub start_sfen: String,
    pub unit: String,
    pub confidence: f64,
    pub settings: Vec<Setting>,
    pub fit: LogisticFit,
    pub price: Price,
}

/// The settings of an earlier report's `price.csv` (its `setting` rows), with their unit
/// and start: a report refits from its own committed table.
pub fn settings_of_csv(path: &Path) -> Result<(Vec<Setting>, String, String), BalanceError> {
    let bad = |what: String| BalanceError::Invalid(format!("{}: {what}", path.display()));
    let mut reader = csv::Reader::from_path(path).map_err(|e| bad(e.to_string()))?;
    let headers = reader.headers().map_err(|e| bad(e.to_string()))?.clone();
    let col = |name: &str| headers.iter().position(|h| h == name).ok_or_else(|| bad(format!("no column '{name}'")));
    let (row, unit, start, bb, wb, w, d, l) =
        (col("row")?, col("unit")?, col("start")?, col("black_budget")?, col("white_budget")?, col("black_wins")?, col("draws")?, col("white_wins")?);
    let (mut settings, mut units, mut starts) = (Vec::new(), Vec::new(), Vec::new());
    for (i, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| bad(e.to_string()))?;
        if rec.get(row) != Some("setting") {
            continue;
        }
        let num = |c: usize| {
            rec.get(c)
                .and_then(|v| v.parse::<f64>().ok())
                .ok_or_else(|| bad(format!("line {}: column {} is not a number", i + 2, headers.get(c).unwrap_or("?"))))
        };
        let count =
            |c: usize| num(c).and_then(|v| if v >= 0.0 && v.fract() == 0.0 { Ok(v as u64) } else { Err(bad(format!("line {}: a count of {v}", i + 2))) });
        let (black_budget, white_budget) = (num(bb)?, num(wb)?);
        if !(black_budget > 0.0 && white_budget > 0.0) {
            return Err(bad(format!("line {}: budgets must be positive", i + 2)));
        }
        let mut s = Setting { black_budget, white_budget, ..Default::default() };
        for (n, y) in [(count(w)?, 1.0), (count(d)?, 0.5), (count(l)?, 0.0)] {
            for _ in 0..n {
                s.add(y);
            }
        }
        settings.push(s);
        units.push(rec.get(unit).unwrap_or_default().to_string());
        starts.push(rec.get(start).unwrap_or_default().to_string());
    }
    Ok((settings, units.first().cloned().unwrap_or_default(), starts.first().cloned().unwrap_or_default()))
}

/// Fits the games of `inputs` — arena match directories, or earlier reports' `price.csv`
/// files — and writes `price.json`, `price.csv` (one row per budget setting with its
/// counts, Black's score and its interval, then the fit's rows) and `price.svg` (Black's
/// score against the budget ratio, observed and fitted) into `out`.
pub fn price_report(inputs: &[&Path], out: &Path, confidence: f64) -> Result<PriceReport, BalanceError> {
    let (dirs, tables): (Vec<&Path>, Vec<&Path>) = inputs.iter().partition(|p| p.is_dir());
    let (mut settings, mut start_sfen, mut unit) = if dirs.is_empty() { Default::default() } else { games_of_matches(&dirs)? };
    for t in tables {
        let (more, u, start) = settings_of_csv(t)?;
        if !dirs.is_empty() || !settings.is_empty() {
            if u != unit {
                return Err(BalanceError::Invalid(format!("{}: budgets in {u}, the other inputs' in {unit}", t.display())));
            }
            if start != start_sfen {
                return Err(BalanceError::Invalid(format!("{}: start '{start}', the other inputs' '{start_sfen}'", t.display())));
            }
        }
        (unit, start_sfen) = (u, start);
        settings.extend(more);
    }
    settings.sort_by(|a, b| (a.black_budget / a.white_budget).total_cmp(&(b.black_budget / b.white_budget)));
    let games: Vec<OddsGame> = settings.iter().flat_map(|s| s.games()).collect();
    let fit = fit_logistic(&games)?;
    let report = PriceReport { start_sfen, unit, confidence, settings, fit, price: price(&fit, confidence) };
    std::fs::create_dir_all(out).map_err(io_err(out))?;
    let json = serde_json::to_vec_pretty(&report).map_err(|e| BalanceError::Invalid(e.to_string()))?;
    let path = out.join("price.json");
    records::write_atomic(&path, &json).map_err(io_err(&path))?;
    let z = z_for_confidence(confidence);
    let mut csv = String::from("row,unit,start,black_budget,white_budget,log2_ratio,games,black_wins,draws,white_wins,black_score,lo,hi,elo\n");
    let (u, st) = (&report.unit, &report.start_sfen);
    for s in &report.settings {
        let (score, lo, hi) = s.score_interval(z);
        csv += &format!(
            "setting,{u},{st},{},{},{:.4},{},{},{},{},{:.4},{:.4},{:.4},{:.1}\n",
            s.black_budget,
            s.white_budget,
            (s.black_budget / s.white_budget).log2(),
            s.games,
            s.black_wins,
            s.draws,
            s.white_wins,
            score,
            lo,
            hi,
            elo(score)
        );
    }
    // The fit's rows: the estimate and its interval in black_score, lo, hi.
    let p = &report.price;
    let n = fit.games;
    csv += &format!("level_score,{u},{st},,,0,{n},,,,{:.4},{:.4},{:.4},{:.1}\n", p.level_score.0, p.level_score.1, p.level_score.2, elo(p.level_score.0));
    csv += &format!("elo_per_doubling,{u},{st},,,,{n},,,,{:.1},{:.1},{:.1},\n", p.elo_per_doubling.0, p.elo_per_doubling.1, p.elo_per_doubling.2);
    let (lo, hi) = p.ratio_interval.map_or((f64::INFINITY, f64::INFINITY), |(a, b)| (a, b));
    let cell = |v: f64| if v.is_finite() { format!("{v:.4}") } else { "unbounded".into() };
    csv += &format!("price_ratio,{u},{st},,,{:.4},{n},,,,{},{},{},\n", p.ratio.log2(), cell(p.ratio), cell(lo), cell(hi));
    // The line's test: its degrees of freedom in games, χ² in black_score, its p in lo,
    // the heterogeneity factor applied in hi.
    if let Some(l) = fit.lack_of_fit {
        csv += &format!("lack_of_fit,{u},{st},,,,{},,,,{:.3},{:.4},{:.3},\n", l.df, l.chi2, l.p_value, l.heterogeneity);
    }
    let path = out.join("price.csv");
    records::write_atomic(&path, csv.as_bytes()).map_err(io_err(&path))?;
    crate::plots::price_plot(&out.join("price.svg"), &report).map_err(BalanceError::Invalid)?;
    Ok(report)
}

/// The curve `σ(β₀ + β₁x)` at `x = log2_ratio · ln 2`, for the plot.
pub(crate) fn fitted_score(fit: &LogisticFit, log2_ratio: f64) -> f64 {
    sigmoid(fit.b0 + fit.b1 * log2_ratio * std::f64::consts::LN_2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn logit(p: f64) -> f64 {
        (p / (1.0 - p)).ln()
    }

    /// With games at two ratios ±a the model is saturated: the fit passes through both
    /// observed scores, so β₀ = (logit s₊ + logit s₋)/2 and β₁ = (logit s₊ − logit s₋)/2a,
    /// and the price is x* = −β₀/β₁ (derived by hand from the two equations).
    #[test]
    fn at_two_ratios_the_fit_passes_through_both_scores() {
        let a = 2f64.ln();
        let mut games = Vec::new();
        // Black at twice White's budget: 70 wins, 20 draws, 30 losses of 120 (0.6667);
        // at half: 40 wins, 10 draws, 70 losses (0.375).
        for (x, w, d, l) in [(a, 70, 20, 30), (-a, 40, 10, 70)] {
            games.extend(std::iter::repeat_n(OddsGame { log_ratio: x, black_score: 1.0 }, w));
            games.extend(std::iter::repeat_n(OddsGame { log_ratio: x, black_score: 0.5 }, d));
            games.extend(std::iter::repeat_n(OddsGame { log_ratio: x, black_score: 0.0 }, l));
        }
        let f = fit_logistic(&games).unwrap();
        let (sp, sm) = (80.0 / 120.0, 45.0 / 120.0);
        assert!((f.b0 - (logit(sp) + logit(sm)) / 2.0).abs() < 1e-9, "{f:?}");
        assert!((f.b1 - (logit(sp) - logit(sm)) / (2.0 * a)).abs() < 1e-9, "{f:?}");
        let p = price(&f, 0.95);
        assert!((p.ratio.ln() - (-f.b0 / f.b1)).abs() < 1e-12);
        // The draws make the games less variable than coins: dispersion below 1.
        assert!(f.dispersion < 1.0, "{}", f.dispersion);
        let (lo, hi) = p.ratio_interval.expect("a clear slope");
        assert!(lo < p.ratio && p.ratio < hi);
    }

    /// Simulated studies with a known truth: the fit recovers it, and the 95% intervals
    /// cover the true level score and the true price in about 95% of studies (binomial
    /// standard error of the coverage over 400 studies: 1.1 points).
    #[test]
    fn the_intervals_cover_the_truth_in_simulated_studies() {
        let (b0, b1, draw) = (-0.15f64, 0.45f64, 0.12f64);
        let true_x = -b0 / b1;
        let ratios = [1.0f64, 2.0, 4.0];
        let mut rng = ChaCha8Rng::seed_from_u64(20261128);
        let (mut cover_level, mut cover_price, mut bounded) = (0, 0, 0);
        let studies = 400;
        for _ in 0..studies {
            let mut games = Vec::new();
            for r in ratios {
                for x in [r.ln(), -r.ln()] {
                    games.extend(games_at(&mut rng, x, sigmoid(b0 + b1 * x), draw, 300));
                }
            }
            let f = fit_logistic(&games).unwrap();
            let p = price(&f, 0.95);
            if p.level_score.1 <= sigmoid(b0) && sigmoid(b0) <= p.level_score.2 {
                cover_level += 1;
            }
            if let Some((lo, hi)) = fieller(&f, z_for_confidence(0.95)) {
                bounded += 1;
                if lo <= true_x && true_x <= hi {
                    cover_price += 1;
                }
            }
        }
        let rate = |k: i32| k as f64 / studies as f64;
        assert!((0.92..=0.98).contains(&rate(cover_level)), "level score covered in {}", rate(cover_level));
        assert!(bounded == studies, "every study of 3,600 games bounds the price ({bounded})");
        assert!((0.92..=0.98).contains(&rate(cover_price)), "price covered in {}", rate(cover_price));
    }

    /// Scores of a studied setting: win, draw or loss with mean `s` and draw rate `draw`.
    fn games_at(rng: &mut ChaCha8Rng, x: f64, s: f64, draw: f64, n: usize) -> Vec<OddsGame> {
        (0..n)
            .map(|_| {
                let u: f64 = rng.random();
                let y = if u < s - draw / 2.0 {
                    1.0
                } else if u < s + draw / 2.0 {
                    0.5
                } else {
                    0.0
                };
                OddsGame { log_ratio: x, black_score: y }
            })
            .collect()
    }

    /// The lack-of-fit test on simulated studies: where the line is true its p-value falls
    /// below 0.10 in about a tenth of them; where each setting sits off the line by its own
    /// random amount (τ = 0.2 logits, as a player whose strength does not grow evenly with
    /// its budget), the test sees it in most studies, and the heterogeneity factor with
    /// Student's t keeps the interval of the line's level score near its nominal coverage
    /// where the plain interval falls far below it.
    #[test]
    fn a_bent_line_is_seen_and_widens_the_intervals() {
        let (b0, b1, draw) = (0.1f64, 0.8f64, 0.05f64);
        let xs = [-2f64.ln() * 2.0, -2f64.ln(), 0.0, 2f64.ln(), 2f64.ln() * 2.0];
        let mut rng = ChaCha8Rng::seed_from_u64(20261129);
        let studies = 400;
        let (mut flagged_true, mut flagged_bent, mut cover, mut cover_plain) = (0, 0, 0, 0);
        for _ in 0..studies {
            let straight: Vec<OddsGame> = xs.iter().flat_map(|&x| games_at(&mut rng, x, sigmoid(b0 + b1 * x), draw, 300)).collect();
            let l = fit_logistic(&straight).unwrap().lack_of_fit.expect("five ratios");
            assert_eq!(l.df, 3);
            flagged_true += (l.p_value < HETEROGENEITY_P) as usize;
            // Each setting off the line by u ~ N(0, 0.2²) (Box–Muller).
            let bent: Vec<OddsGame> = xs
                .iter()
                .flat_map(|&x| {
                    let (u1, u2): (f64, f64) = (rng.random::<f64>().max(1e-300), rng.random());
                    let u = 0.2 * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                    games_at(&mut rng, x, sigmoid(b0 + b1 * x + u), draw, 300)
                })
                .collect();
            let f = fit_logistic(&bent).unwrap();
            flagged_bent += (f.lack_of_fit.unwrap().heterogeneity > 1.0) as usize;
            let p = price(&f, 0.95);
            cover += (p.level_score.1 <= sigmoid(b0) && sigmoid(b0) <= p.level_score.2) as usize;
            let plain = f.cov[0] / f.lack_of_fit.unwrap().heterogeneity;
            let z = z_for_confidence(0.95);
            cover_plain += (sigmoid(f.b0 - z * plain.sqrt()) <= sigmoid(b0) && sigmoid(b0) <= sigmoid(f.b0 + z * plain.sqrt())) as usize;
        }
        let rate = |k: usize| k as f64 / studies as f64;
        assert!((0.05..=0.16).contains(&rate(flagged_true)), "a true line flagged in {}", rate(flagged_true));
        assert!(rate(flagged_bent) > 0.5, "a bent line flagged in {}", rate(flagged_bent));
        assert!(rate(cover) >= 0.85, "the level score covered in {}", rate(cover));
        assert!(rate(cover_plain) < rate(cover) - 0.1, "plain {} against {}", rate(cover_plain), rate(cover));
    }

    #[test]
    fn a_budget_is_named_by_what_it_counts() {
        let of = |t: &str| budget(&PlayerSpec::parse(t).unwrap()).map(|(b, u)| (b, u.to_string()));
        assert_eq!(of("checkpoint,sims=100").unwrap(), (100.0, "simulations".into()));
        assert_eq!(of("alphabeta,nodes=16000").unwrap(), (16000.0, "nodes".into()));
        assert_eq!(of("alphabeta,movetime=100").unwrap(), (100.0, "ms".into()));
        assert!(of("alphabeta,depth=3").unwrap_err().to_string().contains("nodes=N"));
    }

    #[test]
    fn one_ratio_or_a_clean_sweep_has_no_price() {
        let same =
            vec![OddsGame { log_ratio: 0.0, black_score: 1.0 }, OddsGame { log_ratio: 0.0, black_score: 0.0 }, OddsGame { log_ratio: 0.0, black_score: 0.5 }];
        assert!(fit_logistic(&same).unwrap_err().to_string().contains("one budget ratio"));
        let sweep: Vec<OddsGame> =
            (0..20).map(|i| OddsGame { log_ratio: if i % 2 == 0 { 1.0 } else { -1.0 }, black_score: if i % 2 == 0 { 1.0 } else { 0.0 } }).collect();
        assert!(fit_logistic(&sweep).unwrap_err().to_string().contains("no finite"));
    }
}
