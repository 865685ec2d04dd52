//! The backward pass recorded as a graph: ∂output/∂x built from nodes, so that
//! a derivative is a value like any other (printed, assigned, used in
//! arithmetic, differentiated again).
//!
//! The walk is the backward pass's: the reverse topological order of the
//! output, the output's gradient seeded with the constant 1, and for each node
//! and each input the chain rule `upstream × local`, accumulated with `+` where
//! an input fans out. Here every one of these is a node: the local derivative
//! is built by the caller (the session instantiates the op's [`Rule`] over the
//! operand nodes, see `Op::rule`), and a rule that passes nothing adds nothing,
//! as in the backward pass.
//!
//! The rules of smooth ops are one expression for every point, so a derivative
//! graph evaluated again at moved leaves (`Graph::update_leaf`) is the one that
//! would be built there. Rules at kinks are piecewise at the *current* point
//! (`relu'` is the constant 1 where u > 0, nothing where u ≤ 0): a derivative
//! graph keeps the branch it was built on when a leaf later moves across a kink
//! (`x := -1`). PyTorch's `create_graph=True` has the same property.
//!
//! [`Rule`]: super::Rule

use super::{Graph, NodeId, Op};
use crate::interrupt::Poll;

impl Graph {
    /// Appends `op(inputs)`, or a constant with the same value when every input
    /// is a constant (so constant arithmetic of derivative rules folds away).
    ///
    /// # Errors
    /// As [`Graph::apply`]: the wrong number of inputs for `op`.
    pub fn apply_folded(&mut self, op: Op, inputs: &[NodeId]) -> Result<NodeId, super::ArityError> {
        let id = self.apply(op, inputs)?;
        if inputs.iter().all(|&input| self.op(input) == Op::Const) {
            let value = self.value(id);
            self.truncate(id.index());
            return Ok(self.constant(value));
        }
        Ok(id)
    }

    /// The derivatives of the output `order[0]` with respect to each node of
    /// `wrt`, built as nodes of this graph: entry `i` is the node of
    /// `∂output/∂wrt[i]` (the constant 0 where no path from the output reaches it).
    ///
    /// `order` is [`Graph::topo_order`] of the output, or
    /// [`Graph::topo_order_above`] of it cut at any `min` up to the smallest
    /// `wrt` node: the nodes below that cannot depend on a `wrt` node (operands
    /// have smaller ids), so both orders build the same nodes, one for one.
    /// The cut order is the one to pass: with the scratch space, which covers
    /// only the ids from the smallest `wrt` node up, the work is then
    /// independent of the graph below it (`f'(2)` appends `t = 2 + 0` and
    /// differentiates with respect to it: a few nodes, in a graph of a million).
    /// `local(graph, node, position)` appends the local derivative
    /// `∂node/∂inputs[position]` at the current point and returns its node, or
    /// `None` where the op passes nothing there (the rule's `PassesNothing`).
    ///
    /// Only nodes that depend on some `wrt` node carry a derivative, and
    /// gradient flows only into inputs that do: the nodes appended are at most a
    /// constant number per edge of the output's graph between `wrt` and the
    /// output (a local derivative's expression, a product, a sum at fan-out),
    /// so the derivative graph is linear in the size of the original. A local
    /// derivative that is the constant 1 is not multiplied (`upstream` is used
    /// as it is), −1 becomes a negation, and an upstream gradient of constant 1
    /// is not multiplied either.
    ///
    /// After Ctrl-C (or past a preview's time budget, [`crate::interrupt`])
    /// the walk stops early and the derivatives are incomplete: callers that
    /// may run under either check [`crate::interrupt::requested`].
    ///
    /// # Panics
    /// If `order` or `wrt` holds an id that is not a node of this graph.
    pub fn derivative_graph(
        &mut self,
        order: &[NodeId],
        wrt: &[NodeId],
        mut local: impl FnMut(&mut Graph, NodeId, usize) -> Option<NodeId>,
    ) -> Vec<NodeId> {
        let len = self.len();
        // No node below the smallest `wrt` node depends on one: the scratch
        // space holds slot `i - base` for node `i ≥ base` only.
        let Some(base) = wrt.iter().map(|x| x.index()).min() else {
            return Vec::new();
        };
        assert!(
            base < len,
            "{:?} is not a node of this graph",
            NodeId(base as u32)
        );
        let slot = |id: NodeId| id.index().checked_sub(base);
        // depends[i - base]: node i is one of `wrt` or is built from one.
        let mut depends = vec![false; len - base];
        let depends_on = |depends: &[bool], id: NodeId| slot(id).is_some_and(|i| depends[i]);
        for &x in wrt {
            depends[x.index() - base] = true;
        }
        for &node in order.iter().rev() {
            let Some(i) = slot(node) else { continue };
            if !depends[i] {
                let flag = self.operands(node).iter().any(|&o| depends_on(&depends, o));
                depends[i] = flag;
            }
        }
        let mut grads: Vec<Option<NodeId>> = vec![None; len - base];
        if let Some(&output) = order.first() {
            if depends_on(&depends, output) {
                grads[output.index() - base] = Some(self.constant(1.0));
            }
        }
        let mut inputs = Vec::new();
        let mut poll = Poll::new();
        for &node in order {
            if poll.tick() {
                break; // Ctrl-C: the caller sees it and discards the nodes
            }
            let Some(upstream) = slot(node).and_then(|i| grads[i]) else {
                continue;
            };
            inputs.clear();
            inputs.extend_from_slice(self.operands(node));
            for (position, &input) in inputs.iter().enumerate() {
                if !depends_on(&depends, input) {
                    continue;
                }
                let Some(local) = local(self, node, position) else {
                    continue; // the op passes nothing here
                };
                let contribution = self.chain(upstream, local);
                let i = input.index() - base;
                grads[i] = Some(match grads[i] {
                    None => contribution,
                    Some(before) => self.fold(Op::Add, &[before, contribution]),
                });
            }
        }
        wrt.iter()
            .map(|&x| match grads[x.index() - base] {
                Some(g) => g,
                None => self.constant(0.0),
            })
            .collect()
    }

    /// `upstream × local` as a node, without multiplying by a constant 1 or −1.
    fn chain(&mut self, upstream: NodeId, local: NodeId) -> NodeId {
        let constant = |g: &Graph, id: NodeId| (g.op(id) == Op::Const).then(|| g.value(id));
        match (constant(self, upstream), constant(self, local)) {
            (_, Some(1.0)) => upstream,
            (Some(1.0), _) => local,
            (_, Some(-1.0)) => self.fold(Op::Neg, &[upstream]),
            _ => self.fold(Op::Mul, &[upstream, local]),
        }
    }

    /// [`Graph::apply_folded`] for an op whose arity is right by construction.
    fn fold(&mut self, op: Op, inputs: &[NodeId]) -> NodeId {
        self.apply_folded(op, inputs)
            .unwrap_or_else(|_| unreachable!("{} takes {} inputs", op.info().name, inputs.len()))
    }
}
