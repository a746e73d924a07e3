//! Real (tiny) studies: every output file, counts that add up, resuming after an
//! interruption, growing a study, and clear errors for bad inputs.

use balance::{run_study, RunOptions, StudyConfig};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Tiers `random` and `alphabeta,depth=1` (with the default 20 cp noise), starts `seed` and
/// `no-copper`, `games` games per cell, 60 plies at most.
fn tiny(dir: &Path, games: u32) -> StudyConfig {
    StudyConfig {
        name: "tiny".into(),
        tiers: vec!["random".into(), "alphabeta,depth=1".into()],
        starts: vec!["seed".into(), "no-copper".into()],
        games_per_cell: games,
        max_plies: 60,
        threads: 2,
        games_in_flight: 4,
        out_dir: Some(dir.to_path_buf()),
        ..StudyConfig::default()
    }
}

fn quiet() -> RunOptions {
    RunOptions { show_progress: false, stop_after: None, after_games: None, remote: None, report_only: false }
}

fn lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("results.jsonl")).unwrap().lines().map(str::to_string).collect()
}

fn ids(dir: &Path) -> Vec<u64> {
    lines(dir).iter().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["job"]["id"].as_u64().unwrap()).collect()
}

/// The ids a study of `cells` cells with `games` games each must hold.
fn expected_ids(cells: &[u64], games: u64) -> HashSet<u64> {
    cells.iter().flat_map(|c| (0..games).map(move |g| c * 1_000_000 + g)).collect()
}

fn assert_unique_and_exactly(dir: &Path, want: &HashSet<u64>) {
    let ids = ids(dir);
    let set: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(set.len(), ids.len(), "an id appears twice: {ids:?}");
    assert_eq!(&set, want);
}

#[test]
fn a_tiny_study_writes_every_file_and_its_counts_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    let rep = run_study(&tiny(&dir, 4), &quiet()).unwrap();

    assert_eq!(rep.cells.len(), 4);
    for c in &rep.cells {
        let s = &c.stats;
        assert_eq!(s.games, 4, "{} {}", c.tier, c.start);
        assert_eq!(s.black_wins + s.draws + s.white_wins, s.games);
        assert_eq!(c.endings.values().sum::<u64>(), s.games);
        assert!(s.score_lo <= s.score && s.score <= s.score_hi);
        assert!(c.mean_plies > 0.0 && c.mean_plies <= 60.0);
        assert!(c.net.is_none());
    }
    // Every start against seed at both tiers, the two tiers at each start and in that comparison.
    let kinds: Vec<(&str, &str, &str)> = rep.comparisons.iter().map(|c| (c.kind.name(), c.a.as_str(), c.b.as_str())).collect();
    assert_eq!(
        kinds,
        [
            ("start", "no-copper", "seed"),
            ("start", "no-copper", "seed"),
            ("tier", "seed", "seed"),
            ("tier", "no-copper", "no-copper"),
            ("tier-start", "no-copper", "seed")
        ]
    );
    assert!(rep.comparisons.iter().filter(|c| c.kind.name() != "tier-start").all(|c| c.games_a == 4 && c.games_b == 4));
    assert_eq!(rep.joint.len(), 2, "each tier's starts tested at once");
    // Cells get indices in (tier name, start name) order: alphabeta-depth=1 before random.
    let index = |tier: &str, start: &str| rep.cells.iter().find(|c| c.tier == tier && c.start == start).unwrap().index;
    assert_eq!(
        [index("alphabeta-depth=1", "no-copper"), index("alphabeta-depth=1", "seed"), index("random", "no-copper"), index("random", "seed")],
        [0, 1, 2, 3]
    );
    assert_unique_and_exactly(&dir, &expected_ids(&[0, 1, 2, 3], 4));

    for f in ["study.toml", "results.jsonl", "cells.csv", "comparisons.csv", "summary.json", "plots/black-score.svg"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let cells = std::fs::read_to_string(dir.join("cells.csv")).unwrap();
    assert_eq!(cells.lines().count(), 5);
    assert!(cells.starts_with("tier,start,opening_plies,games,black_wins,draws,white_wins,black_score,score_lo,score_hi,elo"));
    assert_eq!(std::fs::read_to_string(dir.join("comparisons.csv")).unwrap().lines().count(), 8);
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["cells"].as_array().unwrap().len(), 4);
    assert_eq!(summary["tiers"][1]["noise"].as_f64(), Some(20.0), "alpha-beta takes the default 20 cp");
    assert!(summary["tiers"][0]["noise"].is_null(), "random takes none");
    assert!(std::fs::read_to_string(dir.join("plots/black-score.svg")).unwrap().contains("<svg"));

    // Game records: one `sfen … moves …` line per game from the cell's start.
    let seed_sfen = &rep.starts.iter().find(|s| s.name == "seed").unwrap().sfen;
    let mut distinct = HashSet::new();
    for (tier, start) in [("random", "seed"), ("random", "no-copper"), ("alphabeta-depth=1", "seed"), ("alphabeta-depth=1", "no-copper")] {
        let text = std::fs::read_to_string(dir.join("games").join(tier).join(format!("{start}.sfen"))).unwrap();
        assert_eq!(text.lines().count(), 4, "{tier}/{start}");
        for l in text.lines() {
            assert!(l.starts_with("sfen ") && l.contains(" moves "), "{l}");
            if start == "seed" {
                assert!(l.starts_with(&format!("sfen {seed_sfen} moves ")), "{l}");
            }
            if tier != "random" {
                distinct.insert(l.to_string());
            }
        }
    }
    assert!(distinct.len() >= 3, "the noise makes alpha-beta's games differ: {} distinct of 8", distinct.len());

    // Running the finished study again plays nothing and changes no result.
    let before = std::fs::read(dir.join("results.jsonl")).unwrap();
    run_study(&tiny(&dir, 4), &quiet()).unwrap();
    assert_eq!(std::fs::read(dir.join("results.jsonl")).unwrap(), before);
}

