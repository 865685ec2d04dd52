//! `:diff y x`: ∂y/∂x written back as an expression over the variables'
//! names. The derivative graph is built as `grad(y, x)` builds it
//! (`derivatives.rs`, the engine's `Graph::grad`), read back into one
//! expression tree (each local derivative from its op row's typed rule, a
//! `Forest` folding as it goes, so the writing is linear in the graph), its
//! like terms collected (`syntax/collect.rs`) and the first form that, typed
//! back, gives the graph's value printed (`agreeing_form`). Too large to write
//! whole, each part used more than once is named once (`t1 = tanh(x)`,
//! `shared_form`). Through relu, max or min the derivative is stated in pieces,
//! one per side of the kinks found at trial points along x, each with where it
//! holds (`pieces`).

use serde::Serialize;

use rustc_hash::FxHashMap;
use std::collections::HashMap;

use super::derivatives::CalculusEvent;
use super::{Event, Notice, Number, Session, SessionError};
use crate::engine::{Form, GradError, Graph, LocalNode, NodeId, Op};
use crate::syntax::{BinaryOp, ExprId, ExprKind, ExprTree, Forest, Ident, Name, Span};

/// The most expression nodes `:diff` prints; a derivative graph whose shared
/// nodes expand past this is refused (the expansion can grow exponentially).
pub const MAX_DIFF_NODES: usize = 4000;

/// The most characters of names `:diff` writes out in one expression (a
/// name of 10⁵ characters used 4 000 times would print 400 MB).
pub const MAX_DIFF_NAME_CHARS: usize = 100_000;

/// The most pieces `:diff` lists for a derivative through kinks.
pub const MAX_DIFF_PIECES: usize = 8;

/// A part of a large derivative named once ([`CalculusEvent::Diff`]):
/// `name = expression` is a statement of the language.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffPart {
    pub name: String,
    pub expression: String,
}

/// One piece of a derivative through kinks ([`CalculusEvent::Diff`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffPiece {
    /// ∂y/∂x where the piece holds; typed back at a point inside it, it
    /// gives the derivative there.
    pub expression: String,
    /// Where it holds, as conditions on the kinks' operands (`x > 0`,
    /// `x - 1 < 0 and x > 0.5*x`); pieces with the same expression are
    /// joined by ` or `.
    pub holds_where: String,
    /// A value of `wrt` inside the piece, where the expression was checked.
    pub witness: Number,
    /// The derivative at `witness`.
    pub value_there: Number,
    /// The piece holds at the present point.
    pub here: bool,
}

