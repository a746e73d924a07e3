//! The page of a balance study directory (`study.toml`, `results.jsonl`): every cell
//! (tier × start) with Black's score and its interval, each start against the first, what
//! the pocket and the Copper did in each cell, the study's plots, and every cell's games.
//! The numbers are the study's own (`balance::report::build` over the results file), so a
//! study still running shows its games so far.

use crate::error::{invalid, ViewError};
use crate::page::{inline_svg, Cell, PageData, Section};
use crate::tournament::add_games;
use balance::gamestats::{pocketed_text, FirstPly, ScoreBucket, DROP_BUCKETS, LENGTH_BUCKETS, MATERIAL_PLIES};
use balance::phasevalues::VALUE_PLIES;
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

/// `12.5 (n=40)`: a mean first ply and its games; `–` where it never happened.
fn first(f: &FirstPly) -> String {
    if f.games == 0 {
        "–".into()
    } else {
        format!("{} (n={})", num(f.mean_ply, 1), f.games)
    }
}

/// A row's first cells: tier, start and the games counted.
fn cell_head(c: &balance::report::CellReport) -> Vec<Cell> {
    vec![Cell::text(c.tier.clone()), Cell::text(c.start.clone()), Cell::text(c.game_stats.games.to_string())]
}

/// The two tables of what the pocket and the Copper did, and Black's score by length.
fn game_stats_sections(rep: &balance::StudyReport, value_model: Option<&str>) -> Vec<Section> {
    let both = |b: String, w: String| Cell::text(format!("{b} / {w}"));
    let pocket_rows = rep
        .cells
        .iter()
        .map(|c| {
            let (b, w) = (&c.game_stats.black, &c.game_stats.white);
            vec![
                Cell::text(c.tier.clone()),
                Cell::text(c.start.clone()),
                Cell::text(c.game_stats.games.to_string()),
                both(num(b.pocket_moves_per_game, 2), num(w.pocket_moves_per_game, 2)),
                both(num(b.pocket_drops_per_game, 2), num(w.pocket_drops_per_game, 2)),
                Cell::text(pocketed_text(&b.pocketed)),
                Cell::text(pocketed_text(&w.pocketed)),
                both(first(&b.first_pocket_move), first(&w.first_pocket_move)),
                both(first(&b.first_pocket_drop), first(&w.first_pocket_drop)),
                both(first(&b.first_copper_drop), first(&w.first_copper_drop)),
            ]
        })
        .collect();
    let mut columns = vec!["tier".to_string(), "start".into(), "games".into()];
    columns.extend(MATERIAL_PLIES.iter().map(|p| format!("material at ply {p}")));
    columns.extend(LENGTH_BUCKETS.iter().map(|(_, _, label, _)| format!("Black's score, {label} plies")));
    let length_rows = rep
        .cells
        .iter()
        .map(|c| {
            let g = &c.game_stats;
            let mut row = cell_head(c);
            row.extend(g.material.iter().map(|m| Cell::text(if m.games == 0 { "–".into() } else { format!("{} (n={})", signed(m.mean), m.games) })));
            row.extend(g.by_length.iter().map(|b| Cell::text(if b.games == 0 { "–".into() } else { format!("{} (n={})", num(b.black_score, 3), b.games) })));
            row
        })
        .collect();
    let mut sections = vec![
        Section::Table {
            title: "The pocket and the Copper".into(),
            note: "Per game, Black / White: pocket moves (a board piece into the pocket) and pocket drops; the pieces each side pocketed; the mean ply (from the start, ply 1 the first move) of each side's first pocket move, first pocket drop and first Copper drop (from hand or pocket), over the n games where it happened.".into(),
            columns: ["tier", "start", "games", "pocket moves B / W", "pocket drops B / W", "pocketed by Black", "pocketed by White", "first pocket move B / W", "first pocket drop B / W", "first Copper drop B / W"]
                .map(String::from)
                .to_vec(),
            rows: pocket_rows,
        },
        Section::Table {
            title: "Material and game length".into(),
            note: "Black's material minus White's in centipawns (the alpha-beta baseline's piece values: board, hand ×1.1, pocket), the mean of the balance after the ply and after the next, over the n games that reached the next; Black's score over the games of each length.".into(),
            columns,
            rows: length_rows,
        },
    ];
    match balance::gamestats::score_by_length_svg(rep) {
        Ok(Some(svg)) => sections.push(Section::Svg { title: "Black's score by game length".into(), svg: inline_svg(&svg) }),
        Ok(None) => {}
        Err(e) => tracing::warn!("the score-by-length plot: {e}"),
    }
    let score = |b: &ScoreBucket| Cell::text(if b.games == 0 { "–".into() } else { format!("{} (n={})", num(b.black_score, 3), b.games) });
    let mut columns = vec!["tier".to_string(), "start".into(), "games".into()];
    for side in ["Black", "White"] {
        columns.extend(DROP_BUCKETS.iter().map(|d| format!("{side}'s first at ply {}", d.2)));
        columns.push(format!("{side} never"));
    }
    let rows = rep
        .cells
        .iter()
        .map(|c| {
            let g = &c.game_stats;
            let mut row = cell_head(c);
            row.extend(g.black.score_by_first_pocket_drop.iter().chain(&g.white.score_by_first_pocket_drop).map(score));
            row
        })
        .collect();
    sections.push(Section::Table {
        title: "Black's score by the first pocket drop".into(),
        note: "Black's score over the n games in which Black (or White) first dropped a piece from its pocket at those plies, or never: whether using the pocket early pays.".into(),
        columns,
        rows,
    });
    if rep.cells.iter().any(|c| !c.game_stats.value.is_empty()) {
        let mut columns = vec!["tier".to_string(), "start".into(), "games".into()];
        columns.extend(VALUE_PLIES.iter().map(|p| format!("ply {p}")));
        let rows = rep
            .cells
            .iter()
            .filter(|c| !c.game_stats.value.is_empty())
            .map(|c| {
                let mut row = cell_head(c);
                row.extend(c.game_stats.value.iter().map(|v| Cell::text(if v.games == 0 { "–".into() } else { format!("{:+.3} (n={})", v.mean, v.games) })));
                row
            })
            .collect();
        sections.push(Section::Table {
            title: "The network's value over the game".into(),
            note: format!(
                "P(Black wins) − P(White wins) by the value head of {}, over the n games still going on at the ply (ply 0: the start).",
                value_model.unwrap_or("the study's value network")
            ),
            columns,
            rows,
        });
        match balance::gamestats::value_by_ply_svg(rep) {
            Ok(Some(svg)) => sections.push(Section::Svg { title: "The network's value for Black over the game".into(), svg: inline_svg(&svg) }),
            Ok(None) => {}
            Err(e) => tracing::warn!("the value-by-ply plot: {e}"),
        }
    }
    sections
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
    let (value_model, phase_values) = match balance::phasevalues::read(dir)? {
        Some((m, v)) => (Some(m), v),
        None => (None, Default::default()),
    };
    let input = ReportInput {
        name: &dir.display().to_string(),
        registry: &registry,
        tiers: registry.tiers.iter().map(|t| TierInfo { name: t.name.clone(), spec: t.spec.clone(), noise: None }).collect(),
        starts: registry.starts.iter().map(|s| StartInfo { name: s.name.clone(), sfen: s.sfen.clone() }).collect(),
        first_mover,
        cells: registry.cells.iter().map(|c| (c.tier.clone(), c.start.clone())).collect(),
        comparisons,
        views: &views,
        phase_values: &phase_values,
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
                    Cell::text(c.kind.name()),
                    Cell::text(c.contrast.clone()),
                    Cell::text(format!("{} / {}", c.games_a, c.games_b)),
                    Cell::text(format!("{} [{}, {}]", num(c.test.diff, 3), num(c.test.lo, 3), num(c.test.hi, 3))),
                    Cell::text(num(c.test.p_value, 4)),
                ]
            })
            .collect();
        sections.push(Section::Table {
            title: "Comparisons".into(),
            note: "Start against start at each tier, the Copper's two moves tested for additivity (swapped − both-in-hand − both-in-pocket + seed), \
                   tier against tier at each start and in each start comparison: the contrast of Black's scores, z-test."
                .into(),
            columns: ["kind", "contrast", "games", "difference [95%]", "p"].map(String::from).to_vec(),
            rows,
        });
    }
    if !rep.joint.is_empty() {
        let rows = rep
            .joint
            .iter()
            .map(|j| {
                let rho: Vec<String> = j.correlations.iter().map(|(a, b, r)| format!("{a}/{b} {}", num(*r, 2))).collect();
                vec![
                    Cell::text(j.tier.clone()),
                    Cell::text(j.starts.join(", ")),
                    Cell::text(format!("{} ({} df)", num(j.test.chi2, 2), j.test.df)),
                    Cell::text(num(j.test.p_value, 4)),
                    Cell::text(rho.join("; ")),
                ]
            })
            .collect();
        sections.push(Section::Table {
            title: "Every start at once".into(),
            note: "Cochran's Q that a tier's starts share one score; the comparisons against the control share its cell, so they correlate by ρ.".into(),
            columns: ["tier", "starts", "χ²", "p", "ρ of comparisons against the control"].map(String::from).to_vec(),
            rows,
        });
    }
    sections.extend(game_stats_sections(&rep, value_model.as_deref()));
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

