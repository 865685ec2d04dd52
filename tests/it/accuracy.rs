//! The accuracy sweep: every op of the op table, on a grid spanning the f64
//! range (both signs, subnormal to 1.8e308, next to every domain edge, kink and
//! pole), against the true values and local derivatives that
//! scripts/accuracy_reference.py computed with mpmath at 60+ digits
//! (tests/data/accuracy.tsv), and chains of two and three ops at extreme inputs
//! through `Graph::backward` (tests/data/accuracy_chains.tsv).
//!
//! Where the true number is normal, the relative error is at most 1e-13 (looser
//! per-op bounds are listed in `BOUNDS` with their reason, and in
//! docs/accuracy.md); so a normal true derivative never comes out 0, ±inf or
//! nan. Where it is subnormal, the error is at most a few subnormal steps; where
//! it underflows, the result is 0 or a few steps; where it overflows, the result
//! is the infinity of its sign; where it is exactly 0, nan or `none` (the op
//! passes no gradient), exactly that.
//!
//! `GRADCALC_WRITE_ACCURACY=1 cargo test --test it accuracy::` rewrites the table of
//! the largest errors in ulps in docs/accuracy.md.

use std::collections::BTreeMap;

use gradcalc::engine::{Graph, Op, OpInfo};

/// The relative error allowed where the true value is a normal number.
const DEFAULT_BOUND: f64 = 1e-13;

/// Looser bounds, per op and entry (`"value"`, `"d0"`, `"d1"`), each with
/// its reason. None today: gelu' = Φ(u) + u·φ(u), which cancels next to its
/// root, is held to the default bound there too (the rows next to the root).
const BOUNDS: &[(&str, &str, f64, &str)] = &[];

/// Absolute slack where the true number is subnormal or underflows: a few
/// subnormal steps (products rounded into the subnormal range round again).
const SUBNORMAL_SLACK: f64 = 16.0 * 5e-324;

fn op_named(name: &str) -> &'static OpInfo {
    Op::table()
        .iter()
        .find(|info| info.name == name)
        .unwrap_or_else(|| panic!("no op {name:?}"))
}

fn parse(text: &str) -> f64 {
    text.parse()
        .unwrap_or_else(|_| panic!("bad number {text:?}"))
}

/// The distance between `x` and the next f64 away from zero (the last one's
/// distance to its predecessor for the largest finite number).
fn ulp(x: f64) -> f64 {
    let a = x.abs();
    if a == f64::MAX {
        return a - f64::from_bits(a.to_bits() - 1);
    }
    f64::from_bits(a.to_bits() + 1) - a
}

/// Checks one computed number against its true value `text`; returns the error
/// in ulps of the correctly rounded true value (0 where that is not finite and
/// normal), or a description of the failure.
fn check(computed: f64, text: &str, bound: f64) -> Result<f64, String> {
    let fail = || Err(format!("got {computed:e}, true {text}"));
    if text == "nan" {
        return if computed.is_nan() { Ok(0.0) } else { fail() };
    }
    let expected = parse(text);
    if expected.is_infinite() {
        return if computed == expected {
            Ok(0.0)
        } else {
            fail()
        };
    }
    if text == "0" || text == "-0" {
        return if computed == 0.0 { Ok(0.0) } else { fail() };
    }
    let error = (computed - expected).abs();
    if expected.abs() < f64::MIN_POSITIVE {
        // Subnormal or underflowing to 0: a few subnormal steps, never the wrong sign.
        let ok = error <= SUBNORMAL_SLACK.max(DEFAULT_BOUND * expected.abs())
            && computed.is_finite()
            && computed * expected >= 0.0;
        return if ok { Ok(0.0) } else { fail() };
    }
    if !computed.is_finite() || error > bound * expected.abs() {
        return fail();
    }
    Ok(error / ulp(expected))
}

fn bound_for(op: &str, entry: &str) -> f64 {
    BOUNDS
        .iter()
        .find(|(o, e, _, _)| *o == op && *e == entry)
        .map_or(DEFAULT_BOUND, |&(_, _, bound, _)| bound)
}

/// Per op: the largest error in ulps of the value and of each derivative.
type Worst = BTreeMap<&'static str, [f64; 3]>;

/// The rows at ±inf (`tests/data/accuracy_infinity.tsv`), written by hand: the
/// value and each local derivative is its limit as the input tends to ±inf
/// where the limit exists (`atan'(±inf) = 0`, `gelu'(+inf) = 1`,
/// `∂(a^b)/∂b = 0` at a = inf, b < 0), nan where it does not (`sin`,
/// `inf − inf`, `∂(a/b)/∂b` at a = b = inf) or where the op is outside its
/// domain, and the table's conventions elsewhere (`none`: passes nothing).
const AT_INFINITY: &str = include_str!("../data/accuracy_infinity.tsv");

