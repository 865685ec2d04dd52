//! Vectors and matrices in the session: a value is a scalar node of the
//! scalar graph or a tensor node of the tensor graph
//! ([`crate::engine::tensor`]). A statement that touches a tensor (a literal
//! `[…]`, an index, `@`, `ᵀ`, a tensor function, a name bound to a tensor) is
//! evaluated here, onto the tensor graph, its scalar operands bridged in
//! (a scalar variable as a node of shape `()`, whose gradient goes back to
//! the scalar graph); every other statement is evaluated as before
//! (`eval.rs`).
//!
//! A statement that fails changes nothing here either: [`Tensors::begin`]
//! keeps what a statement may change (the graph's length, the names, the
//! output, `ans`, the generator, the leaves it moves) and [`Tensors::undo`]
//! puts it back.

use crate::engine::Op;
use crate::engine::tensor::{
    Rng, Shape, Tensor, TensorError, TensorGradients, TensorGraph, TensorId, TensorOp,
};
use crate::syntax::{ExprKind, ExprTree, Span};

use super::error::ErrorCode;
use super::eval::{Arena, Scope};
use super::event::TensorData;
use super::{Event, Node, RESULT_NAMES, Session, SessionError};

mod builtins;
mod calls;
mod functions;
mod labels;
mod literals;
pub use builtins::builtin_names;
pub(super) use builtins::{Builds, Family, builtin, builtins};
pub(super) use calls::{CallBox, TensorCall, TensorCalls, call_boxes};
pub(super) use functions::{KEEPDIMS, batch_rule_text, keeps_dims, slice_rule};
pub(super) use labels::{format_number as number_label, op_name};

/// The seed `randn` starts from, until `:seed N`.
pub const DEFAULT_SEED: u64 = 0;

/// The session's tensors: their graph, `randn`'s generator, and what a
/// statement changed of them, for its undo. The names, the output and `ans`
/// are the session's, of either kind ([`super::Node`]).
#[derive(Debug)]
pub(super) struct Tensors {
    pub graph: TensorGraph,
    /// `randn`'s generator (`:seed N` starts it again).
    pub rng: Rng,
    /// The nodes `grad(L, W)` made (a gradient of one is refused).
    pub gradients: Vec<TensorId>,
    /// The calls of user functions on tensors (`:trace` shows each as one step).
    pub calls: TensorCalls,
    /// What the running statement may change, as it was before it.
    saved: Saved,
    /// The warnings of the expression being evaluated (an op that made inf
    /// or nan out of finite elements), handed out with its events.
    warnings: Vec<Event>,
}

/// [`Tensors`] as it was when the running statement began.
#[derive(Debug, Default)]
struct Saved {
    len: usize,
    rng: Option<Rng>,
    /// Leaves moved by the statement, with their values before (first move only).
    leaves: Vec<(TensorId, Tensor)>,
}

impl Default for Tensors {
    fn default() -> Tensors {
        Tensors {
            graph: TensorGraph::new(),
            rng: Rng::new(DEFAULT_SEED),
            gradients: Vec::new(),
            calls: TensorCalls::default(),
            saved: Saved::default(),
            warnings: Vec::new(),
        }
    }
}

impl Tensors {
    /// Keeps what a statement may change, for [`Tensors::undo`].
    pub fn begin(&mut self) {
        self.saved.len = self.graph.len();
        self.saved.rng = Some(self.rng.clone());
        self.saved.leaves.clear();
    }

    /// Drops the nodes from `len` on, and the calls that built them.
    pub fn truncate(&mut self, len: usize) {
        self.graph.truncate(len);
        self.calls.truncate(len);
    }

    /// Records the value of `leaf` before the running statement moves it.
    pub fn journal_leaf(&mut self, leaf: TensorId) {
        if !self.saved.leaves.iter().any(|(id, _)| *id == leaf) {
            let value = self.graph.value(leaf).clone();
            self.saved.leaves.push((leaf, value));
        }
    }

