//! A tournament's report: per pairing W/D/L (by colour), score, Elo with 95% intervals
//! from game (trinomial) and game-pair (pentanomial) counts, LOS, draw ratio and the
//! GSPRT state — for a match it stopped, which hypothesis it accepted and after how many
//! games; a rating list of all players fitted by maximum likelihood; how games ended.
//! Printed as a table, written as JSON and CSV, and drawn as a plot.

use crate::runner::JobResult;
use crate::stats::{self, Pentanomial, Sprt, SprtDecision, Trinomial};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SprtState {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    /// The pentanomial LLR over every complete pair so far, including pairs finished after
    /// the test stopped.
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    /// "accept-h0" or "accept-h1" once the test has stopped (then `stopped` says where),
    /// "continue" before.
    pub decision: String,
    #[serde(default)]
    pub stopped: Option<SprtStop>,
}

/// Where an SPRT stopped: after the first complete pair, in the order results were
/// recorded, that brought the LLR to a bound. Games in flight at that moment are played
/// out and counted in the pairing's statistics (and in `SprtState::llr`), but they do not
/// change the decision: the test has already answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtStop {
    /// "accept-h0" or "accept-h1".
    pub decision: String,
    /// The LLR at the stop.
    pub llr: f64,
    /// The pairing's complete pairs and recorded games at the stop (a game whose partner
    /// was still being played counts in `games` only).
    pub pairs: u64,
    pub games: u64,
}

fn decision_name(d: SprtDecision) -> &'static str {
    match d {
        SprtDecision::AcceptH0 => "accept-h0",
        SprtDecision::AcceptH1 => "accept-h1",
        SprtDecision::Continue => "continue",
    }
}

/// The score (0, ½ or 1) of player `a` in a result of the pairing `(a, b)`, either colour
/// first; `None` for other pairings.
fn score_of(r: &JobResult, (a, b): (usize, usize)) -> Option<f64> {
    let s = match (r.job.first, r.job.second) {
        (x, y) if x == a && y == b => r.first_score,
        (x, y) if x == b && y == a => 1.0 - r.first_score,
        _ => return None,
    };
    Some(if s > 0.75 {
        1.0
    } else if s > 0.25 {
        0.5
    } else {
        0.0
    })
}

/// The SPRT of one pairing, fed its results in the order they were recorded: the test is
/// checked whenever a result completes a pair (both colours of an opening; the games of a
/// pair have ids 2k and 2k + 1), with the pentanomial LLR, until it stops. Replaying the
/// results file finds the same stop as the live run.
#[derive(Clone, Debug)]
pub struct SprtTracker {
    sprt: Sprt,
    players: (usize, usize),
    /// Pairs with one game recorded: pair id → a's score in it.
    waiting: HashMap<u64, f64>,
    penta: Pentanomial,
    games: u64,
    stopped: Option<SprtStop>,
}

impl SprtTracker {
    /// The test of player `players.0` against `players.1`.
    pub fn new(sprt: Sprt, players: (usize, usize)) -> SprtTracker {
        SprtTracker { sprt, players, waiting: HashMap::new(), penta: Pentanomial::default(), games: 0, stopped: None }
    }

    /// Counts one result (other pairings' are ignored).
    pub fn push(&mut self, r: &JobResult) {
        let Some(score) = score_of(r, self.players) else { return };
        self.games += 1;
        let Some(first) = self.waiting.remove(&(r.job.id / 2)) else {
            self.waiting.insert(r.job.id / 2, score);
            return;
        };
        // Scores are 0, ½ or 1 by construction.
        let _ = self.penta.add_pair(first, score);
        if self.stopped.is_none() {
            let llr = self.sprt.llr_pentanomial(&self.penta);
            let decision = self.sprt.decide(llr);
            if decision != SprtDecision::Continue {
                self.stopped = Some(SprtStop { decision: decision_name(decision).into(), llr, pairs: self.penta.pairs(), games: self.games });
            }
        }
    }

