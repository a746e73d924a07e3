//! The study's pictures (SVG, through `arena::plot`):
//! - `plots/black-score.svg`: Black's score with its 95% interval, one row per tier ×
//!   start;
//! - `plots/black-score-by-generation.svg`: the same over generations, one line per
//!   start, when two or more tiers are checkpoints named `gen-NNNN`;
//! - `plots/start-values.svg`: a training run's network value of each start (for Black)
//!   over generations, from the loop's `eval/gen-NNNN-starts.json` (with `--run`).

use crate::error::BalanceError;
use crate::report::StudyReport;
use arena::plot::{band_chart, interval_chart, line_chart, Interval, Series};
use plotters::style::RGBColor;
use std::collections::BTreeMap;
use std::path::Path;

/// One line of a band chart: name, colour, (x, value, lo, hi) points.
type Band<'a> = (&'a str, RGBColor, Vec<(f64, f64, f64, f64)>);

fn plot_err(path: &Path) -> impl FnOnce(String) -> BalanceError + '_ {
    move |problem| BalanceError::Plot { path: path.display().to_string(), problem }
}

/// Draws every plot the report has data for; `generation_of_tier` maps checkpoint tiers
/// to their generation.
pub fn write_plots(dir: &Path, rep: &StudyReport, generation_of_tier: &BTreeMap<String, u32>) -> Result<(), BalanceError> {
    let plots = dir.join("plots");
    std::fs::create_dir_all(&plots).map_err(crate::error::io_err(&plots))?;

    let items: Vec<Interval> = rep
        .cells
        .iter()
        .filter(|c| c.stats.games > 0)
        .map(|c| Interval {
            label: format!("{} · {} (n={})", c.tier, c.start, c.stats.games),
            value: c.stats.score,
            lo: c.stats.score_lo,
            hi: c.stats.score_hi,
        })
        .collect();
    let title = if rep.opening_plies > 0 {
        format!("Black's score per tier and start, 95% intervals ({} random plies first)", rep.opening_plies)
    } else {
        "Black's score per tier and start, 95% intervals".to_string()
    };
    let path = plots.join("black-score.svg");
    interval_chart(&path, &title, "Black's score (0.5 = balanced)", &items).map_err(plot_err(&path))?;

    // Over generations: one line per start through the checkpoint tiers' generations.
    let mut by_start: BTreeMap<&str, Vec<(f64, f64, f64, f64)>> = BTreeMap::new();
    for c in rep.cells.iter().filter(|c| c.stats.games > 0) {
        if let Some(&g) = generation_of_tier.get(&c.tier) {
            by_start.entry(&c.start).or_default().push((g as f64, c.stats.score, c.stats.score_lo, c.stats.score_hi));
        }
    }
    if generation_of_tier.len() >= 2 && !by_start.is_empty() {
        let series: Vec<Band> = by_start
            .into_iter()
            .enumerate()
            .map(|(i, (start, mut pts))| {
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                (start, arena::plot::PALETTE[i % arena::plot::PALETTE.len()], pts)
            })
            .collect();
        let path = plots.join("black-score-by-generation.svg");
        band_chart(&path, "Black's score by generation, 95% intervals", "generation", "Black's score", &series).map_err(plot_err(&path))?;
    }

    if !rep.generations.is_empty() {
        let mut by_start: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for g in &rep.generations {
            for v in &g.starts {
                if !order.contains(&v.name) {
                    order.push(v.name.clone());
                }
                by_start.entry(v.name.clone()).or_default().push((g.generation as f64, v.value as f64));
            }
        }
        let series: Vec<Series> = order
            .iter()
            .enumerate()
            .map(|(i, name)| Series { name, points: by_start[name].clone(), color: arena::plot::PALETTE[i % arena::plot::PALETTE.len()] })
            .collect();
        let path = plots.join("start-values.svg");
        line_chart(&path, "The network's value of each start for Black", "generation", "P(Black wins) − P(White wins)", &series).map_err(plot_err(&path))?;
    }
    Ok(())
}

/// The edge's price: Black's score at each budget ratio (95% bars) and the fitted logistic
/// curve, against log2 of Black's budget over White's.
pub fn price_plot(path: &Path, report: &crate::price::PriceReport) -> Result<(), String> {
    let observed: Vec<(f64, f64, f64, f64)> = report
        .settings
        .iter()
        .map(|s| {
            let (score, lo, hi) = s.score_interval(arena::stats::z_for_confidence(report.confidence));
            ((s.black_budget / s.white_budget).log2(), score, lo, hi)
        })
        .collect();
    let (x0, x1) = observed.iter().fold((0.0f64, 0.0f64), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let fitted: Vec<(f64, f64, f64, f64)> = (0..=40)
        .map(|i| {
            let x = x0 + (x1 - x0) * i as f64 / 40.0;
            let y = crate::price::fitted_score(&report.fit, x);
            (x, y, y, y)
        })
        .collect();
    let level = vec![(x0, 0.5, 0.5, 0.5), (x1, 0.5, 0.5, 0.5)];
    let title = format!("Black's score against the budget ratio ({})", report.unit);
    band_chart(
        path,
        &title,
        "log2(Black's budget / White's)",
        "Black's score",
        &[("observed", RGBColor(31, 119, 180), observed), ("logistic fit", RGBColor(214, 39, 40), fitted), ("level", RGBColor(127, 127, 127), level)],
    )
}