fn sweep() -> (Worst, Vec<String>, usize) {
    let table = include_str!("../data/accuracy.tsv");
    let mut worst: Worst = BTreeMap::new();
    let mut failures = Vec::new();
    let mut rows = 0;
    let lines = table.lines().skip(1).chain(AT_INFINITY.lines().skip(1));
    for line in lines {
        let columns: Vec<&str> = line.split('\t').collect();
        let [name, inputs, value, derivatives] = columns[..] else {
            panic!("malformed row {line:?}");
        };
        rows += 1;
        let info = op_named(name);
        let inputs: Vec<f64> = inputs.split(',').map(parse).collect();
        let out = (info.forward)(&inputs);
        let entry = worst.entry(info.name).or_insert([0.0; 3]);
        let mut record = |slot: usize, what: &str, result: Result<f64, String>| match result {
            Ok(ulps) => entry[slot] = entry[slot].max(ulps),
            Err(message) => failures.push(format!(
                "{name}({line_inputs}) {what}: {message}",
                line_inputs = columns[1]
            )),
        };
        record(0, "value", check(out, value, bound_for(name, "value")));
        for (position, text) in derivatives.split(',').enumerate() {
            let what = format!("d{position}");
            let passes = info.passes(&inputs, out, position);
            let local = (info.local)(&inputs, out, position);
            if text == "none" {
                let ok = !passes && local == 0.0;
                record(
                    1 + position,
                    &what,
                    if ok {
                        Ok(0.0)
                    } else {
                        Err(format!(
                            "passes {passes}, local {local:e}; should pass nothing"
                        ))
                    },
                );
                continue;
            }
            if !passes {
                record(
                    1 + position,
                    &what,
                    Err(format!("passes nothing; true {text}")),
                );
                continue;
            }
            record(
                1 + position,
                &what,
                check(local, text, bound_for(name, &what)),
            );
        }
    }
    (worst, failures, rows)
}

#[test]
fn every_op_on_the_sweep_is_accurate() {
    let (worst, failures, rows) = sweep();
    assert!(rows > 5000, "the table has its rows");
    for info in Op::table().iter().filter(|info| !info.op.is_leaf()) {
        let at = |u: &str| format!("{}\t{u}", info.name);
        let rows_at_infinity = AT_INFINITY
            .lines()
            .filter(|l| l.starts_with(&at("inf")) || l.starts_with(&at("-inf")));
        assert!(
            rows_at_infinity.count() > 0,
            "{} has rows at ±inf",
            info.name
        );
    }
    assert_eq!(
        worst.len(),
        Op::table().len() - 2,
        "every op but the leaves is swept"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    if std::env::var_os("GRADCALC_WRITE_ACCURACY").is_some() {
        write_ulps_table(&worst);
    }
}

/// Rewrites the table between the markers in docs/accuracy.md.
fn write_ulps_table(worst: &Worst) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/accuracy.md");
    let doc = std::fs::read_to_string(path).expect("docs/accuracy.md");
    let (start, end) = ("<!-- ulps:start -->\n", "<!-- ulps:end -->");
    let (head, rest) = doc.split_once(start).expect("start marker");
    let (_, tail) = rest.split_once(end).expect("end marker");
    let mut table =
        String::from("| op | value | ∂/∂ first input | ∂/∂ second input |\n|---|---|---|---|\n");
    for info in Op::table().iter().filter(|info| !info.op.is_leaf()) {
        let w = worst[info.name];
        let cell = |x: f64| format!("{x:.1}");
        let second = if info.arity == gradcalc::engine::Arity::Unary {
            "".into()
        } else {
            cell(w[2])
        };
        table.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            info.name,
            cell(w[0]),
            cell(w[1]),
            second
        ));
    }
    std::fs::write(path, format!("{head}{start}{table}{end}{tail}"))
        .expect("write docs/accuracy.md");
}

/// Builds `chain` (steps as in the chains table) on a leaf x and returns the
/// output's value and ∂output/∂x by `Graph::backward`.
fn run_chain(x: f64, chain: &str) -> (f64, f64) {
    let mut g = Graph::new();
    let leaf = g.leaf(x);
    let mut node = leaf;
    for step in chain.split_whitespace() {
        let (op, inputs) = if let Some(c) = step.strip_suffix('^') {
            (Op::Pow, vec![g.constant(parse(c)), node])
        } else if let Some(c) = step.strip_suffix('/') {
            (Op::Div, vec![g.constant(parse(c)), node])
        } else if step.len() > 1 && "/*+^".contains(&step[..1]) {
            let c = g.constant(parse(&step[1..]));
            (op_named(&step[..1]).op, vec![node, c])
        } else {
            (op_named(step).op, vec![node])
        };
        node = g.apply(op, &inputs).expect("arity");
    }
    let order = g.topo_order(node);
    (g.value(node), g.backward(&order)[leaf])
}

/// Chains at extreme inputs through `Graph::backward`. The bound is 1e-12:
/// each intermediate value is rounded, and a later op multiplies that rounding
/// by its condition number (ln x at 1e-300 is −690.8 to within 6e-14, which
/// `sigmoid` turns into a relative error of 6e-14).
#[test]
fn chains_at_extreme_inputs_are_accurate() {
    let table = include_str!("../data/accuracy_chains.tsv");
    let mut failures = Vec::new();
    for line in table.lines().skip(1) {
        let [id, x, chain, value, derivative] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("malformed row {line:?}");
        };
        let (v, d) = run_chain(parse(x), chain);
        for (what, computed, text) in [("value", v, value), ("derivative", d, derivative)] {
            if let Err(message) = check(computed, text, 1e-12) {
                failures.push(format!("{id} {chain} at {x}: {what}: {message}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
