//! How long each tensor op's kernels run between two looks at Ctrl-C, at
//! the largest inputs the memory budget allows (issue 39: Ctrl-C answers
//! within a second on any work the budget allows; docs/repl.md, "Ctrl-C").
//!
//! ```sh
//! cargo run --release --example poll_gaps            # every case, one JSON line each
//! cargo run --release --example poll_gaps -- softmax # the cases whose name holds "softmax"
//! ```
//!
//! Each case builds one node on leaves of the largest size the default
//! budget ([`DEFAULT_BUDGET`], 2²⁷ numbers) lets a session hold for it: the
//! forward (`apply`) with its operands and its value held, the backward
//! (`backward_keeping` of `sum(op(X))`) with every gradient as well
//! (`check_gradient_budget` is asked). The graph's interrupt records this
//! thread's CPU time at every look and never asks to stop; the line gives
//! the longest stretch of CPU time without a look (`gap_ms`: from the start
//! to the first look, between two, from the last to the end) and the whole
//! time (`total_ms`). Ctrl-C waits at most about `gap_ms`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use gradcalc::engine::Op;
use gradcalc::engine::tensor::{
    Comparison, DEFAULT_BUDGET, Select, Shape, Tensor, TensorGraph, TensorId, TensorOp,
};
use serde_json::json;

/// Large buffers on huge pages, as the `gradcalc` binary allocates them
/// (`gradcalc::hugepages`): fewer page faults, which are CPU time too.
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: gradcalc::hugepages::HugePages = gradcalc::hugepages::HugePages;

/// This thread's CPU time in nanoseconds.
fn cpu_now() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

/// The longest stretch between two looks, shared with the interrupt.
#[derive(Default)]
struct Gaps {
    last: AtomicU64,
    longest: AtomicU64,
}

impl Gaps {
    /// A look at `now`.
    fn look(&self, now: u64) {
        let gap = now.saturating_sub(self.last.swap(now, Ordering::Relaxed));
        self.longest.fetch_max(gap, Ordering::Relaxed);
    }
}

/// A tensor of `shape` with numbers in [−0.5, 0.5), cheap to make.
fn input(shape: Shape, seed: u64) -> Tensor {
    let data = (0..shape.len() as u64)
        .map(|e| {
            ((e.wrapping_add(seed).wrapping_mul(2_654_435_761) >> 7) % 1000) as f64 / 1000.0 - 0.5
        })
        .collect();
    Tensor::new(shape, data)
}

/// Labels 0..k−1 for `n` rows.
fn labels(n: usize, k: usize) -> Tensor {
    Tensor::new(
        Shape::vector(n),
        (0..n).map(|i| ((i * 7919) % k) as f64).collect(),
    )
}

/// An operand, made only when its case runs (every case's at once would
/// not fit in memory).
type Lazy = Box<dyn Fn() -> Tensor>;

/// [`input`] made when asked.
fn lazy(shape: Shape, seed: u64) -> Lazy {
    Box::new(move || input(shape, seed))
}

/// One case: its name, the op, its operands (a leaf or a constant each).
struct Case {
    name: String,
    op: TensorOp,
    operands: Vec<(Lazy, bool)>,
    backward: bool,
}

/// The largest square side with `count` values of side² numbers within the budget.
fn side(count: usize) -> usize {
    ((DEFAULT_BUDGET / count) as f64).sqrt() as usize
}

/// `s×s`.
fn square(s: usize) -> Shape {
    Shape::matrix(s, s)
}

/// "forward" or "backward".
fn direction(backward: bool) -> &'static str {
    if backward { "backward" } else { "forward" }
}

/// A case of `op` on one `s×s` leaf.
fn unary(name: &str, op: TensorOp, s: usize, backward: bool) -> Case {
    Case {
        name: format!("{name} {s}×{s} {}", direction(backward)),
        op,
        operands: vec![(lazy(square(s), 1), true)],
        backward,
    }
}

