//! The rule of a tensor step as `:trace`, `:step`, the slides, the page and
//! `:dot` write it: text that is gradcalc input. Typed back at its step, with
//! `upstream` bound to the step's upstream gradient and the operands' names
//! as they stand, it gives the numbers printed beside it (a property test,
//! `tests/it/tensor_rules.rs`, checks this for every tensor op).
//!
//! - `@` is the matrix product, `⊙` (read as `*`) the elementwise one;
//!   `outer(u, x)` is `u·xᵀ` of two vectors.
//! - Where an op passes nothing at some elements the rule carries the mask
//!   that zeroes them: `upstream ⊙ (u > 0)` for relu (PyTorch's
//!   `threshold_backward`), `upstream ⊙ (u > v)` for `max(u, v)`, with
//!   `(u == v)/2` added where the operands tie (gradcalc splits ties).
//! - A broadcast operand receives the sum of the product over the axes it
//!   was broadcast along: `sum(upstream, 0)`, `sum(upstream ⊙ W, 1, keepdims)`.

use crate::engine::tensor::{
    Rule, Shape, Side, TensorContribution, TensorGraph, TensorId, TensorOp,
};
use crate::engine::{LocalRule, Op, Passing};
use crate::syntax::{ExprTree, Span};

/// The rule operand `c` of `node` receives, as text over the nodes' labels
/// (`labels`, indexed by node), and the shapes it takes and gives
/// (`outer((2), (3)) → 2×3`).
pub(super) fn rule_text(
    graph: &TensorGraph,
    node: TensorId,
    c: &TensorContribution,
    labels: &[String],
) -> (String, String) {
    let operands: Vec<&str> = graph
        .operands(node)
        .iter()
        .map(|o| labels[o.index()].as_str())
        .collect();
    let a = operands.first().copied().unwrap_or("a");
    let input = graph.shape(c.input);
    let out = graph.shape(node);
    let from = |shapes: String| format!("{} → {input}", shapes);
    let by_shape = || from(out.parenthesized().to_string());
    match &c.rule {
        Rule::MatMul { side, .. } => matmul_rule(*side, &operands, graph, node),
        Rule::Outer { side } => {
            let (u, x) = (graph.operands(node)[0], graph.operands(node)[1]);
            match side {
                Side::Left => (
                    format!("upstream @ {}", bracketed(operands[1])),
                    format!(
                        "{} @ {} → {input}",
                        out.parenthesized(),
                        graph.shape(x).parenthesized()
                    ),
                ),
                Side::Right => (
                    format!("{} @ upstream", bracketed(a)),
                    format!(
                        "{} @ {} → {input}",
                        graph.shape(u).parenthesized(),
                        out.parenthesized()
                    ),
                ),
            }
        }
        Rule::Elementwise { op, position } => {
            let text = elementwise_rule(graph, node, *op, *position, &operands);
            match c.summed_from {
                Some(from) => (
                    summed(text, from, input),
                    format!("⊙ elementwise at {from}, summed over the broadcast axes → {input}"),
                ),
                None => (text, format!("⊙ elementwise, {out}")),
            }
        }
        Rule::Transposed
        | Rule::Scatter
        | Rule::Broadcast { .. }
        | Rule::BroadcastKept { .. }
        | Rule::Mean { .. } => reduction_rule(&c.rule, graph.op(node), input, out),
        Rule::Extremum { .. }
        | Rule::ExtremumAlong { .. }
        | Rule::MeanAlong { .. }
        | Rule::LogSoftmax
        | Rule::CrossEntropy { .. }
        | Rule::NoGradient => (
            super::tensors::batch_rule_text(&c.rule, &operands, input),
            by_shape(),
        ),
        // p is the node itself: its label is `softmax(z)` or the name it
        // was given.
        Rule::Softmax => {
            let p = bracketed(&labels[node.index()]);
            let (sum, each) = match input.rank() {
                2 => (
                    format!("sum({p} ⊙ upstream, 1, keepdims)"),
                    ", each row on its own",
                ),
                _ => (format!("sum({p} ⊙ upstream)"), ""),
            };
            let named = if labels[node.index()] == format!("softmax({a})") {
                String::new()
            } else {
                format!(", {p} = softmax({a})")
            };
            (
                format!("{p} ⊙ (upstream − {sum})"),
                format!("{}{each}{named}", by_shape()),
            )
        }
        Rule::LogSumExp => match *input.dims() {
            [_, n] => (
                format!("outer(upstream, ones({n})) ⊙ softmax({a})"),
                from(format!("{}, each row", out.parenthesized())),
            ),
            _ => (format!("upstream ⊙ softmax({a})"), by_shape()),
        },
    }
}

