//! Expressions → graph nodes: name resolution, calls, user functions, `f'(a)`,
//! assignments and definitions.

use super::error::RepeatedCall;
use super::{
    CONSTANTS, Event, Node, Notice, Output, RESULT_NAMES, Session, SessionError, UserFunction,
    nearest,
};
use crate::engine::tensor::TensorId;
use crate::engine::{Arity, ArityError, Domain, NodeId, Op};
use crate::session::Number;
use crate::syntax::{self, AssignOp, BinaryOp, ExprKind, ExprTree, Ident, Pieces, Span, UnaryOp};

use super::error::ErrorCode;
use super::tensors::{
    Builds, KEEPDIMS, TValue, builtin, builtin_names, from_engine, keeps_dims, tensor_data,
    tensor_error,
};

/// Deepest nesting of user-function calls (each call evaluates the body once more).
pub const MAX_CALL_DEPTH: usize = 64;

/// Most graph nodes one statement may have built when it calls a user function.
/// A function that calls another twice doubles its size at every level, so
/// forty short definitions could ask for 2^40 nodes; this bounds time and memory
/// (20 bytes a node) instead. Checked at every call.
pub const MAX_CALL_NODES: usize = 1_000_000;

/// An evaluated expression: its node, and whether any variable went into it.
/// An assignment of an expression that uses no variable makes a new leaf.
#[derive(Debug, Clone, Copy)]
pub(super) struct Value {
    pub node: NodeId,
    pub uses_variable: bool,
}

/// A value of either kind while an expression is evaluated: a number's node
/// of the scalar graph ([`Value`]), or a value of a tensor statement (a
/// number folded, a literal, a node of the tensor graph: [`TValue`]).
#[derive(Debug, Clone)]
pub(super) enum Val {
    Scalar(Value),
    Tensor(TValue),
}

/// The graph a statement's names and numbers go into: the scalar graph, or
/// the tensor graph for a statement that touches a tensor
/// ([`Session::statement_touches_tensor`]), its numbers bridged. An op goes
/// where its operands are (all numbers' nodes: the scalar graph; any tensor
/// value: the tensor graph).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Arena {
    #[default]
    Scalar,
    Tensor,
}

/// A call as written, `name(args)`.
#[derive(Clone, Copy)]
struct CallSite<'a> {
    /// The function's name.
    name: &'a str,
    /// Where the name is (inside a function's body: the outermost call's).
    name_span: Span,
    /// Where the whole call is.
    span: Span,
    /// The arguments' values.
    args: &'a [Val],
}

/// Where an expression is being evaluated: at top level, or inside
/// user-function calls; for numbers and tensors alike.
#[derive(Default)]
pub(super) struct Scope<'a> {
    /// Parameters bound to argument values, innermost call only.
    params: Vec<(&'a str, Val)>,
    /// The functions being called, outermost first (to refuse recursion).
    active: Vec<String>,
    /// The span of the outermost call: errors and warnings inside bodies point here.
    call_span: Option<Span>,
    /// The graph's length when the statement began (for [`MAX_CALL_NODES`]).
    start: usize,
    /// The innermost call being evaluated (an index into `Session::calls`).
    call: Option<usize>,
    /// The graph the statement's names and numbers go into.
    arena: Arena,
}

impl Scope<'_> {
    /// The top-level scope of a statement evaluated into `arena`, the scalar
    /// graph `start` nodes long.
    pub(super) fn top(arena: Arena, start: usize) -> Scope<'static> {
        Scope {
            start,
            arena,
            ..Scope::default()
        }
    }

    /// Whether `name` is a parameter of the innermost call.
    fn is_param(&self, name: &str) -> bool {
        self.params.iter().any(|(p, _)| *p == name)
    }
}

/// The value of tree node `at`: a number's node copied, a tensor value
/// taken (each tree node has one user).
fn take(values: &mut [Val], at: u32) -> Val {
    match &values[at as usize] {
        Val::Scalar(value) => Val::Scalar(*value),
        Val::Tensor(_) => {
            std::mem::replace(&mut values[at as usize], Val::Tensor(TValue::Number(0.0)))
        }
    }
}

/// The arguments of a call on tensors as its record keeps them: a node, or
/// the text of a number or literal typed in the call.
fn tensor_args(args: &[Val]) -> Vec<Result<TensorId, String>> {
    args.iter()
        .map(|a| match a {
            Val::Tensor(TValue::Node { id, .. }) => Ok(*id),
            Val::Tensor(TValue::Number(x)) => Err(super::tensors::number_label(*x)),
            _ => Err("[…]".to_string()),
        })
        .collect()
}

/// The number's node of a value of the scalar graph; a tensor where a
/// number was expected is refused at `span` (a body that names a tensor,
/// called in a statement of numbers).
fn scalar_of(value: Val, span: Span) -> Result<Value, SessionError> {
    match value {
        Val::Scalar(value) => Ok(value),
        Val::Tensor(_) => Err(tensor_error(
            ErrorCode::Unsupported,
            span,
            "a vector or matrix where a number was expected",
            Some("name the tensor in the statement itself, e.g. `L = f(W)`".into()),
        )),
    }
}

/// The value of an expression statement or an assignment, to evaluate: its
/// tree, and for a long sum parsed a piece at a time, the rest.
pub(super) struct Rhs<'a> {
    /// The value's tree (of the first piece only, when `rest` is set).
    pub tree: &'a ExprTree,
    /// The later pieces ([`syntax::Located::rest`]) and the source they are in.
    pub rest: Option<(&'a Pieces, &'a str)>,
}