impl Session {
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
        let view = SharedView {
            graph: &self.graph,
            names: &names,
            mark,
            locals: &locals,
        };
        let tree = view.expression_of(node);
        let value = self.graph.value(node);
        // Too large to write out whole: each shared part named once.
        let shared = match tree {
            Some(_) => None,
            None => {
                let prefix = self.part_prefix();
                view.shared_form(node, &prefix)
            }
        };
        self.graph.truncate(mark);
        let (expression, formula_value, pieces, more_pieces, parts) = if let Some(shared) = shared {
            let bound = |name: &str| self.vars.contains_key(name);
            let named = |tree: &ExprTree| {
                tree.replace_numbers(|x| super::formula::named_constant(x, bound))
                    .fold_constants()
                    .to_string()
            };
            let expression = named(&shared.expression);
            let parts = shared
                .parts
                .iter()
                .map(|(name, tree)| DiffPart {
                    name: name.clone(),
                    expression: named(tree),
                })
                .collect();
            self.kink_notice(of, wrt, events);
            (expression, None, Vec::new(), 0, parts)
        } else {
            let Some(tree) = tree else {
                return Err(SessionError::BadArguments {
                    message: format!(
                        "∂{}/∂{} is too large to print: more than {MAX_DIFF_CHARS} characters even with each part used more than once named once",
                        y.name, x.name
                    ),
                    span: y.span.to(x.span),
                    help: Some(format!("use its value: `g = grad({}, {})`", y.name, x.name)),
                });
            };
            let (expression, formula_value) = self.agreeing_form(&tree, value);
            let (pieces, more_pieces) = self.pieces(of, wrt, y.span.to(x.span))?;
            if pieces.is_empty() {
                self.kink_notice(of, wrt, events);
            }
            (expression, formula_value, pieces, more_pieces, Vec::new())
        };
        events.push(Event::Calculus(CalculusEvent::Diff {
            of: y.name.clone(),
            wrt: x.name.clone(),
            expression,
            value: Number(value),
            formula_value: formula_value.map(Number),
            at: Number(self.graph.value(wrt)),
            pieces,
            more_pieces,
            parts,
        }));
        Ok(())
    }

    /// A notice when ∂of/∂wrt passes through relu, max or min but is printed
    /// without its pieces (too large to write each, or `wrt` not a variable
    /// leaf): the form holds on the side of each kink taken at this point.
    fn kink_notice(&self, of: NodeId, wrt: NodeId, events: &mut Vec<Event>) {
        let kinks = self
            .branches(of, wrt)
            .iter()
            .filter(|(id, _)| kink_kind(self.graph.op(*id)).is_some())
            .count();
        if kinks > 0 {
            events.push(Event::Notice(Notice::ThroughKinks { kinks }));
        }
    }

    /// The prefix of the names `:diff` gives shared parts: `t` (`t1`, `t2`,
    /// …), or `t_`, `t__`, … when a variable already has such a name.
    fn part_prefix(&self) -> String {
        let mut prefix = "t".to_string();
        while self.vars.keys().any(|name| {
            name.strip_prefix(prefix.as_str())
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        }) {
            prefix.push('_');
        }
        prefix
    }

    /// The pieces of ∂of/∂wrt through the kinks on the way (relu, max and
    /// min nodes that depend on `wrt`), and how many more there are beyond
    /// [`MAX_DIFF_PIECES`]. A piece is a choice of side at every kink (relu's
    /// operand positive or negative, the one largest input of a max) that
    /// holds at some value of `wrt`: the values tried are the present one, it
    /// moved by ±10⁻³ … ±10⁶, and ±10⁻³ … ±10⁶ themselves (a narrower piece
    /// is not found). Each is built on its branches (`Graph::grad_on_branches`)
    /// and written with the kinks' nodes as their piece's value (`relu(u)` is
    /// `u` or 0, `max(a, b)` its largest input), checked at the value found.
    /// Nothing when there is no kink or `wrt` is not a variable leaf.
    ///
    /// Errors: as [`Session::gradient_nodes`].
    fn pieces(
        &mut self,
        of: NodeId,
        wrt: NodeId,
        span: Span,
    ) -> Result<(Vec<DiffPiece>, usize), SessionError> {
        let branches = self.branches(of, wrt);
        let kinks: Vec<NodeId> = branches
            .iter()
            .map(|(id, _)| *id)
            .filter(|&id| kink_kind(self.graph.op(id)).is_some())
            .collect();
        if self.graph.op(wrt) != Op::Variable {
            return Ok((Vec::new(), 0));
        }
        let x0 = self.graph.value(wrt);
        let order = self.graph.topo_order_above(of, wrt);
        let mut depends: std::collections::HashSet<NodeId> = [wrt].into_iter().collect();
        for &id in order.iter().rev() {
            if self.graph.operands(id).iter().any(|o| depends.contains(o)) {
                depends.insert(id);
            }
        }
        // The masks of `^` (∂a^b/∂a nothing where b = 0, ∂a^b/∂b nothing
        // where a = 0 and b ≥ 0) whose condition moves with the variable:
        // single points, where the convention holds and no piece does.
        let masks: Vec<NodeId> = branches
            .iter()
            .map(|(id, _)| *id)
            .filter(|&id| kink_kind(self.graph.op(id)).is_none())
            .filter(|&id| self.graph.operands(id).iter().all(|o| depends.contains(o)))
            .collect();
        let masked = |graph: &Graph, values: &[f64]| {
            masks.iter().any(|&id| {
                let inputs: Vec<f64> = graph
                    .operands(id)
                    .iter()
                    .map(|o| values[o.index()])
                    .collect();
                let info = graph.op(id).info();
                (0..inputs.len()).any(|k| !info.passes(&inputs, values[id.index()], k))
            })
        };
        let masked_here = masked(&self.graph, &self.graph.reevaluate(&[], &[]));
        if kinks.is_empty() && !masked_here {
            return Ok((Vec::new(), 0));
        }
        // The side of every kink at each value tried, and the first value
        // that gave each combination.
        let mut found: Vec<(Vec<usize>, f64)> = Vec::new();
        let mut here = None;
        for (k, at) in trial_points(x0).into_iter().enumerate() {
            let values = self.graph.reevaluate(&order, &[(wrt, at)]);
            let sides: Option<Vec<usize>> = kinks
                .iter()
                .map(|&id| kink_side(&self.graph, &values, id, &depends))
                .collect();
            let Some(sides) = sides else { continue };
            if masked(&self.graph, &values) {
                continue;
            }
            if k == 0 {
                here = Some(sides.clone());
            }
            if found.iter().all(|(s, _)| *s != sides) {
                found.push((sides, at));
            }
        }
        let more = found.len().saturating_sub(MAX_DIFF_PIECES);
        found.truncate(MAX_DIFF_PIECES);
        found.sort_by(|a, b| a.1.total_cmp(&b.1));
        let names = self.names_by_node();
        let names: HashMap<NodeId, String> =
            names.into_iter().map(|(k, v)| (k, v.to_string())).collect();
        let search = PieceSearch {
            of,
            wrt,
            span,
            x0,
            branches: &branches,
            kinks: &kinks,
            masks: &masks,
            depends: &depends,
            names: &names,
        };
        let mut pieces: Vec<DiffPiece> = Vec::new();
        for (sides, witness) in found {
            let Some(Piece {
                expression,
                holds_where,
                value_there,
            }) = self.piece(&search, &sides, witness)?
            else {
                return Ok((Vec::new(), 0));
            };
            let is_here = here.as_ref() == Some(&sides);
            match pieces.iter_mut().find(|p| p.expression == expression) {
                Some(same) => {
                    same.holds_where = format!("{}, or {holds_where}", same.holds_where);
                    same.here |= is_here;
                }
                None => pieces.push(DiffPiece {
                    expression,
                    holds_where,
                    witness: Number(witness),
                    value_there: Number(value_there),
                    here: is_here,
                }),
            }
        }
        Ok((pieces, more))
    }

    /// One piece of `search.of`'s derivative: the one on the side `sides` of
    /// each kink (an index into its operands; for relu 0 is the flat side),
    /// built on those branches, written out and checked at `witness`, a value
    /// of `search.wrt` inside it. The graph is left as it was. `None` when the
    /// piece or where it holds cannot be written.
    ///
    /// Errors: as [`Session::gradient_nodes`].
    fn piece(
        &mut self,
        search: &PieceSearch,
        sides: &[usize],
        witness: f64,
    ) -> Result<Option<Piece>, SessionError> {
        let mut forced: HashMap<NodeId, Vec<bool>> = search
            .branches
            .iter()
            .map(|(id, passes)| (*id, vec![true; passes.len()]))
            .collect();
        let mut subst: HashMap<NodeId, Subst> = HashMap::new();
        for (&id, &side) in search.kinks.iter().zip(sides) {
            let n = self.graph.operands(id).len();
            let (passes, value) = match kink_kind(self.graph.op(id)) {
                Some(Kink::Relu) if side == 0 => (vec![false], Subst::Zero),
                Some(Kink::Relu) => (vec![true], Subst::Operand(0)),
                _ => ((0..n).map(|k| k == side).collect(), Subst::Operand(side)),
            };
            forced.insert(id, passes);
            if !search.names.contains_key(&id) {
                subst.insert(id, value);
            }
        }
        let mark = self.graph.len();
        let budget = self.derivative_budget(&[search.wrt]);
        let built = match self
            .graph
            .grad_on_branches(search.of, &[search.wrt], budget, &forced)
        {
            Ok(built) => built,
            Err(GradError::TooLarge { limit }) => {
                return Err(self.too_large(&[search.wrt], search.span, limit));
            }
            Err(GradError::Interrupted) => {
                return Err(SessionError::Interrupted { span: search.span });
            }
        };
        let node = built.results[0];
        let locals: HashMap<NodeId, LocalNode> =
            built.locals.iter().map(|l| (l.root, *l)).collect();
        let names_ref: HashMap<NodeId, &str> =
            search.names.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let written = Written {
            names: &names_ref,
            mark,
            forced: &forced,
            subst: &subst,
        };
        let tree = expression_in(&self.graph, node, &written, &locals);
        let mut conditions = search
            .kinks
            .iter()
            .zip(sides)
            .map(|(&id, &side)| condition(&self.graph, id, side, &written, search.depends))
            .collect::<Option<Vec<String>>>();
        if search.kinks.is_empty() {
            // Without kinks, the piece is where no mask of `^` holds.
            conditions = search
                .masks
                .iter()
                .map(|&id| mask_condition(&self.graph, id, &written))
                .collect();
            if let Some(c) = conditions.as_mut() {
                c.dedup();
            }
        }
        let holds_where = conditions.map(|c| c.join(" and "));
        self.graph.update_leaf(search.wrt, witness);
        let value_there = self.graph.value(node);
        let expression = tree
            .as_ref()
            .map(|tree| self.agreeing_form(tree, value_there).0);
        self.graph.update_leaf(search.wrt, search.x0);
        self.graph.truncate(mark);
        Ok(expression
            .zip(holds_where)
            .map(|(expression, holds_where)| Piece {
                expression,
                holds_where,
                value_there,
            }))
    }

    /// The text `:diff` prints for the derivative `tree` whose value is
    /// `value`: the shortest of its forms that, typed back now, gives `value`
    /// ([`same_value`]). Tried in order: like terms collected, constants folded
    /// with `0*a` dropped, constants folded, the tree as built. Collecting can
    /// overflow where the graph does not (`(x/m)^2` becomes `x^2/m^2`, inf/inf
    /// at x = 1e200), and `0*a` is nan where `a` is inf. Each is a textbook
    /// form: no `detach`, `max` or `abs` the user did not write (the graph's
    /// stable nodes are never printed). Each candidate is evaluated as a
    /// [`Session::preview`], so the session does not change.
    ///
    /// Where no form gives `value` (the graph's value is inf or nan, or the
    /// textbook form overflows or cancels in double precision where the
    /// graph does not: `1/sqrt(x^2 + 1)` at x = 1e155), the first form is
    /// printed, as at every other point, and its own value is returned beside
    /// it (the second of the pair).
    fn agreeing_form(&mut self, tree: &ExprTree, value: f64) -> (String, Option<f64>) {
        let folded = tree.fold_constants();
        let dropped = drop_zero_products(&folded);
        let collected = dropped.collect_terms();
        let mut tried: Vec<String> = Vec::with_capacity(8);
        // Each form with its constants named (`2*pi` for 6.283185307179586)
        // first, then with digits.
        let bound = |name: &str| self.vars.contains_key(name);
        let candidates: Vec<ExprTree> = [&collected, &dropped, &folded, tree]
            .into_iter()
            .flat_map(|candidate| {
                let named = candidate
                    .replace_numbers(|x| super::formula::named_constant(x, bound))
                    .fold_constants();
                [named, candidate.clone()]
            })
            .collect();
        for candidate in &candidates {
            let text = candidate.to_string();
            if tried.contains(&text) {
                continue;
            }
            if value.is_finite()
                && self
                    .preview(&text)
                    .is_some_and(|typed| same_value(typed, value))
            {
                return (text, None);
            }
            tried.push(text);
        }
        // No form gives the value here in double precision: where the
        // derivative graph is inf or nan (`sqrt(x)*sqrt(x)` at 0 computes
        // 0·inf), or where the textbook form overflows or cancels and the
        // graph's stable nodes do not (`1/sqrt(x^2 + 1)` at x = 1e155, `1 -
        // tanh(x)^2` at 20). The first form is printed, as at every other
        // point, with its own value beside the true one.
        let text = candidates[0].to_string();
        let typed = self.preview(&text);
        (text, typed.filter(|&typed| !same_value(typed, value)))
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

/// What [`SharedView::expression_of`] does with a node on its stack.
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

impl SharedView<'_> {
    /// `node` written out as an expression: named nodes of the original graph
    /// (ids below `mark`) by their names, constants as literals, a local
    /// derivative of the derivative graph (`locals`, from `Graph::grad`) as its
    /// textbook form over the operands of the node it differentiates (`1/(1 +
    /// x^2)`, not the stable nodes it is built from), everything else by its op
    /// over its inputs. Shared nodes are written out at every use; `None` past
    /// [`MAX_DIFF_NODES`] nodes or [`MAX_DIFF_NAME_CHARS`] characters of names,
    /// or at an unnamed variable. Explicit stack.
    fn expression_of(&self, node: NodeId) -> Option<ExprTree> {
        let none = HashMap::new();
        let written = Written {
            names: self.names,
            mark: self.mark,
            forced: &none,
            subst: &HashMap::new(),
        };
        expression_in(self.graph, node, &written, self.locals)
    }
}

