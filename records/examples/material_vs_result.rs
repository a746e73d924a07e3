//! How well material predicts the result in a directory of self-play shards: for
//! positions where one side is at least 3 points ahead (pawn 1, lance 3, knight 4,
//! silver and copper 5, gold 6, bishop 8, rook 10, +2 when promoted; hands and pockets
//! count) in a decisive game, the share that side went on to win, by 40-ply phase.
//! A share near 0.5 means the games' results carry little information about material:
//! the value head cannot learn it from them (docs/ABLATIONS.md).
//!
//!     cargo run --release -p records --example material_vs_result -- data/runs/pocket-copper/selfplay/gen-0003

use records::read_shard;

fn value(letter: char) -> i32 {
    match letter.to_ascii_lowercase() {
        'p' => 1,
        'l' => 3,
        'n' => 4,
        's' | 'c' => 5,
        'g' => 6,
        'b' => 8,
        'r' => 10,
        _ => 0,
    }
}

/// Material of the side to move minus the opponent's, from an SFEN (board, hand, pocket).
fn material(sfen: &str) -> i32 {
    let fields: Vec<&str> = sfen.split_whitespace().collect();
    let signed = |c: char, v: i32| if c.is_ascii_uppercase() { v } else { -v };
    let mut black = 0;
    let mut promoted = false;
    for c in fields[0].chars() {
        if c == '+' {
            promoted = true;
            continue;
        }
        if c.is_ascii_alphabetic() {
            black += signed(c, value(c) + if promoted { 2 } else { 0 });
        }
        promoted = false;
    }
    for held in [fields.get(2), fields.get(4)].into_iter().flatten().filter(|f| **f != "-") {
        let mut count = 0;
        for c in held.chars() {
            if let Some(d) = c.to_digit(10) {
                count = count * 10 + d as i32;
                continue;
            }
            black += signed(c, value(c) * count.max(1));
            count = 0;
        }
    }
    if fields.get(1) == Some(&"w") {
        -black
    } else {
        black
    }
}

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: material_vs_result SHARD_DIRECTORY");
        std::process::exit(2);
    };
    let (mut positions, mut ahead, mut ahead_won) = ([0u64; 8], [0u64; 8], [0u64; 8]);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{dir}: {e}"));
    for path in entries.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "shard")) {
        let shard = read_shard(&path).unwrap_or_else(|e| panic!("{e}"));
        for r in &shard.records {
            let phase = (r.ply as usize / 40).min(7);
            positions[phase] += 1;
            let m = material(&r.sfen);
            if m.abs() >= 3 && r.result != 0 {
                ahead[phase] += 1;
                ahead_won[phase] += u64::from((m > 0) == (r.result > 0));
            }
        }
    }
    println!("plies\tpositions\tdecisive, one side >= 3 ahead\tshare the side ahead won");
    for p in 0..8 {
        if positions[p] > 0 {
            let last = if p == 7 { "+".to_string() } else { format!("-{}", p * 40 + 39) };
            println!("{}{last}\t{}\t{}\t{:.3}", p * 40, positions[p], ahead[p], ahead_won[p] as f64 / ahead[p].max(1) as f64);
        }
    }
}