impl<'a> Rhs<'a> {
    /// A value that is all in `tree`.
    pub fn whole(tree: &'a ExprTree) -> Rhs<'a> {
        Rhs { tree, rest: None }
    }
}

impl Session {
    /// Evaluates an expression at top level, appending its nodes to the graph.
    pub(super) fn evaluate(
        &mut self,
        tree: &ExprTree,
        events: &mut Vec<Event>,
    ) -> Result<Value, SessionError> {
        let scope = Scope::top(Arena::Scalar, self.graph.len());
        let value = self.evaluate_in(tree, &scope, None, events)?;
        scalar_of(value, tree.span())
    }

    /// Evaluates a statement's value at top level: its tree, then each later
    /// piece of a long sum in turn (parsed when its turn comes, evaluated onto
    /// the value so far and dropped), so that only one piece's tree is in
    /// memory at a time. The graph gets the nodes the whole tree would give,
    /// in its order. Returns the value and the span of its whole text.
    ///
    /// A piece that does not parse gives [`SessionError::Syntax`] at the
    /// piece; [`Session::run_parsed`] then undoes the statement and parses it
    /// whole, which gives the precise error.
    pub(super) fn evaluate_value(
        &mut self,
        rhs: &Rhs<'_>,
        events: &mut Vec<Event>,
    ) -> Result<(Value, Span), SessionError> {
        // The bound on the nodes built by calls counts from the statement's start.
        let scope = Scope::top(Arena::Scalar, self.graph.len());
        let mut span = rhs.tree.span();
        let mut value = scalar_of(self.evaluate_in(rhs.tree, &scope, None, events)?, span)?;
        let Some((pieces, source)) = rhs.rest else {
            return Ok((value, span));
        };
        for index in 0..pieces.len() {
            let piece = pieces.parse(source, index, span).ok_or_else(|| {
                SessionError::Syntax(syntax::SyntaxError::Unexpected {
                    span: Span::new(span.end, span.end),
                    expected: "an expression after the `+` or `-`".into(),
                    found: "text that does not parse".into(),
                    help: None,
                })
            })?;
            span = piece.span();
            let next = self.evaluate_in(&piece, &scope, Some(Val::Scalar(value)), events)?;
            value = scalar_of(next, span)?;
        }
        Ok((value, span))
    }

    /// Evaluates `tree` node by node (operands come first in the flat tree: no
    /// recursion), numbers and tensors alike: the one walk of expressions.
    /// With a `seed`, node 0 is not evaluated but stands for that value (a
    /// later piece of a long sum, see [`Pieces::parse`]).
    pub(super) fn evaluate_in(
        &mut self,
        tree: &ExprTree,
        scope: &Scope,
        seed: Option<Val>,
        events: &mut Vec<Event>,
    ) -> Result<Val, SessionError> {
        let mut values: Vec<Val> = Vec::with_capacity(tree.nodes.len());
        let mut nodes = tree.nodes.iter().enumerate();
        if let Some(seed) = seed {
            nodes.next();
            values.push(seed);
        }
        for (k, expr) in nodes {
            let span = scope.call_span.unwrap_or(expr.span());
            let value = match &expr.kind {
                ExprKind::Number(x) => self.number(*x, scope.arena),
                // `sum(X, 1, keepdims)`: a word, read by the call.
                ExprKind::Name(name)
                    if scope.arena == Arena::Tensor
                        && name.as_str() == KEEPDIMS
                        && !scope.is_param(name)
                        && keeps_dims(tree, k) =>
                {
                    Val::Tensor(TValue::Number(1.0))
                }
                ExprKind::Name(name) => self.resolve(name, span, scope)?,
                ExprKind::Unary { op, operand } => {
                    let a = take(&mut values, operand.0);
                    match (op, &tree.nodes[operand.0 as usize].kind, a) {
                        (UnaryOp::Plus, _, a) => a,
                        // `-1` (also `x^-1`, `x⁻¹`, `s*-1.0`) is the constant −1, not
                        // a negation node: a trace leaves constants out, and a
                        // negated literal is one.
                        (UnaryOp::Neg, ExprKind::Number(x), Val::Scalar(a)) => {
                            if self.graph.len() == a.node.index() + 1 {
                                self.graph.truncate(a.node.index());
                            }
                            self.number(-x, Arena::Scalar)
                        }
                        (UnaryOp::Neg, _, a) => self.apply(Op::Neg, vec![a], span, events)?,
                    }
                }
                ExprKind::Binary { op, lhs, rhs } => {
                    let a = take(&mut values, lhs.0);
                    let b = take(&mut values, rhs.0);
                    self.apply(op_of(*op), vec![a, b], span, events)?
                }
                ExprKind::Call(call) => {
                    let args: Vec<Val> = call.args.iter().map(|a| take(&mut values, a.0)).collect();
                    let name_span = scope.call_span.unwrap_or(call.name_span);
                    let site = CallSite {
                        name: &call.name,
                        name_span,
                        span,
                        args: &[],
                    };
                    match scope.arena {
                        Arena::Tensor => {
                            self.call_in_tensors(site, args, call, tree, scope, events)?
                        }
                        Arena::Scalar if call.derivative > 0 => {
                            let site = CallSite {
                                args: &args,
                                ..site
                            };
                            self.derivative_at(site, call.derivative, scope, events)?
                        }
                        Arena::Scalar => self.call(
                            CallSite {
                                args: &args,
                                ..site
                            },
                            scope,
                            events,
                        )?,
                    }
                }
            };
            values.push(value);
        }
        Ok(values
            .pop()
            .unwrap_or(Val::Tensor(TValue::Number(f64::NAN))))
    }

    /// A number typed in the expression: a constant node of the scalar
    /// graph, or in a tensor statement a number folded until an op needs it.
    fn number(&mut self, x: f64, arena: Arena) -> Val {
        match arena {
            Arena::Scalar => Val::Scalar(Value {
                node: self.graph.constant(x),
                uses_variable: false,
            }),
            Arena::Tensor => Val::Tensor(TValue::Number(x)),
        }
    }

