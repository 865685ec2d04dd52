//! The local-derivative formulas a trace prints: each op's textbook rule
//! ([`Op::local_rule`] with [`Form::Textbook`]) written over the operands'
//! labels ([`rule_tree`]), constant arithmetic folded, printed by the
//! expression printer. Every formula is an expression the calculator parses;
//! evaluated in the session, it gives the local derivative (`2*x`, `-1/a^2`,
//! `1/(1 + x^2)`). `:help` writes the same rules over `u`, `a`, `b`.
//!
//! An operand's label is its variable name, its literal when it is a constant,
//! and otherwise, when it is short, the expression that defines it (`x*w`); an
//! operand with no name and a long definition is written by its label (`_7`),
//! which parses too: typed back it means that node.

use std::collections::HashMap;

use crate::engine::{Constant, Expr, Form, Graph, LocalRule, NodeId, Notation, Op, Passing};
use crate::syntax::{BinaryOp, ExprKind, ExprTree, UnaryOp};

/// The most expression nodes an unnamed operand's label may have (`x1*w1 +
/// x2*w2` has 7).
const LABEL_NODES: usize = 9;

/// The longest an unnamed operand's label may print, in characters.
const LABEL_CHARS: usize = 32;

/// Builds formulas for one trace.
pub(super) struct Formulas<'g> {
    graph: &'g Graph,
    names: HashMap<NodeId, &'g str>,
}

/// One local derivative, as the trace shows it.
pub(super) struct Formula {
    /// `∂(x^2)/∂x`: the node's expression and the operand, by their labels.
    pub partial: String,
    /// The rule with the operands' labels (`2*x`), or `None` when it passes nothing.
    pub rhs: Option<String>,
    /// The op's first two operands by their labels (`x*y`), which say
    /// where it passes nothing ([`NothingPassed::operands`](super::NothingPassed)).
    pub operands: Vec<String>,
}

