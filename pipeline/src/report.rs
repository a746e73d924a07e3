//! The run's report, rebuilt from the per-generation files after every generation: the
//! summary line printed per generation, `summary.tsv`, and the plots
//! (`plots/losses.svg`, `evaluation.svg`, `value.svg`, `calibration.svg`, `endings.svg`,
//! `policy.svg`, `time.svg`).

use crate::config::RunConfig;
use crate::evaluation::MatchResult;
use crate::run_dir::{Generation, RunDir};
use anyhow::Result;
use arena::plot::{line_chart, Series, PALETTE};
use plotters::style::RGBColor;
use std::collections::BTreeMap;
use std::time::Duration;

/// `checkmate 30, max-plies 10, resignation 8`: endings, most frequent first.
pub fn endings_text(endings: &BTreeMap<String, u64>) -> String {
    let mut v: Vec<(&String, &u64)> = endings.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
}

/// The line printed after each generation.
pub fn summary_line(g: &Generation, took: Duration) -> String {
    let (sp, tr, ev) = (&g.selfplay, &g.train, &g.eval);
    let loss = tr.losses.last().map(|l| format!("{:.3}", l.total)).unwrap_or("-".into());
    let val = match (&tr.validation, &tr.calibration) {
        (Some(v), Some(c)) => format!("val {:.3} (value {:.3}, constant {:.3})", v[0], c.all.value_loss, c.all.constant_value_loss),
        (Some(v), None) => format!("val {:.3}", v[0]),
        _ => "val -".into(),
    };
    format!(
        "gen {}: selfplay {} games {:.0} pos/s avg {:.0} plies B/W/D {}/{}/{} ({}) | train {} steps loss {loss} {val} | vs previous {} | vs uniform {}{} | {:.0}s",
        g.generation,
        sp.games,
        sp.positions_per_second,
        sp.average_plies,
        sp.black_wins,
        sp.white_wins,
        sp.draws,
        endings_text(&sp.endings),
        tr.steps,
        ev.vs_previous.line(),
        ev.vs_uniform.line(),
        ev.vs_anchor.as_ref().filter(|a| a.games > 0).map(|a| format!(" | vs anchor {}", a.line())).unwrap_or_default(),
        took.as_secs_f64()
    )
}

const COLUMNS: &[&str] = &[
    "generation",
    "games",
    "positions_per_s",
    "avg_plies",
    "black_wins",
    "white_wins",
    "draws",
    "train_steps",
    "train_loss",
    "val_loss",
    "val_policy",
    "val_value",
    "vs_previous",
    "vs_previous_lo",
    "vs_previous_hi",
    "vs_uniform",
    "vs_uniform_lo",
    "vs_uniform_hi",
    "vs_anchor",
    "vs_anchor_lo",
    "vs_anchor_hi",
    "anchor_elo",
    "val_value_constant",
    "val_value_opening",
    "val_value_middlegame",
    "val_value_endgame",
    "prior_entropy",
    "improvement_kl",
    "mean_sample_uses",
    "samples_per_new_position",
    "resignations",
    "would_resign",
    "false_resignations",
    "selfplay_s",
    "train_s",
    "eval_s",
    "selfplay_endings",
    "eval_endings",
];

fn f(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        String::new()
    }
}

/// One row of `summary.tsv` (columns as [`COLUMNS`]).
/// The `anchor_elo` cell: a sweep has no finite Elo (the score's clamp would say ±2400),
/// so it is written `inf` or `-inf`.
fn anchor_elo(a: &MatchResult) -> String {
    if a.wins == a.games {
        "inf".into()
    } else if a.losses == a.games {
        "-inf".into()
    } else {
        f(a.elo(), 0)
    }
}