    /// `op(inputs)` in the graph its operands decide: the scalar graph when
    /// all are numbers' nodes, else the tensor graph elementwise (numbers
    /// bridged as nodes of shape `()`), warning when finite inputs give inf
    /// or nan.
    fn apply(
        &mut self,
        op: Op,
        inputs: Vec<Val>,
        span: Span,
        events: &mut Vec<Event>,
    ) -> Result<Val, SessionError> {
        if inputs.iter().all(|v| matches!(v, Val::Scalar(_))) {
            let inputs: Vec<Value> = inputs
                .into_iter()
                .filter_map(|v| match v {
                    Val::Scalar(v) => Some(v),
                    Val::Tensor(_) => None,
                })
                .collect();
            return self
                .apply_scalar(op, &inputs, span, events)
                .map(Val::Scalar);
        }
        let inputs = inputs.into_iter().map(|v| self.bridged(v)).collect();
        self.elementwise(op, inputs, span).map(Val::Tensor)
    }

    /// A value as a value of a tensor statement: a number's node bridged as
    /// a node of shape `()` of the tensor graph (its gradient goes back to
    /// the scalar graph).
    pub(super) fn bridged(&mut self, value: Val) -> TValue {
        match value {
            Val::Tensor(value) => value,
            Val::Scalar(Value {
                node,
                uses_variable,
            }) => TValue::Node {
                id: self.tensors.graph.scalar(node, self.graph.value(node)),
                uses_variable,
            },
        }
    }

    /// Appends `op(inputs)` to the scalar graph, warning when finite inputs
    /// give inf or nan.
    fn apply_scalar(
        &mut self,
        op: Op,
        inputs: &[Value],
        span: Span,
        events: &mut Vec<Event>,
    ) -> Result<Value, SessionError> {
        if self.poll.tick() {
            self.check_interrupt()?;
        }
        let ids: Vec<NodeId> = inputs.iter().map(|v| v.node).collect();
        let node = self
            .graph
            .apply(op, &ids)
            .map_err(|e| op_arity_error(&e, span))?;
        let value = self.graph.value(node);
        let inputs_finite = ids.iter().all(|&i| self.graph.value(i).is_finite());
        if !value.is_finite() && inputs_finite {
            events.push(Event::Warning {
                message: non_finite_message(
                    op,
                    value,
                    &ids.iter().map(|&i| self.graph.value(i)).collect::<Vec<_>>(),
                ),
                span,
            });
        }
        Ok(Value {
            node,
            uses_variable: inputs.iter().any(|v| v.uses_variable),
        })
    }

    /// What a name means here: a parameter, `ans`, a variable, a node's
    /// label, or a constant; in a tensor statement a number's node is
    /// bridged ([`Session::bridged`]) and a constant folded.
    fn resolve(&mut self, name: &str, span: Span, scope: &Scope) -> Result<Val, SessionError> {
        if let Some((_, value)) = scope.params.iter().find(|(p, _)| *p == name) {
            return Ok(value.clone());
        }
        let tensors = scope.arena == Arena::Tensor;
        let result = RESULT_NAMES.contains(&name);
        let bound = if result {
            self.last
        } else {
            self.vars.get(name).copied()
        };
        let scalar = |node| {
            Val::Scalar(Value {
                node,
                uses_variable: true,
            })
        };
        match bound {
            Some(Node::Scalar(node)) if tensors => {
                return Ok(Val::Tensor(self.bridged(scalar(node))));
            }
            Some(Node::Scalar(node)) => return Ok(scalar(node)),
            Some(Node::Tensor(id)) if tensors => {
                return Ok(Val::Tensor(TValue::Node {
                    id,
                    uses_variable: true,
                }));
            }
            // A tensor in a statement of numbers (named by a function's body).
            Some(Node::Tensor(_)) | None => {}
        }
        if result {
            return Err(SessionError::UnknownName {
                name: name.to_string(),
                span,
                suggestion: None,
                hint: None,
            });
        }
        if let Some(node) = self.labelled_node(name, span)? {
            let value = Val::Scalar(Value {
                node,
                uses_variable: self.graph.op(node) != Op::Const,
            });
            return Ok(match tensors {
                true => Val::Tensor(self.bridged(value)),
                false => value,
            });
        }
        if let Some(&(_, value)) = CONSTANTS.iter().find(|(c, _)| *c == name) {
            return Ok(self.number(value, scope.arena));
        }
        if self.functions.contains_key(name) || Op::from_function_name(name).is_some() {
            return Err(SessionError::FunctionAsValue {
                name: name.to_string(),
                span,
                call: None,
            });
        }
        let candidates = scope
            .params
            .iter()
            .map(|(p, _)| *p)
            .chain(self.vars.keys().map(String::as_str))
            .chain(CONSTANTS.iter().map(|(c, _)| *c));
        let defined = |piece: &str| {
            scope.is_param(piece)
                || self.vars.contains_key(piece)
                || CONSTANTS.iter().any(|(c, _)| *c == piece)
        };
        Err(SessionError::UnknownName {
            name: name.to_string(),
            span,
            hint: super::hints::unknown_name_hint(name, defined),
            suggestion: nearest(name, candidates),
        })
    }

