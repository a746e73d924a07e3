//! A slow, independent move generator over a plain mailbox: it walks each piece's Betza
//! movement square by square and tests king safety by brute force, sharing nothing with
//! the bitboard generator but the variant's data. The conformance harness compares the
//! two on every position of random games; SFEN validation uses its attack test.

use crate::betza::{Movement, UNLIMITED};
use crate::moves::Move;
use crate::piece::{DropMate, Piece};
use crate::sfen::Setup;
use crate::square::DIRECTIONS;
use crate::variant::Variant;
use crate::{Color, Square};

fn movement(v: &Variant, p: Piece) -> Movement {
    let m = &v.kind(p.kind).movement;
    if p.color == Color::Black {
        m.clone()
    } else {
        m.rotated()
    }
}

/// Squares the piece on `from` attacks on this board.
fn attacks(v: &Variant, board: &[Option<Piece>], from: Square, p: Piece) -> Vec<Square> {
    let g = &v.geometry;
    let (f, r) = g.coords(from);
    let m = movement(v, p);
    let mut out = Vec::new();
    for (df, dr) in m.leaps {
        if let Some(t) = g.square_at(f as i8 + df, r as i8 + dr) {
            out.push(t);
        }
    }
    for (d, range) in m.slides {
        let (df, dr) = DIRECTIONS[d];
        let (mut x, mut y) = (f as i8, r as i8);
        let mut n = 0;
        while range == UNLIMITED || n < range {
            x += df;
            y += dr;
            n += 1;
            let Some(t) = g.square_at(x, y) else { break };
            out.push(t);
            if board[t.index()].is_some() {
                break;
            }
        }
    }
    out
}

/// Whether any piece of `by` attacks `sq`.
pub fn square_attacked(v: &Variant, board: &[Option<Piece>], sq: Square, by: Color) -> bool {
    board.iter().enumerate().any(|(i, p)| match p {
        Some(p) if p.color == by => attacks(v, board, Square::new_unchecked(i as u8), *p).contains(&sq),
        _ => false,
    })
}

fn king_of(v: &Variant, board: &[Option<Piece>], c: Color) -> Option<Square> {
    board.iter().position(|p| matches!(p, Some(p) if p.color == c && v.kind(p.kind).royal)).map(|i| Square::new_unchecked(i as u8))
}

fn in_check(v: &Variant, s: &Setup, c: Color) -> bool {
    king_of(v, &s.board, c).is_some_and(|k| square_attacked(v, &s.board, k, !c))
}

/// Plays a move on a setup (no legality checks).
pub fn apply(v: &Variant, s: &Setup, m: Move) -> Setup {
    use crate::moves::MoveKind::*;
    let mut n = s.clone();
    let us = s.side;
    match m.kind() {
        Board { from, to, promote } => {
            let p = n.board[from.index()].take().unwrap();
            if let Some(cap) = n.board[to.index()] {
                if !v.kind(cap.kind).royal {
                    n.hands[us.index()][v.kind(cap.kind).unpromoted.index()] += 1;
                }
            }
            let kind = if promote { v.kind(p.kind).promotes_to.unwrap() } else { p.kind };
            n.board[to.index()] = Some(Piece::new(us, kind));
        }
        Drop { kind, to } => {
            n.hands[us.index()][kind.index()] -= 1;
            n.board[to.index()] = Some(Piece::new(us, kind));
        }
        PocketIn { from } => {
            let p = n.board[from.index()].take().unwrap();
            n.pockets[us.index()] = Some(p.kind);
        }
        PocketDrop { kind, to } => {
            n.pockets[us.index()] = None;
            n.board[to.index()] = Some(Piece::new(us, kind));
        }
    }
    n.side = !us;
    n.move_number += 1;
    n
}

/// Every legal move, found the slow way.
pub fn legal_moves(v: &Variant, s: &Setup) -> Vec<Move> {
    let g = &v.geometry;
    let us = s.side;
    let mut out = Vec::new();
    let safe = |m: Move| !in_check(v, &apply(v, s, m), us);
    let board_moves_of = |from: Square, p: Piece, out: &mut Vec<Move>| {
        let info = v.kind(p.kind);
        let mut any = false;
        for to in attacks(v, &s.board, from, p) {
            if matches!(s.board[to.index()], Some(q) if q.color == us) {
                continue;
            }
            if info.one_per_file {
                let tf = g.coords(to).0;
                let clash = s.board.iter().enumerate().any(|(i, q)| i != from.index() && *q == Some(p) && g.coords(Square::new_unchecked(i as u8)).0 == tf);
                if clash {
                    continue;
                }
            }
            let zone = v.promotion_zone[us.index()];
            let can_promote = info.promotes_to.is_some() && (zone.has(from) || zone.has(to));
            let forced = v.tables(us, p.kind).forced_promotion.has(to);
            let mut options = Vec::new();
            if can_promote {
                options.push(Move::board(from, to, true));
            }
            if !forced || !can_promote {
                options.push(Move::board(from, to, false));
            }
            for m in options {
                if safe(m) {
                    any = true;
                    out.push(m);
                }
            }
        }
        any
    };
    for i in 0..s.board.len() {
        let Some(p) = s.board[i] else { continue };
        if p.color != us {
            continue;
        }
        let from = Square::new_unchecked(i as u8);
        let has_move = board_moves_of(from, p, &mut out);
        if v.pockets && s.pockets[us.index()].is_none() && !v.kind(p.kind).royal && has_move {
            let m = Move::pocket_in(from);
            if safe(m) {
                out.push(m);
            }
        }
    }
    let drops = |kind, from_pocket: bool, out: &mut Vec<Move>| {
        let info = v.kind(kind);
        for sq in g.squares() {
            if s.board[sq.index()].is_some() || v.tables(us, kind).no_drop.has(sq) {
                continue;
            }
            if info.one_per_file {
                let f = g.coords(sq).0;
                let own = Piece::new(us, kind);
                if s.board.iter().enumerate().any(|(i, q)| *q == Some(own) && g.coords(Square::new_unchecked(i as u8)).0 == f) {
                    continue;
                }
            }
            let m = if from_pocket { Move::pocket_drop(kind, sq) } else { Move::drop(kind, sq) };
            if !safe(m) {
                continue;
            }
            let after = apply(v, s, m);
            let gives_check = in_check(v, &after, !us);
            if info.drop_only_with_check && !gives_check {
                continue;
            }
            if info.drop_mate == DropMate::Illegal && gives_check && legal_moves(v, &after).is_empty() {
                continue;
            }
            out.push(m);
        }
    };
    for &k in &v.hand_kinds {
        if s.hands[us.index()][k.index()] > 0 {
            drops(k, false, &mut out);
        }
    }
    if let Some(k) = s.pockets[us.index()] {
        drops(k, true, &mut out);
    }
    out
}
