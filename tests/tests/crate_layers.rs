//! The workspace's crates depend only downward, floor by floor (shared/DESIGN.md,
//! "Layers"; the README's crate map lists them in this order). Each member's
//! `[dependencies]` is read from its `Cargo.toml`; a dependency on a crate of the same or
//! a higher floor fails, naming both, and so does a member missing from the list.

use std::path::Path;

/// Lowest first; crates on one floor do not depend on each other.
const FLOORS: &[&[&str]] = &[
    &["rules", "records", "store", "model"],
    &["search", "encoding", "rules-reference", "usi", "gamerecords"],
    &["neteval", "selfplay", "trainer"],
    &["players"],
    &["arena"],
    &["teacher", "tune"],
    &["pipeline"],
    &["balance"],
    // Tournaments and studies over a store: the worker's and the coordinator's side.
    &["dispatch"],
    // A leaf that reads what the layers below write; positions come from `rules`.
    &["viewer"],
    // The board in the browser: plays players, draws with the viewer's board.
    &["play"],
    &["cli", "fuzz"],
    &["tests"],
];

fn floor_of(name: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&name))
}

/// Workspace crates named in the `[dependencies]` section of a manifest.
fn dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
            continue;
        }
        if !in_deps || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name = line.split(['.', '=', ' ']).next().unwrap_or_default();
        if floor_of(name).is_some() {
            out.push(name.to_string());
        }
    }
    out
}

#[test]
fn crates_depend_only_on_lower_floors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members_line = workspace.lines().find(|l| l.trim_start().starts_with("members")).expect("a members list");
    let members: Vec<&str> = members_line.split('"').skip(1).step_by(2).collect();
    let mut problems = Vec::new();
    for m in &members {
        let Some(floor) = floor_of(m) else {
            problems.push(format!("{m} is not in FLOORS (tests/tests/crate_layers.rs)"));
            continue;
        };
        let manifest = std::fs::read_to_string(root.join(m).join("Cargo.toml")).unwrap();
        for d in dependencies(&manifest) {
            let df = floor_of(&d).expect("filtered");
            if df >= floor {
                problems.push(format!("{m} (floor {}) depends on {d} (floor {})", floor + 1, df + 1));
            }
        }
    }
    assert!(members.contains(&"viewer") && members.len() > 10, "{members:?}");
    // The reader sees the dependencies (else the check above proves nothing).
    let viewer = dependencies(&std::fs::read_to_string(root.join("viewer/Cargo.toml")).unwrap());
    assert!(viewer.contains(&"balance".to_string()) && viewer.contains(&"rules".to_string()), "{viewer:?}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