/// The rule of a structural op or a reduction (transpose, index, sum,
/// mean, max) over an operand of shape `input`, `op` the node's op, `out`
/// its shape: the upstream placed or broadcast back, written with `ones`,
/// `eye` and `outer`.
fn reduction_rule(rule: &Rule, op: TensorOp, input: Shape, out: Shape) -> (String, String) {
    let by_shape = format!("{} → {input}", out.parenthesized());
    match rule {
        Rule::Transposed => (
            "upstreamᵀ".to_string(),
            format!("{}ᵀ → {input}", out.parenthesized()),
        ),
        Rule::Scatter => {
            let unit = match op {
                TensorOp::Index(i) => match *input.dims() {
                    [n] => format!("upstream ⊙ eye({n})[{i}]"),
                    [m, _] => format!("outer(eye({m})[{i}], upstream)"),
                    _ => "upstream".to_string(),
                },
                TensorOp::Index2(i, j) => format!(
                    "upstream ⊙ {}",
                    unit_matrix(input, i * input.as_matrix().1 + j)
                ),
                TensorOp::Slice(first, second) => super::tensors::slice_rule(first, second, input),
                _ => "upstream".to_string(),
            };
            (unit, by_shape)
        }
        Rule::Broadcast { axis } => {
            let text = match (input.dims(), axis) {
                ([], _) => "upstream".to_string(),
                (&[_, n], Some(1)) => format!("outer(upstream, ones({n}))"),
                _ => format!("upstream ⊙ {}", ones(input)),
            };
            (text, by_shape)
        }
        Rule::BroadcastKept { .. } => (format!("upstream ⊙ {}", ones(input)), by_shape),
        Rule::Mean { count } => (
            match input.rank() {
                0 => format!("upstream / {count}"),
                _ => format!("upstream ⊙ {} / {count}", ones(input)),
            },
            by_shape,
        ),
        _ => unreachable!("the rules of structural ops and reductions only"),
    }
}

/// `ones(n)` or `ones(m, n)` of `shape`.
fn ones(shape: Shape) -> String {
    match *shape.dims() {
        [m, n] => format!("ones({m}, {n})"),
        [n] => format!("ones({n})"),
        _ => "1".to_string(),
    }
}

/// The tensor of `shape` with 1 at row-major `index` and 0 elsewhere:
/// `eye(n)[i]` of a vector, `outer(eye(m)[i], eye(n)[j])` of a matrix.
fn unit_matrix(shape: Shape, index: usize) -> String {
    match *shape.dims() {
        [m, n] => format!(
            "outer(eye({m})[{}], eye({n})[{}])",
            index / n.max(1),
            index % n.max(1)
        ),
        [n] => format!("eye({n})[{index}]"),
        _ => "1".to_string(),
    }
}

/// `text` in brackets unless it is one word or one bracketed whole.
fn bracketed(text: &str) -> String {
    if text.contains(' ') && !wrapped_in_brackets(text) {
        format!("({text})")
    } else {
        text.to_string()
    }
}

/// `text`, of shape `from`, summed down to `to` over the axes it was
/// broadcast along (numpy's broadcasting adjoint): the leading axes `to`
/// lacks with `sum(…, 0)`, the axes where `to` has size 1 with `sum(…, k,
/// keepdims)`, a scalar with `sum(…)`.
fn summed(text: String, from: Shape, to: Shape) -> String {
    if to.rank() == 0 {
        return format!("sum({text})");
    }
    let (f, t) = (from.dims(), to.dims());
    let lead = f.len() - t.len();
    let mut text = text;
    for _ in 0..lead {
        text = format!("sum({text}, 0)");
    }
    for (k, (&f, &t)) in f[lead..].iter().zip(t).enumerate() {
        if t == 1 && f != 1 {
            text = format!("sum({text}, {k}, keepdims)");
        }
    }
    text
}

