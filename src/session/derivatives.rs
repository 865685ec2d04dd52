//! Derivatives as values: `grad(y, x)` and `f''(a)` build the backward pass as
//! graph nodes (the engine's `Graph::grad`, each local derivative built from
//! the op row's typed rule), within a node budget and under Ctrl-C.
//! `:hessian` reads such graphs: the second derivatives of the output by
//! reverse mode over its first-derivative nodes. `:diff`, which writes ∂y/∂x
//! back as an expression, is `diff.rs`; the events of the derivative and loop
//! commands (`CalculusEvent`) are here.
//!
//! A derivative graph is evaluated again by `:=`, and the rules of smooth ops
//! are one expression for every point, so it follows the leaf. Only the rules
//! at kinks and masks are chosen at the point it was built at (`relu'` is 1 or
//! nothing, a `min`/`max` winner, the masks of `^`): after a leaf moves across
//! a kink with `:=`, an old `g = grad(y, x)` still follows the old branch, as
//! PyTorch's `create_graph=True` does. Build it again to follow the new one.

use serde::Serialize;

use super::event::fields;
use std::collections::HashMap;

use super::diff::{DiffPart, DiffPiece};
use super::{Event, Node, Notice, Number, Session, SessionError, Target};
use crate::engine::{Derivatives, GradError, NodeId, Op};
use crate::syntax::{Call, ExprKind, ExprTree, Ident, Span};

use super::error::ErrorCode;
use super::params::Param;
use super::tensors::{TValue, from_engine, tensor_error};
use crate::engine::tensor::{Shape, TensorGradError, TensorId};

/// The most names `:hessian` takes (the matrix has one row per name).
pub const MAX_HESSIAN_NAMES: usize = 64;

/// What the derivative and loop commands report (`:=`, `:repeat`, `:hessian`,
/// `:diff`), carried by [`Event::Calculus`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CalculusEvent {
    /// `name := value`: the leaf was set in place and `recomputed` nodes built
    /// from it were evaluated again; `changed` lists the named values among
    /// them (in the order the variables were first assigned).
    Updated {
        name: String,
        value: Number,
        recomputed: usize,
        changed: Vec<Change>,
    },
    /// `:repeat N STATEMENT`: the steps run, the rows shown from step 0 (the
    /// starting point; every step for a small N, a sample and the last
    /// otherwise), the output at every step from step 0 (for the plot), and whether Ctrl-C stopped it early (then `steps` <
    /// `requested`, and the session keeps the `steps` finished).
    Repeat {
        statement: String,
        /// The output's label, when there is an output.
        of: Option<String>,
        /// The variables the statement assigns, one column each.
        assigned: Vec<String>,
        steps: usize,
        requested: usize,
        rows: Vec<RepeatRow>,
        /// The output's value before the first step and after each step
        /// (`None`, JSON `null` as in `rows`, when there is no output).
        outputs: Vec<Option<Number>>,
        interrupted: bool,
        /// After Ctrl-C inside a step of several statements: how many of that
        /// step's first statements had run (they are kept; the one cut short
        /// was undone). 0 when the steps ended between two steps.
        partial: usize,
        /// `Some` when an SVG plot was asked for (`:repeat 50 loss.svg …`).
        #[serde(rename = "file", serialize_with = "fields::target_path")]
        target: Option<Target>,
    },
    /// `:descend LOSS lr=RATE steps=N PARAMS…`: gradient descent on `of`
    /// over the leaves `params`, `steps` of the `requested` run (fewer after
    /// Ctrl-C, then `interrupted`; the session keeps the steps run). `rows`
    /// start at step 0, the starting point (every step up to 20, else a
    /// sample and the last), each with the loss and the parameters' values
    /// after the step; `losses` holds the loss at every step from 0.
    Descent {
        of: String,
        params: Vec<String>,
        rate: Number,
        steps: usize,
        requested: usize,
        rows: Vec<RepeatRow>,
        losses: Vec<Number>,
        interrupted: bool,
        /// Show every parameter's column, however wide (`--all`); a rendering
        /// choice, not data.
        #[serde(skip)]
        all: bool,
        /// `Some` when an SVG plot of the loss was asked for (`:descend L
        /// lr=0.1 steps=40 loss.svg w b`).
        #[serde(rename = "file", serialize_with = "fields::target_path")]
        target: Option<Target>,
    },
    /// `:hessian [NAMES]`: `matrix[i][j]` = `∂²of/∂names[i]∂names[j]`;
    /// `zero_rows` names the rows that are all 0, with why.
    Hessian {
        of: String,
        names: Vec<String>,
        matrix: Vec<Vec<Number>>,
        zero_rows: Vec<String>,
        /// The largest `|H[i][j] − H[j][i]|` (0 for an exactly symmetric matrix).
        asymmetry: Number,
    },
    /// `:diff y x`: ∂y/∂x as an expression (`3*x^2 + cos(x)`) and its value
    /// at the present point (where x is `at`); through relu, max or min, the
    /// derivative's `pieces` beside it, each with where it holds.
    Diff {
        of: String,
        wrt: String,
        expression: String,
        value: Number,
        /// The expression's value now where it is not `value`: only where
        /// the derivative graph computes inf or nan (`sqrt(x)*sqrt(x)` at 0,
        /// whose nodes multiply 0 by inf) and the expression, the same at
        /// every point, does not.
        formula_value: Option<Number>,
        /// The value of `wrt` now.
        at: Number,
        /// The pieces of a derivative through kinks (relu, max, min on the
        /// way from `of` down to `wrt`), ordered by `witness`; empty when it
        /// is one expression everywhere. When none holds `here`, the point
        /// is on a kink and `expression` is the convention's value there.
        pieces: Vec<DiffPiece>,
        /// The pieces there are beyond those listed (at most 8).
        more_pieces: usize,
        /// Where the derivative is too large to write out whole: its parts
        /// used more than once, each named once (`t1 = tanh(x)`), in the
        /// order to type them; `expression` is over these names. Empty
        /// otherwise.
        parts: Vec<DiffPart>,
    },
}

