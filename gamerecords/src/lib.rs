//! Game records: one [`GameRecord`] per game, for every variant, and its text forms.
//!
//! - [`sfen`]: the project's own forms for every variant — JSON Lines files of records
//!   (one record a line, appended as games finish: [`append_jsonl`], [`read_jsonl`]), the
//!   line `sfen <SFEN> moves <usi> ...` and the USI `position` command.
//! - [`csa`]: CSA V3.0 text, standard shogi only.
//! - [`kif`]: Kakinoki KIF text (UTF-8), standard shogi only.
//! - [`ending`]: how a game ended, by the rules or by the arena that ran it.
//!
//! A record holds the moves as USI text; [`GameRecord::to_game`] replays them through the
//! rules engine, so a record read back is checked move by move. This crate sits beside
//! the other on-disk formats but a floor above `records` (training shards, JSON Lines
//! helpers), because reading a game back needs `rules`, which is on `records`' floor.

pub mod csa;
pub mod ending;
pub mod kif;
pub mod sfen;

pub use ending::{Ending, GameEnd};
pub use sfen::{append_jsonl, parse_sfen_line, read_jsonl};

use rules::{Color, Game, MoveError, Outcome, Position, SfenError, Variant, VariantError};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One game as played: where it started, its moves, how it ended and who played it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    /// The variant's name (`shogi`, `pocket-copper`, …).
    pub variant: String,
    /// The variant's options as (name, choice), all of them (defaults included).
    #[serde(default)]
    pub options: Vec<(String, String)>,
    /// The start position.
    pub start_sfen: String,
    /// The moves in USI text, in order.
    pub moves: Vec<String>,
    /// How the game ended; `None` for an unfinished game.
    #[serde(default)]
    pub end: Option<GameEnd>,
    pub black: String,
    pub white: String,
    #[serde(default)]
    pub event: Option<String>,
    /// The round, or the game's index in its event.
    #[serde(default)]
    pub round: Option<u64>,
    /// Index of the opening (start position or book line) in the event's list.
    #[serde(default)]
    pub opening_index: Option<u64>,
    /// When the game started, RFC 3339 (`2024-05-01T12:34:56Z`); see [`rfc3339_utc`].
    #[serde(default)]
    pub start_time: Option<String>,
    /// The game's length limit in plies (`None`: the variant's), so that a replay
    /// ends where the game did.
    #[serde(default)]
    pub max_plies: Option<u32>,
    /// Milliseconds each move took, by ply; empty when not known (and may be shorter
    /// than `moves`: the missing ones are unknown).
    #[serde(default)]
    pub move_times_ms: Vec<u64>,
    /// A comment for each move (the mover's score, e.g. `+123` or `mate +5`), by ply;
    /// empty when there are none.
    #[serde(default)]
    pub comments: Vec<Option<String>>,
}