#[test]
fn an_interrupted_study_resumes_without_losing_or_double_counting() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    let report_only = RunOptions { report_only: true, ..quiet() };
    let e = run_study(&tiny(&dir, 4), &report_only).unwrap_err().to_string();
    assert!(e.contains("--report") && e.contains("no study"), "{e}");
    assert!(!dir.exists());
    run_study(&tiny(&dir, 4), &RunOptions { stop_after: Some(5), ..quiet() }).unwrap();
    let first = lines(&dir);
    assert!(first.len() >= 5 && first.len() < 16, "{} games", first.len());
    // A report of the games so far plays none.
    let rep = run_study(&tiny(&dir, 4), &report_only).unwrap();
    assert_eq!(rep.cells.iter().map(|c| c.stats.games as usize).sum::<usize>(), first.len());
    assert_eq!(lines(&dir), first);
    assert!(dir.join("cells.csv").is_file());
    // A kill in the middle of writing the fourth line.
    let kept = first[..3].join("\n") + "\n";
    let torn = format!("{kept}{}", &first[3][..first[3].len() / 2]);
    std::fs::write(dir.join("results.jsonl"), torn).unwrap();

    let rep = run_study(&tiny(&dir, 4), &quiet()).unwrap();
    let after = lines(&dir);
    assert_eq!(after.len(), 16);
    assert_eq!(after[..3], first[..3], "finished lines are kept byte for byte");
    assert_unique_and_exactly(&dir, &expected_ids(&[0, 1, 2, 3], 4));
    assert!(rep.cells.iter().all(|c| c.stats.games == 4));
}

