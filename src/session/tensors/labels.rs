//! How each tensor node is named in the trace, the steps and the pictures:
//! its variable, a scalar's variable or value (a number's copied op, too:
//! `c` for the copy of `c = w*3`), a short literal's value, or its
//! expression over its operands' labels (`W @ x`), else `t7`.

use crate::engine::Op;
use crate::engine::tensor::{TensorId, TensorOp};
use crate::syntax::ExprTree;

use super::super::Session;
use super::super::event::TensorName;

impl Session {
    /// How each tensor node up to `output` is named: its variable (the
    /// first-assigned name), a scalar's variable or value (or the label of
    /// the scalar node a mirror copies, when it has one), a short literal's
    /// value, else its expression over its operands' names (`W @ x`), or
    /// `t7` (node 7) when that would be long.
    pub(in crate::session) fn tensor_labels(&self, output: TensorId) -> Vec<String> {
        self.labels_and_legend(output).0
    }

    /// [`Session::tensor_labels`], and for each node written by a short name
    /// (`t39`) what it computes over its operands' labels, among the nodes
    /// `output` reaches, in the order of the nodes; and for each number
    /// built by ops that the tensor graph reads as an input (too many ops
    /// to copy, [`super::super::eval::MAX_MIRRORED_OPS`]), that the trace
    /// stops at it and how to see its steps.
    pub(in crate::session) fn labels_and_legend(
        &self,
        output: TensorId,
    ) -> (Vec<String>, Vec<TensorName>) {
        let mut legend: Vec<(TensorId, TensorName)> = Vec::new();
        let graph = &self.tensors.graph;
        let mut names: Vec<Option<&str>> = vec![None; output.index() + 1];
        for (name, id) in self.shaped_vars() {
            if let Some(slot) = names.get_mut(id.index()) {
                slot.get_or_insert(name.as_str());
            }
        }
        let scalar_names = self.names_by_node();
        let mut labels: Vec<String> = Vec::with_capacity(output.index() + 1);
        for (k, name) in names.iter().enumerate() {
            let id = TensorId(k as u32);
            if let Some(name) = name {
                labels.push(name.to_string());
                continue;
            }
            // A copy of a named number's op: the number's name.
            if let Some(name) = graph.mirrored(id).and_then(|node| scalar_names.get(&node)) {
                labels.push(name.to_string());
                continue;
            }
            // An operand in brackets where it binds less tightly than its
            // user: a sum inside anything but a sum, any infix operand of a
            // postfix or a sign.
            let sum_op = matches!(graph.op(id), TensorOp::Elementwise(Op::Add | Op::Sub));
            let operand = |i: usize| {
                let text = &labels[graph.operands(id)[i].index()];
                let is_sum = text.contains(" + ") || text.contains(" - ");
                if text.contains(' ')
                    && (is_sum && !sum_op
                        || !matches!(graph.op(id), TensorOp::Elementwise(_) | TensorOp::MatMul))
                {
                    format!("({text})")
                } else {
                    text.clone()
                }
            };
            let label = match graph.op(id) {
                TensorOp::Scalar(node) => {
                    let derived = !matches!(self.graph.op(node), Op::Variable | Op::Const);
                    let label = match scalar_names.get(&node) {
                        Some(name) => name.to_string(),
                        // A number built by ops, unnamed: its node's label.
                        None if derived => super::super::node_label(node),
                        None => format_number(self.graph.value(node)),
                    };
                    if derived {
                        legend.push((id, self.read_as_input(&label, node)));
                    }
                    label
                }
                TensorOp::Variable | TensorOp::Const => leaf_label(graph.value(id), k),
                TensorOp::Elementwise(op) => {
                    let info = op.info();
                    match (graph.operands(id).len(), op) {
                        (1, Op::Neg) => format!("-{}", operand(0)),
                        (1, _) => {
                            format!("{}({})", info.name, labels[graph.operands(id)[0].index()])
                        }
                        // A function of two (`max(W, 0)`, `pow(x, 3)`) as called.
                        _ if info.name.starts_with(char::is_alphabetic) => format!(
                            "{}({}, {})",
                            super::functions::elementwise_name(op),
                            labels[graph.operands(id)[0].index()],
                            labels[graph.operands(id)[1].index()]
                        ),
                        _ => format!("{} {} {}", operand(0), info.name, operand(1)),
                    }
                }
                TensorOp::MatMul => format!("{} @ {}", operand(0), operand(1)),
                TensorOp::Transpose => format!("{}ᵀ", operand(0)),
                TensorOp::Index(i) => format!("{}[{i}]", operand(0)),
                TensorOp::Index2(i, j) => format!("{}[{i}, {j}]", operand(0)),
                TensorOp::SumAxis(axis) | TensorOp::SumKeepDims(axis) => {
                    let keep = matches!(graph.op(id), TensorOp::SumKeepDims(_));
                    let keep = if keep { ", keepdims" } else { "" };
                    format!(
                        "sum({}, {axis}{keep})",
                        labels[graph.operands(id)[0].index()]
                    )
                }
                op => super::functions::batch_label(op, graph, &labels, id)
                    .unwrap_or_else(|| call_label(&op_name(op), graph.operands(id), &labels)),
            };
            labels.push(if label.chars().count() > 24 {
                let name = TensorName {
                    name: format!("t{k}"),
                    computes: label,
                };
                legend.push((id, name));
                format!("t{k}")
            } else {
                label
            });
        }
        let mut reached = vec![false; output.index() + 1];
        for id in graph.topo_order(output) {
            reached[id.index()] = true;
        }
        let legend = legend
            .into_iter()
            .filter(|(id, _)| reached[id.index()])
            .map(|(_, row)| row)
            .collect();
        (labels, legend)
    }

