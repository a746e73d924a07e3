//! `cargo run --release -p rules --example perft -- shogi 5`: perft from a variant's start,
//! printed as `copper perft` prints it (`nodes N` on stdout, `time S s, R M nodes/s` on
//! stderr), without building the `cli` binary; for quick move-generator experiments.
use rules::{perft::perft, Position, Variant};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "shogi".into());
    let depth: u32 = args.next().map_or(5, |d| d.parse().expect("depth is a number"));
    let variant = Variant::builtin(&name).unwrap_or_else(|e| panic!("{e}"));
    let pos = Position::start(variant);
    let t = Instant::now();
    let nodes = perft(&pos, depth);
    let secs = t.elapsed().as_secs_f64();
    println!("nodes {nodes}");
    eprintln!("time {secs:.3} s, {:.2} M nodes/s", nodes as f64 / secs / 1e6);
}
