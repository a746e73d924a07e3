//! Kakinoki KIF record text (UTF-8), for standard shogi.
//!
//! ```text
//! #KIF version=2.0 encoding=UTF-8
//! 開始日時：2024/05/01 12:34:56
//! 棋戦：event
//! 手合割：平手
//! 先手：black
//! 後手：white
//! 手数----指手---------消費時間--
//!    1 ７六歩(77)   ( 0:12/00:00:12)
//! *+35
//!    2 ３四歩(33)   ( 0:00/00:00:00)
//!    3 ２二角成(88) ( 0:01/00:00:13)
//!    4 同　銀(31)   ( 0:00/00:00:00)
//!    5 ４五角打     ( 0:00/00:00:13)
//!    6 投了         ( 0:00/00:00:00)
//! まで5手で先手の勝ち
//! ```
//!
//! Kakinoki's own rule is that a `.kif` file is Shift-JIS and a `.kifu` file UTF-8; this
//! text is UTF-8 and says so in its first line, so `.kifu` is the name that every reader
//! takes right (cshogi's reader, for one, picks the encoding by the extension alone).
//!
//! A start other than the standard one is a handicap name (`手合割：香落ち` …) where it is
//! one of Kakinoki's, else a board diagram. Times are `(this move m:ss/this side's total
//! h:mm:ss)`, whole seconds rounded down, zero when unknown. The ending is a last move
//! line (`投了`, `詰み`, `千日手`, `持将棋`, `切れ負け`, `反則勝ち`, `反則負け`, `入玉勝ち`,
//! `中断`) and a summary naming the winner the way readers parse it (`まで76手で後手の勝ち`,
//! `まで80手で先手の反則負け`, `まで90手で千日手`, …).

use super::{one_line, slash_time, standard_shogi, GameRecord, RecordError, Replay};
use crate::ending::{Ending, GameEnd};
use rules::{Color, Move, MoveKind, Outcome, PieceKind, Position, TerminationReason, Variant};

const FILES: [char; 9] = ['１', '２', '３', '４', '５', '６', '７', '８', '９'];
const RANKS: [char; 9] = ['一', '二', '三', '四', '五', '六', '七', '八', '九'];