/// A matrix product's rule for the operand on `side`, and its shapes: the
/// product of matrices `upstream @ Bᵀ` and `Aᵀ @ upstream`; a vector's
/// outer product where the gradient is a matrix and the factor a vector;
/// a scale where both factors are vectors (the product is a number).
fn matmul_rule(
    side: Side,
    operands: &[&str],
    graph: &TensorGraph,
    node: TensorId,
) -> (String, String) {
    let ids = graph.operands(node);
    let (sa, sb, out) = (graph.shape(ids[0]), graph.shape(ids[1]), graph.shape(node));
    let (a, b) = (operands[0], operands[1]);
    // (Xᵀ)ᵀ is X: a transposed operand is written untransposed.
    let transposed = |text: &str, shape: Shape| match text.strip_suffix('ᵀ') {
        Some(inner) if !inner.contains(' ') || wrapped_in_brackets(inner) => inner.to_string(),
        _ if shape.rank() == 1 => text.to_string(),
        _ => format!("{}ᵀ", bracketed(text)),
    };
    let p = |s: Shape| s.parenthesized().to_string();
    match (side, sa.rank(), sb.rank()) {
        (Side::Left, 1, 1) => (
            format!("upstream ⊙ {}", bracketed(b)),
            format!("() ⊙ {} → {sa}", p(sb)),
        ),
        (Side::Right, 1, 1) => (
            format!("upstream ⊙ {}", bracketed(a)),
            format!("() ⊙ {} → {sb}", p(sa)),
        ),
        (Side::Left, 2, 1) => (
            format!("outer(upstream, {})", b),
            format!("outer({}, {}) → {sa}", p(out), p(sb)),
        ),
        (Side::Right, 1, 2) => (
            format!("outer({}, upstream)", a),
            format!("outer({}, {}) → {sb}", p(sa), p(out)),
        ),
        (Side::Left, _, _) => (
            format!("upstream @ {}", transposed(b, sb)),
            format!("{} @ {} → {sa}", p(out), p(sb.transposed())),
        ),
        (Side::Right, _, _) => (
            format!("{} @ upstream", transposed(a, sa)),
            format!("{} @ {} → {sb}", p(sa.transposed()), p(out)),
        ),
    }
}

/// `upstream ⊙ f′` for an elementwise op at operand `position`, `f′` the
/// scalar op table's textbook local derivative over the operands' labels,
/// times the mask of where the op passes (relu, max, min) and `0 ⊙
/// upstream` for an op that passes nothing (floor, sign, detach).
fn elementwise_rule(
    graph: &TensorGraph,
    node: TensorId,
    op: Op,
    position: usize,
    operands: &[&str],
) -> String {
    let Some(derivative) = op.info().derivative(position) else {
        return "0 ⊙ upstream".to_string();
    };
    let guarded = zero_base_guard(graph, node, op, position, operands);
    let trees: Vec<ExprTree> = operands
        .iter()
        .enumerate()
        .map(|(k, o)| match (&guarded, k) {
            // Written as typed: parsed, the comparisons would print as
            // the arithmetic they stand for.
            (Some(base), 0) => ExprTree::name(&format!("({base})")),
            _ => operand_tree(o),
        })
        .collect();
    let refs: Vec<&ExprTree> = trees.iter().collect();
    let local = super::formula::rule_tree(
        op,
        LocalRule::Expr {
            expr: &derivative.textbook,
            ties: 1,
        },
        &refs,
    );
    let texts: Vec<String> = trees.iter().map(ToString::to_string).collect();
    let mask = match (derivative.passing, &texts[..]) {
        (Passing::WherePositive, [u]) => Some(format!("({u} > 0)")),
        (Passing::ToLargest | Passing::ToSmallest, [u, v]) => {
            let (me, other) = if position == 0 { (u, v) } else { (v, u) };
            let sign = if derivative.passing == Passing::ToLargest {
                '>'
            } else {
                '<'
            };
            Some(if ties(graph, node) {
                format!("(({me} {sign} {other}) + ({me} == {other})/2)")
            } else {
                format!("({me} {sign} {other})")
            })
        }
        (Passing::NotDifferentiable | Passing::Detached, _) => return "0 ⊙ upstream".to_string(),
        _ => None,
    };
    let factor = match local.map(|tree| tree.to_string()) {
        None => return "0 ⊙ upstream".to_string(),
        Some(text) if text == "1" => None,
        Some(text) if text == "-1" => {
            return match mask {
                Some(mask) => format!("−upstream ⊙ {mask}"),
                None => "−upstream".to_string(),
            };
        }
        Some(text) if text.contains(' ') || text.starts_with('-') => Some(format!("({text})")),
        Some(text) => Some(text),
    };
    match (factor, mask) {
        (None, None) => "upstream".to_string(),
        (Some(f), None) => format!("upstream ⊙ {f}"),
        (None, Some(m)) => format!("upstream ⊙ {m}"),
        (Some(f), Some(m)) => format!("upstream ⊙ {f} ⊙ {m}"),
    }
}

