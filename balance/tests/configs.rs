//! Every shipped configuration loads: run configs through `pipeline::RunConfig::load`
//! (which checks `selfplay.starts` against the variant's start family), study files
//! through `balance::StudyConfig`.

use std::path::{Path, PathBuf};

fn configs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs")
}

#[test]
fn every_config_file_loads() {
    let mut runs = 0;
    let mut studies = 0;
    for entry in std::fs::read_dir(configs()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let doc: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if doc.contains_key("tiers") {
            let c = balance::StudyConfig::load(&path).unwrap();
            c.validate().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            studies += 1;
        } else if doc.contains_key("run_dir") {
            pipeline::RunConfig::load(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
            runs += 1;
        }
    }
    assert!(runs >= 2 && studies >= 1, "{runs} run configs, {studies} studies");
}

#[test]
fn the_start_family_preset_trains_on_every_start() {
    let c = pipeline::RunConfig::load(&configs().join("start-family.toml")).unwrap();
    let family: Vec<String> = c.variant().unwrap().start_family().into_iter().map(|(n, _)| n).collect();
    assert_eq!(c.selfplay.starts, family);
    assert_eq!(c.run_dir, Path::new("data/runs/pocket-copper-starts"));
    assert_eq!(c.selfplay.games % family.len() as u32, 0, "every start gets as many games");
    // Apart from its purpose, it is the default run.
    let d = pipeline::RunConfig::load(&configs().join("default.toml")).unwrap();
    assert_eq!((c.network.clone(), c.training.clone(), c.evaluation.clone(), c.teacher.clone()), (d.network, d.training, d.evaluation, d.teacher));
    // As many games a generation as the default, to within one round of the starts.
    assert!(c.selfplay.games.abs_diff(d.selfplay.games) < family.len() as u32, "{} games against the default's {}", c.selfplay.games, d.selfplay.games);
}

#[test]
fn unknown_selfplay_starts_are_refused_at_load() {
    let text = std::fs::read_to_string(configs().join("default.toml")).unwrap();
    assert!(text.contains("\nstarts = []"));
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.toml");
    std::fs::write(&path, text.replace("\nstarts = []", "\nstarts = [\"seed\", \"nowhere\"]")).unwrap();
    let e = format!("{:#}", pipeline::RunConfig::load(&path).unwrap_err());
    assert!(
        e.contains("bad.toml")
            && e.contains("selfplay.starts")
            && e.contains("'nowhere'")
            && e.contains("seed, no-copper, both-in-hand, both-in-pocket, swapped"),
        "{e}"
    );
    std::fs::write(&path, text.replace("\nstarts = []", "\nstarts = [\"seed\", \"swapped\"]")).unwrap();
    assert!(pipeline::RunConfig::load(&path).is_ok());
}

#[test]
fn a_checkpoint_tier_without_a_directory_is_the_shipped_model() {
    let c = balance::StudyConfig::default();
    let tier = c.tier_from_text("checkpoint,sims=8,name=shipped").unwrap();
    let dir = tier.checkpoint().expect("a network tier");
    assert!(dir.ends_with("models/pocket-copper"), "{}", dir.display());
    assert!(dir.join("model.json").exists(), "the study's network view reads the model from {}", dir.display());
    let own = c.tier_from_text("checkpoint:some/run/models/gen-0003,sims=8").unwrap();
    assert_eq!(own.checkpoint(), Some(Path::new("some/run/models/gen-0003")));
}
