//! Derivatives as values: `grad(y, x)` and `f''(a)` build the backward pass as
//! graph nodes (the engine's `Graph::grad`, each local derivative built from
//! the op row's typed rule), within a node budget and under Ctrl-C.
//! `:hessian` and `:diff` read such graphs: the second derivatives of the output by reverse mode over its
//! first-derivative nodes, and ∂y/∂x written back as an expression.
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

use super::{Event, Session, SessionError, Target};
use crate::engine::{Derivatives, Form, GradError, Graph, LocalNode, NodeId, Op};
use crate::syntax::{BinaryOp, ExprKind, ExprTree, Ident, Span};

/// The most expression nodes `:diff` prints; a derivative graph whose shared
/// nodes expand past this is refused (the expansion can grow exponentially).
pub const MAX_DIFF_NODES: usize = 4000;

/// The most characters of names `:diff` writes out in one expression (a
/// name of 10⁵ characters used 4 000 times would print 400 MB).
pub const MAX_DIFF_NAME_CHARS: usize = 100_000;

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
        #[serde(serialize_with = "fields::number")]
        value: f64,
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
        #[serde(serialize_with = "fields::option_numbers")]
        outputs: Vec<Option<f64>>,
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
        #[serde(serialize_with = "fields::number")]
        rate: f64,
        steps: usize,
        requested: usize,
        rows: Vec<RepeatRow>,
        #[serde(serialize_with = "fields::numbers")]
        losses: Vec<f64>,
        interrupted: bool,
        /// Show every parameter's column, however wide (`--all`); a rendering
        /// choice, not data.
        #[serde(skip)]
        all: bool,
    },
    /// `:hessian [NAMES]`: `matrix[i][j]` = `∂²of/∂names[i]∂names[j]`;
    /// `zero_rows` names the rows that are all 0, with why.
    Hessian {
        of: String,
        names: Vec<String>,
        #[serde(serialize_with = "fields::number_rows")]
        matrix: Vec<Vec<f64>>,
        zero_rows: Vec<String>,
        /// The largest `|H[i][j] − H[j][i]|` (0 for an exactly symmetric matrix).
        #[serde(serialize_with = "fields::number")]
        asymmetry: f64,
    },
    /// `:diff y x`: ∂y/∂x as an expression (`3*x^2 + cos(x)`) and its value.
    Diff {
        of: String,
        wrt: String,
        expression: String,
        #[serde(serialize_with = "fields::number")]
        value: f64,
    },
}

/// One named value a `:=` changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub name: String,
    #[serde(serialize_with = "fields::number")]
    pub before: f64,
    #[serde(serialize_with = "fields::number")]
    pub after: f64,
}

