//! The graph of a micrograd `Value` ([`super::values::Values`]) written as
//! gradcalc statements, so that a session running them builds the same nodes with the same ops (its leaves as
//! leaves, numbers as constants) and `:trace`, `:svg -` and `:html -` draw it
//! with the calculator's own code.
//!
//! Every leaf is a statement `x1 = 2.5` (or its label), and so is every node
//! used more than once (fan-out), every node with a label, the output, and a
//! node whose expression would nest deeper than [`MAX_INLINE`]; the other
//! nodes are written inside their one user's expression, with the brackets
//! the precedence needs (docs/language.md §2). Names are the labels where
//! they are names gradcalc accepts, else `x1, x2, …` for leaves and `t1, …`
//! for the rest; the output without a label is `out`.

use std::collections::HashSet;

use crate::engine::{Graph, NodeId, Op};

/// The deepest an expression is written before its node gets a statement.
const MAX_INLINE: usize = 40;

/// Names a label may not take besides the built-in functions: constants
/// and words of the language.
const RESERVED: &[&str] = &["e", "pi", "ans", "help", "quit", "exit", "inf", "nan"];

/// Binding strengths, loosest first.
const SUM: u8 = 1;
const PRODUCT: u8 = 2;
const SIGN: u8 = 3;
const POWER: u8 = 4;
const ATOM: u8 = 5;

/// How a node is written where it is used: its text, how tightly it binds,
/// and how deep its expression nests.
#[derive(Clone, Default)]
struct Written {
    text: String,
    strength: u8,
    depth: usize,
}

/// `written` as an operand that must bind at least as tightly as `at_least`.
fn operand(written: &Written, at_least: u8) -> String {
    if written.strength >= at_least {
        written.text.clone()
    } else {
        format!("({})", written.text)
    }
}

/// A number as gradcalc reads it back exactly (shortest round trip); nan
/// and the infinities as the language names them (`nan`, `inf`, `-inf`),
/// never Rust's `NaN`.
fn number(value: f64) -> String {
    if value.is_nan() {
        "nan".to_string()
    } else {
        format!("{value:?}")
    }
}

/// The expression of `op` over its written operands, and how tightly it binds.
fn expression(op: Op, inputs: &[&Written]) -> (String, u8) {
    let binary = |symbol: &str, left: u8, right: u8, strength: u8| {
        let text = format!(
            "{} {symbol} {}",
            operand(inputs[0], left),
            operand(inputs[1], right)
        );
        (text, strength)
    };
    match op {
        Op::Add => binary("+", SUM, PRODUCT, SUM),
        Op::Sub => binary("-", SUM, PRODUCT, SUM),
        Op::Mul => binary("*", PRODUCT, SIGN, PRODUCT),
        Op::Div => binary("/", PRODUCT, SIGN, PRODUCT),
        Op::Pow => binary("^", ATOM, POWER, POWER),
        Op::Neg => (format!("-{}", operand(inputs[0], POWER)), SIGN),
        op => {
            let args: Vec<&str> = inputs.iter().map(|w| w.text.as_str()).collect();
            (format!("{}({})", op.info().name, args.join(", ")), ATOM)
        }
    }
}

/// Whether `label` can name a variable: ASCII letters, digits and `_`,
/// starting with a letter, and not a word of the language nor a built-in
/// function (`tanh`, `sum`, `grad`: the function table).
fn usable(label: &str) -> bool {
    let mut chars = label.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !RESERVED.contains(&label)
        && !crate::session::builtin_names().any(|name| name == label)
}

/// Unique names: a label where usable and free, else `out`, `x` or `t`
/// and a count, never a name a label of the graph asks for.
#[derive(Default)]
struct Names {
    taken: HashSet<String>,
    labels: HashSet<String>,
    counts: [usize; 2],
}

impl Names {
    fn name(&mut self, label: Option<&str>, leaf: bool, output: bool) -> String {
        if let Some(label) = label.filter(|l| usable(l) && !self.taken.contains(*l)) {
            self.taken.insert(label.to_string());
            return label.to_string();
        }
        if output && !self.taken.contains("out") && !self.labels.contains("out") {
            self.taken.insert("out".to_string());
            return "out".to_string();
        }
        let (prefix, count) = if leaf {
            ("x", &mut self.counts[0])
        } else {
            ("t", &mut self.counts[1])
        };
        loop {
            *count += 1;
            let name = format!("{prefix}{count}");
            if !self.labels.contains(&name) && self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}

/// The statements that build `root`'s graph and the name of `root`.
pub(super) fn statements(
    graph: &Graph,
    root: NodeId,
    label: impl Fn(NodeId) -> Option<String>,
) -> (String, String) {
    let order = graph.topo_order(root);
    let mut uses = vec![0u32; graph.len()];
    for &id in &order {
        for input in graph.operands(id) {
            uses[input.index()] += 1;
        }
    }
    // Labels first, so that a generated name never takes one.
    let mut names = Names::default();
    for &id in &order {
        if let Some(label) = label(id).filter(|l| usable(l)) {
            names.labels.insert(label);
        }
    }
    let mut written: Vec<Written> = vec![Written::default(); graph.len()];
    let mut source = String::new();
    for &id in order.iter().rev() {
        let op = graph.op(id);
        let labelled = label(id);
        let (text, strength, depth) = match op {
            Op::Const => {
                let value = graph.value(id);
                let strength = if value.is_sign_negative() && !value.is_nan() {
                    SIGN
                } else {
                    ATOM
                };
                (number(value), strength, 0)
            }
            Op::Variable => (number(graph.value(id)), ATOM, 0),
            op => {
                let inputs: Vec<&Written> = graph
                    .operands(id)
                    .iter()
                    .map(|i| &written[i.index()])
                    .collect();
                let depth = 1 + inputs.iter().map(|w| w.depth).max().unwrap_or(0);
                let (text, strength) = expression(op, &inputs);
                (text, strength, depth)
            }
        };
        let named = op == Op::Variable
            || id == root
            || labelled.is_some()
            || (op != Op::Const && (uses[id.index()] > 1 || depth > MAX_INLINE));
        written[id.index()] = if named {
            let name = names.name(labelled.as_deref(), op == Op::Variable, id == root);
            source.push_str(&format!("{name} = {text}\n"));
            Written {
                text: name,
                strength: ATOM,
                depth: 0,
            }
        } else {
            Written {
                text,
                strength,
                depth,
            }
        };
    }
    let root_name = written[root.index()].text.clone();
    source.push_str(&format!(":backward {root_name}\n"));
    (source, root_name)
}