impl<'g> Formulas<'g> {
    /// Formulas over `graph`, whose nodes carry the variable names `names`.
    pub(super) fn new(graph: &'g Graph, names: HashMap<NodeId, &'g str>) -> Formulas<'g> {
        Formulas { graph, names }
    }

    /// The variable names of the nodes, as given to [`Formulas::new`].
    pub(super) fn names(&self) -> &HashMap<NodeId, &'g str> {
        &self.names
    }

    /// The formulas of every input position of `node`, in operand order.
    pub(super) fn of_node(&mut self, node: NodeId) -> Vec<Formula> {
        let op = self.graph.op(node);
        let inputs = self.graph.operands(node);
        let values: Vec<f64> = inputs.iter().map(|&i| self.graph.value(i)).collect();
        // The operands written by their label `_id`, in the order first met:
        // the k-th is the stand-in name `stand_in(k)` until the text is printed.
        let mut labelled: Vec<NodeId> = Vec::new();
        let labels: Vec<ExprTree> = inputs
            .iter()
            .map(|&i| self.label(i, &mut labelled))
            .collect();
        let refs: Vec<&ExprTree> = labels.iter().collect();
        let of = wrap(&apply(op, &refs));
        let operands: Vec<String> = labels
            .iter()
            .take(2)
            .map(|tree| self.named_constants(restore_labels(tree.to_string(), &labelled)))
            .collect();
        let mut formulas = Vec::with_capacity(inputs.len());
        for (position, label) in labels.iter().enumerate() {
            let partial = format!("∂{of}/∂{}", wrap(label));
            let rule = op.local_rule(position, &values, self.graph.value(node), Form::Textbook);
            let rhs = rule_tree(op, rule, &refs).map(|tree| tree.fold_constants().to_string());
            formulas.push(Formula {
                operands: operands.clone(),
                partial: self.named_constants(restore_labels(partial, &labelled)),
                rhs: rhs.map(|rhs| self.named_constants(restore_labels(rhs, &labelled))),
            });
        }
        formulas
    }

    /// How a node is written as an operand: its name, its literal, its short
    /// defining expression, or its label `_id`. A label is written as a
    /// stand-in name (see [`stand_in`]) and `id` added to `labelled`, so that
    /// the labels of a long trace are not interned as names for the life of
    /// the process; [`restore_labels`] puts them in the printed text.
    fn label(&self, id: NodeId, labelled: &mut Vec<NodeId>) -> ExprTree {
        self.expand(id)
            .filter(|tree| tree.nodes.len() == 1 || tree.to_string().chars().count() <= LABEL_CHARS)
            .unwrap_or_else(|| {
                let k = labelled.iter().position(|&l| l == id).unwrap_or_else(|| {
                    labelled.push(id);
                    labelled.len() - 1
                });
                ExprTree::name(&stand_in(k))
            })
    }

    /// A named node or a constant as a one-node tree; `None` for anything else.
    fn atom(&self, id: NodeId) -> Option<ExprTree> {
        if let Some(name) = self.names.get(&id) {
            return Some(ExprTree::name(name));
        }
        (self.graph.op(id) == Op::Const).then(|| ExprTree::number(self.graph.value(id)))
    }

    /// `text` with the predefined constants' digits (`2.718281828459045`)
    /// written by their names (`e`) where the name is not a variable now: a
    /// constant read from `e` keeps its name. Only whole numbers are replaced.
    fn named_constants(&self, text: String) -> String {
        let mut text = text;
        for (name, value) in [
            ("pi", std::f64::consts::PI),
            ("e", std::f64::consts::E),
            ("tau", std::f64::consts::TAU),
        ] {
            if self.names.values().any(|n| *n == name) {
                continue;
            }
            text = replace_number(&text, &ExprTree::number(value).to_string(), name);
        }
        text
    }

    /// `id` written out down to named nodes and constants, if that takes at most
    /// [`LABEL_NODES`] nodes (and no unnamed leaf is on the way). A loop with an
    /// explicit stack, never recursion.
    fn expand(&self, id: NodeId) -> Option<ExprTree> {
        // (node, its operands are done): operands are expanded first.
        let mut stack = vec![(id, false)];
        let mut done: Vec<ExprTree> = Vec::new();
        let mut size = 0;
        while let Some((node, operands_done)) = stack.pop() {
            size += 1;
            if size > 2 * LABEL_NODES {
                return None;
            }
            if let Some(atom) = self.atom(node) {
                done.push(atom);
                continue;
            }
            let op = self.graph.op(node);
            if op.is_leaf() {
                return None; // an unnamed variable: it has no expression
            }
            let inputs = self.graph.operands(node);
            if !operands_done {
                stack.push((node, true));
                stack.extend(inputs.iter().rev().map(|&input| (input, false)));
                continue;
            }
            let operands = done.split_off(done.len() - inputs.len());
            let refs: Vec<&ExprTree> = operands.iter().collect();
            let tree = apply(op, &refs);
            if tree.nodes.len() > LABEL_NODES {
                return None;
            }
            done.push(tree);
        }
        done.pop()
    }
}

/// The stand-in name of the `k`-th operand written by its label: a name no
/// user, placeholder or label can have (control characters around the number),
/// so that it is replaced exactly. One per operand position at most, so the
/// names interned for them are as few as the widest node's operands.
fn stand_in(k: usize) -> String {
    format!("\u{1}{k}\u{1}")
}

/// `text` with each stand-in name `stand_in(k)` replaced by the label of
/// `labelled[k]` (`_7`).
fn restore_labels(text: String, labelled: &[NodeId]) -> String {
    labelled.iter().enumerate().fold(text, |text, (k, &id)| {
        text.replace(&stand_in(k), &super::node_label(id))
    })
}

/// The local rule `rule` of `op` written over `operands` (the operands' trees,
/// in operand order): `None` where it passes nothing, `nan` where it is
/// undefined, the expression divided by `k` at a `k`-way tie of max or min.
pub(super) fn rule_tree(op: Op, rule: LocalRule, operands: &[&ExprTree]) -> Option<ExprTree> {
    rule_tree_over(op, rule, operands, None)
}

