//! Derivatives of tensor outputs as nodes of the tensor graph: what
//! `grad(L, W)` returns (a node that follows W when `:=` moves it, and that
//! can be differentiated again) and `:hessian` of a tensor output (the
//! matrix of ∂²L/∂wᵢ∂wⱼ over the elements of the named leaves). The engine
//! builds the nodes (`TensorGraph::grad`); a scalar leaf that reaches the
//! tensor graph through its bridges continues the chain rule in the scalar
//! graph (`Graph::grad` of each bridged node).

use super::derivatives::{derivative_budget, hessian_event};
use super::error::ErrorCode;
use super::params::Param;
use super::tensors::{from_engine, tensor_error};
use super::{Event, Notice, Number, Output, Session, SessionError};
use crate::engine::tensor::{Shape, Tensor, TensorGradError, TensorId, TensorOp};
use crate::engine::{GradError, NodeId, Op};
use crate::syntax::{Ident, Span};

/// The most tensor nodes one tensor derivative may append (each a whole
/// tensor; the memory budget bounds their values too).
pub const MAX_TENSOR_DERIVATIVE_NODES: usize = 200_000;

/// The most elements `:hessian` of a tensor output takes over all the
/// leaves named: the matrix has one row and one column per element, each
/// row a backward pass.
pub const MAX_TENSOR_HESSIAN_ELEMENTS: usize = 400;

impl Session {
    /// ∂of/∂param for each of `params`, built as nodes of the tensor graph
    /// (of each parameter's shape; shape `()` for a scalar leaf). A scalar
    /// leaf's derivative is Σ over the scalar nodes s the tensor graph
    /// reads of ∂of/∂s · ∂s/∂leaf, the latter built in the scalar graph and
    /// bridged in. Both graphs are as they were when it fails.
    ///
    /// Errors: the engine's [`TensorGradError`] (an op without a rule of
    /// nodes, a budget, Ctrl-C); a scalar derivative past its budget is
    /// [`TensorGradError::TooLarge`] too.
    pub(super) fn shaped_derivative_nodes(
        &mut self,
        of: TensorId,
        params: &[Param],
    ) -> Result<Vec<TensorId>, TensorGradError> {
        let (tensor_mark, scalar_mark) = (self.tensors.graph.len(), self.graph.len());
        let built = self.build_tensor_derivatives(of, params);
        if built.is_err() {
            self.tensors.graph.truncate(tensor_mark);
            self.graph.truncate(scalar_mark);
        }
        built
    }

    /// [`Session::shaped_derivative_nodes`] without the truncation.
    fn build_tensor_derivatives(
        &mut self,
        of: TensorId,
        params: &[Param],
    ) -> Result<Vec<TensorId>, TensorGradError> {
        let graph = &self.tensors.graph;
        let bridges: Vec<(TensorId, NodeId)> =
            if params.iter().any(|p| matches!(p, Param::Scalar(_))) {
                graph
                    .topo_order(of)
                    .into_iter()
                    .filter_map(|id| graph.stands_for(id).map(|node| (id, node)))
                    .collect()
            } else {
                Vec::new()
            };
        let mut wrt: Vec<TensorId> = params
            .iter()
            .filter_map(|p| match p {
                Param::Tensor(id) => Some(*id),
                Param::Scalar(_) => None,
            })
            .collect();
        let tensors = wrt.len();
        wrt.extend(bridges.iter().map(|(id, _)| *id));
        let results = self
            .tensors
            .graph
            .grad(of, &wrt, MAX_TENSOR_DERIVATIVE_NODES)?;
        let (tensor_results, bridge_results) = results.split_at(tensors);
        let mut tensor_results = tensor_results.iter();
        let mut out = Vec::with_capacity(params.len());
        for &param in params {
            out.push(match param {
                Param::Tensor(_) => *tensor_results.next().expect("one result per tensor"),
                Param::Scalar(leaf) => {
                    self.through_bridges(leaf, &bridges, bridge_results.to_vec())?
                }
            });
        }
        Ok(out)
    }