/// What [`Session::piece`] builds every piece of `:diff`'s derivative from.
struct PieceSearch<'a> {
    /// The node differentiated.
    of: NodeId,
    /// The variable leaf it is differentiated with respect to.
    wrt: NodeId,
    span: Span,
    /// The leaf's present value, put back after each piece.
    x0: f64,
    /// Every node on the way from `of` down to `wrt` with its branches.
    branches: &'a [(NodeId, Vec<bool>)],
    /// The kinks among them (relu, max, min), one side each per piece.
    kinks: &'a [NodeId],
    /// The masks of `^` whose condition moves with the variable.
    masks: &'a [NodeId],
    /// The nodes whose value depends on `wrt`.
    depends: &'a std::collections::HashSet<NodeId>,
    /// The variables' names.
    names: &'a HashMap<NodeId, String>,
}

/// One piece built by [`Session::piece`]: the derivative there, where it
/// holds and its value at the witness.
struct Piece {
    expression: String,
    holds_where: String,
    value_there: f64,
}

/// How [`expression_in`] writes a derivative graph's nodes.
struct Written<'a> {
    /// The variables' names.
    names: &'a HashMap<NodeId, &'a str>,
    /// The graph's length before the derivative was built.
    mark: usize,
    /// The branches the derivative was built on (`Graph::grad_on_branches`).
    forced: &'a HashMap<NodeId, Vec<bool>>,
    /// Unnamed kinks of the original graph written as their piece's value.
    subst: &'a HashMap<NodeId, Subst>,
}

