//! Issue 53 (docs/PERFORMANCE.md, "The check test of a quiescence node from its parent" and
//! "Captures worth generating"): a hash of
//! `AlphaBeta::quiescence` scores, to check that two builds score alike, and the function
//! to count under callgrind. Positions: 2,200 of random playouts (200 of 10-120 plies,
//! 2,000 of 4-30), or with GAMES=FILE every position of the games in FILE ("SFEN|moves",
//! one a line; games-fmrek2-g8.txt.gz beside this file, gunzipped: 256 games of the
//! fmrek2 arm's generation 8 at 100 simulations, 22,031 positions). A second argument
//! `given` hands each position's legal moves to `quiescence_among`. Copy to
//! players/examples/qprof.rs, then: cargo build --release -p players --example qprof &&
//! GAMES=games.txt valgrind --tool=callgrind target/release/examples/qprof 1 &&
//! callgrind_annotate --inclusive=yes callgrind.out.* | grep quiescence_root
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
    // GAMES=FILE: every position of games ("SFEN|move move ...", one a line) in place of
    // random playouts (a network's games: quieter, as a search's leaves are).
    let ps = match std::env::var("GAMES") {
        Ok(f) => std::fs::read_to_string(f).unwrap().lines().flat_map(|l| {
            let (sfen, moves) = l.split_once('|').unwrap();
            let mut g = Game::new(Position::from_sfen(v, sfen).unwrap(), None);
            let mut out = Vec::new();
            for m in moves.split_whitespace() {
                if g.is_over() { break; }
                out.push(g.position().clone());
                g.play_usi(m).unwrap();
            }
            out
        }).collect(),
        Err(_) => {
            let mut ps = positions(v, 5, 10, 120, 200);
            ps.extend(positions(v, 6, 4, 30, 2000));
            ps
        }
    };
    let given = std::env::args().nth(2).is_some_and(|a| a == "given");
    let legal: Vec<Vec<rules::Move>> = ps.iter().map(|p| p.legal_moves().to_vec()).collect();
    let mut ab = AlphaBeta::new(v, 1);
    let mut h: i64 = 0;
    let t = std::time::Instant::now();
    for _ in 0..reps {
        for (p, l) in ps.iter().zip(&legal) {
            let q = if given { ab.quiescence_among(p, l) } else { ab.quiescence(p) };
            h = h.wrapping_mul(31).wrapping_add(q as i64);
        }
    }
    println!("hash {h} {:?} per rep", t.elapsed() / reps as u32);
}
