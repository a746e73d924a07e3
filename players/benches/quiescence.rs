//! `cargo bench -p players --bench quiescence`: the alpha-beta baseline's capture-only
//! search (`AlphaBeta::quiescence`), as the `qmix` leaf value calls it once per leaf, on
//! 200 positions of random Pocket Shogi Copper playouts (10 to 120 plies in; random play
//! leaves pieces hanging, as a random network's self-play does), per call.
use criterion::{criterion_group, criterion_main, Criterion};
use players::baseline::AlphaBeta;
use rand::{Rng, SeedableRng};
use rules::{Game, Position, Variant};

fn positions(v: &'static Variant) -> Vec<Position> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let mut out = Vec::new();
    while out.len() < 200 {
        let mut g = Game::new(Position::start(v), Some(200));
        for _ in 0..rng.random_range(10..120) {
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

fn bench(c: &mut Criterion) {
    let v = Variant::builtin("pocket-copper").unwrap();
    let positions = positions(v);
    let mut ab = AlphaBeta::new(v, 1);
    let mut group = c.benchmark_group("quiescence");
    group.sample_size(20);
    group.throughput(criterion::Throughput::Elements(positions.len() as u64));
    group.bench_function("random_playouts", |b| b.iter(|| positions.iter().map(|p| ab.quiescence(p) as i64).sum::<i64>()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
