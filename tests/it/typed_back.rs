//! The typed-back property over both kinds of value: every formula a
//! `:trace` prints beside a number is gradcalc input that, typed back into
//! the same session, gives that number — a number's local derivatives
//! (`∂tanh(n)/∂n = 1 - tanh(n)^2 = 0.5`) and a tensor's matrix rules
//! (`∂L/∂W += outer(upstream, x)`, typed with `upstream` bound to the step's
//! upstream gradient). [`printed_formulas`] reads either kind of `:trace`
//! event and [`first_false`] types them back: the property tests of
//! `rules.rs` (random scalar programs) and `tensor_rules.rs` (random tensor
//! ops) run them, and [`FIXTURES`] here runs them over the lecture's graphs
//! of both kinds, with the earlier-binding note of each ("y was built from
//! an earlier x"), one table for numbers and tensors.

use gradcalc::render::{Style, text};
use gradcalc::session::{Event, Session, TraceSteps, Value};
use gradcalc::syntax::ExprTree;

use crate::util::session_events;

/// One formula a `:trace` prints with the numbers beside it.
#[derive(Debug, Clone)]
pub struct Printed {
    /// What to type before it: `upstream = …` for a tensor rule, nothing
    /// for a number's local derivative.
    pub setup: String,
    /// The formula as printed.
    pub formula: String,
    /// What it is the formula of, for messages (`∂tanh(n)/∂n`,
    /// `∂L/∂W at step 4 (W @ x)`).
    pub of: String,
    /// The shape of the numbers printed (`[]` for a number).
    pub shape: Vec<usize>,
    /// The numbers printed beside it.
    pub value: Vec<f64>,
}

/// A literal that reads back as exactly `x` (negative ones in brackets).
pub fn number_literal(x: f64) -> String {
    let text = ExprTree::number(x).to_string();
    if x < 0.0 { format!("({text})") } else { text }
}

/// `data` of `shape` as a literal: a number, `[a, b]` or `[[a, b], [c, d]]`.
pub fn literal(shape: &[usize], data: &[f64]) -> String {
    let row = |r: &[f64]| {
        let texts: Vec<String> = r.iter().map(|&x| ExprTree::number(x).to_string()).collect();
        format!("[{}]", texts.join(", "))
    };
    match *shape {
        [] => number_literal(data[0]),
        [_] => row(data),
        [_, n] => {
            let rows: Vec<String> = data.chunks(n.max(1)).map(row).collect();
            format!("[{}]", rows.join(", "))
        }
        _ => panic!("rank ≤ 2"),
    }
}