/// A kink's value on one piece: one of its operands (`relu(u)` = u where
/// u > 0, `max(a, b)` = a where a is the largest) or 0 (`relu(u)`, u < 0).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Subst {
    Operand(usize),
    Zero,
}

/// The kinks that split a derivative into pieces.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kink {
    Relu,
    Max,
    Min,
}

/// Which kind of kink `op` is, if any.
fn kink_kind(op: Op) -> Option<Kink> {
    use crate::engine::Passing;
    match op.info().derivative(0)?.passing {
        Passing::WherePositive => Some(Kink::Relu),
        Passing::ToLargest => Some(Kink::Max),
        Passing::ToSmallest => Some(Kink::Min),
        // `^` chooses a branch only where its exponent or base is 0: one
        // point, not a side of a kink in X.
        Passing::WhereExponentNonzero | Passing::UnlessZeroBase => None,
        Passing::Always | Passing::NotDifferentiable | Passing::Detached => None,
    }
}

/// The side of the kink `id` when the nodes have the values `values`: for
/// relu 1 where its operand is positive and 0 where negative; for max and
/// min the position of the one extreme input, or of the first of tied
/// extreme inputs none of which is in `depends` (the nodes built from the
/// variable: a tie among inputs that do not move with it is no kink in it).
/// `None` on the kink itself (a zero operand, a tie with a node of
/// `depends`) or at nan.
fn kink_side(
    graph: &Graph,
    values: &[f64],
    id: NodeId,
    depends: &std::collections::HashSet<NodeId>,
) -> Option<usize> {
    let operands = graph.operands(id);
    let inputs: Vec<f64> = operands.iter().map(|o| values[o.index()]).collect();
    match kink_kind(graph.op(id))? {
        Kink::Relu => match inputs[0] {
            u if u > 0.0 => Some(1),
            u if u < 0.0 => Some(0),
            _ => None,
        },
        kind => {
            let best = if kind == Kink::Max {
                inputs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            } else {
                inputs.iter().copied().fold(f64::INFINITY, f64::min)
            };
            if inputs.iter().any(|v| v.is_nan()) {
                return None;
            }
            let mut at = inputs.iter().enumerate().filter(|(_, v)| **v == best);
            let first = at.next()?.0;
            let moving = |k: usize| depends.contains(&operands[k]);
            match at.next() {
                None => Some(first),
                Some(_)
                    if inputs
                        .iter()
                        .enumerate()
                        .all(|(k, &v)| v != best || !moving(k)) =>
                {
                    Some(first)
                }
                Some(_) => None,
            }
        }
    }
}