/// One named value a `:=` changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub name: String,
    pub before: Number,
    pub after: Number,
}

/// One row of a `:repeat` or `:descend` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatRow {
    /// The step number; 0 is the point before the first step.
    pub step: usize,
    /// The output's value after the step (`None` without an output).
    pub output: Option<Number>,
    /// The assigned variables' values after the step, one per
    /// [`CalculusEvent::Repeat`]'s `assigned`.
    pub values: Vec<Number>,
}

/// A run of nodes that one `grad(y, x)` (or `f'(a)`) appended, for `:trace`.
#[derive(Debug, Clone)]
pub(super) struct DerivativeGroup {
    /// The first node appended.
    pub first: NodeId,
    /// One past the last node appended.
    pub end: NodeId,
    /// `grad(y, x)`, `f''(a)`.
    pub label: String,
    /// The value differentiated (`y` of `grad(y, x)`).
    pub of: NodeId,
    /// The derivative's node (in the group, or an earlier node it reused).
    pub result: NodeId,
    /// The piecewise nodes it was built across and the branch each took
    /// (`Session::branches`).
    pub branches: Vec<(NodeId, Vec<bool>)>,
}

impl DerivativeGroup {
    /// The same group with every node id passed through `map`; `None` if
    /// `map` gives `None` for one.
    pub(super) fn moved(&self, map: impl Fn(NodeId) -> Option<NodeId>) -> Option<DerivativeGroup> {
        let branches = self
            .branches
            .iter()
            .map(|(id, passes)| Some((map(*id)?, passes.clone())))
            .collect::<Option<Vec<_>>>()?;
        Some(DerivativeGroup {
            first: map(self.first)?,
            end: map(self.end)?,
            label: self.label.clone(),
            of: map(self.of)?,
            result: map(self.result)?,
            branches,
        })
    }
}

/// Which groups a picture draws: [`Session::picture_groups`].
pub(super) struct PictureGroups {
    /// The labelled groups.
    pub groups: Vec<super::PictureGroup>,
    /// The group of each node drawn in one.
    pub group_of: HashMap<NodeId, usize>,
    /// Nodes outside the output's graph, drawn beside it (the forward passes
    /// of the values differentiated), in reverse topological order.
    pub beside: Vec<NodeId>,
}

/// The nodes a derivative may build for each node it differentiates: a
/// first-order derivative graph has a local derivative's expression (at most
/// about 20 nodes, most of them 2 to 4), a product and a sum per edge, about
/// 1 to 3 nodes a node on the workloads of docs/benchmarks.md.
pub const NODES_PER_NODE: usize = 8;

