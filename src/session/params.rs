//! The parameters of a loss, of either graph: what `:grad`, `grad(L, W)`,
//! `:=`, `:check` and `:descend` resolve a name to when the output is a
//! tensor (a tensor leaf, or a scalar leaf the tensor graph reads through
//! its scalar operands), their values and gradients, and how they move.

use super::error::ErrorCode;
use super::tensors::{from_engine, tensor_error};
use super::{Event, Session, SessionError};
use crate::engine::tensor::{Shape, Tensor, TensorGradients, TensorId, TensorOp};
use crate::engine::{NodeId, Op};
use crate::syntax::{Ident, Span};

/// A parameter of a tensor loss, what `:grad`, `grad(L, p)`, `:=` and
/// `:descend` take: a tensor leaf, or a scalar leaf that reaches the tensor
/// graph through its scalar operands (`w` and `b` in `mean((w*xs + b - ys)^2)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Param {
    /// A vector or matrix leaf.
    Tensor(TensorId),
    /// A scalar leaf of the scalar graph.
    Scalar(NodeId),
}

impl Session {
    /// The leaf `target` names, a tensor leaf or a scalar one, or the error
    /// that it names none.
    pub(super) fn param(&self, target: &Ident) -> Result<Param, SessionError> {
        let name = target.name.as_str();
        if let Some(leaf) = self.scalar_leaf(name) {
            return Ok(Param::Scalar(leaf));
        }
        let Some(leaf) = self.shaped_var(name) else {
            let (what, hint) = if self.vars.contains_key(name) {
                (
                    format!("`{name}` is derived, not a leaf: only a leaf's value can move"),
                    format!("write `{name} = …` to bind it again"),
                )
            } else {
                (
                    format!(
                        "`{name}` is not a variable: `:=` moves a leaf, a number, vector or matrix"
                    ),
                    format!("write `{name} = …` to bind it"),
                )
            };
            return Err(tensor_error(
                ErrorCode::Shape,
                target.span,
                what,
                Some(hint),
            ));
        };
        if self.tensors.graph.op(leaf) != TensorOp::Variable {
            return Err(tensor_error(
                ErrorCode::Shape,
                target.span,
                format!("`{name}` is derived, not a leaf: only a leaf's value can move"),
                Some(format!("write `{name} = …` to bind it again")),
            ));
        }
        Ok(Param::Tensor(leaf))
    }

    /// The leaf `target` names for `command` (`check`, `descend`, the name
    /// after the `:`), a command that reads or moves the parameters of a
    /// loss: as
    /// [`Session::param`], with an error that says what `command` takes
    /// (a leaf) and names the session's leaves, not what `:=` does.
    pub(super) fn param_for(&self, target: &Ident, command: &str) -> Result<Param, SessionError> {
        self.param(target)
            .map_err(|_| self.not_a_parameter(target, command))
    }

    /// The error that `target` names no leaf that `command` (`check`,
    /// `descend`) could take: derived, or not a variable at all; its help
    /// names up to 4 of the session's leaves (numbers, vectors and matrices,
    /// whether the output reaches them or not).
    pub(super) fn not_a_parameter(&self, target: &Ident, command: &str) -> SessionError {
        let name = target.name.as_str();
        let leaves: Vec<String> = self
            .vars
            .iter()
            .filter(|(_, node)| match (node.scalar(), node.tensor()) {
                (Some(id), _) => self.graph.op(id) == Op::Variable,
                (None, Some(id)) => self.tensors.graph.op(id) == TensorOp::Variable,
                (None, None) => false,
            })
            .map(|(name, _)| format!("`{name}`"))
            .take(4)
            .collect();
        let some = if leaves.is_empty() {
            String::new()
        } else {
            format!(": {}", leaves.join(", "))
        };
        let (what, hint) = if self.vars.contains_key(name) {
            (
                format!(
                    "`{name}` is derived, not a leaf: `:{command}` takes the leaves a loss is built from"
                ),
                format!("name a leaf instead (`:grad` lists those of the output){some}"),
            )
        } else {
            (
                format!(
                    "`{name}` is not a variable: `:{command}` takes the leaves a loss is built from"
                ),
                if leaves.is_empty() {
                    format!("assign it first, e.g. `{name} = 1`")
                } else {
                    format!("name a leaf (`:grad` lists those of the output){some}")
                },
            )
        };
        SessionError::BadArguments {
            message: what,
            span: target.span,
            help: Some(hint),
        }
    }

    /// The scalar leaf `name` names, if it names one.
    pub(super) fn scalar_leaf(&self, name: &str) -> Option<NodeId> {
        let id = self.scalar_var(name)?;
        (self.graph.op(id) == Op::Variable).then_some(id)
    }

