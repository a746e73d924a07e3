//! Append-only JSON Lines files: one record a line, each append flushed to disk before it
//! returns, so a killed writer loses at most the record it was writing. The arena's
//! results, a balance study's games and the game-record files all use these.
//!
//! A writer killed in the middle of a line leaves a truncated last line: [`read`] ignores
//! it with a warning, and the next [`append`] cuts it off before writing (or, when the
//! line is a whole record that only lacks its line break, completes it).

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

#[derive(Debug, thiserror::Error)]
pub enum JsonlError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}, line {line}: {message}")]
    Line { path: PathBuf, line: usize, message: String },
}

/// Appends in this process take turns, so that one append's repair of a truncated last
/// line never cuts into another's record. (Appends from several processes to one file
/// are not supported.)
static APPEND: Mutex<()> = Mutex::new(());

/// Appends `value` to the file at `path` (created if missing) as one line, then syncs
/// the file to disk.
pub fn append<T: Serialize + DeserializeOwned>(path: &Path, value: &T) -> Result<(), JsonlError> {
    let io = |source| JsonlError::Io { path: path.to_path_buf(), source };
    let mut line = serde_json::to_string(value).map_err(|e| JsonlError::Line { path: path.to_path_buf(), line: 0, message: e.to_string() })?;
    line.push('\n');
    let _turn = APPEND.lock().unwrap_or_else(|e| e.into_inner());
    let mut f = OpenOptions::new().create(true).read(true).append(true).open(path).map_err(io)?;
    repair_tail::<T>(&mut f, path).map_err(io)?;
    f.write_all(line.as_bytes()).map_err(io)?;
    f.sync_data().map_err(io)
}

/// If the file does not end with a line break: a complete record there gets its line
/// break; anything else (part of a record) is cut off.
fn repair_tail<T: DeserializeOwned>(f: &mut File, path: &Path) -> io::Result<()> {
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    let mut last = [0u8; 1];
    f.seek(SeekFrom::Start(len - 1))?;
    f.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(());
    }
    // Find where the last line starts, reading backwards in chunks.
    let mut line_start = 0;
    let mut end = len;
    let mut buf = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(chunk)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            line_start = start + i as u64 + 1;
            break;
        }
        end = start;
    }
    let mut tail = Vec::with_capacity((len - line_start) as usize);
    f.seek(SeekFrom::Start(line_start))?;
    f.read_to_end(&mut tail)?;
    if std::str::from_utf8(&tail).ok().is_some_and(|t| serde_json::from_str::<T>(t).is_ok()) {
        f.write_all(b"\n")?;
    } else {
        tracing::warn!("{}: cutting off a truncated last line ({} bytes, left by an interrupted writer)", path.display(), tail.len());
        f.set_len(line_start)?;
    }
    Ok(())
}

/// Reads every record of the file; a missing file has none. Blank lines are skipped. A
/// last line without its line break that is not a whole record (a killed writer's) is
/// ignored with a warning; any other line that is not a record is an error naming the
/// file and line.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, JsonlError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(JsonlError::Io { path: path.to_path_buf(), source }),
    };
    let mut out = Vec::new();
    let mut start = 0;
    let mut line_no = 0;
    while start < bytes.len() {
        line_no += 1;
        let (end, terminated) = match bytes[start..].iter().position(|&b| b == b'\n') {
            Some(i) => (start + i, true),
            None => (bytes.len(), false),
        };
        let raw = &bytes[start..end];
        start = end + 1;
        let parsed = std::str::from_utf8(raw).map_err(|e| e.to_string()).and_then(|t| {
            if t.trim().is_empty() {
                Ok(None)
            } else {
                serde_json::from_str(t).map(Some).map_err(|e| e.to_string())
            }
        });
        match parsed {
            Ok(Some(r)) => out.push(r),
            Ok(None) => {}
            Err(message) if !terminated => {
                tracing::warn!("{} line {line_no}: ignoring a truncated last line ({} bytes; an interrupted writer?): {message}", path.display(), raw.len());
            }
            Err(message) => return Err(JsonlError::Line { path: path.to_path_buf(), line: line_no, message }),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_last_line_is_ignored_then_replaced_and_a_corrupt_middle_line_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        for i in 0..3u32 {
            append(&path, &vec![i, i]).unwrap();
        }
        let full = std::fs::read_to_string(&path).unwrap();
        assert_eq!(full, "[0,0]\n[1,1]\n[2,2]\n");
        std::fs::write(&path, "[0,0]\n[1,1]\n[2,").unwrap();
        assert_eq!(read::<Vec<u32>>(&path).unwrap(), vec![vec![0, 0], vec![1, 1]]);
        append(&path, &vec![9u32]).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[0,0]\n[1,1]\n[9]\n");
        // A whole record missing only its line break is kept.
        std::fs::write(&path, "[0,0]\n[1,1]").unwrap();
        append(&path, &vec![2u32]).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "[0,0]\n[1,1]\n[2]\n");
        std::fs::write(&path, "[0,0]\n[1,\n[2,2]\n").unwrap();
        let e = read::<Vec<u32>>(&path).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("r.jsonl"), "{e}");
        assert!(read::<Vec<u32>>(&dir.path().join("missing.jsonl")).unwrap().is_empty());
    }
}