    /// Puts back what the running statement changed: it failed.
    pub fn undo(&mut self, scalars: &crate::engine::Graph) {
        self.truncate(self.saved.len);
        let len = self.saved.len;
        self.gradients.retain(|id| id.index() < len);
        if let Some(rng) = self.saved.rng.take() {
            self.rng = rng;
        }
        let leaves = std::mem::take(&mut self.saved.leaves);
        let moved = !leaves.is_empty();
        for (leaf, value) in leaves {
            // The value had the leaf's shape: it was its value.
            let _ = self.graph.set_leaf_value(leaf, value);
        }
        if moved {
            self.rerun_whole(scalars);
        }
    }

    /// Runs the graph forward again after leaves moved, to the end even
    /// after Ctrl-C (one forward pass, as the scalar graph's update of its
    /// leaves): a step, an update or an undo is never left half done.
    pub fn rerun_whole(&mut self, scalars: &crate::engine::Graph) {
        self.graph.set_interrupt(std::sync::Arc::new(|| false));
        self.graph.rerun(scalars);
        self.graph
            .set_interrupt(std::sync::Arc::new(crate::interrupt::CtrlC));
    }
}

/// A value while a tensor statement is evaluated: a number not yet in the
/// graph (folded as scalars are), a literal not yet in the graph, or a node.
#[derive(Debug, Clone)]
pub(super) enum TValue {
    Number(f64),
    Literal(Tensor),
    Node { id: TensorId, uses_variable: bool },
}

impl TValue {
    fn uses_variable(&self) -> bool {
        matches!(
            self,
            TValue::Node {
                uses_variable: true,
                ..
            }
        )
    }
}

/// A refusal or a shape error of a tensor statement at `span`.
pub(super) fn tensor_error(
    code: ErrorCode,
    span: Span,
    message: impl Into<String>,
    help: Option<String>,
) -> SessionError {
    SessionError::Tensor {
        code,
        message: message.into(),
        span,
        help,
    }
}

/// [`TensorError`] as the session's error at `span`.
pub(super) fn from_engine(error: TensorError, span: Span) -> SessionError {
    match error {
        TensorError::Shape(error) => {
            tensor_error(ErrorCode::Shape, span, error.to_string(), error.help())
        }
        TensorError::Budget(error) => tensor_error(ErrorCode::Limit, span, error.to_string(), None),
        TensorError::Interrupted => SessionError::Interrupted { span },
    }
}

impl Session {
    /// The backward pass from the tensor `output` (its gradients), after
    /// checking that they fit in the memory budget; `span` is the
    /// statement's or command's, for errors.
    ///
    /// Errors: the gradients would not fit ([`ErrorCode::Limit`]); Ctrl-C.
    pub(super) fn tensor_backward(
        &self,
        output: TensorId,
        span: Span,
    ) -> Result<TensorGradients, SessionError> {
        self.check_gradient_budget(output, span)?;
        let gradients = self.tensors.graph.backward(output);
        if self.tensors.graph.interrupted() {
            return Err(SessionError::Interrupted { span });
        }
        Ok(gradients)
    }

    /// The error that the gradients of a backward pass from `output` would
    /// not fit in the memory budget, if they would not.
    pub(super) fn check_gradient_budget(
        &self,
        output: TensorId,
        span: Span,
    ) -> Result<(), SessionError> {
        self.tensors
            .graph
            .check_gradient_budget(output)
            .map_err(|e| tensor_error(ErrorCode::Limit, span, e.to_string(), None))
    }

    /// Whether the text of a long statement may touch a tensor (a cheap
    /// look before it is parsed whole: a tensor exists, or the text has a
    /// bracket, `@`, `ᵀ` or a tensor function's name).
    pub(super) fn may_touch_tensor(&self, text: &str) -> bool {
        self.vars.values().any(|node| node.tensor().is_some())
            || self.shaped_last().is_some()
            || text.contains(['[', '@', 'ᵀ'])
            || builtins().any(|row| row.family != Family::Numbers && text.contains(row.name))
    }

    /// Whether `statement` touches a tensor: an expression that does, or a
    /// target bound to one.
    pub(super) fn statement_touches_tensor(&self, statement: &crate::syntax::Statement) -> bool {
        use crate::syntax::Statement;
        match statement {
            Statement::Expr(tree) => self.touches_tensor(tree),
            Statement::Assign { target, value, .. } => {
                self.is_tensor(&target.name) || self.touches_tensor(value)
            }
            Statement::Updates { targets, values } => {
                targets.iter().any(|t| self.is_tensor(&t.name))
                    || values.iter().any(|v| self.touches_tensor(v))
            }
            Statement::Define { .. } | Statement::Command { .. } | Statement::Repeat(_) => false,
        }
    }