    /// ∂of/∂leaf from ∂of/∂s of each bridge (`gradients`, one per
    /// `bridges`): Σ ∂of/∂s · ∂s/∂leaf, a node of shape `()`.
    fn through_bridges(
        &mut self,
        leaf: NodeId,
        bridges: &[(TensorId, NodeId)],
        gradients: Vec<TensorId>,
    ) -> Result<TensorId, TensorGradError> {
        let mut total: Option<TensorId> = None;
        for (&(bridge, node), gradient) in bridges.iter().zip(gradients) {
            let term = if node == leaf {
                gradient
            } else {
                // A copy of a number's op (`c = 2*w` read by a tensor op)
                // passes its gradient on inside the tensor graph, down to
                // the leaves' reads: only a copy of `leaf` itself counts.
                if node < leaf || self.tensors.graph.mirrored(bridge).is_some() {
                    continue; // built before the leaf: it cannot depend on it
                }
                let budget = derivative_budget(self.graph.len() - leaf.index());
                let local = match self.graph.grad(node, &[leaf], budget) {
                    Ok(derivatives) => derivatives.results[0],
                    Err(GradError::TooLarge { limit }) => {
                        return Err(TensorGradError::TooLarge { limit });
                    }
                    Err(GradError::Interrupted) => return Err(TensorGradError::Interrupted),
                };
                if self.graph.op(local) == Op::Const && self.graph.value(local) == 0.0 {
                    continue;
                }
                let bridged = self.tensors.graph.scalar(local, self.graph.value(local));
                self.tensors
                    .graph
                    .apply(TensorOp::Elementwise(Op::Mul), &[gradient, bridged])?
            };
            total = Some(match total {
                None => term,
                Some(sum) => self
                    .tensors
                    .graph
                    .apply(TensorOp::Elementwise(Op::Add), &[sum, term])?,
            });
        }
        match total {
            Some(total) => Ok(total),
            None => Ok(self.tensors.graph.constant(Tensor::scalar(0.0))?),
        }
    }

    /// [`TensorGradError`] as the session's error at `span`, for `what`
    /// (`grad(L, W)`, `:hessian`).
    pub(super) fn shaped_grad_error(
        error: TensorGradError,
        what: &str,
        span: Span,
    ) -> SessionError {
        match error {
            TensorGradError::Interrupted => SessionError::Interrupted { span },
            TensorGradError::Budget(error) => from_engine(error.into(), span),
            TensorGradError::TooLarge { .. } => tensor_error(
                ErrorCode::Limit,
                span,
                format!("{what}: {error}"),
                Some("take fewer orders, or differentiate a smaller expression".into()),
            ),
            TensorGradError::Unsupported { .. } => tensor_error(
                ErrorCode::Unsupported,
                span,
                format!("{what}: {error}"),
                Some(
                    "`:grad` and a first `grad(L, W)` give the numbers; move the leaves off that point for higher orders".into(),
                ),
            ),
        }
    }