#[test]
fn more_games_or_another_tier_add_only_new_games() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    run_study(&tiny(&dir, 2), &quiet()).unwrap();
    let before = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let rep = run_study(&tiny(&dir, 3), &quiet()).unwrap();
    let after = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    assert!(after.starts_with(&before));
    assert_unique_and_exactly(&dir, &expected_ids(&[0, 1, 2, 3], 3));
    assert!(rep.cells.iter().all(|c| c.stats.games == 3));

    // A new tier gets new cells after the old ones; the old ids keep their meaning.
    let mut c = tiny(&dir, 3);
    c.tiers.insert(0, "greedy".into());
    let rep = run_study(&c, &quiet()).unwrap();
    assert!(std::fs::read_to_string(dir.join("results.jsonl")).unwrap().starts_with(&after));
    assert_eq!(rep.cells.len(), 6);
    let greedy: Vec<u64> = rep.cells.iter().filter(|c| c.tier == "greedy").map(|c| c.index).collect();
    assert_eq!(greedy, [5, 4], "greedy/seed and greedy/no-copper, numbered by start name");
    assert_unique_and_exactly(&dir, &expected_ids(&[0, 1, 2, 3, 4, 5], 3));

    // Leaving a tier out later still reports its games (nothing is lost).
    let mut c = tiny(&dir, 3);
    c.tiers = vec!["greedy".into()];
    let rep = run_study(&c, &quiet()).unwrap();
    assert_eq!(rep.cells.len(), 6);
    assert_eq!(rep.cells[0].tier, "greedy");
}

#[test]
fn a_changed_study_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    run_study(&tiny(&dir, 1), &quiet()).unwrap();
    let refused = |f: &dyn Fn(&mut StudyConfig), says: &[&str]| {
        let mut c = tiny(&dir, 1);
        f(&mut c);
        let e = run_study(&c, &quiet()).unwrap_err().to_string();
        for s in says {
            assert!(e.contains(s), "'{s}' not in: {e}");
        }
        assert!(e.contains("holds a different study"), "{e}");
    };
    refused(&|c| c.seed = 2, &["seed was 1, now 2"]);
    refused(&|c| c.max_plies = 80, &["max_plies was 60, now 80"]);
    refused(&|c| c.noise.baseline_cp = 30.0, &["noise"]);
    refused(&|c| c.opening_plies = 2, &["opening_plies"]);
    refused(&|c| drop(c.options.insert("flag-win".into(), "off".into())), &["options were {}"]);
    refused(
        &|c| {
            c.variant = "shogi".into();
            c.starts = vec!["all".into()];
        },
        &["variant was pocket-copper, now shogi"],
    );
    refused(&|c| c.tiers[1] = "alphabeta,depth=2,name=alphabeta-depth=1".into(), &["tier 'alphabeta-depth=1'", "alphabeta,depth=2"]);
    // Nothing was written by the refused runs.
    assert_eq!(ids(&dir).len(), 4);

    // Before the first game is played (here: its games removed), anything may change.
    std::fs::remove_file(dir.join("results.jsonl")).unwrap();
    let mut c = tiny(&dir, 1);
    c.seed = 2;
    c.tiers[1] = "alphabeta,depth=2,name=alphabeta-depth=1".into();
    run_study(&c, &quiet()).unwrap();
    assert_eq!(ids(&dir).len(), 4);
}

#[test]
fn opening_plies_change_the_start_and_are_labelled() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    let mut c = tiny(&dir, 2);
    c.tiers = vec!["random".into()];
    c.opening_plies = 3;
    let rep = run_study(&c, &quiet()).unwrap();
    assert_eq!(rep.opening_plies, 3);
    let r: serde_json::Value = serde_json::from_str(&lines(&dir)[0]).unwrap();
    let opening = r["opening"].as_str().unwrap();
    assert!(opening == "seed+3" || opening == "no-copper+3", "{opening}");
    assert!(balance::report::table(&rep).contains("3 random plies"));
    // Resuming replays the same openings: no error, nothing new.
    run_study(&c, &quiet()).unwrap();
    assert_eq!(lines(&dir).len(), 4);
}