    /// Whether the expression `tree` touches a tensor: a literal, an index,
    /// `@`, `ᵀ`, a tensor function, or a name bound to a tensor (`ans` too),
    /// in the tree or in the body of a user function it calls (`h(a) =
    /// sum(a)` called with a number is a tensor statement, as `sum(2)` is).
    pub(super) fn touches_tensor(&self, tree: &ExprTree) -> bool {
        self.tree_touches_tensor(tree, &[], &mut Vec::new())
    }

    /// [`Session::touches_tensor`] of `tree`, a function's body when
    /// `params` are its parameters (names that are not the variables'),
    /// `seen` the functions already looked into (each once, recursion too).
    fn tree_touches_tensor<'a>(
        &'a self,
        tree: &'a ExprTree,
        params: &[String],
        seen: &mut Vec<&'a str>,
    ) -> bool {
        tree.nodes.iter().any(|node| match &node.kind {
            ExprKind::Name(name) => {
                !params.iter().any(|p| p == name.as_str())
                    && (self.is_tensor(name.as_str())
                        || RESULT_NAMES.contains(&name.as_str()) && self.shaped_last().is_some())
            }
            ExprKind::Call(call) => {
                let name = call.name.as_str();
                functions::is_syntax_callee(name)
                    || builtin(name).is_some_and(|row| row.family != Family::Numbers)
                    || match self.functions.get_key_value(name) {
                        Some((key, function)) if !seen.contains(&name) => {
                            seen.push(key);
                            self.tree_touches_tensor(&function.body, &function.params, seen)
                        }
                        _ => false,
                    }
            }
            _ => false,
        })
    }

    /// Evaluates the tensor expression `tree` onto the tensor graph: its
    /// root's node, and whether any variable went into it.
    ///
    /// Errors: a shape that breaks an op's rule (with both shapes and the
    /// rule), a ragged literal, an index out of range, the memory budget, an
    /// unknown name or function, and what tensors do not support yet (user
    /// functions, `f'(a)`, `grad`), each at its place.
    pub(super) fn evaluate_tensor(
        &mut self,
        tree: &ExprTree,
        events: &mut Vec<Event>,
    ) -> Result<(TensorId, bool), SessionError> {
        self.tensors.warnings.clear();
        let result = self.evaluate_tensor_nodes(tree, events);
        events.append(&mut self.tensors.warnings);
        result
    }

    /// [`Session::evaluate_tensor`] without its warnings: the one walk of
    /// expressions (`eval.rs`) into the tensor graph.
    fn evaluate_tensor_nodes(
        &mut self,
        tree: &ExprTree,
        events: &mut Vec<Event>,
    ) -> Result<(TensorId, bool), SessionError> {
        if let Some(value) = super::literal::plain_literal(tree) {
            return Ok((
                self.materialize(TValue::Literal(value), tree.span())?,
                false,
            ));
        }
        let scope = Scope::top(Arena::Tensor, self.graph.len());
        let root = self.evaluate_in(tree, &scope, None, events)?;
        let root = self.bridged(root);
        let uses_variable = root.uses_variable();
        Ok((self.materialize(root, tree.span())?, uses_variable))
    }

    /// A value as a node of the tensor graph.
    fn materialize(&mut self, value: TValue, span: Span) -> Result<TensorId, SessionError> {
        let graph = &mut self.tensors.graph;
        match value {
            TValue::Node { id, .. } => Ok(id),
            TValue::Number(x) => graph
                .constant(Tensor::scalar(x))
                .map_err(|e| from_engine(e.into(), span)),
            TValue::Literal(t) => graph.constant(t).map_err(|e| from_engine(e.into(), span)),
        }
    }

    /// `op` applied elementwise to `args`: folded when all are numbers,
    /// else one node (numpy's broadcasting).
    pub(super) fn elementwise(
        &mut self,
        op: Op,
        args: Vec<TValue>,
        span: Span,
    ) -> Result<TValue, SessionError> {
        if args.iter().all(|a| matches!(a, TValue::Number(_))) {
            let numbers: Vec<f64> = args
                .iter()
                .map(|a| match a {
                    TValue::Number(x) => *x,
                    _ => f64::NAN,
                })
                .collect();
            return Ok(TValue::Number((op.info().forward)(&numbers)));
        }
        let value = self.apply_tensor(TensorOp::Elementwise(op), args, span)?;
        if let TValue::Node { id, .. } = &value {
            self.warn_non_finite(op, *id, span);
        }
        Ok(value)
    }

    /// Warns when the elementwise node `id` of `op` holds inf or nan at an
    /// element whose operands' elements are finite, as scalar ops warn: the
    /// first such element, with the scalar op's words.
    fn warn_non_finite(&mut self, op: Op, id: TensorId, span: Span) {
        let graph = &self.tensors.graph;
        let out = graph.value(id);
        let operands: Vec<&Tensor> = graph.operands(id).iter().map(|&o| graph.value(o)).collect();
        // An operand's element at the result's element k: the same index,
        // or its only one (a scalar); a broadcast row or column is left out.
        let at = |t: &Tensor, k: usize| match t.len() {
            1 => Some(t.data()[0]),
            n if n == out.len() => Some(t.data()[k]),
            _ => None,
        };
        let found = out.data().iter().enumerate().find_map(|(k, &v)| {
            if v.is_finite() {
                return None;
            }
            let inputs: Option<Vec<f64>> = operands.iter().map(|t| at(t, k)).collect();
            let inputs = inputs?;
            inputs
                .iter()
                .all(|x| x.is_finite())
                .then_some((k, v, inputs))
        });
        if let Some((k, v, inputs)) = found {
            let message = super::eval::non_finite_message(op, v, &inputs);
            let message = match *out.shape().dims() {
                [_, n] => format!("{message} (at [{}, {}] of the result)", k / n, k % n),
                [_] if out.len() > 1 => format!("{message} (at [{k}] of the result)"),
                _ => message,
            };
            self.tensors.warnings.push(Event::Warning { message, span });
        }
    }

    /// One node `op(args)`, its shapes checked.
    fn apply_tensor(
        &mut self,
        op: TensorOp,
        args: Vec<TValue>,
        span: Span,
    ) -> Result<TValue, SessionError> {
        let uses_variable = args.iter().any(TValue::uses_variable);
        let mut ids = Vec::with_capacity(args.len());
        for arg in args {
            ids.push(self.materialize(arg, span)?);
        }
        let id = self
            .tensors
            .graph
            .apply(op, &ids)
            .map_err(|e| from_engine(e, span))?;
        Ok(TValue::Node { id, uses_variable })
    }
}