    /// A call in a tensor statement: a user function (as for numbers,
    /// [`Session::instantiate`]), else a built-in of the function table or
    /// of the syntax ([`Session::tensor_builtin`]).
    ///
    /// Errors: `f'(a)` of tensors, an unknown function, and those of the call.
    fn call_in_tensors(
        &mut self,
        site: CallSite,
        args: Vec<Val>,
        call: &syntax::Call,
        tree: &ExprTree,
        scope: &Scope,
        events: &mut Vec<Event>,
    ) -> Result<Val, SessionError> {
        if call.derivative > 0 {
            return Err(tensor_error(
                ErrorCode::Unsupported,
                site.span,
                format!(
                    "`{}{}` of a tensor expression is not supported",
                    site.name,
                    "'".repeat(call.derivative.into())
                ),
                Some(
                    "ask for ∂L/∂W with `grad(L, W)` or `:grad W` after `L = …` (shown with W's shape), or `:trace` for every step".into(),
                ),
            ));
        }
        let args: Vec<TValue> = args.into_iter().map(|a| self.bridged(a)).collect();
        if let Some(function) = self.functions.get(site.name).cloned()
            && !scope.is_param(site.name)
        {
            let args: Vec<Val> = args.into_iter().map(Val::Tensor).collect();
            return self.instantiate(site, args, &function, scope, events);
        }
        match self.tensor_builtin(call, args, tree, site.span)? {
            Some(value) => Ok(Val::Tensor(value)),
            None => Err(self.not_a_function(site, scope)),
        }
    }

    /// `name(args)` (`site`) of numbers: a user function, or a function of
    /// the function table that takes numbers (`tensors::builtin`).
    ///
    /// Errors: an unknown function, a value called, a function of tensors,
    /// the wrong count of arguments, and those of evaluating the call.
    fn call(
        &mut self,
        site: CallSite,
        scope: &Scope,
        events: &mut Vec<Event>,
    ) -> Result<Val, SessionError> {
        let CallSite {
            name, span, args, ..
        } = site;
        if let Some(function) = self.functions.get(name).cloned()
            && !scope.is_param(name)
        {
            return self.instantiate(site, site.args.to_vec(), &function, scope, events);
        }
        // A parameter named `grad` is a value, not the function.
        let row = builtin(name)
            .filter(|row| !(matches!(row.builds, Builds::Grad) && scope.is_param(name)));
        let Some(row) = row else {
            return Err(self.not_a_function(site, scope));
        };
        let args = args
            .iter()
            .map(|a| scalar_of(a.clone(), span))
            .collect::<Result<Vec<Value>, _>>()?;
        let op = match row.builds {
            Builds::Grad => {
                let names = self.names_by_node();
                let label = |id: NodeId| {
                    names
                        .get(&id)
                        .map_or_else(|| super::node_label(id), |n| n.to_string())
                };
                let label = match &args[..] {
                    [y, x] => format!("grad({}, {})", label(y.node), label(x.node)),
                    _ => "grad".to_string(),
                };
                return self.grad_value(&args, span, label).map(Val::Scalar);
            }
            Builds::Log if args.len() != 1 => {
                return self.log_base(&args, span, events).map(Val::Scalar);
            }
            Builds::Log => Op::Ln,
            Builds::Elementwise(op) | Builds::Extremum { op, .. } => op,
            // A function that builds a tensor op or makes a tensor.
            Builds::Tensor(_)
            | Builds::Reduction { .. }
            | Builds::LastAxis(_)
            | Builds::OneHot
            | Builds::Made(_) => {
                return Err(tensor_error(
                    ErrorCode::Unsupported,
                    span,
                    format!(
                        "`{name}` works on vectors and matrices, and this statement has numbers only"
                    ),
                    Some(format!("give it a vector or a matrix (`:help {name}`)")),
                ));
            }
        };
        if !row.accepts(args.len()) {
            return Err(SessionError::wrong_arity(
                name,
                span,
                row.expected(),
                args.len(),
            ));
        }
        self.apply_scalar(op, &args, span, events).map(Val::Scalar)
    }

    /// The error of a call of `site`'s name, which names no function here:
    /// a value called, or an unknown function with the nearest name of a
    /// user function or the function table.
    fn not_a_function(&self, site: CallSite, scope: &Scope) -> SessionError {
        let name = site.name;
        let is_value = scope.is_param(name)
            || self.vars.contains_key(name)
            || CONSTANTS.iter().any(|(c, _)| *c == name)
            || RESULT_NAMES.contains(&name);
        if is_value {
            return SessionError::NotAFunction {
                name: name.to_string(),
                span: site.name_span,
            };
        }
        let candidates = self
            .function_order
            .iter()
            .map(String::as_str)
            .chain(builtin_names().map(|name| -> &str { name }));
        SessionError::UnknownFunction {
            name: name.to_string(),
            span: site.name_span,
            suggestion: nearest(name, candidates),
            hint: super::hints::unknown_function_hint(name),
        }
    }

    /// `log(x, b)`, the logarithm of x in base b, built as `ln(x)/ln(b)` from
    /// the op table's `ln` and `/`: the chain rule then gives both arguments
    /// their gradients (∂/∂x = 1/(x·ln b), ∂/∂b = −ln x/(b·ln² b)). Any other
    /// count of arguments than 2 is [`SessionError::WrongArity`] ("1 or 2").
    fn log_base(
        &mut self,
        args: &[Value],
        span: Span,
        events: &mut Vec<Event>,
    ) -> Result<Value, SessionError> {
        let [x, b] = args else {
            return Err(SessionError::wrong_arity("log", span, "1 or 2", args.len()));
        };
        let ln_x = self.apply_scalar(Op::Ln, &[*x], span, events)?;
        let ln_b = self.apply_scalar(Op::Ln, &[*b], span, events)?;
        self.apply_scalar(Op::Div, &[ln_x, ln_b], span, events)
    }

