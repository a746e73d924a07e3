//! What the pocket and the Copper do in a cell's games: how often and when each side
//! pockets a piece and drops it back, which pieces, when each side first drops its Copper,
//! the material balance at a few plies, and Black's score by game length. The score alone
//! says whether a start is fair; these say how its asymmetry (Black's pocketed Copper
//! against White's Copper in hand) is played, and whether it decides short or long games.
//!
//! Plies count from the start position, the study's random opening plies included, as
//! `mean_plies` does: ply 1 is the first move of the game.

use crate::phasevalues::{PhaseValues, VALUE_PLIES};
use crate::report::{black_score, csv, num, StudyReport};
use arena::runner::JobResult;
use players::baseline::eval::Evaluator;
use rules::{Color, MoveKind, PieceKind, Position, Variant};
use serde::Serialize;
use std::collections::BTreeMap;

/// The plies at which the material balance is taken, as the mean of the balance after
/// that ply and after the next (one position with each side to move, so that a capture
/// not yet answered does not count as a gain), over the games that reached the next ply.
pub const MATERIAL_PLIES: [usize; 3] = [20, 40, 80];

/// Game-length buckets: (first ply, last ply or `None`, label, CSV column stem).
pub const LENGTH_BUCKETS: [(usize, Option<usize>, &str, &str); 4] = [
    (0, Some(60), "≤60", "plies_le60"),
    (61, Some(100), "61–100", "plies_61_100"),
    (101, Some(160), "101–160", "plies_101_160"),
    (161, None, ">160", "plies_gt160"),
];

/// When a side first dropped from its pocket: (first ply, last ply or `None`, label, CSV
/// column stem); a last bucket, `never`, holds the games where it did not.
pub const DROP_BUCKETS: [(usize, Option<usize>, &str, &str); 4] =
    [(1, Some(1), "1", "ply1"), (2, Some(10), "2–10", "ply2_10"), (11, Some(30), "11–30", "ply11_30"), (31, None, ">30", "gt30")];

/// The [`DROP_BUCKETS`] index of a first pocket drop at `ply`, or `DROP_BUCKETS.len()`
/// (never) for `None`.
fn drop_bucket(ply: Option<usize>) -> usize {
    match ply {
        None => DROP_BUCKETS.len(),
        Some(p) => DROP_BUCKETS.iter().position(|&(_, hi, _, _)| hi.is_none_or(|hi| p <= hi)).expect("the last bucket is open"),
    }
}

/// The bucket of a game of `plies` plies.
pub fn length_bucket(plies: usize) -> usize {
    LENGTH_BUCKETS.iter().position(|&(_, hi, _, _)| hi.is_none_or(|hi| plies <= hi)).expect("the last bucket is open")
}

/// The mean ply at which something first happened, over the games where it did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FirstPly {
    /// Games in which it happened.
    pub games: u64,
    /// Mean ply of its first time (NaN, JSON `null`, when it never happened).
    pub mean_ply: f64,
}

/// One side's pocket and Copper over a cell's games.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SideStats {
    /// Pocket moves (a board piece into the pocket) per game.
    pub pocket_moves_per_game: f64,
    /// Pocket drops (the pocketed piece back onto the board) per game.
    pub pocket_drops_per_game: f64,
    /// The pieces moved into the pocket, by kind name (as they stood: `Dragon King`).
    pub pocketed: BTreeMap<String, u64>,
    pub first_pocket_move: FirstPly,
    pub first_pocket_drop: FirstPly,
    /// The first drop of a Copper (unpromoted or promoted), from hand or from the pocket.
    pub first_copper_drop: FirstPly,
    /// The first mover's score by when this side first dropped from its pocket
    /// ([`DROP_BUCKETS`], then `never`): does using the pocket early pay?
    pub score_by_first_pocket_drop: Vec<ScoreBucket>,
}

/// The first mover's score over the games of one bucket.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScoreBucket {
    pub label: String,
    pub games: u64,
    /// Points per game (NaN when the bucket has no game).
    pub black_score: f64,
}

/// A quantity's mean over the games that have it at one ply: the material balance, or
/// the network's value for Black.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeanAt {
    pub ply: usize,
    /// Games with the quantity at the ply (those that went on long enough).
    pub games: u64,
    /// Its mean (NaN when no game has it).
    pub mean: f64,
}

/// The mean at each of `plies` of the games' `j`-th value.
fn means_at(plies: &[usize], facts: &[GameFacts], at: impl Fn(&GameFacts, usize) -> Option<f64>) -> Vec<MeanAt> {
    plies
        .iter()
        .enumerate()
        .map(|(j, &ply)| {
            let values: Vec<f64> = facts.iter().filter_map(|f| at(f, j)).collect();
            MeanAt { ply, games: values.len() as u64, mean: mean(values.iter().sum(), values.len() as u64) }
        })
        .collect()
}

/// Black's score over the games of one length bucket.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LengthBucket {
    pub label: String,
    pub min_plies: usize,
    pub max_plies: Option<usize>,
    pub games: u64,
    /// Black's points per game (NaN when the bucket has no game).
    pub black_score: f64,
}

/// What a cell's games did with the pocket and the Copper (`summary.json`'s cells'
/// `game_stats`, `games.csv`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameStats {
    /// Games counted (replayed).
    pub games: u64,
    /// Games whose record did not replay (left out of everything here; 0 for a sound file).
    pub unreplayed: u64,
    pub black: SideStats,
    pub white: SideStats,
    /// Material balance from Black's side at [`MATERIAL_PLIES`], counted with the
    /// alpha-beta baseline's piece values (board, hand ×1.1, pocket).
    pub material: Vec<MeanAt>,
    /// The network's value for Black at [`VALUE_PLIES`] (empty without a value network).
    /// (P(Black wins) − P(White wins), over the games judged there.)
    pub value: Vec<MeanAt>,
    /// Black's score by game length ([`LENGTH_BUCKETS`]).
    pub by_length: Vec<LengthBucket>,
}

/// One side in one game.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SideFacts {
    pub pocket_moves: u32,
    pub pocket_drops: u32,
    /// Kind names of the pieces pocketed, in order.
    pub pocketed: Vec<String>,
    pub first_pocket_move: Option<usize>,
    pub first_pocket_drop: Option<usize>,
    pub first_copper_drop: Option<usize>,
}

/// One game, replayed.
#[derive(Clone, Debug, PartialEq)]
pub struct GameFacts {
    pub plies: usize,
    /// Black's (the first mover's) score: 1, ½ or 0.
    pub black_score: f64,
    /// By colour index: Black, White.
    pub sides: [SideFacts; 2],
    /// Black's material minus White's at each of [`MATERIAL_PLIES`] (the mean over that ply
    /// and the next), where the game reached the next.
    pub material: [Option<f64>; MATERIAL_PLIES.len()],
    /// The network's value for Black at [`VALUE_PLIES`], where the game was judged there.
    pub value: [Option<f32>; VALUE_PLIES.len()],
}

