//! `copper view`: one self-contained HTML file for a source of games — an arena
//! tournament directory, a balance study directory, a training run directory, or a file
//! of games (JSON Lines game records or arena results, `sfen … moves …` lines, a
//! self-play shard, a KIF or CSA record).
//!
//! A leaf above the readers (`rules`, `records`, `arena`, `balance`, `pipeline`), below
//! `cli`. It never re-implements the rules: every position a page shows is computed here
//! by the rules engine and embedded as JSON (SFEN per ply), and the page's script only
//! draws it. Statistics are the arena's and the study's own report functions.
//!
//! Modules:
//! - [`game`]: a game as the page shows it (positions, move labels, marks, scores) and
//!   the canonical line the browser test compares with what the page draws;
//! - [`page`]: the page data and the one template (`page.html`);
//! - [`tournament`], [`study`], [`run`]: the pages of the three kinds of directory;
//! - this file: the sources, the game files, and writing a page atomically.
//!
//! Every page writer is a pure function of its source (`*_page(path) -> html`);
//! [`write_page`] writes the file atomically (temporary file, then rename).

pub mod error;
pub mod game;
pub mod page;
pub mod run;
pub mod study;
pub mod tournament;

pub use error::ViewError;
pub use game::GameView;
pub use page::PageData;

use error::{invalid, io_err};
use gamerecords::GameRecord;
use rules::Variant;
use std::path::{Path, PathBuf};

/// What a source is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// An arena tournament directory (`tournament.toml`).
    Tournament,
    /// A balance study directory (`study.toml`).
    Study,
    /// A training run directory (`config.toml` and `selfplay/`).
    Run,
    /// A file of games.
    Games,
}

/// Settings of a page besides its source.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    /// The variant of `sfen … moves …` lines (other sources name their variant).
    pub variant: &'static Variant,
    /// Self-play and evaluation games shown per generation (and opponent) of a run.
    pub sample: usize,
}

/// Which kind of source `path` is, from what it holds.
pub fn source_kind(path: &Path) -> Result<SourceKind, ViewError> {
    if path.is_file() {
        return Ok(SourceKind::Games);
    }
    if !path.exists() {
        return Err(ViewError::Io { path: path.to_path_buf(), source: std::io::Error::from(std::io::ErrorKind::NotFound) });
    }
    if path.join("tournament.toml").is_file() {
        Ok(SourceKind::Tournament)
    } else if path.join("study.toml").is_file() {
        Ok(SourceKind::Study)
    } else if path.join("config.toml").is_file() && path.join("selfplay").is_dir() {
        Ok(SourceKind::Run)
    } else {
        Err(ViewError::UnknownSource { path: path.to_path_buf() })
    }
}

/// The page of any source, as HTML.
pub fn page(path: &Path, opts: &ViewOptions) -> Result<String, ViewError> {
    match source_kind(path)? {
        SourceKind::Tournament => tournament_page(path),
        SourceKind::Study => study_page(path),
        SourceKind::Run => run_page(path, opts.sample),
        SourceKind::Games => games_page(path, opts.variant),
    }
}

/// The page of an arena tournament directory: standings, crosstable, pairings, the
/// rating plot and every game.
pub fn tournament_page(dir: &Path) -> Result<String, ViewError> {
    Ok(page::render(&tournament::page(dir)?))
}

/// The page of a balance study directory: the cells with their intervals, the starts
/// compared, the plots and every game by cell.
pub fn study_page(dir: &Path) -> Result<String, ViewError> {
    Ok(page::render(&study::page(dir)?))
}

/// The page of a training run directory: the summary, the plots, the ladder, and
/// `sample` self-play and evaluation games of every generation.
pub fn run_page(dir: &Path, sample: usize) -> Result<String, ViewError> {
    Ok(page::render(&run::page(dir, sample)?))
}

/// The page of a file of games: JSON Lines of game records (`.jsonl`, also a
/// tournament's `results.jsonl`), one self-play shard (`.shard`), a standard shogi KIF
/// (`.kif`, `.kifu`, UTF-8) or CSA (`.csa`) record, or lines `sfen <SFEN> [moves …]` /
/// `position …` of `variant` (any other file; `#` starts a comment).
pub fn games_page(path: &Path, variant: &'static Variant) -> Result<String, ViewError> {
    Ok(page::render(&games_data(path, variant)?))
}