    /// Builds a user function's body with its parameters bound to the
    /// arguments of `site`, numbers and tensors alike: a call of numbers is
    /// recorded in [`Session::calls`] (one step of `:trace`).
    ///
    /// Errors: the wrong count of arguments, recursion, calls too deep or too
    /// large, and those of evaluating the body.
    fn instantiate(
        &mut self,
        site: CallSite,
        args: Vec<Val>,
        function: &UserFunction,
        scope: &Scope,
        events: &mut Vec<Event>,
    ) -> Result<Val, SessionError> {
        let (name, span) = (site.name, site.span);
        let active = check_call(
            name,
            (site.name_span, span),
            function,
            args.len(),
            &scope.active,
        )?;
        if self.poll.tick() {
            self.check_interrupt()?;
        }
        let limit = self.call_node_limit.unwrap_or(MAX_CALL_NODES);
        if self.graph.len().saturating_sub(scope.start) > limit {
            return Err(SessionError::CallsTooLarge {
                span: scope.call_span.unwrap_or(span),
                limit,
                doubling: self.doubling_call(scope.active.iter().chain([&name.to_string()])),
            });
        }
        // The live preview (which sets a node limit) throws its nodes away:
        // it records no call.
        let scalar_args: Option<Vec<NodeId>> = args
            .iter()
            .map(|a| match a {
                Val::Scalar(a) => Some(a.node),
                Val::Tensor(_) => None,
            })
            .collect();
        let call = match scalar_args {
            Some(nodes) if self.call_node_limit.is_none() && scope.arena == Arena::Scalar => {
                let least = self.tensors.calls.next_number(name);
                Some(
                    self.calls
                        .begin(name, nodes, scope.call, self.graph.len(), least),
                )
            }
            _ => None,
        };
        // A call on tensors: the run of tensor nodes its body builds.
        let tensor_call = (scope.arena == Arena::Tensor && self.call_node_limit.is_none())
            .then(|| (self.tensors.graph.len(), tensor_args(&args)));
        let inner = Scope {
            params: function
                .params
                .iter()
                .map(String::as_str)
                .zip(args)
                .collect(),
            active,
            call_span: Some(scope.call_span.unwrap_or(span)),
            start: scope.start,
            call: call.or(scope.call),
            arena: scope.arena,
        };
        let value = self
            .evaluate_in(&function.body, &inner, None, events)
            .map_err(in_function(name))?;
        if let (Some(call), Val::Scalar(output)) = (call, &value) {
            self.calls.finish(call, output.node, &self.graph);
        }
        if let Some((first, args)) = tensor_call {
            self.record_tensor_call(name, args, first, &value);
        }
        Ok(value)
    }

    /// Records a call of `name` on tensors whose body built the tensor nodes
    /// from `first` on and gave `value` ([`super::tensors::TensorCalls`]),
    /// numbered after every earlier call of `name`, of numbers or tensors.
    fn record_tensor_call(
        &mut self,
        name: &str,
        args: Vec<Result<TensorId, String>>,
        first: usize,
        value: &Val,
    ) {
        let output = match value {
            Val::Tensor(TValue::Node { id, .. }) => Some(*id),
            _ => None,
        };
        let scalar = self
            .calls
            .list()
            .iter()
            .filter(|c| c.function == name)
            .map(|c| c.number + 1)
            .max()
            .unwrap_or(1);
        let number = self.tensors.calls.next_number(name).max(scalar);
        self.tensors
            .calls
            .record(name, number, args, first, output, &self.tensors.graph);
    }

    /// The first function of `chain` (outermost first) whose body calls one
    /// user function more than once (see [`RepeatedCall`]).
    fn doubling_call<'a>(&self, chain: impl Iterator<Item = &'a String>) -> Option<RepeatedCall> {
        chain.into_iter().find_map(|outer| {
            let body = &self.functions.get(outer)?.body;
            // Each call to a user function: its name and, when every argument
            // is a plain name, those names.
            let mut calls: Vec<(&str, Option<Vec<&str>>)> =
                body.nodes
                    .iter()
                    .filter_map(|node| match &node.kind {
                        ExprKind::Call(call) if self.functions.contains_key(call.name.as_str()) => {
                            let names = call.args.iter().map(|arg| {
                                match &body.nodes[arg.0 as usize].kind {
                                    ExprKind::Name(name) => Some(name.as_str()),
                                    _ => None,
                                }
                            });
                            Some((call.name.as_str(), names.collect::<Option<Vec<_>>>()))
                        }
                        _ => None,
                    })
                    .collect();
            calls.sort_unstable();
            let repeated = |same: bool| {
                calls.windows(2).find(|pair| {
                    pair[0].0 == pair[1].0
                        && (!same || (pair[0].1.is_some() && pair[0].1 == pair[1].1))
                })
            };
            let (same, pair) = match repeated(true) {
                Some(pair) => (true, pair),
                None => (false, repeated(false)?),
            };
            Some(RepeatedCall {
                outer: outer.clone(),
                inner: pair[0].0.to_string(),
                same_args: same.then(|| pair[0].1.as_deref().unwrap_or_default().join(", ")),
            })
        })
    }