/// Why a record could not be read, replayed or written.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A line of a JSON Lines file that is not a record (and not a truncated last line).
    #[error("{} line {line}: not a game record: {message}", .path.display())]
    CorruptLine { path: PathBuf, line: usize, message: String },
    #[error("{format} records are for standard shogi only; this game is {variant}")]
    Unsupported { format: &'static str, variant: String },
    #[error("the record is a game of '{record}', not of '{given}'")]
    VariantMismatch { record: String, given: String },
    #[error("the record's variant option '{name}' is '{record}', but the variant has '{given}'")]
    OptionMismatch { name: String, record: String, given: String },
    #[error(transparent)]
    Variant(#[from] VariantError),
    #[error("start position '{sfen}': {source}")]
    Sfen {
        sfen: String,
        #[source]
        source: SfenError,
    },
    /// A move that is not legal where it stands (or comes after the end of the game).
    #[error("ply {ply}: {source}")]
    IllegalMove {
        /// 1-based.
        ply: usize,
        text: String,
        #[source]
        source: MoveError,
    },
    #[error("the record says the game ended by {recorded}, but replaying its moves gives {replayed}")]
    EndMismatch { recorded: String, replayed: String },
    #[error("not a game line: {0}")]
    BadLine(String),
    #[error("JSON: {0}")]
    Json(String),
}

impl GameRecord {
    /// The record of `game` so far. `end` is how it ended (`None`: unfinished); for a
    /// game ended by the rules, [`rules_end`] gives it. The other fields (event, round,
    /// times, comments, …) are the caller's to fill in.
    pub fn from_game(game: &Game, end: Option<GameEnd>, black: &str, white: &str) -> GameRecord {
        let v = game.position().variant();
        GameRecord {
            variant: v.name.clone(),
            options: v.options.clone(),
            start_sfen: game.start().to_sfen(),
            moves: game.moves().iter().map(|&m| v.move_to_usi(m)).collect(),
            end,
            black: black.to_string(),
            white: white.to_string(),
            event: None,
            round: None,
            opening_index: None,
            start_time: None,
            max_plies: Some(game.max_plies()),
            move_times_ms: Vec::new(),
            comments: Vec::new(),
        }
    }

    /// The variant the record names, with its options: the shipped one when the options
    /// are its defaults, else built anew (and kept for the rest of the process).
    pub fn load_variant(&self) -> Result<&'static Variant, RecordError> {
        let builtin = Variant::builtin(&self.variant)?;
        if self.options.iter().all(|(n, c)| builtin.options.iter().any(|(bn, bc)| bn == n && bc == c)) {
            return Ok(builtin);
        }
        Ok(Variant::load(&self.variant, &self.options)?)
    }

    /// Replays the record in `variant`, checking every move with the rules engine; the
    /// error names the ply and the move. A recorded ending by the rules must be the one
    /// the replay reaches.
    pub fn to_game(&self, variant: &'static Variant) -> Result<Game, RecordError> {
        if variant.name != self.variant {
            return Err(RecordError::VariantMismatch { record: self.variant.clone(), given: variant.name.clone() });
        }
        for (name, choice) in &self.options {
            match variant.options.iter().find(|(n, _)| n == name) {
                Some((_, c)) if c == choice => {}
                other => {
                    return Err(RecordError::OptionMismatch {
                        name: name.clone(),
                        record: choice.clone(),
                        given: other.map(|(_, c)| c.clone()).unwrap_or_else(|| "no such option".into()),
                    })
                }
            }
        }
        let start = Position::from_sfen(variant, &self.start_sfen).map_err(|source| RecordError::Sfen { sfen: self.start_sfen.clone(), source })?;
        let mut game = Game::new(start, self.max_plies);
        for (i, text) in self.moves.iter().enumerate() {
            game.play_usi(text).map_err(|source| RecordError::IllegalMove { ply: i + 1, text: text.clone(), source })?;
        }
        if let Some(GameEnd { outcome, ending: Ending::Rules(reason) }) = self.end {
            let replayed = game.result();
            if replayed.map(|r| (r.outcome, r.reason)) != Some((outcome, reason)) {
                return Err(RecordError::EndMismatch {
                    recorded: format!("{reason:?} ({})", outcome_text(outcome)),
                    replayed: match replayed {
                        Some(r) => format!("{:?} ({})", r.reason, outcome_text(r.outcome)),
                        None => "an unfinished game".into(),
                    },
                });
            }
        }
        Ok(game)
    }

    /// One line for logs and tables: `black - white: 1-0 (checkmate, 87 plies)`.
    pub fn summary(&self) -> String {
        let (score, how) = match &self.end {
            None => ("*", "unfinished"),
            Some(e) => (
                match e.outcome {
                    Outcome::Win(Color::Black) => "1-0",
                    Outcome::Win(Color::White) => "0-1",
                    Outcome::Draw => "1/2-1/2",
                },
                e.name(),
            ),
        };
        format!("{} - {}: {score} ({how}, {} plies)", self.black, self.white, self.moves.len())
    }
}

/// How a CSA or KIF record says its game ended, from the side on move at the end.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum TextEnd {
    /// The side on move lost (resigned, mated, lost on time, played an illegal move).
    MoverLost(Ending),
    /// The side on move won (a declaration, the opponent's illegal move).
    MoverWon(Ending),
    Draw,
    /// Unfinished or unknown.
    None,
}

/// A record read from CSA or KIF text: the moves (USI) replayed by the rules engine; the
/// ending the rules reach if they end the game, else the one the text states.
pub(crate) fn record_from_text(
    v: &'static Variant,
    start_sfen: String,
    moves: Vec<String>,
    comments: Vec<Option<String>>,
    names: [String; 2],
    end: TextEnd,
) -> Result<GameRecord, RecordError> {
    let [black, white] = names;
    let mut record = GameRecord::from_game(&Game::new(Position::start(v), None), None, &black, &white);
    record.start_sfen = start_sfen;
    record.moves = moves;
    record.comments = if comments.iter().any(Option::is_some) { comments } else { Vec::new() };
    let game = record.to_game(v)?;
    let mover = game.position().side_to_move();
    record.end = rules_end(&game).or(match end {
        TextEnd::MoverLost(e) => Some(GameEnd::loss_of(mover, e)),
        TextEnd::MoverWon(e) => Some(GameEnd::loss_of(!mover, e)),
        TextEnd::Draw => Some(GameEnd { outcome: Outcome::Draw, ending: Ending::AdjudicatedDraw }),
        TextEnd::None => None,
    });
    Ok(record)
}

