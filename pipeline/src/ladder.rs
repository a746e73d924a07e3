//! The ladder of a training run: every generation's model rated against its neighbours
//! and against fixed anchors (a baseline, the uniform-prior search, or an external
//! engine), on one Elo scale; drawn over generations and over CPU-hours.
//!
//! It is an arena tournament in ladder mode in `<run_dir>/ladder/` (resumable and
//! extensible like any tournament), plus `ladder.tsv` and the plots
//! `plots/ladder.svg` (Elo by generation) and `plots/ladder-cpu.svg` (Elo by CPU-hours).

use crate::config::RunConfig;
use crate::run_dir::{read_json, write_json, EvalSummary, RunDir, SelfplaySummary, TrainSummary};
use anyhow::{bail, Context, Result};
use arena::plot::band_chart;
use arena::tournament::{Mode, OpeningsConfig, TournamentConfig};
use plotters::style::RGBColor;
use std::path::Path;

pub struct LadderOptions {
    /// Anchor player specs; the first is fixed at 0 Elo. Empty: the uniform-prior search
    /// at the evaluation budget and the run's evaluation anchor.
    pub anchors: Vec<String>,
    /// Opening pairs per pairing.
    pub rounds: u32,
    /// Simulations per move of the generations (default: the run's evaluation budget).
    pub simulations: Option<u32>,
    /// Time per move of the generations instead, in ms: the ladder at equal time, in
    /// `ladder-movetime-<MS>/` beside the one at a fixed budget (give the anchors the same
    /// time in their specs).
    pub movetime_ms: Option<u64>,
    pub threads: usize,
    /// Rate every `every`-th generation (and always the last).
    pub every: u32,
    /// Each generation also plays the next one rated; off, the anchors only (every
    /// generation rated on games against fixed players alone, at a fraction of the games
    /// when one anchor is near the run's strength).
    pub neighbours: bool,
    /// The USI engines the run's config may name as the default anchor (the run
    /// directory, or the store it came from, is not trusted to name programs).
    pub allowed_engines: players::EngineAllowList,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Rung {
    pub generation: u32,
    pub elo: f64,
    pub lo: f64,
    pub hi: f64,
    /// CPU-hours of the run up to this generation ([`cumulative_cpu_hours`]).
    pub cpu_hours: f64,
}

/// Plays (or resumes) the ladder of the run in `run_dir` and returns one rung per rated
/// generation.
pub fn run_ladder(run_dir: &Path, opts: &LadderOptions, show_progress: bool) -> Result<Vec<Rung>> {
    let run = RunDir(run_dir.to_path_buf());
    let cfg_path = run.config();
    let text = std::fs::read_to_string(&cfg_path).with_context(|| format!("{} is not a run directory (no config.toml)", run_dir.display()))?;
    let cfg: RunConfig = toml::from_str(&text).with_context(|| format!("in {}", cfg_path.display()))?;
    if opts.anchors.is_empty() {
        let anchor = players::PlayerSpec::parse(&cfg.evaluation.anchor)?;
        opts.allowed_engines.check(&anchor).with_context(|| {
            format!("the evaluation anchor of {} (name the anchors with --anchor, or allow the engine with --allow-engine)", cfg_path.display())
        })?;
    }
    let sims = opts.simulations.unwrap_or(cfg.evaluation.simulations);
    // Generation 0 exists when the teacher stage trained it.
    let mut gens: Vec<u32> = (0..=cfg.generations.max(1_000)).filter(|&g| run.model(g).join("model.json").exists()).collect();
    if gens.is_empty() {
        bail!("{} has no trained generation yet (models/gen-*/model.json)", run_dir.display());
    }
    let last = *gens.last().unwrap();
    let every = opts.every.max(1);
    gens.retain(|&g| g % every == 0 || g == last || g <= 1);
    let anchors: Vec<String> =
        if opts.anchors.is_empty() { vec![format!("uniform,sims={sims},name=uniform-{sims}"), cfg.evaluation.anchor.clone()] } else { opts.anchors.clone() };
    let anchor_names: Vec<String> = anchors.iter().map(|a| players::PlayerSpec::parse(a).map(|s| s.name)).collect::<Result<_, _>>()?;
    // Generations play with their self-play's search. The anchors stay as given (plain
    // `uniform` is the fixed zero of every ladder); with the mate check on, the uniform
    // search with it is rated too, so the scale shows what the check alone is worth.
    let keys = cfg.selfplay.search_spec_keys();
    let limit = match opts.movetime_ms {
        Some(ms) => format!("movetime={ms}"),
        None => format!("sims={sims}"),
    };
    let mut players: Vec<String> =
        gens.iter().map(|&g| format!("checkpoint:{},{limit}{keys},name=gen-{g}", players::spec::quote(&run.model(g).to_string_lossy()))).collect();
    if cfg.selfplay.mate_in_one && opts.anchors.is_empty() {
        players.push(format!("uniform,sims={sims},mate=on,name=uniform-{sims}-mate"));
    }
    players.extend(anchors.iter().cloned());
    let mut t = TournamentConfig::new(players);
    t.variant = cfg.variant.clone();
    t.options = cfg.options.clone();
    t.mode = Mode::Ladder;
    t.anchors = anchor_names.clone();
    t.neighbours = opts.neighbours;
    t.anchor = Some(anchor_names[0].clone());
    t.rounds = opts.rounds;
    t.openings = OpeningsConfig { file: None, starts: Vec::new(), random_plies: cfg.evaluation.opening_plies };
    t.threads = opts.threads;
    t.games_in_flight = 16;
    t.max_plies = cfg.selfplay.max_plies;
    t.seed = cfg.seed ^ 0x1add_e700;
    let dir = match opts.movetime_ms {
        Some(ms) => run_dir.join(format!("ladder-movetime-{ms}")),
        None => run.ladder(),
    };
    t.out_dir = dir.clone();
    archive_if_pairings_changed(&dir, &t)?;
    let report = arena::tournament::run(&t, show_progress)?;
    print!("{}", arena::report::table(&report));

    let teacher: Option<teacher::TeacherSummary> = read_json(&run.teacher().join("summary.json")).ok().flatten();
    let tr0: Option<TrainSummary> = read_json(&run.train_report(0)).ok().flatten();
    let mut generation_seconds = Vec::new();
    for g in 1..=last {
        // A report that is missing or unreadable counts as no time.
        let sp: Option<SelfplaySummary> = read_json(&run.selfplay_summary(g)).ok().flatten();
        let tr: Option<TrainSummary> = read_json(&run.train_report(g)).ok().flatten();
        let ev: Option<EvalSummary> = read_json(&run.eval_report(g)).ok().flatten();
        generation_seconds.push(sp.map(|s| s.seconds).unwrap_or(0.0) + tr.map(|t| t.seconds).unwrap_or(0.0) + ev.map(|e| e.seconds).unwrap_or(0.0));
    }
    let cpu_hours =
        cumulative_cpu_hours(teacher.map(|t| t.cpu_seconds).unwrap_or(0.0), tr0.map(|t| t.seconds).unwrap_or(0.0), &generation_seconds, cfg.threads);
    let mut rungs = Vec::new();
    for &g in &gens {
        let name = format!("gen-{g}");
        if let Some(e) = report.ratings.entries.iter().find(|e| e.name == name) {
            rungs.push(Rung { generation: g, elo: e.elo, lo: e.lo, hi: e.hi, cpu_hours: cpu_hours[g as usize] });
        }
    }
    let mut tsv = String::from("generation\telo\telo_lo\telo_hi\tcpu_hours\n");
    for r in &rungs {
        tsv += &format!("{}\t{:.1}\t{:.1}\t{:.1}\t{:.3}\n", r.generation, r.elo, r.lo, r.hi, r.cpu_hours);
    }
    records::write_atomic(&dir.join("ladder.tsv"), tsv.as_bytes())?;
    let plots = dir.join("plots");
    std::fs::create_dir_all(&plots)?;
    let color = RGBColor(31, 119, 180);
    let title = format!("Elo of each generation ({} = 0)", anchor_names[0]);
    let by_gen: Vec<(f64, f64, f64, f64)> = rungs.iter().map(|r| (r.generation as f64, r.elo, r.lo, r.hi)).collect();
    band_chart(&plots.join("ladder.svg"), &title, "generation", "Elo", &[("generation", color, by_gen)]).map_err(anyhow::Error::msg)?;
    let by_cpu: Vec<(f64, f64, f64, f64)> = rungs.iter().map(|r| (r.cpu_hours, r.elo, r.lo, r.hi)).collect();
    band_chart(&plots.join("ladder-cpu.svg"), &title, "CPU-hours", "Elo", &[("generation", color, by_cpu)]).map_err(anyhow::Error::msg)?;
    println!("\nladder of {} ({} = 0 Elo):", run_dir.display(), anchor_names[0]);
    println!("{:>10} {:>8} {:>18} {:>10}", "generation", "Elo", "95% interval", "CPU-hours");
    for r in &rungs {
        println!("{:>10} {:>+8.0} {:>18} {:>10.2}", r.generation, r.elo, format!("[{:+.0}, {:+.0}]", r.lo, r.hi), r.cpu_hours);
    }
    let trend = self_play_trend(&rungs, &rung_covariance(&rungs, &report));
    if let Some(t) = &trend {
        println!(
            "Elo per CPU-hour over the self-play generations ({} rated): {:+.0} [{:+.0}, {:+.0}] (95%; least squares with the ratings' covariance, chi2/dof {:.2})",
            t.all.points, t.all.slope, t.all.slope_lo, t.all.slope_hi, t.all.birge_ratio
        );
        for h in &t.halves {
            println!("  generations {}-{} ({} rated): {:+.0} [{:+.0}, {:+.0}]", h.from, h.to, h.fit.points, h.fit.slope, h.fit.slope_lo, h.fit.slope_hi);
        }
    }
    write_json(&dir.join("trend.json"), &trend)?;
    println!("written: {}, {}, {}", dir.join("ladder.tsv").display(), plots.join("ladder.svg").display(), plots.join("ladder-cpu.svg").display());
    Ok(rungs)
}

/// How fast the self-play generations rise with compute: over all of them, and over each
/// half (does the rise go on, or was it all early?).
#[derive(Clone, Debug, serde::Serialize)]
struct Trend {
    #[serde(flatten)]
    all: arena::stats::LineFit,
    /// The first and the second half of the rated self-play generations, split at the
    /// first rated generation at or past the middle one (it belongs to both halves);
    /// a half with fewer than two rated generations is left out.
    halves: Vec<HalfTrend>,
}

#[derive(Clone, Debug, serde::Serialize)]
struct HalfTrend {
    from: u32,
    to: u32,
    #[serde(flatten)]
    fit: arena::stats::LineFit,
}

/// The trend of the self-play generations (1 on; generation 0 is the teacher's or the
/// start model): a line of Elo against CPU-hours through their ratings, with the covariance
/// the rating list gives them (`covariance[i][j]` between `rungs[i]` and `rungs[j]`;
/// [`arena::stats::fit_line_correlated`]): the generations share their games against the
/// anchors, and what they share moves them together without tilting the line. `None` with
/// fewer than two of them.
fn self_play_trend(rungs: &[Rung], covariance: &[Vec<f64>]) -> Option<Trend> {
    let chosen: Vec<usize> = (0..rungs.len()).filter(|&i| rungs[i].generation >= 1).collect();
    let all = line_through(rungs, covariance, &chosen)?;
    let (first, last) = (rungs[chosen[0]].generation, rungs[*chosen.last()?].generation);
    let middle = chosen.iter().map(|&i| rungs[i].generation).find(|&g| 2 * g >= first + last)?;
    let mut halves = Vec::new();
    for (from, to) in [(first, middle), (middle, last)] {
        let part: Vec<usize> = chosen.iter().copied().filter(|&i| (from..=to).contains(&rungs[i].generation)).collect();
        if let Some(fit) = line_through(rungs, covariance, &part) {
            halves.push(HalfTrend { from, to, fit });
        }
    }
    Some(Trend { all, halves })
}

fn line_through(rungs: &[Rung], covariance: &[Vec<f64>], chosen: &[usize]) -> Option<arena::stats::LineFit> {
    let xs: Vec<f64> = chosen.iter().map(|&i| rungs[i].cpu_hours).collect();
    let ys: Vec<f64> = chosen.iter().map(|&i| rungs[i].elo).collect();
    let sub: Vec<Vec<f64>> =
        chosen.iter().map(|&i| chosen.iter().map(|&j| covariance.get(i).and_then(|r| r.get(j)).copied().unwrap_or(f64::NAN)).collect()).collect();
    arena::stats::fit_line_correlated(&xs, &ys, &sub, 0.95)
}

/// The covariance of the rungs' ratings (Elo², in the rungs' order; NaN where the list
/// has none), from the ladder's rating list.
fn rung_covariance(rungs: &[Rung], report: &arena::report::Report) -> Vec<Vec<f64>> {
    let c = &report.rating_covariance;
    let at: Vec<Option<usize>> = rungs.iter().map(|r| report.players.iter().position(|p| *p == format!("gen-{}", r.generation))).collect();
    at.iter().map(|a| at.iter().map(|b| a.zip(*b).and_then(|(a, b)| c.get(a)?.get(b).copied()).unwrap_or(f64::NAN)).collect()).collect()
}

/// A ladder rated before the run had its latest generations (or with other players, or
/// paired with or without neighbours otherwise) cannot be extended in place: its games are
/// kept in `ladder-N/` and a new ladder starts.
/// Other differences (rounds) are the tournament's own business: it extends or refuses.
fn archive_if_pairings_changed(dir: &Path, t: &TournamentConfig) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(dir.join("tournament.toml")) else { return Ok(()) };
    let old: Option<TournamentConfig> = toml::from_str(&text).ok();
    if old.is_some_and(|o| o.players == t.players && o.neighbours == t.neighbours) {
        return Ok(());
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    let archive = (1..).map(|i| parent.join(format!("ladder-{i}"))).find(|p| !p.exists()).expect("a free name");
    std::fs::rename(dir, &archive).with_context(|| format!("moving {} to {}", dir.display(), archive.display()))?;
    tracing::info!(
        "{} rated other players (an earlier set of generations) or paired them otherwise: kept as {}, rating anew",
        dir.display(),
        archive.display()
    );
    Ok(())
}

/// CPU-hours spent up to each generation (index 0: the teacher stage). The teacher's games
/// count their threads' busy seconds as the stage measured them (it may have run on fewer
/// threads than the loop); generation 0's training and each later generation's
/// self-play, training and evaluation count wall seconds times the run's threads (the loop
/// keeps every thread busy). Runs from before evaluation was timed count self-play and
/// training only.
fn cumulative_cpu_hours(teacher_thread_seconds: f64, gen0_train_seconds: f64, generation_seconds: &[f64], threads: usize) -> Vec<f64> {
    let threads = threads as f64;
    let mut total = teacher_thread_seconds + gen0_train_seconds * threads;
    let mut hours = vec![total / 3600.0];
    for s in generation_seconds {
        total += s * threads;
        hours.push(total / 3600.0);
    }
    hours
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_teacher_on_one_thread_counts_its_own_thread_time_and_the_loop_its_threads() {
        // The teacher's games: 1,163 s on one thread; generation 0's training 511 s and
        // generations 1 and 2 100 s and 200 s of wall time on two threads.
        let h = cumulative_cpu_hours(1163.0, 511.0, &[100.0, 200.0], 2);
        let want = [(1163.0 + 1022.0) / 3600.0, (2185.0 + 200.0) / 3600.0, (2385.0 + 400.0) / 3600.0];
        assert_eq!(h.len(), 3);
        for (got, want) in h.iter().zip(want) {
            assert!((got - want).abs() < 1e-12, "{got} != {want}");
        }
    }

    /// Generation 0 (the teacher's model, far above here) takes no part in the self-play
    /// trend: generations 1 and 2 alone give the line through them, 100 Elo per CPU-hour.
    #[test]
    fn the_trend_is_of_the_self_play_generations() {
        let rung = |generation, cpu_hours, elo: f64| Rung { generation, elo, lo: elo - 50.0, hi: elo + 50.0, cpu_hours };
        let independent = |n: usize| -> Vec<Vec<f64>> { (0..n).map(|i| (0..n).map(|j| if i == j { 625.0 } else { 0.0 }).collect()).collect() };
        let t = self_play_trend(&[rung(0, 0.5, 1000.0), rung(1, 1.0, 0.0), rung(2, 2.0, 100.0)], &independent(3)).unwrap().all;
        assert_eq!(t.points, 2);
        assert!((t.slope - 100.0).abs() < 1e-9, "{}", t.slope);
        // Two points 1 CPU-hour apart with standard errors of 25: ±1.96·√(2·625).
        assert!((t.slope_hi - t.slope - 1.959964 * 1250f64.sqrt()).abs() < 1e-3, "{t:?}");
        assert!(self_play_trend(&[rung(0, 0.5, 1000.0), rung(1, 1.0, 0.0)], &independent(2)).is_none());
    }

    /// A run that rises 100 Elo per CPU-hour to generation 8 and then stays level: the
    /// line over all of it rises, its halves (split at generation 8, the first rated one
    /// at or past (1 + 15)/2) say where: 1–8 at +100, 8–15 at 0.
    #[test]
    fn the_halves_split_at_the_middle_generation_and_share_it() {
        let rung = |generation, cpu_hours, elo: f64| Rung { generation, elo, lo: elo - 50.0, hi: elo + 50.0, cpu_hours };
        let rungs = [rung(0, 0.5, 900.0), rung(1, 1.0, 0.0), rung(4, 2.0, 100.0), rung(8, 3.0, 200.0), rung(12, 4.0, 200.0), rung(15, 5.0, 200.0)];
        let cov: Vec<Vec<f64>> = (0..rungs.len()).map(|i| (0..rungs.len()).map(|j| if i == j { 625.0 } else { 0.0 }).collect()).collect();
        let t = self_play_trend(&rungs, &cov).unwrap();
        assert!(t.all.slope > 0.0 && t.all.points == 5, "{t:?}");
        let spans: Vec<(u32, u32, usize)> = t.halves.iter().map(|h| (h.from, h.to, h.fit.points)).collect();
        assert_eq!(spans, [(1, 8, 3), (8, 15, 3)]);
        assert!((t.halves[0].fit.slope - 100.0).abs() < 1e-9, "{t:?}");
        assert!(t.halves[1].fit.slope.abs() < 1e-9, "{t:?}");
        // trend.json keeps the whole line's fields at the top, the halves beside them.
        let json = serde_json::to_value(&t).unwrap();
        assert!(json["slope"].as_f64().unwrap() > 0.0 && json["halves"][1]["from"] == 8, "{json}");
    }

    #[test]
    fn a_ladder_of_other_generations_or_pairings_is_kept_aside_and_one_of_the_same_is_extended() {
        let run = tempfile::tempdir().unwrap();
        let dir = run.path().join("ladder");
        std::fs::create_dir_all(&dir).unwrap();
        let old = TournamentConfig::new(vec!["uniform,sims=8,name=a".into(), "random".into()]);
        std::fs::write(dir.join("tournament.toml"), toml::to_string(&old).unwrap()).unwrap();
        std::fs::write(dir.join("results.jsonl"), "{}\n").unwrap();
        // The same players: left in place for the tournament to extend.
        archive_if_pairings_changed(&dir, &old).unwrap();
        assert!(dir.join("results.jsonl").exists());
        // One generation more: the old games move to ladder-1, nothing is lost.
        let more = TournamentConfig::new(vec!["uniform,sims=8,name=a".into(), "uniform,sims=16,name=b".into(), "random".into()]);
        archive_if_pairings_changed(&dir, &more).unwrap();
        assert!(!dir.exists());
        assert_eq!(std::fs::read_to_string(run.path().join("ladder-1/results.jsonl")).unwrap(), "{}\n");
        // The same players paired against the anchors only: other pairings, kept aside too.
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tournament.toml"), toml::to_string(&more).unwrap()).unwrap();
        let anchors_only = TournamentConfig { neighbours: false, ..more };
        archive_if_pairings_changed(&dir, &anchors_only).unwrap();
        assert!(run.path().join("ladder-2/tournament.toml").exists() && !dir.exists());
    }
}
