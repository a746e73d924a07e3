//! SFEN text ⇄ [`Setup`] (an unvalidated position) ⇄ [`crate::Position`].
//!
//! Standard SFEN: `<board> <side> <hands> <move number>`. The project's extension,
//! used only by variants with pockets, is a fifth field with the pockets: `-` when both
//! are empty, else the pocketed piece of Black in upper case and/or of White in lower
//! case, promoted pieces with `+` (`C`, `c`, `Cc`, `+Bc`). The field may be left out
//! when both pockets are empty. See `docs/NOTATION.md`.

use crate::piece::{Piece, PieceKind, MAX_KINDS};
use crate::variant::Variant;
use crate::zobrist::MAX_HAND_COUNT;
use crate::{Color, Square};

/// A position as written, before the rules have checked it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// By square index; `None` is empty.
    pub board: Vec<Option<Piece>>,
    pub hands: [[u8; MAX_KINDS]; 2],
    pub pockets: [Option<PieceKind>; 2],
    pub side: Color,
    pub move_number: u32,
}

/// What is wrong with an SFEN, and where (1-based character column of the whole text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SfenError {
    #[error("SFEN has {found} fields; expected 3 to {max} (board, side, hands, move number{pocket})", pocket = if *.max == 5 { ", pockets" } else { "" })]
    FieldCount { found: usize, max: usize },
    #[error("SFEN board has {found} ranks; this variant has {expected}")]
    RankCount { found: usize, expected: usize },
    #[error("SFEN column {column}: rank {rank} has {found} squares; this variant has {expected} files")]
    RankWidth { column: usize, rank: char, found: usize, expected: usize },
    #[error("SFEN column {column}: unknown piece '{token}' for this variant")]
    UnknownPiece { column: usize, token: String },
    #[error("SFEN column {column}: '{token}' cannot be promoted")]
    NotPromotable { column: usize, token: String },
    #[error("SFEN column {column}: unexpected character '{ch}' in the {field}")]
    BadChar { column: usize, ch: char, field: &'static str },
    #[error("SFEN column {column}: side to move must be 'b' or 'w', found '{found}'")]
    BadSide { column: usize, found: String },
    #[error("SFEN column {column}: bad count in hands: {problem}")]
    BadHandCount { column: usize, problem: String },
    #[error("SFEN column {column}: {token} cannot be held in hand")]
    NotHandPiece { column: usize, token: String },
    #[error("SFEN column {column}: move number must be a positive integer, found '{found}'")]
    BadMoveNumber { column: usize, found: String },
    #[error("SFEN column {column}: this variant has no pockets, but a pocket field '{found}' was given")]
    NoPockets { column: usize, found: String },
    #[error("SFEN column {column}: pocket field '{found}': {problem}")]
    BadPocket { column: usize, found: String, problem: String },
    #[error("SFEN: {color} has {count} kings; at most one is allowed")]
    TooManyKings { color: &'static str, count: usize },
    #[error("SFEN: {color} {piece} on {square} could never move again (it must have promoted)")]
    DeadPiece { color: &'static str, piece: String, square: String },
    #[error("SFEN: {color} has two {piece}s on file {file}")]
    TwoOnFile { color: &'static str, piece: String, file: u8 },
    #[error("SFEN: the side not to move ({color}) is in check")]
    OpponentInCheck { color: &'static str },
    #[error("SFEN: {color}'s pocket holds a king")]
    KingInPocket { color: &'static str },
}

impl Setup {
    /// Parses the text; never panics, whatever the input.
    pub fn parse(v: &Variant, text: &str) -> Result<Setup, SfenError> {
        let fields: Vec<(usize, &str)> = split_fields(text);
        let max = if v.pockets { 5 } else { 4 };
        if fields.len() < 3 || fields.len() > 5 {
            return Err(SfenError::FieldCount { found: fields.len(), max });
        }
        let g = &v.geometry;
        let (col0, board_text) = fields[0];
        let rows: Vec<&str> = board_text.split('/').collect();
        if rows.len() != g.ranks as usize {
            return Err(SfenError::RankCount { found: rows.len(), expected: g.ranks as usize });
        }
        let mut board = vec![None; g.num_squares()];
        let mut column = col0;
        for (r, row) in rows.iter().enumerate() {
            let mut file = g.files as i32; // next file to fill, counting down
            let chars: Vec<char> = row.chars().collect();
            let mut i = 0;
            let row_start = column;
            let mut prev_digit = false;
            while i < chars.len() {
                let c = chars[i];
                let here = column + i;
                if let Some(d) = c.to_digit(10) {
                    if d == 0 || prev_digit {
                        return Err(SfenError::BadChar { column: here, ch: c, field: "board" });
                    }
                    file -= d as i32;
                    prev_digit = true;
                    i += 1;
                    continue;
                }
                prev_digit = false;
                let (token, len) = if c == '+' {
                    match chars.get(i + 1) {
                        Some(n) if n.is_ascii_alphabetic() => (format!("+{n}"), 2),
                        _ => return Err(SfenError::BadChar { column: here, ch: c, field: "board" }),
                    }
                } else if c.is_ascii_alphabetic() {
                    (c.to_string(), 1)
                } else {
                    return Err(SfenError::BadChar { column: here, ch: c, field: "board" });
                };
                let piece = parse_piece(v, &token, here)?;
                if file >= 1 {
                    let sq = g.square_at(file as i8 - 1, r as i8).expect("file and rank are in range");
                    board[sq.index()] = Some(piece);
                }
                file -= 1;
                i += len;
            }
            let found = (g.files as i32 - file) as usize;
            if found != g.files as usize {
                return Err(SfenError::RankWidth { column: row_start, rank: (b'a' + r as u8) as char, found, expected: g.files as usize });
            }
            column += chars.len() + 1;
        }

        let (cs, side_text) = fields[1];
        let side = match side_text {
            "b" => Color::Black,
            "w" => Color::White,
            _ => return Err(SfenError::BadSide { column: cs, found: side_text.to_string() }),
        };

        let (ch, hand_text) = fields[2];
        let hands = parse_hands(v, hand_text, ch)?;

        let move_number = match fields.get(3) {
            None => 1,
            Some(&(cm, t)) => match t.parse::<u32>() {
                Ok(n) if n >= 1 && t.chars().all(|c| c.is_ascii_digit()) => n,
                _ => return Err(SfenError::BadMoveNumber { column: cm, found: t.to_string() }),
            },
        };

        let mut pockets = [None, None];
        if let Some(&(cp, t)) = fields.get(4) {
            if !v.pockets {
                return Err(SfenError::NoPockets { column: cp, found: t.to_string() });
            }
            pockets = parse_pockets(v, t, cp)?;
        }
        Ok(Setup { board, hands, pockets, side, move_number })
    }

    /// Checks what the rules require of any position: at most one king a side, no piece
    /// that could never move, no two one-per-file pieces on a file, the side not to move
    /// not in check, no king in a pocket.
    pub fn validate(&self, v: &Variant) -> Result<(), SfenError> {
        let g = &v.geometry;
        for c in Color::BOTH {
            let kings = self.board.iter().filter(|p| matches!(p, Some(p) if p.color == c && v.kind(p.kind).royal)).count();
            if kings > 1 {
                return Err(SfenError::TooManyKings { color: c.name(), count: kings });
            }
            if let Some(k) = self.pockets[c.index()] {
                if v.kind(k).royal {
                    return Err(SfenError::KingInPocket { color: c.name() });
                }
            }
        }
        for (i, p) in self.board.iter().enumerate() {
            let Some(p) = p else { continue };
            let sq = Square::new_unchecked(i as u8);
            // Dead: a square it must promote on arriving and may not be dropped on
            // (a Copper dropped on its last rank can still step back, so it is alive).
            let t = v.tables(p.color, p.kind);
            if (t.forced_promotion & t.no_drop).has(sq) {
                return Err(SfenError::DeadPiece { color: p.color.name(), piece: v.kind(p.kind).name.clone(), square: g.square_name(sq) });
            }
            if v.kind(p.kind).one_per_file {
                let (f, _) = g.coords(sq);
                let same_file = self.board.iter().enumerate().filter(|(j, q)| **q == Some(*p) && g.coords(Square::new_unchecked(*j as u8)).0 == f);
                if same_file.count() > 1 {
                    return Err(SfenError::TwoOnFile { color: p.color.name(), piece: v.kind(p.kind).name.clone(), file: f + 1 });
                }
            }
        }
        // The side not to move in check: its king could be taken.
        let mover = self.side;
        let victim = !mover;
        if let Some(ksq) = (0..self.board.len()).find(|&i| matches!(self.board[i], Some(p) if p.color == victim && v.kind(p.kind).royal)) {
            let ksq = Square::new_unchecked(ksq as u8);
            if v.attacks_on_board(&self.board, ksq, mover) {
                return Err(SfenError::OpponentInCheck { color: victim.name() });
            }
        }
        Ok(())
    }

    pub fn to_sfen(&self, v: &Variant) -> String {
        let g = &v.geometry;
        let mut out = String::new();
        for r in 0..g.ranks {
            if r > 0 {
                out.push('/');
            }
            let mut empties = 0;
            for f in (0..g.files).rev() {
                let sq = g.square_at(f as i8, r as i8).unwrap();
                match self.board[sq.index()] {
                    None => empties += 1,
                    Some(p) => {
                        if empties > 0 {
                            out.push_str(&empties.to_string());
                            empties = 0;
                        }
                        out.push_str(&piece_token(v, p));
                    }
                }
            }
            if empties > 0 {
                out.push_str(&empties.to_string());
            }
        }
        out.push(' ');
        out.push(if self.side == Color::Black { 'b' } else { 'w' });
        out.push(' ');
        let mut hand = String::new();
        for c in Color::BOTH {
            for &k in &v.hand_kinds {
                let n = self.hands[c.index()][k.index()];
                if n > 1 {
                    hand.push_str(&n.to_string());
                }
                if n > 0 {
                    hand.push_str(&piece_token(v, Piece::new(c, k)));
                }
            }
        }
        out.push_str(if hand.is_empty() { "-" } else { &hand });
        out.push(' ');
        out.push_str(&self.move_number.to_string());
        if v.pockets {
            out.push(' ');
            let mut pocket = String::new();
            for c in Color::BOTH {
                if let Some(k) = self.pockets[c.index()] {
                    pocket.push_str(&piece_token(v, Piece::new(c, k)));
                }
            }
            out.push_str(if pocket.is_empty() { "-" } else { &pocket });
        }
        out
    }
}

/// `P`, `+P`, `p`, `+p`, … as SFEN writes a piece.
pub fn piece_token(v: &Variant, p: Piece) -> String {
    let t = &v.kind(p.kind).token;
    match p.color {
        Color::Black => t.clone(),
        Color::White => t.to_ascii_lowercase(),
    }
}

fn split_fields(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s + 1, &text[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push((s + 1, &text[s..]));
    }
    out
}

fn parse_piece(v: &Variant, token: &str, column: usize) -> Result<Piece, SfenError> {
    let color = if token.chars().last().is_some_and(|c| c.is_ascii_uppercase()) { Color::Black } else { Color::White };
    match v.kind_by_token(token) {
        Some(k) => Ok(Piece::new(color, k)),
        None => {
            let base = token.trim_start_matches('+');
            if token.starts_with('+') && v.kind_by_token(base).is_some() {
                Err(SfenError::NotPromotable { column, token: token.to_string() })
            } else {
                Err(SfenError::UnknownPiece { column, token: token.to_string() })
            }
        }
    }
}

fn parse_hands(v: &Variant, text: &str, column: usize) -> Result<[[u8; MAX_KINDS]; 2], SfenError> {
    let mut hands = [[0u8; MAX_KINDS]; 2];
    if text == "-" {
        return Ok(hands);
    }
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        let mut digits = String::new();
        while i < chars.len() && chars[i].is_ascii_digit() {
            digits.push(chars[i]);
            i += 1;
        }
        let Some(&c) = chars.get(i) else {
            return Err(SfenError::BadHandCount { column: column + start, problem: format!("count {digits} is not followed by a piece") });
        };
        if !c.is_ascii_alphabetic() {
            return Err(SfenError::BadChar { column: column + i, ch: c, field: "hands" });
        }
        let count: usize = if digits.is_empty() {
            1
        } else {
            match digits.parse::<usize>() {
                Ok(n) if (2..=MAX_HAND_COUNT).contains(&n) && !digits.starts_with('0') => n,
                _ => return Err(SfenError::BadHandCount { column: column + start, problem: format!("'{digits}' must be 2..={MAX_HAND_COUNT}") }),
            }
        };
        let piece = parse_piece(v, &c.to_string(), column + i)?;
        if v.kind(piece.kind).royal || v.kind(piece.kind).promoted {
            return Err(SfenError::NotHandPiece { column: column + i, token: c.to_string() });
        }
        let slot = &mut hands[piece.color.index()][piece.kind.index()];
        let total = *slot as usize + count;
        if total > MAX_HAND_COUNT {
            return Err(SfenError::BadHandCount { column: column + start, problem: format!("more than {MAX_HAND_COUNT} of '{c}'") });
        }
        *slot = total as u8;
        i += 1;
    }
    Ok(hands)
}

fn parse_pockets(v: &Variant, text: &str, column: usize) -> Result<[Option<PieceKind>; 2], SfenError> {
    let mut pockets = [None, None];
    if text == "-" {
        return Ok(pockets);
    }
    let bad = |problem: String| SfenError::BadPocket { column, found: text.to_string(), problem };
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let (token, len) = if chars[i] == '+' {
            match chars.get(i + 1) {
                Some(c) if c.is_ascii_alphabetic() => (format!("+{c}"), 2),
                _ => return Err(bad("'+' must be followed by a piece letter".into())),
            }
        } else if chars[i].is_ascii_alphabetic() {
            (chars[i].to_string(), 1)
        } else {
            return Err(bad(format!("unexpected '{}'", chars[i])));
        };
        let p = parse_piece(v, &token, column + i)?;
        if pockets[p.color.index()].replace(p.kind).is_some() {
            return Err(bad(format!("{} has two pieces in a one-slot pocket", p.color.name())));
        }
        i += len;
    }
    Ok(pockets)
}
