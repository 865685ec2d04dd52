//! The typed local-derivative rules of the op table (`Op::local_rule`) and
//! the formulas a trace prints.
//!
//! - Built as a derivative graph (`Graph::grad`), a rule equals the engine's
//!   numeric local derivative (`OpInfo::local`, the fast path), at random
//!   ordinary points and at the extremes.
//! - The textbook form a trace prints equals the fast path to 1e-12 relative
//!   wherever it is well-conditioned, and at the extremes it is the true
//!   derivative: both equal the derivative computed by mpmath at 60 digits
//!   from the textbook formula (`tests/rules/references.txt`, written by
//!   `scripts/rule_references.py`).
//! - Every formula `:trace` prints, typed back into the same session, evaluates
//!   to the local derivative printed beside it, to 1e-12 relative plus the
//!   rounding the textbook form's own condition number allows.
//! - `:help`, `:trace`, `:step`'s lines and `:trace md|tex` print the same
//!   formula for every op.

use gradcalc::engine::{Arity, Expr, Form, Graph, LocalRule, Op};
use gradcalc::render::{Precision, Style, text};
use gradcalc::session::{Event, Session};
use gradcalc::syntax::{ExprTree, Span};
use proptest::prelude::*;

use crate::typed_back::{first_false, printed_formulas};
use crate::util::session_events;