/// The ending of a game that the rules have ended, `None` while it goes on.
pub fn rules_end(game: &Game) -> Option<GameEnd> {
    game.result().map(|r| GameEnd { outcome: r.outcome, ending: Ending::Rules(r.reason) })
}

fn outcome_text(o: Outcome) -> &'static str {
    match o {
        Outcome::Win(Color::Black) => "black wins",
        Outcome::Win(Color::White) => "white wins",
        Outcome::Draw => "draw",
    }
}

/// `time` in RFC 3339, UTC, whole seconds: `2024-05-01T12:34:56Z` (for
/// [`GameRecord::start_time`]).
pub fn rfc3339_utc(time: std::time::SystemTime) -> String {
    let secs = time.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// `YYYY/MM/DD HH:MM:SS` (CSA `$START_TIME`, KIF `開始日時`) from RFC 3339 text, the
/// wall-clock time as written there (its offset is dropped); `None` if it is not RFC 3339.
pub(crate) fn slash_time(rfc3339: &str) -> Option<String> {
    let b = rfc3339.trim().as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r.clone()).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let ok = b.len() >= 19
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't' | b' ')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !ok {
        return None;
    }
    let s = std::str::from_utf8(&b[..19]).ok()?;
    Some(format!("{}/{}/{} {}", &s[0..4], &s[5..7], &s[8..10], &s[11..19]))
}

