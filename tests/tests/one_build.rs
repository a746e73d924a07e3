//! The README's two commands — `cargo run --release -p cli` (the training loop) and
//! `cargo test --workspace --release` (the suite) — must share one build. Cargo compiles a
//! crate again whenever the features it is built with differ, and `cargo test --workspace`
//! unifies the features its dev-dependencies turn on, which `cargo run -p cli` does not see.
//! `cli/Cargo.toml` names those features so the two resolve alike; this test fails, naming
//! the crate, when a new dependency makes them drift apart again (which would cost a
//! newcomer a second ten-minute compile of burn).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Package "name version" → its enabled features, as `cargo tree` resolves them.
fn resolved_features(args: &[&str]) -> BTreeMap<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let output =
        Command::new(cargo).current_dir(root).args(["tree", "--locked", "--prefix", "none", "-f", "{p}|{f}"]).args(args).output().expect("cargo tree runs");
    assert!(output.status.success(), "cargo tree {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| {
            let (package, features) = line.split_once('|')?;
            // "name v1.2.3 (path) (*)" → "name v1.2.3"
            let mut words = package.split_whitespace();
            let key = format!("{} {}", words.next()?, words.next()?);
            Some((key, features.trim_end_matches(" (*)").trim().to_string()))
        })
        .collect()
}

#[test]
fn the_loop_and_the_test_suite_resolve_the_same_features() {
    let cli = resolved_features(&["-p", "cli", "-e", "normal,build"]);
    let workspace = resolved_features(&["--workspace", "-e", "normal,build,dev"]);
    assert!(cli.keys().any(|package| package.starts_with("burn ")), "burn is in the CLI's tree");
    let drifted: Vec<String> = cli
        .iter()
        .filter_map(|(package, features)| {
            let unified = workspace.get(package)?;
            (unified != features).then(|| format!("{package}: cli [{features}] vs tests [{unified}]"))
        })
        .collect();
    assert!(drifted.is_empty(), "these crates would compile twice (name the missing features in cli/Cargo.toml):\n{}", drifted.join("\n"));
}