    /// `name'(arg)`, `name''(arg)`, …: the derivative of order `order` of a
    /// one-argument function at `arg`, built as nodes (`derivatives.rs`): the
    /// function is applied to `t = arg + 0`, a node standing for its argument,
    /// and ∂/∂t is taken `order` times. The result is differentiable again,
    /// and through `t` it depends on `arg` (so `:grad` after `f'(x)` gives
    /// `f''(x)`).
    ///
    /// Errors: a function of other than one argument, other than one argument
    /// given, and those of the call and of building the derivative.
    fn derivative_at(
        &mut self,
        site: CallSite,
        order: u8,
        scope: &Scope,
        events: &mut Vec<Event>,
    ) -> Result<Val, SessionError> {
        let (name, span) = (site.name, site.span);
        let params = if let Some(function) = self.functions.get(name) {
            function.params.len()
        } else if let Some(op) = Op::from_function_name(name) {
            match op.info().arity {
                Arity::Unary => 1,
                _ => 2,
            }
        } else {
            return self.call(site, scope, events);
        };
        let primes = "'".repeat(usize::from(order));
        if params != 1 {
            return Err(SessionError::DerivativeArity {
                name: name.to_string(),
                span: site.name_span,
                params: format!("{params} arguments"),
            });
        }
        if site.args.len() != 1 {
            return Err(SessionError::wrong_arity(
                format!("{name}{primes}"),
                span,
                1,
                site.args.len(),
            ));
        }
        let arg = scalar_of(site.args[0].clone(), span)?;
        let start = self.graph.len();
        let zero = self.graph.constant(0.0);
        let t = Value {
            node: self
                .graph
                .apply(Op::Add, &[arg.node, zero])
                .map_err(|e| op_arity_error(&e, span))?,
            uses_variable: true,
        };
        let args = [Val::Scalar(t)];
        let result = self.call(
            CallSite {
                args: &args,
                ..site
            },
            scope,
            events,
        )?;
        let mut result = scalar_of(result, span)?;
        let limit = self.call_node_limit.unwrap_or(MAX_CALL_NODES);
        if let Some(node) = self.copy_derivative(name, order, start, scope) {
            let constant = self.graph.op(node) == Op::Const;
            return Ok(Val::Scalar(Value {
                node,
                uses_variable: arg.uses_variable && !constant,
            }));
        }
        let (body_end, groups_before) = (self.graph.len(), self.derivative_groups.len());
        for k in 1..=order {
            if self.graph.len().saturating_sub(scope.start) > limit {
                return Err(SessionError::CallsTooLarge {
                    span: scope.call_span.unwrap_or(span),
                    limit,
                    doubling: self.doubling_call(scope.active.iter().chain([&name.to_string()])),
                });
            }
            let label = format!("{name}{}(…)", "'".repeat(usize::from(k)));
            result.node = self.derivative_node(result.node, t.node, label, span)?;
        }
        if scope.params.iter().all(|(p, _)| *p != name) {
            let key = (name.to_string(), order);
            let groups = &self.derivative_groups[groups_before..];
            let range = (start, body_end);
            self.derivative_cache
                .remember(key, &self.graph, range, result.node, groups);
        }
        let constant = self.graph.op(result.node) == Op::Const;
        Ok(Val::Scalar(Value {
            node: result.node,
            uses_variable: arg.uses_variable && !constant,
        }))
    }

    /// The derivative graphs of `name` at `order` over the call whose nodes
    /// start at `start` (its `t` and body just built), copied from the ones
    /// its first call built ([`derivative_cache`](super::derivative_cache));
    /// `None` (nothing appended) where no copy serves: then they are built afresh.
    fn copy_derivative(
        &mut self,
        name: &str,
        order: u8,
        start: usize,
        scope: &Scope,
    ) -> Option<NodeId> {
        if scope.params.iter().any(|(p, _)| *p == name) {
            return None;
        }
        let used = self.graph.len().saturating_sub(scope.start);
        let room = MAX_CALL_NODES.saturating_sub(used);
        let key = (name.to_string(), order);
        let poll = &mut self.poll;
        let (node, groups) =
            self.derivative_cache
                .replay(&key, &mut self.graph, start, room, || poll.tick())?;
        self.derivative_groups.extend(groups);
        Some(node)
    }

    /// `name = value` and the compound forms `+= -= *= /=` (and `:=`, see
    /// `update.rs`). Returns the span of the value's whole text.
    pub(super) fn assign(
        &mut self,
        target: &Ident,
        op: AssignOp,
        rhs: &Rhs<'_>,
        events: &mut Vec<Event>,
    ) -> Result<Span, SessionError> {
        if op == AssignOp::Update {
            self.update(target, rhs.tree, events)?;
            return Ok(rhs.tree.span());
        }
        let name = target.name.as_str();
        self.check_assignable(target)?;
        let mark = self.graph.len();
        let (mut value, span) = self.evaluate_value(rhs, events)?;
        self.check_interrupt()?;
        let compound = match op {
            AssignOp::Set | AssignOp::Update => None,
            AssignOp::Add => Some(Op::Add),
            AssignOp::Sub => Some(Op::Sub),
            AssignOp::Mul => Some(Op::Mul),
            AssignOp::Div => Some(Op::Div),
        };
        if let Some(op) = compound {
            // `c += v` is `c = c + v`, with `c` whatever it names now (a constant too).
            let current = self.resolve(name, target.span, &Scope::default())?;
            let current = scalar_of(current, target.span)?;
            value = self.apply_scalar(op, &[current, value], target.span.to(span), events)?;
        }
        let leaf = !value.uses_variable;
        let node = if leaf {
            // A new leaf; the nodes that computed its value are of no further use.
            let number = self.graph.value(value.node);
            self.graph.truncate(mark);
            self.calls.truncate(mark);
            let leaf = NodeId(mark as u32);
            self.keep_groups_as_leaf(mark, leaf);
            let made = self.graph.leaf(number);
            debug_assert_eq!(made, leaf);
            made
        } else {
            value.node
        };
        if !self.vars.contains_key(name)
            && let Some((_, constant)) = CONSTANTS.iter().find(|(c, _)| *c == name)
        {
            events.push(Event::Notice(Notice::ConstantRebound {
                name: name.to_string(),
                value: *constant,
            }));
        }
        self.bind(name, Node::Scalar(node));
        if !leaf {
            self.output = Some(Output {
                node: Node::Scalar(node),
                label: name.to_string(),
            });
        }
        self.last = Some(Node::Scalar(node));
        events.push(Event::Value {
            name: Some(name.to_string()),
            value: Number(self.graph.value(node)).into(),
        });
        Ok(span)
    }

    /// Binds `name` to `node` (of either graph), remembering the earlier
    /// binding and journalling the change for the running statement's undo.
    /// Allocates the name only the first time it is bound (and the first time
    /// it is rebound).
    pub(super) fn bind(&mut self, name: &str, node: Node) {
        let Some(slot) = self.vars.get_mut(name) else {
            self.vars.insert(name.to_string(), node);
            return;
        };
        let old = std::mem::replace(slot, node);
        if old == node {
            return;
        }
        self.journal_rebinding(name, old);
        match self.earlier.get_mut(name) {
            Some(earlier) => earlier.push(old),
            None => {
                self.earlier.insert(name.to_string(), vec![old]);
            }
        }
    }