    /// `:hessian [NAMES]` of a tensor output of shape `()`: one row per
    /// element of the leaves named (every leaf it reaches without names),
    /// `∂²L/∂row∂column`, each row a backward pass from one element of the
    /// first derivative built as nodes. At most
    /// [`MAX_TENSOR_HESSIAN_ELEMENTS`] elements.
    pub(super) fn hessian_tensors(
        &mut self,
        span: Span,
        args: &[Ident],
        output: Output<TensorId>,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let label = output.label.clone();
        let shape = self.tensors.graph.shape(output.node);
        if shape != Shape::scalar() {
            return Err(tensor_error(
                ErrorCode::Shape,
                span,
                format!(
                    "`:hessian` takes an output of shape (), and {label} has shape {}",
                    shape.parenthesized()
                ),
                Some(format!(
                    "reduce it first, e.g. `L = sum({label})`, then `:hessian`"
                )),
            ));
        }
        let mut targets: Vec<(String, Param)> = Vec::new();
        for arg in args {
            let param = self.param_for(arg, "hessian")?;
            if !targets.iter().any(|(n, _)| *n == arg.name) {
                targets.push((arg.name.clone(), param));
            }
        }
        if args.is_empty() {
            let gradients = self.tensor_backward(output.node, span)?;
            targets = self
                .shaped_vars()
                .filter(|&(name, id)| {
                    gradients.get(id).is_some()
                        && self.tensors.graph.op(id) == TensorOp::Variable
                        && *name != label
                })
                .map(|(name, id)| (name.clone(), Param::Tensor(id)))
                .collect();
            targets.extend(self.scalar_params_reached(&gradients));
        }
        if targets.is_empty() {
            events.push(Event::Notice(Notice::NoVariable {
                of: label,
                checking: false,
            }));
            return Ok(());
        }
        let shapes: Vec<Shape> = targets
            .iter()
            .map(|&(_, param)| self.param_value(param).shape())
            .collect();
        let elements: usize = shapes.iter().map(Shape::len).sum();
        if elements > MAX_TENSOR_HESSIAN_ELEMENTS {
            return Err(tensor_error(
                ErrorCode::Limit,
                span,
                format!(
                    "`:hessian` takes at most {MAX_TENSOR_HESSIAN_ELEMENTS} elements in all (one row and one column each); these leaves have {elements}"
                ),
                Some("name fewer or smaller leaves, e.g. `:hessian b`".into()),
            ));
        }
        let names: Vec<String> = targets
            .iter()
            .zip(&shapes)
            .flat_map(|((name, _), shape)| element_names(name, *shape))
            .collect();
        let params: Vec<Param> = targets.iter().map(|&(_, param)| param).collect();
        let (tensor_mark, scalar_mark) = (self.tensors.graph.len(), self.graph.len());
        let rows = self.hessian_rows(output.node, &params, &shapes, span);
        self.tensors.graph.truncate(tensor_mark);
        self.graph.truncate(scalar_mark);
        let (matrix, constant_rows) = rows?;
        events.push(Event::Calculus(hessian_event(
            label,
            names,
            matrix,
            &constant_rows,
        )));
        Ok(())
    }

    /// The rows of a tensor `:hessian` and, for each, whether the first
    /// derivative's element depends on none of `params` (a zero row of
    /// linearity, not of the point). The caller truncates both graphs.
    fn hessian_rows(
        &mut self,
        output: TensorId,
        params: &[Param],
        shapes: &[Shape],
        span: Span,
    ) -> Result<(Vec<Vec<Number>>, Vec<bool>), SessionError> {
        let firsts = self
            .shaped_derivative_nodes(output, params)
            .map_err(|e| Session::shaped_grad_error(e, "`:hessian`", span))?;
        let mut matrix = Vec::new();
        let mut constant_rows = Vec::new();
        for (&first, shape) in firsts.iter().zip(shapes) {
            for k in 0..shape.len() {
                let op = match *shape.dims() {
                    [] => None,
                    [_] => Some(TensorOp::Index(k)),
                    [_, n] => Some(TensorOp::Index2(k / n, k % n)),
                    _ => unreachable!("rank ≤ 2"),
                };
                let element = match op {
                    None => first,
                    Some(op) => self
                        .tensors
                        .graph
                        .apply(op, &[first])
                        .map_err(|e| from_engine(e, span))?,
                };
                let gradients = self.tensor_backward(element, span)?;
                let mut row = Vec::new();
                let mut reached = false;
                for &param in params {
                    reached |= match param {
                        Param::Tensor(id) => gradients.get(id).is_some(),
                        Param::Scalar(leaf) => {
                            self.scalar_leaf_gradient(&gradients, leaf).is_some()
                        }
                    };
                    let value = self.param_gradient(&gradients, param);
                    row.extend(value.data().iter().map(|&v| Number(v)));
                }
                matrix.push(row);
                constant_rows.push(!reached);
            }
        }
        Ok((matrix, constant_rows))
    }
}

/// The names of the elements of the leaf `name` of `shape`, row-major:
/// `x` for a number, `x[2]` for a vector's, `W[0,1]` for a matrix's.
fn element_names(name: &str, shape: Shape) -> Vec<String> {
    match *shape.dims() {
        [] => vec![name.to_string()],
        [n] => (0..n).map(|i| format!("{name}[{i}]")).collect(),
        [m, n] => (0..m * n)
            .map(|k| format!("{name}[{},{}]", k / n, k % n))
            .collect(),
        _ => unreachable!("rank ≤ 2"),
    }
}
