//! Perft: the number of leaf nodes of the legal-move tree, the standard check of a move
//! generator against independent engines. The last ply is counted from the length of the
//! legal-move list (bulk counting), as other engines report it. A position whose game is
//! over by the flag win has no children.

use crate::{Move, MoveList, Position};

pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    if pos.flag_reached() {
        return 0;
    }
    // Generated into a list on this frame: `legal_moves` returns its list by value, and
    // moving the whole fixed-capacity list out cost about a seventh of the time.
    let mut moves = MoveList::new();
    pos.generate_legal(&mut moves);
    if depth == 1 {
        return moves.len() as u64;
    }
    let mut nodes = 0;
    for &m in &moves {
        let mut child = pos.clone();
        child.play_unchecked(m);
        nodes += perft(&child, depth - 1);
    }
    nodes
}

/// Perft of each legal move's subtree (depth − 1 below it), in generation order.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 || pos.flag_reached() {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut child = pos.clone();
            child.play_unchecked(m);
            (m, perft(&child, depth - 1))
        })
        .collect()
}