    pub fn stopped(&self) -> Option<&SprtStop> {
        self.stopped.as_ref()
    }

    /// The state after the results so far.
    pub fn state(&self) -> SprtState {
        let Sprt { elo0, elo1, alpha, beta } = self.sprt;
        let (lower, upper) = self.sprt.bounds();
        SprtState {
            elo0,
            elo1,
            alpha,
            beta,
            llr: self.sprt.llr_pentanomial(&self.penta),
            lower,
            upper,
            decision: self.stopped.as_ref().map_or("continue", |x| x.decision.as_str()).into(),
            stopped: self.stopped.clone(),
        }
    }
}

impl SprtState {
    /// One line: the decision, where it was taken, and the LLR now.
    pub fn describe(&self) -> String {
        let test = format!("GSPRT [{}, {}] alpha {} beta {}", self.elo0, self.elo1, self.alpha, self.beta);
        let bounds = format!("bounds {:.3}, {:.3}", self.lower, self.upper);
        match &self.stopped {
            Some(x) => {
                format!(
                    "{test}: {} at LLR {:.3} ({bounds}) after {} games ({} pairs); LLR {:.3} counting the games then in flight",
                    x.decision, x.llr, x.games, x.pairs, self.llr
                )
            }
            None => format!("{test}: {}, LLR {:.3} ({bounds})", self.decision, self.llr),
        }
    }
}

/// One pairing from its first player's (a's) point of view.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PairingStats {
    pub a: String,
    pub b: String,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// a's results with Black and with White (the first hand, for matches of hands).
    pub as_black: [u64; 3],
    pub as_white: [u64; 3],
    pub score: f64,
    pub score_lo: f64,
    pub score_hi: f64,
    pub elo: f64,
    pub elo_lo: f64,
    pub elo_hi: f64,
    /// Counts of pairs scoring 0, ½, 1, 1½, 2 for a.
    pub pentanomial: [u64; 5],
    pub pentanomial_elo_lo: f64,
    pub pentanomial_elo_hi: f64,
    pub los: f64,
    pub draw_ratio: f64,
    pub sprt: Option<SprtState>,
}