/// The most nodes one derivative may build, whatever it differentiates: 160 MB
/// of graph at 20 bytes a node.
pub const MAX_DERIVATIVE_NODES: usize = 8_000_000;

/// The node budget of a derivative (`grad(y, x)`, `f'(a)`, `:diff`,
/// `:hessian`) that differentiates `differentiated` nodes (the graph from x
/// up): [`NODES_PER_NODE`] a node, at least [`super::eval::MAX_CALL_NODES`]
/// and at most [`MAX_DERIVATIVE_NODES`]. So a first-order derivative of any
/// graph up to a million nodes is built, and nested orders, which multiply the
/// size with each order, stop at the cap.
pub fn derivative_budget(differentiated: usize) -> usize {
    differentiated
        .saturating_mul(NODES_PER_NODE)
        .clamp(super::eval::MAX_CALL_NODES, MAX_DERIVATIVE_NODES)
}

/// The event of `:hessian` of `of` (scalar or tensor): the matrix with rows
/// and columns `names`, its largest asymmetry `|H[i][j] − H[j][i]|`, and a
/// line for each row of zeros saying why (`constant_rows[i]`: the first
/// derivative of row i depends on none of the names, so the zeros are
/// linearity, not this point).
pub(super) fn hessian_event(
    of: String,
    names: Vec<String>,
    matrix: Vec<Vec<Number>>,
    constant_rows: &[bool],
) -> CalculusEvent {
    let mut asymmetry: f64 = 0.0;
    for (i, row) in matrix.iter().enumerate() {
        for (j, other) in matrix.iter().enumerate().take(i) {
            let d = (row[j].0 - other[i].0).abs();
            if d.is_finite() {
                asymmetry = asymmetry.max(d);
            }
        }
    }
    let zero_rows = names
        .iter()
        .zip(&matrix)
        .zip(constant_rows)
        .filter(|((_, row), _)| row.iter().all(|&v| v.0 == 0.0))
        .map(|((name, _), &constant)| {
            if constant {
                format!(
                    "row {name} is 0: ∂{of}/∂{name} does not change with any of these variables (the output is linear in {name} here, or {name} reaches it only through flat ops such as relu at u ≤ 0)"
                )
            } else {
                format!(
                    "row {name} is 0 at this point: ∂{of}/∂{name} changes with these variables, but its derivatives are 0 here or smaller than a double can hold"
                )
            }
        })
        .collect();
    CalculusEvent::Hessian {
        of,
        names,
        matrix,
        zero_rows,
        asymmetry: Number(asymmetry),
    }
}

impl Session {
    /// `grad(y, x)`: ∂y/∂x as nodes. `x` must not be a number literal or a
    /// constant; it may be any value y is built from (a variable, usually).
    pub(super) fn grad_value(
        &mut self,
        args: &[super::eval::Value],
        span: Span,
        label: String,
    ) -> Result<super::eval::Value, SessionError> {
        let [y, x] = args else {
            return Err(SessionError::wrong_arity("grad", span, 2, args.len()));
        };
        if self.graph.op(x.node) == Op::Const {
            return Err(SessionError::BadArguments {
                message: "`grad(y, x)` differentiates with respect to a variable; the second argument is a number".to_string(),
                span,
                help: Some("e.g. `x = 2; y = x^3; grad(y, x)`".to_string()),
            });
        }
        let node = self.derivative_node(y.node, x.node, label, span)?;
        Ok(super::eval::Value {
            node,
            uses_variable: y.uses_variable && self.graph.op(node) != Op::Const,
        })
    }

    /// ∂of/∂wrt[i] for each i, built as nodes by the engine (`Graph::grad`)
    /// within the statement's node budget ([`super::eval::MAX_CALL_NODES`],
    /// lower in the live preview).
    ///
    /// Errors: [`SessionError::DerivativeTooLarge`] past the budget (nested
    /// `grad(grad(…))` grows with every order), [`SessionError::Interrupted`]
    /// on Ctrl-C; the graph is then as it was, both at `span`.
    pub(super) fn gradient_nodes(
        &mut self,
        of: NodeId,
        wrt: &[NodeId],
        span: Span,
    ) -> Result<Vec<NodeId>, SessionError> {
        Ok(self.grad_recorded(of, wrt, span)?.results)
    }