/// Where the kink `id` is on `side`, over its operands as written: `u > 0`,
/// `u < 0`, `a > b` (`a > b and a > c` for three inputs), `a < b` for min;
/// a winner that does not move with the variable (not in `depends`) only
/// against the inputs that do, each distinct comparison once.
fn condition(
    graph: &Graph,
    id: NodeId,
    side: usize,
    written: &Written,
    depends: &std::collections::HashSet<NodeId>,
) -> Option<String> {
    let nodes = graph.operands(id);
    let operands: Vec<String> = graph
        .operands(id)
        .iter()
        .map(|&o| {
            Some(
                expression_in(graph, o, written, &HashMap::new())?
                    .fold_constants()
                    .to_string(),
            )
        })
        .collect::<Option<_>>()?;
    Some(match kink_kind(graph.op(id))? {
        Kink::Relu if side == 1 => format!("{} > 0", operands[0]),
        Kink::Relu => format!("{} < 0", operands[0]),
        kind => {
            let (sign, flipped) = if kind == Kink::Max {
                (">", "<")
            } else {
                ("<", ">")
            };
            // A constant winner goes on the right: `x < 1`, not `1 > x`.
            let fixed = !depends.contains(&nodes[side]);
            let mut parts: Vec<String> = Vec::new();
            for (k, other) in operands.iter().enumerate() {
                if k == side || (fixed && !depends.contains(&nodes[k])) {
                    continue;
                }
                let part = match fixed {
                    true => format!("{other} {flipped} {}", operands[side]),
                    false => format!("{} {sign} {other}", operands[side]),
                };
                if !parts.contains(&part) {
                    parts.push(part);
                }
            }
            parts.join(" and ")
        }
    })
}

