//! `cargo bench -p rules --bench perft`: perft speed of each shipped variant from its start.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rules::{perft::perft, Position, Variant};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    for (name, depth) in [("shogi", 4), ("pocket-copper", 3), ("hand-shogi", 2), ("minishogi", 4)] {
        let pos = Position::start(Variant::builtin(name).unwrap());
        group.throughput(Throughput::Elements(perft(&pos, depth)));
        group.bench_function(format!("{name}/depth{depth}"), |b| b.iter(|| perft(&pos, depth)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
