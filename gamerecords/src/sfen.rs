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
use std::path::Path;

/// Appends `record` to the JSON Lines file at `path` (created if missing) as one line,
/// then syncs the file to disk; a partial last line left by a killed writer is cut off
/// first (`records::jsonl`).
pub fn append_jsonl(path: &Path, record: &GameRecord) -> Result<(), RecordError> {
    records::jsonl::append(path, record).map_err(|e| jsonl_error(path, e))
}

/// Reads every record of a JSON Lines file; a truncated last line (a killed writer's) is
/// ignored with a warning, any other bad line is an error naming the file and line.
pub fn read_jsonl(path: &Path) -> Result<Vec<GameRecord>, RecordError> {
    if !path.exists() {
        return Err(RecordError::Io { path: path.to_path_buf(), source: std::io::Error::from(std::io::ErrorKind::NotFound) });
    }
    records::jsonl::read(path).map_err(|e| jsonl_error(path, e))
}

fn jsonl_error(path: &Path, e: records::jsonl::JsonlError) -> RecordError {
    match e {
        records::jsonl::JsonlError::Io { source, .. } => RecordError::Io { path: path.to_path_buf(), source },
        records::jsonl::JsonlError::Line { line, message, .. } => RecordError::CorruptLine { path: path.to_path_buf(), line, message },
    }
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