/// Runs `expression` in `session`; the value of its last expression statement.
fn value_of(session: &mut Session, expression: &str) -> f64 {
    let events = session_events(session, expression).unwrap();
    events
        .iter()
        .rev()
        .find_map(|event| match event {
            Event::Value { value, .. } => value.number(),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no value from `{expression}`: {events:?}"))
}

/// A literal that parses back to exactly `x` (also nan and ±inf).
fn literal(x: f64) -> String {
    ExprTree::number(x).to_string()
}

/// The op's rule at `inputs` in its built form, built as a derivative graph
/// (a leaf per input, the op's node, `Graph::grad` with respect to the input
/// at `position`); `None` when the rule passes nothing.
fn evaluate_rule(op: Op, position: usize, inputs: &[f64]) -> Option<f64> {
    let out = (op.info().forward)(inputs);
    if op.local_rule(position, inputs, out, Form::Built) == LocalRule::PassesNothing {
        return None;
    }
    let mut graph = Graph::new();
    let leaves: Vec<_> = inputs.iter().map(|&v| graph.leaf(v)).collect();
    let node = graph.apply(op, &leaves).expect("arity from the table");
    let derivative = graph.grad(node, &[leaves[position]], 1000).expect("small");
    Some(graph.value(derivative.results[0]))
}

/// The op's textbook rule at `inputs`, as a trace prints it, evaluated
/// (`Expr::evaluate`); `None` when it passes nothing.
fn evaluate_textbook(op: Op, position: usize, inputs: &[f64]) -> Option<f64> {
    let out = (op.info().forward)(inputs);
    match op.local_rule(position, inputs, out, Form::Textbook) {
        LocalRule::PassesNothing => None,
        LocalRule::Undefined => Some(f64::NAN),
        LocalRule::Expr { expr, ties } => Some(expr.evaluate(inputs, out) / ties as f64),
    }
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

/// Every operand position an expression names, and whether it names the
/// node's own value. Recursion over the rule's small tree.
fn named_operands(expr: &Expr, operands: &mut Vec<usize>) {
    match *expr {
        Expr::Operand(k) => operands.push(k),
        Expr::Apply(_, args) => args.iter().for_each(|a| named_operands(a, operands)),
        Expr::Output | Expr::Num(_) | Expr::Named(_) => {}
    }
}

#[test]
fn every_rule_names_only_the_operands_its_op_has() {
    for info in Op::table() {
        for inputs in branch_points(info.op) {
            let out = (info.forward)(&inputs);
            for position in 0..inputs.len().max(1) {
                for form in [Form::Textbook, Form::Built] {
                    let LocalRule::Expr { expr, .. } =
                        info.op.local_rule(position, &inputs, out, form)
                    else {
                        continue;
                    };
                    let mut named = Vec::new();
                    named_operands(expr, &mut named);
                    let arity = match info.arity {
                        Arity::Unary => 1,
                        Arity::Binary => 2,
                        Arity::Leaf | Arity::Variadic => 0,
                    };
                    assert!(
                        named.iter().all(|&k| k < arity),
                        "{} {form:?} names operands {named:?}",
                        info.name
                    );
                }
            }
        }
    }
}

#[test]
fn every_rule_built_as_a_graph_is_its_expression_evaluated() {
    for info in Op::table() {
        for inputs in branch_points(info.op) {
            let out = (info.forward)(&inputs);
            for position in 0..inputs.len() {
                let built = evaluate_rule(info.op, position, &inputs);
                let evaluated = match info.op.local_rule(position, &inputs, out, Form::Built) {
                    LocalRule::PassesNothing => None,
                    LocalRule::Undefined => Some(f64::NAN),
                    LocalRule::Expr { expr, ties } => {
                        Some(expr.evaluate(&inputs, out) / ties as f64)
                    }
                };
                let same = match (built, evaluated) {
                    (Some(a), Some(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    (a, b) => a == b,
                };
                assert!(
                    same,
                    "{} at {inputs:?}: graph {built:?}, expression {evaluated:?}",
                    info.name
                );
            }
        }
    }
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
            if let (Some(textbook), true) = (evaluate_textbook(op, position, &inputs), well_conditioned(op, &inputs)) {
                prop_assert!(
                    close(textbook, numeric, 1e-12),
                    "{:?} at {inputs:?} position {position}: textbook {textbook:e}, numeric {numeric:e}",
                    op
                );
            }
        }
    }
}

/// Whether `a` and `b` agree to `relative` (both nan, or equal, counts).
fn close(a: f64, b: f64, relative: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= relative * a.abs().max(b.abs())
}

/// Whether the op's textbook form is well-conditioned at `inputs`: its
/// evaluation in f64 loses at most a few hundred ulps. The forms that cancel
/// are `1 - tanh(u)^2` (|u| large), `sigmoid(u)*(1 - sigmoid(u))` (u large)
/// and `normcdf(u) + u*normpdf(u)` (next to gelu′'s root u ≈ −0.7518);
/// `1 - u^2` and `u^2 - 1` lose only what their factors hold near ±1, within
/// the ordinary points' range.
fn well_conditioned(op: Op, inputs: &[f64]) -> bool {
    let u = inputs.first().copied().unwrap_or(0.0);
    match op {
        Op::Tanh => u.abs() < 4.0,
        Op::Sigmoid => u < 8.0,
        Op::Gelu => (u + 0.751_791_524_6).abs() > 0.05,
        _ => true,
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

/// The condition number of the textbook form of the local derivative
/// `partial` (`∂tanh(t1)/∂t1`) at the session's values: how much its
/// rounding in f64 is amplified. 1 for the forms that do not cancel; the
/// cancelling ones are `1 - tanh(u)^2`, `sigmoid(u)*(1 - sigmoid(u))`,
/// `1 - u^2` (asin, acos, atanh), `u^2 - 1` (acosh) and gelu′'s sum.
fn condition(session: &mut Session, partial: &str) -> f64 {
    let function = partial
        .trim_start_matches('∂')
        .split('(')
        .next()
        .unwrap_or("");
    let Some((_, operand)) = partial.rsplit_once("/∂") else {
        return 1.0;
    };
    let mut at = |expression: String| value_of(session, &expression);
    let u = at(operand.to_string());
    match function {
        "tanh" => {
            let t = u.tanh();
            t * t / (1.0 - t * t)
        }
        "sigmoid" => 1.0 / (1.0 + (-u).exp()) * (1.0 + u.exp()),
        "asin" | "acos" | "atanh" | "acosh" => u * u / (1.0 - u * u).abs(),
        "gelu" => {
            let (cdf, density) = (
                at(format!("normcdf({operand})")),
                at(format!("normpdf({operand})")),
            );
            (cdf.abs() + (u * density).abs()) / (cdf + u * density).abs()
        }
        _ => 1.0,
    }
}

/// Whether a formula typed back (`typed`) gives the printed local
/// derivative: both nan, equal, both below the normal range, or within
/// 1e-12 relative plus the rounding of the textbook form, `8·κ·ε` relative
/// for its condition number κ.
fn typed_back_agrees(typed: f64, printed: f64, condition: f64) -> bool {
    if typed == printed || (typed.is_nan() && printed.is_nan()) {
        return true;
    }
    if typed.abs().max(printed.abs()) < 4.0 * f64::MIN_POSITIVE {
        return true;
    }
    let tolerance = 1e-12 + 8.0 * condition * f64::EPSILON;
    (typed - printed).abs() <= tolerance * typed.abs().max(printed.abs())
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
        // The formulas as the trace's events hold them, each printed so.
        let printed = printed_formulas(&session, &events);
        for p in &printed {
            let formula = &p.formula;
            prop_assert!(trace.contains(&format!("local {} = {formula}", p.of)), "`{formula}` not printed\n{}", trace);
            prop_assert!(!formula.contains('#'), "an operand without a typeable label: {formula}");
            for hidden in ["detach(", "max(", "abs(", "sech("] {
                prop_assert!(
                    !formula.contains(hidden) || script.contains(hidden),
                    "`{formula}` shows `{hidden}` the user did not write"
                );
            }
        }
        // Typed back (the property of both kinds, `typed_back.rs`), within
        // the rounding each textbook form's condition number allows.
        let kappas: Vec<f64> = printed.iter().map(|p| condition(&mut session, &p.of)).collect();
        first_false(&mut session, &printed, |i, got| {
            typed_back_agrees(got[0], printed[i].value[0], kappas[i])
        })
        .map_err(|e| TestCaseError::fail(format!("{e} (condition {:?})\n{script}\n{trace}", kappas)))?;
    }
}

// ---------------------------------------------------------------------------
// One formula per op, wherever it is printed.

/// `(partial, formula)` of each `∂…` line of `:help` text: the formula is
/// `None` where the op passes nothing (`∂floor(u)/∂u: passes nothing …`).
fn help_rules(help: &str) -> Vec<(String, Option<String>)> {
    help.lines()
        .map(str::trim)
        .filter(|line| line.starts_with('∂'))
        .map(|line| match line.split_once(" = ") {
            Some((partial, rest)) => {
                let formula = rest
                    .split("; ")
                    .next()
                    .unwrap()
                    .split(" for ")
                    .next()
                    .unwrap();
                (partial.to_string(), Some(formula.to_string()))
            }
            None => (line.split(':').next().unwrap().to_string(), None),
        })
        .collect()
}

/// `(partial, formula)` of each local derivative of a `:trace` (or `:step`)
/// text, in the trace's order.
fn trace_rules(trace: &str) -> Vec<(String, Option<String>)> {
    trace
        .lines()
        .filter_map(|line| match line.split_once(": local ") {
            Some((_, rest)) => Some(rest),
            // `→ u: ∂floor(u)/∂u passes nothing here (not differentiable)`
            None if line.contains(" passes nothing") => line
                .split_once("→ ")
                .and_then(|(_, rest)| rest.split_once(": "))
                .map(|(_, rest)| rest),
            None => None,
        })
        .map(|rest| {
            let local = rest.split(";  ").next().unwrap();
            match local.split_once(" = ") {
                Some((partial, rest)) => {
                    let formula = rest.split(" = ").next().unwrap();
                    (partial.to_string(), Some(formula.to_string()))
                }
                None => (
                    local.split(" passes nothing").next().unwrap().to_string(),
                    None,
                ),
            }
        })
        .collect()
}

/// The letters and digits of a formula, without LaTeX's command words: the
/// same for a formula and its `:trace tex` rendering.
fn skeleton(text: &str) -> String {
    text.replace("\\cdot", "")
        .replace("\\mathrm", "")
        .replace("\\partial", "∂")
        .replace("\\allowbreak", "")
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect()
}

#[test]
fn help_trace_step_and_handouts_print_one_formula_per_op() {
    let style = Style {
        precision: Precision::Full,
        ..Style::default()
    };
    let mut checked = 0;
    for info in Op::table().iter().filter(|info| !info.op.is_leaf()) {
        // The trace's operands are named as `:help`'s placeholders.
        let (setup, expression, topic) = match (info.arity, info.name) {
            (_, "neg") => ("u = 0.5", "-u".to_string(), "operators"),
            (Arity::Binary, symbol @ ("+" | "-" | "*" | "/" | "^")) => {
                ("a = 0.5; b = 2", format!("a {symbol} b"), "operators")
            }
            (Arity::Variadic, name) => ("a = 0.5; b = 0.25", format!("{name}(a, b)"), name),
            (_, "acosh") => ("u = 1.5", "acosh(u)".to_string(), "acosh"),
            (_, name) => ("u = 0.5", format!("{name}(u)"), name),
        };
        let mut session = Session::new();
        session_events(&mut session, &format!("{setup}; z = {expression}")).unwrap();
        let render = |session: &mut Session, command: &str| -> String {
            let events = session_events(session, command).unwrap();
            events
                .iter()
                .map(|e| text::render_event(e, session, "", "<input>", &style))
                .collect()
        };
        let help = help_rules(&render(&mut session, &format!(":help {topic}")));
        let trace_text = render(&mut session, ":trace");
        let trace = trace_rules(&trace_text);
        // `:step` pages the step model of the trace's walk, a step at a time.
        let events = session_events(&mut session, ":step").unwrap();
        let model = session
            .step_model_of(&events[0], Span::new(0, 5))
            .unwrap()
            .expect("a trace");
        let step: String = {
            let mut pager = session.step_pager(&model);
            (0..=model.len())
                .map(|k| text::step_page(&mut pager, k, &style).unwrap() + "\n")
                .collect()
        };
        assert_eq!(trace_rules(&step), trace, "{}: :step and :trace", info.name);
        // Markdown escapes `*` and `_`.
        let md = render(&mut session, ":trace md")
            .replace("\\*", "*")
            .replace("\\_", "_");
        let tex = render(&mut session, ":trace tex");
        let max_partial = |partial: &str| partial.replace("(a, b, …)", "(a, b)");
        for (partial, formula) in &trace {
            if info.arity == Arity::Variadic && formula.is_none() {
                // The loser of max(a, b): `:help` says where nothing passes.
                assert!(help[0].1.is_some(), "{}", info.name);
                checked += 1;
                continue;
            }
            let from_help = help
                .iter()
                .find(|(p, _)| {
                    max_partial(p) == *partial
                        || (info.arity == Arity::Variadic
                            && p.starts_with(&format!("∂{}(", info.name)))
                })
                .unwrap_or_else(|| panic!("{}: `{partial}` not in :help {help:?}", info.name));
            assert_eq!(&from_help.1, formula, "{}: :help and :trace", info.name);
            if let Some(formula) = formula {
                let line = format!("{partial} = {formula}");
                assert!(
                    md.contains(&line),
                    "{}: `{line}` not in :trace md\n{md}",
                    info.name
                );
                assert!(
                    skeleton(&tex).contains(&skeleton(&line)),
                    "{}: `{line}` not in :trace tex\n{tex}",
                    info.name
                );
            }
            checked += 1;
        }
    }
    // Every input position of every op but the variadic ones' second input.
    assert!(checked >= 45, "{checked}");
}

/// The `:help` formula of `op` at `position` (`:help operators` for the
/// operators), as `tests/rules/textbook.tsv` records it.
fn help_formula(op: &str, position: usize) -> Option<String> {
    let (topic, partial_start) = match op {
        "+" | "-" | "*" | "/" | "^" => ("operators", Some(op)),
        name => (name, None),
    };
    let mut session = Session::new();
    let style = Style::default();
    let events = session_events(&mut session, &format!(":help {topic}")).unwrap();
    let help: String = events
        .iter()
        .map(|e| text::render_event(e, &session, "", "<input>", &style))
        .collect();
    let rules = help_rules(&help);
    let mine: Vec<&(String, Option<String>)> = match partial_start {
        Some(symbol) => rules
            .iter()
            .filter(|(partial, _)| {
                partial.starts_with(&format!("∂(a {symbol} b)"))
                    || partial.starts_with(&format!("∂(a{symbol}b)"))
            })
            .collect(),
        None => rules.iter().collect(),
    };
    mine.get(position).and_then(|(_, formula)| formula.clone())
}

/// `tests/rules/textbook.tsv`, written by `scripts/textbook_references.py`:
/// mpmath found each formula `:help` printed equal (to 1e-30) to its own
/// derivative of the op at the point. The formulas are still the ones
/// printed, and each, typed into gradcalc, gives the true derivative to
/// 1e-12 relative (the points are where the forms are well-conditioned).
#[test]
fn every_printed_formula_is_the_true_derivative() {
    let text = include_str!("../rules/textbook.tsv");
    let mut ops = std::collections::BTreeSet::new();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let fields: Vec<&str> = line.split('\t').collect();
        let [op, position, formula, point, truth] = fields[..] else {
            panic!("bad row `{line}`");
        };
        let position: usize = position.parse().unwrap();
        let printed = help_formula(op, position);
        assert_eq!(
            printed.as_deref(),
            Some(formula),
            "{op} {position}: :help changed"
        );
        let mut session = Session::new();
        let values: Vec<&str> = point.split(',').collect();
        let names: &[&str] = if values.len() == 1 {
            &["u"]
        } else {
            &["a", "b"]
        };
        for (name, value) in names.iter().zip(&values) {
            session_events(&mut session, &format!("{name} = {value}")).unwrap();
        }
        let typed = value_of(&mut session, formula);
        let truth: f64 = truth.parse().unwrap();
        assert!(
            close(typed, truth, 1e-12),
            "{op} {position} at {point}: `{formula}` = {typed:e}, mpmath {truth:e}"
        );
        ops.insert(op);
    }
    // Every op with a formula: 26 functions and 5 operators.
    assert_eq!(ops.len(), 31, "{ops:?}");
}