    /// [`Session::gradient_nodes`] with the record of which nodes are local
    /// derivatives (`Derivatives::locals`), for `:diff`.
    ///
    /// Errors: as [`Session::gradient_nodes`].
    pub(super) fn grad_recorded(
        &mut self,
        of: NodeId,
        wrt: &[NodeId],
        span: Span,
    ) -> Result<Derivatives, SessionError> {
        let budget = self.derivative_budget(wrt);
        match self.graph.grad(of, wrt, budget) {
            Ok(derivatives) => Ok(derivatives),
            Err(GradError::TooLarge { limit }) => Err(self.too_large(wrt, span, limit)),
            Err(GradError::Interrupted) => Err(SessionError::Interrupted { span }),
        }
    }

    /// The node budget of a derivative with respect to `wrt`
    /// ([`derivative_budget`]), or the live preview's lower one.
    pub(super) fn derivative_budget(&self, wrt: &[NodeId]) -> usize {
        self.call_node_limit
            .unwrap_or_else(|| derivative_budget(self.differentiated(wrt)))
    }

    /// How many nodes a derivative with respect to `wrt` differentiates, as
    /// its budget counts them: the graph's nodes from the lowest of `wrt` up
    /// (nothing below can depend on it) as the statement found them, so the
    /// inner orders of a nested `grad(grad(…))` built by the same statement
    /// do not raise the budget of the outer ones.
    pub(super) fn differentiated(&self, wrt: &[NodeId]) -> usize {
        let lowest = wrt.iter().map(|x| x.index()).min().unwrap_or(0);
        let start = self.statement_start().min(self.graph.len());
        start.saturating_sub(lowest)
    }

    /// [`SessionError::DerivativeTooLarge`] for a derivative with respect to
    /// `wrt` that passed `limit` nodes.
    pub(super) fn too_large(&self, wrt: &[NodeId], span: Span, limit: usize) -> SessionError {
        let lowest = wrt.iter().map(|x| x.index()).min().unwrap_or(0);
        SessionError::DerivativeTooLarge {
            span,
            limit,
            differentiated: self.graph.len().saturating_sub(lowest),
        }
    }

    /// Builds ∂of/∂wrt as nodes and remembers them as one group with `label`.
    ///
    /// Errors: as [`Session::gradient_nodes`].
    pub(super) fn derivative_node(
        &mut self,
        of: NodeId,
        wrt: NodeId,
        label: String,
        span: Span,
    ) -> Result<NodeId, SessionError> {
        let first = NodeId(self.graph.len() as u32);
        let node = self.gradient_nodes(of, &[wrt], span)?[0];
        let end = NodeId(self.graph.len() as u32);
        // Remembered even when no node was added (∂relu(x)/∂x = 1 at x > 0 is
        // the constant 1): `:=` warns when such a derivative goes stale.
        let branches = self.branches(of, wrt);
        self.derivative_groups.push(DerivativeGroup {
            first,
            end,
            label,
            of,
            result: node,
            branches,
        });
        Ok(node)
    }

    /// The piecewise nodes a derivative of `of` with respect to `wrt` walks
    /// (relu, max, min, `^`), each with which of its operands it passes
    /// gradient to at their present values ([`crate::engine::OpInfo::passes`]):
    /// the branches a derivative graph built now keeps.
    ///
    /// Only nodes on a path from `of` down to `wrt` count: the backward pass
    /// uses their local derivatives. A relu beside the path (∂(relu(w)·x)/∂x
    /// is the value relu(w), which follows `:=`) keeps no branch.
    pub(super) fn branches(&self, of: NodeId, wrt: NodeId) -> Vec<(NodeId, Vec<bool>)> {
        let mut order = self.graph.topo_order_above(of, wrt);
        // Operands first (ids increase along every edge): a node depends on
        // wrt if it is wrt or one of its operands does.
        order.reverse();
        let mut depends = vec![false; of.index().saturating_sub(wrt.index()) + 1];
        let mut branches = Vec::new();
        for id in order {
            let Some(k) = id.index().checked_sub(wrt.index()) else {
                continue;
            };
            let on_path = id == wrt
                || self.graph.operands(id).iter().any(|o| {
                    o.index()
                        .checked_sub(wrt.index())
                        .is_some_and(|j| depends[j])
                });
            depends[k] = on_path;
            let info = self.graph.op(id).info();
            if on_path && info.derivatives.iter().any(|d| d.passing.is_piecewise()) {
                branches.push((id, self.passes_at(id)));
            }
        }
        branches
    }

