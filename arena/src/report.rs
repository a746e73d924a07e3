//! A tournament's report: per pairing W/D/L (by colour), score, Elo with 95% intervals
//! from game (trinomial) and game-pair (pentanomial) counts, LOS, draw ratio and the
//! GSPRT state; a rating list of all players fitted by maximum likelihood; how games
//! ended. Printed as a table, written as JSON and CSV, and drawn as a plot.

use crate::runner::JobResult;
use crate::stats::{self, Pentanomial, Sprt, Trinomial};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SprtState {
    pub llr: f64,
    pub lower: f64,
    pub upper: f64,
    /// "accept-h0", "accept-h1" or "continue".
    pub decision: String,
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
    pub fn short_line(&self) -> String {
        let mut s = format!(
            "{} vs {}: {:.3} [{:.3}, {:.3}] +{} ={} -{} Elo {:+.0} [{:+.0}, {:+.0}]",
            self.a, self.b, self.score, self.score_lo, self.score_hi, self.wins, self.draws, self.losses, self.elo, self.elo_lo, self.elo_hi
        );
        if let Some(x) = &self.sprt {
            s += &format!(" LLR {:.2} [{:.2}, {:.2}] {}", x.llr, x.lower, x.upper, x.decision);
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
    /// Games by how they ended (`checkmate`, `repetition`, `time-forfeit`, …).
    pub endings: BTreeMap<String, u64>,
    pub anchor: String,
}

const Z95: f64 = 1.959_963_984_540_054;

/// Statistics of one pairing over the results so far.
pub fn pairing_stats(names: &[String], (a, b): (usize, usize), results: &[JobResult], sprt: Option<&Sprt>) -> PairingStats {
    let mut tri = Trinomial::default();
    let mut as_black = [0u64; 3];
    let mut as_white = [0u64; 3];
    // Games of one pair share (round, pairing): ids 2k and 2k+1.
    let mut pairs: HashMap<u64, Vec<f64>> = HashMap::new();
    for r in results {
        let (j, a_first) = match (r.job.first, r.job.second) {
            (x, y) if x == a && y == b => (r, true),
            (x, y) if x == b && y == a => (r, false),
            _ => continue,
        };
        let s = if a_first { j.first_score } else { 1.0 - j.first_score };
        let idx = if s > 0.75 {
            0
        } else if s > 0.25 {
            1
        } else {
            2
        };
        match idx {
            0 => tri.wins += 1,
            1 => tri.draws += 1,
            _ => tri.losses += 1,
        }
        let a_black = a_first == j.hands.first().is_none_or(|h| h.first_is_black);
        if a_black {
            as_black[idx] += 1;
        } else {
            as_white[idx] += 1;
        }
        pairs.entry(j.job.id / 2).or_default().push(s);
    }
    let mut penta = Pentanomial::default();
    for v in pairs.values().filter(|v| v.len() == 2) {
        // Scores are 0, ½ or 1 by construction.
        let _ = penta.add_pair(v[0], v[1]);
    }
    let (score_lo, score_hi) = tri.score_interval(Z95);
    let (elo_lo, elo_hi) = tri.elo_interval(0.95);
    let (pentanomial_elo_lo, pentanomial_elo_hi) = penta.elo_interval(0.95);
    let sprt = sprt.map(|s| {
        let llr = s.llr_pentanomial(&penta);
        let (lower, upper) = s.bounds();
        let decision = match s.decide(llr) {
            stats::SprtDecision::AcceptH0 => "accept-h0",
            stats::SprtDecision::AcceptH1 => "accept-h1",
            stats::SprtDecision::Continue => "continue",
        };
        SprtState { llr, lower, upper, decision: decision.into() }
    });
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
    let ratings = stats::fit_ratings(names, &pair_results, anchor, anchor_elo);
    Report { players: names.to_vec(), games: results.len() as u64, pairings: pairings_stats, ratings, endings, anchor: names[anchor].clone() }
}

fn fmt_elo(x: f64) -> String {
    // No "-0" for a zero-width interval at an even score.
    let x = if x.abs() < 0.5 { 0.0 } else { x };
    if x.is_finite() {
        format!("{x:+.0}")
    } else if x > 0.0 {
        "+inf".into()
    } else if x < 0.0 {
        "-inf".into()
    } else {
        "n/a".into()
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
            format!("{} [{}, {}]", fmt_elo(p.elo), fmt_elo(p.elo_lo), fmt_elo(p.elo_hi)),
            format!("[{}, {}]", fmt_elo(p.pentanomial_elo_lo), fmt_elo(p.pentanomial_elo_hi)),
            p.los,
            p.draw_ratio
        );
        if let Some(x) = &p.sprt {
            s += &format!("  GSPRT: LLR {:.3} (bounds {:.3}, {:.3}) {}\n", x.llr, x.lower, x.upper, x.decision);
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
    s += "\nendings: ";
    s += &r.endings.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
    s.push('\n');
    s
}

/// Writes `summary.json`, `pairings.csv`, `ratings.csv` and `ratings.svg` into `dir`.
pub fn write(r: &Report, dir: &Path) -> std::io::Result<()> {
    let json = serde_json::to_vec_pretty(r).map_err(std::io::Error::other)?;
    records::write_atomic(&dir.join("summary.json"), &json)?;
    let mut csv = String::from("player,opponent,games,wins,draws,losses,score,score_lo,score_hi,elo,elo_lo,elo_hi,penta_ll,penta_ld,penta_d,penta_wd,penta_ww,penta_elo_lo,penta_elo_hi,los,draw_ratio,llr\n");
    for p in &r.pairings {
        csv += &format!(
            "{},{},{},{},{},{},{:.4},{:.4},{:.4},{:.1},{:.1},{:.1},{},{},{},{},{},{:.1},{:.1},{:.4},{:.4},{}\n",
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
            p.sprt.as_ref().map(|x| format!("{:.3}", x.llr)).unwrap_or_default()
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