fn err_of(c: &StudyConfig) -> String {
    run_study(c, &quiet()).unwrap_err().to_string()
}

#[test]
fn bad_inputs_get_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");

    let mut c = tiny(&dir, 1);
    c.starts = vec!["seed".into(), "nowhere".into()];
    let e = err_of(&c);
    assert!(e.contains("starts: unknown start 'nowhere'") && e.contains("seed, no-copper, both-in-hand, both-in-pocket, swapped"), "{e}");

    let mut c = tiny(&dir, 1);
    c.tiers = vec!["alphabeta,depth=two".into()];
    let e = err_of(&c);
    assert!(e.contains("tiers") && e.contains("alphabeta,depth=two") && e.contains("expected a whole number"), "{e}");

    let mut c = tiny(&dir, 1);
    c.tiers = vec!["random,noise=1".into()];
    assert!(err_of(&c).contains("random takes no noise"));

    let mut c = tiny(&dir, 1);
    c.tiers = vec!["random".into(), "random".into()];
    assert!(err_of(&c).contains("two tiers are named 'random'"));

    let mut c = tiny(&dir, 0);
    c.games_per_cell = 0;
    assert!(err_of(&c).contains("games_per_cell: 0 is outside 1..=999999"));

    let mut c = tiny(&dir, 1);
    c.tiers.clear();
    assert!(err_of(&c).contains("no tiers"));

    let mut c = tiny(&dir, 1);
    c.compare = vec!["seed,swapped".into()];
    assert!(err_of(&c).contains("compare 'seed,swapped': 'swapped' is not one of the study's starts"));

    let mut c = tiny(&dir, 1);
    c.options.insert("start".into(), "no-copper".into());
    assert!(err_of(&c).contains("options.start"));

    let mut c = tiny(&dir, 1);
    c.variant = "hand-shogi".into();
    c.starts = vec!["all".into()];
    assert!(err_of(&c).contains("match of hands"));

    // A checkpoint that does not load is reported before the study is created, so fixing
    // the path under the same name is not refused later.
    let mut c = tiny(&dir, 1);
    c.tiers = vec!["checkpoint:/nonexistent/gen-0001,sims=2,name=net".into()];
    let e = err_of(&c);
    assert!(e.contains("/nonexistent/gen-0001") && e.contains("net"), "{e}");
    // So is a value network that does not load.
    let mut c = tiny(&dir, 1);
    c.value_model = Some("/nonexistent/value-net".into());
    let e = err_of(&c);
    assert!(e.contains("value_model /nonexistent/value-net"), "{e}");

    // Nothing above created the study.
    assert!(!dir.exists());

    // A study file with an unknown key names the file and the key.
    let file = tmp.path().join("study.toml");
    std::fs::write(&file, "tiers = [\"random\"]\ngamez = 3\n").unwrap();
    let e = StudyConfig::load(&file).unwrap_err().to_string();
    assert!(e.contains(&file.display().to_string()) && e.contains("gamez"), "{e}");
    std::fs::write(&file, "tiers = \"random\"\n").unwrap();
    let e = StudyConfig::load(&file).unwrap_err().to_string();
    assert!(e.contains(&file.display().to_string()) && e.contains("tiers"), "{e}");
    std::fs::write(&file, "[noise]\nsearch = 1\nbaseline = 3\n").unwrap();
    assert!(StudyConfig::load(&file).unwrap_err().to_string().contains("baseline"));
}

