//! `results.jsonl`: one arena [`JobResult`] per finished game, appended and flushed to
//! disk as each game ends, as the arena's tournaments do (`records::jsonl`): a partial last
//! line (a writer killed mid-line) is dropped and the finished lines are kept byte for byte;
//! every line is checked against the study's cells, so a foreign or corrupt file is an
//! error rather than a silently wrong table.

use crate::error::BalanceError;
use crate::registry::{Registry, CELL_STRIDE};
use arena::runner::JobResult;
use std::path::Path;

/// Reads the finished games (ids deduplicated, a truncated last line ignored) and checks
/// that each belongs to the cell its id names.
pub fn read(path: &Path, registry: &Registry) -> Result<Vec<JobResult>, BalanceError> {
    let results = arena::tournament::read_results(path).map_err(|e| match e {
        arena::TournamentError::Results { path, line, problem } => BalanceError::Results { path, problem: format!("line {line}: {problem}") },
        other => BalanceError::Results { path: path.display().to_string(), problem: other.to_string() },
    })?;
    for r in &results {
        check(path, r, registry)?;
    }
    Ok(results)
}

/// The opening name a game of `start` records (the start, or `start+N` after N random plies).
pub fn opening_name(start: &str, opening_plies: u32) -> String {
    if opening_plies == 0 {
        start.to_string()
    } else {
        format!("{start}+{opening_plies}")
    }
}

fn check(path: &Path, r: &JobResult, registry: &Registry) -> Result<(), BalanceError> {
    let bad = |problem: String| BalanceError::Results { path: path.display().to_string(), problem: format!("game {}: {problem}", r.job.id) };
    let index = r.job.id / CELL_STRIDE;
    let Some(cell) = registry.cell(index) else {
        return Err(bad(format!("cell {index} is not in study.toml (results from another study?)")));
    };
    if r.first != cell.tier || r.second != cell.tier {
        return Err(bad(format!("played by {} and {}, but cell {index} is tier '{}' against itself", r.first, r.second, cell.tier)));
    }
    let opening = opening_name(&cell.start, registry.opening_plies);
    if r.opening != opening {
        return Err(bad(format!("started from '{}', but cell {index} is start '{opening}'", r.opening)));
    }
    if r.hands.is_empty() {
        return Err(bad("no game record".into()));
    }
    Ok(())
}

/// Appends one result as a line, flushed to disk before it returns; a partial last line
/// left by a kill is cut off first (`records::jsonl`).
pub fn append(path: &Path, r: &JobResult) -> Result<(), BalanceError> {
    records::jsonl::append(path, r).map_err(|e| BalanceError::Results { path: path.display().to_string(), problem: e.to_string() })
}
