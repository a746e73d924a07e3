//! CSA standard record text, V3.0 (UTF-8), for standard shogi.
//!
//! ```text
//! 'CSA encoding=UTF-8
//! V3.0
//! N+black
//! N-white
//! $EVENT:event
//! $START_TIME:2024/05/01 12:34:56
//! $MAX_MOVES:512
//! $JISHOGI:27
//! $NOTE:round 3, opening 12
//! PI
//! +
//! +7776FU
//! T12
//! '** +35
//! -8384FU
//! ...
//! %TORYO
//! 'arena: resignation, black wins
//! ```
//!
//! The start is `PI` for the standard start, else `P1`..`P9` and the hands `P+00FU00KA`.
//! A move names the piece after it (`+8822UM` promotes). `T` lines (whole seconds,
//! rounded down) follow the moves when the record has times, `'**` lines its comments.
//!
//! The ending line, chosen so that a reader that knows only the CSA rules (cshogi, for
//! one) finds the right winner: the loser on move → `%TORYO` (resignation, checkmate, no
//! legal move, an adjudicated win), `%TIME_UP`, `%ILLEGAL_MOVE`; the side on move
//! declares and wins → `%KACHI`; a foul by the rules (perpetual check, a mating pawn
//! drop) → `%+ILLEGAL_ACTION` / `%-ILLEGAL_ACTION` naming the loser; draws →
//! `%SENNICHITE` (repetition), `%MAX_MOVES` (length limit), `%JISHOGI` (other draws);
//! a crash and an unfinished game → `%CHUDAN`. The last line, a comment, names the
//! arena's ending and the result.

use super::{one_line, slash_time, standard_shogi, GameRecord, RecordError, Replay};
use crate::ending::{Ending, GameEnd};
use rules::{Color, Declaration, MoveKind, Outcome, PieceKind, Position, TerminationReason, Variant};

/// CSA V3.0 text of a standard shogi game (`Unsupported` for other variants).
pub fn to_csa(record: &GameRecord) -> Result<String, RecordError> {
    let v = standard_shogi(record, "CSA")?;
    let replay = Replay::new(record, v)?;
    let mut out = String::new();
    let mut line = |s: &str| {
        out.push_str(s);
        out.push('\n');
    };
    line("'CSA encoding=UTF-8");
    line("V3.0");
    line(&format!("N+{}", one_line(&record.black)));
    line(&format!("N-{}", one_line(&record.white)));
    if let Some(e) = record.event.as_deref().filter(|e| !e.trim().is_empty()) {
        line(&format!("$EVENT:{}", one_line(e)));
    }
    if let Some(t) = record.start_time.as_deref().and_then(slash_time) {
        line(&format!("$START_TIME:{t}"));
    }
    line(&format!("$MAX_MOVES:{}", replay.game.max_plies()));
    if v.declaration == Declaration::Csa27 {
        line("$JISHOGI:27");
    }
    if let Some(note) = note(record) {
        line(&format!("$NOTE:{note}"));
    }
    line(&start_position(replay.game.start())?);
    for (i, (pos, m)) in replay.plies.iter().enumerate() {
        line(&format!("{}{}", sign(pos.side_to_move()), csa_move(pos, *m)?));
        if let Some(ms) = record.move_times_ms.get(i) {
            line(&format!("T{}", ms / 1000));
        }
        if let Some(Some(c)) = record.comments.get(i) {
            line(&format!("'** {}", one_line(c)));
        }
    }
    let (token, comment) = ending(record.end, replay.to_move());
    line(&token);
    line(&format!("'arena: {comment}"));
    Ok(out)
}

impl GameRecord {
    /// [`to_csa`].
    pub fn to_csa(&self) -> Result<String, RecordError> {
        to_csa(self)
    }
}