    /// The node a label `_N` names (see [`super::node_label`]): `Ok(None)` when
    /// `name` is not a label, an error when no node has that id.
    pub(super) fn labelled_node(
        &self,
        name: &str,
        span: Span,
    ) -> Result<Option<NodeId>, SessionError> {
        if name.contains('.') {
            return match self.calls.find(name) {
                Some(id) => Ok(Some(id)),
                // numpy's `W.T`: the help (`super::hints::numpy_transpose`)
                // says to write `Wᵀ`.
                None if name.ends_with(".T") => Err(SessionError::UnknownName {
                    name: name.to_string(),
                    span,
                    suggestion: None,
                    hint: None,
                }),
                None => Err(SessionError::BadArguments {
                    message: format!("no node `{name}`: no call of a function built a node of that label"),
                    span,
                    help: Some(
                        "`:topo` lists the nodes of the output with their labels (a call's nodes are `CALL.OP`, e.g. `h1.relu`)"
                            .to_string(),
                    ),
                }),
            };
        }
        let Some(id) = super::label_id(name) else {
            return Ok(None);
        };
        if (id.0 as usize) < self.graph.len() {
            return Ok(Some(id));
        }
        Err(SessionError::BadArguments {
            message: format!(
                "no node `{name}`: the graph has {} node{} (`_0` to `_{}`)",
                self.graph.len(),
                if self.graph.len() == 1 { "" } else { "s" },
                self.graph.len().saturating_sub(1)
            ),
            span,
            help: Some("`:topo` lists the nodes of the output with their labels".to_string()),
        })
    }

    /// Refuses names that cannot be variables: built-in functions, `ans`, user functions.
    pub(super) fn check_assignable(&self, target: &Ident) -> Result<(), SessionError> {
        let name = target.name.as_str();
        let reason = if Op::from_function_name(name).is_some() {
            Some(("it is a built-in function", None))
        } else if RESULT_NAMES.contains(&name) {
            Some(("it always names the most recent result", None))
        } else if name.contains('.') {
            Some((
                "names with a `.` are labels of nodes built inside function calls",
                Some(format!(
                    "choose another name, e.g. `{}`",
                    name.replace('.', "_")
                )),
            ))
        } else if let Some(id) = super::label_id(name) {
            Some((
                "names of the form `_N` are node labels",
                Some(format!(
                    "choose another name, e.g. `n{}` for `{name}`",
                    id.0
                )),
            ))
        } else if self.functions.contains_key(name) {
            Some((
                "it is a function you defined",
                Some("choose another name, or `:reset` to start over".to_string()),
            ))
        } else {
            None
        };
        match reason {
            Some((reason, help)) => Err(SessionError::Reserved {
                name: name.to_string(),
                span: target.span,
                action: "assign to",
                reason: reason.to_string(),
                help: help.or_else(|| Some(format!("choose another name, e.g. `{name}1`"))),
            }),
            None => Ok(()),
        }
    }

    /// `f(x, y) = body`: defines or redefines a user function.
    pub(super) fn define(
        &mut self,
        name: &Ident,
        params: &[Ident],
        body: ExprTree,
        text: String,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let reason = if Op::from_function_name(&name.name).is_some() {
            Some("it is a built-in function")
        } else if RESULT_NAMES.contains(&name.name.as_str()) {
            Some("it always names the most recent result")
        } else if self.vars.contains_key(&name.name) || self.is_tensor(&name.name) {
            // A name is a value or a function, never both (a vector or a
            // matrix as much as a number).
            Some("it is a variable")
        } else if super::label_id(&name.name).is_some() {
            Some("names of the form `_N` are node labels")
        } else if name.name.contains('.') {
            Some("names with a `.` are labels of nodes built inside function calls")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(SessionError::Reserved {
                name: name.name.clone(),
                span: name.span,
                action: "define a function named",
                reason: reason.to_string(),
                help: Some(format!("choose another name, e.g. `{}_f`", name.name)),
            });
        }
        for (i, param) in params.iter().enumerate() {
            if super::label_id(&param.name).is_some() || param.name.contains('.') {
                return Err(SessionError::Reserved {
                    name: param.name.clone(),
                    span: param.span,
                    action: "name a parameter",
                    reason: "names of the form `_N` or with a `.` are node labels".to_string(),
                    help: Some("choose another name".to_string()),
                });
            }
            if params[..i].iter().any(|p| p.name == param.name) {
                return Err(SessionError::DuplicateParameter {
                    name: param.name.clone(),
                    span: param.span,
                });
            }
        }
        let params: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
        // A template may have called the function redefined.
        self.derivative_cache.clear();
        if self
            .functions
            .insert(
                name.name.clone(),
                UserFunction {
                    params: params.clone(),
                    body,
                    text,
                },
            )
            .is_none()
        {
            self.function_order.push(name.name.clone());
        }
        events.push(Event::Defined {
            name: name.name.clone(),
            params,
        });
        Ok(())
    }
}

/// Whether `name` (`function`) may be called here with `count` arguments,
/// inside the calls `active` (outermost first); `spans` are the name's and
/// the call's. For numbers and tensors alike: the calls active inside its
/// body (`active`, then `name`).
///
/// Errors: the wrong count of arguments, recursion, calls nested past
/// [`MAX_CALL_DEPTH`].
pub(super) fn check_call(
    name: &str,
    (name_span, span): (Span, Span),
    function: &UserFunction,
    count: usize,
    active: &[String],
) -> Result<Vec<String>, SessionError> {
    if count != function.params.len() {
        return Err(SessionError::wrong_arity(
            name,
            span,
            function.params.len(),
            count,
        ));
    }
    if active.iter().any(|a| a == name) {
        return Err(SessionError::Recursion {
            name: name.to_string(),
            span: name_span,
        });
    }
    if active.len() >= MAX_CALL_DEPTH {
        return Err(SessionError::CallsTooDeep {
            span,
            limit: MAX_CALL_DEPTH,
        });
    }
    let mut inside = active.to_vec();
    inside.push(name.to_string());
    Ok(inside)
}

