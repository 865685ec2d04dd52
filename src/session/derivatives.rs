//! Derivatives as values: `grad(y, x)` and `f''(a)` build the backward pass as
//! graph nodes (`Graph::derivative_graph`), with each local derivative built
//! from the op's rule ([`Op::rule`]: an expression in the calculator's language
//! over the operands, chosen at the current point). `:hessian` and `:diff` read
//! such graphs: the second derivatives of the output by reverse mode over its
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

use super::{CONSTANTS, Event, Session, SessionError, Target};
use crate::engine::{Graph, NodeId, Op, Rule};
use crate::syntax::{BinaryOp, ExprKind, ExprTree, Ident, Span, UnaryOp, parse_expression};

/// The most expression nodes `:diff` prints; a derivative graph whose shared
/// nodes expand past this is refused (the expansion can grow exponentially).
pub const MAX_DIFF_NODES: usize = 4000;

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
    /// `:repeat N STATEMENT`: the steps run, the rows shown (every step for a
    /// small N, a sample and the last otherwise), the output after every step
    /// (for the plot), and whether Ctrl-C stopped it early (then `steps` <
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
        /// The output's value after each step (nan when there is none).
        #[serde(serialize_with = "fields::numbers")]
        outputs: Vec<f64>,
        interrupted: bool,
        /// After Ctrl-C inside a step of several statements: how many of that
        /// step's first statements had run (they are kept; the one cut short
        /// was undone). 0 when the steps ended between two steps.
        partial: usize,
        /// `Some` when an SVG plot was asked for (`:repeat 50 loss.svg …`).
        #[serde(rename = "file", serialize_with = "fields::target_path")]
        target: Option<Target>,
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

/// One row of a `:repeat` table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepeatRow {
    /// 1-based step number.
    pub step: usize,
    /// The output's value after the step (`None` without an output).
    #[serde(serialize_with = "fields::option_number")]
    pub output: Option<f64>,
    /// The assigned variables' values after the step, one per
    /// [`CalculusEvent::Repeat`]'s `assigned`.
    #[serde(serialize_with = "fields::numbers")]
    pub values: Vec<f64>,
}

/// Builds local derivatives as nodes from the op's rules, keeping each rule
/// text's parse for the next node.
#[derive(Default)]
pub(super) struct RuleNodes {
    parsed: HashMap<String, Option<ExprTree>>,
}

impl RuleNodes {
    /// Appends ∂node/∂inputs[position] at the current point: the rule's
    /// expression with the operand nodes for its placeholders (constant
    /// arithmetic folded), or `None` where the op passes nothing. A rule that
    /// fails to parse (a bug the tests catch) gives the constant nan.
    pub(super) fn local(
        &mut self,
        graph: &mut Graph,
        node: NodeId,
        position: usize,
    ) -> Option<NodeId> {
        let op = graph.op(node);
        let inputs = graph.operands(node).to_vec();
        let values: Vec<f64> = inputs.iter().map(|&i| graph.value(i)).collect();
        let text = match op.rule(position, &values, graph.value(node)) {
            Rule::PassesNothing => return None,
            Rule::Expr(text) => text,
        };
        let tree = self
            .parsed
            .entry(text.to_string())
            .or_insert_with(|| parse_expression(&text).ok());
        let Some(tree) = tree.as_ref() else {
            return Some(graph.constant(f64::NAN));
        };
        Some(instantiate(graph, tree, op.placeholders(), &inputs))
    }
}