/// Kakinoki's handicap names for their start positions (board, side, hands).
const HANDICAPS: [(&str, &str); 14] = [
    ("平手", "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b -"),
    ("香落ち", "lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("右香落ち", "1nsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("角落ち", "lnsgkgsnl/1r7/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("飛車落ち", "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("飛香落ち", "lnsgkgsn1/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("二枚落ち", "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("三枚落ち", "lnsgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("四枚落ち", "1nsgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("五枚落ち", "2sgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("左五枚落ち", "1nsgkgs2/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("六枚落ち", "2sgkgs2/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("八枚落ち", "3gkg3/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
    ("十枚落ち", "4k4/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w -"),
];

/// KIF text of a standard shogi game (`Unsupported` for other variants).
pub fn to_kif(record: &GameRecord) -> Result<String, RecordError> {
    let v = standard_shogi(record, "KIF")?;
    let replay = Replay::new(record, v)?;
    let mut out = String::new();
    let mut line = |s: &str| {
        out.push_str(s);
        out.push('\n');
    };
    line("#KIF version=2.0 encoding=UTF-8");
    if let Some(t) = record.start_time.as_deref().and_then(slash_time) {
        line(&format!("開始日時：{t}"));
    }
    if let Some(e) = record.event.as_deref().filter(|e| !e.trim().is_empty()) {
        line(&format!("棋戦：{}", one_line(e)));
    }
    if let Some(note) = super::csa::note(record) {
        line(&format!("備考：{note}"));
    }
    let start = replay.game.start();
    let board_start = start.to_sfen().split_whitespace().take(3).collect::<Vec<_>>().join(" ");
    match HANDICAPS.iter().find(|(_, s)| *s == board_start) {
        Some((name, _)) => line(&format!("手合割：{name}")),
        None => line(&board_diagram(start)?),
    }
    line(&format!("先手：{}", one_line(&record.black)));
    line(&format!("後手：{}", one_line(&record.white)));
    line("手数----指手---------消費時間--");

    let mut totals = [0u64; 2];
    let mut previous_to = None;
    for (i, (pos, m)) in replay.plies.iter().enumerate() {
        let secs = record.move_times_ms.get(i).map_or(0, |ms| ms / 1000);
        let side = pos.side_to_move().index();
        totals[side] += secs;
        let text = kif_move(pos, *m, previous_to)?;
        line(&move_line(i + 1, &text, secs, totals[side]));
        if let Some(Some(c)) = record.comments.get(i) {
            line(&format!("*{}", one_line(c)));
        }
        previous_to = Some(m.to());
    }
    let n = replay.plies.len();
    let to_move = replay.to_move();
    let (word, summary) = ending(record.end, to_move, n);
    line(&move_line(n + 1, word, 0, totals[to_move.index()]));
    line(&summary);
    Ok(out)
}

impl GameRecord {
    /// [`to_kif`].
    pub fn to_kif(&self) -> Result<String, RecordError> {
        to_kif(self)
    }
}

/// `   1 ７六歩(77)   ( 0:12/00:00:12)`: the move padded to 12 columns (a full-width
/// character takes two).
fn move_line(number: usize, text: &str, secs: u64, total: u64) -> String {
    let width: usize = text.chars().map(|c| if c.is_ascii() { 1 } else { 2 }).sum();
    let pad = " ".repeat(12usize.saturating_sub(width));
    format!("{number:>4} {text}{pad} ({:>2}:{:02}/{:02}:{:02}:{:02})", secs / 60, secs % 60, total / 3600, total % 3600 / 60, total % 60)
}

/// The piece's name in move text: 歩 … 龍, the promoted minor pieces in two characters.
fn piece_name(v: &Variant, k: PieceKind) -> Result<&'static str, RecordError> {
    Ok(match v.kind(k).token.as_str() {
        "P" => "歩",
        "L" => "香",
        "N" => "桂",
        "S" => "銀",
        "G" => "金",
        "B" => "角",
        "R" => "飛",
        "K" => "玉",
        "+P" => "と",
        "+L" => "成香",
        "+N" => "成桂",
        "+S" => "成銀",
        "+B" => "馬",
        "+R" => "龍",
        _ => return Err(RecordError::Unsupported { format: "KIF", variant: v.name.clone() }),
    })
}

/// The piece's one-character name on a board diagram.
fn diagram_name(v: &Variant, k: PieceKind) -> Result<&'static str, RecordError> {
    Ok(match v.kind(k).token.as_str() {
        "+L" => "杏",
        "+N" => "圭",
        "+S" => "全",
        _ => piece_name(v, k)?,
    })
}

/// `７六歩(77)`, `同　銀(31)`, `２二角成(88)`, `２二銀不成(31)`, `５五角打`.
fn kif_move(pos: &Position, m: Move, previous_to: Option<rules::Square>) -> Result<String, RecordError> {
    let v = pos.variant();
    let g = &v.geometry;
    let dest = |to: rules::Square| {
        if previous_to == Some(to) {
            "同　".to_string()
        } else {
            let (f, r) = g.coords(to);
            format!("{}{}", FILES[f as usize], RANKS[r as usize])
        }
    };
    Ok(match m.kind() {
        MoveKind::Board { from, to, promote } => {
            let kind = pos.piece_at(from).expect("a replayed board move starts on a piece").kind;
            let suffix = if promote {
                "成"
            } else if pos.is_legal(Move::board(from, to, true)) {
                "不成"
            } else {
                ""
            };
            let (ff, fr) = g.coords(from);
            format!("{}{}{suffix}({}{})", dest(to), piece_name(v, kind)?, ff + 1, fr + 1)
        }
        MoveKind::Drop { kind, to } => format!("{}{}打", dest(to), piece_name(v, kind)?),
        MoveKind::PocketIn { .. } | MoveKind::PocketDrop { .. } => return Err(RecordError::Unsupported { format: "KIF", variant: v.name.clone() }),
    })
}

/// Kanji count for hands: 二 … 十八.
fn kanji_number(n: u8) -> String {
    let digit = |d: u8| RANKS[(d - 1) as usize];
    match n {
        0 | 1 => String::new(),
        2..=9 => digit(n).to_string(),
        10 => "十".into(),
        11..=19 => format!("十{}", digit(n - 10)),
        _ => n.to_string(),
    }
}

/// `飛　角　金二　歩三　`, or `なし`.
fn hand_text(pos: &Position, c: Color) -> Result<String, RecordError> {
    let v = pos.variant();
    let mut out = String::new();
    for &k in &v.hand_kinds {
        let n = pos.hand_count(c, k);
        if n > 0 {
            out.push_str(piece_name(v, k)?);
            out.push_str(&kanji_number(n));
            out.push('　');
        }
    }
    Ok(if out.is_empty() { "なし".into() } else { out })
}

/// Kakinoki's board diagram: White's hand, the board (White's pieces marked `v`), Black's
/// hand, and `後手番` when White moves first.
fn board_diagram(pos: &Position) -> Result<String, RecordError> {
    let v = pos.variant();
    let g = &v.geometry;
    let mut out = format!("後手の持駒：{}\n", hand_text(pos, Color::White)?);
    out.push_str("  ９ ８ ７ ６ ５ ４ ３ ２ １\n");
    out.push_str("+---------------------------+\n");
    for r in 0..g.ranks {
        out.push('|');
        for f in (0..g.files).rev() {
            let sq = g.square_at(f as i8, r as i8).expect("on the board");
            match pos.piece_at(sq) {
                None => out.push_str(" ・"),
                Some(p) => {
                    out.push(if p.color == Color::White { 'v' } else { ' ' });
                    out.push_str(diagram_name(v, p.kind)?);
                }
            }
        }
        out.push('|');
        out.push(RANKS[r as usize]);
        out.push('\n');
    }
    out.push_str("+---------------------------+\n");
    out.push_str(&format!("先手の持駒：{}", hand_text(pos, Color::Black)?));
    if pos.side_to_move() == Color::White {
        out.push_str("\n後手番");
    }
    Ok(out)
}

fn side_name(c: Color) -> &'static str {
    match c {
        Color::Black => "先手",
        Color::White => "後手",
    }
}

/// The last move line's word and the summary line, given the side to move at the end
/// and the number of moves played.
fn ending(end: Option<GameEnd>, to_move: Color, n: usize) -> (&'static str, String) {
    let Some(end) = end else {
        return ("中断", format!("まで{n}手で中断"));
    };
    match end.outcome {
        Outcome::Draw => match end.ending {
            Ending::Rules(TerminationReason::Repetition) => ("千日手", format!("まで{n}手で千日手")),
            Ending::Crash => ("中断", format!("まで{n}手で中断")),
            _ => ("持将棋", format!("まで{n}手で持将棋")),
        },
        Outcome::Win(winner) => {
            let loser = !winner;
            let loser_on_move = loser == to_move;
            let wins = format!("まで{n}手で{}の勝ち", side_name(winner));
            match end.ending {
                Ending::Rules(TerminationReason::Checkmate) if loser_on_move => ("詰み", wins),
                Ending::Rules(TerminationReason::Declaration) if !loser_on_move => ("入玉勝ち", format!("まで{n}手で{}の入玉勝ち", side_name(winner))),
                // A foul by the rules: the loser may or may not be on move.
                Ending::Rules(TerminationReason::PerpetualCheck | TerminationReason::DropMate) => {
                    if loser_on_move {
                        ("反則負け", format!("まで{n}手で{}の反則負け", side_name(loser)))
                    } else {
                        ("反則勝ち", format!("まで{n}手で{}の反則勝ち", side_name(winner)))
                    }
                }
                Ending::Rules(TerminationReason::NoLegalMoves | TerminationReason::Flag) | Ending::Resignation | Ending::AdjudicatedWin if loser_on_move => {
                    ("投了", wins)
                }
                Ending::TimeForfeit if loser_on_move => ("切れ負け", wins),
                Ending::IllegalMove if loser_on_move => ("反則負け", format!("まで{n}手で{}の反則負け", side_name(loser))),
                // A crash, or an ending that does not fit whose move it is: the game
                // stopped, and the summary names the winner.
                _ => ("中断", wins),
            }
        }
    }
}

/// Black's token of a piece name in KIF text (move text or a board diagram).
fn token_of_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "歩" => "P",
        "香" => "L",
        "桂" => "N",
        "銀" => "S",
        "金" => "G",
        "角" => "B",
        "飛" => "R",
        "玉" | "王" => "K",
        "と" => "+P",
        "成香" | "杏" => "+L",
        "成桂" | "圭" => "+N",
        "成銀" | "全" => "+S",
        "馬" => "+B",
        "龍" | "竜" => "+R",
        _ => return None,
    })
}