fn row(g: &Generation) -> Vec<String> {
    let (sp, tr, ev) = (&g.selfplay, &g.train, &g.eval);
    let val = tr.validation.map(|v| v.map(|x| x as f64)).unwrap_or([f64::NAN; 3]);
    let (plo, phi) = ev.vs_previous.interval();
    let (ulo, uhi) = ev.vs_uniform.interval();
    let anchor = ev.vs_anchor.as_ref().filter(|a| a.games > 0);
    let cal = tr.calibration.as_ref();
    let phase = |i: usize| cal.and_then(|c| c.phases.get(i)).map(|p| p.value_loss).unwrap_or(f64::NAN);
    let mut eval_endings = BTreeMap::new();
    for m in [Some(&ev.vs_previous), Some(&ev.vs_uniform), ev.vs_anchor.as_ref()].into_iter().flatten() {
        for (k, n) in &m.endings {
            *eval_endings.entry(k.clone()).or_insert(0) += n;
        }
    }
    let new_positions = sp.positions.max(1) as f64;
    vec![
        g.generation.to_string(),
        sp.games.to_string(),
        f(sp.positions_per_second, 1),
        f(sp.average_plies, 1),
        sp.black_wins.to_string(),
        sp.white_wins.to_string(),
        sp.draws.to_string(),
        tr.steps.to_string(),
        f(tr.losses.last().map(|l| l.total as f64).unwrap_or(f64::NAN), 4),
        f(val[0], 4),
        f(val[1], 4),
        f(val[2], 4),
        f(ev.vs_previous.score(), 3),
        f(plo, 3),
        f(phi, 3),
        f(ev.vs_uniform.score(), 3),
        f(ulo, 3),
        f(uhi, 3),
        anchor.map(|a| f(a.score(), 3)).unwrap_or_default(),
        anchor.map(|a| f(a.interval().0, 3)).unwrap_or_default(),
        anchor.map(|a| f(a.interval().1, 3)).unwrap_or_default(),
        anchor.map(anchor_elo).unwrap_or_default(),
        f(cal.map(|c| c.all.constant_value_loss).unwrap_or(f64::NAN), 4),
        f(phase(0), 4),
        f(phase(1), 4),
        f(phase(2), 4),
        f(sp.prior_entropy, 3),
        f(sp.improvement_kl, 3),
        f(tr.uses.mean_uses, 2),
        f(if sp.positions > 0 { tr.uses.samples_drawn as f64 / new_positions } else { f64::NAN }, 2),
        sp.resignations.to_string(),
        sp.would_resign.to_string(),
        sp.false_resignations.to_string(),
        f(sp.seconds, 1),
        f(tr.seconds, 1),
        f(ev.seconds, 1),
        endings_text(&sp.endings),
        endings_text(&eval_endings),
    ]
}

/// Rewrites `summary.tsv` and the plots from the per-generation files.
pub fn write_summary(run: &RunDir, cfg: &RunConfig) -> Result<()> {
    let mut gens = Vec::new();
    for g in 1..=cfg.generations {
        if let Some(gen) = crate::run_dir::read_generation(run, g)? {
            gens.push(gen);
        }
    }
    let mut tsv = COLUMNS.join("\t") + "\n";
    for g in &gens {
        tsv += &(row(g).join("\t") + "\n");
    }
    records::write_atomic(&run.summary_tsv(), tsv.as_bytes())?;
    let plots = run.plots();
    std::fs::create_dir_all(&plots)?;
    write_plots(&plots, &gens).map_err(anyhow::Error::msg)
}

fn by_gen(gens: &[Generation], value: impl Fn(&Generation) -> Option<f64>) -> Vec<(f64, f64)> {
    gens.iter().filter_map(|g| value(g).filter(|v| v.is_finite()).map(|v| (g.generation as f64, v))).collect()
}