/// Builds `tree` as nodes, with `operands[k]` for the name `placeholders[k]`
/// and the session's constants (`nan`) for other names. A loop over the flat
/// tree (operands first), no recursion.
fn instantiate(
    graph: &mut Graph,
    tree: &ExprTree,
    placeholders: &[&str],
    operands: &[NodeId],
) -> NodeId {
    let mut built: Vec<NodeId> = Vec::with_capacity(tree.nodes.len());
    for expr in &tree.nodes {
        let fold = |graph: &mut Graph, op: Op, inputs: &[NodeId]| {
            graph
                .apply_folded(op, inputs)
                .unwrap_or_else(|_| graph.constant(f64::NAN))
        };
        let id = match &expr.kind {
            ExprKind::Number(x) => graph.constant(*x),
            ExprKind::Name(name) => match placeholders.iter().position(|p| p == name) {
                Some(k) if k < operands.len() => operands[k],
                _ => {
                    let value = CONSTANTS
                        .iter()
                        .find(|(c, _)| c == name)
                        .map_or(f64::NAN, |&(_, v)| v);
                    graph.constant(value)
                }
            },
            ExprKind::Unary { op, operand } => {
                let a = built[operand.0 as usize];
                match op {
                    UnaryOp::Plus => a,
                    UnaryOp::Neg => fold(graph, Op::Neg, &[a]),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let op = match op {
                    BinaryOp::Add => Op::Add,
                    BinaryOp::Sub => Op::Sub,
                    BinaryOp::Mul => Op::Mul,
                    BinaryOp::Div => Op::Div,
                    BinaryOp::Pow => Op::Pow,
                };
                fold(graph, op, &[built[lhs.0 as usize], built[rhs.0 as usize]])
            }
            ExprKind::Call(call) => {
                let crate::syntax::Call { name, args, .. } = &**call;
                let args: Vec<NodeId> = args.iter().map(|a| built[a.0 as usize]).collect();
                match Op::from_function_name(name) {
                    Some(op) => fold(graph, op, &args),
                    None => graph.constant(f64::NAN),
                }
            }
        };
        built.push(id);
    }
    built[built.len() - 1]
}

/// `∂output/∂wrt[i]` for each i, built as nodes of `graph` (the backward pass
/// recorded as a graph, from the op table's rules): the library face of
/// `grad(y, x)`. The nodes appended are linear in the number of edges of the
/// output's graph; each result is an ordinary node, so it can be
/// differentiated again. A `wrt` node the output does not reach gives the
/// constant 0. The work is proportional to the output's nodes from the
/// smallest `wrt` id up (those below cannot depend on it), not to the graph.
///
/// ```
/// use gradcalc::engine::{Graph, Op};
/// let mut g = Graph::new();
/// let x = g.leaf(3.0);
/// let three = g.constant(3.0);
/// let y = g.apply(Op::Pow, &[x, three]).unwrap();
/// let [d1] = gradcalc::session::gradient_nodes(&mut g, y, &[x])[..] else { panic!() };
/// assert_eq!(g.value(d1), 27.0);
/// let [d2] = gradcalc::session::gradient_nodes(&mut g, d1, &[x])[..] else { panic!() };
/// assert_eq!(g.value(d2), 18.0);
/// ```
///
/// # Panics
/// If `output` or a `wrt` id is not a node of `graph`.
pub fn gradient_nodes(graph: &mut Graph, output: NodeId, wrt: &[NodeId]) -> Vec<NodeId> {
    // Only nodes from the smallest `wrt` up can depend on one (operands have
    // smaller ids): `f'(2)` differentiates with respect to a node just
    // appended, and sorts a handful of nodes however large the session.
    let Some(&min) = wrt.iter().min() else {
        return Vec::new();
    };
    let order = graph.topo_order_above(output, min);
    let mut rules = RuleNodes::default();
    graph.derivative_graph(&order, wrt, |g, node, position| {
        rules.local(g, node, position)
    })
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
        let node = self.derivative_node(y.node, x.node, label);
        Ok(super::eval::Value {
            node,
            uses_variable: y.uses_variable && self.graph.op(node) != Op::Const,
        })
    }

    /// Builds ∂of/∂wrt as nodes and remembers them as one group with `label`.
    pub(super) fn derivative_node(&mut self, of: NodeId, wrt: NodeId, label: String) -> NodeId {
        let first = NodeId(self.graph.len() as u32);
        let node = gradient_nodes(&mut self.graph, of, &[wrt])[0];
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
        node
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
            if on_path && matches!(self.graph.op(id), Op::Relu | Op::Max | Op::Min | Op::Pow) {
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
        let firsts = gradient_nodes(&mut self.graph, output.node, &wrt);
        let mut matrix = Vec::with_capacity(wrt.len());
        // As in `gradient_nodes`: nothing below the smallest name depends on one.
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
        let node = gradient_nodes(&mut self.graph, of, &[wrt])[0];
        let names = self.names_by_node();
        let tree = expression_of(&self.graph, node, &names, mark);
        let value = self.graph.value(node);
        self.graph.truncate(mark);
        let Some(tree) = tree else {
            return Err(SessionError::BadArguments {
                message: format!(
                    "∂{}/∂{} is too large to print as one expression (more than {MAX_DIFF_NODES} terms once shared parts are written out)",
                    y.name, x.name
                ),
                span: y.span.to(x.span),
                help: Some(format!("use its value: `g = grad({}, {})`", y.name, x.name)),
            });
        };
        let expression = self.agreeing_form(&tree, value);
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
    /// the tree as built is printed (its ops are the graph's). Each candidate is
    /// evaluated as a [`Session::preview`], so the session does not change.
    fn agreeing_form(&mut self, tree: &ExprTree, value: f64) -> String {
        let folded = tree.fold_constants();
        let dropped = drop_zero_products(&folded);
        let collected = dropped.collect_terms();
        let mut tried: Vec<String> = Vec::with_capacity(4);
        for candidate in [&collected, &dropped, &folded, tree] {
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

/// `node` written out as an expression: named nodes of the original graph
/// (ids below `mark`) by their names, constants as literals, everything else
/// by its op over its inputs. Shared nodes are written out at every use;
/// `None` past [`MAX_DIFF_NODES`] or at an unnamed variable. Explicit stack.
fn expression_of(
    graph: &Graph,
    node: NodeId,
    names: &HashMap<NodeId, &str>,
    mark: usize,
) -> Option<ExprTree> {
    let mut stack = vec![(node, false)];
    let mut done: Vec<ExprTree> = Vec::new();
    let mut size = 0usize;
    while let Some((id, operands_done)) = stack.pop() {
        size += 1;
        if size > 2 * MAX_DIFF_NODES {
            return None;
        }
        if id.index() < mark {
            if let Some(name) = names.get(&id) {
                done.push(ExprTree::name(name));
                continue;
            }
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
        if !operands_done {
            stack.push((id, true));
            stack.extend(inputs.iter().rev().map(|&input| (input, false)));
            continue;
        }
        let operands = done.split_off(done.len() - inputs.len());
        let refs: Vec<&ExprTree> = operands.iter().collect();
        let binary = |op: BinaryOp| ExprTree::binary(op, refs[0], refs[1]);
        let tree = match op {
            Op::Add => binary(BinaryOp::Add),
            Op::Sub => binary(BinaryOp::Sub),
            Op::Mul => binary(BinaryOp::Mul),
            Op::Div => binary(BinaryOp::Div),
            Op::Pow => binary(BinaryOp::Pow),
            Op::Neg => ExprTree::negate(refs[0]),
            _ => ExprTree::call(op.info().name, &refs),
        };
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

#[cfg(test)]
mod tests {
    use super::{RuleNodes, gradient_nodes};
    use crate::engine::{Arity, Graph, NodeId, Op};
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};
    use std::cell::Cell;

    /// A random graph: leaf values, then ops (numbered modulo the table) over
    /// operands counted back from the newest node (small picks make chains,
    /// large ones reach far below).
    #[derive(Debug, Clone)]
    struct Program {
        leaves: Vec<f64>,
        instructions: Vec<(usize, Vec<usize>)>,
    }

    fn program() -> impl Strategy<Value = Program> {
        let pick = prop_oneof![3 => 0..4usize, 1 => 0..40usize];
        (
            prop::collection::vec(-2.0f64..2.0, 1..=5),
            prop::collection::vec((0..1000usize, prop::collection::vec(pick, 1..=4)), 1..30),
        )
            .prop_map(|(leaves, instructions)| Program {
                leaves,
                instructions,
            })
    }

    fn build(program: &Program) -> Graph {
        let mut g = Graph::new();
        for &v in &program.leaves {
            g.leaf(v);
        }
        for (op, picks) in &program.instructions {
            let info = &Op::table()[op % Op::table().len()];
            let count = match info.arity {
                Arity::Leaf => {
                    g.constant(0.75);
                    continue;
                }
                Arity::Unary => 1,
                Arity::Binary => 2,
                Arity::Variadic => picks.len(),
            };
            let newest = g.len() - 1;
            let operands: Vec<NodeId> = (0..count)
                .map(|k| NodeId(newest.saturating_sub(picks[k % picks.len()]) as u32))
                .collect();
            g.apply(info.op, &operands)
                .expect("arity chosen from the table");
        }
        g
    }

    /// The derivative graph built from the whole of the output's order, as
    /// before the cut.
    fn full_walk(graph: &mut Graph, output: NodeId, wrt: &[NodeId]) -> Vec<NodeId> {
        let order = graph.topo_order(output);
        let mut rules = RuleNodes::default();
        graph.derivative_graph(&order, wrt, |g, node, position| {
            rules.local(g, node, position)
        })
    }

    /// The same nodes, one for one: op, operands and value (bit for bit).
    fn same_graph(a: &Graph, b: &Graph) -> Result<(), TestCaseError> {
        prop_assert_eq!(a.len(), b.len());
        for i in 0..a.len() {
            let id = NodeId(i as u32);
            prop_assert_eq!(a.op(id), b.op(id), "node {}", i);
            prop_assert_eq!(a.operands(id), b.operands(id), "node {}", i);
            prop_assert_eq!(a.value(id).to_bits(), b.value(id).to_bits(), "node {}", i);
        }
        Ok(())
    }

    #[test]
    fn the_cut_derivative_graph_is_the_full_walks_node_for_node() {
        let cut_something = Cell::new(0usize);
        let output_lowest = Cell::new(0usize);
        let mut runner = TestRunner::new(Config {
            cases: 384,
            failure_persistence: None,
            ..Config::default()
        });
        let strategy = (
            program(),
            prop::collection::vec(0..64usize, 1..=3),
            0..4usize,
            prop::bool::weighted(0.15),
        );
        let result = runner.run(&strategy, |(program, picks, output_pick, only_output)| {
            let graph = build(&program);
            let newest = graph.len() - 1;
            let output = NodeId(newest.saturating_sub(output_pick) as u32);
            // Differentiate with respect to leaves or derived nodes, sometimes
            // the output itself (then the cut is at the output: ∂y/∂y = 1).
            let wrt: Vec<NodeId> = if only_output {
                vec![output]
            } else {
                picks
                    .iter()
                    .map(
                        |&p| NodeId(output.index().saturating_sub(p % (output.index() + 1)) as u32),
                    )
                    .collect()
            };
            let min = *wrt.iter().min().expect("one name at least");
            // The cut order is the full one without the nodes below `min`.
            let full_order = graph.topo_order(output);
            let kept: Vec<NodeId> = full_order.iter().copied().filter(|&id| id >= min).collect();
            prop_assert_eq!(graph.topo_order_above(output, min), kept.clone());
            cut_something.set(cut_something.get() + usize::from(kept.len() < full_order.len()));
            output_lowest.set(output_lowest.get() + usize::from(output == min));

            let (mut cut, mut full) = (graph.clone(), graph);
            let firsts = gradient_nodes(&mut cut, output, &wrt);
            prop_assert_eq!(&firsts, &full_walk(&mut full, output, &wrt));
            same_graph(&cut, &full)?;
            for &first in &firsts {
                // Order 2, and the Hessian's backward pass over the cut order.
                let seconds = gradient_nodes(&mut cut, first, &wrt);
                prop_assert_eq!(&seconds, &full_walk(&mut full, first, &wrt));
                same_graph(&cut, &full)?;
                let by_cut = cut.backward(&cut.topo_order_above(first, min));
                let by_full = full.backward(&full.topo_order(first));
                for &x in &wrt {
                    prop_assert_eq!(by_cut[x].to_bits(), by_full[x].to_bits());
                }
            }
            Ok(())
        });
        if let Err(error) = result {
            panic!("{error}");
        }
        // The cases did cut nodes off, and reached the output as the lowest
        // name (where a cut one too high loses ∂y/∂y).
        assert!(cut_something.get() > 150, "{}", cut_something.get());
        assert!(output_lowest.get() > 40, "{}", output_lowest.get());
    }
}