/// [`rule_tree`] with the node's own value written as `output` (a name
/// given to it) rather than as `op(operands)`.
pub(super) fn rule_tree_over(
    op: Op,
    rule: LocalRule,
    operands: &[&ExprTree],
    output: Option<&ExprTree>,
) -> Option<ExprTree> {
    match rule {
        LocalRule::PassesNothing => None,
        LocalRule::Undefined => Some(ExprTree::name("nan")),
        LocalRule::Expr { expr, ties } => {
            let tree = expr_tree(expr, op, operands, output);
            Some(if ties > 1 {
                ExprTree::binary(BinaryOp::Div, &tree, &ExprTree::number(ties as f64))
            } else {
                tree
            })
        }
    }
}

/// A rule's expression of a node of `op` as a tree, with `operands` for its
/// operands and `op(operands)` for the node's own value; named constants by
/// name (`pi`, `e`, `ln(2)`, `ln(10)`). Recursion is over the rule's small
/// fixed tree.
fn expr_tree(expr: &Expr, op: Op, operands: &[&ExprTree], output: Option<&ExprTree>) -> ExprTree {
    match *expr {
        Expr::Operand(k) => operands
            .get(k)
            .map_or_else(|| ExprTree::name("nan"), |&tree| tree.clone()),
        Expr::Output => output.map_or_else(|| apply(op, operands), ExprTree::clone),
        Expr::Num(x) => ExprTree::number(x),
        Expr::Named(constant) => constant_tree(constant),
        Expr::Apply(inner, args) => {
            let trees: Vec<ExprTree> = args
                .iter()
                .map(|a| expr_tree(a, op, operands, output))
                .collect();
            let refs: Vec<&ExprTree> = trees.iter().collect();
            apply(inner, &refs)
        }
    }
}

/// A named constant as the calculator writes it: `pi`, `e`, `ln(2)`, `ln(10)`.
pub(super) fn constant_tree(constant: Constant) -> ExprTree {
    match constant {
        Constant::Pi => ExprTree::name("pi"),
        Constant::E => ExprTree::name("e"),
        Constant::Ln2 => ExprTree::call("ln", &[&ExprTree::number(2.0)]),
        Constant::Ln10 => ExprTree::call("ln", &[&ExprTree::number(10.0)]),
    }
}

/// The expression `op` applied to `operands`: `a + b`, `-u`, `tanh(u)`, `max(a, b, c)`.
pub(super) fn apply(op: Op, operands: &[&ExprTree]) -> ExprTree {
    let info = op.info();
    match (info.notation, BinaryOp::from_symbol(info.name)) {
        (Notation::Infix, Some(infix)) => ExprTree::binary(infix, operands[0], operands[1]),
        (Notation::Prefix, _) => ExprTree::compose(operands, |ids| ExprKind::Unary {
            op: UnaryOp::Neg,
            operand: ids[0],
        }),
        // A leaf is never applied; an infix op the language has no symbol
        // for would be written as a call (a test checks there is none).
        (Notation::Call | Notation::Leaf | Notation::Infix, _) => {
            ExprTree::call(info.name, operands)
        }
    }
}

/// The tree as text, in parentheses unless it is a name, a call or a
/// non-negative literal: `∂(x^2)/∂x`, `∂tanh(x)/∂x`, `∂(x*w + b)/∂(x*w)`.
pub(super) fn wrap(tree: &ExprTree) -> String {
    let atomic = match &tree.get(tree.root()).kind {
        ExprKind::Name(_) | ExprKind::Call { .. } => true,
        ExprKind::Number(x) => !x.is_sign_negative(),
        _ => false,
    };
    if atomic {
        tree.to_string()
    } else {
        format!("({tree})")
    }
}

/// `text` with every whole occurrence of the number `digits` (not part of a
/// longer number or name) replaced by `name`.
fn replace_number(text: &str, digits: &str, name: &str) -> String {
    let part_of = |c: char| c.is_alphanumeric() || c == '.' || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(digits) {
        let before = rest[..at].chars().last().or_else(|| out.chars().last());
        let after = rest[at + digits.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(part_of) || after.is_some_and(part_of) {
            out.push_str(digits);
        } else {
            out.push_str(name);
        }
        rest = &rest[at + digits.len()..];
    }
    out.push_str(rest);
    out
}

/// The name of a predefined constant (`pi`, `e`, `tau`) whose value is
/// exactly `value`, unless `bound` says the name is a variable now (`e = 6`):
/// how a constant node read from that name is written, so `e^x` stays `e^x`
/// in `:trace`, handouts and pictures.
pub(super) fn constant_name(value: f64, bound: impl Fn(&str) -> bool) -> Option<&'static str> {
    [
        ("pi", std::f64::consts::PI),
        ("e", std::f64::consts::E),
        ("tau", std::f64::consts::TAU),
    ]
    .into_iter()
    .find(|&(name, v)| v.to_bits() == value.to_bits() && !bound(name))
    .map(|(name, _)| name)
}

