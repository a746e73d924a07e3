//! The crate keeps the layers its `lib.rs` promises: every module of `src/` uses only
//! modules listed before its own in the numbered layer list of `lib.rs`'s documentation,
//! so no import cycle can come back unnoticed. Paths are read from the source text:
//! `use` trees and `crate::`/`super::`/`self::` paths (re-exports of `lib.rs` resolved to
//! the module that defines them); comments and `#[cfg(test)]` code are ignored, and a
//! child module named without `self::` is seen only in `use` trees.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`variant::spec`, `""` for the crate root) → source text.
fn sources() -> BTreeMap<String, String> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                walk(&path, &[prefix, &[name]].concat(), out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = if name == "mod" || name == "lib" { prefix.to_vec() } else { [prefix, &[name]].concat() };
                out.insert(module.join("::"), std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &[], &mut out);
    out
}

/// The layer of each module, from the lines `//! N. `a`, `b` — why` of `lib.rs`.
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for line in lib.lines().filter_map(|l| l.strip_prefix("//! ")) {
        let Some((number, rest)) = line.split_once(". ") else { continue };
        let Ok(layer) = number.parse::<usize>() else { continue };
        let names = rest.split(" — ").next().unwrap();
        for name in names.split(',').map(|n| n.trim().trim_matches('`')) {
            assert!(out.insert(name.to_string(), layer).is_none(), "module {name} is listed twice");
        }
    }
    out
}

/// Code without comments, and without what follows `#[cfg(test)]` (test modules end files).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap();
    text.lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n")
}

/// Every path of a `use` tree, e.g. `crate::{a::{b, c}, d}` → `crate::a::b`, `crate::a::c`, `crate::d`.
fn expand(tree: &str) -> Vec<String> {
    // `x as y` → `x@y`, then no whitespace.
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ").replace(" as ", "@").replace(' ', "");
    let Some(open) = tree.find('{') else {
        let path = tree.split('@').next().unwrap();
        return vec![path.trim_end_matches("::self").to_string()];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.len() - 1];
    let (mut depth, mut start, mut parts) = (0, 0, Vec::new());
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).flat_map(|p| expand(&format!("{prefix}{p}"))).collect()
}

/// Every path the code names: `use` trees expanded, then `crate::`/`super::`/`self::` paths elsewhere.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = String::new();
    let mut text = code;
    while let Some(at) = text.find("use ") {
        let starts_word = at == 0 || !text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let end = text[at..].find(';').map(|e| at + e).unwrap_or(text.len());
        if starts_word {
            rest.push_str(&text[..at]);
            out.extend(expand(&text[at + 4..end]));
            text = &text[(end + 1).min(text.len())..];
        } else {
            rest.push_str(&text[..at + 4]);
            text = &text[at + 4..];
        }
    }
    rest.push_str(text);
    for prefix in ["crate::", "super::", "self::"] {
        for (at, _) in rest.match_indices(prefix) {
            if rest[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let path: String = rest[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
            out.push(path.trim_end_matches(':').to_string());
        }
    }
    out
}

/// The module a path leads into, from `module`; `None` for other crates.
fn resolve(path: &str, module: &str, modules: &BTreeSet<String>, reexports: &BTreeMap<String, String>) -> Option<String> {
    let mut segments: Vec<&str> = path.split("::").collect();
    let mut at: Vec<&str> = match segments[0] {
        "crate" => vec![],
        "self" => module.split("::").collect(),
        "super" => {
            let mut m: Vec<&str> = module.split("::").collect();
            m.pop();
            m
        }
        // A child module, relative to this one; else another crate (std, serde, …).
        first => {
            let child = if module.is_empty() { first.to_string() } else { format!("{module}::{first}") };
            if !modules.contains(&child) {
                return None;
            }
            segments.insert(0, "self");
            module.split("::").filter(|s| !s.is_empty()).collect()
        }
    };
    for segment in &segments[1..] {
        let deeper = [at.as_slice(), &[*segment]].concat().join("::");
        if modules.contains(&deeper) {
            at.push(segment);
        } else if at.is_empty() {
            let found = reexports.get(*segment).unwrap_or_else(|| panic!("{module}: cannot resolve {path}"));
            return Some(found.clone());
        } else {
            break;
        }
    }
    Some(at.join("::"))
}

#[test]
fn every_module_uses_only_lower_layers() {
    let sources = sources();
    let lib = &sources[""];
    let layer = layers(lib);
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    let listed: BTreeSet<String> = layer.keys().cloned().collect();
    let unlisted: Vec<_> = modules.iter().filter(|m| !m.is_empty() && !listed.contains(*m)).collect();
    let missing: Vec<_> = listed.iter().filter(|m| !modules.contains(*m)).collect();
    assert!(unlisted.is_empty() && missing.is_empty(), "lib.rs's layer list and src/ differ: unlisted {unlisted:?}, no such module {missing:?}");

    // `pub use module::{Name, …};` in lib.rs: which module each crate-level name comes from.
    let mut reexports = BTreeMap::new();
    for path in paths(&code(lib)) {
        if let Some((module, name)) = path.rsplit_once("::") {
            if modules.contains(module) {
                reexports.insert(name.to_string(), module.to_string());
            }
        }
    }
    for module in modules.iter().filter(|m| !m.is_empty()) {
        reexports.insert(module.clone(), module.clone());
    }

    let mut violations = Vec::new();
    for (module, text) in sources.iter().filter(|(m, _)| !m.is_empty()) {
        for path in paths(&code(text)) {
            let Some(used) = resolve(&path, module, &modules, &reexports) else { continue };
            if used == *module || used.is_empty() {
                continue;
            }
            if layer[&used] >= layer[module] {
                violations.push(format!("{module} (layer {}) uses {used} (layer {}) via {path}", layer[module], layer[&used]));
            }
        }
    }
    assert!(violations.is_empty(), "modules using modules at or above their own layer:\n{}", violations.join("\n"));
}

#[test]
fn use_trees_expand() {
    assert_eq!(expand("crate::{a::{b, c as d}, e::self}"), ["crate::a::b", "crate::a::c", "crate::e"]);
    assert_eq!(expand("super::spec::Resolved"), ["super::spec::Resolved"]);
}
