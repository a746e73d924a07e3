//! The study's report: per cell Black's score with its interval, the Elo-equivalent,
//! the draw rate, the game length, how games ended and the network's view; per tier the
//! comparisons between starts; per cell what the pocket and the Copper did
//! ([`crate::gamestats`], with the network's value over the game from
//! [`crate::phasevalues`]). Printed as a table and written as `summary.json`, `cells.csv`,
//! `comparisons.csv`, `games.csv`, `plots/score-by-length.svg`, `plots/value-by-ply.svg`,
//! `start-values.csv` (with a run directory) and one `games/<tier>/<start>.sfen` per cell.
//! Every file is written atomically.

use crate::error::{io_err, BalanceError};
use crate::gamestats::{self, GameStats};
use crate::netview::NetView;
use crate::phasevalues::PhaseValues;
use crate::registry::{Registry, CELL_STRIDE};
use crate::stats::{two_sample_test, BlackTally, CellStats, Difference, CONFIDENCE};
use arena::runner::JobResult;
use records::run_dir::StartValues;
use rules::{Color, Outcome};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// How games end, in the order the CSV lists them (`arena::GameEnd::name`); anything
/// else is counted as `other`.
pub const ENDINGS: [&str; 9] =
    ["checkmate", "flag", "repetition", "perpetual-check", "declaration", "max-plies", "pawn-drop-mate", "resignation", "no-legal-moves"];

/// One cell: a tier against itself from a start.
#[derive(Clone, Debug, Serialize)]
pub struct CellReport {
    pub tier: String,
    pub start: String,
    /// The cell's fixed index (job ids `index · 1_000_000 + game`).
    pub index: u64,
    #[serde(flatten)]
    pub stats: CellStats,
    /// Mean game length in plies (the opening plies included).
    pub mean_plies: f64,
    /// Games by how they ended (`arena::GameEnd::name`).
    pub endings: BTreeMap<String, u64>,
    /// The tier's network's view of the start (checkpoint tiers).
    pub net: Option<NetView>,
    /// What the pocket and the Copper did in the cell's games (`games.csv`).
    pub game_stats: GameStats,
}

/// Two starts at one tier: Black's score at `a` minus at `b`.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub tier: String,
    pub a: String,
    pub b: String,
    pub games_a: u64,
    pub games_b: u64,
    pub score_a: f64,
    pub score_b: f64,
    #[serde(flatten)]
    pub test: Difference,
}

