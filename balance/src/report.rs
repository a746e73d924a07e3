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
use crate::stats::{contrast_test, homogeneity_test, shared_control_correlation, two_sample_test, BlackTally, CellStats, Difference, Homogeneity, CONFIDENCE};
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

/// What a [`Comparison`] contrasts (the `kind` column of `comparisons.csv`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ComparisonKind {
    /// Two starts at one tier: Black's score at `a` minus at `b`.
    Start,
    /// Two tiers at one start `a` (= `b`): `tier`'s score minus `tier_b`'s.
    Tier,
    /// One start comparison at two tiers: `a − b` at `tier` minus `a − b` at `tier_b`.
    TierStart,
    /// Whether the two moves of the Copper add up ([`ADDITIVITY`]).
    Additivity,
}

impl ComparisonKind {
    pub fn name(self) -> &'static str {
        match self {
            ComparisonKind::Start => "start",
            ComparisonKind::Tier => "tier",
            ComparisonKind::TierStart => "tier-start",
            ComparisonKind::Additivity => "additivity",
        }
    }
}

/// The 2×2 of Pocket Shogi Copper's start family: from `seed` (Black's Copper in the
/// pocket, White's in hand), `both-in-hand` moves Black's to the hand, `both-in-pocket`
/// White's to the pocket, and `swapped` does both. The interaction
/// `swapped − both-in-hand − both-in-pocket + seed` is zero when the two moves' effects add.
pub const ADDITIVITY: [(&str, f64); 4] = [("swapped", 1.0), ("both-in-hand", -1.0), ("both-in-pocket", -1.0), ("seed", 1.0)];

/// A contrast of cells' scores with its z-test (see [`ComparisonKind`] for what `a`, `b`
/// and the scores are).
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub kind: ComparisonKind,
    pub tier: String,
    /// The second tier of a cross-tier comparison; empty otherwise.
    pub tier_b: String,
    pub a: String,
    pub b: String,
    pub games_a: u64,
    pub games_b: u64,
    /// The two sides of the contrast, `diff = score_a − score_b`: the cells' scores
    /// (start, tier), the tiers' start differences (tier-start), or the effect of both
    /// moves and the sum of the single moves' effects (additivity).
    pub score_a: f64,
    pub score_b: f64,
    /// The contrast in cells, e.g. `ab-d4:swapped − ab-d4:seed`.
    pub contrast: String,
    /// Of a start compared with the study's control: its mean correlation with the other
    /// starts' comparisons against the same control (they share that cell); NaN otherwise.
    pub control_corr: f64,
    #[serde(flatten)]
    pub test: Difference,
}

impl Comparison {
    /// Start `a` against start `b` at `tier`, from their tallies.
    pub fn of(tier: &str, a: &str, b: &str, ta: &BlackTally, tb: &BlackTally) -> Comparison {
        Comparison {
            kind: ComparisonKind::Start,
            tier: tier.to_string(),
            tier_b: String::new(),
            a: a.to_string(),
            b: b.to_string(),
            games_a: ta.games(),
            games_b: tb.games(),
            score_a: ta.score(),
            score_b: tb.score(),
            contrast: format!("{tier}:{a} − {tier}:{b}"),
            control_corr: f64::NAN,
            test: two_sample_test(ta, tb, CONFIDENCE),
        }
    }
}

/// Every start of a tier at once: Cochran's Q that they share one score.
#[derive(Clone, Debug, Serialize)]
pub struct JointTest {
    pub tier: String,
    pub starts: Vec<String>,
    #[serde(flatten)]
    pub test: Homogeneity,
    /// The start every other is compared with (`seed`, else the first).
    pub control: String,
    /// The correlation of each two comparisons against `control`: `(a, b, ρ)`.
    pub correlations: Vec<(String, String, f64)>,
}

