//! `f'(a)`, `f''(a)`, … with their derivative graphs built once per function
//! and order: the first call evaluates the function's body on `t = a + 0` and
//! builds the derivative graphs of it; the nodes of those derivative graphs
//! are kept as a [`Template`], and every later call evaluates the body (its
//! calls, labels and warnings as any call's) and then appends a copy of the
//! template over the new body's nodes instead of building the derivative
//! graphs again.
//!
//! A copy is the graph a fresh build would make whenever every op in the body
//! and in the derivative graphs takes the same branch of its derivative rule
//! as in the template (the rules of smooth ops are one expression everywhere;
//! only the rules at kinks and masks — relu, max/min, the masks and forms of
//! `^` — are chosen at the point): the copy checks that, node by node, and
//! where one differs, or a value comes out inf or nan, the copy is undone and
//! the derivative graphs built afresh, which makes the template anew. A
//! template is kept only when its nodes read nothing below `t` (a body that
//! names a variable of the session gives derivative nodes that read it, and
//! is built afresh every time). Defining or redefining any function forgets
//! every template (a body may call the one redefined).

use rustc_hash::FxHashMap;

use crate::engine::{Form, Graph, LocalRule, NodeId, Op};

use super::derivatives::DerivativeGroup;

/// The kept derivatives of user functions, by function name and order.
#[derive(Debug, Default, Clone)]
pub(super) struct DerivativeCache {
    templates: FxHashMap<(String, u8), Template>,
}

/// The derivative graphs of one call of `f''(a)`, relative to the call's
/// first node (the constant 0 of `t = a + 0`).
#[derive(Debug, Clone)]
struct Template {
    /// How many nodes the call's `t` and body take.
    body: usize,
    /// The rules of the body's nodes at each operand position: the branch a
    /// later body must take again.
    body_rules: Vec<Vec<LocalRule>>,
    /// Each derivative node's op, its operands (as indices) and, for
    /// constants, the value.
    nodes: Vec<(Op, Vec<u32>, f64)>,
    /// Each derivative node's rules, as `body_rules`.
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

/// The nodes from `start` to `end`.
fn ids(start: usize, end: usize) -> impl Iterator<Item = NodeId> {
    (start..end).map(|i| NodeId(i as u32))
}

impl DerivativeCache {
    /// Forgets every template (a function was defined or redefined).
    pub(super) fn clear(&mut self) {
        self.templates.clear();
    }

    /// Keeps the nodes from `body_end` to the graph's end as the template of
    /// `key` (function name and order), the call's nodes starting at `start`,
    /// with `result` its value's node and `groups` the derivative groups the
    /// build recorded. Nothing is kept if a derivative node is a variable leaf
    /// or reads a node below `start`.
    pub(super) fn remember(
        &mut self,
        key: (String, u8),
        graph: &Graph,
        (start, body_end): (usize, usize),
        result: NodeId,
        groups: &[DerivativeGroup],
    ) {
        let index = |id: NodeId| id.index().checked_sub(start).map(|i| i as u32);
        let mut nodes = Vec::with_capacity(graph.len() - body_end);
        let mut rules = Vec::with_capacity(graph.len() - body_end);
        for id in ids(body_end, graph.len()) {
            let op = graph.op(id);
            let operands: Option<Vec<u32>> = graph.operands(id).iter().map(|&o| index(o)).collect();
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
            body: body_end - start,
            body_rules: ids(start, body_end).map(|id| rules_at(graph, id)).collect(),
            nodes,
            rules,
            result,
            groups,
        };
        self.templates.insert(key, template);
    }

    /// Appends the template of `key` over the call whose nodes start at
    /// `start` (its `t` and body already built, up to the graph's end) and
    /// returns the result's node and the derivative groups (ids in the graph),
    /// or `None` — with the graph as it was — when there is no template, the
    /// body differs, or the copy takes another branch somewhere or meets inf
    /// or nan. At most `room` nodes are appended; `interrupted` is asked once
    /// a node (Ctrl-C undoes the copy too).
    pub(super) fn replay(
        &self,
        key: &(String, u8),
        graph: &mut Graph,
        start: usize,
        room: usize,
        mut interrupted: impl FnMut() -> bool,
    ) -> Option<(NodeId, Vec<DerivativeGroup>)> {
        let template = self.templates.get(key).filter(|t| t.nodes.len() <= room)?;
        let body_end = graph.len();
        let same_body = body_end - start == template.body
            && ids(start, body_end)
                .zip(&template.body_rules)
                .all(|(id, rules)| rules_at(graph, id) == *rules);
        if !same_body {
            return None;
        }
        let id = |i: u32| NodeId(start as u32 + i);
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
                graph.truncate(body_end);
                return None;
            }
        }
        let shift = |index: NodeId| Some(id(index.0));
        let groups = template
            .groups
            .iter()
            .filter_map(|g| g.moved(shift))
            .collect();
        Some((id(template.result), groups))
    }
}