/// Every formula the `:trace` events of `events` print beside a number, of
/// either kind: a number's local derivatives (those written as a formula;
/// a local that is a number alone or passes nothing has none) and a tensor
/// output's matrix rules. Read before the session runs another statement
/// (a scalar trace's steps are made from the session as read).
pub fn printed_formulas(session: &Session, events: &[Event]) -> Vec<Printed> {
    let mut printed = Vec::new();
    for event in events {
        match event {
            Event::Trace {
                steps: TraceSteps::Nodes { steps, .. },
                ..
            } => {
                for step in session.trace_steps(steps) {
                    for c in &step.contributions {
                        if let Some(formula) = &c.formula {
                            printed.push(Printed {
                                setup: String::new(),
                                formula: formula.clone(),
                                of: c.partial.clone(),
                                shape: Vec::new(),
                                value: vec![c.local.0],
                            });
                        }
                    }
                }
            }
            Event::Trace {
                steps: TraceSteps::Tensors { steps, .. },
                ..
            } => {
                for step in steps {
                    let upstream: Vec<f64> = step.upstream.data.iter().map(|x| x.0).collect();
                    let setup =
                        format!("upstream = {}\n", literal(&step.upstream.shape, &upstream));
                    for c in &step.contributions {
                        printed.push(Printed {
                            setup: setup.clone(),
                            formula: c.rule.clone(),
                            of: format!("∂L/∂{} at step {} ({})", c.input, step.step, step.node),
                            shape: c.value.shape.clone(),
                            value: c.value.data.iter().map(|x| x.0).collect(),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    printed
}

/// The shape and numbers of the last value of `events`: a tensor's, or a
/// number's as shape `[]`.
pub fn value_of(events: &[Event]) -> Option<(Vec<usize>, Vec<f64>)> {
    events.iter().rev().find_map(|event| match event {
        Event::Value {
            value: Value::Tensor(value),
            ..
        } => Some((
            value.shape.clone(),
            value.data.iter().map(|x| x.0).collect(),
        )),
        Event::Value {
            value: Value::Number(value),
            ..
        } => Some((Vec::new(), vec![value.0])),
        _ => None,
    })
}

/// Types each of `printed` back into `session` (its setup, then the
/// formula): how many were checked, or the first that is not input or gives
/// numbers that `agree` (given its index and the numbers typed back gave)
/// refuses, with what it gave.
pub fn first_false(
    session: &mut Session,
    printed: &[Printed],
    agree: impl Fn(usize, &[f64]) -> bool,
) -> Result<usize, String> {
    for (i, p) in printed.iter().enumerate() {
        let typed = format!("{}{}\n", p.setup, p.formula);
        let back = session_events(session, &typed)
            .map_err(|e| format!("`{}` ({}) is not input: {e}", p.formula, p.of))?;
        let (shape, got) =
            value_of(&back).ok_or_else(|| format!("`{}` ({}) gave no value", p.formula, p.of))?;
        if shape != p.shape || !agree(i, &got) {
            return Err(format!(
                "`{}` ({}) typed back gives {got:?} of shape {shape:?}, printed {:?} of shape {:?}",
                p.formula, p.of, p.value, p.shape
            ));
        }
    }
    Ok(printed.len())
}

/// Equal to `relative` of the largest finite magnitude among them, or the
/// same infinity, or both nan.
pub fn agree(got: &[f64], want: &[f64], relative: f64) -> bool {
    let finite = want.iter().chain(got).filter(|x| x.is_finite());
    let scale = finite.fold(1.0f64, |m, x| m.max(x.abs()));
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= relative * scale)
}

/// A graph of the lecture, of either kind, and a leaf to rebind after it.
struct Fixture {
    /// The statements; the last names the output.
    script: &'static str,
    /// The output's name.
    output: &'static str,
    /// A leaf the output reads, rebound to a new value of its kind.
    leaf: &'static str,
    /// The new value.
    rebound: &'static str,
    /// ∂output/∂leaf for the leaf as rebound, as printed: zeros of its shape.
    zero: &'static str,
    /// How many formulas the trace prints, at least: one per local
    /// derivative of a product or a function (a sum's 1 is a number, no
    /// formula), one per operand of a tensor op.
    formulas: usize,
    /// The flags of `:trace all` (`--expand` shows a call's body).
    flags: &'static str,
}

/// The graphs of both kinds: Karpathy's neuron and fan-out, colah's
/// fan-out, a neuron as a user function; a tensor layer, a tensor fan-out,
/// a softmax with cross-entropy and a layer called as a user function.
const FIXTURES: &[Fixture] = &[
    Fixture {
        script: "x1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432; n = x1*w1 + x2*w2 + b; o = tanh(n)",
        output: "o",
        leaf: "x1",
        rebound: "5",
        zero: "0",
        formulas: 5,
        flags: "",
    },
    Fixture {
        script: "a = -2; b = 3; d = a*b; e = a + b; f = d*e",
        output: "f",
        leaf: "b",
        rebound: "4",
        zero: "0",
        formulas: 4,
        flags: "",
    },
    Fixture {
        script: "a = 2; b = 1; c = a + b; d = b + 1; e = c*d",
        output: "e",
        leaf: "a",
        rebound: "7",
        zero: "0",
        formulas: 2,
        flags: "",
    },
    Fixture {
        script: "w = 0.5; b = -1; neuron(x) = tanh(w*x + b); L = neuron(2) + neuron(-1)",
        output: "L",
        leaf: "w",
        rebound: "3",
        zero: "0",
        formulas: 2,
        flags: "--expand",
    },
    Fixture {
        script: "W = [[1, 2, 3], [4, 5, 6]]; x = [1, 0, -1]; b = [0.5, -0.5]; L = sum(tanh(W @ x + b))",
        output: "L",
        leaf: "x",
        rebound: "[3, 4, 5]",
        zero: "[0, 0, 0]  (3)",
        formulas: 6,
        flags: "",
    },
    Fixture {
        script: "x = [1, 2]; y = x * x + x; L = sum(y)",
        output: "L",
        leaf: "x",
        rebound: "[3, 4]",
        zero: "[0, 0]  (2)",
        formulas: 5,
        flags: "",
    },
    Fixture {
        script: "W = [[0.5, -1], [2, 0.25], [1, 1]]; x = [1, 2]; L = cross_entropy(W @ x, 1)",
        output: "L",
        leaf: "W",
        rebound: "[[1, 1], [1, 1], [1, 1]]",
        zero: "3×2",
        formulas: 3,
        flags: "",
    },
    Fixture {
        script: "layer(W, x, b) = tanh(W @ x + b); W = [[1, 2], [3, 4]]; x = [1, -1]; b = [0.5, 0.5]; L = sum(layer(W, x, b))",
        output: "L",
        leaf: "b",
        rebound: "[1, 1]",
        zero: "[0, 0]  (2)",
        formulas: 1,
        flags: "",
    },
];

/// For every fixture, of either kind: each formula `:trace all` prints (the
/// neuron's calls expanded, so that their bodies' rules are printed),
/// typed back into the same session, gives the numbers printed beside it
/// (to 1e-12 relative).
#[test]
fn every_printed_formula_types_back_for_numbers_and_tensors() {
    for fixture in FIXTURES {
        let mut session = Session::new();
        session_events(&mut session, fixture.script).unwrap();
        let trace = session_events(&mut session, &format!(":trace all {}", fixture.flags)).unwrap();
        let printed = printed_formulas(&session, &trace);
        assert!(
            printed.len() >= fixture.formulas,
            "{}: {printed:?}",
            fixture.script
        );
        let checked = first_false(&mut session, &printed, |i, got| {
            agree(got, &printed[i].value, 1e-12)
        })
        .unwrap_or_else(|e| panic!("{}: {e}", fixture.script));
        assert_eq!(checked, printed.len());
    }
}

/// For every fixture, of either kind: a leaf rebound after the output was
/// built from it gives ∂output/∂leaf = zeros of its shape, and the gradient
/// says why, in the same words for a number and a tensor.
#[test]
fn an_earlier_binding_is_named_for_numbers_and_tensors() {
    for fixture in FIXTURES {
        let Fixture {
            output, leaf, zero, ..
        } = fixture;
        let mut session = Session::new();
        let source = format!(
            "{}\n{leaf} = {}\n{output}\n:grad {leaf}",
            fixture.script, fixture.rebound
        );
        let events = session_events(&mut session, &source).unwrap();
        let grad = events
            .iter()
            .rfind(|e| matches!(e, Event::Grad { .. }))
            .unwrap_or_else(|| panic!("{source}: no gradient in {events:?}"));
        let written = text::render_event(grad, &session, &source, "<input>", &Style::default());
        let note = format!("({output} was built from an earlier {leaf})");
        assert!(
            written.starts_with(&format!("∂{output}/∂{leaf} = {zero}")),
            "{source}: {written}"
        );
        assert!(written.trim_end().ends_with(&note), "{source}: {written}");
    }
}