    /// Which operands of `id` its op passes gradient to, at the present values.
    pub(super) fn passes_at(&self, id: NodeId) -> Vec<bool> {
        let operands = self.graph.operands(id);
        let inputs: Vec<f64> = operands.iter().map(|&o| self.graph.value(o)).collect();
        let (info, out) = (self.graph.op(id).info(), self.graph.value(id));
        (0..operands.len())
            .map(|k| info.passes(&inputs, out, k))
            .collect()
    }

    /// A derivative whose value is a number (`g = grad(2*x, x)` is 2) becomes
    /// the leaf `leaf`, and its nodes past `mark` are truncated: its groups are
    /// kept with no nodes and `leaf` as their result, so that `:=` can still
    /// say when such a number stops being the derivative (`grad(relu(x), x)`
    /// is 1 only while x > 0).
    pub(super) fn keep_groups_as_leaf(&mut self, mark: usize, leaf: NodeId) {
        for group in &mut self.derivative_groups {
            if (group.end.0 as usize) > mark {
                group.first = leaf;
                group.end = leaf;
                group.result = leaf;
            }
        }
    }

    /// Forgets derivative groups that reach past the graph's length (after a
    /// truncation).
    pub(super) fn forget_groups_past(&mut self, len: usize) {
        self.derivative_groups.retain(|g| (g.end.0 as usize) <= len);
        self.calls.truncate(len);
    }

    /// The groups of a picture of the graph in `order` (output first): one
    /// per derivative group with a node in it, labelled as the group, and one
    /// per value differentiated whose forward pass is not all in `order`,
    /// labelled `forward pass of y` and holding the nodes of that forward
    /// pass the order lacks (drawn beside the output's graph, so that `:dot`
    /// of `g = grad(y, x)` shows y's graph next to g's). Cost: linear in the
    /// nodes drawn times the groups.
    pub(super) fn picture_groups(&self, order: &[NodeId]) -> PictureGroups {
        let mut groups = Vec::new();
        let mut group_of = HashMap::new();
        let mut beside = Vec::new();
        let mut drawn: std::collections::HashSet<NodeId> = order.iter().copied().collect();
        let mut sources = Vec::new();
        for group in &self.derivative_groups {
            let inside: Vec<NodeId> = order
                .iter()
                .copied()
                .filter(|id| *id >= group.first && *id < group.end)
                .collect();
            if inside.is_empty() {
                continue;
            }
            for id in inside {
                group_of.insert(id, groups.len());
            }
            groups.push(super::PictureGroup {
                label: group.label.clone(),
                derivative: true,
            });
            sources.push(group.of);
        }
        for of in sources {
            let forward = self.graph.topo_order(of);
            let lacking: Vec<NodeId> = forward
                .iter()
                .copied()
                .filter(|id| !drawn.contains(id))
                .collect();
            if lacking.is_empty() {
                continue;
            }
            let label = match self.names_by_node().get(&of) {
                Some(name) => format!("forward pass of {name}"),
                None => format!("forward pass of #{}", of.0),
            };
            for &id in &lacking {
                drawn.insert(id);
                group_of.entry(id).or_insert(groups.len());
            }
            groups.push(super::PictureGroup {
                label,
                derivative: false,
            });
            beside.extend(lacking);
        }
        // Reverse topological order: ids grow from operands to results.
        beside.sort_by(|a, b| b.cmp(a));
        PictureGroups {
            groups,
            group_of,
            beside,
        }
    }

    /// A note naming the derivative graphs the output's graph holds, for
    /// `:trace`, `:topo`, `:forward` and `:graph`: "nodes #5–#9 are grad(y, x)".
    pub(super) fn derivative_notes(&mut self, events: &mut Vec<Event>) {
        let Some(output) = self.scalar_output() else {
            return;
        };
        if self.derivative_groups.is_empty() {
            return;
        }
        let order = self.order_for(output.node);
        let mut inside = vec![0usize; self.derivative_groups.len()];
        for id in order.iter() {
            for (k, group) in self.derivative_groups.iter().enumerate() {
                if *id >= group.first && *id < group.end {
                    inside[k] += 1;
                }
            }
        }
        for (group, count) in self.derivative_groups.iter().zip(inside) {
            if count > 0 {
                events.push(Event::Notice(Notice::DerivativeNodes {
                    count,
                    first: group.first,
                    last: NodeId(group.end.0 - 1),
                    label: group.label.clone(),
                }));
            }
        }
    }

