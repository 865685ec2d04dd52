//! Criterion benches of the standard workloads (docs/benchmarks.md W1–W4), for
//! regression tracking: `cargo bench --bench workloads`. The side-by-side ratios
//! against a reference tape and micrograd are `examples/bench.rs` and
//! `scripts/compare.sh`.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gradcalc::engine::Tape;

#[path = "../examples/common/workloads.rs"]
mod workloads;

use workloads::{W4Data, build};

/// Build, and build + sort + backward, of each workload at about 10⁵ nodes.
fn workloads(c: &mut Criterion) {
    let sizes = [("W1", 25_000), ("W2", 33_000), ("W3", 50_000), ("W4", 153)];
    let mut group = c.benchmark_group("workloads");
    group.sample_size(20);
    for (name, n) in sizes {
        let data = W4Data::new(if name == "W4" { n } else { 1 });
        group.bench_with_input(BenchmarkId::new("build", name), &n, |b, &n| {
            b.iter(|| {
                let tape = Tape::new();
                let built = build(&tape, name, n, &data);
                std::hint::black_box(built.output.value())
            })
        });
        group.bench_with_input(BenchmarkId::new("backward", name), &n, |b, &n| {
            let tape = Tape::new();
            let built = build(&tape, name, n, &data);
            b.iter(|| std::hint::black_box(tape.backward(built.output)[built.leaves[0]]))
        });
    }
    group.finish();
}

criterion_group!(benches, workloads);
criterion_main!(benches);