impl Comparison {
    /// Start `a` against start `b` at `tier`, from their tallies.
    pub fn of(tier: &str, a: &str, b: &str, ta: &BlackTally, tb: &BlackTally) -> Comparison {
        Comparison {
            tier: tier.to_string(),
            a: a.to_string(),
            b: b.to_string(),
            games_a: ta.games(),
            games_b: tb.games(),
            score_a: ta.score(),
            score_b: tb.score(),
            test: two_sample_test(ta, tb, CONFIDENCE),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct TierInfo {
    pub name: String,
    pub spec: String,
    /// The noise it played with (`noise=` or the study's default), if any.
    pub noise: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct StartInfo {
    pub name: String,
    pub sfen: String,
}

/// Everything a study reports (`summary.json`).
#[derive(Clone, Debug, Serialize)]
pub struct StudyReport {
    pub name: String,
    pub variant: String,
    pub options: BTreeMap<String, String>,
    pub confidence: f64,
    pub games_per_cell: u32,
    pub max_plies: u32,
    /// Random plies played from each start before the tier played (0: the start itself).
    pub opening_plies: u32,
    pub seed: u64,
    pub tiers: Vec<TierInfo>,
    pub starts: Vec<StartInfo>,
    pub cells: Vec<CellReport>,
    pub comparisons: Vec<Comparison>,
    /// The network's value of each start by generation (with a run directory).
    pub generations: Vec<StartValues>,
}

/// What the report is built from besides the games.
pub struct ReportInput<'a> {
    pub name: &'a str,
    pub registry: &'a Registry,
    pub tiers: Vec<TierInfo>,
    pub starts: Vec<StartInfo>,
    /// The first mover of each start (Black for every shipped start).
    pub first_mover: BTreeMap<String, Color>,
    /// `(tier, start)` cells in report order.
    pub cells: Vec<(String, String)>,
    pub comparisons: Vec<(String, String)>,
    pub views: &'a BTreeMap<String, BTreeMap<String, NetView>>,
    pub generations: Vec<StartValues>,
    /// The network's value of each game over its phases (empty: none).
    pub phase_values: &'a PhaseValues,
}

/// The first mover's score of one game: 1, ½ or 0.
pub fn black_score(r: &JobResult, first_mover: Color) -> f64 {
    match r.hands[0].end.outcome {
        Outcome::Draw => 0.5,
        Outcome::Win(c) if c == first_mover => 1.0,
        Outcome::Win(_) => 0.0,
    }
}

/// Black's tally of a cell's games.
pub fn tally<'a>(games: impl IntoIterator<Item = &'a JobResult>, first_mover: Color) -> BlackTally {
    let mut t = BlackTally::default();
    for r in games {
        t.add_score(black_score(r, first_mover)).expect("1, 0.5 or 0");
    }
    t
}

pub fn build(input: ReportInput, results: &[JobResult]) -> StudyReport {
    let mut by_cell: BTreeMap<u64, Vec<&JobResult>> = BTreeMap::new();
    for r in results {
        by_cell.entry(r.job.id / CELL_STRIDE).or_default().push(r);
    }
    let reg = input.registry;
    let mut tallies: BTreeMap<(String, String), BlackTally> = BTreeMap::new();
    let mut cells = Vec::new();
    for (tier, start) in &input.cells {
        let Some(index) = reg.cell_index(tier, start) else { continue };
        let games: &[&JobResult] = by_cell.get(&index).map(|v| v.as_slice()).unwrap_or(&[]);
        let mover = input.first_mover.get(start).copied().unwrap_or(Color::Black);
        let t = tally(games.iter().copied(), mover);
        tallies.insert((tier.clone(), start.clone()), t);
        let mut endings = BTreeMap::new();
        for r in games {
            *endings.entry(r.hands[0].end.name().to_string()).or_insert(0) += 1;
        }
        let plies: usize = games.iter().map(|r| r.hands[0].record.moves.len()).sum();
        cells.push(CellReport {
            tier: tier.clone(),
            start: start.clone(),
            index,
            stats: CellStats::new(&t, CONFIDENCE),
            mean_plies: if games.is_empty() { f64::NAN } else { plies as f64 / games.len() as f64 },
            endings,
            net: input.views.get(tier).and_then(|v| v.get(start)).copied(),
            game_stats: gamestats::of_games(games.iter().copied(), mover, input.phase_values),
        });
    }
    let tier_names: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for (t, _) in &input.cells {
            if !v.contains(t) {
                v.push(t.clone());
            }
        }
        v
    };
    let mut comparisons = Vec::new();
    for tier in &tier_names {
        for (a, b) in &input.comparisons {
            let (Some(ta), Some(tb)) = (tallies.get(&(tier.clone(), a.clone())), tallies.get(&(tier.clone(), b.clone()))) else { continue };
            comparisons.push(Comparison::of(tier, a, b, ta, tb));
        }
    }
    StudyReport {
        name: input.name.to_string(),
        variant: reg.variant.clone(),
        options: reg.options.clone(),
        confidence: CONFIDENCE,
        games_per_cell: reg.games_per_cell,
        max_plies: reg.max_plies,
        opening_plies: reg.opening_plies,
        seed: reg.seed,
        tiers: input.tiers,
        starts: input.starts,
        cells,
        comparisons,
        generations: input.generations,
    }
}

/// A p-value: four decimals, or scientific notation below 0.0001 (empty for NaN).
fn p_text(p: f64) -> String {
    if p.is_nan() {
        String::new()
    } else if p >= 1e-4 || p == 0.0 {
        format!("{p:.4}")
    } else {
        format!("{p:.2e}")
    }
}

/// A CSV field, quoted where needed (RFC 4180).
pub(crate) fn csv(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A number for CSV: empty for NaN.
pub(crate) fn num(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:.decimals$}")
    } else if x.is_nan() {
        String::new()
    } else if x > 0.0 {
        "inf".into()
    } else {
        "-inf".into()
    }
}