    /// ∂output/∂`leaf` of a scalar leaf (or any scalar node), from a tensor
    /// backward pass's `gradients`: what reaches the tensor graph's copies
    /// of it ([`TensorGraph::mirror`](crate::engine::tensor::TensorGraph::mirror):
    /// a number built by ops, `c = w*3`), plus the chain rule through the
    /// scalar graph, Σ over the scalar nodes s the tensor graph reads of
    /// ∂output/∂s · ∂s/∂leaf. `None` when the output reaches neither.
    pub(super) fn scalar_leaf_gradient(
        &self,
        gradients: &TensorGradients,
        leaf: NodeId,
    ) -> Option<f64> {
        let copies = self
            .tensors
            .graph
            .mirrors()
            .filter(|&(_, of)| of == leaf)
            .filter_map(|(id, _)| gradients.get(id))
            .map(|g| g.data()[0])
            .reduce(|a, b| a + b);
        match (copies, self.gradient_through_reads(gradients, leaf)) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        }
    }

    /// The chain rule through the scalar graph: Σ over the scalar nodes s
    /// the tensor graph reads of ∂output/∂s · ∂s/∂leaf (the scalar graph's
    /// backward pass from each s); `None` when no s reaches `leaf`.
    fn gradient_through_reads(&self, gradients: &TensorGradients, leaf: NodeId) -> Option<f64> {
        let mut total = None;
        for &(node, upstream) in gradients.scalars() {
            let local = if node == leaf {
                1.0
            } else {
                let order = self.graph.topo_order(node);
                if !order.contains(&leaf) {
                    continue;
                }
                self.graph.backward(&order).get(leaf)
            };
            *total.get_or_insert(0.0) += upstream * local;
        }
        total
    }

    /// ∂output/∂`param` with the parameter's shape (0 where the output does
    /// not reach it), from a tensor backward pass's `gradients`.
    pub(super) fn param_gradient(&self, gradients: &TensorGradients, param: Param) -> Tensor {
        match param {
            Param::Tensor(id) => gradients
                .get(id)
                .map_or_else(|| Tensor::zeros(self.tensors.graph.shape(id)), Clone::clone),
            Param::Scalar(leaf) => {
                Tensor::scalar(self.scalar_leaf_gradient(gradients, leaf).unwrap_or(0.0))
            }
        }
    }

    /// The scalar leaves a tensor backward pass reached through the scalar
    /// nodes the tensor graph reads, in the order of the scalar variables,
    /// with their names (the output's own name left out).
    pub(super) fn scalar_params_reached(
        &self,
        gradients: &TensorGradients,
    ) -> Vec<(String, Param)> {
        self.scalar_vars()
            .filter(|&(_, id)| self.graph.op(id) == Op::Variable)
            .filter(|&(_, id)| self.scalar_leaf_gradient(gradients, id).is_some())
            .map(|(name, id)| (name.clone(), Param::Scalar(id)))
            .collect()
    }

    /// The value of `param` now.
    pub(super) fn param_value(&self, param: Param) -> Tensor {
        match param {
            Param::Tensor(id) => self.tensors.graph.value(id).clone(),
            Param::Scalar(leaf) => Tensor::scalar(self.graph.value(leaf)),
        }
    }

    /// Moves `param` to `value` (of its shape; journalled, so that a failed
    /// statement puts it back). The graphs are not computed again: call
    /// [`Tensors::rerun_whole`] after the last move.
    pub(super) fn move_param(
        &mut self,
        param: Param,
        value: Tensor,
        span: Span,
    ) -> Result<(), SessionError> {
        match param {
            Param::Tensor(leaf) => {
                self.tensors.journal_leaf(leaf);
                self.tensors
                    .graph
                    .set_leaf_value(leaf, value)
                    .map_err(|e| from_engine(e.into(), span))
            }
            Param::Scalar(leaf) => {
                let [number] = value.data() else {
                    return Err(tensor_error(
                        ErrorCode::Shape,
                        span,
                        format!(
                            "a number takes a value of shape (), not {}",
                            value.shape().parenthesized()
                        ),
                        Some(
                            "reduce it first, e.g. `sum(…)`, or bind the name again with `=` (`NAME = …` takes any shape)"
                                .into(),
                        ),
                    ));
                };
                self.journal_leaves([leaf]);
                self.graph.update_leaves(&[(leaf, *number)]);
                Ok(())
            }
        }
    }

    /// The notice that the tensor output `output` (named `label`) is not of
    /// shape `()`, so that its backward pass starts from ones, if it is not.
    pub(super) fn note_seeded_with_ones(
        &self,
        output: TensorId,
        label: &str,
        events: &mut Vec<Event>,
    ) {
        let shape = self.tensors.graph.shape(output);
        if shape != Shape::scalar() {
            events.push(Event::Notice(super::Notice::SeededWithOnes {
                of: label.to_string(),
                shape: shape.to_string(),
            }));
        }
    }
}
