//! The training loop end to end, as a user runs it: `copper train` on the quick preset.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Games per generation in these tests: the quick preset with 64 games (the preset
/// itself plays more; these tests pin what they count on).
const GAMES: usize = 64;

/// The quick preset with `GAMES` games per generation, without its teacher stage and
/// leaf mix (these tests are about the self-play loop itself), written beside the run.
fn config(run_dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/quick.toml")).unwrap();
    let mut cfg: toml::Table = toml::from_str(&text).unwrap();
    cfg["selfplay"]["games"] = (GAMES as i64).into();
    cfg["selfplay"]["qmix"] = 0.0.into();
    cfg.remove("teacher");
    let path = run_dir.with_extension("toml");
    std::fs::write(&path, toml::to_string(&cfg).unwrap()).unwrap();
    path
}

fn train(run_dir: &Path, generations: u32) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_copper"));
    c.args(["train", "--quiet", "--config"]).arg(config(run_dir)).arg("--run-dir").arg(run_dir).args(["--generations", &generations.to_string()]);
    c
}

fn eval(run_dir: &Path, g: u32) -> serde_json::Value {
    let text = std::fs::read_to_string(run_dir.join(format!("eval/gen-{g:04}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Score of the new model with its 95% interval, from an evaluation record.
fn score(m: &serde_json::Value) -> (f64, f64, u64) {
    let (w, d, l) = (m["wins"].as_f64().unwrap(), m["draws"].as_f64().unwrap(), m["losses"].as_f64().unwrap());
    let n = w + d + l;
    let s = (w + d / 2.0) / n;
    let var = (w * (1.0 - s).powi(2) + d * (0.5 - s).powi(2) + l * s.powi(2)) / (n - 1.0);
    (s, s - 1.96 * (var / n).sqrt(), n as u64)
}

#[test]
fn a_tiny_loop_learns_to_beat_the_uniform_prior_search() {
    // One thread: a seeded run is then reproducible, so this test cannot flake.
    let root = tempfile::tempdir().unwrap();
    let dir = tempfile::TempDir::new_in(root.path()).unwrap();
    let out = train(dir.path(), 3).args(["--threads", "1"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().filter(|l| l.starts_with("gen ")).count(), 3, "one summary line per generation: {stdout}");
    let (s, lower, n) = score(&eval(dir.path(), 3)["vs_uniform"]);
    assert!(n >= 40);
    // Significant: the whole 95% interval of the score is above one half.
    assert!(lower > 0.5, "score {s:.3} over {n} games, 95% lower bound {lower:.3}");
    for f in [
        "summary.tsv",
        "plots/losses.svg",
        "plots/evaluation.svg",
        "plots/value.svg",
        "plots/calibration.svg",
        "plots/endings.svg",
        "plots/policy.svg",
        "plots/time.svg",
        "selfplay/gen-0003/summary.json",
        "train/gen-0003.games.json",
        "models/gen-0003.manifest.json",
        "config.toml",
        "models/gen-0003/model.json",
        "index.html",
    ] {
        assert!(dir.path().join(f).exists(), "{f} missing");
    }
}

/// The shard files under `dir` (a generation's games are in one folder per worker).
fn shard_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(shard_files(&p));
        } else if p.extension().is_some_and(|x| x == "shard") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn shards(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    (1..=2).flat_map(|g| shard_files(&dir.join(format!("selfplay/gen-{g:04}")))).map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect()
}

/// Starts the loop and SIGKILLs it as soon as `ready()` holds. Panics if the loop ends
/// by itself first or `ready()` never holds: the kill must be real.
fn kill_when(run_dir: &Path, ready: impl Fn() -> bool) {
    let mut child = train(run_dir, 2).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let t = Instant::now();
    while !ready() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the loop exited ({status}) before the kill");
        }
        assert!(t.elapsed() < Duration::from_secs(300), "the kill condition never held");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
}

#[test]
fn a_loop_killed_mid_generation_resumes_and_loses_no_finished_game() {
    let root = tempfile::tempdir().unwrap();
    let dir = tempfile::TempDir::new_in(root.path()).unwrap();
    let run = dir.path();
    // Kill during generation 1's self-play: some of its games are done, not all, and
    // training has not started.
    kill_when(run, || shards(run).len() >= 20);
    let before = shards(run);
    assert!(before.len() >= 20 && before.len() < GAMES, "killed mid-self-play with {} of {GAMES} games", before.len());
    assert!(!run.join("trainer.ckpt").exists() && !run.join("models/gen-0001").exists(), "the kill landed after self-play");
    // Kill again once training has checkpointed, before generation 1's evaluation ends.
    kill_when(run, || run.join("trainer.ckpt").exists());
    assert!(!run.join("eval/gen-0001.json").exists(), "the second kill landed after generation 1");
    assert_eq!(shards(run).len(), GAMES, "generation 1's self-play finished on the resumed run");
    let out = train(run, 2).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let after = shards(run);
    for (path, bytes) in &before {
        let kept = after.iter().find(|(p, _)| p == path).unwrap_or_else(|| panic!("{} lost", path.display()));
        assert!(&kept.1 == bytes, "{} rewritten", path.display());
    }
    assert_eq!(after.len(), 2 * GAMES, "both generations complete");
    assert!(run.join("eval/gen-0002.json").exists());
    // Generation 1's training report has every step, those before the second kill
    // included (they come from the checkpoint): what an uninterrupted run reports.
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(run.join("train/gen-0001.json")).unwrap()).unwrap();
    let steps: Vec<u64> = report["losses"].as_array().unwrap().iter().map(|l| l["step"].as_u64().unwrap()).collect();
    assert_eq!(report["steps"].as_u64().unwrap(), steps.len() as u64);
    assert_eq!(steps, (1..=steps.len() as u64).collect::<Vec<_>>(), "every step of generation 1, once");
    // No temporary files left behind by the killed writers are mistaken for shards.
    for (p, _) in &after {
        records::read_shard(p).unwrap();
    }
}

/// The quick preset with a small teacher stage, as a user adds one.
fn teacher_config(run_dir: &Path) -> PathBuf {
    let path = config(run_dir);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(
        "\n[teacher]\ngames = 12\ndepth = 1\ntemperature = 100.0\nmargin = 600\nrandom_plies = 4\nsample_plies = 6\nvalue_share = 1.0\nsteps = 20\nwindow_generations = 1\n",
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_teacher_stage_makes_generation_zero_and_its_games_train_generation_one() {
    let root = tempfile::tempdir().unwrap();
    let dir = tempfile::TempDir::new_in(root.path()).unwrap();
    let cfg = teacher_config(dir.path());
    let run = |gens: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_copper"))
            .args(["train", "--quiet", "--config"])
            .arg(&cfg)
            .arg("--run-dir")
            .arg(dir.path())
            .args(["--generations", gens, "--threads", "1"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let stdout = run("1");
    assert!(stdout.contains("teacher: 12 games (alpha-beta depth 1)"), "{stdout}");
    let d = dir.path();
    assert!(d.join("models/gen-0000/model.json").exists(), "generation 0 is the teacher's model");
    let teacher_shards =
        std::fs::read_dir(d.join("selfplay/gen-0000")).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "shard")).count();
    assert_eq!(teacher_shards, 12);
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("teacher/summary.json")).unwrap()).unwrap();
    assert!(summary["fit"]["k"].as_f64().unwrap() > 0.0);
    // Generation 1 played against generation 0 (the teacher's model, not the uniform
    // search), and its training window held the teacher's positions beside its own.
    let e = eval(d, 1);
    assert_eq!(e["vs_previous"]["opponent"], "gen-0", "{e}");
    // Records in a generation's shards.
    let positions =
        |g: u32| -> u64 { shard_files(&d.join(format!("selfplay/gen-{g:04}"))).iter().map(|p| records::read_shard(p).unwrap().records.len() as u64).sum() };
    let train = |g: u32| -> serde_json::Value { serde_json::from_slice(&std::fs::read(d.join(format!("train/gen-{g:04}.json"))).unwrap()).unwrap() };
    let samples = |g: u32| train(g)["train_samples"].as_u64().unwrap() + train(g)["validation_samples"].as_u64().unwrap();
    assert_eq!(samples(0), summary["positions"].as_u64().unwrap());
    assert_eq!(samples(0), positions(0));
    assert_eq!(samples(1), samples(0) + positions(1));
    // Past teacher.window_generations the window is self-play's alone; a second
    // invocation resumes without replaying the stage.
    let stdout = run("2");
    assert!(!stdout.contains("teacher:"), "the stage is done: {stdout}");
    assert_eq!(samples(2), positions(1) + positions(2));
}

/// `--from-model --keep-teacher`: generation 0 is the given model, untrained, and the
/// teacher's games are played for generation 1's window; without the flag none are.
#[test]
fn a_run_from_a_model_keeps_the_teachers_games_only_when_asked() {
    let root = tempfile::tempdir().unwrap();
    let quick: toml::Table = toml::from_str(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/quick.toml")).unwrap()).unwrap();
    let (blocks, channels) = (quick["network"]["blocks"].as_integer().unwrap() as usize, quick["network"]["channels"].as_integer().unwrap() as usize);
    let start = root.path().join("start-model");
    neteval::save_random_model(rules::Variant::builtin("minishogi").unwrap(), &start, blocks, channels, 11).unwrap();
    let run = |dir: &Path, keep: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_copper"));
        c.args(["train", "--quiet", "--config"]).arg(teacher_config(dir)).arg("--run-dir").arg(dir).args(["--generations", "1", "--threads", "1"]);
        c.arg("--from-model").arg(&start);
        if keep {
            c.arg("--keep-teacher");
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let positions = |d: &Path, g: u32| -> u64 {
        shard_files(&d.join(format!("selfplay/gen-{g:04}"))).iter().map(|p| records::read_shard(p).unwrap().records.len() as u64).sum()
    };
    let samples = |d: &Path, g: u32| -> u64 {
        let t: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join(format!("train/gen-{g:04}.json"))).unwrap()).unwrap();
        t["train_samples"].as_u64().unwrap() + t["validation_samples"].as_u64().unwrap()
    };

    let kept = root.path().join("kept");
    let stdout = run(&kept, true);
    assert!(stdout.contains("teacher: 12 games"), "{stdout}");
    assert!(!stdout.contains("teacher training"), "generation 0 is not trained: {stdout}");
    assert!(!kept.join("train/gen-0000.json").exists());
    let v = rules::Variant::builtin("minishogi").unwrap();
    let wdl = |dir: &Path| neteval::load(dir, v).unwrap().wdl(&rules::Game::new(rules::Position::start(v), None));
    assert_eq!(wdl(&kept.join("models/gen-0000")), wdl(&start), "generation 0 is the given model");
    assert_ne!(wdl(&kept.join("models/gen-0001")), wdl(&start), "generation 1 trained");
    assert!(positions(&kept, 0) > 0);
    assert_eq!(samples(&kept, 1), positions(&kept, 0) + positions(&kept, 1), "generation 1 trained on the teacher's games and its own");
    // A second invocation resumes without replaying the games.
    assert!(!run(&kept, true).contains("teacher:"));

    let dropped = root.path().join("dropped");
    let stdout = run(&dropped, false);
    assert!(!stdout.contains("teacher:"), "{stdout}");
    assert_eq!(positions(&dropped, 0), 0);
    assert_eq!(samples(&dropped, 1), positions(&dropped, 1));
}

/// `training.reanalyse_fraction`: before generations 2 and 3 train, about that share of
/// the older games' positions (not the held-out games') is searched again by the newest
/// model; the copies keep every position, result and game of the originals and stand in
/// for them in the window, only the newest set is kept, and a second run redoes nothing.
/// With `reanalyse_keep` = ½ a new policy target keeps half of the old one (a quarter of
/// the original after the two reanalyses of generations 2 and 3).
#[test]
fn reanalysis_refreshes_the_older_positions_of_the_window() {
    let root = tempfile::tempdir().unwrap();
    let dir = tempfile::TempDir::new_in(root.path()).unwrap();
    let d = dir.path();
    let path = config(d);
    let mut cfg: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    cfg["selfplay"]["games"] = 16.into();
    cfg["training"].as_table_mut().unwrap().insert("reanalyse_fraction".into(), 0.5.into());
    cfg["training"].as_table_mut().unwrap().insert("reanalyse_keep".into(), 0.5.into());
    std::fs::write(&path, toml::to_string(&cfg).unwrap()).unwrap();
    let run = || {
        let out = Command::new(env!("CARGO_BIN_EXE_copper"))
            .args(["train", "--quiet", "--config"])
            .arg(&path)
            .arg("--run-dir")
            .arg(d)
            .args(["--generations", "3", "--threads", "1"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    run();
    let summary = |g: u32| -> serde_json::Value { serde_json::from_slice(&std::fs::read(d.join(format!("reanalysed/gen-{g:04}.json"))).unwrap()).unwrap() };
    assert!(!d.join("reanalysed/gen-0001.json").exists(), "generation 1's games were played by the newest model");
    let validation = cfg["training"]["validation_fraction"].as_float().unwrap() as f32;
    for g in [2, 3] {
        let s = summary(g);
        assert_eq!(s["model"], g - 1, "{s}");
        assert!(s["skipped"].as_array().unwrap().is_empty(), "{s}");
        // Half of the older generations' training positions (those of generation 1, and
        // at generation 3 of 2 as well), within a wide binomial band.
        let older: u64 = (1..g)
            .flat_map(|h| shard_files(&d.join(format!("selfplay/gen-{h:04}"))))
            .flat_map(|p| records::read_shard(&p).unwrap().records)
            .filter(|r| !trainer::data::is_validation_game(r.game_id, validation))
            .count() as u64;
        let n = s["positions"].as_u64().unwrap();
        assert!(n as f64 > 0.4 * older as f64 && (n as f64) < 0.6 * older as f64, "{n} of {older}: {s}");
        assert!(s["had_target"].as_u64().unwrap() <= n);
    }
    assert!(!d.join("reanalysed/gen-0002").exists(), "generation 2's copies were carried into 3's");
    // Generation 3's copies against their originals: the same games, positions and
    // results; the targets of at least a quarter of the positions replaced by a full
    // search's (a policy over the position's moves), the rest as before or as 2 left them.
    let copies = shard_files(&d.join("reanalysed/gen-0003"));
    assert!(!copies.is_empty());
    let (mut changed, mut total, mut kept) = (0, 0, 0);
    for copy in &copies {
        let original = d.join(copy.strip_prefix(d.join("reanalysed/gen-0003")).unwrap());
        let (a, b) = (records::read_shard(&original).unwrap(), records::read_shard(copy).unwrap());
        assert_eq!(a.header, b.header);
        assert!(a.header.generation < 3, "{}", copy.display());
        assert_eq!(a.records.len(), b.records.len());
        for (x, y) in a.records.iter().zip(&b.records) {
            assert_eq!((&x.sfen, x.ply, x.result, x.game_id, x.repetitions), (&y.sfen, y.ply, y.result, y.game_id, y.repetitions));
            total += 1;
            if (x.policy.clone(), x.search_value, x.full_search) != (y.policy.clone(), y.search_value, y.full_search) {
                changed += 1;
                assert!(!trainer::data::is_validation_game(x.game_id, validation), "a held-out game's targets changed");
                assert!(y.full_search && !y.policy.is_empty());
                assert!((y.policy.iter().map(|p| p.1).sum::<f32>() - 1.0).abs() < 1e-4);
                if x.full_search {
                    let share = |a: u32| y.policy.iter().find(|q| q.0 == a).map_or(0.0, |q| q.1);
                    assert!(x.policy.iter().all(|&(a, p)| share(a) >= 0.25 * p - 1e-6), "{:?} lost its kept share in {:?}", x.policy, y.policy);
                    kept += 1;
                }
            }
        }
    }
    assert!(changed * 4 >= total, "{changed} of {total} positions changed");
    assert!(kept > 0, "no reanalysed position had an old target to keep");
    // The window of generation 3 reads the copies in place of the originals.
    let window: Vec<PathBuf> = (1..=3).flat_map(|h| shard_files(&d.join(format!("selfplay/gen-{h:04}")))).collect();
    let cfg3 = pipeline::RunConfig::load(&d.join("config.toml")).unwrap();
    let stood_in =
        pipeline::reanalyse::reanalyse_window(&pipeline::RunDir(d.to_path_buf()), &cfg3, 3, window.clone(), Path::new("/nonexistent"), false).unwrap();
    assert_eq!(stood_in.iter().filter(|p| p.starts_with(d.join("reanalysed/gen-0003"))).count(), copies.len());
    assert_eq!(stood_in.len(), window.len());
    // A second run of the finished loop searches nothing again.
    let before = std::fs::read(d.join("reanalysed/gen-0003.json")).unwrap();
    run();
    assert_eq!(std::fs::read(d.join("reanalysed/gen-0003.json")).unwrap(), before);
}
