//! Pooling studies played apart: the cells of two or more studies of the same tiers and
//! starts, read from their published `cells.csv`, added cell by cell — a second machine
//! that had no shared store, or games played after a study's results were lost and only
//! its tables were kept.
//!
//! A pooled cell's counts (Black wins, draws, White wins, endings) are the sums of its
//! parts; its score interval, Elo and win-rate interval are recomputed from the summed
//! tally ([`CellStats::new`]), its mean length is the parts' means weighted by their games
//! (each was rounded to 0.1 ply, so the pooled mean is good to 0.05), and the comparisons
//! are the two-sample tests of the pooled tallies. Game statistics (`games.csv`) are not
//! pooled; each study keeps its own.
//!
//! Pooling is sound for independent games of the same players: the parts must share
//! `opening_plies` (checked) and must have been played with different seeds — games of one
//! seed are the same games, counted twice. `cells.csv` does not carry the seed, so that is
//! the caller's to keep.

use crate::error::{io_err, BalanceError};
use crate::gamestats;
use crate::netview::NetView;
use crate::phasevalues::PhaseValues;
use crate::report::{CellReport, StudyReport, ENDINGS};
use crate::stats::{BlackTally, CellStats, CONFIDENCE};
use rules::Color;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One row of a `cells.csv`: what pooling needs of a cell.
#[derive(Clone, Debug, PartialEq)]
struct PartCell {
    tier: String,
    start: String,
    opening_plies: u32,
    tally: BlackTally,
    mean_plies: f64,
    endings: BTreeMap<String, u64>,
    net: Option<NetView>,
}

/// Reads the cells of one study's `cells.csv` text (`source` names it in errors).
fn parse_cells(source: &str, text: &str) -> Result<Vec<PartCell>, BalanceError> {
    let bad = |line: u64, problem: String| BalanceError::Invalid(format!("{source} line {line}: {problem}"));
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| bad(1, format!("not a cells.csv header: {e}")))?.clone();
    let column = |name: &str| headers.iter().position(|h| h == name).ok_or_else(|| bad(1, format!("no column '{name}' (not a study's cells.csv)")));
    let [tier, start, opening, games, wins, draws, losses, plies] =
        ["tier", "start", "opening_plies", "games", "black_wins", "draws", "white_wins", "mean_plies"].map(column);
    let (tier, start, opening, games, wins, draws, losses, plies) = (tier?, start?, opening?, games?, wins?, draws?, losses?, plies?);
    // Endings outside ENDINGS are summed in `other_endings`; `cells_csv` puts them back there.
    let ending_cols: Vec<(String, usize)> = ENDINGS
        .iter()
        .map(|e| (e.to_string(), *e))
        .chain([("other".to_string(), "other_endings")])
        .map(|(name, col)| column(col).map(|i| (name, i)))
        .collect::<Result<_, _>>()?;
    let net_cols: Option<[usize; 4]> = ["net_value", "net_black_win", "net_draw", "net_white_win"]
        .map(|n| headers.iter().position(|h| h == n))
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .map(|v| [v[0], v[1], v[2], v[3]]);
    let mut out = Vec::new();
    for (k, row) in reader.records().enumerate() {
        let row = row.map_err(|e| bad(e.position().map_or(k as u64 + 2, |p| p.line()), e.to_string()))?;
        let line = row.position().map_or(k as u64 + 2, |p| p.line());
        let field = |i: usize| row.get(i).unwrap_or("");
        let count = |i: usize| field(i).parse::<u64>().map_err(|_| bad(line, format!("{} = '{}': expected a count", &headers[i], field(i))));
        let (n, w, d, l) = (count(games)?, count(wins)?, count(draws)?, count(losses)?);
        if w.checked_add(d).and_then(|x| x.checked_add(l)) != Some(n) {
            return Err(bad(line, format!("games = {n} but black_wins + draws + white_wins = {w} + {d} + {l}")));
        }
        let mut endings = BTreeMap::new();
        for (name, i) in &ending_cols {
            let c = count(*i)?;
            if c > 0 {
                endings.insert(name.clone(), c);
            }
        }
        let ended = endings.values().try_fold(0u64, |a, &c| a.checked_add(c));
        if ended != Some(n) {
            return Err(bad(line, format!("games = {n} but the endings do not add up to it ({endings:?})")));
        }
        let mean_plies = match field(plies) {
            "" if n == 0 => f64::NAN,
            text => {
                text.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0).ok_or_else(|| bad(line, format!("mean_plies = '{text}': expected a length")))?
            }
        };
        let net = match net_cols {
            Some(cols) if cols.iter().all(|&i| !field(i).is_empty()) => {
                let v: Vec<f64> = cols
                    .iter()
                    .map(|&i| field(i).parse::<f64>().map_err(|_| bad(line, format!("{} = '{}': expected a number", &headers[i], field(i)))))
                    .collect::<Result<_, _>>()?;
                Some(NetView { value: v[0], black_win: v[1], draw: v[2], white_win: v[3] })
            }
            _ => None,
        };
        out.push(PartCell {
            tier: field(tier).to_string(),
            start: field(start).to_string(),
            opening_plies: field(opening).parse().map_err(|_| bad(line, format!("opening_plies = '{}': expected a count", field(opening))))?,
            tally: BlackTally::new(w, d, l),
            mean_plies,
            endings,
            net,
        });
    }
    if out.is_empty() {
        return Err(bad(2, "no cells".into()));
    }
    Ok(out)
}

