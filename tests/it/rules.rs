//! The local-derivative rules (`Op::rule`) and the formulas a trace prints.
//!
//! - Every rule is an expression the calculator parses, over its placeholders.
//! - Evaluated in a session, a rule equals the engine's numeric local
//!   derivative (`OpInfo::local`), at ordinary points and at the extremes.
//! - At the extremes (±1e-300, subnormals, ±1e300, next to domain edges,
//!   saturating tanh and sigmoid), a rule equals the derivative computed by
//!   mpmath at 60 digits from the textbook formula (`tests/rules/references.txt`,
//!   written by `scripts/rule_references.py`).
//! - Every formula `:trace` prints, typed back into the same session, evaluates
//!   to the local derivative printed beside it.

use gradcalc::engine::{Arity, Op, Rule};
use gradcalc::render::{Precision, Style, text};
use gradcalc::session::{Event, Session};
use gradcalc::syntax::{ExprKind, ExprTree, parse_expression};
use proptest::prelude::*;

use crate::util::session_events;

/// Runs `expression` in `session`; the value of its last expression statement.
fn value_of(session: &mut Session, expression: &str) -> f64 {
    let events = session_events(session, expression).unwrap();
    events
        .iter()
        .rev()
        .find_map(|event| match event {
            Event::Value { value, .. } => Some(*value),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no value from `{expression}`: {events:?}"))
}

/// A literal that parses back to exactly `x` (also nan and ±inf).
fn literal(x: f64) -> String {
    ExprTree::number(x).to_string()
}

/// The op's rule at `inputs`, evaluated in a fresh session with the placeholders
/// bound to the inputs; `None` when the rule passes nothing.
fn evaluate_rule(op: Op, position: usize, inputs: &[f64]) -> Option<f64> {
    let out = (op.info().forward)(inputs);
    let text = match op.rule(position, inputs, out) {
        Rule::PassesNothing => return None,
        Rule::Expr(text) => text,
    };
    let mut session = Session::new();
    for (name, &value) in op.placeholders().iter().zip(inputs) {
        session_events(&mut session, &format!("{name} = {}", literal(value))).unwrap();
    }
    Some(value_of(&mut session, &text))
}

fn numeric_local(op: Op, position: usize, inputs: &[f64]) -> f64 {
    let info = op.info();
    (info.local)(inputs, (info.forward)(inputs), position)
}

/// Equal as local derivatives: both nan, or within 4 units in the last place of
/// the larger, or both in the subnormal range (where a result has fewer digits
/// and an underflow to 0 is within rounding). `gelu'` is a sum of terms of size
/// up to 1 that cancel near its root, so its tolerance is absolute there.
fn agree(op: Op, got: f64, want: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got == want {
        return true;
    }
    if got.is_infinite() || want.is_infinite() {
        return false;
    }
    let scale = got
        .abs()
        .max(want.abs())
        .max(if op == Op::Gelu { 1.0 } else { 0.0 });
    let difference = (got - want).abs();
    difference <= 4.0 * f64::EPSILON * scale || difference <= 4.0 * f64::MIN_POSITIVE
}

fn is_function_of_the_language(name: &str) -> bool {
    Op::from_function_name(name).is_some()
}

/// Points that reach every branch of every rule.
fn branch_points(op: Op) -> Vec<Vec<f64>> {
    match op.info().arity {
        Arity::Leaf => vec![vec![]],
        Arity::Unary => [0.0, 0.5, -0.5, 2.0, -2.0, 1e-301, 1e200, -1e200, f64::NAN]
            .iter()
            .map(|&u| vec![u])
            .collect(),
        Arity::Binary => vec![
            vec![2.0, 3.0],
            vec![0.0, 2.0],
            vec![0.0, 0.0],
            vec![2.0, 0.0],
            vec![0.0, -1.0],
        ],
        Arity::Variadic => vec![
            vec![1.0],
            vec![1.0, 2.0],
            vec![2.0, 2.0, 2.0],
            vec![1.0, f64::NAN],
        ],
    }
}

#[test]
fn every_rule_parses_and_names_only_its_placeholders_and_functions() {
    for info in Op::table() {
        for inputs in branch_points(info.op) {
            let out = (info.forward)(&inputs);
            for position in 0..inputs.len().max(1) {
                let Rule::Expr(text) = info.op.rule(position, &inputs, out) else {
                    continue;
                };
                let tree = parse_expression(&text)
                    .unwrap_or_else(|e| panic!("{} rule `{text}` does not parse: {e}", info.name));
                for node in &tree.nodes {
                    match &node.kind {
                        ExprKind::Name(name) => assert!(
                            info.op.placeholders().contains(&name.as_str()) || name == "nan",
                            "{} rule `{text}` names `{name}`",
                            info.name
                        ),
                        ExprKind::Call(call) => assert!(
                            is_function_of_the_language(&call.name),
                            "{} rule `{text}` calls `{}`",
                            call.name,
                            info.name
                        ),
                        _ => {}
                    }
                }
            }
        }
    }
}

#[test]
fn flat_ops_and_flat_branches_pass_nothing() {
    for op in [Op::Floor, Op::Ceil, Op::Round, Op::Sign, Op::Detach] {
        assert_eq!(op.rule(0, &[2.5], 2.0), Rule::PassesNothing, "{op:?}");
    }
    assert_eq!(Op::Relu.rule(0, &[-1.0], 0.0), Rule::PassesNothing);
    assert_eq!(Op::Relu.rule(0, &[0.0], 0.0), Rule::PassesNothing);
    assert_eq!(Op::Relu.rule(0, &[1.0], 1.0).expr(), Some("1"));
    // d/da a^0 = 0 everywhere; d/db 0^b = 0 for b ≥ 0 (PyTorch's masks).
    assert_eq!(Op::Pow.rule(0, &[0.0, 0.0], 1.0), Rule::PassesNothing);
    assert_eq!(Op::Pow.rule(1, &[0.0, 2.0], 0.0), Rule::PassesNothing);
    assert_eq!(
        Op::Pow.rule(1, &[0.0, -1.0], f64::INFINITY).expr(),
        Some("a^b*ln(a)")
    );
    // min/max: the winner gets 1, tied winners 1/k each, the others nothing.
    assert_eq!(Op::Max.rule(1, &[1.0, 3.0, 2.0], 3.0).expr(), Some("1"));
    assert_eq!(Op::Max.rule(0, &[1.0, 3.0, 2.0], 3.0), Rule::PassesNothing);
    assert_eq!(Op::Min.rule(2, &[2.0, 5.0, 2.0], 2.0).expr(), Some("1/2"));
    assert_eq!(Op::Min.rule(0, &[4.0, 4.0, 4.0], 4.0).expr(), Some("1/3"));
    // Leaves and positions past the inputs: nothing, no panic.
    assert_eq!(Op::Variable.rule(0, &[], 1.0), Rule::PassesNothing);
    assert_eq!(Op::Exp.rule(3, &[1.0], 1.0), Rule::PassesNothing);
}

/// A random point in a region where the op is defined and its numeric local
/// derivative is not at an edge (those are in the reference table).
fn ordinary_point(op: Op) -> BoxedStrategy<Vec<f64>> {
    let unary = |range: std::ops::Range<f64>| range.prop_map(|u| vec![u]).boxed();
    match op {
        Op::Variable | Op::Const => Just(vec![]).boxed(),
        Op::Ln | Op::Log2 | Op::Log10 | Op::Sqrt => unary(1e-3..1e3),
        Op::Asin | Op::Acos | Op::Atanh => unary(-0.999..0.999),
        Op::Acosh => unary(1.001..1e3),
        Op::Tan => unary(-1.5..1.5),
        Op::Exp | Op::Sinh | Op::Cosh => unary(-50.0..50.0),
        Op::Pow => (1e-3..1e2f64, -4.0..4.0f64)
            .prop_map(|(a, b)| vec![a, b])
            .boxed(),
        Op::Div => (-1e3..1e3f64, 1e-3..1e3f64)
            .prop_map(|(a, b)| vec![a, b])
            .boxed(),
        Op::Min | Op::Max => prop::collection::vec(-3i32..3, 1..5)
            .prop_map(|v| v.into_iter().map(f64::from).collect())
            .boxed(),
        _ => match op.info().arity {
            Arity::Binary => (-1e3..1e3f64, -1e3..1e3f64)
                .prop_map(|(a, b)| vec![a, b])
                .boxed(),
            _ => unary(-30.0..30.0),
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn rules_evaluate_to_the_numeric_local_at_ordinary_points(
        (op, inputs) in (2..Op::table().len()).prop_flat_map(|i| {
            let op = Op::table()[i].op;
            ordinary_point(op).prop_map(move |inputs| (op, inputs))
        })
    ) {
        for position in 0..inputs.len() {
            let numeric = numeric_local(op, position, &inputs);
            match evaluate_rule(op, position, &inputs) {
                Some(rule) => prop_assert!(
                    agree(op, rule, numeric),
                    "{:?} at {inputs:?} position {position}: rule {rule:e}, numeric {numeric:e}",
                    op
                ),
                // Passing nothing is the limit 0 of the derivative.
                None => prop_assert_eq!(numeric, 0.0, "{:?} at {:?}", op, inputs),
            }
        }
    }
}

/// The rows of `tests/rules/references.txt`: op, position, inputs, expected.
fn references() -> Vec<(Op, usize, Vec<f64>, f64)> {
    let text = include_str!("../rules/references.txt");
    let by_symbol = |name: &str| {
        Op::table()
            .iter()
            .find(|info| info.name == name)
            .map(|info| info.op)
            .unwrap_or_else(|| panic!("no op `{name}`"))
    };
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let numbers: Vec<f64> = fields[2..].iter().map(|f| f.parse().unwrap()).collect();
            let (expected, inputs) = numbers.split_last().unwrap();
            (
                by_symbol(fields[0]),
                fields[1].parse().unwrap(),
                inputs.to_vec(),
                *expected,
            )
        })
        .collect()
}

#[test]
fn rules_equal_mpmath_at_the_extremes() {
    let rows = references();
    assert!(rows.len() > 1000, "{} rows", rows.len());
    let mut failures = Vec::new();
    for (op, position, inputs, expected) in rows {
        let rule = evaluate_rule(op, position, &inputs);
        if !rule.is_some_and(|rule| agree(op, rule, expected)) {
            failures.push(format!(
                "{op:?} {position} {inputs:?}: rule {rule:?}, mpmath {expected:e}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn the_numeric_local_equals_mpmath_at_the_extremes() {
    let mut failures = Vec::new();
    for (op, position, inputs, expected) in references() {
        let numeric = numeric_local(op, position, &inputs);
        if !agree(op, numeric, expected) {
            failures.push(format!(
                "{op:?} {position} {inputs:?}: numeric {numeric:e}, mpmath {expected:e}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------
// The trace: every printed formula is true.

/// One statement of a random program: `t{i} = op(operands)`.
#[derive(Debug, Clone)]
struct Statement {
    op: Op,
    /// Operands: indices of earlier variables (leaves first), or a literal.
    operands: Vec<Operand>,
}

#[derive(Debug, Clone)]
enum Operand {
    Variable(usize),
    Literal(f64),
}

const LEAVES: usize = 3;

fn operand(earlier: usize) -> impl Strategy<Value = Operand> {
    prop_oneof![
        4 => (0..earlier).prop_map(Operand::Variable),
        1 => prop_oneof![Just(0.5), Just(2.0), Just(3.0), Just(-1.5)].prop_map(Operand::Literal),
    ]
}

fn statement(earlier: usize) -> impl Strategy<Value = Statement> {
    let ops: Vec<Op> = Op::table()
        .iter()
        .map(|info| info.op)
        .filter(|op| !op.is_leaf())
        .collect();
    prop::sample::select(ops).prop_flat_map(move |op| {
        let count = match op.info().arity {
            Arity::Unary => 1..2usize,
            Arity::Binary => 2..3,
            _ => 1..4,
        };
        prop::collection::vec(operand(earlier), count)
            .prop_map(move |operands| Statement { op, operands })
    })
}

fn program() -> impl Strategy<Value = (Vec<f64>, Vec<Statement>)> {
    let leaves = prop::collection::vec(-2.0..2.0f64, LEAVES);
    let statements =
        (1..7usize).prop_flat_map(|n| (0..n).map(|i| statement(LEAVES + i)).collect::<Vec<_>>());
    (leaves, statements)
}

fn name(index: usize) -> String {
    if index < LEAVES {
        format!("x{index}")
    } else {
        format!("t{}", index - LEAVES)
    }
}

/// The statement as text: `t2 = t0*x1`, `t3 = max(x0, 2, t1)`.
fn source(index: usize, statement: &Statement) -> String {
    let operands: Vec<String> = statement
        .operands
        .iter()
        .map(|operand| match operand {
            Operand::Variable(i) => name(*i),
            Operand::Literal(x) => format!("({})", literal(*x)),
        })
        .collect();
    let info = statement.op.info();
    let expression = match (info.name, operands.as_slice()) {
        ("neg", [u]) => format!("-{u}"),
        (op @ ("+" | "-" | "*" | "/" | "^"), [a, b]) => format!("{a} {op} {b}"),
        (function, args) => format!("{function}({})", args.join(", ")),
    };
    format!("{} = {expression}", name(index))
}

/// `(formula, printed local)` of every `local` on a `:trace` line that has a formula.
fn printed_formulas(trace: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for line in trace.lines() {
        let Some((_, rest)) = line.split_once(": local ") else {
            continue;
        };
        let local = rest.split(";  ").next().unwrap();
        let parts: Vec<&str> = local.split(" = ").collect();
        match parts.as_slice() {
            [_, formula] => found.push((formula.to_string(), formula.to_string())),
            [_, formula, number] => found.push((formula.to_string(), number.to_string())),
            [_] => assert!(local.ends_with(" passes nothing"), "{line}"),
            _ => panic!("unexpected local: {line}"),
        }
    }
    found
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_formula_the_trace_prints_evaluates_to_the_printed_local(
        (leaves, statements) in program()
    ) {
        let mut session = Session::new();
        let mut script = String::new();
        for (i, x) in leaves.iter().enumerate() {
            script.push_str(&format!("{} = {}\n", name(i), literal(*x)));
        }
        for (i, statement) in statements.iter().enumerate() {
            script.push_str(&source(LEAVES + i, statement));
            script.push('\n');
        }
        // The output uses every statement, so the trace shows every op.
        let all: Vec<String> = (0..LEAVES + statements.len()).map(name).collect();
        script.push_str(&format!("s = {}\n", all.join(" + ")));
        session_events(&mut session, &script).map_err(TestCaseError::fail)?;
        let events = session_events(&mut session, ":trace all").map_err(TestCaseError::fail)?;
        let style = Style { precision: Precision::Full, ..Style::default() };
        let trace: String = events.iter().map(|e| text::render_event(e, &session, "", "<input>", &style)).collect();
        // Steps are numbered 1, 2, … as shown, and the header counts them.
        let numbers: Vec<usize> = trace
            .lines()
            .filter_map(|l| l.strip_prefix('[')?.split_once(']')?.0.parse().ok())
            .collect();
        prop_assert_eq!(&numbers, &(1..=numbers.len()).collect::<Vec<_>>());
        let count = format!("from s: {} node", numbers.len());
        prop_assert!(trace.starts_with(&format!("backward pass {count}")), "{}", trace);
        for (formula, printed) in printed_formulas(&trace) {
            prop_assert!(!formula.contains('#'), "an operand without a typeable label: {formula}");
            let value = value_of(&mut session, &formula);
            let printed: f64 = printed.parse().unwrap(); // also `inf`, `nan`
            // The trace prints the engine's numeric local derivative; the formula
            // is the same derivative in its stable form: equal to a few ulps.
            // gelu' (`normcdf(u) + u*normpdf(u)`) cancels near its root: its
            // tolerance is absolute.
            let op = if formula.contains("normcdf(") { Op::Gelu } else { Op::Add };
            prop_assert!(
                agree(op, value, printed),
                "`{formula}` = {value:e}, printed {printed:e}\n{script}\n{trace}"
            );
        }
    }
}