pub fn cells_csv(rep: &StudyReport) -> String {
    let mut s = String::from("tier,start,opening_plies,games,black_wins,draws,white_wins,black_score,score_lo,score_hi,elo,elo_lo,elo_hi,black_win_rate,win_rate_lo,win_rate_hi,draw_rate,mean_plies");
    for e in ENDINGS {
        s += &format!(",{e}");
    }
    s += ",other_endings,net_value,net_black_win,net_draw,net_white_win\n";
    for c in &rep.cells {
        let st = &c.stats;
        s += &format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv(&c.tier),
            csv(&c.start),
            rep.opening_plies,
            st.games,
            st.black_wins,
            st.draws,
            st.white_wins,
            num(st.score, 4),
            num(st.score_lo, 4),
            num(st.score_hi, 4),
            num(st.elo, 1),
            num(st.elo_lo, 1),
            num(st.elo_hi, 1),
            num(st.black_win_rate, 4),
            num(st.win_rate_lo, 4),
            num(st.win_rate_hi, 4),
            num(st.draw_rate, 4),
            num(c.mean_plies, 1)
        );
        for e in ENDINGS {
            s += &format!(",{}", c.endings.get(e).copied().unwrap_or(0));
        }
        let other: u64 = c.endings.iter().filter(|(k, _)| !ENDINGS.contains(&k.as_str())).map(|(_, v)| v).sum();
        s += &format!(",{other}");
        match &c.net {
            Some(n) => s += &format!(",{},{},{},{}\n", num(n.value, 4), num(n.black_win, 4), num(n.draw, 4), num(n.white_win, 4)),
            None => s += ",,,,\n",
        }
    }
    s
}

pub fn comparisons_csv(rep: &StudyReport) -> String {
    let mut s = String::from("tier,start_a,start_b,games_a,games_b,score_a,score_b,diff,diff_lo,diff_hi,se,z,p_value\n");
    for c in &rep.comparisons {
        let t = &c.test;
        s += &format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
            csv(&c.tier),
            csv(&c.a),
            csv(&c.b),
            c.games_a,
            c.games_b,
            num(c.score_a, 4),
            num(c.score_b, 4),
            num(t.diff, 4),
            num(t.lo, 4),
            num(t.hi, 4),
            num(t.se, 4),
            num(t.z, 3),
            p_text(t.p_value)
        );
    }
    s
}

pub fn start_values_csv(gens: &[StartValues]) -> String {
    let mut s = String::from("generation,start,value,black_win,draw,white_win\n");
    for g in gens {
        for v in &g.starts {
            s += &format!("{},{},{:.4},{:.4},{:.4},{:.4}\n", g.generation, csv(&v.name), v.value, v.black_win, v.draw, v.white_win);
        }
    }
    s
}

/// The terminal table: cells, then comparisons.
pub fn table(rep: &StudyReport) -> String {
    let pct = |x: f64| if x.is_finite() { format!("{:.1}", 100.0 * x) } else { "-".into() };
    // A pooled report (`crate::pool`) knows no variant: its parts' tables name none.
    let variant = if rep.variant.is_empty() {
        String::new()
    } else {
        let options = if rep.options.is_empty() {
            "default options".to_string()
        } else {
            rep.options.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
        };
        format!(": {} ({options})", rep.variant)
    };
    let mut s = format!(
        "balance study '{}'{variant}, Black's score with {:.0}% intervals{}\n",
        rep.name,
        100.0 * rep.confidence,
        if rep.opening_plies > 0 { format!("; every game starts with {} random plies from its start", rep.opening_plies) } else { String::new() }
    );
    let tw = rep.cells.iter().map(|c| c.tier.len()).max().unwrap_or(4).max(4);
    let sw = rep.cells.iter().map(|c| c.start.len()).max().unwrap_or(5).max(5) + if rep.opening_plies > 0 { 4 } else { 0 };
    s += &format!(
        "{:<tw$} {:<sw$} {:>6} {:>16} {:>22} {:>20} {:>6} {:>6}  {:<28} {}\n",
        "tier", "start", "games", "B-win/draw/W-win", "Black's score [95%]", "Elo [95%]", "draw%", "plies", "endings", "net value (W/D/L)"
    );
    for c in &rep.cells {
        let st = &c.stats;
        let score = if st.games > 0 { format!("{:.3} [{:.3}, {:.3}]", st.score, st.score_lo, st.score_hi) } else { "-".into() };
        let elo = if st.games > 0 { format!("{:+.0} [{:+.0}, {:+.0}]", st.elo, st.elo_lo, st.elo_hi) } else { "-".into() };
        let mut endings: Vec<(&String, &u64)> = c.endings.iter().collect();
        endings.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let endings = endings.iter().take(3).map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
        let net = c.net.map(|n| format!("{:+.3} ({:.2}/{:.2}/{:.2})", n.value, n.black_win, n.draw, n.white_win)).unwrap_or_default();
        let start = if rep.opening_plies > 0 { format!("{}+{}", c.start, rep.opening_plies) } else { c.start.clone() };
        s += &format!(
            "{:<tw$} {:<sw$} {:>6} {:>16} {:>22} {:>20} {:>6} {:>6}  {:<28} {}\n",
            c.tier,
            start,
            st.games,
            format!("{}/{}/{}", st.black_wins, st.draws, st.white_wins),
            score,
            elo,
            pct(st.draw_rate),
            if c.mean_plies.is_finite() { format!("{:.0}", c.mean_plies) } else { "-".into() },
            endings,
            net
        );
    }
    if !rep.comparisons.is_empty() {
        s += "\ndifferences of Black's score between starts (two-sample z-test):\n";
        for c in &rep.comparisons {
            let t = &c.test;
            s += &format!(
                "{:<tw$} {} − {}: {:+.3} [{:+.3}, {:+.3}]  z {:+.2}  p {}\n",
                c.tier,
                c.a,
                c.b,
                t.diff,
                t.lo,
                t.hi,
                t.z,
                if t.p_value.is_nan() { "-".into() } else { p_text(t.p_value) }
            );
        }
    }
    s
}

