//! The project's own record forms, for every variant:
//!
//! - JSON Lines: a file of [`GameRecord`]s, one a line, appended as games finish
//!   ([`append_jsonl`]) and read back whole ([`read_jsonl`]). A writer killed in the
//!   middle of a line leaves a truncated last line: the reader ignores it with a warning,
//!   and the next append cuts it off before writing.
//! - The game line `sfen <SFEN> moves <usi> <usi> ...` ([`GameRecord::sfen_line`],
//!   [`parse_sfen_line`]) and the USI command `position ...` ([`GameRecord::usi_position`]).

use super::{GameRecord, RecordError};
use rules::Variant;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Mutex;

/// Appends in this process take turns, so that one append's repair of a truncated last
/// line never cuts into another's record. (Appends from several processes to one file
/// are not supported.)
static APPEND: Mutex<()> = Mutex::new(());

/// Appends `record` to the JSON Lines file at `path` (created if missing) as one line,
/// then syncs the file to disk. A partial last line left by a killed writer is cut off
/// first (with a warning), so the file stays one record a line.
pub fn append_jsonl(path: &Path, record: &GameRecord) -> Result<(), RecordError> {
    let mut line = serde_json::to_string(record).map_err(|e| RecordError::Json(e.to_string()))?;
    line.push('\n');
    let io = |source| RecordError::Io { path: path.to_path_buf(), source };
    let _turn = APPEND.lock().unwrap_or_else(|e| e.into_inner());
    let mut f = OpenOptions::new().create(true).read(true).append(true).open(path).map_err(io)?;
    repair_tail(&mut f, path).map_err(io)?;
    f.write_all(line.as_bytes()).map_err(io)?;
    f.sync_data().map_err(io)
}

/// If the file does not end with a line break: a complete record there gets its line
/// break; anything else (part of a record) is cut off.
fn repair_tail(f: &mut File, path: &Path) -> std::io::Result<()> {
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
    'search: while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(chunk)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            line_start = start + i as u64 + 1;
            break 'search;
        }
        end = start;
    }
    let mut tail = Vec::with_capacity((len - line_start) as usize);
    f.seek(SeekFrom::Start(line_start))?;
    f.read_to_end(&mut tail)?;
    if std::str::from_utf8(&tail).ok().is_some_and(|t| serde_json::from_str::<GameRecord>(t).is_ok()) {
        f.write_all(b"\n")?;
    } else {
        tracing::warn!("{}: cutting off a truncated last line ({} bytes, left by an interrupted writer)", path.display(), tail.len());
        f.set_len(line_start)?;
    }
    Ok(())
}

/// Reads every record of a JSON Lines file. Blank lines are skipped. A last line without
/// its line break that is not a whole record (a killed writer's) is ignored with a
/// warning; any other line that is not a record is an error naming the file and line.
pub fn read_jsonl(path: &Path) -> Result<Vec<GameRecord>, RecordError> {
    let bytes = std::fs::read(path).map_err(|source| RecordError::Io { path: path.to_path_buf(), source })?;
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
            Err(message) => return Err(RecordError::CorruptLine { path: path.to_path_buf(), line: line_no, message }),
        }
    }
    Ok(out)
}

impl GameRecord {
    /// `sfen <SFEN> moves <usi> <usi> ...` (without ` moves` when there are none).
    pub fn sfen_line(&self) -> String {
        with_moves(format!("sfen {}", self.start_sfen), &self.moves)
    }

    /// The USI command that sets up the game's last position: `position startpos moves
    /// ...` for standard shogi from its start, else `position sfen <SFEN> moves ...`.
    pub fn usi_position(&self) -> String {
        let startpos = self.variant == "shogi" && Variant::builtin("shogi").is_ok_and(|v| same_sfen(&self.start_sfen, &v.start_sfen));
        let head = if startpos { "position startpos".to_string() } else { format!("position sfen {}", self.start_sfen) };
        with_moves(head, &self.moves)
    }
}

fn with_moves(mut s: String, moves: &[String]) -> String {
    if !moves.is_empty() {
        s.push_str(" moves");
        for m in moves {
            s.push(' ');
            s.push_str(m);
        }
    }
    s
}

/// Whether two SFENs are the same position with the same move number (1 when left out).
pub(crate) fn same_sfen(a: &str, b: &str) -> bool {
    let fields = |s: &str| {
        let mut f: Vec<String> = s.split_whitespace().map(str::to_string).collect();
        if f.len() == 3 {
            f.push("1".into());
        }
        f
    };
    fields(a) == fields(b)
}