#[test]
fn malformed_study_files_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    run_study(&tiny(&dir, 1), &quiet()).unwrap();
    let results = dir.join("results.jsonl");
    let good = std::fs::read_to_string(&results).unwrap();
    let l: Vec<&str> = good.lines().collect();

    // A corrupt line that is not the last one.
    std::fs::write(&results, format!("{}\nnot json\n{}\n", l[0], l[1])).unwrap();
    let e = err_of(&tiny(&dir, 1));
    assert!(e.contains("results.jsonl") && e.contains("line 2"), "{e}");

    // A result whose id names no cell of this study.
    let mut foreign: serde_json::Value = serde_json::from_str(l[0]).unwrap();
    foreign["job"]["id"] = 99_000_000u64.into();
    std::fs::write(&results, format!("{}\n", serde_json::to_string(&foreign).unwrap())).unwrap();
    let e = err_of(&tiny(&dir, 1));
    assert!(e.contains("results.jsonl") && e.contains("game 99000000: cell 99 is not in study.toml"), "{e}");

    // A result filed under another cell's id.
    let v: serde_json::Value = serde_json::from_str(l[0]).unwrap();
    let id = v["job"]["id"].as_u64().unwrap();
    let other = if id / 1_000_000 == 0 { 1_000_000 } else { 0 };
    let mut moved = v.clone();
    moved["job"]["id"] = other.into();
    // Moving between a `random` and an `alphabeta` cell, or between starts, both show.
    let cell_of = |i: u64| i / 1_000_000;
    assert_ne!(cell_of(id), cell_of(other));
    std::fs::write(&results, format!("{}\n", serde_json::to_string(&moved).unwrap())).unwrap();
    let e = err_of(&tiny(&dir, 1));
    assert!(e.contains("results.jsonl") && e.contains(&format!("game {other}")), "{e}");

    // A broken study.toml.
    std::fs::write(&results, &good).unwrap();
    std::fs::write(dir.join("study.toml"), "variant = 3\n").unwrap();
    let e = err_of(&tiny(&dir, 1));
    assert!(e.contains("study.toml"), "{e}");
}

/// A checkpoint with random weights for Pocket Shogi Copper.
fn tiny_model(dir: &Path, seed: u64) {
    neteval::save_random_model(rules::Variant::builtin("pocket-copper").unwrap(), dir, 1, 8, seed).unwrap();
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn checkpoint_tiers_report_the_networks_view_and_a_run_its_generations() {
    let tmp = tempfile::tempdir().unwrap();
    // A run directory with two generations' models and the loop's start-value files.
    let run = tmp.path().join("run");
    let mut cfg = pipeline::RunConfig::load(&repo().join("configs/default.toml")).unwrap();
    cfg.run_dir = run.clone();
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("config.toml"), cfg.to_toml()).unwrap();
    let rd = pipeline::RunDir(run.clone());
    for g in [1, 2] {
        tiny_model(&rd.model(g), g as u64);
        pipeline::stages::write_start_values(&rd, &cfg, g).unwrap();
    }
    let sv: serde_json::Value = serde_json::from_slice(&std::fs::read(rd.start_values(2)).unwrap()).unwrap();
    assert_eq!(sv["generation"], 2);
    let starts = sv["starts"].as_array().unwrap();
    assert_eq!(starts.iter().map(|s| s["name"].as_str().unwrap()).collect::<Vec<_>>(), ["seed", "no-copper", "both-in-hand", "both-in-pocket", "swapped"]);
    for s in starts {
        let (w, d, l, v) = (s["black_win"].as_f64().unwrap(), s["draw"].as_f64().unwrap(), s["white_win"].as_f64().unwrap(), s["value"].as_f64().unwrap());
        assert!((w + d + l - 1.0).abs() < 1e-4 && (v - (w - l)).abs() < 1e-5, "{s}");
    }
    // The file is kept on a second call (resumable loop).
    let before = std::fs::read(rd.start_values(1)).unwrap();
    pipeline::stages::write_start_values(&rd, &cfg, 1).unwrap();
    assert_eq!(std::fs::read(rd.start_values(1)).unwrap(), before);

    let dir = tmp.path().join("study");
    let mut c = tiny(&dir, 2);
    c.tiers = (1..=2).map(|g| format!("checkpoint:{},sims=2,name=gen{g}", rd.model(g).display())).collect();
    c.starts = vec!["seed".into(), "swapped".into()];
    c.max_plies = 24;
    c.run_dir = Some(run.clone());
    let rep = run_study(&c, &quiet()).unwrap();
    assert_eq!(rep.cells.len(), 4);
    for cell in &rep.cells {
        let n = cell.net.expect("a checkpoint tier has a view");
        assert!((n.black_win + n.draw + n.white_win - 1.0).abs() < 1e-4);
        assert!((n.value - (n.black_win - n.white_win)).abs() < 1e-5);
        assert_eq!(cell.stats.games, 2);
    }
    assert_eq!(rep.generations.len(), 2);
    assert_eq!(rep.tiers[0].noise, Some(1.0), "search tiers take the default Gumbel scale");
    for f in ["plots/start-values.svg", "plots/black-score-by-generation.svg", "start-values.csv"] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    assert_eq!(std::fs::read_to_string(dir.join("start-values.csv")).unwrap().lines().count(), 1 + 2 * 5);
    let csv = std::fs::read_to_string(dir.join("cells.csv")).unwrap();
    assert!(csv.lines().skip(1).all(|l| !l.ends_with(",,,,")), "net columns filled:\n{csv}");

    // The first tier's network judged every game of every tier at ply 0 (the start and
    // the first move); the values are kept beside the results.
    let (model, values) = balance::phasevalues::read(&dir).unwrap().expect("phase-values.jsonl");
    assert_eq!(model, rd.model(1).display().to_string());
    assert_eq!(values.len(), 8);
    for cell in &rep.cells {
        let at_start = &cell.game_stats.value[0];
        assert_eq!((at_start.ply, at_start.games), (0, 2), "{} {}", cell.tier, cell.start);
        assert!(at_start.mean.abs() <= 1.0);
    }
    assert!(dir.join("plots/value-by-ply.svg").is_file());
    let games_csv = std::fs::read_to_string(dir.join("games.csv")).unwrap();
    assert!(games_csv.lines().next().unwrap().contains(",value_0_games,value_0,"));
}

