//! The quiescence search's cost and scores at self-play leaves:
//! `cargo run --release -p players --example quiescence_leaves -- docs/results/quiescence-leaves-2026-11-30.sfen [REPEATS]`
//! (one Pocket Shogi Copper SFEN a line: every ninth leaf of `copper bench-selfplay
//! --config configs/default.toml --model models/pocket-copper --games 32`). Prints the
//! time per call and the sum and an order-sensitive hash of the scores, so that a change
//! meant to be faster can be shown to give the same scores, and is the workload to run
//! under `valgrind --tool=callgrind` for instruction counts.
use players::baseline::AlphaBeta;
use rules::{Position, Variant};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: quiescence_leaves FILE.sfen [REPEATS]");
        std::process::exit(2);
    };
    let repeats: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let v = Variant::builtin("pocket-copper").expect("a built-in variant");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    });
    let mut positions = Vec::new();
    for (i, line) in text.lines().enumerate() {
        match Position::from_sfen(v, line) {
            Ok(p) => positions.push(p),
            Err(e) => {
                eprintln!("{path}:{}: {e}", i + 1);
                std::process::exit(1);
            }
        }
    }
    let legal: Vec<Vec<rules::Move>> = positions.iter().map(|p| p.legal_moves().to_vec()).collect();
    let mut ab = AlphaBeta::new(v, 1);
    let (mut sum, mut hash) = (0i64, 0u64);
    let t = Instant::now();
    for _ in 0..repeats {
        for (p, l) in positions.iter().zip(&legal) {
            let q = ab.quiescence_among(p, l) as i64;
            sum += q;
            hash = hash.wrapping_mul(1_000_003).wrapping_add(q as u64);
        }
    }
    let calls = positions.len() * repeats;
    let s = t.elapsed().as_secs_f64();
    println!("{calls} calls, {:.2} us a call, score sum {sum}, hash {hash}", s / calls as f64 * 1e6);
}