/// The games of a file (see [`games_page`]) as page data.
pub fn games_data(path: &Path, variant: &'static Variant) -> Result<PageData, ViewError> {
    let mut page = PageData::new("games", format!("Games of {}", path.display()), path);
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    match ext.as_str() {
        "shard" => {
            let shard = records::read_shard(path).map_err(|e| invalid(path, e))?;
            let v = Variant::load(&shard.header.variant, &shard.header.options).map_err(|e| invalid(path, e))?;
            let view = GameView::from_shard_records(v, &shard.records, "self-play game".into(), String::new()).map_err(|e| invalid(path, e))?;
            page.push_game(v, view);
        }
        "kif" | "kifu" | "csa" => {
            // Standard shogi records, read by the arena's readers (UTF-8 text).
            let text = std::fs::read_to_string(path).map_err(io_err(path))?;
            let record = if ext == "csa" { gamerecords::csa::from_csa(&text) } else { gamerecords::kif::from_kif(&text) };
            let record = record.map_err(|source| ViewError::Game { path: path.to_path_buf(), game: "1".into(), source: Box::new(source) })?;
            add_record(&mut page, path, &record, 1)?;
        }
        "jsonl" | "json" => {
            let text = std::fs::read_to_string(path).map_err(io_err(path))?;
            let is_result = text.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| l.contains("\"hands\"") && l.contains("\"job\""));
            if is_result {
                let results = arena::tournament::read_results(path)?;
                tournament::add_games(&mut page, path, &results, "")?;
            } else {
                let records = gamerecords::read_jsonl(path).map_err(|source| ViewError::Game {
                    path: path.to_path_buf(),
                    game: "file".into(),
                    source: Box::new(source),
                })?;
                for (i, r) in records.iter().enumerate() {
                    add_record(&mut page, path, r, i + 1)?;
                }
            }
        }
        _ => {
            let text = std::fs::read_to_string(path).map_err(io_err(path))?;
            for (n, line) in text.lines().enumerate() {
                let line = line.split('#').next().unwrap_or_default().trim();
                if line.is_empty() {
                    continue;
                }
                let (sfen, moves) = gamerecords::parse_sfen_line(line, variant).map_err(|e| invalid(path, format!("line {}: {e}", n + 1)))?;
                let mut r = GameRecord::from_game(&rules::Game::new(rules::Position::start(variant), None), None, "", "");
                r.start_sfen = sfen;
                r.moves = moves;
                r.max_plies = None;
                add_record(&mut page, path, &r, n + 1).map_err(|e| match e {
                    ViewError::Game { source, .. } => invalid(path, format!("line {}: {source}", n + 1)),
                    other => other,
                })?;
            }
        }
    }
    if page.games.is_empty() {
        return Err(invalid(path, "no games"));
    }
    Ok(page)
}

fn add_record(page: &mut PageData, path: &Path, r: &GameRecord, n: usize) -> Result<(), ViewError> {
    let err = |source| ViewError::Game { path: path.to_path_buf(), game: n.to_string(), source: Box::new(source) };
    let names = if r.black.is_empty() && r.white.is_empty() { String::new() } else { format!(": {} - {}", r.black, r.white) };
    let view = GameView::from_record(r, format!("game {n}{names}")).map_err(err)?;
    let v = r.load_variant().map_err(err)?;
    page.push_game(v, view);
    Ok(())
}

/// Where `copper view` writes a source's page by default: `index.html` in a directory,
/// `<file>.html` beside a file.
pub fn default_output(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("index.html")
    } else {
        let mut s = path.as_os_str().to_owned();
        s.push(".html");
        PathBuf::from(s)
    }
}

/// Writes a page atomically: a temporary file beside it, synced, then renamed.
pub fn write_page(out: &Path, html: &str) -> Result<(), ViewError> {
    records::write_atomic(out, html.as_bytes()).map_err(io_err(out))
}

/// Rewrites a directory's page (`index.html`) from what it holds now: the hook a
/// training loop or a study calls after each generation or batch.
pub fn refresh_page(dir: &Path, sample: usize) -> Result<PathBuf, ViewError> {
    let html = match source_kind(dir)? {
        SourceKind::Tournament => tournament_page(dir)?,
        SourceKind::Study => study_page(dir)?,
        SourceKind::Run => run_page(dir, sample)?,
        SourceKind::Games => return Err(ViewError::UnknownSource { path: dir.to_path_buf() }),
    };
    let out = dir.join("index.html");
    write_page(&out, &html)?;
    Ok(out)
}