/// The comparisons and joint tests of a report's cells: each pair in `pairs` at every
/// tier, each two tiers at every start and every pair, the additivity of the Copper's two
/// moves, and each tier's joint test.
pub fn comparisons_of(
    cells: &[(String, String)],
    tallies: &BTreeMap<(String, String), BlackTally>,
    pairs: &[(String, String)],
) -> (Vec<Comparison>, Vec<JointTest>) {
    let mut tiers: Vec<&str> = Vec::new();
    let mut starts: Vec<&str> = Vec::new();
    for (t, s) in cells {
        if !tiers.contains(&t.as_str()) {
            tiers.push(t);
        }
        if !starts.contains(&s.as_str()) {
            starts.push(s);
        }
    }
    let cell = |t: &str, s: &str| tallies.get(&(t.to_string(), s.to_string()));
    let control = if starts.contains(&"seed") { "seed" } else { starts.first().copied().unwrap_or("") };
    let mut out = Vec::new();
    let mut joint = Vec::new();
    for &tier in &tiers {
        let first = out.len();
        for (a, b) in pairs {
            let (Some(ta), Some(tb)) = (cell(tier, a), cell(tier, b)) else { continue };
            out.push(Comparison::of(tier, a, b, ta, tb));
        }
        let present: Vec<&str> = starts.iter().copied().filter(|s| cell(tier, s).is_some()).collect();
        let mut correlations = Vec::new();
        if let Some(tc) = cell(tier, control) {
            let others: Vec<&str> = present.iter().copied().filter(|s| *s != control).collect();
            for (i, a) in others.iter().enumerate() {
                for b in &others[i + 1..] {
                    let rho = shared_control_correlation(cell(tier, a).unwrap(), cell(tier, b).unwrap(), tc);
                    correlations.push((a.to_string(), b.to_string(), rho));
                }
            }
            for c in &mut out[first..] {
                if c.b == control {
                    let rhos: Vec<f64> = correlations.iter().filter(|(x, y, _)| *x == c.a || *y == c.a).map(|r| r.2).collect();
                    if !rhos.is_empty() {
                        c.control_corr = rhos.iter().sum::<f64>() / rhos.len() as f64;
                    }
                }
            }
        }
        if present.len() >= 2 {
            let t: Vec<&BlackTally> = present.iter().map(|s| cell(tier, s).unwrap()).collect();
            joint.push(JointTest {
                tier: tier.to_string(),
                starts: present.iter().map(|s| s.to_string()).collect(),
                test: homogeneity_test(&t),
                control: control.to_string(),
                correlations,
            });
        }
        let four: Option<Vec<(f64, &BlackTally)>> = ADDITIVITY.iter().map(|(s, c)| cell(tier, s).map(|t| (*c, t))).collect();
        if let Some(terms) = four {
            let [sw, bh, bp, seed] = [0, 1, 2, 3].map(|i| terms[i].1.score());
            out.push(Comparison {
                kind: ComparisonKind::Additivity,
                tier: tier.to_string(),
                tier_b: String::new(),
                a: ADDITIVITY[0].0.to_string(),
                b: ADDITIVITY[3].0.to_string(),
                games_a: terms[0].1.games(),
                games_b: terms[3].1.games(),
                score_a: sw - seed,
                score_b: (bh - seed) + (bp - seed),
                contrast: ADDITIVITY
                    .iter()
                    .enumerate()
                    .map(|(i, (s, c))| {
                        format!(
                            "{}{tier}:{s}",
                            if i == 0 {
                                ""
                            } else if *c > 0.0 {
                                " + "
                            } else {
                                " − "
                            }
                        )
                    })
                    .collect(),
                control_corr: f64::NAN,
                test: contrast_test(&terms, CONFIDENCE),
            });
        }
    }
    for (i, &ta) in tiers.iter().enumerate() {
        for &tb in &tiers[i + 1..] {
            for &s in &starts {
                let (Some(x), Some(y)) = (cell(ta, s), cell(tb, s)) else { continue };
                out.push(Comparison {
                    kind: ComparisonKind::Tier,
                    tier: ta.to_string(),
                    tier_b: tb.to_string(),
                    a: s.to_string(),
                    b: s.to_string(),
                    games_a: x.games(),
                    games_b: y.games(),
                    score_a: x.score(),
                    score_b: y.score(),
                    contrast: format!("{ta}:{s} − {tb}:{s}"),
                    control_corr: f64::NAN,
                    test: two_sample_test(x, y, CONFIDENCE),
                });
            }
            for (a, b) in pairs {
                let (Some(xa), Some(xb), Some(ya), Some(yb)) = (cell(ta, a), cell(ta, b), cell(tb, a), cell(tb, b)) else { continue };
                out.push(Comparison {
                    kind: ComparisonKind::TierStart,
                    tier: ta.to_string(),
                    tier_b: tb.to_string(),
                    a: a.clone(),
                    b: b.clone(),
                    games_a: xa.games() + xb.games(),
                    games_b: ya.games() + yb.games(),
                    score_a: xa.score() - xb.score(),
                    score_b: ya.score() - yb.score(),
                    contrast: format!("({ta}:{a} − {ta}:{b}) − ({tb}:{a} − {tb}:{b})"),
                    control_corr: f64::NAN,
                    test: contrast_test(&[(1.0, xa), (-1.0, xb), (-1.0, ya), (1.0, yb)], CONFIDENCE),
                });
            }
        }
    }
    (out, joint)
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
    /// Each tier's joint test of its starts, with the comparisons' correlations.
    pub joint: Vec<JointTest>,
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
    let (comparisons, joint) = comparisons_of(&input.cells, &tallies, &input.comparisons);
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
        joint,
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

/// `comparisons.csv`: every comparison, then each tier's joint test (kind `all-starts`:
/// `chi2`, `df` and `p_value` of Cochran's Q, the starts in `contrast`).
pub fn comparisons_csv(rep: &StudyReport) -> String {
    let mut s =
        String::from("kind,tier,tier_b,start_a,start_b,games_a,games_b,score_a,score_b,diff,diff_lo,diff_hi,se,z,p_value,control_corr,chi2,df,contrast\n");
    for c in &rep.comparisons {
        let t = &c.test;
        s += &format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},,,{}\n",
            c.kind.name(),
            csv(&c.tier),
            csv(&c.tier_b),
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
            p_text(t.p_value),
            num(c.control_corr, 3),
            csv(&c.contrast)
        );
    }
    for j in &rep.joint {
        let games: u64 = rep.cells.iter().filter(|c| c.tier == j.tier && j.starts.contains(&c.start)).map(|c| c.stats.games).sum();
        s += &format!(
            "all-starts,{},,,{},{games},,,,,,,,,{},,{},{},{}\n",
            csv(&j.tier),
            csv(&j.control),
            p_text(j.test.p_value),
            num(j.test.chi2, 3),
            j.test.df,
            csv(&j.starts.join(" = "))
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
    let heading = |kind: ComparisonKind| match kind {
        ComparisonKind::Start => "differences of Black's score between starts (two-sample z-test):",
        ComparisonKind::Additivity => "do the Copper's two moves add up? (swapped − both-in-hand − both-in-pocket + seed, z-test):",
        ComparisonKind::Tier => "differences between tiers at each start (two-sample z-test):",
        ComparisonKind::TierStart => "differences between tiers in each start comparison (z-test of the difference of differences):",
    };
    for kind in [ComparisonKind::Start, ComparisonKind::Additivity, ComparisonKind::Tier, ComparisonKind::TierStart] {
        let rows: Vec<&Comparison> = rep.comparisons.iter().filter(|c| c.kind == kind).collect();
        if rows.is_empty() {
            continue;
        }
        s += &format!("\n{}\n", heading(kind));
        for c in rows {
            let t = &c.test;
            s += &format!(
                "{}: {:+.3} [{:+.3}, {:+.3}]  z {:+.2}  p {}\n",
                c.contrast,
                t.diff,
                t.lo,
                t.hi,
                t.z,
                if t.p_value.is_nan() { "-".into() } else { p_text(t.p_value) }
            );
        }
    }
    if !rep.joint.is_empty() {
        s += "\nevery start of a tier at once (Cochran's Q; comparisons against the control correlate by ρ):\n";
        for j in &rep.joint {
            let rho: Vec<f64> = j.correlations.iter().map(|r| r.2).filter(|r| r.is_finite()).collect();
            let rho = if rho.is_empty() {
                String::new()
            } else {
                format!("  ρ {:.2}–{:.2}", rho.iter().cloned().fold(f64::INFINITY, f64::min), rho.iter().cloned().fold(f64::NEG_INFINITY, f64::max))
            };
            s += &format!(
                "{:<tw$} {} starts: χ² {:.2}, {} df, p {}{rho}\n",
                j.tier,
                j.starts.len(),
                j.test.chi2,
                j.test.df,
                if j.test.p_value.is_nan() { "-".into() } else { p_text(j.test.p_value) }
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