impl PairingStats {
    pub(crate) fn short_line(&self) -> String {
        let mut s = format!(
            "{} vs {}: {:.3} [{:.3}, {:.3}] +{} ={} -{} Elo {:+.0} [{:+.0}, {:+.0}]",
            self.a, self.b, self.score, self.score_lo, self.score_hi, self.wins, self.draws, self.losses, self.elo, self.elo_lo, self.elo_hi
        );
        if let Some(x) = &self.sprt {
            s += &match &x.stopped {
                Some(stop) => format!(" {} at LLR {:.2} after {} games", stop.decision, stop.llr, stop.games),
                None => format!(" LLR {:.2} [{:.2}, {:.2}] {}", x.llr, x.lower, x.upper, x.decision),
            };
        }
        s
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub players: Vec<String>,
    pub games: u64,
    pub pairings: Vec<PairingStats>,
    pub ratings: stats::RatingList,
    /// The ratings' covariance in Elo², by index into `players`
    /// ([`stats::fit_ratings_with_covariance`]); not written to `summary.json`, so empty
    /// in a report read back from it.
    #[serde(skip)]
    pub rating_covariance: Vec<Vec<f64>>,
    /// Games by how they ended (`checkmate`, `repetition`, `time-forfeit`, …).
    pub endings: BTreeMap<String, u64>,
    pub anchor: String,
}

const Z95: f64 = 1.959_963_984_540_054;

/// Statistics of one pairing over the results so far (in the order they were recorded,
/// which decides where an SPRT stopped).
pub(crate) fn pairing_stats(names: &[String], (a, b): (usize, usize), results: &[JobResult], sprt: Option<&Sprt>) -> PairingStats {
    let mut tri = Trinomial::default();
    let mut as_black = [0u64; 3];
    let mut as_white = [0u64; 3];
    // Games of one pair share (round, pairing): ids 2k and 2k+1.
    let mut pairs: HashMap<u64, Vec<f64>> = HashMap::new();
    let mut tracker = sprt.map(|s| SprtTracker::new(*s, (a, b)));
    for r in results {
        let Some(s) = score_of(r, (a, b)) else { continue };
        let idx = if s == 1.0 {
            0
        } else if s == 0.5 {
            1
        } else {
            2
        };
        match idx {
            0 => tri.wins += 1,
            1 => tri.draws += 1,
            _ => tri.losses += 1,
        }
        let a_first = r.job.first == a;
        let a_black = a_first == r.hands.first().is_none_or(|h| h.first_is_black);
        if a_black {
            as_black[idx] += 1;
        } else {
            as_white[idx] += 1;
        }
        pairs.entry(r.job.id / 2).or_default().push(s);
        if let Some(t) = &mut tracker {
            t.push(r);
        }
    }
    let mut penta = Pentanomial::default();
    for v in pairs.values().filter(|v| v.len() == 2) {
        // Scores are 0, ½ or 1 by construction.
        let _ = penta.add_pair(v[0], v[1]);
    }
    let (score_lo, score_hi) = tri.score_interval(Z95);
    let (elo_lo, elo_hi) = tri.elo_interval(0.95);
    let (pentanomial_elo_lo, pentanomial_elo_hi) = penta.elo_interval(0.95);
    let sprt = tracker.map(|t| t.state());
    PairingStats {
        a: names[a].clone(),
        b: names[b].clone(),
        games: tri.games(),
        wins: tri.wins,
        draws: tri.draws,
        losses: tri.losses,
        as_black,
        as_white,
        score: tri.score(),
        score_lo,
        score_hi,
        elo: tri.elo(),
        elo_lo,
        elo_hi,
        pentanomial: [penta.ll, penta.ld_dl, penta.lw_dd_wl, penta.dw_wd, penta.ww],
        pentanomial_elo_lo,
        pentanomial_elo_hi,
        los: tri.los(),
        draw_ratio: tri.draw_ratio(),
        sprt,
    }
}

pub fn build(names: &[String], pairings: &[(usize, usize)], results: &[JobResult], anchor: usize, anchor_elo: f64, sprt: Option<&Sprt>) -> Report {
    let pairings_stats: Vec<PairingStats> = pairings.iter().map(|&p| pairing_stats(names, p, results, sprt)).collect();
    let mut table: BTreeMap<(usize, usize), (u64, u64, u64)> = BTreeMap::new();
    let mut endings = BTreeMap::new();
    for r in results {
        let (i, j) = (r.job.first, r.job.second);
        let e = table.entry((i, j)).or_default();
        if r.first_score > 0.75 {
            e.0 += 1;
        } else if r.first_score > 0.25 {
            e.1 += 1;
        } else {
            e.2 += 1;
        }
        for h in &r.hands {
            *endings.entry(h.end.name().to_string()).or_insert(0) += 1;
        }
    }
    let pair_results: Vec<stats::PairResult> =
        table.into_iter().map(|((i, j), (w, d, l))| stats::PairResult { i, j, wins_i: w, draws: d, wins_j: l }).collect();
    let (ratings, rating_covariance) = stats::fit_ratings_with_covariance(names, &pair_results, anchor, anchor_elo);
    Report {
        players: names.to_vec(),
        games: results.len() as u64,
        pairings: pairings_stats,
        ratings,
        rating_covariance,
        endings,
        anchor: names[anchor].clone(),
    }
}

/// Elo of a score at the clamp ([`stats::elo_from_score`] of 0 or 1) or beyond: infinite
/// in truth, so shown as `±inf`.
const ELO_AT_CLAMP: f64 = 2399.0;

fn fmt_elo(x: f64) -> String {
    // No "-0" for a zero-width interval at an even score.
    let x = if x.abs() < 0.5 { 0.0 } else { x };
    if x.is_finite() && x.abs() < ELO_AT_CLAMP {
        format!("{x:+.0}")
    } else if x > 0.0 {
        "+inf".into()
    } else if x < 0.0 {
        "-inf".into()
    } else {
        "n/a".into()
    }
}

/// A pairing's Elo with its interval from the game counts. A sweep has no finite Elo:
/// it shows the bound of the score's Wilson interval instead (`> +248` for 16–0).
fn elo_cell(p: &PairingStats) -> String {
    let (lo, hi) = stats::wilson_interval(p.score, p.games as f64, stats::z_for_confidence(0.95));
    if p.games > 0 && p.wins == p.games {
        format!("> {} [{}, +inf]", fmt_elo(stats::elo_from_score(lo)), fmt_elo(stats::elo_from_score(lo)))
    } else if p.games > 0 && p.losses == p.games {
        format!("< {} [-inf, {}]", fmt_elo(stats::elo_from_score(hi)), fmt_elo(stats::elo_from_score(hi)))
    } else {
        format!("{} [{}, {}]", fmt_elo(p.elo), fmt_elo(p.elo_lo), fmt_elo(p.elo_hi))
    }
}

/// The report as a terminal table.
pub fn table(r: &Report) -> String {
    let mut s = String::new();
    s += &format!(
        "{:<28} {:<28} {:>5} {:>13} {:>7} {:>22} {:>22} {:>6} {:>5}\n",
        "player", "opponent", "games", "+/=/-", "score", "Elo [95%] games", "Elo [95%] pairs", "LOS", "draws"
    );
    for p in &r.pairings {
        s += &format!(
            "{:<28} {:<28} {:>5} {:>13} {:>7.3} {:>22} {:>22} {:>6.3} {:>5.2}\n",
            p.a,
            p.b,
            p.games,
            format!("{}/{}/{}", p.wins, p.draws, p.losses),
            p.score,
            elo_cell(p),
            format!("[{}, {}]", fmt_elo(p.pentanomial_elo_lo), fmt_elo(p.pentanomial_elo_hi)),
            p.los,
            p.draw_ratio
        );
        if let Some(x) = &p.sprt {
            s += &format!("  {}\n", x.describe());
        }
    }
    s += &format!("\nratings (maximum likelihood, anchor {} fixed):\n", r.anchor);
    s += &format!("{:<4} {:<28} {:>7} {:>18} {:>6} {:>6}\n", "rank", "player", "Elo", "95% interval", "games", "score");
    for (k, e) in r.ratings.entries.iter().enumerate() {
        s += &format!(
            "{:<4} {:<28} {:>7} {:>18} {:>6} {:>6.3}\n",
            k + 1,
            e.name,
            fmt_elo(e.elo),
            format!("[{}, {}]", fmt_elo(e.lo), fmt_elo(e.hi)),
            e.games,
            e.score
        );
    }
    if !r.ratings.virtual_pairings.is_empty() {
        // Without them the ratings of these pairings would be infinite: their gaps are
        // a floor set by the virtual draws, and every rating moves with their number.
        let pairs: Vec<String> = r.ratings.virtual_pairings.iter().map(|(a, b)| format!("{a}–{b}")).collect();
        s += &format!(
            "virtual draws: {} (one on each pairing where one side never scored: {}); these gaps are lower bounds\n",
            r.ratings.virtual_draws,
            pairs.join(", ")
        );
    }
    s += "\nendings: ";
    s += &r.endings.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
    s.push('\n');
    s
}

/// Writes `summary.json`, `pairings.csv`, `ratings.csv` and `ratings.svg` into `dir`.
pub fn write(r: &Report, dir: &Path) -> std::io::Result<()> {
    let json = serde_json::to_vec_pretty(r).map_err(std::io::Error::other)?;
    records::write_atomic(&dir.join("summary.json"), &json)?;
    let mut csv = String::from("player,opponent,games,wins,draws,losses,score,score_lo,score_hi,elo,elo_lo,elo_hi,penta_ll,penta_ld,penta_d,penta_wd,penta_ww,penta_elo_lo,penta_elo_hi,los,draw_ratio,llr,sprt_decision,sprt_stop_llr,sprt_stop_games\n");
    for p in &r.pairings {
        csv += &format!(
            "{},{},{},{},{},{},{:.4},{:.4},{:.4},{:.1},{:.1},{:.1},{},{},{},{},{},{:.1},{:.1},{:.4},{:.4},{},{},{},{}\n",
            p.a,
            p.b,
            p.games,
            p.wins,
            p.draws,
            p.losses,
            p.score,
            p.score_lo,
            p.score_hi,
            p.elo,
            p.elo_lo,
            p.elo_hi,
            p.pentanomial[0],
            p.pentanomial[1],
            p.pentanomial[2],
            p.pentanomial[3],
            p.pentanomial[4],
            p.pentanomial_elo_lo,
            p.pentanomial_elo_hi,
            p.los,
            p.draw_ratio,
            p.sprt.as_ref().map(|x| format!("{:.3}", x.llr)).unwrap_or_default(),
            p.sprt.as_ref().map(|x| x.decision.as_str()).unwrap_or_default(),
            p.sprt.as_ref().and_then(|x| x.stopped.as_ref()).map(|x| format!("{:.3}", x.llr)).unwrap_or_default(),
            p.sprt.as_ref().and_then(|x| x.stopped.as_ref()).map(|x| x.games.to_string()).unwrap_or_default()
        );
    }
    records::write_atomic(&dir.join("pairings.csv"), csv.as_bytes())?;
    let mut csv = String::from("rank,player,elo,elo_lo,elo_hi,games,score\n");
    for (k, e) in r.ratings.entries.iter().enumerate() {
        csv += &format!("{},{},{:.1},{:.1},{:.1},{},{:.4}\n", k + 1, e.name, e.elo, e.lo, e.hi, e.games, e.score);
    }
    records::write_atomic(&dir.join("ratings.csv"), csv.as_bytes())?;
    let points: Vec<crate::plot::Interval> =
        r.ratings.entries.iter().map(|e| crate::plot::Interval { label: e.name.clone(), value: e.elo, lo: e.lo, hi: e.hi }).collect();
    crate::plot::interval_chart(&dir.join("ratings.svg"), &format!("Ratings (anchor {} = fixed)", r.anchor), "Elo", &points).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::Job;

    /// Game `id` of the match between players 0 and 1 (pair `id / 2`, player 0 first in
    /// the even game), scored `score` for player 0.
    fn game(id: u64, score: f64) -> JobResult {
        let zero_first = id.is_multiple_of(2);
        let (first, second) = if zero_first { (0, 1) } else { (1, 0) };
        JobResult {
            job: Job { id, first, second, opening: (id / 2) as usize },
            first: String::new(),
            second: String::new(),
            opening: String::new(),
            first_score: if zero_first { score } else { 1.0 - score },
            hands: Vec::new(),
            seconds: 0.0,
        }
    }

    #[test]
    fn the_table_names_the_pairings_that_rest_on_virtual_draws() {
        let names = vec!["a".to_string(), "b".to_string()];
        // a wins every game: the rating gap exists only through the virtual draw.
        let swept: Vec<JobResult> = (0..6).map(|id| game(id, 1.0)).collect();
        let report = build(&names, &[(0, 1)], &swept, 1, 0.0, None);
        assert_eq!(report.ratings.virtual_pairings, [("a".to_string(), "b".to_string())]);
        let text = table(&report);
        assert!(text.contains("virtual draws: 1 (one on each pairing where one side never scored: a–b)"), "{text}");
        // A traded result: no virtual draw, nothing said.
        let mut traded = swept.clone();
        traded.push(game(6, 0.0));
        let text = table(&build(&names, &[(0, 1)], &traded, 1, 0.0, None));
        assert!(!text.contains("virtual draws"), "{text}");
    }

    #[test]
    fn a_sweep_shows_an_elo_bound_not_the_clamp() {
        let names = vec!["a".to_string(), "b".to_string()];
        let swept: Vec<JobResult> = (0..16).map(|id| game(id, 1.0)).collect();
        let text = table(&build(&names, &[(0, 1)], &swept, 1, 0.0, None));
        // Hand-computed (pipeline/src/evaluation.rs): 16–0's Wilson lower bound is
        // 1 / (1 + 3.841459/16) = 0.806392, whose Elo is +247.85.
        assert!(text.contains("> +248 [+248, +inf]"), "{text}");
        assert!(!text.contains("2400"), "{text}");
        let lost: Vec<JobResult> = (0..16).map(|id| game(id, 0.0)).collect();
        let text = table(&build(&names, &[(0, 1)], &lost, 1, 0.0, None));
        assert!(text.contains("< -248 [-inf, -248]") && text.contains("[-inf, -inf]"), "{text}");
    }

    #[test]
    fn an_sprt_keeps_its_decision_and_where_it_stopped() {
        let names = vec!["a".to_string(), "b".to_string()];
        // Each won pair adds ln(s(200)/½) = 0.4183 at elo0 = 0, elo1 = 200: the eighth
        // crosses 2.944 (7 give 2.928).
        let sprt = Sprt::new(0.0, 200.0, 0.05, 0.05);
        let per_pair = (2.0 * stats::score_from_elo(200.0)).ln();
        // A game whose partner is still being played when the test stops (pair 100).
        let mut results = vec![game(200, 0.0)];
        results.extend((0..16).map(|id| game(id, 1.0)));
        // Played out after the stop: the partner, then four lost pairs.
        results.push(game(201, 0.0));
        results.extend((16..24).map(|id| game(id, 0.0)));

        let state = pairing_stats(&names, (0, 1), &results[..15], Some(&sprt)).sprt.unwrap();
        assert_eq!((state.decision.as_str(), &state.stopped), ("continue", &None));
        assert!((state.llr - 7.0 * per_pair).abs() < 1e-12);

        let report = build(&names, &[(0, 1)], &results, 0, 0.0, Some(&sprt));
        let p = &report.pairings[0];
        assert_eq!(p.pentanomial, [5, 0, 0, 0, 8]);
        let state = p.sprt.as_ref().unwrap();
        let stop = state.stopped.as_ref().unwrap();
        assert_eq!((stop.decision.as_str(), stop.pairs, stop.games), ("accept-h1", 8, 17));
        assert!((stop.llr - 8.0 * per_pair).abs() < 1e-12);
        // The later games pulled the LLR back inside the bounds; the decision stands.
        assert!(state.llr > state.lower && state.llr < state.upper, "{}", state.llr);
        assert_eq!(state.decision, "accept-h1");

        let text = table(&report);
        assert!(text.contains("accept-h1 at LLR 3.347 (bounds -2.944, 2.944) after 17 games (8 pairs)"), "{text}");
        assert!(!text.contains("continue"), "{text}");
        assert!(p.short_line().contains("accept-h1 at LLR 3.35 after 17 games"), "{}", p.short_line());
        let json: serde_json::Value = serde_json::to_value(&report).unwrap();
        assert_eq!(json["pairings"][0]["sprt"]["stopped"]["games"], 17);
        assert_eq!(json["pairings"][0]["sprt"]["decision"], "accept-h1");

        // Fed one by one, as a live match does, the tracker stops at the same place.
        let mut tracker = SprtTracker::new(sprt, (0, 1));
        for r in &results {
            tracker.push(r);
        }
        assert_eq!(tracker.stopped(), Some(stop));
    }
}