/// The pooled report of the `cells.csv` files `parts` (path, text): every cell of any part,
/// in the order first seen, with every start compared against `seed` at each tier and the
/// extra `compare` pairs (`"A,B"`).
pub fn pool(name: &str, parts: &[(PathBuf, String)], compare: &[String]) -> Result<StudyReport, BalanceError> {
    if parts.is_empty() {
        return Err(BalanceError::Invalid("pooling needs a cells.csv file, got none".into()));
    }
    let mut order: Vec<(String, String)> = Vec::new();
    let mut pooled: BTreeMap<(String, String), PartCell> = BTreeMap::new();
    let mut opening_plies: Option<(u32, String)> = None;
    for (path, text) in parts {
        let source = path.display().to_string();
        let mut seen = Vec::new();
        for c in parse_cells(&source, text)? {
            match &opening_plies {
                None => opening_plies = Some((c.opening_plies, source.clone())),
                Some((p, first)) if *p != c.opening_plies => {
                    return Err(BalanceError::Invalid(format!(
                        "{source}: cell {} · {} has opening_plies {} but {first} has {p}: the games start elsewhere and do not pool",
                        c.tier, c.start, c.opening_plies
                    )))
                }
                Some(_) => {}
            }
            let key = (c.tier.clone(), c.start.clone());
            if seen.contains(&key) {
                return Err(BalanceError::Invalid(format!("{source}: cell {} · {} is listed twice", key.0, key.1)));
            }
            seen.push(key.clone());
            match pooled.get_mut(&key) {
                None => {
                    order.push(key.clone());
                    pooled.insert(key, c);
                }
                Some(p) => {
                    let (n0, n1) = (p.tally.games(), c.tally.games());
                    p.mean_plies = match (n0, n1) {
                        (_, 0) => p.mean_plies,
                        (0, _) => c.mean_plies,
                        _ => (p.mean_plies * n0 as f64 + c.mean_plies * n1 as f64) / (n0 + n1) as f64,
                    };
                    let t = &c.tally;
                    p.tally =
                        BlackTally::new(p.tally.wins.saturating_add(t.wins), p.tally.draws.saturating_add(t.draws), p.tally.losses.saturating_add(t.losses));
                    for (k, v) in c.endings {
                        let e = p.endings.entry(k).or_insert(0);
                        *e = e.saturating_add(v);
                    }
                    p.net = p.net.or(c.net);
                }
            }
        }
    }
    let no_values = PhaseValues::default();
    let cells: Vec<CellReport> = order
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let c = &pooled[key];
            CellReport {
                tier: c.tier.clone(),
                start: c.start.clone(),
                index: i as u64,
                stats: CellStats::new(&c.tally, CONFIDENCE),
                mean_plies: c.mean_plies,
                endings: c.endings.clone(),
                net: c.net,
                game_stats: gamestats::of_games(std::iter::empty(), Color::Black, &no_values),
            }
        })
        .collect();
    let pairs = crate::config::comparison_pairs(order.iter().map(|(_, s)| s.as_str()), compare)?;
    let tallies: BTreeMap<(String, String), BlackTally> = pooled.iter().map(|(k, c)| (k.clone(), c.tally)).collect();
    let (comparisons, joint) = crate::report::comparisons_of(&order, &tallies, &pairs);
    Ok(StudyReport {
        name: name.to_string(),
        variant: String::new(),
        options: BTreeMap::new(),
        confidence: CONFIDENCE,
        games_per_cell: u32::try_from(cells.iter().map(|c| c.stats.games).max().unwrap_or(0)).unwrap_or(u32::MAX),
        max_plies: 0,
        opening_plies: opening_plies.map_or(0, |(p, _)| p),
        seed: 0,
        tiers: Vec::new(),
        starts: Vec::new(),
        cells,
        comparisons,
        joint,
        generations: Vec::new(),
    })
}

