//! Pictures of the graph: Graphviz DOT in micrograd's style (`draw_dot`: left to
//! right, a record `{name | value | grad}` per node and a small node per
//! operation), and the [`Drawing`] that [`super::svg`] lays out without Graphviz.
//! Constants are not drawn as nodes: the op that reads one shows it in its
//! label (`× 2`), as micrograd's pictures show no node for them either.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use super::notation::{self, Form};
use super::svg::text_width;
use super::{Precision, format_number};
use crate::engine::{NodeId, Op};
use crate::session::{Direction, GradState, Picture, PictureGroup, PictureNode};

/// Digits of the numbers in a picture (micrograd shows 4 decimals).
pub(super) const DIGITS: Precision = Precision::Digits(4);

/// The picture as Graphviz DOT. Each node is a record `{name | value V | grad G}`
/// (unnamed nodes by id, `#7`), with the gradient blank while it is pending and
/// the current node of a step filled in orange; each operation gets an op node
/// (`n7op`, labelled `*`, `tanh`, `× 2` with a constant operand folded in)
/// between its inputs and its result; each edge from an input to an op node is
/// labelled with the local derivative `∂node/∂input` at the current values.
/// Nodes are listed output first. A step picture has a title.
pub fn dot(picture: &Picture) -> String {
    if let Some(tensor) = &picture.tensor {
        return super::tensor_pictures::dot(picture, tensor);
    }
    let constants = constants_of(picture);
    let mut out = header(picture, "Helvetica");
    // The statements of each group's nodes, written in its cluster; the
    // last entry holds the nodes of no group.
    let mut blocks = vec![String::new(); picture.groups.len() + 1];
    for node in &picture.nodes {
        if node.op == Op::Const {
            continue;
        }
        let out = &mut blocks[node.group.unwrap_or(picture.groups.len())];
        let id = node.node.id.0;
        let grad =
            grad_text(node.state).map_or(String::new(), |text| format!(" {}", record_text(&text)));
        let style = if node.current {
            ", style=filled, fillcolor=\"#fff0e0\", color=\"#e8590c\", penwidth=3"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  n{id} [label=\"{{ {} | value {} | grad{grad} }}\"{style}];",
            record_text(&label(picture, node)),
            record_text(&format_number(node.value, DIGITS)),
        );
        if let Some(label) = op_text(picture, node, &constants) {
            let _ = writeln!(
                out,
                "  n{id}op [label=\"{}\", shape=circle, width=0.4, fixedsize=false];",
                quoted(&label)
            );
            let _ = writeln!(out, "  n{id}op -> n{id};");
        }
    }
    let ungrouped = blocks.pop().unwrap_or_default();
    out.push_str(&ungrouped);
    for (k, (group, block)) in picture.groups.iter().zip(&blocks).enumerate() {
        if block.is_empty() {
            continue;
        }
        let (fill, color) = group_colours(group.derivative, k);
        let _ = writeln!(out, "  subgraph cluster_{k} {{");
        let _ = writeln!(
            out,
            "    label=\"{}\"; style=\"rounded,filled\"; fillcolor=\"{fill}\"; color=\"{color}\"; fontname=\"Helvetica\";",
            quoted(&group.label)
        );
        let _ = writeln!(out, "    node [style=filled, fillcolor=\"white\"];");
        for line in block.lines() {
            let _ = writeln!(out, "  {line}");
        }
        let _ = writeln!(out, "  }}");
    }
    for edge in &picture.edges {
        if constants.contains_key(&edge.input) {
            continue;
        }
        let _ = writeln!(
            out,
            "  n{} -> n{}op [label=\"{}\"];",
            edge.input.0,
            edge.node.0,
            quoted(&format_number(edge.local, DIGITS))
        );
    }
    out.push_str("}\n");
    out
}

/// The start of a picture's DOT: the graph left to right, a comment naming
/// its output, a step picture's title, record nodes in `node_font` (a
/// tensor's rows want a fixed width) and edge labels in Helvetica.
pub(super) fn header(picture: &Picture, node_font: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph gradcalc {{");
    let _ = writeln!(out, "  // computation graph of {}", comment(&picture.of));
    let _ = writeln!(out, "  rankdir=LR;");
    if let Some(title) = title(picture) {
        let _ = writeln!(
            out,
            "  label=\"{}\"; labelloc=t; fontname=\"Helvetica\";",
            quoted(&title)
        );
    }
    let _ = writeln!(
        out,
        "  node [shape=record, fontname=\"{node_font}\", fontsize=12];"
    );
    let _ = writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=10];");
    out
}

/// The fill and frame colours of group `k` of a picture: blues for the
/// derivative graphs (alternating, so nested ones differ), grey for the
/// forward passes drawn beside them.
pub fn group_colours(derivative: bool, k: usize) -> (&'static str, &'static str) {
    match (derivative, k % 2) {
        (true, 0) => ("#e7f0ff", "#3b5bdb"),
        (true, _) => ("#f3e8ff", "#7048e8"),
        (false, _) => ("#f4f4f4", "#868e96"),
    }
}

impl Drawing {
    /// A drawing of `picture` (its output, title and direction) with these
    /// `nodes` and `edges`, no groups and no shared leaves.
    pub(super) fn of(picture: &Picture, nodes: Vec<DrawNode>, edges: Vec<DrawEdge>) -> Drawing {
        Drawing {
            of: picture.of.clone(),
            title: title(picture),
            title_room: title_room(picture),
            nodes,
            edges,
            groups: Vec::new(),
            shared: Vec::new(),
            direction: picture.direction,
        }
    }
}

/// The picture as SVG for slides (see [`super::svg`]).
pub fn svg(picture: &Picture) -> String {
    super::svg::svg(&drawing(picture))
}

/// A picture reduced to what is drawn: value boxes and op nodes (indices into
/// `nodes`), edges between them, and a title for a step picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawing {
    /// The output's label.
    pub of: String,
    /// The title of a step picture.
    pub title: Option<String>,
    /// The widest title of any step of the same pass: the canvas is as wide
    /// as it, so every step has one canvas.
    pub title_room: Option<String>,
    /// What is drawn.
    pub nodes: Vec<DrawNode>,
    /// Edges between `nodes`, each once (an input read twice by one op, as in
    /// `x*x`, is one edge with both local derivatives).
    pub edges: Vec<DrawEdge>,
    /// The leaves many calls share, drawn under the graph rather than in it.
    pub shared: Vec<Shared>,
    /// The labelled groups (derivative graphs, forward passes beside them)
    /// that the nodes' `group` fields point into, for the fills and legend.
    pub groups: Vec<PictureGroup>,
    /// Which way the edges run.
    pub direction: Direction,
}

/// One thing drawn: a value's box or an op's ellipse.
#[derive(Debug, Clone, PartialEq)]
pub enum DrawNode {
    /// A value: its name (or `#id`), value and gradient as text.
    Value {
        /// The name, or `#id`.
        name: String,
        /// The value.
        value: String,
        /// The gradient as shown at this moment ([`grad_text`]): `None` while
        /// blank.
        grad: Option<String>,
        /// Every text the gradient shows over the backward pass: the box is
        /// as wide as the widest, so every step has one layout.
        room: Vec<String>,
        /// The gradient is a sum so far (a fan-out with uses to come): drawn
        /// in orange.
        partial: bool,
        /// The node the step has just processed.
        current: bool,
        /// The picture shows a moment of the backward pass.
        stepping: bool,
        /// No op computes it (a variable).
        leaf: bool,
        /// Its [`Drawing::groups`] entry, if any.
        group: Option<usize>,
        /// A vector or matrix: `value`, `grad` and `room` are rows (lines
        /// split by `\n`), drawn in a fixed-width font so columns align.
        tensor: bool,
    },
    /// An op, with the constants it reads folded in (`× 2`), or a whole
    /// call of a user function drawn as one (`neuron`).
    Op {
        /// The label.
        label: String,
        /// Its [`Drawing::groups`] entry, if any (its result's).
        group: Option<usize>,
        /// A call of a user function, not one op.
        call: bool,
    },
    /// A reference to a leaf read by many ops ([`GHOST_FANOUT`]), drawn beside
    /// each of them but the first instead of an edge from afar: its name only;
    /// or to the leaves several calls share ([`Shared`]), beside each call.
    Ghost {
        /// The leaf's name, or the shared leaves' [`Shared::label`].
        name: String,
    },
}

/// Leaves that many calls of user functions read alike (a network's
/// parameters, read by its call for every data point): drawn once, side by
/// side under the graph, and beside each call as one dashed box naming them
/// all (`w11 … c`) instead of an edge from each.
#[derive(Debug, Clone, PartialEq)]
pub struct Shared {
    /// What the dashed boxes say: the first and the last leaf's names
    /// (`w11 … c`; both for two, `a, b`).
    pub label: String,
    /// The leaves' value boxes (indices into [`Drawing::nodes`]), in the
    /// order the first call reads them.
    pub leaves: Vec<usize>,
    /// How many calls read them.
    pub calls: usize,
}

/// A leaf read by more ops than this is drawn once in full (before the op that
/// reads it first) and as a small reference beside every other op that reads it,
/// so that long edges do not cross the whole picture (a weight shared by every
/// layer of a residual chain).
pub const GHOST_FANOUT: usize = 3;

/// An edge of a [`Drawing`]: `from` feeds `to`, labelled with the local derivative(s).
#[derive(Debug, Clone, PartialEq)]
pub struct DrawEdge {
    /// The input (an index into the drawing's nodes).
    pub from: usize,
    /// The consumer.
    pub to: usize,
    /// The label (empty for an op's edge to its result).
    pub label: String,
}

/// The [`Drawing`] of a picture: constants folded into their ops.
pub fn drawing(picture: &Picture) -> Drawing {
    if let Some(tensor) = &picture.tensor {
        return super::tensor_pictures::drawing(picture, tensor);
    }
    let constants = constants_of(picture);
    let stepping = picture.step.is_some();
    let mut nodes = Vec::new();
    let mut value_at: HashMap<NodeId, usize> = HashMap::new();
    let mut op_at: HashMap<NodeId, usize> = HashMap::new();
    let mut edges = Vec::new();
    // Inputs first, so that index order is a topological order.
    for node in picture.nodes.iter().rev() {
        if node.op == Op::Const {
            continue;
        }
        if let Some(label) = op_text(picture, node, &constants) {
            op_at.insert(node.node.id, nodes.len());
            nodes.push(DrawNode::Op {
                label,
                group: node.group,
                call: node.boxed.is_some(),
            });
        }
        value_at.insert(node.node.id, nodes.len());
        nodes.push(DrawNode::Value {
            name: label(picture, node),
            value: format_number(node.value, DIGITS),
            grad: grad_text(node.state),
            room: node.states.iter().filter_map(|&s| grad_text(s)).collect(),
            partial: matches!(node.state, GradState::Partial { .. }),
            current: node.current,
            stepping,
            leaf: node.op.is_leaf(),
            group: node.group,
            tensor: false,
        });
        if let Some(&op) = op_at.get(&node.node.id) {
            edges.push(DrawEdge {
                from: op,
                to: nodes.len() - 1,
                label: String::new(),
            });
        }
    }
    let mut seen: HashMap<(usize, usize), usize> = HashMap::new();
    for edge in &picture.edges {
        let (Some(&from), Some(&to)) = (value_at.get(&edge.input), op_at.get(&edge.node)) else {
            continue;
        };
        let local = format_number(edge.local, DIGITS);
        match seen.get(&(from, to)) {
            Some(&at) => {
                let label: &mut String = &mut edges[at].label;
                label.push_str(", ");
                label.push_str(&local);
            }
            None => {
                seen.insert((from, to), edges.len());
                edges.push(DrawEdge {
                    from,
                    to,
                    label: local,
                });
            }
        }
    }
    let shared = share_leaves(&mut nodes, &mut edges);
    // Leaves read by many ops: the first op keeps the edge, the others get a
    // ghost (every op, for a leaf drawn under the graph).
    let mut readers: HashMap<usize, (usize, usize)> = HashMap::new();
    for edge in edges.iter().filter(|e| is_leaf(&nodes, e.from)) {
        let entry = readers.entry(edge.from).or_insert((0, usize::MAX));
        entry.0 += 1;
        entry.1 = entry.1.min(edge.to);
    }
    for edge in &mut edges {
        let under = shared.iter().any(|s| s.leaves.contains(&edge.from));
        match (readers.get(&edge.from), &nodes[edge.from]) {
            (Some(&(count, first)), DrawNode::Value { name, .. })
                if under || (count > GHOST_FANOUT && edge.to != first) =>
            {
                let name = name.clone();
                edge.from = nodes.len();
                nodes.push(DrawNode::Ghost { name });
            }
            _ => {}
        }
    }
    Drawing {
        shared,
        groups: picture.groups.clone(),
        ..Drawing::of(picture, nodes, edges)
    }
}

/// Finds the leaves that several calls share ([`Shared`]) among `nodes`:
/// each leaf read by more than [`GHOST_FANOUT`] ops, at least two of them
/// calls of user functions, grouped by the calls that read them; a group of
/// two leaves or more is shared. Its edges into those calls give way to one
/// reference box (a [`DrawNode::Ghost`] naming the group) and its edge into
/// each call.
fn share_leaves(nodes: &mut Vec<DrawNode>, edges: &mut Vec<DrawEdge>) -> Vec<Shared> {
    let is_call = |at: usize| matches!(nodes[at], DrawNode::Op { call: true, .. });
    let mut readers: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for edge in edges.iter().filter(|e| is_leaf(nodes, e.from)) {
        readers.entry(edge.from).or_default().push(edge.to);
    }
    // The leaves of each set of calls, in the order of the edges into the
    // first call (its arguments', then the variables its body reads).
    let mut by_calls: BTreeMap<Vec<usize>, Vec<usize>> = BTreeMap::new();
    for (&leaf, ops) in &readers {
        let mut calls: Vec<usize> = ops.iter().copied().filter(|&op| is_call(op)).collect();
        calls.sort_unstable();
        calls.dedup();
        if ops.len() > GHOST_FANOUT && calls.len() >= 2 {
            by_calls.entry(calls).or_default().push(leaf);
        }
    }
    let mut shared = Vec::new();
    for (calls, mut leaves) in by_calls {
        if leaves.len() < 2 {
            continue;
        }
        let first_use = |leaf: &usize| {
            edges
                .iter()
                .position(|e| e.from == *leaf && e.to == calls[0])
        };
        leaves.sort_by_key(first_use);
        let name = |at: usize| match &nodes[at] {
            DrawNode::Value { name, .. } => name.clone(),
            _ => String::new(),
        };
        let (first, last) = (name(leaves[0]), name(leaves[leaves.len() - 1]));
        let label = match leaves.len() {
            2 => format!("{first}, {last}"),
            _ => format!("{first} … {last}"),
        };
        edges.retain(|e| !(leaves.contains(&e.from) && calls.contains(&e.to)));
        for &call in &calls {
            edges.push(DrawEdge {
                from: nodes.len(),
                to: call,
                label: String::new(),
            });
            nodes.push(DrawNode::Ghost {
                name: label.clone(),
            });
        }
        shared.push(Shared {
            label,
            leaves,
            calls: calls.len(),
        });
    }
    shared
}

/// True when drawing node `at` is a leaf's box (a value no op computes).
fn is_leaf(nodes: &[DrawNode], at: usize) -> bool {
    matches!(nodes[at], DrawNode::Value { leaf: true, .. })
}

/// The title of a step picture: which step, which node.
pub(super) fn title(picture: &Picture) -> Option<String> {
    let step = picture.step.as_ref()?;
    step_title(picture, step.number)
}

/// The title of step `k` of the pass a step picture shows (0: before it).
fn step_title(picture: &Picture, k: usize) -> Option<String> {
    let step = picture.step.as_ref()?;
    if k == 0 {
        return Some(match step.last {
            0 => format!(
                "{}: the forward pass; no backward step (the output is a leaf)",
                picture.of
            ),
            1 => format!("{}: the forward pass; backward step 1 to come", picture.of),
            last => format!(
                "{}: the forward pass; backward steps 1 to {last} to come",
                picture.of
            ),
        });
    }
    let current = match &picture.tensor {
        Some(tensor) => tensor.step_nodes.get(k - 1)?.clone(),
        None => {
            let node = step.nodes.get(k - 1)?;
            match picture.nodes.iter().find(|n| n.node.id == node.id) {
                Some(drawn) => label(picture, drawn),
                None => notation::node(node, DIGITS),
            }
        }
    };
    Some(format!(
        "backward pass from {}: step {k} of {}, {current}",
        picture.of, step.last
    ))
}

/// The widest title of the steps of a step picture's pass.
pub(super) fn title_room(picture: &Picture) -> Option<String> {
    let step = picture.step.as_ref()?;
    (0..=step.last)
        .filter_map(|k| step_title(picture, k))
        .max_by(|a, b| text_width(a, true).total_cmp(&text_width(b, true)))
}

/// The constants of a picture, by id.
fn constants_of(picture: &Picture) -> HashMap<NodeId, f64> {
    picture
        .nodes
        .iter()
        .filter_map(|n| n.node.constant.map(|value| (n.node.id, value)))
        .collect()
}

/// A constant operand as an op's label writes it: its name when it was read
/// from one (`e`, `pi`), else its value to 4 digits.
fn constant_text(picture: &Picture, id: NodeId, value: f64) -> String {
    let named = picture.nodes.iter().find(|n| n.node.id == id);
    match named.and_then(|n| n.node.name.clone()) {
        Some(name) => name,
        None => format_number(value, DIGITS),
    }
}

/// A value box's name: the node as [`notation::node`] writes it (`x`, `#7`).
fn label(picture: &Picture, node: &PictureNode) -> String {
    // A call drawn as one box, its output named by no variable (only by a
    // label of the call's own nodes, `h1.add`, which has a dot): the call as
    // written.
    let variable = node.node.name.as_ref().is_some_and(|n| !n.contains('.'));
    match node.boxed {
        Some(call) if !variable => picture.calls[call].written.clone(),
        _ => notation::node(&node.node, DIGITS),
    }
}

/// The label of `node`'s op node, if it has one: a boxed call's function
/// ([`call_label`]), else the op's ([`op_label`]).
fn op_text(
    picture: &Picture,
    node: &PictureNode,
    constants: &HashMap<NodeId, f64>,
) -> Option<String> {
    if let Some(call) = node.boxed {
        return Some(call_label(
            picture,
            node,
            &picture.calls[call].function,
            constants,
        ));
    }
    notation::symbol(node.op).map(|symbol| op_label(picture, node, symbol, constants))
}

/// A boxed call's label: the function's name, with the constants among its
/// inputs in their places (`neuron(·, ·, 1)`).
fn call_label(
    picture: &Picture,
    node: &PictureNode,
    function: &str,
    constants: &HashMap<NodeId, f64>,
) -> String {
    let arguments = node.boxed.map_or(usize::MAX, |c| picture.calls[c].args);
    let mut inputs: Vec<(usize, Option<String>)> = picture
        .edges
        .iter()
        .filter(|e| e.node == node.node.id && e.position < arguments)
        .map(|e| {
            (
                e.position,
                constants
                    .get(&e.input)
                    .map(|&v| constant_text(picture, e.input, v)),
            )
        })
        .collect();
    if inputs.iter().all(|i| i.1.is_none()) {
        return function.to_string();
    }
    inputs.sort_by_key(|i| i.0);
    let inner: Vec<String> = inputs
        .into_iter()
        .map(|i| i.1.unwrap_or_else(|| "·".to_string()))
        .collect();
    format!("{function}({})", inner.join(", "))
}

/// A gradient as a box shows it in `state`: `5` when final, `3 so far` for
/// a fan-out's sum with uses to come, `0 → 3` at the step that added to it
/// (as `:trace` writes it); `None` while blank.
pub fn grad_text(state: GradState) -> Option<String> {
    let (before, sum, partial) = match state {
        GradState::Blank => return None,
        GradState::Partial { before, sum } => (before, sum, true),
        GradState::Final { before, sum } => (before, sum, false),
    };
    let sum = format_number(sum, DIGITS);
    Some(match (before, partial) {
        (Some(before), _) => format!("{} → {sum}", format_number(before, DIGITS)),
        (None, true) => format!("{sum} so far"),
        (None, false) => sum,
    })
}

/// An op node's label: the op's symbol ([`notation::symbol`]), with the
/// constants among its operands written in their places (`× 2`, `2 -`,
/// `max(·, 0)`).
fn op_label(
    picture: &Picture,
    node: &PictureNode,
    symbol: &str,
    constants: &HashMap<NodeId, f64>,
) -> String {
    let mut operands: Vec<(usize, Option<String>)> = picture
        .edges
        .iter()
        .filter(|e| e.node == node.node.id)
        .map(|e| {
            let constant = constants
                .get(&e.input)
                .map(|&v| constant_text(picture, e.input, v));
            (e.position, constant)
        })
        .collect();
    operands.sort_by_key(|o| o.0);
    if operands.iter().all(|o| o.1.is_none()) {
        return symbol.to_string();
    }
    let text = |o: &(usize, Option<String>)| o.1.clone().unwrap_or_else(|| "·".to_string());
    match (Form::of(node.op), operands.as_slice()) {
        (Form::Infix(_), [a, b]) => match (&a.1, &b.1) {
            (None, Some(b)) => format!("{symbol} {b}"),
            (Some(a), None) => format!("{a} {symbol}"),
            _ => format!("{} {symbol} {}", text(a), text(b)),
        },
        (Form::Prefix(_), [a]) => format!("{symbol}{}", text(a)),
        _ => {
            let inner: Vec<String> = operands.iter().map(text).collect();
            format!("{symbol}({})", inner.join(", "))
        }
    }
}

/// Text inside a quoted DOT string.
pub(super) fn quoted(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Text inside a record field: also escapes the record syntax `{ } | < >`.
pub(super) fn record_text(text: &str) -> String {
    let mut out = String::new();
    for c in quoted(text).chars() {
        if matches!(c, '{' | '}' | '|' | '<' | '>') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text for a `//` comment: one line.
pub(super) fn comment(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{NodeRef, PictureEdge};

    fn node(id: u32, name: Option<&str>, op: Op, value: f64, grad: f64) -> PictureNode {
        PictureNode {
            node: NodeRef {
                id: NodeId(id),
                name: name.map(str::to_string),
                constant: None,
            },
            op,
            value,
            grad,
            state: GradState::Final {
                before: None,
                sum: grad,
            },
            states: Vec::new(),
            current: false,
            group: None,
            call: None,
            boxed: None,
        }
    }

    #[test]
    fn records_op_nodes_and_labelled_edges() {
        let picture = Picture {
            of: "z".to_string(),
            nodes: vec![
                node(2, Some("z"), Op::Mul, 6.0, 1.0),
                node(0, Some("x"), Op::Variable, 2.0, 3.0),
                node(1, Some("a|b"), Op::Variable, 3.0, 2.0),
            ],
            edges: vec![
                PictureEdge {
                    input: NodeId(0),
                    node: NodeId(2),
                    position: 0,
                    local: 3.0,
                },
                PictureEdge {
                    input: NodeId(1),
                    node: NodeId(2),
                    position: 1,
                    local: 2.0,
                },
            ],
            step: None,
            groups: Vec::new(),
            calls: Vec::new(),
            direction: Direction::Auto,
            tensor: None,
        };
        let text = dot(&picture);
        assert!(text.contains("rankdir=LR;"));
        assert!(text.contains("n2 [label=\"{ z | value 6 | grad 1 }\"];"));
        assert!(text.contains("n2op [label=\"×\""));
        assert!(text.contains("n0 -> n2op [label=\"3\"];"));
        assert!(text.contains("{ a\\|b | value 3"));
        assert!(svg(&picture).contains("<svg"));
    }

    /// Leaves `a`, `b` read by four calls `f1` … `f4`, and `k` read by three:
    /// `a` and `b` are shared (under the graph, a box `a, b` beside each
    /// call); `k`, read by fewer than four, keeps its edges.
    #[test]
    fn leaves_many_calls_read_alike_are_shared() {
        let mut nodes = vec![
            node(0, Some("a"), Op::Variable, 1.0, 0.0),
            node(1, Some("b"), Op::Variable, 2.0, 0.0),
            node(2, Some("k"), Op::Variable, 3.0, 0.0),
        ];
        let mut edges = Vec::new();
        let mut calls = Vec::new();
        for c in 0..4u32 {
            let mut call = node(3 + c, Some(&format!("y{c}")), Op::Tanh, 0.5, 1.0);
            call.boxed = Some(c as usize);
            nodes.push(call);
            let inputs: &[u32] = if c < 3 { &[0, 1, 2] } else { &[0, 1] };
            for (position, &input) in inputs.iter().enumerate() {
                edges.push(PictureEdge {
                    input: NodeId(input),
                    node: NodeId(3 + c),
                    position,
                    local: 1.0,
                });
            }
            calls.push(crate::session::PictureCall {
                label: format!("f{}", c + 1),
                function: "f".to_string(),
                written: format!("f(…{c})"),
                args: 0,
                parent: None,
                output: Some(NodeId(3 + c)),
                boxed: true,
            });
        }
        nodes.reverse(); // output first, as a picture lists them
        let picture = Picture {
            of: "y3".to_string(),
            nodes,
            edges,
            step: None,
            groups: Vec::new(),
            calls,
            direction: Direction::Auto,
            tensor: None,
        };
        let drawn = drawing(&picture);
        let name = |at: usize| match &drawn.nodes[at] {
            DrawNode::Value { name, .. } | DrawNode::Ghost { name } => name.clone(),
            DrawNode::Op { label, .. } => label.clone(),
        };
        assert_eq!(drawn.shared.len(), 1);
        let shared = &drawn.shared[0];
        assert_eq!((shared.label.as_str(), shared.calls), ("a, b", 4));
        let leaves: Vec<String> = shared.leaves.iter().map(|&at| name(at)).collect();
        assert_eq!(leaves, ["a", "b"]);
        // No edge leaves a shared box; one from a box `a, b` into each call;
        // three from k.
        assert!(drawn.edges.iter().all(|e| !shared.leaves.contains(&e.from)));
        let from = |wanted: &str| {
            drawn
                .edges
                .iter()
                .filter(|e| name(e.from) == wanted)
                .count()
        };
        assert_eq!((from("a, b"), from("k")), (4, 3));
        assert!(
            svg(&picture).contains(">a, b: read by all 4 calls (the dashed boxes), drawn once<")
        );
    }
}
