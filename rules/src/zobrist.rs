//! Zobrist keys: fixed pseudo-random numbers (SplitMix64 from a constant seed), so keys
//! are the same in every process and can be stored in records.

use crate::piece::MAX_KINDS;
use crate::{Color, PieceKind, Square};

/// Largest hand count with its own key; validated positions never exceed it.
pub const MAX_HAND_COUNT: usize = 63;
const SQUARES: usize = 128;

const fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

const fn table<const N: usize>(salt: u64) -> [u64; N] {
    let mut out = [0u64; N];
    let mut i = 0;
    while i < N {
        out[i] = splitmix(salt.wrapping_mul(0x1000_0000_0001).wrapping_add(i as u64));
        i += 1;
    }
    out
}

static BOARD: [u64; 2 * MAX_KINDS * SQUARES] = table(1);
static HAND: [u64; 2 * MAX_KINDS * (MAX_HAND_COUNT + 1)] = table(2);
static POCKET: [u64; 2 * MAX_KINDS] = table(3);
/// XORed in when White is to move.
pub const SIDE: u64 = splitmix(0xC0FFEE);

#[inline(always)]
pub fn board(c: Color, k: PieceKind, sq: Square) -> u64 {
    BOARD[(c.index() * MAX_KINDS + k.index()) * SQUARES + sq.index()]
}

/// Key of holding exactly `count` of a kind (count 0 keys to 0, so empty hands cost nothing).
#[inline(always)]
pub fn hand(c: Color, k: PieceKind, count: u8) -> u64 {
    if count == 0 {
        0
    } else {
        HAND[(c.index() * MAX_KINDS + k.index()) * (MAX_HAND_COUNT + 1) + count as usize]
    }
}

#[inline(always)]
pub fn pocket(c: Color, k: PieceKind) -> u64 {
    POCKET[c.index() * MAX_KINDS + k.index()]
}
