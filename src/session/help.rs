//! `:help`: commands, functions (from the op table) and the gradient conventions.

use std::fmt::Write;

use super::command::{self, COMMANDS};
use super::eval::builtin_function_names;
use super::formula::nothing_where;
use super::formula::{apply, rule_tree, wrap};
use super::tensors::{Family, builtin, builtin_names, builtins};
use super::{CONSTANTS, Event, Session, SessionError, nearest};
use crate::engine::tensor::TensorOp;
use crate::engine::{Arity, LocalRule, Op, Passing};
use crate::syntax::{ExprTree, Ident};

/// The conventions at kinks and edges (docs/language.md §7, PyTorch's).
const CONVENTIONS: &str = "\
The output is the result of the most recent statement; assigning a number
(`x = 3`) makes a new leaf and leaves the output as it was. `:backward NAME`
picks another output. Gradients are recomputed for every query.

Conventions at kinks and edges (PyTorch's):
  relu'(0) = 0, abs'(0) = 0, sqrt'(0) = inf
  d/dx x^0 = 0 at x = 0, and 0^0 = 1
  d/dx x^y at x = 0 is y·0^(y−1): 0, 1, inf or −inf
  d/dy x^y at x = 0 is 0 for y ≥ 0 and −inf for y < 0; for x < 0 it is nan
  max/min at a tie split the gradient equally: max(x, x) gives 1
  nan in max/min propagates; floor, ceil, round, sign pass no gradient
  detach(u) has u's value and passes no gradient
  passing no gradient (also relu at u <= 0, the losing side of max/min,
  x^0 to x, 0^y to y for y >= 0) is not multiplying by 0: inf upstream gives 0";

impl Session {
    /// The help text for `topic`, or the overview.
    pub(super) fn help(&self, topic: Option<&Ident>) -> Result<Event, SessionError> {
        let Some(topic) = topic else {
            return Ok(Event::Help {
                topic: None,
                text: ascii_minus(&overview()),
            });
        };
        let name = topic.name.trim_start_matches(':');
        let mut text = String::new();
        if let Some(spec) = command::find(name) {
            let _ = writeln!(
                text,
                "{}",
                format!(":{} {}", spec.name, spec.usage).trim_end()
            );
            let _ = write!(text, "  {}", spec.help);
            if spec.traits.conventions {
                let _ = write!(text, "\n\n{CONVENTIONS}");
            }
        } else if let Some(op) = Op::from_function_name(name) {
            let info = op.info();
            let _ = writeln!(text, "{name}: {}", info.summary);
            for line in rule_lines(op) {
                let _ = writeln!(text, "  {line}");
            }
            let _ = write!(text, "  example: {}", info.example);
            if let Some(note) = builtin(name).and_then(|row| row.note()) {
                let _ = write!(text, "\n  {note}");
            }
        } else if let Some(help) = function_help(name) {
            text.push_str(&help);
        } else if let Some(help) = operator_help(name) {
            text.push_str(&help);
        } else if let Some(function) = self.functions.get(name) {
            let _ = write!(
                text,
                "{name}({}) = {}\n  a function you defined",
                function.params.join(", "),
                function.text
            );
        } else if let Some((constant, value)) = CONSTANTS.iter().find(|c| c.0 == name) {
            let _ = write!(
                text,
                "{constant} = {value}: a constant; assigning `{constant} = …` makes it your variable"
            );
        } else if name == "ans" || name == "_" {
            text.push_str("`ans` and `_` name the result of the most recent statement (its node: gradients flow through them)");
        } else if name == "conventions" {
            text.push_str(CONVENTIONS);
        } else if name == "operators" {
            text.push_str("The operators' derivative rules:");
            for info in Op::table().iter().filter(|info| is_operator(info.op)) {
                for line in rule_lines(info.op) {
                    let _ = write!(text, "\n  {line}");
                }
            }
        } else {
            let candidates = command::all_names().chain(builtin_names()).chain([
                "conventions",
                "operators",
                "vectors",
            ]);
            return Err(SessionError::BadArguments {
                message: format!("no help on `{name}`"),
                span: topic.span,
                help: Some(match nearest(name, candidates) {
                    Some(s) => format!("did you mean `:help {s}`?"),
                    None => "`:help` lists the commands and functions".to_string(),
                }),
            });
        }
        Ok(Event::Help {
            topic: Some(name.to_string()),
            text: ascii_minus(&text),
        })
    }
}

/// `:help` of the tensor operators and of vectors and matrices as a whole:
/// `@` and `ᵀ` with their shape and backward rules from the engine's tensor
/// op table (`ᵀ` as `transpose`), `vectors` (also `matrices`, `tensors`)
/// with how they are written. `None` for any other topic.
fn operator_help(name: &str) -> Option<String> {
    match name {
        "@" => {
            let info = TensorOp::MatMul.info();
            Some(format!(
                "A @ B: the matrix product, at the level of `*` (left to right, as in Python); matrix·matrix, matrix·vector, vector·matrix, and vector·vector (the dot product, shape ())\n  shape: {}\n  backward: {}\n  source: {}\n  example: W = [[1, 2], [3, 4]]; x = [1, -1]; L = sum(W @ x)",
                info.shape_rule, info.backward_rule, info.source
            ))
        }
        "ᵀ" | "T" | ".T" => function_help("transpose"),
        "vectors" | "matrices" | "tensors" => Some(VECTORS.to_string()),
        _ => None,
    }
}

/// `:help vectors`: how vectors and matrices are written, and where their
/// rules are (docs/language.md §9).
const VECTORS: &str = "\
Vectors and matrices (docs/language.md §9):
  x = [1, -1, 0.5]            a vector of 3; `W = [[1, 2], [3, 4]]` a 2×2 matrix, by rows
  zeros(m, n) ones(m, n) eye(n) randn(m, n)   made whole; `:seed N` starts randn again
  x[0], W[1, 2], W[1]         0-based indexing (W[1] is row 1)
  A @ B                       the matrix product (`:help @`)
  Wᵀ, transpose(W)            the transpose, ᵀ right after the operand (`:help ᵀ`)
  + - * / ^ and tanh(W @ x)   elementwise, with numpy's broadcasting
  sum mean max min argmax     whole, or along an axis: `mean(W, 1)`, `max(P, axis=1)`, `sum(W, -1)`
  softmax log_softmax logsumexp   along the last axis (`:help softmax`)
  cross_entropy(Z, y), onehot(y, k)   integer class labels; `mean(argmax(Z, 1) == y)` an accuracy
  == != < <= > >=             comparisons: 1 where they hold, 0 where not, no gradient
  X[0:4], X[:, 0], X[1:]      slices: a range keeps its axis, an index drops it
  maximum(W, 0), minimum      elementwise; `rand(m, n)`, `uniform(m, n, lo, hi)` seeded as randn
With a vector or matrix output, `:grad` gives ∂L/∂W with W's shape; `:trace`,
`:step`, `:topo`, `:check`, `:vars`, `:descend`, `:svg`, `:dot` and `:html` work.";

/// True for the ops written as operators (`+ - * / ^` and unary minus),
/// whose rules `:help operators` lists.
fn is_operator(op: Op) -> bool {
    let info = op.info();
    !op.is_leaf() && Op::from_function_name(info.name).is_none()
}

/// The derivative rules of `op` as `:help` shows them: one line per input
/// position, its textbook formula over `u` (or `a`, `b`) written by the same
/// code as the trace's (`∂tanh(u)/∂u = 1 - tanh(u)^2`), where it passes
/// nothing, and the formula's source.
fn rule_lines(op: Op) -> Vec<String> {
    let info = op.info();
    let names: &[&str] = match info.arity {
        Arity::Leaf => &[],
        Arity::Unary => &["u"],
        Arity::Binary | Arity::Variadic => &["a", "b"],
    };
    let trees: Vec<ExprTree> = names.iter().map(|n| ExprTree::name(n)).collect();
    let operands: Vec<&ExprTree> = trees.iter().collect();
    let of = match info.arity {
        Arity::Variadic => format!("{}(a, b, …)", info.name),
        _ => wrap(&apply(op, &operands)),
    };
    let positions = if info.arity == Arity::Variadic {
        1
    } else {
        names.len()
    };
    let mut lines = Vec::new();
    let mut last_source = "";
    for (position, name) in names.iter().enumerate().take(positions) {
        let Some(derivative) = info.derivative(position) else {
            continue;
        };
        let rule = LocalRule::Expr {
            expr: &derivative.textbook,
            ties: 1,
        };
        let passing = derivative.passing;
        let mut line = format!("∂{of}/∂{name}");
        match passing {
            Passing::NotDifferentiable | Passing::Detached => {
                line.push_str(&format!(
                    ": passes nothing ({})",
                    nothing_where(passing, &[])
                ));
            }
            Passing::Always
            | Passing::WherePositive
            | Passing::ToLargest
            | Passing::ToSmallest
            | Passing::WhereExponentNonzero
            | Passing::UnlessZeroBase => {
                if let Some(tree) = rule_tree(op, rule, &operands) {
                    line.push_str(&format!(" = {}", tree.fold_constants()));
                }
                let holds = passing.holds_where();
                if !holds.is_empty() {
                    line.push_str(&format!(" for {holds}"));
                }
                let nothing = nothing_where(passing, &[]);
                if !nothing.is_empty() {
                    line.push_str(&format!("; passes nothing for {nothing}"));
                }
                if matches!(passing, Passing::ToLargest | Passing::ToSmallest) {
                    line.push_str("; k tied inputs get 1/k each");
                }
            }
        }
        lines.push(line);
        if derivative.source != last_source {
            lines.push(format!("  source: {}", derivative.source));
            last_source = derivative.source;
        }
    }
    lines
}

/// The text with every minus sign `−` (U+2212, as the op table's formulas are
/// written) made the ASCII `-` that the trace, the pictures and the input use:
/// one minus sign in everything gradcalc prints.
fn ascii_minus(text: &str) -> String {
    text.replace('−', "-")
}

/// `:help` without a topic.
fn overview() -> String {
    let mut text = String::from(
        "Type arithmetic with variables: `x = 2`, `y = 3`, `z = x*y + x`, then `:grad`.\n\
         Statements end at a newline or `;`. `#` starts a comment.\n\nCommands:\n",
    );
    for spec in COMMANDS {
        let head = format!(":{} {}", spec.name, spec.usage);
        let _ = writeln!(text, "  {:<20} {}", head.trim_end(), spec.help);
    }
    text.push_str("\nFunctions (`:help NAME` shows the derivative rule; `:help operators` those of + - * / ^):\n  ");
    let names: Vec<&str> = builtin_function_names().collect();
    text.push_str(&names.join(" "));
    text.push_str("\n  define your own: `f(x, y) = x*y + x`; `f'(2)` is the derivative of a one-argument function\n");
    text.push_str("\nVectors and matrices (`:help vectors`): `[1, 2]`, `[[1, 2], [3, 4]]`, `x[0]`, `W[1, 2]`,\n  `A @ B` (`:help @`), `Wᵀ` or `transpose(W)` (`:help ᵀ`), elementwise + - * / ^ and functions;\n  ");
    text.push_str(&listed(Family::Vectors));
    text.push_str(" max(x) (`:help softmax` and so on); `:seed N` for randn;\n  ");
    text.push_str(&listed(Family::Batch));
    text.push_str(", `==` `<` …, slices `X[0:4]`, `axis=` (`:help vectors`)\n");
    text.push_str("\nConstants: ");
    let constants: Vec<&str> = CONSTANTS.iter().map(|c| c.0).collect();
    text.push_str(&constants.join(" "));
    text.push_str("; `ans` and `_` name the last result\n`:help grad` explains the output rule and the conventions at kinks");
    text
}

/// The names of the tensor functions of `family`, as `:help` lists them.
fn listed(family: Family) -> String {
    let names: Vec<&str> = builtins()
        .filter(|row| row.family == family)
        .map(|row| row.name)
        .collect();
    names.join(" ")
}

/// `:help` of a tensor function: what it makes or computes, its shape rule,
/// and its backward rule with its source (the function table's row).
pub(super) fn function_help(name: &str) -> Option<String> {
    builtin(name).and_then(|row| row.own_help())
}
