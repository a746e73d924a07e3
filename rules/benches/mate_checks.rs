//! `cargo bench -p rules --bench mate_checks`: the search's mate checks (one ply,
//! `Position::winning_move`; three plies through checks, `Game::checkmate_within(3)`) on
//! 40 positions of random Pocket Shogi Copper playouts (20 to 120 plies in), per call;
//! beside them the cheap forms the search calls (`rules/src/leafcheck.rs`) and, for
//! scale, legal move generation.
use criterion::{criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use rules::{Game, Position, Variant};

fn positions() -> Vec<Game> {
    let v = Variant::builtin("pocket-copper").unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let mut games = Vec::new();
    while games.len() < 40 {
        let mut g = Game::new(Position::start(v), Some(200));
        for _ in 0..rng.random_range(20..120) {
            if g.is_over() {
                break;
            }
            let moves = g.legal_moves();
            g.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
        if !g.is_over() {
            games.push(g);
        }
    }
    games
}

fn bench(c: &mut Criterion) {
    let games = positions();
    let mut group = c.benchmark_group("mate_checks");
    group.sample_size(20);
    group.throughput(criterion::Throughput::Elements(games.len() as u64));
    group.bench_function("one_ply", |b| b.iter(|| games.iter().filter(|g| g.position().winning_move().is_some()).count()));
    group.bench_function("three_plies", |b| b.iter(|| games.iter().filter(|g| g.checkmate_within(3, u64::MAX).is_some()).count()));
    // The search's leaf checks (`rules/src/leafcheck.rs`): the same answers, cheaper; the
    // one-ply check from the legal moves the leaf's expansion generated anyway.
    let legal: Vec<Vec<rules::Move>> = games.iter().map(|g| g.legal_moves().to_vec()).collect();
    group.bench_function("one_ply_among_legal", |b| b.iter(|| games.iter().zip(&legal).filter(|(g, l)| g.position().winning_move_among(l).is_some()).count()));
    group.bench_function("three_plies_fast", |b| b.iter(|| games.iter().filter(|g| g.checkmate_within_fast(3, u64::MAX).is_some()).count()));
    group.bench_function("legal_moves", |b| b.iter(|| games.iter().map(|g| g.legal_moves().len()).sum::<usize>()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
