//! The local-derivative formulas a trace prints: each op's rule
//! ([`Op::rule`]) with the operands' labels in place of its placeholders,
//! constant arithmetic folded, printed by the expression printer. Every formula
//! is an expression the calculator parses; evaluated in the session, it gives
//! the local derivative (`2*x`, `-(1/a)/a`, `1/(1 + x^2)`).
//!
//! An operand's label is its variable name, its literal when it is a constant,
//! and otherwise, when it is short, the expression that defines it (`x*w`); an
//! operand with no name and a long definition is written by its label (`_7`),
//! which parses too: typed back it means that node.

use std::collections::HashMap;

use crate::engine::{Graph, NodeId, Op, Rule};
use crate::syntax::{BinaryOp, ExprKind, ExprTree, UnaryOp, parse_expression};

/// The most expression nodes an unnamed operand's label may have (`x1*w1 +
/// x2*w2` has 7).
const LABEL_NODES: usize = 9;

/// The longest an unnamed operand's label may print, in characters.
const LABEL_CHARS: usize = 32;

/// Builds formulas for one trace; parsed rules are kept for the next step.
pub(super) struct Formulas<'g> {
    graph: &'g Graph,
    names: HashMap<NodeId, &'g str>,
    parsed: HashMap<String, Option<ExprTree>>,
}

/// One local derivative, as the trace shows it.
pub(super) struct Formula {
    /// `∂(x^2)/∂x`: the node's expression and the operand, by their labels.
    pub partial: String,
    /// The rule with the operands' labels (`2*x`), or `None` when it passes nothing.
    pub rhs: Option<String>,
}

impl<'g> Formulas<'g> {
    /// Formulas over `graph`, whose nodes carry the variable names `names`.
    pub(super) fn new(graph: &'g Graph, names: HashMap<NodeId, &'g str>) -> Formulas<'g> {
        Formulas {
            graph,
            names,
            parsed: HashMap::new(),
        }
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
        let mut formulas = Vec::with_capacity(inputs.len());
        for (position, label) in labels.iter().enumerate() {
            let partial = format!("∂{of}/∂{}", wrap(label));
            let rhs = match op.rule(position, &values, self.graph.value(node)) {
                Rule::PassesNothing => None,
                Rule::Expr(text) => self.instantiate(op, &text, &refs),
            };
            formulas.push(Formula {
                partial: restore_labels(partial, &labelled),
                rhs: rhs.map(|rhs| restore_labels(rhs, &labelled)),
            });
        }
        formulas
    }

    /// The rule `text` of `op` with `operands` for its placeholders, folded and
    /// printed; `None` only if the rule text did not parse (a bug, caught by tests).
    fn instantiate(&mut self, op: Op, text: &str, operands: &[&ExprTree]) -> Option<String> {
        let tree = self
            .parsed
            .entry(text.to_string())
            .or_insert_with(|| parse_expression(text).ok())
            .as_ref()?;
        let bindings: Vec<(&str, &ExprTree)> = op
            .placeholders()
            .iter()
            .copied()
            .zip(operands.iter().copied())
            .collect();
        Some(tree.substitute(&bindings).fold_constants().to_string())
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

/// The expression `op` applied to `operands`: `a + b`, `-u`, `tanh(u)`, `max(a, b, c)`.
fn apply(op: Op, operands: &[&ExprTree]) -> ExprTree {
    let binary = |op: BinaryOp| ExprTree::binary(op, operands[0], operands[1]);
    match op {
        Op::Add => binary(BinaryOp::Add),
        Op::Sub => binary(BinaryOp::Sub),
        Op::Mul => binary(BinaryOp::Mul),
        Op::Div => binary(BinaryOp::Div),
        Op::Pow => binary(BinaryOp::Pow),
        Op::Neg => ExprTree::compose(operands, |ids| ExprKind::Unary {
            op: UnaryOp::Neg,
            operand: ids[0],
        }),
        _ => ExprTree::call(op.info().name, operands),
    }
}

/// The tree as text, in parentheses unless it is a name, a call or a
/// non-negative literal: `∂(x^2)/∂x`, `∂tanh(x)/∂x`, `∂(x*w + b)/∂(x*w)`.
fn wrap(tree: &ExprTree) -> String {
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
