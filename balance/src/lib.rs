//! Balance research of a variant's start family (first of all Pocket Shogi Copper's
//! Copper start, RULES.md §2): is a start fair, at what strength, and by how much?
//!
//! A study plays every strength tier (an arena player: a checkpoint at a simulation
//! budget, a baseline at a depth, …) against itself from every start, `games_per_cell`
//! games per cell, on all cores, and reports per cell Black's score with its 95% interval,
//! the Elo-equivalent of Black's edge, the draw rate, the game length, how games ended
//! and the network's own view of the start; per tier, the difference between starts with
//! a significance test. It resumes after an interruption and grows when games, tiers or
//! starts are added, without losing or double-counting a game. See docs/BALANCE.md.
//!
//! Modules, each with one job:
//! - [`config`]: the study file and command-line overrides → tiers and starts;
//! - [`registry`]: `study.toml`, the directory's identity and fixed cell indices;
//! - [`results`]: `results.jsonl`, appended game by game and checked on reading;
//! - [`study`]: the jobs of each cell and playing them through the arena's runner;
//! - [`stats`]: intervals, the two-sample test and games-per-cell arithmetic;
//! - [`netview`]: the network's value of each start (per tier, and over a run's generations);
//! - [`phasevalues`]: a network's value of every game over its phases;
//! - [`gamestats`]: what the pocket and the Copper do in each cell's games;
//! - [`report`]: the table, `summary.json`, CSVs and game records;
//! - [`pool`]: the cells of studies played apart (other seeds) added together;
//! - [`price`]: the edge's price, from matches at unequal budgets (a logistic fit);
//! - [`plots`]: the SVG plots.

pub mod config;
pub mod error;
pub mod gamestats;
pub mod netview;
pub mod phasevalues;
pub mod plots;
pub mod pool;
pub mod price;
pub mod registry;
pub mod report;
pub mod results;
pub mod stats;
pub mod study;

pub use config::{NoiseConfig, Overrides, StudyConfig};
pub use error::BalanceError;
pub use report::StudyReport;
pub use study::RunOptions;

use config::{Start, Tier};
use registry::Registry;
use report::{ReportInput, StartInfo, TierInfo};
use rules::Position;
use std::collections::BTreeMap;
use std::path::Path;

/// Runs (or resumes, or extends) the study `cfg` describes in its output directory, and
/// writes and returns its report.
pub fn run_study(cfg: &StudyConfig, opts: &RunOptions) -> Result<StudyReport, BalanceError> {
    cfg.validate()?;
    let variant = cfg.variant()?;
    let tiers = cfg.tiers()?;
    let starts = cfg.starts_resolved()?;
    let dir = cfg.out_dir();
    // Everything is checked before anything is written: the games already played, the
    // changes to the study, the players (a checkpoint that does not load), the run.
    let old = Registry::load(&dir)?;
    if opts.report_only && old.is_none() {
        return Err(BalanceError::Invalid(format!("--report: {} holds no study (no study.toml) to report", dir.display())));
    }
    let results_path = dir.join("results.jsonl");
    let done = results::read(&results_path, old.as_ref().unwrap_or(&Registry::none(cfg)))?;
    let played = registry::Played::of(&done, old.as_ref().unwrap_or(&Registry::none(cfg)));
    let registry = Registry::merge(&dir, old, cfg, &tiers, &starts, &played)?;
    let factories = study::factories(cfg, &tiers)?;
    let max_plies = (cfg.max_plies > 0).then_some(cfg.max_plies);
    let views = netview::tier_views(&tiers, &starts, variant, max_plies)?;
    let value_model = cfg.value_model.clone().or_else(|| tiers.iter().find_map(|t| t.checkpoint().map(Path::to_path_buf)));
    let value_net = match &value_model {
        Some(m) => Some(neteval::load(m, variant).map_err(|e| BalanceError::Network(format!("value_model {}: {e}", m.display())))?),
        None => None,
    };
    let generations = match &cfg.run_dir {
        Some(run) => netview::run_start_values(run)?,
        None => Vec::new(),
    };
    for t in &tiers {
        if cfg.opening_plies == 0 && t.spec.noise.is_none() && !matches!(t.spec.kind, players::spec::Kind::Random) {
            tracing::warn!(tier = %t.name, "plays without noise from fixed starts: its games may all be the same game (give noise=X or opening_plies)");
        }
    }
    study::create_dir(&dir)?;
    registry.save(&dir)?;

    let planned = study::plan(&registry, &tiers, &starts, cfg.games_per_cell);
    let total = planned.len() as u64;
    let todo = study::remaining(planned.clone(), &done);
    let new = study::play(cfg, &dir, &factories, &starts, &planned, &todo, &done, total, opts)?;
    let mut all = done;
    all.extend(new);

    // The report covers the whole study: the current tiers and starts first, then those
    // of earlier runs in this directory.
    let mut all_tiers: Vec<Tier> = tiers.clone();
    for t in &registry.tiers {
        if !all_tiers.iter().any(|x| x.name == t.name) {
            all_tiers.push(cfg.tier_from_text(&t.spec)?);
        }
    }
    let mut all_starts: Vec<Start> = starts.clone();
    for s in &registry.starts {
        if !all_starts.iter().any(|x| x.name == s.name) {
            let position = Position::from_sfen(variant, &s.sfen).map_err(|e| BalanceError::Invalid(format!("study.toml: start '{}': {e}", s.name)))?;
            all_starts.push(Start { name: s.name.clone(), sfen: s.sfen.clone(), position });
        }
    }
    // Cells of earlier runs without a game (a tier renamed before it played) are left out.
    let played = registry::Played::of(&all, &registry);
    let current = |t: &str, s: &str| tiers.iter().any(|x| x.name == t) && starts.iter().any(|x| x.name == s);
    let cells: Vec<(String, String)> = all_tiers
        .iter()
        .flat_map(|t| all_starts.iter().map(move |s| (t.name.clone(), s.name.clone())))
        .filter(|(t, s)| registry.cell_index(t, s).is_some() && (current(t, s) || (played.tiers.contains(t) && played.starts.contains(s))))
        .collect();
    let phase_values = match (&value_model, &value_net) {
        (Some(m), Some(net)) => phasevalues::update(&dir, m, net, variant, max_plies, &all)?,
        _ => phasevalues::read(&dir)?.map(|(_, v)| v).unwrap_or_default(),
    };
    let input = ReportInput {
        name: &cfg.name,
        registry: &registry,
        tiers: all_tiers.iter().map(|t| TierInfo { name: t.name.clone(), spec: t.text.clone(), noise: t.spec.noise }).collect(),
        starts: all_starts.iter().map(|s| StartInfo { name: s.name.clone(), sfen: s.sfen.clone() }).collect(),
        first_mover: all_starts.iter().map(|s| (s.name.clone(), s.position.side_to_move())).collect(),
        cells,
        comparisons: cfg.comparisons()?,
        views: &views,
        generations,
        phase_values: &phase_values,
    };
    let rep = report::build(input, &all);
    report::write_files(&dir, &rep)?;
    report::write_game_records(&dir, &rep, &all)?;
    let generation_of_tier: BTreeMap<String, u32> = all_tiers.iter().filter_map(|t| Some((t.name.clone(), netview::generation_of(t.checkpoint()?)?))).collect();
    plots::write_plots(&dir, &rep, &generation_of_tier)?;
    Ok(rep)
}