/// The `games.csv` beside a `cells.csv` (`X/cells.csv` → `X/games.csv`, `A-cells.csv` →
/// `A-games.csv`), if there is one.
pub fn games_beside(cells: &Path) -> Option<PathBuf> {
    let name = cells.file_name()?.to_str()?;
    let games = cells.with_file_name(format!("{}games.csv", name.strip_suffix("cells.csv")?));
    games.is_file().then_some(games)
}

/// Pools the `cells.csv` files at `paths` and writes `cells.csv`, `comparisons.csv` and
/// `plots/black-score.svg` into `out`; where every part has its `games.csv` beside it
/// ([`games_beside`]), their game statistics are pooled too, cell by cell, into
/// `games.csv`. Returns the report and whether the game statistics were pooled.
pub fn pool_files(name: &str, paths: &[PathBuf], compare: &[String], out: &Path) -> Result<(StudyReport, bool), BalanceError> {
    let parts = paths.iter().map(|p| std::fs::read_to_string(p).map(|t| (p.clone(), t)).map_err(io_err(p))).collect::<Result<Vec<_>, _>>()?;
    let mut rep = pool(name, &parts, compare)?;
    let games: Option<Vec<PathBuf>> = paths.iter().map(|p| games_beside(p)).collect();
    if let Some(games) = &games {
        let mut by_cell: BTreeMap<(String, String), Vec<gamestats::GameStats>> = BTreeMap::new();
        for g in games {
            let text = std::fs::read_to_string(g).map_err(io_err(g))?;
            for (tier, start, stats) in gamestats::read_games_csv(&g.display().to_string(), &text).map_err(BalanceError::Invalid)? {
                by_cell.entry((tier, start)).or_default().push(stats);
            }
        }
        for c in &mut rep.cells {
            if let Some(parts) = by_cell.get(&(c.tier.clone(), c.start.clone())) {
                c.game_stats = gamestats::GameStats::pooled(&parts.iter().collect::<Vec<_>>());
            }
        }
    }
    std::fs::create_dir_all(out).map_err(io_err(out))?;
    let mut files = vec![("cells.csv", crate::report::cells_csv(&rep)), ("comparisons.csv", crate::report::comparisons_csv(&rep))];
    if games.is_some() {
        files.push(("games.csv", gamestats::games_csv(&rep)));
    }
    for (file, text) in files {
        let path = out.join(file);
        records::write_atomic(&path, text.as_bytes()).map_err(io_err(&path))?;
    }
    crate::plots::write_plots(out, &rep, &BTreeMap::new())?;
    Ok((rep, games.is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::cells_csv;
    use crate::stats::two_sample_test;

    /// `(tier, start, W, D, L, mean plies, endings)`.
    type Cell<'a> = (&'a str, &'a str, u64, u64, u64, f64, &'a [(&'a str, u64)]);

    /// A `cells.csv` as a study writes it, of `cells`.
    fn part(opening_plies: u32, cells: &[Cell]) -> String {
        let no_values = PhaseValues::default();
        let cells = cells
            .iter()
            .enumerate()
            .map(|(i, &(tier, start, w, d, l, plies, endings))| CellReport {
                tier: tier.into(),
                start: start.into(),
                index: i as u64,
                stats: CellStats::new(&BlackTally::new(w, d, l), CONFIDENCE),
                mean_plies: plies,
                endings: endings.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
                net: None,
                game_stats: gamestats::of_games(std::iter::empty(), Color::Black, &no_values),
            })
            .collect();
        let rep = StudyReport {
            name: "part".into(),
            variant: "pocket-copper".into(),
            options: BTreeMap::new(),
            confidence: CONFIDENCE,
            games_per_cell: 0,
            max_plies: 0,
            opening_plies,
            seed: 1,
            tiers: Vec::new(),
            starts: Vec::new(),
            cells,
            comparisons: Vec::new(),
            joint: Vec::new(),
            generations: Vec::new(),
        };
        cells_csv(&rep)
    }

    fn parts(texts: &[String]) -> Vec<(PathBuf, String)> {
        texts.iter().enumerate().map(|(i, t)| (PathBuf::from(format!("part{i}/cells.csv")), t.clone())).collect()
    }

    #[test]
    fn pooled_cells_are_the_summed_counts_with_their_own_intervals() {
        // The tier's name holds a comma, so cells.csv quotes it.
        let t = "ab,d4";
        let a = part(0, &[(t, "seed", 3, 1, 0, 100.0, &[("checkmate", 3), ("repetition", 1)]), (t, "swapped", 2, 0, 2, 80.0, &[("checkmate", 4)])]);
        let b = part(0, &[(t, "seed", 1, 0, 4, 60.0, &[("checkmate", 5)]), (t, "swapped", 6, 0, 0, 50.0, &[("checkmate", 5), ("flag", 1)])]);
        let rep = pool("pooled", &parts(&[a, b]), &[]).unwrap();
        assert_eq!(rep.cells.len(), 2);
        let seed = &rep.cells[0];
        assert_eq!((seed.tier.as_str(), seed.start.as_str()), (t, "seed"));
        // 4 wins, 1 draw, 4 losses: an even score, so the interval is symmetric about ½.
        assert_eq!((seed.stats.games, seed.stats.black_wins, seed.stats.draws, seed.stats.white_wins), (9, 4, 1, 4));
        assert_eq!(seed.stats.score, 0.5);
        assert!((seed.stats.score_lo + seed.stats.score_hi - 1.0).abs() < 1e-9, "{:?}", seed.stats);
        assert_eq!(seed.stats, CellStats::new(&BlackTally::new(4, 1, 4), CONFIDENCE));
        // (4·100 + 5·60)/9 plies.
        assert!((seed.mean_plies - 700.0 / 9.0).abs() < 1e-9);
        assert_eq!(seed.endings, BTreeMap::from([("checkmate".to_string(), 8), ("repetition".to_string(), 1)]));
        let swapped = &rep.cells[1];
        assert_eq!((swapped.stats.black_wins, swapped.stats.draws, swapped.stats.white_wins), (8, 0, 2));
        assert_eq!(swapped.endings, BTreeMap::from([("checkmate".to_string(), 9), ("flag".to_string(), 1)]));
        // Every start against the seed, on the pooled tallies.
        assert_eq!(rep.comparisons.len(), 1);
        let c = &rep.comparisons[0];
        assert_eq!((c.a.as_str(), c.b.as_str(), c.games_a, c.games_b), ("swapped", "seed", 10, 9));
        assert_eq!(c.test, two_sample_test(&BlackTally::new(8, 0, 2), &BlackTally::new(4, 1, 4), CONFIDENCE));
        assert!((c.test.diff - (0.8 - 0.5)).abs() < 1e-12);
        // The pooled file reads back as a part: pooling it with an empty-handed third part changes nothing.
        let again = pool("pooled", &parts(&[cells_csv(&rep), part(0, &[(t, "seed", 0, 0, 0, f64::NAN, &[])])]), &[]).unwrap();
        assert_eq!(again.cells[0].stats, seed.stats);
        assert_eq!(cells_csv(&again), cells_csv(&rep));
    }

    #[test]
    fn a_cell_in_one_part_only_keeps_its_games_and_extra_pairs_are_compared() {
        let a = part(0, &[("t", "seed", 5, 0, 5, 90.0, &[("checkmate", 10)])]);
        let b = part(0, &[("t", "seed", 1, 0, 1, 90.0, &[("checkmate", 2)]), ("t", "no-copper", 2, 2, 0, 70.0, &[("checkmate", 2), ("repetition", 2)])]);
        let pairs = ["no-copper,seed".to_string(), "seed, no-copper".to_string()];
        let rep = pool("pooled", &parts(&[a, b]), &pairs).unwrap();
        assert_eq!(rep.cells[0].stats.games, 12);
        assert_eq!(rep.cells[1].stats, CellStats::new(&BlackTally::new(2, 2, 0), CONFIDENCE));
        let names: Vec<(&str, &str)> = rep.comparisons.iter().map(|c| (c.a.as_str(), c.b.as_str())).collect();
        assert_eq!(names, [("no-copper", "seed"), ("seed", "no-copper")]);
        assert_eq!(rep.comparisons[0].test.diff, -rep.comparisons[1].test.diff);
    }

    #[test]
    fn tiers_played_apart_are_compared_across_tiers_and_the_copper_moves_tested_for_additivity() {
        use crate::report::{comparisons_csv, ComparisonKind};
        // Tier a: seed 6/0/4 (0.6), both-in-hand 5/0/5, both-in-pocket 4/0/6, swapped 8/0/2.
        let a = part(
            0,
            &[
                ("a", "seed", 6, 0, 4, 90.0, &[("checkmate", 10)]),
                ("a", "both-in-hand", 5, 0, 5, 90.0, &[("checkmate", 10)]),
                ("a", "both-in-pocket", 4, 0, 6, 90.0, &[("checkmate", 10)]),
                ("a", "swapped", 8, 0, 2, 90.0, &[("checkmate", 10)]),
            ],
        );
        // Tier b, another study: seed 3/0/7 (0.3), swapped 5/0/5 (0.5).
        let b = part(0, &[("b", "seed", 3, 0, 7, 90.0, &[("checkmate", 10)]), ("b", "swapped", 5, 0, 5, 90.0, &[("checkmate", 10)])]);
        let rep = pool("tiers", &parts(&[a, b]), &[]).unwrap();
        let find = |kind: ComparisonKind, start: &str| rep.comparisons.iter().find(|c| c.kind == kind && c.a == start).unwrap();
        // Additivity at tier a: 0.8 − 0.5 − 0.4 + 0.6 = 0.5; variances p(1 − p)/10:
        // 0.016 + 0.025 + 0.024 + 0.024 = 0.089.
        let add = find(ComparisonKind::Additivity, "swapped");
        assert_eq!(add.tier, "a");
        assert!((add.test.diff - 0.5).abs() < 1e-12 && (add.test.se - 0.089f64.sqrt()).abs() < 1e-12, "{:?}", add.test);
        assert!((add.score_a - 0.2).abs() < 1e-12 && (add.score_b - (-0.1 - 0.2)).abs() < 1e-12);
        assert_eq!(rep.comparisons.iter().filter(|c| c.kind == ComparisonKind::Additivity).count(), 1, "tier b lacks two of the four cells");
        // Tier against tier at seed: 0.6 − 0.3, se √(0.024 + 0.021).
        let t = find(ComparisonKind::Tier, "seed");
        assert_eq!((t.tier.as_str(), t.tier_b.as_str()), ("a", "b"));
        assert!((t.test.diff - 0.3).abs() < 1e-12 && (t.test.se - 0.045f64.sqrt()).abs() < 1e-12);
        // The start comparison at both tiers: (0.8 − 0.6) − (0.5 − 0.3) = 0, se √(0.016 + 0.024 + 0.025 + 0.021).
        let ts = find(ComparisonKind::TierStart, "swapped");
        assert!(ts.test.diff.abs() < 1e-12 && (ts.test.se - 0.086f64.sqrt()).abs() < 1e-12, "{:?}", ts.test);
        // The joint test of tier a's four starts, and the comparisons against seed correlated.
        let j = rep.joint.iter().find(|j| j.tier == "a").unwrap();
        assert_eq!((j.test.df, j.control.as_str(), j.correlations.len()), (3, "seed", 3));
        // ρ(both-in-hand, swapped) = 0.024/√((0.025 + 0.024)(0.016 + 0.024)).
        let rho = j.correlations.iter().find(|r| r.0 == "both-in-hand" && r.1 == "swapped").unwrap().2;
        assert!((rho - 0.024 / (0.049f64 * 0.040).sqrt()).abs() < 1e-12, "{rho}");
        let csv = comparisons_csv(&rep);
        assert!(csv.starts_with("kind,tier,tier_b,start_a,start_b,"), "{csv}");
        assert!(csv.contains("\nadditivity,a,,swapped,seed,") && csv.contains("\ntier,a,b,seed,seed,") && csv.contains("\nall-starts,a,,,seed,40,"), "{csv}");
    }

    #[test]
    fn parts_that_do_not_pool_are_refused_with_the_file_and_line() {
        let a = part(0, &[("t", "seed", 1, 0, 1, 90.0, &[("checkmate", 2)])]);
        let shifted = part(8, &[("t", "seed", 1, 0, 1, 90.0, &[("checkmate", 2)])]);
        let err = pool("p", &parts(&[a.clone(), shifted]), &[]).unwrap_err().to_string();
        assert!(err.contains("part1/cells.csv") && err.contains("opening_plies 8") && err.contains("has 0"), "{err}");

        let err = pool("p", &[], &[]).unwrap_err().to_string();
        assert!(err.contains("got none"), "{err}");
        // One file alone is its own study, its comparisons recomputed.
        assert_eq!(pool("p", &parts(std::slice::from_ref(&a)), &[]).unwrap().cells.len(), 1);

        // A row whose counts do not add up (a hand-edited or cut file).
        let mut lines: Vec<String> = a.lines().map(str::to_string).collect();
        lines[1] = lines[1].replacen(",2,1,0,1,", ",3,1,0,1,", 1);
        let err = pool("p", &parts(&[a.clone(), lines.join("\n")]), &[]).unwrap_err().to_string();
        assert!(err.contains("part1/cells.csv line 2") && err.contains("games = 3 but"), "{err}");

        let cut_endings = a.replacen(",90.0,2,", ",90.0,1,", 1);
        assert_ne!(cut_endings, a);
        let err = pool("p", &parts(&[a.clone(), cut_endings]), &[]).unwrap_err().to_string();
        assert!(err.contains("part1/cells.csv line 2") && err.contains("endings do not add up"), "{err}");

        let err = pool("p", &parts(&[a.clone(), "tier,start\nt,seed\n".into()]), &[]).unwrap_err().to_string();
        assert!(err.contains("part1/cells.csv line 1") && err.contains("no column 'opening_plies'"), "{err}");

        let twice = format!("{a}{}", a.lines().nth(1).unwrap());
        let err = pool("p", &parts(&[a.clone(), twice]), &[]).unwrap_err().to_string();
        assert!(err.contains("listed twice"), "{err}");

        let err = pool("p", &parts(&[a, "x".into()]), &[]).unwrap_err().to_string();
        assert!(err.contains("part1/cells.csv"), "{err}");
    }

    /// The committed parts of the start-family study, pooled as files: with each part's
    /// `games.csv` beside its `cells.csv` the game statistics pool too (counts add, means
    /// weigh by games); without, they are left out and said to be.
    #[test]
    fn parts_with_their_games_pool_their_game_statistics() {
        let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/results");
        let dir = tempfile::tempdir().unwrap();
        let mut cells = Vec::new();
        for part in ["part1", "part2"] {
            for what in ["cells", "games"] {
                let name = format!("balance-starts100-{part}-{what}.csv");
                std::fs::copy(results.join(&name), dir.path().join(&name)).unwrap();
            }
            cells.push(dir.path().join(format!("balance-starts100-{part}-cells.csv")));
        }
        let (rep, pooled) = pool_files("p", &cells, &[], &dir.path().join("out")).unwrap();
        assert!(pooled);
        let read = |p: &Path| gamestats::read_games_csv("t", &std::fs::read_to_string(p).unwrap()).unwrap();
        let (a, b) = (read(&dir.path().join("balance-starts100-part1-games.csv")), read(&dir.path().join("balance-starts100-part2-games.csv")));
        let out = read(&dir.path().join("out/games.csv"));
        assert_eq!(out.len(), rep.cells.len());
        for ((x, y), z) in a.iter().zip(&b).zip(&out) {
            assert_eq!((&x.0, &x.1), (&z.0, &z.1));
            assert_eq!(z.2.games, x.2.games + y.2.games, "{}", z.1);
            let lances = |g: &gamestats::GameStats| g.black.pocketed.get("Lance").copied().unwrap_or(0);
            assert_eq!(lances(&z.2), lances(&x.2) + lances(&y.2));
            let (n1, n2) = (x.2.value[2].games as f64, y.2.value[2].games as f64);
            let want = (n1 * x.2.value[2].mean + n2 * y.2.value[2].mean) / (n1 + n2);
            assert!((z.2.value[2].mean - want).abs() < 1e-4, "{}: {} against {want}", z.1, z.2.value[2].mean);
        }
        std::fs::remove_file(dir.path().join("balance-starts100-part2-games.csv")).unwrap();
        let (_, pooled) = pool_files("p", &cells, &[], &dir.path().join("out2")).unwrap();
        assert!(!pooled && !dir.path().join("out2/games.csv").exists());
    }
}