/// The cases of one direction, at the largest sizes the budget allows:
/// forward, X and its value held (2 square values; a reduction's value is
/// small, so X takes nearly the whole budget); backward, X, the op's value
/// and both gradients (4 square values; a reduction: 2).
fn cases_of(backward: bool) -> Vec<Case> {
    let mut cases = Vec::new();
    let m = square;
    let (s_same, s_red) = if backward {
        (side(4), side(2) - 1)
    } else {
        (side(2), side(1) - 1)
    };
    cases.push(unary("transpose", TensorOp::Transpose, s_same, backward));
    cases.push(unary("sum", TensorOp::Sum, s_red, backward));
    cases.push(unary("sum(X, 0)", TensorOp::SumAxis(0), s_red, backward));
    cases.push(unary("sum(X, 1)", TensorOp::SumAxis(1), s_red, backward));
    cases.push(unary(
        "sum(X, 0, keepdims)",
        TensorOp::SumKeepDims(0),
        s_red,
        backward,
    ));
    cases.push(unary("mean", TensorOp::Mean, s_red, backward));
    cases.push(unary("mean(X, 0)", TensorOp::MeanAxis(0), s_red, backward));
    cases.push(unary("mean(X, 1)", TensorOp::MeanAxis(1), s_red, backward));
    cases.push(unary("max", TensorOp::Max, s_red, backward));
    cases.push(unary("min", TensorOp::Min, s_red, backward));
    cases.push(unary("max(X, 0)", TensorOp::MaxAxis(0), s_red, backward));
    cases.push(unary("max(X, 1)", TensorOp::MaxAxis(1), s_red, backward));
    cases.push(unary("min(X, 0)", TensorOp::MinAxis(0), s_red, backward));
    cases.push(unary("softmax", TensorOp::Softmax, s_same, backward));
    cases.push(unary("log_softmax", TensorOp::LogSoftmax, s_same, backward));
    cases.push(unary("logsumexp", TensorOp::LogSumExp, s_red, backward));
    cases.push(unary(
        "X[1:]",
        TensorOp::Slice(Select::Range(1, s_same), None),
        s_same,
        backward,
    ));
    cases.push(unary(
        "X[:, 1:]",
        TensorOp::Slice(Select::Range(0, s_same), Some(Select::Range(1, s_same))),
        s_same,
        backward,
    ));
    cases.push(unary(
        "X[:, 0]",
        TensorOp::Slice(Select::Range(0, s_red), Some(Select::At(0))),
        s_red,
        backward,
    ));
    cases.push(unary("X[3]", TensorOp::Index(3), s_red, backward));
    cases.push(Case {
        name: format!("cross_entropy {s_red}×{s_red} {}", direction(backward)),
        op: TensorOp::CrossEntropy,
        operands: vec![
            (lazy(m(s_red), 1), true),
            (Box::new(move || labels(s_red, s_red)), false),
        ],
        backward,
    });
    // outer: two vectors, the value takes the budget (backward: half,
    // its gradient the other half).
    let n = if backward { side(2) - 1 } else { side(1) - 1 };
    cases.push(Case {
        name: format!("outer {n}·{n} {}", direction(backward)),
        op: TensorOp::Outer,
        operands: vec![
            (lazy(Shape::vector(n), 1), true),
            (lazy(Shape::vector(n), 2), true),
        ],
        backward,
    });
    // A bias broadcast down the rows: its gradient sums the rows.
    let s = if backward { side(4) - 1 } else { side(2) - 1 };
    cases.push(Case {
        name: format!("X + b (b a row) {s}×{s} {}", direction(backward)),
        op: TensorOp::Elementwise(Op::Add),
        operands: vec![(lazy(m(s), 1), true), (lazy(Shape::vector(s), 2), true)],
        backward,
    });
    cases.push(Case {
        name: format!("X + c (c a column) {s}×{s} {}", direction(backward)),
        op: TensorOp::Elementwise(Op::Add),
        operands: vec![(lazy(m(s), 1), true), (lazy(Shape::matrix(s, 1), 2), true)],
        backward,
    });
    cases
}

/// Every case: both directions of each op that passes a gradient, then
/// the forward of those that pass none.
fn cases() -> Vec<Case> {
    let mut cases = cases_of(false);
    cases.extend(cases_of(true));
    let same = side(2);
    let big = side(1) - 1;
    let m = square;
    // Forward only: no gradient passes.
    cases.push(unary("argmax", TensorOp::ArgMax(None), big, false));
    cases.push(unary("argmax(X, 0)", TensorOp::ArgMax(Some(0)), big, false));
    cases.push(unary("argmax(X, 1)", TensorOp::ArgMax(Some(1)), big, false));
    let k = DEFAULT_BUDGET / same - 1;
    cases.push(Case {
        name: format!("onehot({same} labels, {k}) forward"),
        op: TensorOp::OneHot(k),
        operands: vec![(Box::new(move || labels(same, k)), false)],
        backward: false,
    });
    let same = same - 1;
    cases.push(Case {
        name: format!("X < Y {same}×{same} forward"),
        op: TensorOp::Compare(Comparison::Lt),
        operands: vec![
            (lazy(m(same), 1), false),
            (lazy(Shape::vector(same), 2), false),
        ],
        backward: false,
    });
    cases
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    for case in cases() {
        if !case.name.contains(&filter) {
            continue;
        }
        let mut graph = TensorGraph::new();
        let ids: Vec<TensorId> = case
            .operands
            .into_iter()
            .map(|(make, leaf)| {
                let t = make();
                if leaf {
                    graph.leaf(t).unwrap()
                } else {
                    graph.constant(t).unwrap()
                }
            })
            .collect();
        let gaps = Arc::new(Gaps::default());
        let seen = Arc::clone(&gaps);
        graph.set_interrupt(Arc::new(move || {
            seen.look(cpu_now());
            false
        }));
        let start = cpu_now();
        gaps.last.store(start, Ordering::Relaxed);
        let node = match graph.apply(case.op, &ids) {
            Ok(node) => node,
            Err(e) => {
                println!("{}", json!({"case": case.name, "error": e.to_string()}));
                continue;
            }
        };
        let start = if case.backward {
            let loss = graph.apply(TensorOp::Sum, &[node]).unwrap();
            if let Err(e) = graph.check_gradient_budget(loss) {
                println!("{}", json!({"case": case.name, "error": e.to_string()}));
                continue;
            }
            // Only the walk is timed.
            let start = cpu_now();
            gaps.last.store(start, Ordering::Relaxed);
            gaps.longest.store(0, Ordering::Relaxed);
            let grads = graph.backward_keeping(loss, &[]);
            std::hint::black_box(grads.get(ids[0]).map(|g| g.data()[0]));
            start
        } else {
            start
        };
        let end = cpu_now();
        gaps.look(end);
        println!(
            "{}",
            json!({
                "case": case.name,
                "gap_ms": gaps.longest.load(Ordering::Relaxed) as f64 / 1e6,
                "total_ms": (end - start) as f64 / 1e6,
            })
        );
    }
}