/// A tensor as shown.
pub(super) fn tensor_data(value: &Tensor) -> TensorData {
    TensorData::of(value.shape().dims(), value.data())
}

impl Session {
    /// The tensor variables of shape `()` and their values, in order: what
    /// a scalar `:=` reports as changed beside the scalars.
    pub(super) fn shape_scalar_values(&self) -> Vec<(String, f64)> {
        self.shaped_vars()
            .filter(|&(_, id)| self.tensors.graph.shape(id) == Shape::scalar())
            .map(|(name, id)| (name.clone(), self.tensors.graph.value(id).data()[0]))
            .collect()
    }

    /// Whether `name` is bound to a tensor now.
    pub(super) fn is_tensor(&self, name: &str) -> bool {
        self.shaped_var(name).is_some()
    }

    /// `ans` when it is a tensor.
    fn shaped_last(&self) -> Option<TensorId> {
        self.last.and_then(Node::tensor)
    }
}

impl Session {
    /// `:seed N`: `randn` starts again from seed N (recorded for `:save`).
    pub(super) fn seed(&mut self, seed: u64) {
        self.tensors.rng = Rng::new(seed);
        self.record(&format!(":seed {seed}"));
    }
}

/// `W[1, 2]`, `x[0]`: element `k` (row-major) of the tensor `name` of `shape`.
pub(super) fn element_name(name: &str, shape: Shape, k: usize) -> String {
    match shape.dims() {
        [] => name.to_string(),
        [_] => format!("{name}[{k}]"),
        [_, n] => format!("{name}[{}, {}]", k / n.max(&1), k % n.max(&1)),
        _ => format!("{name}[{k}]"),
    }
}
