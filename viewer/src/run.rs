//! The page of a training run directory (`config.toml`, `selfplay/`, `eval/`): the loop's
//! summary (`summary.tsv`) and plots (`plots/*.svg`, inline), the ladder
//! (`ladder/ladder.tsv`, `ladder/plots/*.svg`), and per generation a sample of its
//! self-play games (from their shards) and of its evaluation games (from the arena
//! directories `eval/gen-N/<opponent>/`).

use crate::error::{invalid, io_err, ViewError};
use crate::game::GameView;
use crate::page::{inline_svg, Cell, PageData, Section};
use crate::tournament::add_games;
use selfplay::GameLine;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Subdirectories of `dir` named `gen-NNNN`, by generation.
fn generations(dir: &Path) -> Vec<(u32, PathBuf)> {
    let mut out: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| Some((e.file_name().to_str()?.strip_prefix("gen-")?.parse().ok()?, e.path())))
        .collect();
    out.sort();
    out
}

/// Files of `dir` ending in `ext`, sorted by name.
fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == ext)).collect();
    out.sort();
    out
}

/// A generation's self-play shards: in `gen-N/` itself (runs written before the fleet) or
/// in its workers' folders `gen-N/<worker>/` (the fleet, and so `copper train`), in path
/// order.
fn selfplay_shards(dir: &Path) -> Vec<PathBuf> {
    let mut shards = files(dir, "shard");
    let mut workers: Vec<PathBuf> = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    workers.sort();
    for w in workers {
        shards.extend(files(&w, "shard"));
    }
    shards
}

/// How a game ended: from the generation's `games.jsonl` (runs written before the fleet) or
/// the line a worker keeps beside the game's shard (`game-N.json`); empty when neither says.
fn ending_of(logged: &BTreeMap<u64, String>, shard: &Path, id: u64) -> String {
    logged.get(&id).cloned().unwrap_or_else(|| {
        std::fs::read(shard.with_extension("json")).ok().and_then(|b| serde_json::from_slice::<GameLine>(&b).ok()).map(|l| l.ending).unwrap_or_default()
    })
}

/// A TSV file as a table (the first line names the columns); `None` if missing.
fn tsv_table(path: &Path, title: &str, link: impl Fn(&str) -> Vec<usize>) -> Result<Option<Section>, ViewError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(path)(e)),
    };
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(head) = lines.next() else { return Ok(None) };
    let rows = lines.map(|l| l.split('\t').enumerate().map(|(i, c)| if i == 0 { Cell::games(c, link(c)) } else { Cell::text(c) }).collect()).collect();
    Ok(Some(Section::Table { title: title.into(), note: format!("{}", path.display()), columns: head.split('\t').map(String::from).collect(), rows }))
}

fn svgs(dir: &Path, prefix: &str, out: &mut Vec<Section>) {
    for path in files(dir, "svg") {
        if let Ok(text) = std::fs::read_to_string(&path) {
            let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            out.push(Section::Svg { title: format!("{prefix}{name}"), svg: inline_svg(&text) });
        }
    }
}

/// The page of a run directory, with `sample` self-play games and `sample` evaluation
/// games per opponent of every generation.
pub fn page(dir: &Path, sample: usize) -> Result<PageData, ViewError> {
    let config_path = dir.join("config.toml");
    let cfg = pipeline::RunConfig::load(&config_path).map_err(|e| invalid(&config_path, format!("{e:#}")))?;
    let variant = cfg.variant().map_err(|e| invalid(&config_path, format!("{e:#}")))?;
    let title = format!("Training run {} — {}", dir.display(), variant.title);
    let mut page = PageData::new("run", title, dir);
    let mut games_of_gen: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    let mut skipped = Vec::new();

    for (g, sp) in generations(&dir.join("selfplay")) {
        let endings: BTreeMap<u64, String> =
            records::jsonl::read::<GameLine>(&selfplay::games_path(&sp)).map_err(|e| invalid(&sp, e))?.into_iter().map(|l| (l.game_id, l.ending)).collect();
        for shard_path in selfplay_shards(&sp).into_iter().take(sample) {
            // A shard that cannot be shown is named on the page, not the end of the page
            // (the loop rewrites it while it runs).
            let view = records::read_shard(&shard_path).map_err(|e| e.to_string()).and_then(|shard| {
                let id = shard.records.first().map(|r| r.game_id).ok_or("no positions")?;
                let ending = ending_of(&endings, &shard_path, id);
                GameView::from_shard_records(variant, &shard.records, format!("gen {g} self-play game {id}"), ending)
            });
            match view {
                Ok(view) => {
                    let i = page.push_game(variant, view);
                    games_of_gen.entry(g).or_default().push(i);
                }
                Err(e) => {
                    tracing::warn!("{}: {e}", shard_path.display());
                    skipped.push(format!("{}: {e}", shard_path.display()));
                }
            }
        }
    }
    for (g, ev) in generations(&dir.join("eval")) {
        let mut opponents: Vec<PathBuf> =
            std::fs::read_dir(&ev).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.join("results.jsonl").exists()).collect();
        opponents.sort();
        for op in opponents {
            let results_path = op.join("results.jsonl");
            let mut results = arena::tournament::read_results(&results_path)?;
            results.truncate(sample);
            let name = op.file_name().and_then(|s| s.to_str()).unwrap_or_default().to_string();
            let by_job = add_games(&mut page, &results_path, &results, &format!("gen {g} vs {name}: "))?;
            games_of_gen.entry(g).or_default().extend(by_job.into_values().flatten());
        }
    }

    let link = |text: &str| text.trim().parse::<u32>().ok().and_then(|g| games_of_gen.get(&g).cloned()).unwrap_or_default();
    let mut sections = Vec::new();
    if let Some(s) = tsv_table(&dir.join("summary.tsv"), "The loop's summary, per generation (a generation's number opens its sample games)", link)? {
        sections.push(s);
    }
    svgs(&dir.join("plots"), "", &mut sections);
    if let Some(s) = tsv_table(&dir.join("ladder").join("ladder.tsv"), "The ladder", |_| Vec::new())? {
        sections.push(s);
    }
    svgs(&dir.join("ladder").join("plots"), "ladder: ", &mut sections);
    sections.push(Section::Text {
        title: "Games".into(),
        text: format!(
            "Up to {sample} self-play games (from their shards: the values are the search's, Black's side) and {sample} evaluation games per opponent of every generation."
        ),
    });
    if !skipped.is_empty() {
        sections.push(Section::Text { title: "Self-play games not shown".into(), text: skipped.join("\n") });
    }
    page.sections = sections;
    Ok(page)
}