/// Round and opening for `$NOTE` / `備考`.
pub(crate) fn note(record: &GameRecord) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(r) = record.round {
        parts.push(format!("round {r}"));
    }
    if let Some(o) = record.opening_index {
        parts.push(format!("opening {o}"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn sign(c: Color) -> char {
    match c {
        Color::Black => '+',
        Color::White => '-',
    }
}

/// The CSA code of a piece kind of standard shogi.
fn piece_code(v: &Variant, k: PieceKind) -> Result<&'static str, RecordError> {
    Ok(match v.kind(k).token.as_str() {
        "P" => "FU",
        "L" => "KY",
        "N" => "KE",
        "S" => "GI",
        "G" => "KI",
        "B" => "KA",
        "R" => "HI",
        "K" => "OU",
        "+P" => "TO",
        "+L" => "NY",
        "+N" => "NK",
        "+S" => "NG",
        "+B" => "UM",
        "+R" => "RY",
        _ => return Err(RecordError::Unsupported { format: "CSA", variant: v.name.clone() }),
    })
}

/// `77` for square 7g.
fn square(v: &Variant, sq: rules::Square) -> String {
    let (f, r) = v.geometry.coords(sq);
    format!("{}{}", f + 1, r + 1)
}

/// `7776FU`, `8822UM`, `0055KA` (without the side's sign).
fn csa_move(pos: &Position, m: rules::Move) -> Result<String, RecordError> {
    let v = pos.variant();
    Ok(match m.kind() {
        MoveKind::Board { from, to, promote } => {
            let kind = pos.piece_at(from).expect("a replayed board move starts on a piece").kind;
            let after = if promote { v.kind(kind).promotes_to.unwrap_or(kind) } else { kind };
            format!("{}{}{}", square(v, from), square(v, to), piece_code(v, after)?)
        }
        MoveKind::Drop { kind, to } => format!("00{}{}", square(v, to), piece_code(v, kind)?),
        MoveKind::PocketIn { .. } | MoveKind::PocketDrop { .. } => return Err(RecordError::Unsupported { format: "CSA", variant: v.name.clone() }),
    })
}

/// `PI` and the side to move for the standard start, else the board, the hands and the side.
fn start_position(pos: &Position) -> Result<String, RecordError> {
    let v = pos.variant();
    let side = sign(pos.side_to_move());
    if super::sfen::same_sfen(&pos.to_sfen(), &v.start_sfen) || is_standard_start_but_move_number(pos) {
        return Ok(format!("PI\n{side}"));
    }
    let mut out = String::new();
    for r in 0..v.geometry.ranks {
        out.push_str(&format!("P{}", r + 1));
        for f in (0..v.geometry.files).rev() {
            let sq = v.geometry.square_at(f as i8, r as i8).expect("on the board");
            match pos.piece_at(sq) {
                None => out.push_str(" * "),
                Some(p) => {
                    out.push(sign(p.color));
                    out.push_str(piece_code(v, p.kind)?);
                }
            }
        }
        out.push('\n');
    }
    for c in Color::BOTH {
        let mut hand = String::new();
        for &k in &v.hand_kinds {
            for _ in 0..pos.hand_count(c, k) {
                hand.push_str("00");
                hand.push_str(piece_code(v, k)?);
            }
        }
        if !hand.is_empty() {
            out.push_str(&format!("P{}{hand}\n", sign(c)));
        }
    }
    out.push(side);
    Ok(out)
}

/// The standard start with another move number: CSA has no move number, so `PI` it is.
fn is_standard_start_but_move_number(pos: &Position) -> bool {
    let v = pos.variant();
    let first3 = |s: &str| s.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
    first3(&pos.to_sfen()) == first3(&v.start_sfen)
}

/// The ending line and the closing comment, given the side to move at the end.
fn ending(end: Option<GameEnd>, to_move: Color) -> (String, String) {
    let Some(end) = end else {
        return ("%CHUDAN".into(), "unfinished".into());
    };
    let result = match end.outcome {
        Outcome::Win(Color::Black) => "black wins",
        Outcome::Win(Color::White) => "white wins",
        Outcome::Draw => "draw",
    };
    let comment = format!("{}, {result}", end.name());
    let token = match end.outcome {
        Outcome::Draw => match end.ending {
            Ending::Rules(TerminationReason::Repetition) => "%SENNICHITE".to_string(),
            Ending::Rules(TerminationReason::MaxPlies) => "%MAX_MOVES".to_string(),
            Ending::Crash => "%CHUDAN".to_string(),
            _ => "%JISHOGI".to_string(),
        },
        Outcome::Win(winner) => {
            let loser = !winner;
            let loser_on_move = loser == to_move;
            match end.ending {
                Ending::Rules(TerminationReason::Declaration) if winner == to_move => "%KACHI".into(),
                // The repetition may end on either side's move; the sign names the loser.
                Ending::Rules(TerminationReason::PerpetualCheck | TerminationReason::DropMate) => {
                    format!("%{}ILLEGAL_ACTION", sign(loser))
                }
                Ending::Rules(TerminationReason::Checkmate | TerminationReason::NoLegalMoves | TerminationReason::Flag)
                | Ending::Resignation
                | Ending::AdjudicatedWin
                    if loser_on_move =>
                {
                    "%TORYO".into()
                }
                Ending::TimeForfeit if loser_on_move => "%TIME_UP".into(),
                Ending::IllegalMove if loser_on_move => "%ILLEGAL_MOVE".into(),
                // A crash, or an ending that does not fit whose move it is.
                _ => "%CHUDAN".into(),
            }
        }
    };
    (token, comment)
}

/// The piece kind of a CSA code (`FU` … `RY`) in standard shogi.
fn kind_of_code(v: &Variant, code: &str) -> Option<PieceKind> {
    let token = match code {
        "FU" => "P",
        "KY" => "L",
        "KE" => "N",
        "GI" => "S",
        "KI" => "G",
        "KA" => "B",
        "HI" => "R",
        "OU" => "K",
        "TO" => "+P",
        "NY" => "+L",
        "NK" => "+N",
        "NG" => "+S",
        "UM" => "+B",
        "RY" => "+R",
        _ => return None,
    };
    v.kind_by_token(token)
}

/// Square `77` → 7g (`None` off the board).
fn parse_square(v: &Variant, s: &str) -> Option<rules::Square> {
    let b = s.as_bytes();
    if b.len() != 2 || !b[0].is_ascii_digit() || !b[1].is_ascii_digit() || b[0] == b'0' || b[1] == b'0' {
        return None;
    }
    v.geometry.square_at((b[0] - b'1') as i8, (b[1] - b'1') as i8)
}

/// Reads CSA text of a standard shogi game (V2.2 or V3.0; the start as `PI` or `P1`…`P9`
/// with `P+`/`P-` hands): names, moves (each checked by the rules engine), `'**`
/// comments, the ending. An error names the line.
pub fn from_csa(text: &str) -> Result<GameRecord, RecordError> {
    let v = Variant::builtin("shogi")?;
    let bad = |n: usize, line: &str, why: &str| RecordError::BadLine(format!("CSA line {}: {why}: '{line}'", n + 1));
    let mut names = [String::new(), String::new()];
    let mut board: Option<Vec<String>> = None;
    let mut hands = String::new();
    let mut start_sfen: Option<String> = None;
    let mut pos: Option<Position> = None;
    let mut moves = Vec::new();
    let mut comments: Vec<Option<String>> = Vec::new();
    let mut end = super::TextEnd::None;
    for (n, raw) in text.lines().enumerate() {
        // Comments and headers run to the end of the line; other statements may share one, split by commas.
        let raw = raw.trim();
        if let Some(c) = raw.strip_prefix("'**") {
            if let Some(last) = comments.last_mut() {
                *last = Some(c.trim().to_string());
            }
            continue;
        }
        if raw.starts_with('\'') || raw.starts_with('$') || raw.starts_with("N+") || raw.starts_with("N-") {
            if let Some(name) = raw.strip_prefix("N+") {
                names[0] = name.to_string();
            } else if let Some(name) = raw.strip_prefix("N-") {
                names[1] = name.to_string();
            }
            continue;
        }
        for line in raw.split(',').map(str::trim).filter(|l| !l.is_empty()) {
            if line.starts_with('V') || line.starts_with('T') {
                continue;
            }
            if line == "PI" {
                board = Some(v.start_sfen.split_whitespace().next().unwrap_or_default().split('/').map(String::from).collect());
            } else if let Some(row) = line.strip_prefix('P').filter(|r| r.starts_with(|c: char| c.is_ascii_digit())) {
                let rank = usize::from(row.as_bytes()[0]).wrapping_sub(usize::from(b'1'));
                // A trailing empty cell may have lost its last space.
                let mut cells: Vec<char> = row[1..].chars().collect();
                cells.resize(cells.len().max(27), ' ');
                if rank >= 9 || cells.len() != 27 {
                    return Err(bad(n, line, "a board row has nine 3-character cells"));
                }
                let mut sfen_row = String::new();
                let mut empty = 0;
                for cell in cells.chunks(3) {
                    let cell: String = cell.iter().collect();
                    if cell.trim() == "*" {
                        empty += 1;
                        continue;
                    }
                    let code: String = cell.chars().skip(1).collect();
                    let kind = kind_of_code(v, &code).ok_or_else(|| bad(n, line, "unknown piece"))?;
                    if empty > 0 {
                        sfen_row += &empty.to_string();
                        empty = 0;
                    }
                    let token = &v.kind(kind).token;
                    sfen_row += &if cell.starts_with('-') { token.to_ascii_lowercase() } else { token.clone() };
                }
                if empty > 0 {
                    sfen_row += &empty.to_string();
                }
                let b = board.get_or_insert_with(|| vec!["9".to_string(); 9]);
                b[rank] = sfen_row;
            } else if let Some(rest) = line.strip_prefix("P+").or_else(|| line.strip_prefix("P-")) {
                let white = line.starts_with("P-");
                for chunk in rest.as_bytes().chunks(4) {
                    let code = std::str::from_utf8(chunk.get(2..).unwrap_or_default()).unwrap_or_default();
                    let kind = kind_of_code(v, code).filter(|_| chunk.starts_with(b"00")).ok_or_else(|| bad(n, line, "a hand piece is 00 and a code"))?;
                    let token = &v.kind(kind).token;
                    hands += &if white { token.to_ascii_lowercase() } else { token.clone() };
                }
            } else if (line == "+" || line == "-") && pos.is_none() {
                let rows = board.clone().ok_or_else(|| bad(n, line, "the side to move comes before the position"))?;
                let side = if line == "+" { "b" } else { "w" };
                let sfen = format!("{} {side} {} 1", rows.join("/"), if hands.is_empty() { "-" } else { &hands });
                pos = Some(Position::from_sfen(v, &sfen).map_err(|source| RecordError::Sfen { sfen: sfen.clone(), source })?);
                start_sfen = Some(sfen);
            } else if let Some(token) = line.strip_prefix('%') {
                use crate::ending::Ending as E;
                end = match token {
                    "TORYO" | "TSUMI" => super::TextEnd::MoverLost(E::Resignation),
                    "TIME_UP" => super::TextEnd::MoverLost(E::TimeForfeit),
                    "ILLEGAL_MOVE" => super::TextEnd::MoverLost(E::IllegalMove),
                    "KACHI" => super::TextEnd::MoverWon(E::AdjudicatedWin),
                    "SENNICHITE" | "HIKIWAKE" | "JISHOGI" | "MAX_MOVES" => super::TextEnd::Draw,
                    _ => super::TextEnd::None,
                };
            } else if line.starts_with('+') || line.starts_with('-') {
                let p = pos.as_mut().ok_or_else(|| bad(n, line, "a move before the position"))?;
                let body = &line[1..];
                if body.len() != 6 || !body.is_ascii() {
                    return Err(bad(n, line, "a move is a sign, two squares and a piece"));
                }
                let to = parse_square(v, &body[2..4]).ok_or_else(|| bad(n, line, "bad destination"))?;
                let kind = kind_of_code(v, &body[4..6]).ok_or_else(|| bad(n, line, "unknown piece"))?;
                let usi = if &body[..2] == "00" {
                    format!("{}*{}", v.kind(kind).token, v.geometry.square_name(to))
                } else {
                    let from = parse_square(v, &body[..2]).ok_or_else(|| bad(n, line, "bad origin"))?;
                    let promote = p.piece_at(from).is_some_and(|piece| piece.kind != kind && v.kind(piece.kind).promotes_to == Some(kind));
                    format!("{}{}{}", v.geometry.square_name(from), v.geometry.square_name(to), if promote { "+" } else { "" })
                };
                let m = p.parse_usi(&usi).map_err(|source| RecordError::IllegalMove { ply: moves.len() + 1, text: usi.clone(), source })?;
                p.play_unchecked(m);
                moves.push(usi);
                comments.push(None);
            } else {
                return Err(bad(n, line, "not a CSA line"));
            }
        }
    }
    let start_sfen = start_sfen.ok_or_else(|| RecordError::BadLine("CSA: no start position (PI or P1..P9, then + or -)".into()))?;
    super::record_from_text(v, start_sfen, moves, comments, names, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Game;

    fn shogi() -> &'static Variant {
        Variant::builtin("shogi").unwrap()
    }

    #[test]
    fn record_csa_refuses_other_variants() {
        let v = Variant::builtin("minishogi").unwrap();
        let r = GameRecord::from_game(&Game::new(Position::start(v), None), None, "a", "b");
        assert!(matches!(to_csa(&r), Err(RecordError::Unsupported { format: "CSA", .. })));
    }

    #[test]
    fn record_csa_position_lines_for_other_starts() {
        let v = shogi();
        // After 7g7f 3c3d 8h2b+ 3a2b: each side has a bishop in hand.
        let sfen = "lnsgkg1nl/1r5s1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL b Bb 5";
        let mut g = Game::new(Position::from_sfen(v, sfen).unwrap(), None);
        g.play_usi("B*4e").unwrap();
        let mut r = GameRecord::from_game(&g, None, "a", "b");
        r.move_times_ms = vec![2999];
        let text = to_csa(&r).unwrap();
        let expected = "\
$MAX_MOVES:512
$JISHOGI:27
P1-KY-KE-GI-KI-OU-KI * -KE-KY
P2 * -HI *  *  *  *  * -GI * 
P3-FU-FU-FU-FU-FU-FU * -FU-FU
P4 *  *  *  *  *  * -FU *  * 
P5 *  *  *  *  *  *  *  *  * 
P6 *  * +FU *  *  *  *  *  * 
P7+FU+FU * +FU+FU+FU+FU+FU+FU
P8 *  *  *  *  *  *  * +HI * 
P9+KY+KE+GI+KI+OU+KI+GI+KE+KY
P+00KA
P-00KA
+
+0045KA
T2
%CHUDAN
'arena: unfinished
";
        assert!(text.ends_with(expected), "{text}");
    }

    #[test]
    fn record_csa_endings() {
        use Color::*;
        let loss = |l, e| Some(GameEnd::loss_of(l, e));
        let rules_win = |w, r| Some(GameEnd { outcome: Outcome::Win(w), ending: Ending::Rules(r) });
        let draw = |e| Some(GameEnd { outcome: Outcome::Draw, ending: e });
        let t = |end, to_move| ending(end, to_move).0;
        assert_eq!(t(loss(Black, Ending::Resignation), Black), "%TORYO");
        assert_eq!(t(rules_win(White, TerminationReason::Checkmate), Black), "%TORYO");
        assert_eq!(t(loss(White, Ending::TimeForfeit), White), "%TIME_UP");
        assert_eq!(t(loss(White, Ending::IllegalMove), White), "%ILLEGAL_MOVE");
        assert_eq!(t(rules_win(Black, TerminationReason::Declaration), Black), "%KACHI");
        assert_eq!(t(rules_win(White, TerminationReason::PerpetualCheck), White), "%+ILLEGAL_ACTION");
        assert_eq!(t(rules_win(Black, TerminationReason::PerpetualCheck), Black), "%-ILLEGAL_ACTION");
        assert_eq!(t(rules_win(White, TerminationReason::PerpetualCheck), Black), "%+ILLEGAL_ACTION");
        assert_eq!(t(draw(Ending::Rules(TerminationReason::Repetition)), Black), "%SENNICHITE");
        assert_eq!(t(draw(Ending::Rules(TerminationReason::MaxPlies)), Black), "%MAX_MOVES");
        assert_eq!(t(draw(Ending::AdjudicatedDraw), Black), "%JISHOGI");
        assert_eq!(t(loss(Black, Ending::Crash), Black), "%CHUDAN");
        assert_eq!(t(loss(Black, Ending::Resignation), White), "%CHUDAN");
        assert_eq!(t(None, White), "%CHUDAN");
        assert_eq!(ending(loss(Black, Ending::Crash), Black).1, "crash, white wins");
    }
}