/// One row of a `:repeat` or `:descend` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatRow {
    /// The step number; 0 is the point before the first step.
    pub step: usize,
    /// The output's value after the step (`None` without an output).
    #[serde(serialize_with = "fields::option_number")]
    pub output: Option<f64>,
    /// The assigned variables' values after the step, one per
    /// [`CalculusEvent::Repeat`]'s `assigned`.
    #[serde(serialize_with = "fields::numbers")]
    pub values: Vec<f64>,
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
            return Err(SessionError::WrongArity {
                name: "grad".to_string(),
                span,
                expected: "2".to_string(),
                got: args.len(),
            });
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
    fn grad_recorded(
        &mut self,
        of: NodeId,
        wrt: &[NodeId],
        span: Span,
    ) -> Result<Derivatives, SessionError> {
        let budget = self.call_node_limit.unwrap_or(super::eval::MAX_CALL_NODES);
        match self.graph.grad(of, wrt, budget) {
            Ok(derivatives) => Ok(derivatives),
            Err(GradError::TooLarge { limit }) => {
                Err(SessionError::DerivativeTooLarge { span, limit })
            }
            Err(GradError::Interrupted) => Err(SessionError::Interrupted { span }),
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
    fn branches(&self, of: NodeId, wrt: NodeId) -> Vec<(NodeId, Vec<bool>)> {
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
        let Some(output) = self.output.clone() else {
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
                events.push(Event::Notice {
                    message: format!(
                        "{count} of these nodes (_{}–_{}) are {}: the backward pass recorded as nodes",
                        group.first.0,
                        group.end.0 - 1,
                        group.label
                    ),
                });
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
        let output = self.require_output(span)?;
        let mut targets: Vec<(String, NodeId)> = Vec::new();
        for arg in args {
            let node = self.variable_node(arg)?;
            if targets.iter().all(|(name, _)| *name != arg.name) {
                targets.push((arg.name.clone(), node));
            }
        }
        if args.is_empty() {
            let order = self.order_for(output.node);
            let mut reached = vec![false; self.graph.len()];
            for id in order.iter() {
                reached[id.index()] = true;
            }
            targets = self
                .var_order
                .iter()
                .map(|name| (name.clone(), self.vars[name]))
                .filter(|(_, node)| reached[node.index()] && self.graph.op(*node) == Op::Variable)
                .collect();
        }
        if targets.is_empty() {
            events.push(Event::Notice {
                message: format!("{} depends on no variable", output.label),
            });
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
            matrix.push(wrt.iter().map(|&x| gradients[x]).collect::<Vec<f64>>());
        }
        self.graph.truncate(mark);
        let mut asymmetry: f64 = 0.0;
        for (i, row) in matrix.iter().enumerate() {
            for (j, other) in matrix.iter().enumerate().take(i) {
                let d = (row[j] - other[i]).abs();
                if d.is_finite() {
                    asymmetry = asymmetry.max(d);
                }
            }
        }
        let zero_rows = targets
            .iter()
            .zip(&matrix)
            .zip(&constant_rows)
            .filter(|((_, row), _)| row.iter().all(|&v| v == 0.0))
            .map(|(((name, _), _), &constant)| {
                let of = &output.label;
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
        events.push(Event::Calculus(CalculusEvent::Hessian {
            of: output.label,
            names: targets.into_iter().map(|(name, _)| name).collect(),
            matrix,
            zero_rows,
            asymmetry,
        }));
        Ok(())
    }

    /// `:diff y x`: ∂y/∂x written as an expression over the variables' names.
    pub(super) fn diff(
        &mut self,
        name: &Ident,
        args: &[Ident],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let [y, x] = args else {
            return Err(SessionError::BadArguments {
                message: "`:diff` takes two names: the value and the variable".to_string(),
                span: args.iter().fold(name.span, |s, a| s.to(a.span)),
                help: Some("e.g. `:diff y x`".to_string()),
            });
        };
        let of = self.variable_node(y)?;
        let wrt = self.variable_node(x)?;
        let mark = self.graph.len();
        let built = self.grad_recorded(of, &[wrt], y.span.to(x.span))?;
        let node = built.results[0];
        let locals: HashMap<NodeId, LocalNode> =
            built.locals.iter().map(|l| (l.root, *l)).collect();
        let names = self.names_by_node();
        let tree = expression_of(&self.graph, node, &names, mark, &locals);
        // The nodes as built (stable forms): what is printed where no
        // textbook form, typed back, gives the value (`1/sqrt(x^2 + 1)` at
        // x = 1e155, where x^2 overflows).
        let built = expression_of(&self.graph, node, &names, mark, &HashMap::new());
        let value = self.graph.value(node);
        self.graph.truncate(mark);
        let Some(tree) = tree else {
            return Err(SessionError::BadArguments {
                message: format!(
                    "∂{}/∂{} is too large to print as one expression (more than {MAX_DIFF_NODES} terms or {MAX_DIFF_NAME_CHARS} characters of names once shared parts are written out)",
                    y.name, x.name
                ),
                span: y.span.to(x.span),
                help: Some(format!("use its value: `g = grad({}, {})`", y.name, x.name)),
            });
        };
        let expression = self.agreeing_form(&tree, built.as_ref(), value);
        events.push(Event::Calculus(CalculusEvent::Diff {
            of: y.name.clone(),
            wrt: x.name.clone(),
            expression,
            value,
        }));
        Ok(())
    }

    /// The text `:diff` prints for the derivative `tree` whose value is
    /// `value`: the shortest of its forms that, typed back now, gives `value`
    /// ([`same_value`]). Tried in order: like terms collected, constants folded
    /// with `0*a` dropped, constants folded, the tree as built. Collecting can
    /// overflow where the graph does not (`(x/m)^2` becomes `x^2/m^2`, inf/inf
    /// at x = 1e200), and `0*a` is nan where `a` is inf. When no form agrees
    /// the textbook tree is printed. `built`, the derivative graph's own
    /// nodes (stable forms, `sech(x)^2` for `1 - tanh(x)^2`), is tried last,
    /// where the textbook form overflows or cancels. Each candidate is
    /// evaluated as a [`Session::preview`], so the session does not change.
    fn agreeing_form(&mut self, tree: &ExprTree, built: Option<&ExprTree>, value: f64) -> String {
        let folded = tree.fold_constants();
        let dropped = drop_zero_products(&folded);
        let collected = dropped.collect_terms();
        let built = built.map(ExprTree::fold_constants);
        let mut tried: Vec<String> = Vec::with_capacity(5);
        for candidate in [&collected, &dropped, &folded, tree]
            .into_iter()
            .chain(built.as_ref())
        {
            let text = candidate.to_string();
            if tried.contains(&text) {
                continue;
            }
            if self
                .preview(&text)
                .is_some_and(|typed| same_value(typed, value))
            {
                return text;
            }
            tried.push(text);
        }
        tree.to_string()
    }
}

/// Whether a formula's value `typed` is the derivative's `value`: equal (0 and
/// -0 alike), both nan, or both finite within a relative 1e-12 (the rounding
/// of a rearranged sum or product).
fn same_value(typed: f64, value: f64) -> bool {
    if typed == value || (typed.is_nan() && value.is_nan()) {
        return true;
    }
    typed.is_finite()
        && value.is_finite()
        && (typed - value).abs() <= 1e-12 * typed.abs().max(value.abs())
}

/// What [`expression_of`] does with a node on its stack.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Work {
    /// Write it out: push its operands first.
    Visit,
    /// Its operands are written: apply its op.
    Apply,
    /// A local derivative whose operands (those of the node differentiated)
    /// are written: its textbook form over them.
    Textbook,
}

/// `node` written out as an expression: named nodes of the original graph
/// (ids below `mark`) by their names, constants as literals, a local
/// derivative of the derivative graph (`locals`, from `Graph::grad`) as its
/// textbook form over the operands of the node it differentiates (`1/(1 +
/// x^2)`, not the stable nodes it is built from), everything else by its op
/// over its inputs. Shared nodes are written out at every use; `None` past
/// [`MAX_DIFF_NODES`] nodes or [`MAX_DIFF_NAME_CHARS`] characters of names,
/// or at an unnamed variable. Explicit stack.
fn expression_of(
    graph: &Graph,
    node: NodeId,
    names: &HashMap<NodeId, &str>,
    mark: usize,
    locals: &HashMap<NodeId, LocalNode>,
) -> Option<ExprTree> {
    let mut stack = vec![(node, Work::Visit)];
    let mut done: Vec<ExprTree> = Vec::new();
    let (mut size, mut name_chars) = (0usize, 0usize);
    while let Some((id, work)) = stack.pop() {
        size += 1;
        if size > 2 * MAX_DIFF_NODES {
            return None;
        }
        if id.index() < mark {
            if let Some(name) = names.get(&id) {
                name_chars += name.len();
                if name_chars > MAX_DIFF_NAME_CHARS {
                    return None;
                }
                done.push(ExprTree::name(name));
                continue;
            }
        }
        let local = locals.get(&id).filter(|_| id.index() >= mark);
        if let (Some(local), Work::Visit) = (local, work) {
            stack.push((id, Work::Textbook));
            let inputs = graph.operands(local.node);
            stack.extend(inputs.iter().rev().map(|&input| (input, Work::Visit)));
            continue;
        }
        if let (Some(local), Work::Textbook) = (local, work) {
            let inputs = graph.operands(local.node);
            let operands = done.split_off(done.len() - inputs.len());
            let refs: Vec<&ExprTree> = operands.iter().collect();
            let values: Vec<f64> = inputs.iter().map(|&i| graph.value(i)).collect();
            let op = graph.op(local.node);
            let rule = op.local_rule(
                local.position,
                &values,
                graph.value(local.node),
                Form::Textbook,
            );
            done.push(super::formula::rule_tree(op, rule, &refs)?);
            continue;
        }
        let op = graph.op(id);
        if op == Op::Const {
            done.push(ExprTree::number(graph.value(id)));
            continue;
        }
        if op.is_leaf() {
            return None;
        }
        let inputs = graph.operands(id);
        if work == Work::Visit {
            stack.push((id, Work::Apply));
            stack.extend(inputs.iter().rev().map(|&input| (input, Work::Visit)));
            continue;
        }
        let operands = done.split_off(done.len() - inputs.len());
        let refs: Vec<&ExprTree> = operands.iter().collect();
        let tree = super::formula::apply(op, &refs);
        if tree.nodes.len() > MAX_DIFF_NODES {
            return None;
        }
        done.push(tree);
    }
    done.pop()
}

/// `tree` with `0*a` and `a*0` written as `0`, and `a + 0`-style identities
/// that appear after that folded again. (`0*a` is nan where `a` is inf or nan;
/// `:diff` prints the formula, whose value at such points is the derivative
/// graph's, not this text's.)
fn drop_zero_products(tree: &ExprTree) -> ExprTree {
    let mut out = tree.clone();
    for i in 0..out.nodes.len() {
        let zero = |id: &crate::syntax::ExprId| matches!(out.nodes[id.0 as usize].kind, ExprKind::Number(x) if x == 0.0);
        let is_zero = match &out.nodes[i].kind {
            ExprKind::Binary {
                op: BinaryOp::Mul,
                lhs,
                rhs,
            } => zero(lhs) || zero(rhs),
            _ => false,
        };
        if is_zero {
            out.nodes[i].kind = ExprKind::Number(0.0);
        }
    }
    out.fold_constants()
}