    /// `:hessian [NAMES]`.
    pub(super) fn hessian(
        &mut self,
        span: Span,
        args: &[Ident],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        if let Some(output) = self.shaped_output() {
            return self.hessian_tensors(span, args, output, events);
        }
        let output = self.require_output(span)?;
        let mut targets = self.named_variables(args)?;
        // The nodes the output reaches: asked only without names, or when
        // nothing is left to differentiate by.
        let reached = |session: &mut Session| {
            let mut reached = vec![false; session.graph.len()];
            for id in session.order_for(output.node).iter() {
                reached[id.index()] = true;
            }
            reached
        };
        if args.is_empty() {
            let reached = reached(self);
            targets = self
                .scalar_vars()
                .map(|(name, node)| (name.clone(), node))
                .filter(|(_, node)| reached[node.index()] && self.graph.op(*node) == Op::Variable)
                .collect();
        }
        if targets.is_empty() {
            let reached = reached(self);
            events.push(Event::Notice(self.no_variable(&output, &reached, false)));
            return Ok(());
        }
        if targets.len() > MAX_HESSIAN_NAMES {
            return Err(SessionError::BadArguments {
                message: format!(
                    "`:hessian` takes at most {MAX_HESSIAN_NAMES} names; the output depends on {}",
                    targets.len()
                ),
                span,
                help: Some("name the variables you want, e.g. `:hessian x y`".to_string()),
            });
        }
        let mark = self.graph.len();
        let wrt: Vec<NodeId> = targets.iter().map(|(_, node)| *node).collect();
        let firsts = self.gradient_nodes(output.node, &wrt, span)?;
        let mut matrix = Vec::with_capacity(wrt.len());
        // As in `Graph::grad`: nothing below the smallest name depends on one.
        let min = wrt.iter().copied().min().unwrap_or(NodeId(0));
        // Whether ∂y/∂x is built from any of the variables at all: a zero row
        // of a derivative that depends on none is linearity (or flat ops); one
        // that does is a zero (or an underflow) at this point only.
        let mut constant_rows = Vec::with_capacity(wrt.len());
        for &first in &firsts {
            let order = self.graph.topo_order_above(first, min);
            let gradients = self.graph.backward(&order);
            constant_rows.push(!order.iter().any(|id| wrt.contains(id)));
            matrix.push(
                wrt.iter()
                    .map(|&x| Number(gradients[x]))
                    .collect::<Vec<_>>(),
            );
        }
        self.graph.truncate(mark);
        let names = targets.into_iter().map(|(name, _)| name).collect();
        events.push(Event::Calculus(hessian_event(
            output.label,
            names,
            matrix,
            &constant_rows,
        )));
        Ok(())
    }
}

impl Session {
    /// The error that `output` is built from a tensor `grad(L, W)` held
    /// fixed, if it is: one whose L goes through an op without a rule of
    /// nodes (a slice), a constant of the tensor graph not computed again
    /// when leaves move, so a backward pass through it would give 0 where
    /// the true second derivative need not be.
    /// `grad(L, W)`, `:grad`, `:check` and `:descend` of such an output are
    /// refused with it; `span` is the statement's or command's.
    pub(super) fn refuse_gradient_of_gradient(
        &self,
        output: TensorId,
        span: Span,
    ) -> Result<(), SessionError> {
        if self.tensors.gradients.is_empty() {
            return Ok(());
        }
        let order = self.tensors.graph.topo_order(output);
        if order.iter().any(|id| self.tensors.gradients.contains(id)) {
            return Err(tensor_error(
                ErrorCode::Unsupported,
                span,
                "a gradient of a gradient of tensors is not supported through this `grad(L, W)`",
                Some(
                    "what is differentiated here is built from a `grad(L, W)` whose L goes through an op without a derivative rule of nodes yet (a slice `X[0:2]`, or `^` at 0^0), so it is a value held fixed that does not follow W; higher orders work through the other ops (`grad(sum(grad(L, W)), W)`, `:hessian`)".into(),
                ),
            ));
        }
        Ok(())
    }