/// Reads a game line: `sfen <SFEN> [moves ...]`, or a USI command `position sfen <SFEN>
/// [moves ...]` / `position startpos [moves ...]` (the start of `variant`). Returns the
/// start SFEN and the moves, unchecked (a [`GameRecord`] with them checks them on
/// [`GameRecord::to_game`]).
pub fn parse_sfen_line(line: &str, variant: &Variant) -> Result<(String, Vec<String>), RecordError> {
    let bad = || RecordError::BadLine(line.to_string());
    let mut words = line.split_whitespace().peekable();
    if words.peek() == Some(&"position") {
        words.next();
    }
    let sfen = match words.next() {
        Some("startpos") => variant.start_sfen.clone(),
        Some("sfen") => {
            let fields: Vec<&str> = words.by_ref().take_while(|w| *w != "moves").collect();
            if fields.len() < 3 {
                return Err(bad());
            }
            let moves: Vec<String> = words.map(str::to_string).collect();
            return Ok((fields.join(" "), moves));
        }
        _ => return Err(bad()),
    };
    match words.next() {
        None => Ok((sfen, Vec::new())),
        Some("moves") => Ok((sfen, words.map(str::to_string).collect())),
        Some(_) => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ending::{Ending, GameEnd};
    use rules::{Color, Game, Position};

    fn record(moves: &[&str]) -> GameRecord {
        let v = Variant::builtin("shogi").unwrap();
        let mut g = Game::new(Position::start(v), None);
        for m in moves {
            g.play_usi(m).unwrap();
        }
        GameRecord::from_game(&g, Some(GameEnd::loss_of(Color::White, Ending::Resignation)), "Sente", "Gote")
    }

    #[test]
    fn record_usi_position_and_sfen_line() {
        let r = record(&["7g7f", "3c3d"]);
        assert_eq!(r.usi_position(), "position startpos moves 7g7f 3c3d");
        assert_eq!(r.sfen_line(), "sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 moves 7g7f 3c3d");
        let v = Variant::builtin("shogi").unwrap();
        assert_eq!(parse_sfen_line(&r.sfen_line(), v).unwrap(), (r.start_sfen.clone(), r.moves.clone()));
        assert_eq!(parse_sfen_line(&r.usi_position(), v).unwrap(), (r.start_sfen.clone(), r.moves.clone()));
        assert_eq!(parse_sfen_line("position startpos", v).unwrap(), (v.start_sfen.clone(), vec![]));
        assert!(parse_sfen_line("position", v).is_err());
        assert!(parse_sfen_line("sfen 9/9 b", v).is_err());

        let empty = record(&[]);
        assert_eq!(empty.usi_position(), "position startpos");
        let mut other = record(&["7g7f"]);
        other.start_sfen = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 3".into();
        assert_eq!(other.usi_position(), format!("position sfen {} moves 7g7f", other.start_sfen));
        let mini = Variant::builtin("minishogi").unwrap();
        let m = GameRecord::from_game(&Game::new(Position::start(mini), None), None, "a", "b");
        assert_eq!(m.usi_position(), format!("position sfen {}", mini.start_sfen));
    }

    #[test]
    fn record_jsonl_round_trip_and_truncated_tail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.jsonl");
        let mut a = record(&["7g7f", "3c3d", "8h2b+"]);
        a.event = Some("test \"event\"\nline two".into());
        a.round = Some(7);
        a.opening_index = Some(3);
        a.start_time = Some("2024-05-01T12:34:56Z".into());
        a.move_times_ms = vec![1500, 0, 20];
        a.comments = vec![Some("+12".into()), None, Some("mate +3".into())];
        let mut b = record(&[]);
        b.end = None;
        append_jsonl(&path, &a).unwrap();
        append_jsonl(&path, &b).unwrap();
        assert_eq!(read_jsonl(&path).unwrap(), vec![a.clone(), b.clone()]);
        let whole = std::fs::read(&path).unwrap();
        assert_eq!(whole.iter().filter(|&&c| c == b'\n').count(), 2);

        // A killed writer: half of a third record, no line break.
        let third = serde_json::to_string(&a).unwrap();
        let mut cut = whole.clone();
        cut.extend_from_slice(&third.as_bytes()[..third.len() / 2]);
        std::fs::write(&path, &cut).unwrap();
        assert_eq!(read_jsonl(&path).unwrap(), vec![a.clone(), b.clone()]);
        // The next append cuts the partial line off.
        append_jsonl(&path, &b).unwrap();
        assert_eq!(read_jsonl(&path).unwrap(), vec![a.clone(), b.clone(), b.clone()]);

        // A whole record missing only its line break is kept, and the next append starts a line.
        let mut whole_tail = whole.clone();
        whole_tail.extend_from_slice(third.as_bytes());
        std::fs::write(&path, &whole_tail).unwrap();
        assert_eq!(read_jsonl(&path).unwrap(), vec![a.clone(), b.clone(), a.clone()]);
        append_jsonl(&path, &b).unwrap();
        assert_eq!(read_jsonl(&path).unwrap(), vec![a.clone(), b.clone(), a.clone(), b.clone()]);

        // A corrupt line in the middle is an error naming the file and the line.
        let mut bad = whole.clone();
        bad.extend_from_slice(b"{\"variant\": \"shogi\", oops}\n");
        bad.extend_from_slice(&whole);
        std::fs::write(&path, &bad).unwrap();
        let e = read_jsonl(&path).unwrap_err();
        assert!(matches!(e, RecordError::CorruptLine { line: 3, .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains("games.jsonl") && msg.contains("line 3"), "{msg}");

        // A cut multi-byte character in the last line is a truncation too.
        let mut utf = whole.clone();
        utf.extend_from_slice(&"{\"black\":\"先".as_bytes()[..12]);
        std::fs::write(&path, &utf).unwrap();
        assert_eq!(read_jsonl(&path).unwrap().len(), 2);

        assert!(matches!(read_jsonl(&dir.path().join("missing.jsonl")), Err(RecordError::Io { .. })));
    }
}