    /// The legend's row for `label`, a number built by the scalar graph's
    /// ops (node `node`) that the tensor graph reads as an input: why, that
    /// the trace stops at it while its gradient goes on, and how to see its
    /// own steps.
    fn read_as_input(&self, label: &str, node: crate::engine::NodeId) -> TensorName {
        let op = self.graph.op(node);
        let operands = self.graph.operands(node).len();
        let why = if TensorOp::Elementwise(op).operand_count() == Some(operands) {
            format!(
                "a number built from more than {} ops",
                super::super::eval::MAX_MIRRORED_OPS
            )
        } else {
            format!(
                "a number made by `{}` of {operands} numbers, an op a tensor does not copy",
                op.info().name
            )
        };
        TensorName {
            name: label.to_string(),
            computes: format!(
                "{why}, read as an input: the trace stops at it, its gradient goes on (`:grad`); for its own steps type `{label}` then `:trace`"
            ),
        }
    }
}
/// The label of leaf `k` holding `value`: its numbers when short, else `tk`.
fn leaf_label(value: &crate::engine::tensor::Tensor, k: usize) -> String {
    let numbers = |row: &[f64]| {
        let texts: Vec<String> = row.iter().map(|x| format_number(*x)).collect();
        format!("[{}]", texts.join(", "))
    };
    match value.shape().dims() {
        [] => format_number(value.data()[0]),
        _ if value.len() > 4 => format!("t{k}"),
        [_] => numbers(value.data()),
        [_, n] => {
            let rows: Vec<String> = value.data().chunks((*n).max(1)).map(numbers).collect();
            format!("[{}]", rows.join(", "))
        }
        _ => format!("t{k}"),
    }
}

/// The label of a node written as a call of `name` on its operands.
fn call_label(name: &str, operands: &[TensorId], labels: &[String]) -> String {
    let args: Vec<&str> = operands
        .iter()
        .map(|o| labels[o.index()].as_str())
        .collect();
    format!("{name}({})", args.join(", "))
}

/// A number as a label: the shortest text that reads back as it.
pub(in crate::session) fn format_number(x: f64) -> String {
    let mut tree = ExprTree::number(x).to_string();
    if tree.is_empty() {
        tree = x.to_string();
    }
    tree
}

/// A tensor op as the trace names it: `@`, `tanh`, `sum`, `+`.
pub(in crate::session) fn op_name(op: TensorOp) -> String {
    match op {
        TensorOp::Elementwise(op) => op.info().name.to_string(),
        op => op.info().name.to_string(),
    }
}