/// Where the `^` node `id` passes gradient to both operands, over its
/// operands as written: `b ≠ 0` (∂a^b/∂a is nothing at b = 0; and
/// ∂a^b/∂b is nothing at a = 0, b ≥ 0, a point where b = 0 or on the same
/// line): `x ≠ 0` for `x^x`.
fn mask_condition(graph: &Graph, id: NodeId, written: &Written) -> Option<String> {
    let operands = graph.operands(id);
    let text = |o: NodeId| {
        Some(
            expression_in(graph, o, written, &HashMap::new())?
                .fold_constants()
                .to_string(),
        )
    };
    let (a, b) = (text(operands[0])?, text(operands[1])?);
    Some(if a == b {
        format!("{a} ≠ 0")
    } else {
        format!("{b} ≠ 0 and {a} ≠ 0")
    })
}

/// The values of `wrt` at which `:diff` looks for the pieces of a
/// derivative: the present value `x0` first, then `x0` moved by ±10⁻³ …
/// ±10⁶, then ±10⁻³ … ±10⁶ and 0.
fn trial_points(x0: f64) -> Vec<f64> {
    const STEPS: [f64; 12] = [
        1e-3, 1e-2, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 1e3, 1e6,
    ];
    let mut points = vec![x0];
    for d in STEPS {
        points.extend([x0 + d, x0 - d]);
    }
    for d in STEPS {
        points.extend([d, -d]);
    }
    points.push(0.0);
    points.retain(|p| p.is_finite());
    points
}