    /// `grad(L, W)`: ∂L/∂W of W's shape, built as nodes of the tensor graph
    /// (`Session::shaped_derivative_nodes`): it follows W when `:=` moves
    /// it, and differentiates again (`grad(sum(grad(L, W)), W)`). `L` of
    /// shape `()`; `W` a tensor variable or a number's leaf. Through an op
    /// without a rule of nodes (a slice) it is the numbers now, held fixed,
    /// and a gradient of it is refused.
    pub(super) fn grad_call(
        &mut self,
        args: Vec<TValue>,
        call: &Call,
        tree: &ExprTree,
        span: Span,
    ) -> Result<TValue, SessionError> {
        if args.len() != 2 {
            return Err(SessionError::wrong_arity(
                "grad",
                call.name_span,
                2,
                args.len(),
            ));
        }
        let wrt_span = tree.get(call.args[1]).span();
        // A vector, matrix or number variable, leaf or derived (as
        // `grad(y, c)` of numbers takes a derived c).
        let wrt = match &tree.get(call.args[1]).kind {
            ExprKind::Name(name) => match self.vars.get(name.as_str()) {
                Some(&Node::Tensor(id)) => Some(Param::Tensor(id)),
                Some(&Node::Scalar(node)) => Some(Param::Scalar(node)),
                None => None,
            },
            _ => None,
        };
        let Some(wrt) = wrt else {
            return Err(tensor_error(
                ErrorCode::BadArguments,
                wrt_span,
                "`grad(L, W)` takes a variable as W: a vector, a matrix, or a number",
                Some("name the variable, e.g. `grad(L, W)`".into()),
            ));
        };
        let of = match &args[0] {
            TValue::Node { id, .. } => *id,
            _ => {
                return Err(tensor_error(
                    ErrorCode::BadArguments,
                    tree.get(call.args[0]).span(),
                    "`grad(L, W)` takes an expression of the tensors as L",
                    None,
                ));
            }
        };
        self.refuse_gradient_of_gradient(of, span)?;
        let shape = self.tensors.graph.shape(of);
        if shape != Shape::scalar() {
            return Err(tensor_error(
                ErrorCode::Shape,
                tree.get(call.args[0]).span(),
                format!(
                    "`grad(L, W)` takes L of shape (), not {}",
                    shape.parenthesized()
                ),
                Some({
                    // The name as typed: a node bound to two names
                    // (`x = v`) is labelled by one of them.
                    let label = match &tree.get(call.args[0]).kind {
                        ExprKind::Name(name) => name.to_string(),
                        _ => self.tensor_labels(of).swap_remove(of.index()),
                    };
                    let wrt = match &tree.get(call.args[1]).kind {
                        ExprKind::Name(name) => name.to_string(),
                        _ => "W".to_string(),
                    };
                    format!("reduce it first, e.g. `grad(sum({label}), {wrt})`")
                }),
            ));
        }
        let id = match self.shaped_derivative_nodes(of, &[wrt]) {
            Ok(ids) => ids[0],
            // Through an op without a rule of nodes: the numbers, held
            // fixed, and a gradient of it refused.
            Err(TensorGradError::Unsupported { .. }) => {
                let gradients = self.tensor_backward(of, span)?;
                let value = self.param_gradient(&gradients, wrt);
                let id = self
                    .tensors
                    .graph
                    .constant(value)
                    .map_err(|e| from_engine(e.into(), span))?;
                self.tensors.gradients.push(id);
                id
            }
            Err(error) => return Err(Session::shaped_grad_error(error, "`grad(L, W)`", span)),
        };
        Ok(TValue::Node {
            id,
            uses_variable: true,
        })
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    /// 8 nodes a node, between 10⁶ and 8·10⁶: a first derivative of 330 000
    /// nodes may build 2 640 000; a small graph keeps the floor of 10⁶; a
    /// huge one (a nested order) the cap. The error names both counts and
    /// says what to do.
    #[test]
    fn the_derivative_budget_grows_with_what_is_differentiated() {
        assert_eq!(derivative_budget(330_000), 2_640_000);
        assert_eq!(derivative_budget(10), 1_000_000);
        assert_eq!(derivative_budget(9_778_962), 8_000_000);
        let error = SessionError::DerivativeTooLarge {
            span: Span::new(0, 1),
            limit: 8_000_000,
            differentiated: 9_778_962,
        };
        assert_eq!(
            error.to_string(),
            "this derivative builds more than 8000000 nodes (it differentiates 9778962)"
        );
        let help = error.help().unwrap_or_default();
        assert!(
            help.contains("up to 8 nodes for each node from x up"),
            "{help}"
        );
        assert!(help.contains("`:grad` gives the numbers"), "{help}");
    }
}