/// `一` … `十八` → 1 … 18.
fn kanji_value(s: &str) -> Option<u32> {
    let digit = |c: char| RANKS.iter().position(|&r| r == c).map(|i| i as u32 + 1);
    let cs: Vec<char> = s.chars().collect();
    match cs.as_slice() {
        [] => Some(1),
        ['十'] => Some(10),
        ['十', d] => Some(10 + digit(*d)?),
        [d] => digit(*d),
        _ => None,
    }
}

/// Reads KIF text (UTF-8) of a standard shogi game: the names, the start (a handicap name
/// or a board diagram), the moves (each checked by the rules engine), `*` comments and
/// the ending. An error names the line.
pub fn from_kif(text: &str) -> Result<GameRecord, RecordError> {
    let v = rules::Variant::builtin("shogi")?;
    let bad = |n: usize, line: &str, why: &str| RecordError::BadLine(format!("KIF line {}: {why}: '{line}'", n + 1));
    let mut names = [String::new(), String::new()];
    let mut start: Option<String> = None;
    let mut rows: Vec<String> = Vec::new();
    let mut hands = [String::new(), String::new()];
    let mut white_first = false;
    let mut pos: Option<Position> = None;
    let mut previous_to: Option<rules::Square> = None;
    let mut moves = Vec::new();
    let mut comments: Vec<Option<String>> = Vec::new();
    let mut end = super::TextEnd::None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(c) = line.strip_prefix('*') {
            if let Some(last) = comments.last_mut() {
                *last = Some(c.trim().to_string());
            }
            continue;
        }
        if let Some((key, value)) = line.split_once('：') {
            match key {
                "先手" | "下手" => names[0] = value.trim().to_string(),
                "後手" | "上手" => names[1] = value.trim().to_string(),
                "手合割" => {
                    let (_, sfen) = HANDICAPS.iter().find(|(name, _)| *name == value.trim()).ok_or_else(|| bad(n, line, "unknown handicap"))?;
                    start = Some(format!("{sfen} 1"));
                }
                "先手の持駒" | "後手の持駒" | "下手の持駒" | "上手の持駒" => {
                    let side = usize::from(key.starts_with('後') || key.starts_with('上'));
                    for item in value.split(['　', ' ']).filter(|s| !s.is_empty() && *s != "なし") {
                        let mut cs = item.chars();
                        let name: String = cs.next().into_iter().collect();
                        let token = token_of_name(&name).ok_or_else(|| bad(n, line, "unknown hand piece"))?;
                        let count = kanji_value(cs.as_str()).ok_or_else(|| bad(n, line, "bad count"))?;
                        let t = if side == 1 { token.to_ascii_lowercase() } else { token.to_string() };
                        hands[side] += &if count > 1 { format!("{count}{t}") } else { t };
                    }
                }
                _ => {}
            }
            continue;
        }
        if let Some(row) = line.strip_prefix('|') {
            let cells: Vec<char> = row.chars().take(18).collect();
            if cells.len() != 18 {
                return Err(bad(n, line, "a diagram row has nine cells"));
            }
            let mut sfen_row = String::new();
            let mut empty = 0;
            for cell in cells.chunks(2) {
                if cell[1] == '・' {
                    empty += 1;
                    continue;
                }
                let token = token_of_name(&cell[1].to_string()).ok_or_else(|| bad(n, line, "unknown piece"))?;
                if empty > 0 {
                    sfen_row += &empty.to_string();
                    empty = 0;
                }
                sfen_row += &if cell[0] == 'v' { token.to_ascii_lowercase() } else { token.to_string() };
            }
            if empty > 0 {
                sfen_row += &empty.to_string();
            }
            rows.push(sfen_row);
            continue;
        }
        if line.starts_with("後手番") || line.starts_with("上手番") {
            white_first = true;
            continue;
        }
        // A move line: `   1 ７六歩(77)   ( 0:12/00:00:12)`.
        let t = line.trim_start();
        let Some(digits) = t.find(|c: char| !c.is_ascii_digit()).filter(|&i| i > 0) else { continue };
        let body = t[digits..].trim_start_matches(' ');
        let text = body.split(' ').next().unwrap_or_default();
        if pos.is_none() {
            let sfen = start.take().or_else(|| diagram_sfen(&rows, &hands, white_first)).unwrap_or_else(|| v.start_sfen.clone());
            pos = Some(Position::from_sfen(v, &sfen).map_err(|source| RecordError::Sfen { sfen: sfen.clone(), source })?);
            start = Some(sfen);
        }
        let p = pos.as_mut().expect("set above");
        use crate::ending::Ending as E;
        let ended = match text {
            "投了" | "詰み" => Some(super::TextEnd::MoverLost(E::Resignation)),
            "切れ負け" => Some(super::TextEnd::MoverLost(E::TimeForfeit)),
            "反則負け" => Some(super::TextEnd::MoverLost(E::IllegalMove)),
            "反則勝ち" => Some(super::TextEnd::MoverWon(E::IllegalMove)),
            "入玉勝ち" => Some(super::TextEnd::MoverWon(E::AdjudicatedWin)),
            "千日手" | "持将棋" => Some(super::TextEnd::Draw),
            "中断" => Some(super::TextEnd::None),
            _ => None,
        };
        if let Some(e) = ended {
            end = e;
            break;
        }
        let (dest, rest) = match text.strip_prefix('同') {
            Some(rest) => (previous_to.ok_or_else(|| bad(n, line, "同 on the first move"))?, rest.trim_start_matches('　')),
            None => {
                let mut cs = text.chars();
                let (Some(f), Some(r)) = (cs.next(), cs.next()) else { return Err(bad(n, line, "not a move")) };
                let (Some(f), Some(r)) = (FILES.iter().position(|&x| x == f), RANKS.iter().position(|&x| x == r)) else {
                    return Err(bad(n, line, "not a square"));
                };
                (v.geometry.square_at(f as i8, r as i8).expect("on a 9x9 board"), cs.as_str())
            }
        };
        let (piece, from) = match rest.split_once('(') {
            Some((piece, from)) => (piece, Some(from.trim_end_matches(')'))),
            None => (rest, None),
        };
        let to = v.geometry.square_name(dest);
        let usi = if let Some(name) = piece.strip_suffix('打') {
            let token = token_of_name(name).filter(|t| !t.starts_with('+')).ok_or_else(|| bad(n, line, "unknown piece"))?;
            format!("{token}*{to}")
        } else {
            let from = from.and_then(|f| {
                let b = f.as_bytes();
                (b.len() == 2 && b.iter().all(|c| (b'1'..=b'9').contains(c))).then(|| v.geometry.square_at((b[0] - b'1') as i8, (b[1] - b'1') as i8)).flatten()
            });
            let from = from.ok_or_else(|| bad(n, line, "no origin square (NN)"))?;
            let (base, promote) = match piece.strip_suffix("不成") {
                Some(base) => (base, false),
                None => match piece.strip_suffix('成').filter(|b| token_of_name(b).is_some()) {
                    Some(base) => (base, true),
                    None => (piece, false),
                },
            };
            let named = token_of_name(base).ok_or_else(|| bad(n, line, "unknown piece"))?;
            if p.piece_at(from).map(|x| v.kind(x.kind).token.as_str()) != Some(named)
                && !(named == "K" && p.piece_at(from).is_some_and(|x| v.kind(x.kind).royal))
            {
                return Err(bad(n, line, "the piece named is not on the origin square"));
            }
            format!("{}{to}{}", v.geometry.square_name(from), if promote { "+" } else { "" })
        };
        let m = p.parse_usi(&usi).map_err(|source| RecordError::IllegalMove { ply: moves.len() + 1, text: usi.clone(), source })?;
        p.play_unchecked(m);
        previous_to = Some(dest);
        moves.push(usi);
        comments.push(None);
    }
    let start = start.or_else(|| diagram_sfen(&rows, &hands, white_first)).unwrap_or_else(|| v.start_sfen.clone());
    super::record_from_text(v, start, moves, comments, names, end)
}