fn write_plots(plots: &std::path::Path, gens: &[Generation]) -> Result<(), String> {
    // Training losses by optimiser step.
    let mut train_pts: [Vec<(f64, f64)>; 3] = Default::default();
    let mut val_pts = Vec::new();
    for g in gens {
        for l in &g.train.losses {
            train_pts[0].push((l.step as f64, l.total as f64));
            train_pts[1].push((l.step as f64, l.policy as f64));
            train_pts[2].push((l.step as f64, l.value as f64));
        }
        if let (Some(l), Some(v)) = (g.train.losses.last(), g.train.validation) {
            val_pts.push((l.step as f64, v[0] as f64));
        }
    }
    line_chart(
        &plots.join("losses.svg"),
        "Training loss",
        "optimiser step",
        "loss",
        &[
            Series { name: "total", points: train_pts[0].clone(), color: RGBColor(30, 30, 30) },
            Series { name: "policy", points: train_pts[1].clone(), color: PALETTE[0] },
            Series { name: "value (WDL)", points: train_pts[2].clone(), color: PALETTE[1] },
            Series { name: "validation total", points: val_pts, color: PALETTE[2] },
        ],
    )?;

    let score = |m: Option<&crate::evaluation::MatchResult>| m.filter(|m| m.games > 0).map(|m| m.score());
    line_chart(
        &plots.join("evaluation.svg"),
        "Evaluation score by generation",
        "generation",
        "score",
        &[
            Series { name: "vs previous generation", points: by_gen(gens, |g| score(Some(&g.eval.vs_previous))), color: PALETTE[0] },
            Series { name: "vs uniform-prior search", points: by_gen(gens, |g| score(Some(&g.eval.vs_uniform))), color: PALETTE[1] },
            Series {
                name: "vs uniform, 95% lower bound",
                points: by_gen(gens, |g| Some(&g.eval.vs_uniform).filter(|m| m.games > 0).map(|m| m.interval().0)),
                color: RGBColor(255, 152, 150),
            },
            Series { name: "vs fixed anchor", points: by_gen(gens, |g| score(g.eval.vs_anchor.as_ref())), color: PALETTE[2] },
        ],
    )?;

    // The value head on held-out games against the constant baseline, by phase.
    let cal = |g: &Generation| g.train.calibration.clone();
    let mut value_series = vec![
        Series { name: "held-out value loss", points: by_gen(gens, |g| cal(g).map(|c| c.all.value_loss)), color: RGBColor(30, 30, 30) },
        Series { name: "constant prediction", points: by_gen(gens, |g| cal(g).map(|c| c.all.constant_value_loss)), color: PALETTE[7] },
    ];
    for (i, name) in trainer::calibration::PHASES.iter().enumerate() {
        value_series.push(Series { name, points: by_gen(gens, |g| cal(g).and_then(|c| c.phases.get(i).map(|p| p.value_loss))), color: PALETTE[i] });
    }
    line_chart(&plots.join("value.svg"), "Value head on held-out games (WDL cross-entropy)", "generation", "nats", &value_series)?;

    // Reliability: predicted value against the actual result, for a few generations.
    let with_cal: Vec<&Generation> = gens.iter().filter(|g| g.train.calibration.is_some()).collect();
    if !with_cal.is_empty() {
        let mut picks = vec![with_cal[0], with_cal[with_cal.len() / 2], with_cal[with_cal.len() - 1]];
        picks.dedup_by_key(|g| g.generation);
        let names: Vec<String> = picks.iter().map(|g| format!("generation {}", g.generation)).collect();
        let mut series = vec![Series { name: "perfect calibration", points: vec![(-1.0, -1.0), (1.0, 1.0)], color: PALETTE[7] }];
        for (i, g) in picks.iter().enumerate() {
            let c = g.train.calibration.as_ref().expect("filtered");
            let points = c.bins.iter().filter(|b| b.positions >= 5).map(|b| (b.mean_predicted, b.mean_result)).collect();
            series.push(Series { name: &names[i], points, color: PALETTE[i] });
        }
        line_chart(&plots.join("calibration.svg"), "Value calibration on held-out games", "predicted value (W - L)", "mean result", &series)?;
    }

    // How self-play games ended.
    let mut names: Vec<String> = gens.iter().flat_map(|g| g.selfplay.endings.keys().cloned()).collect();
    names.sort();
    names.dedup();
    let series: Vec<Series> = names
        .iter()
        .enumerate()
        .map(|(i, name)| Series {
            name,
            points: by_gen(gens, |g| (g.selfplay.games > 0).then(|| g.selfplay.endings.get(name).copied().unwrap_or(0) as f64 / g.selfplay.games as f64)),
            color: PALETTE[i % PALETTE.len()],
        })
        .collect();
    line_chart(&plots.join("endings.svg"), "How self-play games ended", "generation", "share of games", &series)?;

    line_chart(
        &plots.join("policy.svg"),
        "Prior and search at full searches",
        "generation",
        "nats",
        &[
            Series {
                name: "entropy of the prior",
                points: by_gen(gens, |g| Some(g.selfplay.prior_entropy).filter(|_| g.selfplay.positions > 0)),
                color: PALETTE[0],
            },
            Series {
                name: "KL(improved policy || prior)",
                points: by_gen(gens, |g| Some(g.selfplay.improvement_kl).filter(|_| g.selfplay.positions > 0)),
                color: PALETTE[1],
            },
        ],
    )?;

    line_chart(
        &plots.join("time.svg"),
        "Wall-clock time per generation",
        "generation",
        "seconds",
        &[
            Series { name: "self-play", points: by_gen(gens, |g| Some(g.selfplay.seconds)), color: PALETTE[0] },
            Series { name: "training", points: by_gen(gens, |g| Some(g.train.seconds)), color: PALETTE[1] },
            Series { name: "evaluation", points: by_gen(gens, |g| Some(g.eval.seconds).filter(|&s| s > 0.0)), color: PALETTE[2] },
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_of_the_anchor_is_an_infinite_elo_not_the_clamp() {
        let m = |wins, draws, losses| MatchResult { wins, draws, losses, games: wins + draws + losses, ..Default::default() };
        assert_eq!(anchor_elo(&m(16, 0, 0)), "inf");
        assert_eq!(anchor_elo(&m(0, 0, 16)), "-inf");
        // 12–4: 400·log10(0.75/0.25) = 190.85.
        assert_eq!(anchor_elo(&m(12, 0, 4)), "191");
    }

    #[test]
    fn endings_most_frequent_first() {
        let e: BTreeMap<String, u64> = [("checkmate".to_string(), 3), ("max-plies".to_string(), 7), ("flag".to_string(), 3)].into_iter().collect();
        assert_eq!(endings_text(&e), "max-plies 7, checkmate 3, flag 3");
        assert_eq!(endings_text(&BTreeMap::new()), "");
    }
}
