//! Every relative link in the repository's Markdown resolves: the file exists and, where the
//! link names a section (`FILE.md#anchor` or `#anchor`), a heading of that file makes that
//! anchor as GitHub does (lower case; letters, digits, `-` and `_` kept, spaces to `-`,
//! everything else dropped; a repeated heading gets `-1`, `-2`, …). The docs cite each
//! other by section, and moving a section to an archive must not leave a dead link behind.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// Markdown files under `dir`, skipping hidden folders, build output and generated runs.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !(name.starts_with('.') || name == "target" || name == "data" || name == "node_modules") {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// GitHub's anchor for a heading's text.
fn slug(heading: &str) -> String {
    heading.trim().to_lowercase().chars().filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' ')).map(|c| if c == ' ' { '-' } else { c }).collect()
}

/// The text a reader sees of a heading: link targets, code ticks and emphasis dropped.
fn visible_text(heading: &str) -> String {
    let mut out = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](").and_then(|mid| after[mid..].find(')').map(|close| (mid, mid + close))) {
            Some((mid, close)) => {
                out.push_str(&after[..mid]);
                rest = &after[close + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.replace(['`', '*'], "")
}

/// Lines outside fenced code blocks, with their 1-based numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut in_code = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            out.push((i + 1, line));
        }
    }
    out
}

fn anchors(text: &str) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = HashSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&visible_text(&line[hashes..]));
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 { base.clone() } else { format!("{base}-{n}") });
        *n += 1;
    }
    out
}

/// Targets of inline links `[text](target)` on a line.
fn link_targets(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let end = after.find(|c: char| c == ')' || c.is_whitespace()).unwrap_or(after.len());
        out.push(&after[..end]);
        rest = &after[end..];
    }
    out
}

fn is_external(target: &str) -> bool {
    target.split_once(':').is_some_and(|(scheme, _)| !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphabetic()))
}

#[test]
fn slugs_follow_github() {
    // Expected values written from GitHub's rendering of these headings.
    assert_eq!(slug(&visible_text("A soup of the continuations (2026-11-30, night)")), "a-soup-of-the-continuations-2026-11-30-night");
    assert_eq!(
        slug(&visible_text("Minishogi (`configs/quick.toml`, 256 games a generation) with the mate check")),
        "minishogi-configsquicktoml-256-games-a-generation-with-the-mate-check"
    );
    assert_eq!(slug(&visible_text("Standard shogi: within 4 CPU-hours")), "standard-shogi-within-4-cpu-hours");
    assert_eq!(slug(&visible_text("The [README](../README.md)'s run")), "the-readmes-run");
    let text = "# A\n```\n# not a heading\n```\n## A\n#B\n";
    let found = anchors(text);
    assert_eq!(found, HashSet::from(["a".to_string(), "a-1".to_string()]));
    assert_eq!(link_targets("see [x](a.md#b) and [y](https://e.org) [z](c.md)"), ["a.md#b", "https://e.org", "c.md"]);
    assert!(is_external("https://example.org") && !is_external("docs/A.md#x"));
}

#[test]
fn every_relative_link_resolves() {
    // Canonical, so that the files found under it match a link's canonical target.
    let root = workspace_root().canonicalize().unwrap();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(files.len() > 10, "found only {} Markdown files under {}", files.len(), root.display());
    let texts: HashMap<PathBuf, String> = files.iter().map(|f| (f.clone(), fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display())))).collect();
    // Every Markdown file's anchors, keyed as `texts` is.
    let anchors_of: HashMap<&PathBuf, HashSet<String>> = texts.iter().map(|(f, t)| (f, anchors(t))).collect();
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        for (line_no, line) in prose_lines(&texts[file]) {
            for target in link_targets(line) {
                if target.is_empty() || is_external(target) {
                    continue;
                }
                checked += 1;
                let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
                let target_file = if path.is_empty() { file.clone() } else { file.parent().unwrap().join(path) };
                let place = format!("{}:{line_no}", file.strip_prefix(&root).unwrap().display());
                if !target_file.exists() {
                    broken.push(format!("{place}: no file {target}"));
                    continue;
                }
                if fragment.is_empty() || !path.is_empty() && !path.ends_with(".md") {
                    continue;
                }
                let known = anchors_of.get(&target_file.canonicalize().unwrap());
                if !known.is_some_and(|k| k.contains(fragment)) {
                    let in_file = if path.is_empty() { "this file" } else { path };
                    broken.push(format!("{place}: no section #{fragment} in {in_file}"));
                }
            }
        }
    }
    assert!(checked > 100, "checked only {checked} links");
    assert!(broken.is_empty(), "{} broken links:\n{}", broken.len(), broken.join("\n"));
}