/// Whether `k` is a Copper General or its promotion.
fn is_copper(v: &Variant, k: PieceKind) -> bool {
    v.kind(v.kind(k).unpromoted).name == "Copper"
}

/// Replays `moves` from `start_sfen` and notes every pocket move, pocket drop and Copper drop.
pub fn game_facts(variant: &'static Variant, evaluator: &Evaluator, start_sfen: &str, moves: &[String], black_score: f64) -> Result<GameFacts, String> {
    let mut pos = Position::from_sfen(variant, start_sfen).map_err(|e| format!("start {start_sfen}: {e}"))?;
    let mut sides: [SideFacts; 2] = Default::default();
    let mut material = [None; MATERIAL_PLIES.len()];
    let mut held = None;
    for (i, text) in moves.iter().enumerate() {
        let ply = i + 1;
        let m = pos.parse_usi(text).map_err(|e| format!("ply {ply} ({text}): {e}"))?;
        let s = &mut sides[pos.side_to_move().index()];
        match m.kind() {
            MoveKind::PocketIn { from } => {
                s.pocket_moves += 1;
                s.first_pocket_move.get_or_insert(ply);
                let piece = pos.piece_at(from).ok_or_else(|| format!("ply {ply} ({text}): no piece"))?;
                s.pocketed.push(variant.kind(piece.kind).name.clone());
            }
            MoveKind::PocketDrop { kind, .. } => {
                s.pocket_drops += 1;
                s.first_pocket_drop.get_or_insert(ply);
                if is_copper(variant, kind) {
                    s.first_copper_drop.get_or_insert(ply);
                }
            }
            MoveKind::Drop { kind, .. } => {
                if is_copper(variant, kind) {
                    s.first_copper_drop.get_or_insert(ply);
                }
            }
            MoveKind::Board { .. } => {}
        }
        pos.play_unchecked(m);
        let balance = (evaluator.material(&pos, Color::Black) - evaluator.material(&pos, Color::White)) as f64;
        if MATERIAL_PLIES.contains(&ply) {
            held = Some(balance);
        } else if let Some(j) = MATERIAL_PLIES.iter().position(|&p| p + 1 == ply) {
            if let Some(at) = held.take() {
                material[j] = Some((at + balance) / 2.0);
            }
        }
    }
    Ok(GameFacts { plies: moves.len(), black_score, sides, material, value: [None; VALUE_PLIES.len()] })
}

/// Replays each game's record (first hand) and adds up what [`game_facts`] finds, with
/// each game's network values from `values` (by job id; values are reported only when
/// every game has them).
pub fn of_games<'a>(games: impl IntoIterator<Item = &'a JobResult>, first_mover: Color, values: &PhaseValues) -> GameStats {
    let mut evaluators: Vec<(&'static Variant, Evaluator)> = Vec::new();
    let mut facts = Vec::new();
    let mut unreplayed = 0;
    let mut all_valued = true;
    for r in games {
        let Some(hand) = r.hands.first() else {
            unreplayed += 1;
            continue;
        };
        let rec = &hand.record;
        let replayed = rec.load_variant().map_err(|e| e.to_string()).and_then(|v| {
            let i = match evaluators.iter().position(|(w, _)| std::ptr::eq(*w, v)) {
                Some(i) => i,
                None => {
                    evaluators.push((v, Evaluator::new(v)));
                    evaluators.len() - 1
                }
            };
            let mut f = game_facts(v, &evaluators[i].1, &rec.start_sfen, &rec.moves, black_score(r, first_mover))?;
            if let Some(vals) = values.get(&r.job.id) {
                for (slot, &x) in f.value.iter_mut().zip(vals) {
                    *slot = x;
                }
            } else {
                all_valued = false;
            }
            Ok(f)
        });
        match replayed {
            Ok(f) => facts.push(f),
            Err(e) => {
                tracing::warn!(game = r.job.id, "game statistics: the record does not replay: {e}");
                unreplayed += 1;
            }
        }
    }
    let mut stats = aggregate(&facts);
    stats.unreplayed = unreplayed;
    if !all_valued {
        stats.value.clear();
    }
    stats
}

fn mean(sum: f64, n: u64) -> f64 {
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

fn first_ply(plies: impl Iterator<Item = Option<usize>>) -> FirstPly {
    let (games, sum) = plies.flatten().fold((0u64, 0usize), |(n, s), p| (n + 1, s + p));
    FirstPly { games, mean_ply: mean(sum as f64, games) }
}

/// The cell's statistics from its games' facts.
pub fn aggregate(facts: &[GameFacts]) -> GameStats {
    let n = facts.len() as u64;
    fn of(f: &GameFacts, c: Color) -> &SideFacts {
        &f.sides[c.index()]
    }
    let side = |c: Color| {
        let of = |f| of(f, c);
        let mut pocketed = BTreeMap::new();
        for f in facts {
            for k in &of(f).pocketed {
                *pocketed.entry(k.clone()).or_insert(0) += 1;
            }
        }
        SideStats {
            pocket_moves_per_game: mean(facts.iter().map(|f| of(f).pocket_moves as f64).sum(), n),
            pocket_drops_per_game: mean(facts.iter().map(|f| of(f).pocket_drops as f64).sum(), n),
            pocketed,
            first_pocket_move: first_ply(facts.iter().map(|f| of(f).first_pocket_move)),
            first_pocket_drop: first_ply(facts.iter().map(|f| of(f).first_pocket_drop)),
            first_copper_drop: first_ply(facts.iter().map(|f| of(f).first_copper_drop)),
            score_by_first_pocket_drop: (0..=DROP_BUCKETS.len())
                .map(|b| {
                    let scores: Vec<f64> = facts.iter().filter(|f| drop_bucket(of(f).first_pocket_drop) == b).map(|f| f.black_score).collect();
                    let label = DROP_BUCKETS.get(b).map_or("never", |d| d.2);
                    ScoreBucket { label: label.to_string(), games: scores.len() as u64, black_score: mean(scores.iter().sum(), scores.len() as u64) }
                })
                .collect(),
        }
    };
    let material = means_at(&MATERIAL_PLIES, facts, |f, j| f.material[j]);
    let value =
        if facts.iter().any(|f| f.value.iter().any(Option::is_some)) { means_at(&VALUE_PLIES, facts, |f, j| f.value[j].map(f64::from)) } else { Vec::new() };
    let by_length = LENGTH_BUCKETS
        .iter()
        .enumerate()
        .map(|(b, &(lo, hi, label, _))| {
            let scores: Vec<f64> = facts.iter().filter(|f| length_bucket(f.plies) == b).map(|f| f.black_score).collect();
            LengthBucket {
                label: label.to_string(),
                min_plies: lo,
                max_plies: hi,
                games: scores.len() as u64,
                black_score: mean(scores.iter().sum(), scores.len() as u64),
            }
        })
        .collect();
    GameStats { games: n, unreplayed: 0, black: side(Color::Black), white: side(Color::White), material, value, by_length }
}

/// `Rook:2 Silver:1`: the pocketed pieces, most often first.
pub fn pocketed_text(pocketed: &BTreeMap<String, u64>) -> String {
    let mut v: Vec<(&String, &u64)> = pocketed.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter().map(|(k, n)| format!("{k}:{n}")).collect::<Vec<_>>().join(" ")
}

/// `games.csv`: one row per cell.
pub fn games_csv(rep: &StudyReport) -> String {
    let mut s = String::from("tier,start,games,unreplayed");
    for side in ["black", "white"] {
        s += &format!(",{side}_pocket_moves,{side}_pocket_drops,{side}_pocketed");
        for what in ["first_pocket_move", "first_pocket_drop", "first_copper_drop"] {
            s += &format!(",{side}_{what}_games,{side}_{what}_ply");
        }
    }
    for ply in MATERIAL_PLIES {
        s += &format!(",material_{ply}_games,material_{ply}");
    }
    for (_, _, _, stem) in LENGTH_BUCKETS {
        s += &format!(",{stem}_games,{stem}_score");
    }
    for ply in VALUE_PLIES {
        s += &format!(",value_{ply}_games,value_{ply}");
    }
    for side in ["black", "white"] {
        for stem in DROP_BUCKETS.iter().map(|d| d.3).chain(["never"]) {
            s += &format!(",{side}_first_pocket_drop_{stem}_games,{side}_first_pocket_drop_{stem}_score");
        }
    }
    s.push('\n');
    for c in &rep.cells {
        let g = &c.game_stats;
        s += &format!("{},{},{},{}", csv(&c.tier), csv(&c.start), g.games, g.unreplayed);
        for side in [&g.black, &g.white] {
            s += &format!(",{},{},{}", num(side.pocket_moves_per_game, 3), num(side.pocket_drops_per_game, 3), csv(&pocketed_text(&side.pocketed)));
            for f in [&side.first_pocket_move, &side.first_pocket_drop, &side.first_copper_drop] {
                s += &format!(",{},{}", f.games, num(f.mean_ply, 1));
            }
        }
        for m in &g.material {
            s += &format!(",{},{}", m.games, num(m.mean, 1));
        }
        for b in &g.by_length {
            s += &format!(",{},{}", b.games, num(b.black_score, 4));
        }
        for (j, _) in VALUE_PLIES.iter().enumerate() {
            match g.value.get(j) {
                Some(v) => s += &format!(",{},{}", v.games, num(v.mean, 4)),
                None => s += ",,",
            }
        }
        for side in [&g.black, &g.white] {
            for b in &side.score_by_first_pocket_drop {
                s += &format!(",{},{}", b.games, num(b.black_score, 4));
            }
        }
        s.push('\n');
    }
    s
}

type Chart<'a, 'b> = plotters::chart::ChartContext<
    'a,
    plotters::prelude::SVGBackend<'b>,
    plotters::coord::cartesian::Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// One cell's line with its points and legend entry, in the `i`-th palette colour.
fn cell_line(chart: &mut Chart, i: usize, c: &crate::report::CellReport, pts: Vec<(f64, f64)>) -> Result<(), String> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Debug| format!("{e:?}");
    let color = arena::plot::PALETTE[i % arena::plot::PALETTE.len()];
    chart
        .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
        .map_err(|e| err(&e))?
        .label(format!("{} · {}", c.tier, c.start))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
    chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled()))).map_err(|e| err(&e))?;
    Ok(())
}

