//! Simulations per second with the uniform evaluator (no network): the cost of the
//! search itself. Run with
//! `cargo test -j 1 --release -p search --test timing -- --ignored --nocapture`.

use search::{Search, SearchConfig, UniformEvaluator};
use std::time::Instant;

fn start(variant: &str) -> rules::Game {
    let v = rules::Variant::builtin(variant).unwrap();
    rules::Game::new(rules::Position::start(v), None)
}

fn measure(variant: &str, name: &str, cfg: SearchConfig, moves: usize) {
    let n = cfg.simulations;
    let mut s = Search::with_seed(start(variant), cfg, 1);
    let t = Instant::now();
    let mut sims = 0u64;
    let mut max_nodes = 0;
    for _ in 0..moves {
        let r = s.run(&UniformEvaluator);
        sims += r.simulations as u64;
        max_nodes = max_nodes.max(s.tree_size().0);
        match r.chosen {
            Some(m) => s.advance(m),
            None => break,
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{variant:>14} {name:<8} n={n:<5} {moves} moves: {sims} simulations in {secs:.3} s = {:.0} simulations/s (max {max_nodes} nodes)",
        sims as f64 / secs
    );
}

#[test]
#[ignore]
fn simulations_per_second() {
    for variant in ["pocket-copper", "shogi"] {
        measure(variant, "gumbel", SearchConfig::gumbel(800), 20);
        measure(variant, "puct", SearchConfig::puct(800), 20);
        measure(variant, "gumbel", SearchConfig::gumbel(64), 100);
    }
    // Cost of cloning the root game (the search clones it once per new leaf).
    let mut g = start("pocket-copper");
    for _ in 0..100 {
        let m = rules::Game::legal_moves(&g)[0];
        g.play_unchecked(m);
        if g.is_over() {
            break;
        }
    }
    let t = Instant::now();
    let mut k = 0u64;
    for _ in 0..100_000 {
        k ^= std::hint::black_box(g.clone()).ply() as u64;
    }
    println!("clone of a {}-ply game: {:.0} ns ({k})", g.ply(), t.elapsed().as_nanos() as f64 / 100_000.0);
}
