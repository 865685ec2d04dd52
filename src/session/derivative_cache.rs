//! `f'(a)`, `f''(a)`, … built once per function and order: the nodes the
//! first call appended (the function's body on `t = a + 0` and the derivative
//! graphs taken of it) are kept as a [`Template`], and every later call
//! appends a copy of them over its own argument instead of evaluating the body
//! and building the derivative graphs again.
//!
//! A copy is the graph a fresh build would make at the new argument whenever
//! every op in it takes the same branch of its derivative rule as in the
//! template (the rules of smooth ops are one expression everywhere; only the
//! rules at kinks and masks — relu, max/min, the masks and forms of `^` — are
//! chosen at the point): the copy checks that, node by node, and where one
//! differs, or a value comes out inf or nan (which a fresh build warns about),
//! the copy is undone and the call built afresh, which makes the template anew.
//! A template is kept only when the nodes depend on nothing but the argument
//! (a body that names a variable of the session is built afresh every time) and
//! the first build said nothing. Defining or redefining any function forgets
//! every template (a body may call the one redefined).

use rustc_hash::FxHashMap;

use crate::engine::{Form, Graph, LocalRule, NodeId, Op};

use super::derivatives::DerivativeGroup;

/// The kept derivatives of user functions, by function name and order.
#[derive(Debug, Default, Clone)]
pub(super) struct DerivativeCache {
    templates: FxHashMap<(String, u8), Template>,
}

/// A node of a [`Template`]'s operand: the call's argument, or an earlier
/// node of the template (by its index).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source {
    Argument,
    Node(u32),
}

/// The nodes of one `f'''(a)`, relative to its argument.
#[derive(Debug, Clone)]
struct Template {
    /// Each node's op, its operands and, for constants, the value.
    nodes: Vec<(Op, Vec<Source>, f64)>,
    /// Each node's rule at each operand position where it was built: the
    /// branch a copy must take again.
    rules: Vec<Vec<LocalRule>>,
    /// The result's index.
    result: u32,
    /// The derivative groups the build recorded, with ids as indices.
    groups: Vec<DerivativeGroup>,
}

/// Each rule of `node` at the graph's present values, one per operand.
fn rules_at(graph: &Graph, node: NodeId) -> Vec<LocalRule> {
    let op = graph.op(node);
    let inputs: Vec<f64> = graph
        .operands(node)
        .iter()
        .map(|&o| graph.value(o))
        .collect();
    (0..inputs.len())
        .map(|position| op.local_rule(position, &inputs, graph.value(node), Form::Built))
        .collect()
}

impl DerivativeCache {
    /// Forgets every template (a function was defined or redefined).
    pub(super) fn clear(&mut self) {
        self.templates.clear();
    }

    /// Keeps the nodes from `start` to the graph's end as the template of
    /// `name` at `order`, with `argument` the call's argument, `result` its
    /// value's node and `groups` the derivative groups the build recorded;
    /// nothing is kept if a node is a variable leaf or has an operand below
    /// `start` other than `argument`.
    pub(super) fn remember(
        &mut self,
        key: (String, u8),
        graph: &Graph,
        start: usize,
        argument: NodeId,
        result: NodeId,
        groups: &[DerivativeGroup],
    ) {
        let index = |id: NodeId| id.index().checked_sub(start).map(|i| i as u32);
        let source = |id: NodeId| match index(id) {
            Some(i) => Some(Source::Node(i)),
            None => (id == argument).then_some(Source::Argument),
        };
        let mut nodes = Vec::with_capacity(graph.len() - start);
        let mut rules = Vec::with_capacity(graph.len() - start);
        for id in (start..graph.len()).map(|i| NodeId(i as u32)) {
            let op = graph.op(id);
            let operands: Option<Vec<Source>> =
                graph.operands(id).iter().map(|&o| source(o)).collect();
            let (Some(operands), false) = (operands, op == Op::Variable) else {
                return;
            };
            nodes.push((op, operands, graph.value(id)));
            rules.push(rules_at(graph, id));
        }
        let shift = |id: NodeId| index(id).map(NodeId);
        let groups: Option<Vec<DerivativeGroup>> = groups.iter().map(|g| g.moved(shift)).collect();
        let (Some(result), Some(groups)) = (index(result), groups) else {
            return;
        };
        let template = Template {
            nodes,
            rules,
            result,
            groups,
        };
        self.templates.insert(key, template);
    }

    /// Appends the template of `name` at `order` over `argument` and returns
    /// the result's node and the derivative groups (ids in the graph), or
    /// `None` — with the graph as it was — when there is no template or the
    /// copy takes another branch somewhere or meets inf or nan.
    /// At most `room` nodes are appended; `interrupted` is asked once a node
    /// (Ctrl-C undoes the copy too).
    pub(super) fn replay(
        &self,
        key: &(String, u8),
        graph: &mut Graph,
        argument: NodeId,
        room: usize,
        mut interrupted: impl FnMut() -> bool,
    ) -> Option<(NodeId, Vec<DerivativeGroup>)> {
        let template = self.templates.get(key).filter(|t| t.nodes.len() <= room)?;
        let start = graph.len();
        let id = |source: Source| match source {
            Source::Argument => argument,
            Source::Node(i) => NodeId(start as u32 + i),
        };
        let mut operands = Vec::new();
        for ((op, sources, value), rules) in template.nodes.iter().zip(&template.rules) {
            let node = if *op == Op::Const {
                Ok(graph.constant(*value))
            } else {
                operands.clear();
                operands.extend(sources.iter().map(|&s| id(s)));
                graph.apply(*op, &operands)
            };
            let same = node
                .is_ok_and(|node| graph.value(node).is_finite() && rules_at(graph, node) == *rules);
            if !same || interrupted() {
                graph.truncate(start);
                return None;
            }
        }
        let shift = |index: NodeId| Some(NodeId(start as u32 + index.0));
        let groups = template
            .groups
            .iter()
            .filter_map(|g| g.moved(shift))
            .collect();
        Some((id(Source::Node(template.result)), groups))
    }
}