/// Black's score by game length, one line per cell with games (an SVG text), or `None`
/// when no cell has a game.
pub fn score_by_length_svg(rep: &StudyReport) -> Result<Option<String>, String> {
    use plotters::prelude::*;
    let cells: Vec<_> = rep.cells.iter().filter(|c| c.game_stats.games > 0).collect();
    if cells.is_empty() {
        return Ok(None);
    }
    let err = |e: &dyn std::fmt::Debug| format!("{e:?}");
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (900, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let n = LENGTH_BUCKETS.len();
        let mut chart = ChartBuilder::on(&root)
            .caption("Black's score by game length", ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(-0.3f64..(n as f64 - 0.7), -0.02f64..1.02)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("game length (plies)")
            .y_desc("Black's score")
            .light_line_style(TRANSPARENT)
            .x_labels(n)
            .x_label_formatter(&|x| {
                let k = x.round();
                if (x - k).abs() < 1e-6 && k >= 0.0 && (k as usize) < n {
                    LENGTH_BUCKETS[k as usize].2.to_string()
                } else {
                    String::new()
                }
            })
            .draw()
            .map_err(|e| err(&e))?;
        for (i, c) in cells.iter().enumerate() {
            let pts: Vec<(f64, f64)> = c.game_stats.by_length.iter().enumerate().filter(|(_, b)| b.games > 0).map(|(k, b)| (k as f64, b.black_score)).collect();
            cell_line(&mut chart, i, c, pts)?;
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(Some(text))
}

/// The network's mean value for Black by ply, one line per cell with values (an SVG
/// text), or `None` when no cell has them.
pub fn value_by_ply_svg(rep: &StudyReport) -> Result<Option<String>, String> {
    use plotters::prelude::*;
    let cells: Vec<_> = rep.cells.iter().filter(|c| c.game_stats.value.iter().any(|v| v.games > 0)).collect();
    if cells.is_empty() {
        return Ok(None);
    }
    let err = |e: &dyn std::fmt::Debug| format!("{e:?}");
    let points =
        |c: &crate::report::CellReport| -> Vec<(f64, f64)> { c.game_stats.value.iter().filter(|v| v.games > 0).map(|v| (v.ply as f64, v.mean)).collect() };
    // Symmetric about 0 (a level game), wide enough for every point, at least ±0.2.
    let reach = cells.iter().flat_map(|c| points(c)).map(|(_, y)| y.abs()).fold(0.2f64, f64::max);
    let top = (reach * 10.0).ceil() / 10.0 + 0.05;
    let last = *VALUE_PLIES.last().expect("plies") as f64;
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (900, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption("The network's value for Black over the game", ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(-2f64..last + 2.0, -top..top)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("ply (games still going on)")
            .y_desc("P(Black wins) − P(White wins)")
            .light_line_style(TRANSPARENT)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| if y.abs() < 1e-9 { "0".into() } else { format!("{y:+.2}") })
            .draw()
            .map_err(|e| err(&e))?;
        chart.draw_series(LineSeries::new([(-2.0, 0.0), (last + 2.0, 0.0)], BLACK.mix(0.4))).map_err(|e| err(&e))?;
        for (i, c) in cells.iter().enumerate() {
            cell_line(&mut chart, i, c, points(c))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(Some(text))
}

/// The rows of a `games.csv` ([`games_csv`]) read back: (tier, start, statistics). Means
/// come back as rounded there (3 decimals a side's moves per game, 1 a ply or material,
/// 4 a score or value).
pub fn read_games_csv(source: &str, text: &str) -> Result<Vec<(String, String, GameStats)>, String> {
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(text.as_bytes());
    let headers = reader.headers().map_err(|e| format!("{source}: not a games.csv header: {e}"))?.clone();
    let mut out = Vec::new();
    for (k, row) in reader.records().enumerate() {
        let row = row.map_err(|e| format!("{source}: {e}"))?;
        let line = row.position().map_or(k as u64 + 2, |p| p.line());
        let field = |name: &str| -> Result<&str, String> {
            let i = headers.iter().position(|h| h == name).ok_or_else(|| format!("{source}: no column '{name}' (not a study's games.csv)"))?;
            Ok(row.get(i).unwrap_or(""))
        };
        let count = |name: &str| -> Result<u64, String> {
            let f = field(name)?;
            if f.is_empty() {
                return Ok(0);
            }
            f.parse().map_err(|_| format!("{source} line {line}: {name} = '{f}': expected a count"))
        };
        let value = |name: &str| -> Result<f64, String> {
            let f = field(name)?;
            if f.is_empty() {
                return Ok(f64::NAN);
            }
            f.parse().map_err(|_| format!("{source} line {line}: {name} = '{f}': expected a number"))
        };
        let first = |side: &str, what: &str| -> Result<FirstPly, String> {
            Ok(FirstPly { games: count(&format!("{side}_{what}_games"))?, mean_ply: value(&format!("{side}_{what}_ply"))? })
        };
        let side = |side: &str| -> Result<SideStats, String> {
            let mut pocketed = BTreeMap::new();
            let mut name = String::new();
            // "Dragon King:44 Lance:3": a kind's name may hold spaces, its count follows the colon.
            for token in field(&format!("{side}_pocketed"))?.split(' ').filter(|t| !t.is_empty()) {
                match token.rsplit_once(':').and_then(|(a, n)| n.parse::<u64>().ok().map(|n| (a, n))) {
                    Some((a, n)) => {
                        name.push_str(a);
                        pocketed.insert(std::mem::take(&mut name), n);
                    }
                    None => {
                        name.push_str(token);
                        name.push(' ');
                    }
                }
            }
            let score_by_first_pocket_drop = DROP_BUCKETS
                .iter()
                .map(|d| (d.2, d.3))
                .chain([("never", "never")])
                .map(|(label, stem)| {
                    Ok(ScoreBucket {
                        label: label.to_string(),
                        games: count(&format!("{side}_first_pocket_drop_{stem}_games"))?,
                        black_score: value(&format!("{side}_first_pocket_drop_{stem}_score"))?,
                    })
                })
                .collect::<Result<_, String>>()?;
            Ok(SideStats {
                pocket_moves_per_game: value(&format!("{side}_pocket_moves"))?,
                pocket_drops_per_game: value(&format!("{side}_pocket_drops"))?,
                pocketed,
                first_pocket_move: first(side, "first_pocket_move")?,
                first_pocket_drop: first(side, "first_pocket_drop")?,
                first_copper_drop: first(side, "first_copper_drop")?,
                score_by_first_pocket_drop,
            })
        };
        let material = MATERIAL_PLIES
            .iter()
            .map(|&ply| Ok(MeanAt { ply, games: count(&format!("material_{ply}_games"))?, mean: value(&format!("material_{ply}"))? }))
            .collect::<Result<_, String>>()?;
        let value_at: Vec<MeanAt> = VALUE_PLIES
            .iter()
            .map(|&ply| Ok(MeanAt { ply, games: count(&format!("value_{ply}_games"))?, mean: value(&format!("value_{ply}"))? }))
            .collect::<Result<_, String>>()?;
        let by_length = LENGTH_BUCKETS
            .iter()
            .map(|&(min_plies, max_plies, label, stem)| {
                Ok(LengthBucket {
                    label: label.to_string(),
                    min_plies,
                    max_plies,
                    games: count(&format!("{stem}_games"))?,
                    black_score: value(&format!("{stem}_score"))?,
                })
            })
            .collect::<Result<_, String>>()?;
        let stats = GameStats {
            games: count("games")?,
            unreplayed: count("unreplayed")?,
            black: side("black")?,
            white: side("white")?,
            material,
            // A study without a value network leaves the columns empty.
            value: if value_at.iter().all(|m| m.games == 0) { Vec::new() } else { value_at },
            by_length,
        };
        out.push((field("tier")?.to_string(), field("start")?.to_string(), stats));
    }
    Ok(out)
}

/// Means over games pooled: each part's weighted by its games (NaN where none has any).
fn pooled_mean(parts: impl Iterator<Item = (u64, f64)>) -> (u64, f64) {
    let (mut n, mut sum) = (0u64, 0.0);
    for (k, m) in parts.filter(|&(k, m)| k > 0 && m.is_finite()) {
        n += k;
        sum += k as f64 * m;
    }
    (n, mean(sum, n))
}

impl GameStats {
    /// The statistics of the parts' games together: counts added, means weighted by the
    /// games they are over.
    pub fn pooled(parts: &[&GameStats]) -> GameStats {
        let Some(first) = parts.first() else { return aggregate(&[]) };
        let side = |of: fn(&GameStats) -> &SideStats| {
            let sides: Vec<(&SideStats, u64)> = parts.iter().map(|g| (of(g), g.games)).collect();
            let first_ply = |f: fn(&SideStats) -> &FirstPly| {
                let (games, mean_ply) = pooled_mean(sides.iter().map(|(s, _)| (f(s).games, f(s).mean_ply)));
                FirstPly { games, mean_ply }
            };
            let mut pocketed = BTreeMap::new();
            for (s, _) in &sides {
                for (k, n) in &s.pocketed {
                    *pocketed.entry(k.clone()).or_insert(0) += n;
                }
            }
            SideStats {
                pocket_moves_per_game: pooled_mean(sides.iter().map(|(s, n)| (*n, s.pocket_moves_per_game))).1,
                pocket_drops_per_game: pooled_mean(sides.iter().map(|(s, n)| (*n, s.pocket_drops_per_game))).1,
                pocketed,
                first_pocket_move: first_ply(|s| &s.first_pocket_move),
                first_pocket_drop: first_ply(|s| &s.first_pocket_drop),
                first_copper_drop: first_ply(|s| &s.first_copper_drop),
                score_by_first_pocket_drop: of(first)
                    .score_by_first_pocket_drop
                    .iter()
                    .enumerate()
                    .map(|(j, b)| {
                        let (games, black_score) =
                            pooled_mean(sides.iter().filter_map(|(s, _)| s.score_by_first_pocket_drop.get(j)).map(|b| (b.games, b.black_score)));
                        ScoreBucket { label: b.label.clone(), games, black_score }
                    })
                    .collect(),
            }
        };
        let means_at = |of: fn(&GameStats) -> &Vec<MeanAt>| -> Vec<MeanAt> {
            let longest = parts.iter().map(|g| of(g)).max_by_key(|v| v.len()).expect("parts");
            longest
                .iter()
                .enumerate()
                .map(|(j, m)| {
                    let (games, mean) = pooled_mean(parts.iter().filter_map(|g| of(g).get(j)).map(|m| (m.games, m.mean)));
                    MeanAt { ply: m.ply, games, mean }
                })
                .collect()
        };
        GameStats {
            games: parts.iter().map(|g| g.games).sum(),
            unreplayed: parts.iter().map(|g| g.unreplayed).sum(),
            black: side(|g| &g.black),
            white: side(|g| &g.white),
            material: means_at(|g| &g.material),
            // The network's values only where every part has them (as for one study's games).
            value: if parts.iter().all(|g| !g.value.is_empty()) { means_at(|g| &g.value) } else { Vec::new() },
            by_length: first
                .by_length
                .iter()
                .enumerate()
                .map(|(j, b)| {
                    let (games, black_score) = pooled_mean(parts.iter().filter_map(|g| g.by_length.get(j)).map(|b| (b.games, b.black_score)));
                    LengthBucket { games, black_score, ..b.clone() }
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Hand-made Pocket Shogi Copper games from the seed start, whose counts are known.

    use super::*;
    use crate::registry::Registry;
    use crate::report::{build, ReportInput, StartInfo, TierInfo};
    use rules::{Game, Outcome};

    const SEED: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b c 1 C";

    fn variant() -> &'static Variant {
        Variant::builtin("pocket-copper").unwrap()
    }

    /// `prefix`, then only the rooks move, along their own ranks and never capturing,
    /// each time to the square whose position has occurred least (so no position comes a
    /// fourth time), until the game has `plies` plies. Every move is checked by replaying it.
    fn game(prefix: &[&str], plies: usize) -> Vec<String> {
        let v = variant();
        let mut g = Game::new(Position::from_sfen(v, SEED).unwrap(), None);
        let mut moves: Vec<String> = Vec::new();
        for m in prefix {
            g.play_usi(m).unwrap_or_else(|e| panic!("{m} after {moves:?}: {e}"));
            moves.push(m.to_string());
        }
        while moves.len() < plies {
            let pos = g.position();
            let quiet_rook_move = |m: &rules::Move| match m.kind() {
                MoveKind::Board { from, to, promote: false } => {
                    pos.piece_at(from).is_some_and(|p| v.kind(p.kind).name == "Rook")
                        && pos.piece_at(to).is_none()
                        && v.geometry.coords(from).1 == v.geometry.coords(to).1
                }
                _ => false,
            };
            let m = g
                .legal_moves()
                .into_iter()
                .filter(quiet_rook_move)
                .min_by_key(|&m| {
                    let mut next = g.clone();
                    next.play_unchecked(m);
                    next.repetitions()
                })
                .expect("a rook move");
            moves.push(v.move_to_usi(m));
            g.play(m).unwrap();
            assert!(!g.is_over(), "{:?} after {moves:?}", g.result());
        }
        moves
    }

    /// Game A, 8 plies, White wins: Black drops its pocketed Copper (ply 1), White its
    /// Copper from hand (2), both are captured (3, 4), each side pockets its Rook (5, 6),
    /// Black drops the Copper it took (7), White drops its Rook from the pocket (8).
    fn game_a() -> Vec<String> {
        game(&["C&5e", "C*5d", "5e5d", "5c5d", "2h&", "8b&", "C*5e", "R&5f"], 8)
    }

    /// Game B, 170 plies, Black wins: both Coppers dropped (1, 2), Black's 7-file pawn
    /// takes White's on 7c (ply 9), then only rooks shuttle: from ply 9 on Black is a pawn
    /// up in hand (110) and White a pawn down on the board (100): +210.
    fn game_b() -> Vec<String> {
        game(&["C&5e", "C*5d", "7g7f", "1c1d", "7f7e", "1d1e", "7e7d", "9c9d", "7d7c"], 170)
    }

    /// Game C, 70 plies, a draw: the Coppers come in at plies 3 and 4; no capture, so the
    /// material is even from ply 4 on.
    fn game_c() -> Vec<String> {
        game(&["7g7f", "3c3d", "C&5e", "C*5d"], 70)
    }

    /// Game D, 2 plies, White wins: nothing happens.
    fn game_d() -> Vec<String> {
        game(&["7g7f", "3c3d"], 2)
    }

    /// A study's result line for game `id` of cell 0 (tier `t`, start `seed`).
    fn result(id: u64, moves: Vec<String>, outcome: Outcome) -> JobResult {
        let end = arena::GameEnd { outcome, ending: if outcome == Outcome::Draw { arena::Ending::AdjudicatedDraw } else { arena::Ending::Resignation } };
        let first_score = match outcome {
            Outcome::Win(Color::Black) => 1.0,
            Outcome::Win(Color::White) => 0.0,
            Outcome::Draw => 0.5,
        };
        serde_json::from_value(serde_json::json!({
            "job": { "id": id, "first": 0, "second": 0, "opening": 0 },
            "first": "t", "second": "t", "opening": "seed", "first_score": first_score, "seconds": 0.0,
            "hands": [{
                "record": { "variant": "pocket-copper", "start_sfen": SEED, "moves": moves, "end": end, "black": "t", "white": "t" },
                "end": end, "first_is_black": true, "incident": null
            }]
        }))
        .unwrap()
    }

    fn games() -> Vec<JobResult> {
        vec![
            result(0, game_a(), Outcome::Win(Color::White)),
            result(1, game_b(), Outcome::Win(Color::Black)),
            result(2, game_c(), Outcome::Draw),
            result(3, game_d(), Outcome::Win(Color::White)),
        ]
    }

    #[test]
    fn lengths_fall_in_their_buckets() {
        for (plies, bucket) in [(0, 0), (2, 0), (60, 0), (61, 1), (100, 1), (101, 2), (160, 2), (161, 3), (600, 3)] {
            assert_eq!(length_bucket(plies), bucket, "{plies} plies");
        }
    }

    #[test]
    fn one_game_s_pocket_moves_drops_and_coppers() {
        let ev = Evaluator::new(variant());
        let f = game_facts(variant(), &ev, SEED, &game_a(), 0.0).unwrap();
        let black = SideFacts {
            pocket_moves: 1,
            pocket_drops: 1,
            pocketed: vec!["Rook".into()],
            first_pocket_move: Some(5),
            first_pocket_drop: Some(1),
            first_copper_drop: Some(1),
        };
        let white = SideFacts {
            pocket_moves: 1,
            pocket_drops: 1,
            pocketed: vec!["Rook".into()],
            first_pocket_move: Some(6),
            first_pocket_drop: Some(8),
            first_copper_drop: Some(2),
        };
        assert_eq!(f, GameFacts { plies: 8, black_score: 0.0, sides: [black, white], material: [None; 3], value: [None; VALUE_PLIES.len()] });
        let f = game_facts(variant(), &ev, SEED, &game_b(), 1.0).unwrap();
        assert_eq!(f.material, [Some(210.0), Some(210.0), Some(210.0)]);
        assert_eq!(f.sides[1].first_copper_drop, Some(2));
        // Black's pocket is empty again at ply 3: the record does not replay.
        let bad = ["C&5e", "8b&", "C&5f"].map(String::from);
        let e = game_facts(variant(), &ev, SEED, &bad, 0.5).unwrap_err();
        assert!(e.starts_with("ply 3 (C&5f)"), "{e}");
    }

    /// White's pawn takes Black's on 3g at ply 20 and Black's knight takes it back at ply
    /// 21: after ply 20 Black is −210 (a pawn lost from the board, one in White's hand at
    /// ×1.1), after 21 level again. The material at ply 20 is their mean, −105: the
    /// capture not yet answered counts half.
    #[test]
    fn material_at_a_ply_is_the_mean_with_the_next_one() {
        let mut prefix = vec!["C&5e", "C*5d", "2h1h", "3c3d", "1h2h", "3d3e", "2h1h", "3e3f"];
        for _ in 0..2 {
            prefix.extend(["1h2h", "8b7b", "2h1h", "7b8b"]);
        }
        prefix.extend(["1h2h", "8b7b", "2h1h", "3f3g", "2i3g"]);
        assert_eq!(prefix.len(), 21);
        let moves = game(&prefix, 30);
        let f = game_facts(variant(), &Evaluator::new(variant()), SEED, &moves, 0.5).unwrap();
        assert_eq!(f.material, [Some(-105.0), None, None]);
        // Stopped after ply 20, the game has no ply 21: no material at 20.
        let f = game_facts(variant(), &Evaluator::new(variant()), SEED, &moves[..20], 0.5).unwrap();
        assert_eq!(f.material, [None, None, None]);
    }

    /// (label, games, score) of each bucket, an undefined score as `None`.
    fn buckets(b: &[ScoreBucket]) -> Vec<(&str, u64, Option<f64>)> {
        b.iter().map(|b| (b.label.as_str(), b.games, (!b.black_score.is_nan()).then_some(b.black_score))).collect()
    }

    fn first(games: u64, mean_ply: f64) -> FirstPly {
        FirstPly { games, mean_ply }
    }

    #[test]
    fn a_cell_s_statistics_add_up_its_games() {
        let g = of_games(&games(), Color::Black, &PhaseValues::new());
        assert_eq!((g.games, g.unreplayed), (4, 0));
        let rooks = BTreeMap::from([("Rook".to_string(), 1)]);
        let black = SideStats {
            pocket_moves_per_game: 0.25,
            pocket_drops_per_game: 0.75,
            pocketed: rooks.clone(),
            first_pocket_move: first(1, 5.0),
            first_pocket_drop: first(3, 5.0 / 3.0),
            first_copper_drop: first(3, 5.0 / 3.0),
            // Compared below (its empty buckets' NaN scores are never equal).
            score_by_first_pocket_drop: Vec::new(),
        };
        assert_eq!(SideStats { score_by_first_pocket_drop: Vec::new(), ..g.black.clone() }, black);
        // Black dropped from its pocket at ply 1 in A (lost) and B (won), at ply 3 in C
        // (drawn), never in D (lost).
        assert_eq!(
            buckets(&g.black.score_by_first_pocket_drop),
            [("1", 2, Some(0.5)), ("2–10", 1, Some(0.5)), ("11–30", 0, None), (">30", 0, None), ("never", 1, Some(0.0))]
        );
        let white = SideStats {
            pocket_moves_per_game: 0.25,
            pocket_drops_per_game: 0.25,
            pocketed: rooks,
            first_pocket_move: first(1, 6.0),
            first_pocket_drop: first(1, 8.0),
            first_copper_drop: first(3, 8.0 / 3.0),
            // Compared below (its empty buckets' NaN scores are never equal).
            score_by_first_pocket_drop: Vec::new(),
        };
        // White dropped from its pocket only in A, at ply 8; B, C and D: 1, ½, 0.
        assert_eq!(
            buckets(&g.white.score_by_first_pocket_drop),
            [("1", 0, None), ("2–10", 1, Some(0.0)), ("11–30", 0, None), (">30", 0, None), ("never", 3, Some(0.5))]
        );
        assert_eq!(SideStats { score_by_first_pocket_drop: Vec::new(), ..g.white.clone() }, white);
        // Games B and C reach plies 20 and 40 (+210 and 0), only B ply 80.
        let material: Vec<(usize, u64, f64)> = g.material.iter().map(|m| (m.ply, m.games, m.mean)).collect();
        assert_eq!(material, [(20, 2, 105.0), (40, 2, 105.0), (80, 1, 210.0)]);
        // A and D (8 and 2 plies) lost; C (70) drawn; B (170) won.
        let by_length: Vec<(&str, u64, f64)> = g.by_length.iter().map(|b| (b.label.as_str(), b.games, b.black_score)).collect();
        assert_eq!(by_length[0], ("≤60", 2, 0.0));
        assert_eq!(by_length[1], ("61–100", 1, 0.5));
        assert_eq!((by_length[2].0, by_length[2].1), ("101–160", 0));
        assert!(by_length[2].2.is_nan());
        assert_eq!(by_length[3], (">160", 1, 1.0));

        // A record that does not replay is left out and counted.
        let mut bad = games();
        bad[0].hands[0].record.moves[2] = "5e5c".into();
        let g = of_games(&bad, Color::Black, &PhaseValues::new());
        assert_eq!((g.games, g.unreplayed, g.black.first_pocket_move.games), (3, 1, 0));
        // No game: undefined means, zero counts.
        let g = of_games(&[], Color::Black, &PhaseValues::new());
        assert_eq!((g.games, g.black.first_copper_drop.games), (0, 0));
        assert!(g.black.pocket_moves_per_game.is_nan() && g.material[0].mean.is_nan());
    }

    /// The report of a one-cell study holding the four games.
    fn report(phase_values: &PhaseValues) -> StudyReport {
        let registry: Registry = serde_json::from_value(serde_json::json!({
            "variant": "pocket-copper", "seed": 1, "max_plies": 0, "opening_plies": 0, "games_per_cell": 4,
            "options": {}, "noise": {}, "tiers": [{ "name": "t", "spec": "random" }],
            "starts": [{ "name": "seed", "sfen": SEED }], "cells": [{ "index": 0, "tier": "t", "start": "seed" }]
        }))
        .unwrap();
        let views = BTreeMap::new();
        let input = ReportInput {
            name: "hand-made",
            registry: &registry,
            tiers: vec![TierInfo { name: "t".into(), spec: "random".into(), noise: None }],
            starts: vec![StartInfo { name: "seed".into(), sfen: SEED.into() }],
            first_mover: BTreeMap::from([("seed".to_string(), Color::Black)]),
            cells: vec![("t".into(), "seed".into())],
            comparisons: Vec::new(),
            views: &views,
            generations: Vec::new(),
            phase_values,
        };
        build(input, &games())
    }

    /// Random games' facts (kind names with spaces among the pocketed pieces).
    fn random_facts(n: usize, seed: u64, valued: bool) -> Vec<GameFacts> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let kinds = ["Rook", "Dragon King", "Lance", "Promoted Copper"];
        let ply = |rng: &mut rand_chacha::ChaCha8Rng| if rng.random_bool(0.7) { Some(rng.random_range(1..80)) } else { None };
        (0..n)
            .map(|_| {
                let plies = rng.random_range(20..220);
                let side = |rng: &mut rand_chacha::ChaCha8Rng| SideFacts {
                    pocket_moves: rng.random_range(0..6),
                    pocket_drops: rng.random_range(0..6),
                    pocketed: (0..rng.random_range(0..4)).map(|_| kinds[rng.random_range(0..kinds.len())].to_string()).collect(),
                    first_pocket_move: ply(rng),
                    first_pocket_drop: ply(rng),
                    first_copper_drop: ply(rng),
                };
                GameFacts {
                    plies,
                    black_score: [0.0, 0.5, 1.0][rng.random_range(0..3)],
                    sides: [side(&mut rng), side(&mut rng)],
                    material: MATERIAL_PLIES.map(|p| (plies > p).then(|| rng.random_range(-900.0..900.0))),
                    value: VALUE_PLIES.map(|p| (valued && plies > p).then(|| rng.random_range(-1.0f32..1.0))),
                }
            })
            .collect()
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol
    }

    /// Every count and mean of two statistics, as (name, count or mean) pairs.
    fn figures(g: &GameStats) -> Vec<(String, f64)> {
        let mut v = vec![("games".to_string(), g.games as f64), ("unreplayed".into(), g.unreplayed as f64)];
        for (name, s) in [("black", &g.black), ("white", &g.white)] {
            v.push((format!("{name} moves"), s.pocket_moves_per_game));
            v.push((format!("{name} drops"), s.pocket_drops_per_game));
            for (k, n) in &s.pocketed {
                v.push((format!("{name} pocketed {k}"), *n as f64));
            }
            for (what, f) in [("move", &s.first_pocket_move), ("drop", &s.first_pocket_drop), ("copper", &s.first_copper_drop)] {
                v.push((format!("{name} first {what} games"), f.games as f64));
                v.push((format!("{name} first {what} ply"), f.mean_ply));
            }
            for b in &s.score_by_first_pocket_drop {
                v.push((format!("{name} drop {} games", b.label), b.games as f64));
                v.push((format!("{name} drop {} score", b.label), b.black_score));
            }
        }
        for (what, at) in [("material", &g.material), ("value", &g.value)] {
            for m in at {
                v.push((format!("{what} {} games", m.ply), m.games as f64));
                v.push((format!("{what} {}", m.ply), m.mean));
            }
        }
        for b in &g.by_length {
            v.push((format!("length {} games", b.label), b.games as f64));
            v.push((format!("length {} score", b.label), b.black_score));
        }
        v
    }

    /// Parts' statistics pooled are the statistics of all their games at once (the
    /// pooling weighs each mean by the games it is over), and a `games.csv` reads back to
    /// its statistics within its printed rounding.
    #[test]
    fn pooled_parts_are_the_whole_and_the_csv_reads_back() {
        for valued in [true, false] {
            let facts = random_facts(300, 7 + valued as u64, valued);
            let whole = aggregate(&facts);
            let parts = [aggregate(&facts[..37]), aggregate(&facts[37..201]), aggregate(&facts[201..])];
            let pooled = GameStats::pooled(&parts.iter().collect::<Vec<_>>());
            let (a, b) = (figures(&whole), figures(&pooled));
            assert_eq!(a.iter().map(|x| &x.0).collect::<Vec<_>>(), b.iter().map(|x| &x.0).collect::<Vec<_>>());
            for ((name, x), (_, y)) in a.iter().zip(&b) {
                assert!(close(*x, *y, 1e-9), "{name}: whole {x}, pooled {y}");
            }
            assert_eq!(whole.value.is_empty(), !valued);

            let mut rep = report(&PhaseValues::new());
            rep.cells[0].game_stats = whole.clone();
            let back = read_games_csv("games.csv", &games_csv(&rep)).unwrap();
            assert_eq!((back[0].0.as_str(), back[0].1.as_str()), ("t", "seed"));
            for ((name, x), (_, y)) in a.iter().zip(&figures(&back[0].2)) {
                // Printed to 3, 1 or 4 decimals: within half a unit of the last.
                assert!(close(*x, *y, 0.05 + 1e-9), "{name}: {x} read back as {y}");
            }
            assert_eq!(back[0].2.black.pocketed, whole.black.pocketed, "kind names with spaces");
        }
        let e = read_games_csv("x/games.csv", "tier,start\nt,seed\n").unwrap_err();
        assert!(e.contains("x/games.csv") && e.contains("no column"), "{e}");
    }

    #[test]
    fn the_csv_the_json_and_the_plot_carry_them() {
        let rep = report(&PhaseValues::new());
        let csv = games_csv(&rep);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 2);
        let row: BTreeMap<&str, &str> = lines[0].split(',').zip(lines[1].split(',')).collect();
        assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
        for (column, value) in [
            ("tier", "t"),
            ("start", "seed"),
            ("games", "4"),
            ("unreplayed", "0"),
            ("black_pocket_moves", "0.250"),
            ("black_pocket_drops", "0.750"),
            ("black_pocketed", "Rook:1"),
            ("black_first_pocket_move_games", "1"),
            ("black_first_pocket_move_ply", "5.0"),
            ("black_first_pocket_drop_games", "3"),
            ("black_first_pocket_drop_ply", "1.7"),
            ("black_first_copper_drop_games", "3"),
            ("black_first_copper_drop_ply", "1.7"),
            ("white_pocket_moves", "0.250"),
            ("white_pocket_drops", "0.250"),
            ("white_pocketed", "Rook:1"),
            ("white_first_pocket_move_ply", "6.0"),
            ("white_first_pocket_drop_games", "1"),
            ("white_first_pocket_drop_ply", "8.0"),
            ("white_first_copper_drop_games", "3"),
            ("white_first_copper_drop_ply", "2.7"),
            ("material_20_games", "2"),
            ("material_20", "105.0"),
            ("material_40", "105.0"),
            ("material_80_games", "1"),
            ("material_80", "210.0"),
            ("plies_le60_games", "2"),
            ("plies_le60_score", "0.0000"),
            ("plies_61_100_games", "1"),
            ("plies_61_100_score", "0.5000"),
            ("plies_101_160_games", "0"),
            ("plies_101_160_score", ""),
            ("plies_gt160_games", "1"),
            ("plies_gt160_score", "1.0000"),
            ("black_first_pocket_drop_ply1_games", "2"),
            ("black_first_pocket_drop_ply1_score", "0.5000"),
            ("black_first_pocket_drop_ply2_10_games", "1"),
            ("black_first_pocket_drop_ply11_30_score", ""),
            ("black_first_pocket_drop_never_games", "1"),
            ("black_first_pocket_drop_never_score", "0.0000"),
            ("white_first_pocket_drop_ply2_10_score", "0.0000"),
            ("white_first_pocket_drop_never_games", "3"),
            ("white_first_pocket_drop_never_score", "0.5000"),
        ] {
            assert_eq!(row.get(column), Some(&value), "{column}");
        }

        let json = serde_json::to_value(&rep).unwrap();
        let g = &json["cells"][0]["game_stats"];
        assert_eq!(g["games"], 4);
        assert_eq!(g["black"]["pocketed"]["Rook"], 1);
        assert_eq!(g["white"]["first_pocket_drop"]["mean_ply"], 8.0);
        assert_eq!(g["white"]["first_copper_drop"]["games"], 3);
        assert_eq!(g["material"][2]["mean"], 210.0);
        assert_eq!(g["by_length"][3]["black_score"], 1.0);
        assert!(g["by_length"][2]["black_score"].is_null());

        let svg = score_by_length_svg(&rep).unwrap().unwrap();
        assert!(svg.contains("<svg") && svg.contains("t · seed") && svg.contains("101–160"), "{svg}");

        let dir = tempfile::tempdir().unwrap();
        crate::report::write_files(dir.path(), &rep).unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("games.csv")).unwrap(), csv);
        assert!(std::fs::read_to_string(dir.path().join("plots/score-by-length.svg")).unwrap().contains("<svg"));
        let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["cells"][0]["game_stats"], *g);
    }

    /// Hand-made network values of the four games (exact in binary, so the means are too):
    /// A (8 plies) and D (2) are judged at ply 0 only, C (70) up to ply 60, B (170) at
    /// every ply.
    fn hand_made_values() -> PhaseValues {
        let n = VALUE_PLIES.len();
        let mut a = vec![None; n];
        a[0] = Some(0.25);
        let mut b = vec![Some(0.5); n];
        b[n - 1] = Some(0.75);
        let mut c = vec![None; n];
        c[0] = Some(0.25);
        for v in &mut c[1..6] {
            *v = Some(-0.25);
        }
        let mut d = vec![None; n];
        d[0] = Some(0.0);
        PhaseValues::from([(0, a), (1, b), (2, c), (3, d)])
    }

    #[test]
    fn the_network_s_values_are_averaged_over_the_games_judged_at_each_ply() {
        let g = of_games(&games(), Color::Black, &hand_made_values());
        let value: Vec<(usize, u64, f64)> = g.value.iter().map(|v| (v.ply, v.games, v.mean)).collect();
        // Ply 0: (0.25 + 0.5 + 0.25 + 0) / 4; plies 10–60: B and C, (0.5 − 0.25) / 2; then B alone.
        assert_eq!(
            value,
            [
                (0, 4, 0.25),
                (10, 2, 0.125),
                (20, 2, 0.125),
                (30, 2, 0.125),
                (40, 2, 0.125),
                (60, 2, 0.125),
                (80, 1, 0.5),
                (100, 1, 0.5),
                (120, 1, 0.5),
                (160, 1, 0.75)
            ]
        );
        // A game without values: the cell reports none rather than a mean over some games.
        let mut partial = hand_made_values();
        partial.remove(&2);
        assert!(of_games(&games(), Color::Black, &partial).value.is_empty());
        assert!(of_games(&games(), Color::Black, &PhaseValues::new()).value.is_empty());

        let rep = report(&hand_made_values());
        let csv = games_csv(&rep);
        let lines: Vec<&str> = csv.lines().collect();
        let row: BTreeMap<&str, &str> = lines[0].split(',').zip(lines[1].split(',')).collect();
        assert_eq!(lines[0].split(',').count(), lines[1].split(',').count());
        for (column, value) in
            [("value_0_games", "4"), ("value_0", "0.2500"), ("value_10_games", "2"), ("value_10", "0.1250"), ("value_80_games", "1"), ("value_160", "0.7500")]
        {
            assert_eq!(row.get(column), Some(&value), "{column}");
        }
        let svg = value_by_ply_svg(&rep).unwrap().unwrap();
        assert!(svg.contains("<svg") && svg.contains("t · seed") && svg.contains("over the game"), "{svg}");
        // Without values: empty columns and no plot.
        let rep = report(&PhaseValues::new());
        let csv = games_csv(&rep);
        let lines: Vec<&str> = csv.lines().collect();
        let row: BTreeMap<&str, &str> = lines[0].split(',').zip(lines[1].split(',')).collect();
        assert_eq!((row.get("value_0_games"), row.get("value_0")), (Some(&""), Some(&"")));
        assert!(value_by_ply_svg(&rep).unwrap().is_none());
    }
}
