//! Properties on inputs nobody wrote by hand (proptest).
//!
//! - Gradients: random expression graphs over every op of the op table (depth up
//!   to 8, shared subexpressions, up to 4 leaves). Every reverse-mode gradient
//!   must match forward-mode dual numbers implemented here, with derivative
//!   rules written independently of the engine, and a Richardson-extrapolated
//!   central difference, each within a tolerance derived from the values.
//! - Reverse topological order: every reachable node exactly once, the output
//!   first, each node before all of its inputs.
//! - Language: printing an AST and parsing the text gives the same AST; random
//!   token soup never panics and every error points inside the source;
//!   precedence, signs and implicit products agree with a reference evaluator.
//!
//! Case counts are fixed so that the whole file runs in seconds in a debug build.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::ControlFlow;

use gradcalc::engine::{Arity, Graph, NodeId, Op};
use gradcalc::render::{Format, Printer, Style};
use gradcalc::session::{Event, Session};
use gradcalc::syntax::{
    self, AssignOp, BinaryOp, Call, Expr, ExprId, ExprKind, ExprTree, Ident, Name, Span, Statement,
    UnaryOp,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

// ---------------------------------------------------------------------------
// Gradients

const MAX_LEAVES: usize = 4;
const MAX_DEPTH: usize = 8;
const EPS: f64 = f64::EPSILON;
/// Values and tangents beyond this are not used as inputs (the op falls back to `sin`).
const MAX_MAGNITUDE: f64 = 1e4;
/// The least distance from a kink, pole or domain edge, before the margin that
/// the finite-difference steps need.
const MIN_GAP: f64 = 0.02;

/// A random program: leaf values, then instructions that each make one node.
#[derive(Debug, Clone)]
struct Program {
    leaves: Vec<f64>,
    instructions: Vec<Instruction>,
}

#[derive(Debug, Clone)]
enum Instruction {
    /// A literal.
    Const(f64),
    /// Op number `op` (modulo the table) applied to earlier nodes; each pick counts
    /// back from the newest node, so small picks build deep chains and repeated
    /// picks share subexpressions.
    Apply { op: usize, picks: Vec<usize> },
}

fn program() -> impl Strategy<Value = Program> {
    let instruction = prop_oneof![
        1 => (-3.0f64..3.0).prop_map(Instruction::Const),
        8 => (
            0..10_000usize,
            prop::collection::vec(prop_oneof![3 => 0..3usize, 1 => 0..64usize], 1..=4),
        )
            .prop_map(|(op, picks)| Instruction::Apply { op, picks }),
    ];
    (
        prop::collection::vec(-2.5f64..2.5, 1..=MAX_LEAVES),
        prop::collection::vec(instruction, 1..28),
    )
        .prop_map(|(leaves, instructions)| Program {
            leaves,
            instructions,
        })
}

/// Value and local partial derivatives of `op` at `x`, written here from
/// calculus, independently of the engine's op table (other formulas where
/// there is a choice: `tanh' = 1/cosh²`, `sigmoid' = 1/(2 + 2 cosh u)`, …).
/// `None` for an op this test does not know: a new op must get a rule here.
fn rule(op: Op, x: &[f64]) -> Option<(f64, Vec<f64>)> {
    use std::f64::consts::{FRAC_1_SQRT_2, LOG2_E, LOG10_E, PI};
    let u = x[0];
    let one = |value: f64, d: f64| Some((value, vec![d]));
    match op {
        Op::Variable | Op::Const => None,
        Op::Add => Some((u + x[1], vec![1.0, 1.0])),
        Op::Sub => Some((u - x[1], vec![1.0, -1.0])),
        Op::Mul => Some((u * x[1], vec![x[1], u])),
        Op::Div => Some((u / x[1], vec![1.0 / x[1], -u / (x[1] * x[1])])),
        Op::Neg => one(-u, -1.0),
        Op::Pow => {
            let p = u.powf(x[1]);
            Some((p, vec![x[1] * u.powf(x[1] - 1.0), p * u.ln()]))
        }
        Op::Exp => one(u.exp(), u.exp()),
        Op::Ln => one(u.ln(), 1.0 / u),
        Op::Log2 => one(u.log2(), LOG2_E / u),
        Op::Log10 => one(u.log10(), LOG10_E / u),
        Op::Sqrt => one(u.sqrt(), 0.5 * u.powf(-0.5)),
        Op::Cbrt => one(u.cbrt(), u.cbrt() / (3.0 * u)),
        Op::Abs => one(u.abs(), u.signum()),
        Op::Sin => one(u.sin(), u.cos()),
        Op::Cos => one(u.cos(), -u.sin()),
        Op::Tan => one(u.tan(), 1.0 / (u.cos() * u.cos())),
        Op::Asin => one(u.asin(), 1.0 / ((1.0 - u) * (1.0 + u)).sqrt()),
        Op::Acos => one(u.acos(), -1.0 / ((1.0 - u) * (1.0 + u)).sqrt()),
        Op::Atan => one(u.atan(), 1.0 / (1.0 + u * u)),
        Op::Sinh => one(u.sinh(), u.cosh()),
        Op::Cosh => one(u.cosh(), u.sinh()),
        Op::Tanh => one(u.tanh(), 1.0 / (u.cosh() * u.cosh())),
        Op::Sech => one(1.0 / u.cosh(), -u.tanh() / u.cosh()),
        // The same libm functions as the engine (Rust's f64::acosh and
        // f64::atanh lose digits near ±1); tests/it/accuracy.rs checks them
        // against mpmath. Equal values keep the rounding model below exact.
        Op::Asinh => one(libm::asinh(u), 1.0 / (u * u + 1.0).sqrt()),
        Op::Acosh => one(libm::acosh(u), 1.0 / ((u - 1.0) * (u + 1.0)).sqrt()),
        Op::Atanh => one(libm::atanh(u), 1.0 / ((1.0 - u) * (1.0 + u))),
        Op::Sigmoid => one(1.0 / (1.0 + (-u).exp()), 1.0 / (2.0 + 2.0 * u.cosh())),
        Op::Relu => one(
            if u > 0.0 { u } else { 0.0 },
            if u > 0.0 { 1.0 } else { 0.0 },
        ),
        Op::Softplus => one(u.exp().ln_1p(), 1.0 / (1.0 + (-u).exp())),
        Op::Gelu => {
            // Φ(u) = ½·erfc(−u/√2): `1 + erf` would cancel to 0 for u ≪ 0.
            let cdf = 0.5 * libm::erfc(-u * FRAC_1_SQRT_2);
            let pdf = (-0.5 * u * u).exp() / (2.0 * PI).sqrt();
            // The value as the engine computes it (Φ with the rounding of −u/√2
            // corrected), so that both walks see the same forward values; its
            // accuracy is checked against mpmath in tests/it/accuracy.rs.
            one((Op::Gelu.info().forward)(&[u]), cdf + u * pdf)
        }
        Op::Normcdf | Op::Normpdf => {
            let pdf = (-0.5 * u * u).exp() / (2.0 * PI).sqrt();
            // The values as the engine computes them (see gelu above).
            let value = (op.info().forward)(&[u]);
            one(value, if op == Op::Normcdf { pdf } else { -u * pdf })
        }
        Op::Floor => one(u.floor(), 0.0),
        Op::Ceil => one(u.ceil(), 0.0),
        Op::Round => one(u.round(), 0.0),
        Op::Sign => one(u.signum(), 0.0),
        Op::Detach => one(u, 0.0),
        Op::Min | Op::Max => {
            let out = if op == Op::Min {
                x.iter().copied().fold(f64::INFINITY, f64::min)
            } else {
                x.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            };
            let ties = x.iter().filter(|&&v| v == out).count() as f64;
            let partials = x.iter().map(|&v| if v == out { 1.0 / ties } else { 0.0 });
            Some((out, partials.collect()))
        }
    }
}

/// A bound on the absolute rounding error of a partial derivative, in units of
/// EPS: its magnitude, plus the cancellation of formulas like `1 − tanh(u)²` or
/// `1/(1 − u²)` that the engine or this test may use.
fn partial_error(op: Op, u: f64, partial: f64) -> f64 {
    match op {
        Op::Tanh | Op::Sech | Op::Sigmoid | Op::Gelu | Op::Normcdf | Op::Normpdf => {
            partial.abs() + 1.0
        }
        Op::Asin | Op::Acos | Op::Atanh | Op::Acosh => {
            partial.abs() + (1.0 + u * u) * partial * partial
        }
        _ => partial.abs(),
    }
}

/// A value with its derivatives with respect to every leaf (forward mode), the
/// same with absolute partials (the scale of the chain-rule sums), and a first-
/// order bound on the rounding error of the derivatives.
#[derive(Debug, Clone, Copy)]
struct Dual {
    value: f64,
    tangent: [f64; MAX_LEAVES],
    abs_tangent: [f64; MAX_LEAVES],
    error: [f64; MAX_LEAVES],
}

impl Dual {
    fn leaf(value: f64, index: Option<usize>) -> Dual {
        let mut tangent = [0.0; MAX_LEAVES];
        if let Some(i) = index {
            tangent[i] = 1.0;
        }
        Dual {
            value,
            tangent,
            abs_tangent: tangent,
            error: [0.0; MAX_LEAVES],
        }
    }

    /// The chain rule forward: `tangent = Σ partial_j · tangent_j`.
    fn chain(op: Op, value: f64, inputs: &[Dual], partials: &[f64]) -> Dual {
        let mut out = Dual::leaf(value, None);
        for (input, &p) in inputs.iter().zip(partials) {
            let perr = partial_error(op, input.value, p);
            for i in 0..MAX_LEAVES {
                out.tangent[i] += p * input.tangent[i];
                out.abs_tangent[i] += p.abs() * input.abs_tangent[i];
                out.error[i] += p.abs() * input.error[i] + perr * input.abs_tangent[i];
            }
        }
        out
    }

    /// How far this value moves when any one leaf moves by its step `h`.
    fn spread(&self, h: &[f64]) -> f64 {
        self.tangent
            .iter()
            .zip(h)
            .map(|(t, h)| t.abs() * h)
            .fold(0.0, f64::max)
    }
}

/// Finite-difference step for a leaf at `x`: `∛EPS` scaled, the usual balance of
/// truncation (`h²`) and rounding (`EPS/h`) errors of a central difference.
fn step(x: f64) -> f64 {
    EPS.cbrt() * x.abs().max(1.0)
}

/// True if `op` at these inputs is far enough from every kink, pole and domain
/// edge that no finite-difference step crosses one: the gap must exceed
/// `MIN_GAP` plus eight times how far the input moves under a step. `same[j]`
/// tells which inputs are one node (their ties are not kinks: `max(x, x)`).
fn far_from_kinks(op: Op, x: &[Dual], same: &[usize], h: &[f64]) -> bool {
    let gap = |d: &Dual| MIN_GAP + 8.0 * d.spread(h);
    let u = x[0].value;
    let g = gap(&x[0]);
    match op {
        Op::Div => x[1].value.abs() > gap(&x[1]),
        Op::Pow => u > g && x[1].value.abs() < 8.0,
        Op::Ln | Op::Log2 | Op::Log10 | Op::Sqrt => u > g,
        Op::Cbrt | Op::Abs | Op::Relu | Op::Sign => u.abs() > g,
        Op::Floor | Op::Ceil => (u - u.round()).abs() > g,
        Op::Round => (u - u.floor() - 0.5).abs() > g,
        Op::Asin | Op::Acos | Op::Atanh => u.abs() < 1.0 - g,
        Op::Acosh => u > 1.0 + g,
        Op::Tan => u.cos().abs() > g,
        Op::Exp | Op::Sinh | Op::Cosh => u.abs() < 20.0,
        Op::Min | Op::Max => (0..x.len()).all(|i| {
            (0..i).all(|j| {
                same[i] == same[j] || (x[i].value - x[j].value).abs() > gap(&x[i]) + gap(&x[j])
            })
        }),
        _ => true,
    }
}

/// The program built three ways: the engine's graph, dual numbers, and (for the
/// central difference) the node list to re-evaluate.
struct Built {
    graph: Graph,
    output: NodeId,
    leaves: Vec<NodeId>,
    /// Per node: its op (`None` for leaves and constants), inputs, dual value.
    nodes: Vec<(Option<Op>, Vec<usize>, Dual)>,
    /// Ops applied as drawn (not replaced by the fallback `sin`).
    used: Vec<Op>,
}

fn build(program: &Program) -> Result<Built, TestCaseError> {
    let ops: Vec<Op> = Op::table()
        .iter()
        .filter(|info| info.arity != Arity::Leaf)
        .map(|info| info.op)
        .collect();
    let h: Vec<f64> = program.leaves.iter().map(|&x| step(x)).collect();
    let mut graph = Graph::new();
    let mut nodes: Vec<(Option<Op>, Vec<usize>, Dual)> = Vec::new();
    let mut depth: Vec<usize> = Vec::new();
    let mut leaves = Vec::new();
    let mut used = Vec::new();
    for (i, &x) in program.leaves.iter().enumerate() {
        leaves.push(graph.leaf(x));
        nodes.push((None, Vec::new(), Dual::leaf(x, Some(i))));
        depth.push(0);
    }
    for instruction in &program.instructions {
        match instruction {
            Instruction::Const(c) => {
                graph.constant(*c);
                nodes.push((None, Vec::new(), Dual::leaf(*c, None)));
                depth.push(0);
            }
            Instruction::Apply { op, picks } => {
                let candidates: Vec<usize> = (0..nodes.len())
                    .filter(|&k| {
                        depth[k] < MAX_DEPTH
                            && nodes[k].2.value.abs() < MAX_MAGNITUDE
                            && nodes[k].2.tangent.iter().all(|t| t.abs() < MAX_MAGNITUDE)
                    })
                    .collect();
                prop_assume!(!candidates.is_empty());
                let pick = |p: usize| candidates[candidates.len() - 1 - p % candidates.len()];
                let mut op = ops[op % ops.len()];
                let count = match op.info().arity {
                    Arity::Unary => 1,
                    Arity::Binary => 2,
                    _ => picks.len(),
                };
                let mut inputs: Vec<usize> =
                    (0..count).map(|j| pick(picks[j % picks.len()])).collect();
                let duals: Vec<Dual> = inputs.iter().map(|&k| nodes[k].2).collect();
                let rule_of = |op| rule(op, &duals.iter().map(|d| d.value).collect::<Vec<_>>());
                let fits = far_from_kinks(op, &duals, &inputs, &h)
                    && rule_of(op).is_some_and(|(v, _)| v.is_finite());
                if fits {
                    used.push(op);
                } else {
                    op = Op::Sin;
                    inputs.truncate(1);
                }
                let values: Vec<f64> = inputs.iter().map(|&k| nodes[k].2.value).collect();
                let (value, partials) = rule(op, &values).expect("every op has a rule");
                let dual = Dual::chain(op, value, &duals[..inputs.len()], &partials);
                let ids: Vec<NodeId> = inputs.iter().map(|&k| NodeId(k as u32)).collect();
                let id = graph.apply(op, &ids).expect("arity fits");
                assert_eq!(id.index(), nodes.len());
                depth.push(1 + inputs.iter().map(|&k| depth[k]).max().unwrap_or(0));
                nodes.push((Some(op), inputs, dual));
            }
        }
    }
    let output = NodeId(nodes.len() as u32 - 1);
    Ok(Built {
        graph,
        output,
        leaves,
        nodes,
        used,
    })
}

/// The output's value with leaf `leaf` moved to `x`, evaluated with this test's
/// rules; `detach` keeps its unperturbed value (it passes no gradient).
fn evaluate_at(built: &Built, leaf: usize, x: f64) -> f64 {
    let mut values: Vec<f64> = Vec::with_capacity(built.nodes.len());
    for (k, (op, inputs, dual)) in built.nodes.iter().enumerate() {
        let value = match op {
            None if k == leaf => x,
            None => dual.value,
            Some(Op::Detach) => dual.value,
            Some(op) => {
                let args: Vec<f64> = inputs.iter().map(|&j| values[j]).collect();
                rule(*op, &args).map_or(f64::NAN, |(v, _)| v)
            }
        };
        values.push(value);
    }
    values[values.len() - 1]
}

/// `Σ_k |∂out/∂v_k|·|v_k|` with absolute partials: how much the rounding of every
/// node's value (about EPS relative each) can move the output.
fn rounding_scale(built: &Built) -> f64 {
    let n = built.nodes.len();
    let mut adjoint = vec![0.0; n];
    adjoint[n - 1] = 1.0;
    let mut scale = 0.0;
    for k in (0..n).rev() {
        let (op, inputs, dual) = &built.nodes[k];
        scale += adjoint[k] * dual.value.abs();
        if let Some(op) = op {
            let values: Vec<f64> = inputs.iter().map(|&j| built.nodes[j].2.value).collect();
            if let Some((_, partials)) = rule(*op, &values) {
                for (&j, p) in inputs.iter().zip(partials) {
                    adjoint[j] += p.abs() * adjoint[k];
                }
            }
        }
    }
    scale
}

/// Checks one program; returns the ops it applied as drawn.
fn check_gradients(program: &Program) -> Result<Vec<Op>, TestCaseError> {
    let built = build(program)?;
    let graph = &built.graph;
    let out = built.nodes.last().map(|n| n.2).expect("a node");
    let scale = rounding_scale(&built);
    let n = built.nodes.len() as f64;

    // Forward values agree (the engine's op table against this test's rules).
    let value = graph.value(built.output);
    prop_assert!(
        (value - out.value).abs() <= 64.0 * EPS * scale + f64::MIN_POSITIVE,
        "forward value {value} vs {}",
        out.value
    );

    let order = graph.topo_order(built.output);
    check_order(&built, &order)?;
    let grads = graph.backward(&order);
    for (i, &leaf) in built.leaves.iter().enumerate() {
        let reverse = grads[leaf];
        // Forward mode: the same exact derivative, summed along other paths in
        // another order; they differ only by rounding.
        let dual = out.tangent[i];
        // 128 rather than 8 units: the engine's local derivatives use the
        // stable forms (tanh' = 4e/(1+e)², pow through half powers, …) where
        // this reference uses the textbook ones, and the two round differently
        // by a few units per op (a CI run saw 47 units on a random chain).
        let tol_dual =
            128.0 * EPS * (out.error[i] + (n + 2.0) * out.abs_tangent[i]) + f64::MIN_POSITIVE;
        prop_assert!(
            (reverse - dual).abs() <= tol_dual,
            "leaf {i}: reverse {reverse} vs dual {dual} (tolerance {tol_dual:e})"
        );
        // Central differences at h and h/2, extrapolated (Richardson); their
        // difference estimates the truncation error, EPS·scale/h the rounding.
        let x = program.leaves[i];
        let central = |h: f64| {
            let (up, down) = (x + h, x - h);
            (evaluate_at(&built, i, up) - evaluate_at(&built, i, down)) / (up - down)
        };
        let h = step(x);
        let (coarse, fine) = (central(h), central(h / 2.0));
        let numeric = (4.0 * fine - coarse) / 3.0;
        let tol_fd =
            2.0 * (fine - coarse).abs() + 32.0 * EPS * scale / h + 4.0 * EPS * reverse.abs();
        prop_assert!(
            (reverse - numeric).abs() <= tol_fd,
            "leaf {i}: reverse {reverse} vs central difference {numeric} (tolerance {tol_fd:e})"
        );
    }
    Ok(built.used)
}

/// Every reachable node exactly once, output first, each node before its inputs.
fn check_order(built: &Built, order: &[NodeId]) -> Result<(), TestCaseError> {
    let n = built.nodes.len();
    let mut reachable = vec![false; n];
    reachable[n - 1] = true;
    for k in (0..n).rev() {
        if reachable[k] {
            for &j in &built.nodes[k].1 {
                reachable[j] = true;
            }
        }
    }
    let mut position = vec![usize::MAX; n];
    for (p, id) in order.iter().enumerate() {
        prop_assert!(reachable[id.index()], "{id:?} is not reachable");
        prop_assert_eq!(position[id.index()], usize::MAX, "{:?} twice", id);
        position[id.index()] = p;
    }
    prop_assert_eq!(order.len(), reachable.iter().filter(|&&r| r).count());
    prop_assert_eq!(order.first(), Some(&built.output));
    for id in order {
        for input in built.graph.operands(*id) {
            prop_assert!(position[input.index()] > position[id.index()]);
        }
    }
    Ok(())
}

#[test]
fn every_op_has_a_rule_in_this_test() {
    for info in Op::table().iter().filter(|i| i.arity != Arity::Leaf) {
        let x = [0.5, 0.25];
        let n = if info.arity == Arity::Binary { 2 } else { 1 };
        assert!(
            rule(info.op, &x[..n]).is_some(),
            "no rule for `{}`",
            info.name
        );
    }
}

#[test]
fn reverse_mode_matches_dual_numbers_and_central_differences() {
    let mut runner = TestRunner::new(Config {
        cases: 400,
        failure_persistence: None,
        ..Config::default()
    });
    let covered: RefCell<BTreeMap<&'static str, usize>> = RefCell::default();
    let outcome = runner.run(&program(), |program| {
        for op in check_gradients(&program)? {
            *covered.borrow_mut().entry(op.info().name).or_default() += 1;
        }
        Ok(())
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
    let covered = covered.into_inner();
    let missing: Vec<&str> = Op::table()
        .iter()
        .filter(|i| i.arity != Arity::Leaf && !covered.contains_key(i.name))
        .map(|i| i.name)
        .collect();
    assert!(
        missing.is_empty(),
        "ops never tested: {missing:?} (covered: {covered:?})"
    );
}

/// The tolerances are tight enough to catch a wrong derivative: a wrong rule in
/// the test's dual numbers (standing in for a wrong op-table entry) is caught.
#[test]
fn a_wrong_derivative_is_caught() {
    let program = Program {
        leaves: vec![0.7],
        instructions: vec![Instruction::Apply {
            op: Op::table()
                .iter()
                .filter(|i| i.arity != Arity::Leaf)
                .position(|i| i.op == Op::Tanh)
                .unwrap(),
            picks: vec![0],
        }],
    };
    let built = build(&program).unwrap();
    let reverse = built.graph.backward(&built.graph.topo_order(built.output))[built.leaves[0]];
    let wrong = 1.0 - 0.7f64.tanh(); // forgot the square
    assert!((reverse - wrong).abs() > 1e-3);
    assert!(check_gradients(&program).is_ok());
}

// ---------------------------------------------------------------------------
// Printing and parsing

/// An expression as an owned tree, for generating; flattened into an [`ExprTree`].
#[derive(Debug, Clone)]
enum Tree {
    Number(f64),
    Name(&'static str),
    Unary(UnaryOp, Box<Tree>),
    Binary(BinaryOp, Box<Tree>, Box<Tree>),
    Call(&'static str, bool, Vec<Tree>),
}

const NAMES: &[&str] = &[
    "x", "y", "θ", "x2", "_t", "pi", "e", "ans", "tanh", "f", "π",
];

fn tree() -> impl Strategy<Value = Tree> {
    let number = prop_oneof![
        (0u32..1000).prop_map(|n| n as f64),
        prop::num::f64::POSITIVE | prop::num::f64::ZERO,
    ];
    let leaf = prop_oneof![
        number.prop_map(Tree::Number),
        prop::sample::select(NAMES).prop_map(Tree::Name),
    ];
    let unary = prop_oneof![Just(UnaryOp::Neg), Just(UnaryOp::Plus)];
    let binary = prop_oneof![
        Just(BinaryOp::Add),
        Just(BinaryOp::Sub),
        Just(BinaryOp::Mul),
        Just(BinaryOp::Div),
        Just(BinaryOp::Pow),
    ];
    leaf.prop_recursive(8, 64, 3, move |inner| {
        prop_oneof![
            (unary.clone(), inner.clone()).prop_map(|(op, a)| Tree::Unary(op, Box::new(a))),
            (binary.clone(), inner.clone(), inner.clone()).prop_map(|(op, a, b)| Tree::Binary(
                op,
                Box::new(a),
                Box::new(b)
            )),
            (
                prop::sample::select(NAMES),
                any::<bool>(),
                prop::collection::vec(inner, 1..=3)
            )
                .prop_map(|(name, prime, args)| Tree::Call(name, prime, args)),
        ]
    })
}

/// Flattens `tree` (operands first, root last), with default spans.
fn flatten(tree: &Tree) -> ExprTree {
    let mut nodes: Vec<Expr> = Vec::new();
    // Post-order with an explicit stack: (node, children done?).
    let mut stack: Vec<(&Tree, bool)> = vec![(tree, false)];
    let mut ids: Vec<ExprId> = Vec::new();
    while let Some((t, done)) = stack.pop() {
        let children: Vec<&Tree> = match t {
            Tree::Number(_) | Tree::Name(_) => Vec::new(),
            Tree::Unary(_, a) => vec![a],
            Tree::Binary(_, a, b) => vec![a, b],
            Tree::Call(_, _, args) => args.iter().collect(),
        };
        if !done && !children.is_empty() {
            stack.push((t, true));
            for child in children.iter().rev() {
                stack.push((child, false));
            }
            continue;
        }
        let mut operands = ids.split_off(ids.len() - children.len());
        let kind = match t {
            Tree::Number(x) => ExprKind::Number(*x),
            Tree::Name(name) => ExprKind::Name(Name::new(name)),
            Tree::Unary(op, _) => ExprKind::Unary {
                op: *op,
                operand: operands[0],
            },
            Tree::Binary(op, _, _) => ExprKind::Binary {
                op: *op,
                lhs: operands[0],
                rhs: operands[1],
            },
            Tree::Call(name, derivative, _) => ExprKind::Call(Box::new(Call {
                name: Name::new(name),
                name_span: Span::default(),
                derivative: u8::from(*derivative),
                args: std::mem::take(&mut operands),
            })),
        };
        nodes.push(Expr::new(kind, Span::default()));
        ids.push(ExprId(nodes.len() as u32 - 1));
    }
    ExprTree { nodes }
}

fn unspan_tree(tree: &mut ExprTree) {
    for node in &mut tree.nodes {
        node.set_span(Span::default());
        if let ExprKind::Call(call) = &mut node.kind {
            call.name_span = Span::default();
        }
    }
}

fn unspan_ident(ident: &mut Ident) {
    ident.span = Span::default();
}

/// The statement with every span set to the default (spans depend on layout).
fn unspanned(mut statement: Statement) -> Statement {
    match &mut statement {
        Statement::Expr(tree) => unspan_tree(tree),
        Statement::Assign { target, value, .. } => {
            unspan_ident(target);
            unspan_tree(value);
        }
        Statement::Updates { targets, values } => {
            targets.iter_mut().for_each(unspan_ident);
            values.iter_mut().for_each(unspan_tree);
        }
        Statement::Define { name, params, body } => {
            unspan_ident(name);
            params.iter_mut().for_each(unspan_ident);
            unspan_tree(body);
        }
        Statement::Command { name, args } => {
            unspan_ident(name);
            args.iter_mut().for_each(unspan_ident);
        }
        Statement::Repeat(repeat) => {
            repeat.head = Span::default();
            repeat.body_span = Span::default();
            repeat.count.iter_mut().for_each(unspan_ident);
            repeat.file.iter_mut().for_each(unspan_ident);
            for located in &mut repeat.body {
                located.span = Span::default();
                located.statement = unspanned(located.statement.clone());
            }
        }
    }
    statement
}

fn parse(text: &str) -> Result<Statement, String> {
    syntax::parse_statement(text, Span::new(0, text.len()))
        .map(|located| unspanned(located.statement))
        .map_err(|e| format!("{e}"))
}

fn ident(name: &str) -> Ident {
    Ident {
        name: name.to_string(),
        span: Span::default(),
    }
}

fn statement() -> impl Strategy<Value = Statement> {
    let name = prop::sample::select(&["x", "θ", "w_1", "loss"][..]);
    let assign_op = prop::sample::select(
        &[
            AssignOp::Set,
            AssignOp::Add,
            AssignOp::Sub,
            AssignOp::Mul,
            AssignOp::Div,
        ][..],
    );
    let word = prop::sample::select(&["x", "all", "tanh", "1e3", "θ"][..]);
    prop_oneof![
        4 => tree().prop_map(|t| Statement::Expr(flatten(&t))),
        2 => (name.clone(), assign_op, tree()).prop_map(|(n, op, t)| Statement::Assign {
            target: ident(n),
            op,
            value: flatten(&t),
        }),
        1 => (name.clone(), prop::collection::vec(name.clone(), 0..3), tree()).prop_map(|(n, p, t)| {
            Statement::Define {
                name: ident(n),
                params: p.into_iter().map(ident).collect(),
                body: flatten(&t),
            }
        }),
        1 => (name, prop::collection::vec(word, 0..3)).prop_map(|(n, w)| Statement::Command {
            name: ident(n),
            args: w.into_iter().map(ident).collect(),
        }),
    ]
}

proptest! {
    #![proptest_config(Config { cases: 512, failure_persistence: None, ..Config::default() })]

    /// Print, parse: the same statement.
    #[test]
    fn printing_then_parsing_gives_the_same_ast(statement in statement()) {
        let text = statement.to_string();
        let parsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        prop_assert_eq!(parsed, statement, "{:?}", text);
    }

    /// Random token soup: no panic in splitting, parsing, evaluating or rendering;
    /// every error points inside the source; what parses prints back to itself.
    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(soup_token(), 0..40)) {
        let source: String = tokens.concat();
        let _ = syntax::needs_more_input(&source);
        for span in syntax::statement_spans(&source) {
            if let Ok(located) = syntax::parse_statement(&source, span) {
                let statement = unspanned(located.statement);
                let text = statement.to_string();
                let again = parse(&text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
                prop_assert_eq!(again, statement, "{:?} printed as {:?}", &source[span.start..span.end], text);
            }
        }
        for format in [Format::Json, Format::Human(Style::default())] {
            let mut printer = Printer::new(format, Vec::new(), Vec::new());
            let mut session = Session::new();
            let mut bad_span = None;
            let _ = session.run_source_with(&source, |session, result| {
                if let Err(error) = &result {
                    let span = error.span();
                    let inside = span.start <= span.end
                        && span.end <= source.len()
                        && source.is_char_boundary(span.start)
                        && source.is_char_boundary(span.end);
                    if !inside {
                        bad_span = Some(format!("{error:?}"));
                    }
                }
                let _ = printer.report(&result, session, &source, "<soup>");
                ControlFlow::Continue(())
            });
            prop_assert!(bad_span.is_none(), "error outside the source: {:?}", bad_span);
        }
    }

    /// `+ - * / ^`, signs in every position and implicit products (`2x`, `2 x`,
    /// `2(x+1)`), without redundant parentheses: gradcalc's value is bit
    /// for bit the reference evaluator's, and text the reference refuses (`x y`,
    /// `(1)x`, `x2`, `2^-2x`) is an error in gradcalc too.
    #[test]
    fn precedence_agrees_with_a_reference_evaluator(text in arithmetic()) {
        let expected = reference::evaluate(&text);
        let source = format!("{}; {text}", reference::VARIABLES);
        let mut session = Session::new();
        let mut got = None;
        let _ = session.run_source(&source, |result| {
            match result {
                Ok(events) => for event in events {
                    if let Event::Value { value, .. } = event {
                        got = value.number().map(Ok);
                    }
                },
                Err(error) => got = Some(Err(error.to_string())),
            }
            ControlFlow::Continue(())
        });
        match (got, expected) {
            (Some(Ok(got)), Ok(expected)) => prop_assert!(
                got.to_bits() == expected.to_bits() || (got.is_nan() && expected.is_nan()),
                "{:?}: gradcalc {}, reference {}", text, got, expected
            ),
            (Some(Err(_)), Err(_)) => {}
            (got, expected) => prop_assert!(
                false, "{:?}: gradcalc {:?}, reference {:?}", text, got, expected
            ),
        }
    }
}

fn soup_token() -> impl Strategy<Value = String> {
    let tokens = &[
        "x",
        "y",
        "θ",
        "_",
        "ans",
        "f",
        "tanh",
        "max",
        "pow",
        "e",
        "pi",
        "inf",
        "nan",
        "1",
        "0",
        "2.5",
        ".5",
        "1e3",
        "1e400",
        "1e-400",
        "1_000",
        "1__0",
        "1e",
        "2e1.5",
        "0x10",
        "1..2",
        "(",
        ")",
        "(",
        ")",
        ",",
        "'",
        "+",
        "-",
        "*",
        "/",
        "^",
        "**",
        "=",
        "+=",
        "-=",
        "*=",
        "/=",
        ":",
        ":grad",
        ":backward",
        ":topo",
        ":trace",
        ":vars",
        ":help",
        ":reset",
        ":quit",
        ":order",
        " all",
        "#",
        ";",
        "\n",
        "\r\n",
        " ",
        " ",
        "\t",
        "\0",
        "²",
        "×",
        "−",
        "é",
        "√",
        "⁻¹",
        "₁",
        "e\u{301}",
        "÷",
        "%",
        "help",
        "\u{feff}",
        "f(x) = ",
        "g(a, b) = a*b",
        "x = 2",
        "f'(",
        "\u{202e}",
        "\x1b[31m",
    ];
    prop::sample::select(&tokens[..]).prop_map(str::to_string)
}

/// Arithmetic over numbers and the variables of [`reference::VARIABLES`]:
/// `+ - * / ^ **`, signs before any operand (also right after `^` and after
/// another sign), brackets, and implicit products in every position: a number
/// literal then a name (`2x`, `2 x`, `2^-2x`) or a bracket (`2(x+1)`). Some texts
/// put two operands side by side where the language has no product (`x y`,
/// `1(x)`, `2x2`): both must refuse those. `(a)(b)` and `(a)x` are products;
/// `×` `·` `÷` `−`, superscript powers `x²` and `√` appear too.
fn arithmetic() -> impl Strategy<Value = String> {
    let number = prop::sample::select(&["0", "1", "2", "3", "7", "0.5", "2.5", "10"][..])
        .prop_map(str::to_string);
    let name = prop::sample::select(&["x", "y", "z"][..]).prop_map(str::to_string);
    let space = prop::sample::select(&["", " "][..]);
    let sup = prop::sample::select(&["", "", "²", "³"][..]);
    let root = prop::sample::select(&["", "", "", "√"][..]);
    let leaf = prop_oneof![
        3 => (root.clone(), number.clone(), sup.clone()).prop_map(|(r, n, p)| format!("{r}{n}{p}")),
        2 => (root.clone(), name.clone(), sup.clone()).prop_map(|(r, x, p)| format!("{r}{x}{p}")),
        2 => (number.clone(), space.clone(), root.clone(), name).prop_map(|(n, s, r, x)| format!("{n}{s}{r}{x}")),
    ];
    let op = prop::sample::select(
        &[
            " + ", " - ", "*", "/", "^", " ^ ", "**", " * ", "/ ", "^-", "^+", "^--", "**-", "×",
            "÷", " − ", "·", "^−",
        ][..],
    );
    leaf.prop_recursive(6, 48, 2, move |inner| {
        prop_oneof![
            4 => (inner.clone(), op.clone(), inner.clone()).prop_map(|(a, op, b)| format!("{a}{op}{b}")),
            1 => inner.clone().prop_map(|a| format!("-{a}")),
            1 => inner.clone().prop_map(|a| format!("+{a}")),
            1 => (inner.clone(), sup.clone(), root.clone()).prop_map(|(a, p, r)| format!("{r}({a}){p}")),
            1 => (number.clone(), space.clone(), inner.clone())
                .prop_map(|(n, s, a)| format!("{n}{s}({a})")),
            1 => (inner.clone(), space.clone(), root.clone(), inner.clone())
                .prop_map(|(a, s, r, b)| format!("({a}){s}{r}({b})")),
            1 => (inner.clone(), space.clone(), inner).prop_map(|(a, s, b)| format!("{a}{s}{b}")),
        ]
    })
}

/// A tiny recursive-descent evaluator written from the precedence table
/// (the table in `src/syntax/parser.rs`), independent of the parser:
///
/// ```text
/// sum      = product (("+" | "-") product)*
/// product  = signed (("*" | "/") signed)*
/// signed   = ("-" | "+") signed | implicit
/// implicit = power power*      a number literal or ")" directly followed by a
///                              name, "(" or "√"; any other operand after an
///                              operand is an error, and so is any product
///                              right after a "^" exponent (`2^2x`)
/// power    = "√" power | atom sup* (("^" | "**") exponent)?   right-associative
/// exponent = ("-" | "+") exponent | power              a sign binds only the power's operand
/// atom     = number | name | "(" sum ")"
/// sup      = "²" | "³"                                  a power tighter than "^"
/// ```
///
/// `×` `·` are `*`, `÷` is `/`, `−` is `-`.
///
/// So `2^-2x` and `2^2x` are refused (`2^(2x)` or `2^2*x`?), `2²x` is `4·x`,
/// and `-2^2` is `-(2^2)`.
mod reference {
    /// The variables the texts may use, as gradcalc statements.
    pub const VARIABLES: &str = "x = 3; y = 0.5; z = -2";

    fn variable(name: &str) -> Option<f64> {
        match name {
            "x" => Some(3.0),
            "y" => Some(0.5),
            "z" => Some(-2.0),
            _ => None,
        }
    }

    #[derive(Debug, Clone, PartialEq)]
    enum Token {
        Number(String),
        Name(String),
        Op(char),
        Sup(f64),
    }

    type Parsed = Result<f64, String>;

    /// The value of `text`, or why the language refuses it.
    pub fn evaluate(text: &str) -> Parsed {
        let tokens = tokenize(text);
        let mut at = 0;
        let value = sum(&tokens, &mut at)?;
        match tokens.get(at) {
            None => Ok(value),
            Some(t) => Err(format!("unexpected {t:?}")),
        }
    }

    fn tokenize(text: &str) -> Vec<Token> {
        let mut tokens = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            let start = i;
            if c == ' ' {
                i += 1;
            } else if c.is_ascii_digit() || c == '.' {
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                tokens.push(Token::Number(chars[start..i].iter().collect()));
            } else if c.is_alphabetic() {
                while i < chars.len() && (chars[i].is_alphabetic() || chars[i].is_ascii_digit()) {
                    i += 1;
                }
                tokens.push(Token::Name(chars[start..i].iter().collect()));
            } else if let Some(p) = "  ²³".chars().position(|s| s == c).filter(|&p| p >= 2) {
                tokens.push(Token::Sup(p as f64));
                i += 1;
            } else if let Some(k) = "×·÷−".chars().position(|s| s == c) {
                tokens.push(Token::Op(['*', '*', '/', '-'][k]));
                i += 1;
            } else if c == '*' && chars.get(i + 1) == Some(&'*') {
                tokens.push(Token::Op('^'));
                i += 2;
            } else {
                tokens.push(Token::Op(c));
                i += 1;
            }
        }
        tokens
    }

    fn op(tokens: &[Token], at: usize) -> Option<char> {
        match tokens.get(at) {
            Some(Token::Op(c)) => Some(*c),
            _ => None,
        }
    }

    fn sum(tokens: &[Token], at: &mut usize) -> Parsed {
        let mut value = product(tokens, at)?;
        while let Some(c @ ('+' | '-')) = op(tokens, *at) {
            *at += 1;
            let rhs = product(tokens, at)?;
            value = if c == '+' { value + rhs } else { value - rhs };
        }
        Ok(value)
    }

    fn product(tokens: &[Token], at: &mut usize) -> Parsed {
        let mut value = signed(tokens, at)?;
        while let Some(c @ ('*' | '/')) = op(tokens, *at) {
            *at += 1;
            let rhs = signed(tokens, at)?;
            value = if c == '*' { value * rhs } else { value / rhs };
        }
        Ok(value)
    }

    fn signed(tokens: &[Token], at: &mut usize) -> Parsed {
        signs_then(tokens, at, implicit)
    }

    /// `("-" | "+")* operand`, the signs applied innermost first.
    fn signs_then(
        tokens: &[Token],
        at: &mut usize,
        operand: fn(&[Token], &mut usize) -> Parsed,
    ) -> Parsed {
        let mut negate = false;
        while let Some(c @ ('-' | '+')) = op(tokens, *at) {
            *at += 1;
            negate ^= c == '-';
        }
        let value = operand(tokens, at)?;
        Ok(if negate { -value } else { value })
    }

    fn implicit(tokens: &[Token], at: &mut usize) -> Parsed {
        let (mut value, mut raised) = power(tokens, at)?;
        loop {
            let next = tokens.get(*at);
            let starts_operand = matches!(next, Some(Token::Number(_) | Token::Name(_)))
                || matches!(op(tokens, *at), Some('(' | '√'));
            if !starts_operand {
                return Ok(value);
            }
            // The token before, past a superscript (`2²x`, `(a)²(b)`).
            let before = tokens[..*at]
                .iter()
                .rev()
                .find(|t| !matches!(t, Token::Sup(_)));
            let after_number_or_bracket = matches!(before, Some(Token::Number(_) | Token::Op(')')));
            let name_or_bracket =
                matches!(next, Some(Token::Name(_))) || matches!(op(tokens, *at), Some('(' | '√'));
            if !(after_number_or_bracket && name_or_bracket) {
                return Err(format!("two operands side by side before {next:?}"));
            }
            if raised {
                return Err(format!(
                    "an implicit product after an exponent, before {next:?}"
                ));
            }
            let (factor, factor_raised) = power(tokens, at)?;
            value *= factor;
            raised = factor_raised;
        }
    }

    /// A power's value, and whether it ended with a `^` exponent (after which
    /// an implicit product is refused).
    fn power(tokens: &[Token], at: &mut usize) -> Result<(f64, bool), String> {
        if op(tokens, *at) == Some('√') {
            *at += 1;
            let (value, raised) = power(tokens, at)?;
            return Ok((value.sqrt(), raised));
        }
        let mut base = atom(tokens, at)?;
        while let Some(Token::Sup(p)) = tokens.get(*at) {
            base = base.powf(*p);
            *at += 1;
        }
        if op(tokens, *at) == Some('^') {
            *at += 1;
            Ok((base.powf(exponent(tokens, at)?), true))
        } else {
            Ok((base, false))
        }
    }

    fn exponent(tokens: &[Token], at: &mut usize) -> Parsed {
        signs_then(tokens, at, |tokens, at| Ok(power(tokens, at)?.0))
    }

    fn atom(tokens: &[Token], at: &mut usize) -> Parsed {
        let token = tokens.get(*at).cloned();
        *at += 1;
        match token {
            Some(Token::Op('(')) => {
                let value = sum(tokens, at)?;
                if op(tokens, *at) != Some(')') {
                    return Err("unclosed `(`".to_string());
                }
                *at += 1;
                Ok(value)
            }
            Some(Token::Number(n)) => n.parse().map_err(|_| format!("malformed number {n}")),
            Some(Token::Name(n)) => variable(&n).ok_or(format!("unknown name {n}")),
            other => Err(format!("expected an operand, found {other:?}")),
        }
    }
}

// ---------------------------------------------------------------------------
// Derivatives as values: the derivative graph of every op, at orders 1 to 3,
// against the backward pass (order 1) and central differences of the order
// below (orders 2 and 3); mixed second derivatives are symmetric.

/// A point inside every op's domain away from its kinks: `t` in [0.2, 0.9]
/// (acosh is taken at 1 + t).
fn op_point(op: Op, t: f64) -> f64 {
    if op == Op::Acosh { 1.0 + t } else { t }
}

/// `(d(x + h) − d(x − h)) / 2h` for the node `d`, moving the leaf `x` in place.
fn central(graph: &mut Graph, x: NodeId, d: NodeId, at: f64, h: f64) -> f64 {
    graph.update_leaf(x, at + h);
    let up = graph.value(d);
    graph.update_leaf(x, at - h);
    let down = graph.value(d);
    graph.update_leaf(x, at);
    (up - down) / (2.0 * h)
}

fn near(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance * want.abs().max(1.0)
}

proptest! {
    #[test]
    fn derivative_graphs_of_every_op_agree_at_orders_one_to_three(t in 0.2f64..0.9, s in 0.5f64..2.0) {
                for info in Op::table() {
            let op = info.op;
            let mut graph = Graph::new();
            let (x, y, other) = match info.arity {
                Arity::Leaf => continue,
                Arity::Unary => {
                    let x = graph.leaf(op_point(op, t));
                    (x, graph.apply(op, &[x]).unwrap(), None)
                }
                Arity::Binary | Arity::Variadic => {
                    let x = graph.leaf(t + 0.5);
                    let b = graph.leaf(s);
                    (x, graph.apply(op, &[x, b]).unwrap(), Some(b))
                }
            };
            let at = graph.value(x);
            let order = graph.topo_order(y);
            let reverse = graph.backward(&order);
            let [d1] = graph.grad(y, &[x], usize::MAX).unwrap().results[..] else { unreachable!() };
            prop_assert!(near(graph.value(d1), reverse[x], 1e-12), "{}' at {at}: {} vs {}", info.name, graph.value(d1), reverse[x]);
            let [d2] = graph.grad(d1, &[x], usize::MAX).unwrap().results[..] else { unreachable!() };
            let [d3] = graph.grad(d2, &[x], usize::MAX).unwrap().results[..] else { unreachable!() };
            let h = 1e-4;
            let numeric2 = central(&mut graph, x, d1, at, h);
            prop_assert!(near(graph.value(d2), numeric2, 1e-5), "{}'' at {at}: {} vs {numeric2}", info.name, graph.value(d2));
            let numeric3 = central(&mut graph, x, d2, at, h);
            prop_assert!(near(graph.value(d3), numeric3, 1e-5), "{}''' at {at}: {} vs {numeric3}", info.name, graph.value(d3));
            if let Some(b) = other {
                // ∂²y/∂x∂b = ∂²y/∂b∂x.
                let [dxb] = graph.grad(d1, &[b], usize::MAX).unwrap().results[..] else { unreachable!() };
                let [db] = graph.grad(y, &[b], usize::MAX).unwrap().results[..] else { unreachable!() };
                let [dbx] = graph.grad(db, &[x], usize::MAX).unwrap().results[..] else { unreachable!() };
                prop_assert!(near(graph.value(dxb), graph.value(dbx), 1e-12), "{} mixed: {} vs {}", info.name, graph.value(dxb), graph.value(dbx));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Derivative graphs moved with `:=`: a derivative graph built at one point and
// evaluated again at another (`Graph::update_leaf`, what `x := v` does) equals
// the derivative graph built afresh there, at orders 1 and 2, for every op.
// The ops with kinks or masks keep the branch they were built on (relu, min,
// max, the masks of `^`; docs/language.md §6), so for them both points are on
// one side; every other rule is one expression for every point.

/// `op` applied to the leaf `x` (and, for a binary or variadic op, a second
/// leaf `b`, or the constant exponent `b` of `x^b`).
fn moved_op(graph: &mut Graph, op: Op, x: NodeId, b: f64) -> NodeId {
    match (op, op.info().arity) {
        (Op::Pow, _) => {
            let b = graph.constant(b);
            graph.apply(op, &[x, b]).unwrap()
        }
        (_, Arity::Unary) => graph.apply(op, &[x]).unwrap(),
        _ => {
            let b = graph.leaf(b);
            graph.apply(op, &[x, b]).unwrap()
        }
    }
}

/// A point of `op`'s domain from a random signed magnitude `m` (any f64 from
/// 1e-300 to 1e300 and 0); `side` is the sign kept for ops with a kink at 0.
fn moved_point(op: Op, m: f64, side: f64) -> f64 {
    match op {
        Op::Ln | Op::Log2 | Op::Log10 | Op::Sqrt | Op::Pow => m.abs(),
        Op::Asin | Op::Acos | Op::Atanh => m.tanh(),
        Op::Acosh => 1.0 + m.abs(),
        Op::Relu => side * m.abs().max(1e-300),
        // Against the second input 0.5: the same winner at both points.
        Op::Min | Op::Max => 0.5 + side * (m.abs() + 0.25),
        _ => m,
    }
}

fn same_number(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn signed_magnitude() -> impl Strategy<Value = f64> {
    prop_oneof![
        1 => Just(0.0),
        6 => (-300.0f64..300.0, any::<bool>())
            .prop_map(|(e, negative)| if negative { -(10f64.powf(e)) } else { 10f64.powf(e) }),
        6 => -40.0f64..40.0,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn derivative_graphs_moved_with_update_equal_graphs_built_there(
        m1 in signed_magnitude(),
        m2 in signed_magnitude(),
        side in prop_oneof![Just(1.0f64), Just(-1.0f64)],
        exponent in prop::sample::select(vec![2.0f64, 3.0, -1.0, -2.0, 0.5, 1.5]),
    ) {
                for info in Op::table().iter().filter(|info| !info.op.is_leaf()) {
            let op = info.op;
            let (p1, p2) = (moved_point(op, m1, side), moved_point(op, m2, side));
            let b = if op == Op::Pow { exponent } else { 0.5 };
            // Built at p1, then x := p2.
            let mut moved = Graph::new();
            let x = moved.leaf(p1);
            let y = moved_op(&mut moved, op, x, b);
            let [g1] = moved.grad(y, &[x], usize::MAX).unwrap().results[..] else { unreachable!() };
            let [g2] = moved.grad(g1, &[x], usize::MAX).unwrap().results[..] else { unreachable!() };
            moved.update_leaf(x, p2);
            // Built at p2.
            let mut fresh = Graph::new();
            let x = fresh.leaf(p2);
            let y = moved_op(&mut fresh, op, x, b);
            let [f1] = fresh.grad(y, &[x], usize::MAX).unwrap().results[..] else { unreachable!() };
            let [f2] = fresh.grad(f1, &[x], usize::MAX).unwrap().results[..] else { unreachable!() };
            for (order, got, want) in [(1, moved.value(g1), fresh.value(f1)), (2, moved.value(g2), fresh.value(f2))] {
                prop_assert!(
                    same_number(got, want),
                    "{}: order {order} built at {p1:e}, moved to {p2:e}: {got:e}; built there: {want:e}",
                    info.name
                );
            }
        }
    }
}