/// [`SharedView::expression_of`] with the branches and kink values of one piece.
fn expression_in(
    graph: &Graph,
    node: NodeId,
    written: &Written,
    locals: &HashMap<NodeId, LocalNode>,
) -> Option<ExprTree> {
    let (names, mark) = (written.names, written.mark);
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
            if let Some(&subst) = written.subst.get(&id) {
                match subst {
                    Subst::Zero => done.push(ExprTree::number(0.0)),
                    Subst::Operand(k) => stack.push((graph.operands(id)[k], Work::Visit)),
                }
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
            let rule = match written.forced.get(&local.node) {
                Some(passes) => op.rule_on_branch(
                    local.position,
                    &values,
                    passes.get(local.position) == Some(&true),
                    Form::Textbook,
                ),
                None => op.local_rule(
                    local.position,
                    &values,
                    graph.value(local.node),
                    Form::Textbook,
                ),
            };
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

/// The most characters `:diff` writes for a derivative with its shared parts
/// named (all the lines together).
pub const MAX_DIFF_CHARS: usize = 200_000;

/// A derivative written with every part used more than once named once:
/// the final expression over the names, and the named parts in the order
/// to type them (each over earlier names only).
struct Shared {
    expression: ExprTree,
    parts: Vec<(String, ExprTree)>,
}

/// How often `expr` names the operand `k` (`Some(k)`) or the node's own
/// value (`None`). Recursion over the rule's small fixed tree.
fn uses_in(expr: &crate::engine::Expr, what: Option<usize>) -> usize {
    use crate::engine::Expr;
    match *expr {
        Expr::Operand(k) => usize::from(what == Some(k)),
        Expr::Output => usize::from(what.is_none()),
        Expr::Num(_) | Expr::Named(_) => 0,
        Expr::Apply(_, args) => args.iter().map(|a| uses_in(a, what)).sum(),
    }
}

/// A derivative graph as `:diff` writes it ([`SharedView::expression_of`],
/// [`SharedView::shared_form`]): `graph` with the variables' `names`, the
/// nodes from `mark` on built by the derivative and `locals`, its local
/// derivatives by their root.
struct SharedView<'a> {
    graph: &'a Graph,
    names: &'a HashMap<NodeId, &'a str>,
    mark: usize,
    locals: &'a HashMap<NodeId, LocalNode>,
}

impl SharedView<'_> {
    /// `node` of a derivative graph written in linear size: as
    /// [`SharedView::expression_of`], except that a node the text would write
    /// more than once (a forward value that a local derivative uses, `tanh(x)`
    /// in `1 - tanh(x)^2`, or an upstream gradient that two products use) is
    /// written once as a part `prefix1 = …` and by its name everywhere else. `None` at an unnamed variable or past
    /// [`MAX_DIFF_CHARS`] characters. Loops, no recursion over the graph.
    fn shared_form(&self, node: NodeId, prefix: &str) -> Option<Shared> {
        let (count, order) = self.references(node)?;
        // Every text is built in one forest, each node's from its operands'
        // roots: time linear in the derivative graph (composing trees copied
        // both operands' trees at every step).
        let mut forest = Forest::new(true);
        let mut written: FxHashMap<NodeId, Text> = FxHashMap::default();
        written.reserve(order.len());
        let mut parts: Vec<(String, ExprId)> = Vec::new();
        let mut chars = 0usize;
        for id in order {
            let root = self.node_text(id, &mut forest, &mut written, &count)?;
            let atomic = matches!(forest.kind(root), ExprKind::Name(_) | ExprKind::Number(_));
            let shared = count.get(&id).copied().unwrap_or(0) > 1;
            let text = if id != node && !atomic && shared {
                let name = format!("{prefix}{}", parts.len() + 1);
                chars += name.len() + forest.chars(root);
                parts.push((name.clone(), root));
                Text::Leaf(ExprKind::Name(Name::new(&name)))
            } else if shared {
                Text::Leaf(forest.kind(root).clone())
            } else {
                Text::Root(root)
            };
            written.insert(id, text);
            // At least this many characters already: refused before the rest
            // is built.
            if chars > MAX_DIFF_CHARS {
                return None;
            }
        }
        let root = match written.remove(&node)? {
            Text::Root(root) => root,
            Text::Leaf(kind) => forest.push(kind),
        };
        if chars + forest.chars(root) > MAX_DIFF_CHARS {
            return None; // at least that long: refused without printing it
        }
        let expression = forest.tree(root);
        let parts: Vec<(String, ExprTree)> = parts
            .into_iter()
            .map(|(name, root)| (name, forest.tree(root)))
            .collect();
        let printed: usize = parts
            .iter()
            .map(|(name, tree)| name.len() + tree.to_string().len())
            .sum::<usize>()
            + expression.to_string().len();
        (printed <= MAX_DIFF_CHARS).then_some(Shared { expression, parts })
    }

    /// The local derivative whose root is `id` and its textbook rule at the
    /// present values; `None` when `id` is not the root of one.
    fn rule_of(&self, id: NodeId) -> Option<(LocalNode, crate::engine::LocalRule)> {
        let graph = self.graph;
        let local = *self.locals.get(&id).filter(|_| id.index() >= self.mark)?;
        let inputs = graph.operands(local.node);
        let values: Vec<f64> = inputs.iter().map(|&i| graph.value(i)).collect();
        let rule = graph.op(local.node).local_rule(
            local.position,
            &values,
            graph.value(local.node),
            Form::Textbook,
        );
        Some((local, rule))
    }

    /// Whether `id` is written as itself: a named variable or a constant.
    fn is_atom(&self, id: NodeId) -> bool {
        (id.index() < self.mark && self.names.contains_key(&id)) || self.graph.op(id) == Op::Const
    }

    /// What the text of `id` refers to: (node, how many times). A local
    /// derivative refers to the operands and the output its rule uses.
    fn refs(&self, id: NodeId) -> Vec<(NodeId, usize)> {
        let graph = self.graph;
        if self.is_atom(id) {
            return Vec::new();
        }
        if let Some((local, rule)) = self.rule_of(id) {
            let crate::engine::LocalRule::Expr { expr, .. } = rule else {
                return Vec::new();
            };
            let mut out: Vec<(NodeId, usize)> = graph
                .operands(local.node)
                .iter()
                .enumerate()
                .map(|(k, &o)| (o, uses_in(expr, Some(k))))
                .collect();
            out.push((local.node, uses_in(expr, None)));
            out.retain(|(_, n)| *n > 0);
            return out;
        }
        graph.operands(id).iter().map(|&o| (o, 1)).collect()
    }

    /// Every node the text of `node` reaches with how often it is referred
    /// to, and those nodes in an order with every reference before its user.
    /// `None` when it reaches an unnamed variable.
    fn references(&self, node: NodeId) -> Option<(FxHashMap<NodeId, usize>, Vec<NodeId>)> {
        let mut count: FxHashMap<NodeId, usize> = FxHashMap::default();
        let mut stack = vec![node];
        count.insert(node, 1);
        let mut seen: rustc_hash::FxHashSet<NodeId> = [node].into_iter().collect();
        while let Some(id) = stack.pop() {
            if !self.is_atom(id) && self.graph.op(id).is_leaf() {
                return None;
            }
            for (child, n) in self.refs(id) {
                *count.entry(child).or_insert(0) += n;
                if seen.insert(child) {
                    stack.push(child);
                }
            }
        }
        // Operands have smaller ids than their node, and a local derivative's
        // node (below `mark`) a smaller one than the derivative: ids increasing
        // is an order with every reference before its user.
        let mut order: Vec<NodeId> = seen.into_iter().collect();
        order.sort();
        Some((count, order))
    }

    /// The text of `id` added to `forest` over the texts already `written`
    /// of what it refers to (taken as [`take_text`] takes them, by `count`),
    /// folded as it is added; its root. `None` where a rule cannot be written.
    fn node_text(
        &self,
        id: NodeId,
        forest: &mut Forest,
        written: &mut FxHashMap<NodeId, Text>,
        count: &FxHashMap<NodeId, usize>,
    ) -> Option<ExprId> {
        let graph = self.graph;
        if id.index() < self.mark && self.names.contains_key(&id) {
            return Some(forest.push(ExprKind::Name(Name::new(self.names[&id]))));
        }
        if graph.op(id) == Op::Const {
            return Some(forest.push(ExprKind::Number(graph.value(id))));
        }
        // The rule (or the op) written over placeholders `#0`, `#1`, … for
        // the operands and `#out` for the node's own value, grafted with the
        // placeholders filled by the operands' texts.
        let placeholders = |n: usize| -> Vec<ExprTree> {
            (0..n).map(|k| ExprTree::name(&format!("#{k}"))).collect()
        };
        let (small, operands, output) = if let Some((local, rule)) = self.rule_of(id) {
            let operands = graph.operands(local.node);
            let holes = placeholders(operands.len());
            let refs: Vec<&ExprTree> = holes.iter().collect();
            let out = ExprTree::name("#out");
            let tree =
                super::formula::rule_tree_over(graph.op(local.node), rule, &refs, Some(&out))?;
            (tree, operands, Some(local.node))
        } else {
            let operands = graph.operands(id);
            let holes = placeholders(operands.len());
            let refs: Vec<&ExprTree> = holes.iter().collect();
            (super::formula::apply(graph.op(id), &refs), operands, None)
        };
        Some(forest.graft(&small, |forest, name| {
            let hole = name.as_str().strip_prefix('#')?;
            let node = match hole {
                "out" => output?,
                k => *operands.get(k.parse::<usize>().ok()?)?,
            };
            Some(take_text(forest, written, count, node))
        }))
    }
}

/// A node's text for its users ([`SharedView::shared_form`]): the root of a
/// tree in the forest, for its one user, or a leaf (a part's name, a
/// variable, a literal) added again at each use.
enum Text {
    Root(ExprId),
    Leaf(ExprKind),
}

/// The text of `o` for one of its users, in `forest`: its root, moved out of
/// `written` (it has one use, so the text stays linear), or a new copy of its
/// leaf; `nan` when it is not there.
fn take_text(
    forest: &mut Forest,
    written: &mut FxHashMap<NodeId, Text>,
    count: &FxHashMap<NodeId, usize>,
    o: NodeId,
) -> ExprId {
    let text = if count.get(&o).copied().unwrap_or(0) > 1 {
        match written.get(&o) {
            Some(Text::Leaf(kind)) => Some(Text::Leaf(kind.clone())),
            _ => None,
        }
    } else {
        written.remove(&o)
    };
    match text {
        Some(Text::Root(root)) => root,
        Some(Text::Leaf(kind)) => forest.push(kind),
        None => forest.push(ExprKind::Name(Name::new("nan"))),
    }
}