/// The number `x` written with a named constant when it is one exactly:
/// `pi`, `2*pi`, `pi/2`, `3*pi/4`, `-e`, `2*ln(2)`, … (a whole multiple
/// `p*c/q` with p, q ≤ 12, evaluated as the calculator evaluates the text,
/// `(p*c)/q`, giving `x` bit for bit); `None` for other numbers and for a
/// constant whose name `bound` says is a variable now (`pi = 3`).
pub(super) fn named_constant(x: f64, bound: impl Fn(&str) -> bool) -> Option<ExprTree> {
    if !x.is_finite() || x == 0.0 {
        return None;
    }
    let magnitude = x.abs();
    for constant in Constant::ALL {
        let name = match constant {
            Constant::Pi => "pi",
            Constant::E => "e",
            Constant::Ln2 | Constant::Ln10 => "ln",
        };
        if bound(name) {
            continue;
        }
        let c = constant.value();
        for q in 1..=12u32 {
            for p in 1..=12u32 {
                if gcd(p, q) != 1 {
                    continue;
                }
                let value = if p == 1 { c } else { f64::from(p) * c } / f64::from(q);
                if value != magnitude {
                    continue;
                }
                let mut tree = constant_tree(constant);
                if p > 1 {
                    tree = ExprTree::binary(BinaryOp::Mul, &ExprTree::number(f64::from(p)), &tree);
                }
                if q > 1 {
                    tree = ExprTree::binary(BinaryOp::Div, &tree, &ExprTree::number(f64::from(q)));
                }
                return Some(if x < 0.0 {
                    ExprTree::negate(&tree)
                } else {
                    tree
                });
            }
        }
    }
    None
}

/// The greatest common divisor.
fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Where an op passes nothing to an input by the rule `passing`, over the
/// op's `operands` as they are written (its first is the rule's `u` or `a`,
/// its second `b`): `"x*y ≤ 0"` for relu of `x*y`, `"not the largest"` for
/// max. Over the placeholders `u`, `a`, `b` where `operands` lacks one
/// (`:help` passes none); `""` for [`Passing::Always`].
pub fn nothing_where(passing: Passing, operands: &[String]) -> String {
    let operand =
        |k: usize, placeholder: &'static str| operands.get(k).map_or(placeholder, String::as_str);
    match passing {
        Passing::Always => String::new(),
        Passing::WherePositive => format!("{} ≤ 0", operand(0, "u")),
        Passing::ToLargest => "not the largest".to_string(),
        Passing::ToSmallest => "not the smallest".to_string(),
        Passing::WhereExponentNonzero => format!("{} = 0", operand(1, "b")),
        Passing::UnlessZeroBase => format!("{} = 0, {} ≥ 0", operand(0, "a"), operand(1, "b")),
        Passing::NotDifferentiable => "not differentiable".to_string(),
        Passing::Detached => "detached".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each infix operator of the language builds the op whose row is
    /// written infix by the operator's own symbol, and each row written
    /// infix is one of them: `apply` writes every op as it is typed.
    #[test]
    fn every_infix_row_is_an_operator_of_the_language() {
        for op in BinaryOp::ALL {
            let info = super::super::eval::op_of(op).info();
            assert_eq!((info.notation, info.name), (Notation::Infix, op.symbol()));
        }
        for info in Op::table() {
            if info.notation == Notation::Infix {
                let written = BinaryOp::from_symbol(info.name);
                assert_eq!(written.map(super::super::eval::op_of), Some(info.op));
            }
        }
    }
}
