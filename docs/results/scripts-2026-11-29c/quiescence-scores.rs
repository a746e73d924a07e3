//! Issue 53 (docs/PERFORMANCE.md, "The check test of a quiescence node from its parent"):
//! a hash of `AlphaBeta::quiescence` scores on 2,200 random-playout positions, to check two
//! builds score alike, and the function to count under callgrind. Copy to
//! players/examples/qprof.rs, then: cargo build --release -p players --example qprof &&
//! valgrind --tool=callgrind --toggle-collect='players::baseline::alphabeta::AlphaBeta::quiescence' target/release/examples/qprof 1
//! (the hash depends on the repetitions given: compare runs with the same number).
use players::baseline::AlphaBeta;
use rand::{Rng, SeedableRng};
use rules::{Game, Position, Variant};

fn positions(v: &'static Variant, seed: u64, lo: usize, hi: usize, n: usize) -> Vec<Position> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let mut g = Game::new(Position::start(v), Some(200));
        for _ in 0..rng.random_range(lo..hi) {
            if g.is_over() {
                break;
            }
            let moves = g.legal_moves();
            g.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
        if !g.is_over() {
            out.push(g.position().clone());
        }
    }
    out
}

fn main() {
    let v = Variant::builtin("pocket-copper").unwrap();
    let reps: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(1);
    let mut ps = positions(v, 5, 10, 120, 200);
    ps.extend(positions(v, 6, 4, 30, 2000));
    let mut ab = AlphaBeta::new(v, 1);
    let mut h: i64 = 0;
    let t = std::time::Instant::now();
    for _ in 0..reps {
        for p in &ps {
            h = h.wrapping_mul(31).wrapping_add(ab.quiescence(p) as i64);
        }
    }
    println!("hash {h} {:?} per rep", t.elapsed() / reps as u32);
}