/// The SFEN of a board diagram's nine rows and hands, `None` without a whole diagram.
fn diagram_sfen(rows: &[String], hands: &[String; 2], white_first: bool) -> Option<String> {
    (rows.len() == 9).then(|| {
        let h = format!("{}{}", hands[0], hands[1]);
        format!("{} {} {} 1", rows.join("/"), if white_first { "w" } else { "b" }, if h.is_empty() { "-" } else { &h })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Game;

    fn shogi() -> &'static Variant {
        Variant::builtin("shogi").unwrap()
    }

    #[test]
    fn record_kif_refuses_other_variants() {
        let v = Variant::builtin("pocket-copper").unwrap();
        let r = GameRecord::from_game(&Game::new(Position::start(v), None), None, "a", "b");
        assert!(matches!(to_kif(&r), Err(RecordError::Unsupported { format: "KIF", .. })));
    }

    #[test]
    fn record_kif_move_lines() {
        assert_eq!(move_line(1, "７六歩(77)", 0, 0), "   1 ７六歩(77)   ( 0:00/00:00:00)");
        assert_eq!(move_line(3, "２二角成(88)", 75, 3725), "   3 ２二角成(88) ( 1:15/01:02:05)");
        assert_eq!(move_line(5, "５五角打", 0, 0), "   5 ５五角打     ( 0:00/00:00:00)");
        assert_eq!(move_line(77, "投了", 0, 0), "  77 投了         ( 0:00/00:00:00)");
        assert_eq!(move_line(101, "同　成銀(23)", 0, 0), " 101 同　成銀(23) ( 0:00/00:00:00)");
        assert_eq!(kanji_number(2), "二");
        assert_eq!(kanji_number(10), "十");
        assert_eq!(kanji_number(18), "十八");
    }

    #[test]
    fn record_kif_handicap_and_diagram_starts() {
        let v = shogi();
        // Lance handicap: a name readers know.
        let lance = "lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1";
        let mut g = Game::new(Position::from_sfen(v, lance).unwrap(), None);
        g.play_usi("1c1d").unwrap();
        let r = GameRecord::from_game(&g, None, "上", "下");
        let text = to_kif(&r).unwrap();
        assert!(text.contains("\n手合割：香落ち\n"), "{text}");
        assert!(text.contains("\n   1 １四歩(13)   ( 0:00/00:00:00)\n"), "{text}");
        assert!(text.ends_with("   2 中断         ( 0:00/00:00:00)\nまで1手で中断\n"), "{text}");

        // Any other start: a board diagram. After 7g7f 3c3d 8h2b+ 3a2b, White to move
        // with a bishop in each hand and three pawns in Black's.
        let sfen = "lnsgkg1nl/1r5s1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL w B3Pb 6";
        let g = Game::new(Position::from_sfen(v, sfen).unwrap(), None);
        let text = to_kif(&GameRecord::from_game(&g, None, "a", "b")).unwrap();
        let diagram = "\
後手の持駒：角　
  ９ ８ ７ ６ ５ ４ ３ ２ １
+---------------------------+
|v香v桂v銀v金v玉v金 ・v桂v香|一
| ・v飛 ・ ・ ・ ・ ・v銀 ・|二
|v歩v歩v歩v歩v歩v歩 ・v歩v歩|三
| ・ ・ ・ ・ ・ ・v歩 ・ ・|四
| ・ ・ ・ ・ ・ ・ ・ ・ ・|五
| ・ ・ 歩 ・ ・ ・ ・ ・ ・|六
| 歩 歩 ・ 歩 歩 歩 歩 歩 歩|七
| ・ ・ ・ ・ ・ ・ ・ 飛 ・|八
| 香 桂 銀 金 玉 金 銀 桂 香|九
+---------------------------+
先手の持駒：角　歩三　
後手番
先手：a
後手：b
";
        assert!(text.contains(diagram), "{text}");
        assert!(!text.contains("手合割"), "{text}");
    }

    #[test]
    fn record_kif_endings() {
        use Color::*;
        let loss = |l, e| Some(GameEnd::loss_of(l, e));
        let rules_win = |w, r| Some(GameEnd { outcome: Outcome::Win(w), ending: Ending::Rules(r) });
        let e = |end, to_move| {
            let (w, s) = ending(end, to_move, 10);
            format!("{w} / {s}")
        };
        assert_eq!(e(loss(Black, Ending::Resignation), Black), "投了 / まで10手で後手の勝ち");
        assert_eq!(e(rules_win(White, TerminationReason::Checkmate), Black), "詰み / まで10手で後手の勝ち");
        assert_eq!(e(loss(White, Ending::TimeForfeit), White), "切れ負け / まで10手で先手の勝ち");
        assert_eq!(e(loss(White, Ending::IllegalMove), White), "反則負け / まで10手で後手の反則負け");
        assert_eq!(e(rules_win(Black, TerminationReason::Declaration), Black), "入玉勝ち / まで10手で先手の入玉勝ち");
        assert_eq!(e(rules_win(Black, TerminationReason::PerpetualCheck), Black), "反則勝ち / まで10手で先手の反則勝ち");
        assert_eq!(e(rules_win(White, TerminationReason::PerpetualCheck), Black), "反則負け / まで10手で先手の反則負け");
        let draw = |r| Some(GameEnd { outcome: Outcome::Draw, ending: r });
        assert_eq!(e(draw(Ending::Rules(TerminationReason::Repetition)), Black), "千日手 / まで10手で千日手");
        assert_eq!(e(draw(Ending::Rules(TerminationReason::MaxPlies)), Black), "持将棋 / まで10手で持将棋");
        assert_eq!(e(loss(White, Ending::Crash), Black), "中断 / まで10手で先手の勝ち");
        assert_eq!(e(None, Black), "中断 / まで10手で中断");
    }
}
