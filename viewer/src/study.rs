//! The page of a balance study directory (`study.toml`, `results.jsonl`): every cell
//! (tier × start) with Black's score and its interval, each start against the first, the
//! study's plots, and every cell's games. The numbers are the study's own
//! (`balance::report::build` over the results file), so a study still running shows its
//! games so far.

use crate::error::{invalid, ViewError};
use crate::page::{inline_svg, Cell, PageData, Section};
use crate::tournament::add_games;
use balance::registry::{Registry, CELL_STRIDE};
use balance::report::{ReportInput, StartInfo, TierInfo};
use rules::{Position, Variant};
use std::collections::BTreeMap;
use std::path::Path;

fn num(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        "n/a".into()
    } else {
        format!("{x:.decimals$}")
    }
}

fn signed(x: f64) -> String {
    if x.is_finite() {
        format!("{x:+.0}")
    } else if x.is_nan() {
        "n/a".into()
    } else if x > 0.0 {
        "+inf".into()
    } else {
        "-inf".into()
    }
}

/// The page of a study directory.
pub fn page(dir: &Path) -> Result<PageData, ViewError> {
    let study_toml = dir.join("study.toml");
    let Some(registry) = Registry::load(dir)? else {
        return Err(ViewError::UnknownSource { path: dir.to_path_buf() });
    };
    let results_path = dir.join("results.jsonl");
    let results = balance::results::read(&results_path, &registry)?;
    let options: Vec<(String, String)> = registry.options.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let variant: &'static Variant = Variant::load(&registry.variant, &options).map_err(|e| invalid(&study_toml, e))?;
    let mut first_mover = BTreeMap::new();
    for s in &registry.starts {
        let pos = Position::from_sfen(variant, &s.sfen).map_err(|e| invalid(&study_toml, format!("start '{}': {e}", s.name)))?;
        first_mover.insert(s.name.clone(), pos.side_to_move());
    }
    let comparisons: Vec<(String, String)> = match registry.starts.first() {
        Some(first) => registry.starts.iter().skip(1).map(|s| (s.name.clone(), first.name.clone())).collect(),
        None => Vec::new(),
    };
    let views = BTreeMap::new();
    let input = ReportInput {
        name: &dir.display().to_string(),
        registry: &registry,
        tiers: registry.tiers.iter().map(|t| TierInfo { name: t.name.clone(), spec: t.spec.clone(), noise: None }).collect(),
        starts: registry.starts.iter().map(|s| StartInfo { name: s.name.clone(), sfen: s.sfen.clone() }).collect(),
        first_mover,
        cells: registry.cells.iter().map(|c| (c.tier.clone(), c.start.clone())).collect(),
        comparisons,
        views: &views,
        generations: Vec::new(),
    };
    let rep = balance::report::build(input, &results);

    let title = format!(
        "Balance study {} — {}, {} tiers × {} starts, {} games",
        dir.display(),
        variant.title,
        registry.tiers.len(),
        registry.starts.len(),
        results.len()
    );
    let mut page = PageData::new("study", title, dir);
    let by_job = add_games(&mut page, &results_path, &results, "")?;
    let games_of_cell = |index: u64| -> Vec<usize> { by_job.range(index * CELL_STRIDE..(index + 1) * CELL_STRIDE).flat_map(|(_, v)| v.clone()).collect() };

    let rows = rep
        .cells
        .iter()
        .map(|c| {
            let s = &c.stats;
            let endings: Vec<String> = c.endings.iter().map(|(k, v)| format!("{k} {v}")).collect();
            vec![
                Cell::text(c.tier.clone()),
                Cell::text(c.start.clone()),
                Cell::games(s.games.to_string(), games_of_cell(c.index)),
                Cell::text(format!("{}/{}/{}", s.black_wins, s.draws, s.white_wins)),
                Cell::text(format!("{} [{}, {}]", num(s.score, 3), num(s.score_lo, 3), num(s.score_hi, 3))),
                Cell::text(format!("{} [{}, {}]", signed(s.elo), signed(s.elo_lo), signed(s.elo_hi))),
                Cell::text(num(100.0 * s.draw_rate, 1)),
                Cell::text(num(c.mean_plies, 0)),
                Cell::text(endings.join(", ")),
            ]
        })
        .collect();
    let mut sections = vec![Section::Table {
        title: "Cells".into(),
        note: format!(
            "Black's score from each start at each tier, {}% intervals; {} random opening plies; games in a cell open its games below.",
            (rep.confidence * 100.0).round(),
            registry.opening_plies
        ),
        columns: ["tier", "start", "games", "B-win/draw/W-win", "Black's score [95%]", "Elo [95%]", "draw %", "plies", "endings"].map(String::from).to_vec(),
        rows,
    }];
    if !rep.comparisons.is_empty() {
        let rows = rep
            .comparisons
            .iter()
            .map(|c| {
                vec![
                    Cell::text(c.tier.clone()),
                    Cell::text(format!("{} − {}", c.a, c.b)),
                    Cell::text(format!("{} / {}", c.games_a, c.games_b)),
                    Cell::text(format!("{} [{}, {}]", num(c.test.diff, 3), num(c.test.lo, 3), num(c.test.hi, 3))),
                    Cell::text(num(c.test.p_value, 4)),
                ]
            })
            .collect();
        sections.push(Section::Table {
            title: "Starts against the first start".into(),
            note: "Difference of Black's scores, two-sample z-test.".into(),
            columns: ["tier", "starts", "games", "difference [95%]", "p"].map(String::from).to_vec(),
            rows,
        });
    }
    for (file, title) in [
        ("black-score.svg", "Black's score per tier and start"),
        ("black-score-by-generation.svg", "Black's score by generation"),
        ("start-values.svg", "The network's value of each start"),
    ] {
        if let Ok(text) = std::fs::read_to_string(dir.join("plots").join(file)) {
            sections.push(Section::Svg { title: title.into(), svg: inline_svg(&text) });
        }
    }
    page.sections = sections;
    Ok(page)
}