/// A name made safe as a file or directory name.
pub fn file_name(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.=+".contains(c) { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    }
}

/// `games/<tier>/<start>.sfen`: one `sfen … moves …` line per game of the cell, in game
/// order (readable back as an arena openings file).
pub fn write_game_records(dir: &Path, rep: &StudyReport, results: &[JobResult]) -> Result<(), BalanceError> {
    let mut by_cell: BTreeMap<u64, Vec<&JobResult>> = BTreeMap::new();
    for r in results {
        by_cell.entry(r.job.id / CELL_STRIDE).or_default().push(r);
    }
    for c in &rep.cells {
        let Some(games) = by_cell.get_mut(&c.index) else { continue };
        games.sort_by_key(|r| r.job.id);
        let tier_dir = dir.join("games").join(file_name(&c.tier));
        std::fs::create_dir_all(&tier_dir).map_err(io_err(&tier_dir))?;
        let text: String = games.iter().map(|r| format!("{}\n", r.hands[0].record.sfen_line())).collect();
        let path = tier_dir.join(format!("{}.sfen", file_name(&c.start)));
        records::write_atomic(&path, text.as_bytes()).map_err(io_err(&path))?;
    }
    Ok(())
}

/// Writes `summary.json`, `cells.csv`, `comparisons.csv`, `games.csv`,
/// `plots/score-by-length.svg`, `plots/value-by-ply.svg` (with phase values) and (with
/// generations) `start-values.csv`.
pub fn write_files(dir: &Path, rep: &StudyReport) -> Result<(), BalanceError> {
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        records::write_atomic(&path, bytes).map_err(io_err(&path))
    };
    let json = serde_json::to_vec_pretty(rep).map_err(|e| BalanceError::Invalid(format!("summary.json: {e}")))?;
    write("summary.json", &json)?;
    write("cells.csv", cells_csv(rep).as_bytes())?;
    write("comparisons.csv", comparisons_csv(rep).as_bytes())?;
    write("games.csv", gamestats::games_csv(rep).as_bytes())?;
    for (name, svg) in [("score-by-length.svg", gamestats::score_by_length_svg(rep)), ("value-by-ply.svg", gamestats::value_by_ply_svg(rep))] {
        let plot = dir.join("plots").join(name);
        match svg {
            Ok(Some(svg)) => {
                std::fs::create_dir_all(dir.join("plots")).map_err(io_err(&dir.join("plots")))?;
                records::write_atomic(&plot, svg.as_bytes()).map_err(io_err(&plot))?;
            }
            Ok(None) => {}
            Err(problem) => return Err(BalanceError::Plot { path: plot.display().to_string(), problem }),
        }
    }
    if !rep.generations.is_empty() {
        write("start-values.csv", start_values_csv(&rep.generations).as_bytes())?;
    }
    Ok(())
}