/// An error of the body of the user function `name`, said inside its call
/// ("in `f`: …"). For numbers and tensors alike.
pub(super) fn in_function(name: &str) -> impl Fn(SessionError) -> SessionError + '_ {
    move |inner| SessionError::InFunction {
        function: name.to_string(),
        inner: Box::new(inner),
    }
}

/// The graph's refusal of an op given the wrong count of inputs, as the
/// session's [`SessionError::WrongArity`] at `span`.
fn op_arity_error(error: &ArityError, span: Span) -> SessionError {
    SessionError::wrong_arity(error.op.to_string(), span, error.expected, error.got)
}

/// The warning for an op that made inf or nan out of finite inputs.
pub(super) fn non_finite_message(op: Op, value: f64, inputs: &[f64]) -> String {
    let result = if value.is_nan() {
        "nan"
    } else if value > 0.0 {
        "inf"
    } else {
        "-inf"
    };
    let x = inputs.first().copied().unwrap_or(0.0);
    let info = op.info();
    let outside = |interval: &str| {
        format!(
            "`{}` of a number outside {interval} gives {result}",
            info.name
        )
    };
    match info.domain {
        Domain::NonzeroDivisor if inputs.get(1) == Some(&0.0) => {
            format!("division by zero gives {result}")
        }
        Domain::Positive if x == 0.0 => format!("logarithm of 0 gives {result}"),
        Domain::Positive if x < 0.0 => format!("logarithm of a negative number gives {result}"),
        Domain::NonNegative if x < 0.0 => {
            format!("square root of a negative number gives {result}")
        }
        Domain::RealPowers if value.is_nan() => {
            format!("a negative number to a fractional power gives {result}")
        }
        Domain::MinusOneToOne if x.abs() > 1.0 => outside("[-1, 1]"),
        Domain::OneAndAbove if x < 1.0 => outside("[1, inf)"),
        Domain::BetweenMinusOneAndOne if x.abs() >= 1.0 => outside("(-1, 1)"),
        // Inside the domain: an overflow (`exp(1000)`, `1e308*10`).
        Domain::Reals
        | Domain::NonzeroDivisor
        | Domain::Positive
        | Domain::NonNegative
        | Domain::RealPowers
        | Domain::MinusOneToOne
        | Domain::OneAndAbove
        | Domain::BetweenMinusOneAndOne => format!("`{}` gives {result} here", info.name),
    }
}

/// The names of the built-in functions users can call, from the op table.
pub(super) fn builtin_function_names() -> impl Iterator<Item = &'static str> {
    Op::function_names()
}

/// The node op an infix operator of the language builds (the inverse of
/// [`super::formula::apply`]'s reading of an op row's symbol).
pub(super) fn op_of(op: BinaryOp) -> Op {
    match op {
        BinaryOp::Add => Op::Add,
        BinaryOp::Sub => Op::Sub,
        BinaryOp::Mul => Op::Mul,
        BinaryOp::Div => Op::Div,
        BinaryOp::Pow => Op::Pow,
    }
}

impl Session {
    /// An expression statement that touches a tensor: its value is the
    /// output (what `:grad` differentiates) and `ans`.
    pub(super) fn expression_of_tensors(
        &mut self,
        tree: &ExprTree,
        label: String,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let (id, _) = self.evaluate_tensor(tree, events)?;
        self.check_interrupt()?;
        self.output = Some(Output {
            node: Node::Tensor(id),
            label,
        });
        self.last = Some(Node::Tensor(id));
        events.push(Event::Value {
            name: None,
            value: super::Value::Tensor(tensor_data(self.tensors.graph.value(id))),
        });
        Ok(())
    }

    /// `NAME = VALUE` where the value is a tensor (a leaf when no variable
    /// went into it, as for scalars), `NAME := VALUE` on a tensor leaf.
    pub(super) fn assign_of_tensors(
        &mut self,
        target: &Ident,
        op: AssignOp,
        tree: &ExprTree,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let name = target.name.as_str();
        match op {
            AssignOp::Set => {}
            AssignOp::Update => {
                return self.update_tensors(
                    std::slice::from_ref(target),
                    std::slice::from_ref(tree),
                    events,
                );
            }
            _ => {
                return Err(tensor_error(
                    ErrorCode::Unsupported,
                    target.span,
                    format!("`{name} {op}` is not supported for tensors", op = op.text()),
                    Some(format!(
                        "write `{name} = {name} {} …` (a new binding) or `{name} := …` (the leaf moved)",
                        &op.text()[..1]
                    )),
                ));
            }
        }
        self.check_assignable(target)?;
        let mark = self.tensors.graph.len();
        let (mut id, uses_variable) = self.evaluate_tensor(tree, events)?;
        self.check_interrupt()?;
        if !uses_variable {
            // A new leaf; the nodes that computed its value are of no further use.
            let value = self.tensors.graph.value(id).clone();
            self.tensors.truncate(mark);
            id = self
                .tensors
                .graph
                .leaf(value)
                .map_err(|e| from_engine(e.into(), tree.span()))?;
        } else {
            self.output = Some(Output {
                node: Node::Tensor(id),
                label: name.to_string(),
            });
        }
        self.bind(name, Node::Tensor(id));
        self.last = Some(Node::Tensor(id));
        events.push(Event::Value {
            name: Some(name.to_string()),
            value: super::Value::Tensor(tensor_data(self.tensors.graph.value(id))),
        });
        Ok(())
    }
}
