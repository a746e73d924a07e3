//! The games the page plays, saved as `copper view` reads them: one JSON Lines record
//! per game (rewritten whole after every move, write then rename, so a killed server
//! leaves the last complete record), and KIF and CSA beside it for standard shogi.

use gamerecords::GameRecord;
use std::path::{Path, PathBuf};

/// `<out>/<start time>-<variant>-<id>.jsonl`; the stamp is UTC, `20261127-061500`.
pub(crate) fn path_for(out: &Path, record_time: std::time::SystemTime, variant: &str, id: u64) -> PathBuf {
    let stamp = gamerecords::rfc3339_utc(record_time).replace(['-', ':'], "").replace('T', "-").trim_end_matches('Z').to_string();
    out.join(format!("{stamp}-{variant}-{id}.jsonl"))
}

/// Claims `path` for a new game (or, where a record of that name is there already, from
/// an earlier run of the server whose game numbers also started at 1, the first free
/// `<name>-2.jsonl`, `<name>-3.jsonl`, …), by creating it empty: two games never write
/// to one file.
pub(crate) fn claim(path: &Path) -> Result<PathBuf, String> {
    let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    for n in 1..1000 {
        let candidate = if n == 1 { path.to_path_buf() } else { path.with_file_name(format!("{stem}-{n}.jsonl")) };
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&candidate) {
            Ok(_) => return Ok(candidate),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("{}: {e}", candidate.display())),
        }
    }
    Err(format!("{}: 999 records of that name are there already", path.display()))
}

fn atomic(path: &Path, text: &str) -> Result<(), String> {
    records::write_atomic(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}

/// Writes `record` to `path` (JSON Lines, one line) and, for standard shogi, the same
/// game as `.kif` and `.csa` beside it.
pub(crate) fn save(path: &Path, record: &GameRecord) -> Result<(), String> {
    let line = serde_json::to_string(record).map_err(|e| e.to_string())? + "\n";
    atomic(path, &line)?;
    if record.variant == "shogi" {
        let kif = gamerecords::kif::to_kif(record).map_err(|e| e.to_string())?;
        atomic(&path.with_extension("kif"), &kif)?;
        let csa = gamerecords::csa::to_csa(record).map_err(|e| e.to_string())?;
        atomic(&path.with_extension("csa"), &csa)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::{Game, Position, Variant};

    #[test]
    fn a_saved_game_reads_back_and_replays_to_the_same_position() {
        let dir = tempfile::tempdir().unwrap();
        let v = Variant::builtin("shogi").unwrap();
        let mut g = Game::new(Position::start(v), None);
        for m in ["7g7f", "3c3d", "8h2b+", "3a2b"] {
            g.play_usi(m).unwrap();
        }
        let record = GameRecord::from_game(&g, None, "me", "model");
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_000_000);
        let path = path_for(dir.path(), when, "shogi", 7);
        assert_eq!(path.file_name().unwrap().to_str().unwrap(), "20261118-110640-shogi-7.jsonl");
        save(&path, &record).unwrap();
        let back = gamerecords::read_jsonl(&path).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].to_game(v).unwrap().position().to_sfen(), g.position().to_sfen());
        let kif = gamerecords::kif::from_kif(&std::fs::read_to_string(path.with_extension("kif")).unwrap()).unwrap();
        assert_eq!(kif.moves, record.moves);
        let csa = gamerecords::csa::from_csa(&std::fs::read_to_string(path.with_extension("csa")).unwrap()).unwrap();
        assert_eq!(csa.moves, record.moves);
        // Saving again replaces the record (one game, one line).
        save(&path, &record).unwrap();
        assert_eq!(gamerecords::read_jsonl(&path).unwrap().len(), 1);
    }

    /// A second server started in the same second numbers its games from 1 too: its
    /// game claims another name and the first record is kept.
    #[test]
    fn a_record_of_the_same_name_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_795_000_000);
        let path = path_for(dir.path(), when, "shogi", 1);
        let first = claim(&path).unwrap();
        assert_eq!(first, path);
        std::fs::write(&first, "the first server's game\n").unwrap();
        let second = claim(&path).unwrap();
        assert_ne!(second, first);
        assert_eq!(second.file_name().unwrap().to_str().unwrap(), "20261118-110640-shogi-1-2.jsonl");
        assert_eq!(std::fs::read_to_string(&first).unwrap(), "the first server's game\n");
        assert_eq!(claim(&path).unwrap().file_name().unwrap().to_str().unwrap(), "20261118-110640-shogi-1-3.jsonl");
    }
}