/// A worker of a study played elsewhere (`copper balance --store`) is handed the study and
/// its games; it plays them in the order the coordinator counts them in (the todo order,
/// a game of every cell in turn), so that results come in as they are counted.
#[test]
fn a_remote_studys_workers_play_in_the_order_the_coordinator_counts() {
    use arena::runner::{Remote, RemoteWork};
    use std::sync::{atomic::AtomicBool, Arc, Mutex};
    let tmp = tempfile::tempdir().unwrap();
    // (the todo ids, the ids in the order a worker plays them)
    type Orders = Option<(Vec<u64>, Vec<u64>)>;
    let seen: Arc<Mutex<Orders>> = Arc::default();
    let seen2 = seen.clone();
    let remote = Remote(Arc::new(move |work: &RemoteWork<'_>, _stop: &AtomicBool, _on_result: &(dyn Fn(arena::runner::JobResult) + Sync)| {
        let study: balance::study::RemoteStudy = serde_json::from_value(work.spec.clone()).map_err(|e| e.to_string())?;
        let worker_order = balance::study::Prepared::new(&study).map_err(|e| e.to_string())?.job_ids();
        *seen2.lock().unwrap() = Some((work.todo.iter().map(|j| j.id).collect(), worker_order));
        Err("stopped here".to_string())
    }));
    let opts = RunOptions { remote: Some(remote), ..quiet() };
    assert!(run_study(&tiny(&tmp.path().join("study"), 3), &opts).is_err());
    let (todo, worker_order) = seen.lock().unwrap().clone().unwrap();
    assert_eq!(todo.len(), 12);
    assert_eq!(worker_order, todo);
    // A game of every cell in turn, not one cell after another.
    assert_eq!(todo[..4].iter().map(|id| id % 1_000_000).collect::<Vec<_>>(), vec![0; 4]);
}
