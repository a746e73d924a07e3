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

/// Inside `pipeline`, modules import only downward too: the stages (teacher, self-play,
/// training, evaluation) below the store protocol, `copper distill` (a tool over the
/// training stage) and reanalysis (the trainer's searches of stored positions), the protocol below the worker and
/// trainer roles (which do not import each other), and `copper train`'s loop, which
/// composes the two roles, on top. A `crate::` or `super::` path in a module's code (not
/// its comments) to a module on its floor or above fails, naming both.
#[test]
fn pipeline_modules_import_only_downward() {
    const MODULES: &[&[&str]] = &[
        &["config"],
        &["evaluation"],
        &["run_dir"],
        &["report", "ladder"],
        &["stages"],
        &["fleet/protocol", "distill", "reanalyse"],
        &["fleet/worker", "fleet/trainer"],
        &["fleet"],
        &["run_loop"],
        &["lib"],
    ];
    let floor = |m: &str| MODULES.iter().position(|f| f.contains(&m));
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("pipeline/src");
    let mut files: Vec<(String, String)> = Vec::new();
    for dir in [src.clone(), src.join("fleet")] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "rs") {
                let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
                let name = match (dir == src, stem.as_str()) {
                    (true, s) => s.to_string(),
                    (false, "mod") => "fleet".to_string(),
                    (false, s) => format!("fleet/{s}"),
                };
                files.push((name, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    let mut problems = Vec::new();
    let mut seen_edges = 0;
    for (module, text) in &files {
        let Some(own) = floor(module) else {
            problems.push(format!("pipeline/src module `{module}` is not in MODULES (tests/tests/crate_layers.rs)"));
            continue;
        };
        let in_fleet = module.starts_with("fleet/");
        // Test modules (`mod tests`) may reach anywhere in their own file.
        let code = text.split("#[cfg(test)]").next().unwrap();
        for line in code.lines().map(str::trim).filter(|l| !l.starts_with("//")) {
            let mut targets = Vec::new();
            for (prefix, base) in [("crate::", ""), ("super::", if in_fleet { "fleet/" } else { "" })] {
                for (i, _) in line.match_indices(prefix) {
                    let rest = &line[i + prefix.len()..];
                    let names: Vec<&str> = match rest.strip_prefix('{') {
                        Some(group) => group.split('}').next().unwrap().split(',').map(|n| n.trim().split("::").next().unwrap()).collect(),
                        None => vec![rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next().unwrap()],
                    };
                    for n in names.into_iter().filter(|n| !n.is_empty()) {
                        targets.push(format!("{base}{n}"));
                    }
                }
            }
            for t in targets {
                // `crate::fleet::x` and `super::x` items of the fleet's own mod.rs count as `fleet`.
                let Some(tf) = floor(&t) else { continue };
                seen_edges += 1;
                if tf >= own && t != *module {
                    problems.push(format!("pipeline `{module}` (floor {}) imports `{t}` (floor {}): {line}", own + 1, tf + 1));
                }
            }
        }
    }
    assert!(files.len() >= 12 && seen_edges >= 15, "the reader found {} modules and {seen_edges} imports", files.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