/// Text for one header line: control characters (line breaks) become spaces.
pub(crate) fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// Standard shogi's variant for the CSA and KIF writers, or `Unsupported`.
pub(crate) fn standard_shogi(record: &GameRecord, format: &'static str) -> Result<&'static Variant, RecordError> {
    let v = Variant::builtin("shogi")?;
    if record.variant != v.name {
        return Err(RecordError::Unsupported { format, variant: record.variant.clone() });
    }
    Ok(v)
}

/// The record replayed, with the position before each move: what the CSA and KIF
/// writers walk through.
pub(crate) struct Replay {
    pub game: Game,
    /// (position before the move, the move) by ply.
    pub plies: Vec<(Position, rules::Move)>,
}

impl Replay {
    pub(crate) fn new(record: &GameRecord, variant: &'static Variant) -> Result<Replay, RecordError> {
        let game = record.to_game(variant)?;
        let mut pos = game.start().clone();
        let mut plies = Vec::with_capacity(game.moves().len());
        for &m in game.moves() {
            let before = pos.clone();
            pos.play_unchecked(m);
            plies.push((before, m));
        }
        Ok(Replay { game, plies })
    }

    /// The side to move after the last move.
    pub(crate) fn to_move(&self) -> Color {
        self.game.position().side_to_move()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn shogi() -> &'static Variant {
        Variant::builtin("shogi").unwrap()
    }

    #[test]
    fn record_from_game_replays() {
        let v = shogi();
        let mut g = Game::new(Position::start(v), None);
        for m in ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"] {
            g.play_usi(m).unwrap();
        }
        let r = GameRecord::from_game(&g, None, "A", "B");
        assert_eq!(r.variant, "shogi");
        assert_eq!(r.moves, ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"]);
        assert_eq!(r.start_sfen, v.start_sfen);
        assert_eq!(r.max_plies, Some(512));
        let back = r.to_game(v).unwrap();
        assert_eq!(back.position(), g.position());
        assert_eq!(back.moves(), g.moves());
    }

    #[test]
    fn record_replay_names_the_bad_ply() {
        let v = shogi();
        let mut r = GameRecord::from_game(&Game::new(Position::start(v), None), None, "A", "B");
        r.moves = vec!["7g7f".into(), "3c3d".into(), "7f7e".into(), "2b2a".into()];
        let e = r.to_game(v).unwrap_err();
        match &e {
            RecordError::IllegalMove { ply, text, .. } => assert_eq!((*ply, text.as_str()), (4, "2b2a")),
            other => panic!("{other:?}"),
        }
        let msg = e.to_string();
        assert!(msg.contains("ply 4") && msg.contains("2b2a"), "{msg}");
    }

    #[test]
    fn record_replay_checks_variant_and_rules_ending() {
        let v = shogi();
        let g = Game::new(Position::start(v), None);
        let mut r = GameRecord::from_game(&g, None, "A", "B");
        let mini = Variant::builtin("minishogi").unwrap();
        assert!(matches!(r.to_game(mini), Err(RecordError::VariantMismatch { .. })));
        r.end = Some(GameEnd { outcome: Outcome::Win(Color::Black), ending: Ending::Rules(rules::TerminationReason::Checkmate) });
        assert!(matches!(r.to_game(v), Err(RecordError::EndMismatch { .. })));
        r.end = Some(GameEnd::loss_of(Color::Black, Ending::Resignation));
        assert!(r.to_game(v).is_ok());
    }

    #[test]
    fn record_load_variant_uses_the_builtin_for_default_options() {
        for name in rules::BUILTIN {
            let v = Variant::builtin(name).unwrap();
            let r = GameRecord::from_game(&Game::new(Position::start(v), None), None, "A", "B");
            assert!(std::ptr::eq(r.load_variant().unwrap(), v), "{name}");
            assert!(r.to_game(v).is_ok());
        }
    }

    #[test]
    fn record_times() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(UNIX_EPOCH + Duration::from_secs(1_709_210_096)), "2024-02-29T12:34:56Z");
        assert_eq!(rfc3339_utc(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(slash_time("2024-05-01T12:34:56Z").as_deref(), Some("2024/05/01 12:34:56"));
        assert_eq!(slash_time("2024-05-01T12:34:56.789+09:00").as_deref(), Some("2024/05/01 12:34:56"));
        assert_eq!(slash_time("2024-05-01 12:34:56").as_deref(), Some("2024/05/01 12:34:56"));
        assert_eq!(slash_time("yesterday"), None);
        assert_eq!(slash_time("2024-05-01"), None);
    }

    /// CSA and KIF written by the arena read back to the same game: random games with
    /// captures, promotions and drops, from the start, a handicap and a diagram start.
    #[test]
    fn csa_and_kif_read_back_what_the_arena_writes() {
        use rand::seq::IndexedRandom;
        use rand::SeedableRng;
        let v = shogi();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let starts = [
            v.start_sfen.clone(),
            "lnsgkgsnl/1r7/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1".to_string(),
            "lnsgk2nl/1r4gs1/p1pppp1pp/6p2/1p5P1/2P6/PP1PPPP1P/1SG4R1/LN2KGSNL b Bb 1".to_string(),
        ];
        for (i, start) in starts.iter().cycle().take(30).enumerate() {
            let mut g = Game::new(Position::from_sfen(v, start).unwrap(), Some(160));
            while !g.is_over() {
                let moves = g.legal_moves();
                let list: Vec<_> = moves.iter().copied().collect();
                g.play(*list.choose(&mut rng).unwrap()).unwrap();
            }
            let mut r = GameRecord::from_game(&g, rules_end(&g).or(Some(GameEnd::loss_of(g.position().side_to_move(), Ending::Resignation))), "Sente", "Gote");
            r.comments = (0..r.moves.len()).map(|k| (k % 3 == 0).then(|| format!("{:+}", k as i64 - 50))).collect();
            for (format, back) in [("csa", csa::from_csa(&r.to_csa().unwrap())), ("kif", kif::from_kif(&r.to_kif().unwrap()))] {
                let back = back.unwrap_or_else(|e| panic!("game {i} {format}: {e}"));
                assert_eq!(back.moves, r.moves, "game {i} {format}");
                assert!(
                    sfen::same_sfen(&back.start_sfen, start) || back.start_sfen.split(' ').take(3).eq(start.split(' ').take(3)),
                    "game {i} {format}: {} vs {start}",
                    back.start_sfen
                );
                assert_eq!((back.black.as_str(), back.white.as_str()), ("Sente", "Gote"), "{format}");
                assert_eq!(back.comments, r.comments, "game {i} {format}");
                assert_eq!(back.end.map(|e| e.outcome), r.end.map(|e| e.outcome), "game {i} {format}");
            }
        }
        assert!(matches!(csa::from_csa("PI\n+\n+7776FU\n-7776FU\n"), Err(RecordError::IllegalMove { ply: 2, .. })));
        let e = kif::from_kif("手合割：平手\n   1 ７六歩(77)\n   2 ３四XX(33)\n").unwrap_err().to_string();
        assert!(e.contains("line 3"), "{e}");
    }

    #[test]
    fn record_summary_line() {
        let v = shogi();
        let mut r = GameRecord::from_game(&Game::new(Position::start(v), None), None, "A", "B");
        assert_eq!(r.summary(), "A - B: * (unfinished, 0 plies)");
        r.end = Some(GameEnd::loss_of(Color::White, Ending::TimeForfeit));
        assert_eq!(r.summary(), "A - B: 1-0 (time-forfeit, 0 plies)");
    }
}