/// The base of `a ^ b` written so that the rule of the operand at
/// `position` types back to the numbers printed where the base is 0, when
/// some element of `node` has such a base; `None` otherwise (and for other
/// ops). At a = 0 the op passes nothing (PyTorch's `pow_backward_self` at
/// b = 0, `pow_backward_exponent` at b ≥ 0) where the textbook rules read
/// 0·∞ (`b·a^(b − 1)` at b = 0, `a^b·ln(a)` at b ≥ 0, nan or −inf typed
/// back): the base becomes `a + (a == 0)*(b == 0)` (or `(b >= 0)`), which
/// is a everywhere but there, and 1 there, so the rule gives the 0 printed.
fn zero_base_guard(
    graph: &TensorGraph,
    node: TensorId,
    op: Op,
    position: usize,
    operands: &[&str],
) -> Option<String> {
    let (Op::Pow, [a, b]) = (op, operands) else {
        return None;
    };
    let (test, passes_nothing): (&str, fn(f64) -> bool) = match position {
        0 => ("==", |b| b == 0.0),
        _ => (">=", |b| b >= 0.0),
    };
    let (a, b) = (bracketed(a), bracketed(b));
    any_element(graph, node, |x, y| x == 0.0 && passes_nothing(y))
        .then(|| format!("{a} + ({a} == 0)*({b} {test} 0)"))
}

/// Whether the two operands of the elementwise `node` are equal at some
/// element of its output (broadcast as numpy does).
fn ties(graph: &TensorGraph, node: TensorId) -> bool {
    any_element(graph, node, |a, b| a == b)
}

/// Whether `hit` holds for the two operands of the elementwise `node` at
/// some element of its output (broadcast as numpy does).
fn any_element(graph: &TensorGraph, node: TensorId, hit: impl Fn(f64, f64) -> bool) -> bool {
    let (m, n) = graph.shape(node).as_matrix();
    let at = |id: TensorId, i: usize, j: usize| {
        let t = graph.value(id);
        match *t.shape().dims() {
            [r, c] => t.data()[if r == 1 { 0 } else { i } * c + if c == 1 { 0 } else { j }],
            [c] => t.data()[if c == 1 { 0 } else { j }],
            _ => t.data()[0],
        }
    };
    let ids = graph.operands(node);
    (0..m).any(|i| (0..n).any(|j| hit(at(ids[0], i, j), at(ids[1], i, j))))
}

/// Whether `text` is one bracketed whole: `(W @ x)`, not `(a) + (b)`.
pub(super) fn wrapped_in_brackets(text: &str) -> bool {
    if !text.starts_with('(') || !text.ends_with(')') {
        return false;
    }
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 && i + 1 < text.len() {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// An operand's label as an expression tree, so that a rule written over it
/// brackets it where it binds less tightly than its place (`2*(x + 1)`, not
/// `2*x + 1`). A label is expression text; one that does not parse as an
/// expression (a short name `t9` does) is bracketed whole.
fn operand_tree(label: &str) -> ExprTree {
    let parsed = crate::syntax::parse_statement(label, Span::new(0, label.len()));
    match parsed.map(|located| located.statement) {
        Ok(crate::syntax::Statement::Expr(tree)) => tree,
        _ if label.contains(' ') => ExprTree::name(&format!("({label})")),
        _ => ExprTree::name(label),
    }
}