#[cfg(test)]
mod tests {
    use super::*;
    use arena::runner::{HandResult, Job, JobResult};
    use arena::{Ending, GameEnd};
    use gamerecords::GameRecord;
    use rules::{Color, Game, Outcome};

    const SEED: &str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b c 1 C";

    /// Game `id` of the study's only cell, White winning by resignation after `moves`.
    fn result(id: u64, moves: &[&str]) -> JobResult {
        let v = Variant::builtin("pocket-copper").unwrap();
        let mut g = Game::new(Position::from_sfen(v, SEED).unwrap(), None);
        for m in moves {
            g.play_usi(m).unwrap();
        }
        let end = GameEnd { outcome: Outcome::Win(Color::White), ending: Ending::Resignation };
        let record = GameRecord::from_game(&g, Some(end), "t", "t");
        JobResult {
            job: Job { id, first: 0, second: 0, opening: 0 },
            first: "t".into(),
            second: "t".into(),
            opening: "seed".into(),
            first_score: 0.0,
            hands: vec![HandResult { record, end, first_is_black: true, incident: None }],
            seconds: 0.0,
        }
    }

    fn table<'a>(page: &'a PageData, name: &str) -> &'a Vec<Vec<Cell>> {
        page.sections
            .iter()
            .find_map(|s| match s {
                Section::Table { title, rows, .. } if title == name => Some(rows),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no table '{name}'"))
    }

    #[test]
    fn the_page_shows_what_the_pocket_and_the_copper_did() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let registry: Registry = serde_json::from_value(serde_json::json!({
            "variant": "pocket-copper", "seed": 1, "max_plies": 0, "opening_plies": 0, "games_per_cell": 2,
            "options": {}, "noise": {}, "tiers": [{ "name": "t", "spec": "random" }],
            "starts": [{ "name": "seed", "sfen": SEED }], "cells": [{ "index": 0, "tier": "t", "start": "seed" }]
        }))
        .unwrap();
        registry.save(dir).unwrap();
        // Black drops its pocketed Copper (ply 1), White its Copper from hand (2), both are
        // taken (3, 4), each side pockets its Rook (5, 6), Black drops a Copper from hand
        // (7), White its Rook from the pocket (8). The second game: two pawn moves.
        let a = ["C&5e", "C*5d", "5e5d", "5c5d", "2h&", "8b&", "C*5e", "R&5f"];
        for r in [result(0, &a), result(1, &["7g7f", "3c3d"])] {
            balance::results::append(&dir.join("results.jsonl"), &r).unwrap();
        }
        let page = page(dir).unwrap();
        let texts = |row: &Vec<Cell>| row.iter().map(|c| c.t.clone()).collect::<Vec<_>>();
        assert_eq!(
            texts(&table(&page, "The pocket and the Copper")[0]),
            ["t", "seed", "2", "0.50 / 0.50", "0.50 / 0.50", "Rook:1", "Rook:1", "5.0 (n=1) / 6.0 (n=1)", "1.0 (n=1) / 8.0 (n=1)", "1.0 (n=1) / 2.0 (n=1)"]
        );
        // Neither game reached ply 20; both are short losses for Black.
        assert_eq!(texts(&table(&page, "Material and game length")[0]), ["t", "seed", "2", "–", "–", "–", "0.000 (n=2)", "–", "–", "–"]);
        assert!(page.sections.iter().any(|s| matches!(s, Section::Svg { title, svg } if title == "Black's score by game length" && svg.starts_with("<svg"))));
        assert!(!page.sections.iter().any(|s| matches!(s, Section::Table { title, .. } if title == "The network's value over the game")), "no values yet");
        // Black dropped from its pocket at ply 1 in the first game (lost) and never in the second (lost); White at ply 8 in the first.
        assert_eq!(
            texts(&table(&page, "Black's score by the first pocket drop")[0]),
            ["t", "seed", "2", "0.000 (n=1)", "–", "–", "–", "0.000 (n=1)", "–", "0.000 (n=1)", "–", "–", "0.000 (n=1)"]
        );

        // The network's values as a study writes them (balance::phasevalues): the page
        // reads them without a network.
        let values = "{\"model\":\"models/x\",\"plies\":[0,10,20,30,40,60,80,100,120,160],\"max_plies\":0,\"method\":\"mean of plies p and p+1\"}\n\
            {\"id\":0,\"values\":[0.25,null,null,null,null,null,null,null,null,null]}\n\
            {\"id\":1,\"values\":[0.5,null,null,null,null,null,null,null,null,null]}\n";
        std::fs::write(dir.join(balance::phasevalues::FILE), values).unwrap();
        let page = super::page(dir).unwrap();
        let row = texts(&table(&page, "The network's value over the game")[0]);
        assert_eq!(row[..5], ["t", "seed", "2", "+0.375 (n=2)", "–"]);
        assert!(page.sections.iter().any(|s| matches!(s, Section::Table { note, .. } if note.contains("models/x"))));
        assert!(page
            .sections
            .iter()
            .any(|s| matches!(s, Section::Svg { title, svg } if title == "The network's value for Black over the game" && svg.starts_with("<svg"))));
    }
}
