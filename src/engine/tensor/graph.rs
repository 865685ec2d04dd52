//! The tensor arena: nodes appended in evaluation order, each with its
//! value held once; the memory budget; truncation; and the rerun after
//! leaves change.

use std::sync::Arc;

use super::{
    BudgetError, GradientBudgetError, Shape, ShapeError, Tensor, TensorError, TensorGraph,
    TensorId, TensorOp,
};
use crate::engine::{Graph, Interrupt, NodeId, Op, debug_holder};

/// One node's structure: its op and up to two operands.
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    pub(super) op: TensorOp,
    operands: [TensorId; 2],
    count: u8,
}

/// The default memory budget: 2²⁷ numbers (1 GiB of float64) held by the
/// values of one tensor graph.
pub const DEFAULT_BUDGET: usize = 1 << 27;

/// What a tensor graph's long loops poll: none by default.
#[derive(Clone, Default)]
pub(super) struct Hook(pub(super) Option<Arc<dyn Interrupt>>);

impl std::fmt::Debug for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        debug_holder(f, "Hook", self.0.as_ref().map(|_| "set"))
    }
}

impl Hook {
    /// True when an interrupt is set and asks to stop now.
    pub(super) fn asks_to_stop(&self) -> bool {
        self.0.as_ref().is_some_and(|i| i.should_stop())
    }
}

impl Default for TensorGraph {
    fn default() -> TensorGraph {
        TensorGraph::new()
    }
}

impl TensorGraph {
    /// An empty tensor graph with the [`DEFAULT_BUDGET`].
    pub fn new() -> TensorGraph {
        TensorGraph::with_budget(DEFAULT_BUDGET)
    }

    /// An empty tensor graph whose values may hold at most `elements` numbers
    /// in all ([`TensorGraph::check_budget`]).
    pub fn with_budget(elements: usize) -> TensorGraph {
        TensorGraph {
            nodes: Vec::new(),
            values: Vec::new(),
            held: 0,
            budget: elements,
            moved: Vec::new(),
            mirrors: Vec::new(),
            interrupt: Hook::default(),
        }
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True if the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// How many numbers the nodes' values hold in all.
    pub fn held(&self) -> usize {
        self.held
    }

    /// The most numbers the values may hold in all.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Checks that a value of `shape` fits in what the budget has left, before
    /// anything is allocated: call it before making a large tensor
    /// ([`Tensor::zeros`], [`Tensor::randn`], …) to put in the graph; every
    /// method that appends a node checks it too. A backward pass's gradients
    /// are checked by [`TensorGraph::check_gradient_budget`].
    ///
    /// # Errors
    /// [`BudgetError`] when `held + shape.len()` is over the budget.
    pub fn check_budget(&self, shape: Shape) -> Result<(), BudgetError> {
        let left = self.budget.saturating_sub(self.held);
        if shape.len() > left {
            return Err(BudgetError {
                shape,
                left,
                budget: self.budget,
            });
        }
        Ok(())
    }

    /// Checks that the gradients of a backward pass from `output` fit in
    /// what the budget has left beside the values held: one number per
    /// element of every node the pass reaches (each gradient is held once).
    /// Call it before [`TensorGraph::backward`] or
    /// [`TensorGraph::backward_traced`].
    ///
    /// # Errors
    /// [`GradientBudgetError`] when `held` plus those numbers is over the budget.
    ///
    /// # Panics
    /// If `output` is not a node of this graph.
    pub fn check_gradient_budget(&self, output: TensorId) -> Result<(), GradientBudgetError> {
        let need: usize = self
            .topo_order(output)
            .iter()
            .map(|&id| self.shape(id).len())
            .sum();
        let left = self.budget.saturating_sub(self.held);
        if need > left {
            return Err(GradientBudgetError {
                need,
                left,
                budget: self.budget,
            });
        }
        Ok(())
    }

    /// Removes every node and its value. Ids handed out before are no longer valid.
    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Removes the nodes appended after the first `len` and their values, so
    /// that a statement that failed leaves nothing (the scalar graph's
    /// [`Graph::truncate`] does the same). Ids of removed nodes are no longer
    /// valid; nothing else changes.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.nodes.len() {
            return;
        }
        let freed: usize = self.values[len..].iter().map(Tensor::len).sum();
        self.held -= freed;
        self.nodes.truncate(len);
        self.values.truncate(len);
        self.moved.retain(|id| id.index() < len);
        self.mirrors.retain(|(id, _)| id.index() < len);
    }

    /// Appends a variable leaf holding `value`: a tensor that gradients are
    /// taken for.
    ///
    /// # Errors
    /// [`BudgetError`] when the value does not fit in the budget.
    pub fn leaf(&mut self, value: Tensor) -> Result<TensorId, BudgetError> {
        self.check_budget(value.shape())?;
        Ok(self.push(TensorOp::Variable, &[], value))
    }

    /// Appends a constant leaf holding `value` (a literal).
    ///
    /// # Errors
    /// [`BudgetError`] when the value does not fit in the budget.
    pub fn constant(&mut self, value: Tensor) -> Result<TensorId, BudgetError> {
        self.check_budget(value.shape())?;
        Ok(self.push(TensorOp::Const, &[], value))
    }

    /// Appends a node of shape `()` standing for the scalar graph's node `id`,
    /// whose value is `value` (the scalar graph's [`Graph::value`] of `id`):
    /// a scalar operand of tensor ops. Its gradient comes back in
    /// [`TensorGradients::scalars`](super::TensorGradients::scalars).
    pub fn scalar(&mut self, id: NodeId, value: f64) -> TensorId {
        self.push(TensorOp::Scalar(id), &[], Tensor::scalar(value))
    }

    /// Appends a copy of the scalar graph's node `id`, the op `op` over
    /// `operands` (nodes of shape `()` standing for its operands, in order),
    /// whose value is `value` (the scalar graph's [`Graph::value`] of `id`):
    /// an elementwise node of shape `()` whose value is read from the scalar
    /// graph, as a [`TensorOp::Scalar`] node's is ([`TensorGraph::rerun`]),
    /// and whose backward passes the upstream gradient to its operands by
    /// `op`'s rule. A copy of a number's ops down to the scalar leaves
    /// (which enter by [`TensorGraph::scalar`]) lets a walk of this graph go
    /// through them. A constant (`op` [`Op::Const`], no operands) is a
    /// constant leaf of shape `()`. Returns `None`, appending nothing, when
    /// `op` does not apply elementwise to that many operands or an operand
    /// is not of shape `()`.
    ///
    /// # Panics
    /// If an operand is not a node of this graph.
    pub fn mirror(
        &mut self,
        op: Op,
        operands: &[TensorId],
        id: NodeId,
        value: f64,
    ) -> Option<TensorId> {
        if op == Op::Const && operands.is_empty() {
            return Some(self.push(TensorOp::Const, &[], Tensor::scalar(value)));
        }
        let elementwise = TensorOp::Elementwise(op);
        let fits = elementwise.operand_count() == Some(operands.len())
            && operands.iter().all(|&o| self.shape(o) == Shape::scalar());
        if !fits {
            return None;
        }
        let node = self.push(elementwise, operands, Tensor::scalar(value));
        self.mirrors.push((node, id));
        Some(node)
    }

    /// The scalar graph's node that `node` stands for: the node a
    /// [`TensorOp::Scalar`] node reads or a [`TensorGraph::mirror`] copies;
    /// `None` for every other node.
    ///
    /// # Panics
    /// If `node` is not a node of this graph.
    pub fn stands_for(&self, node: TensorId) -> Option<NodeId> {
        match self.op(node) {
            TensorOp::Scalar(id) => Some(id),
            _ => self.mirrored(node),
        }
    }

    /// The scalar graph's node that `node` copies, when it is a
    /// [`TensorGraph::mirror`].
    pub fn mirrored(&self, node: TensorId) -> Option<NodeId> {
        self.mirrors
            .binary_search_by_key(&node, |&(id, _)| id)
            .ok()
            .map(|k| self.mirrors[k].1)
    }

    /// The nodes that copy an op of the scalar graph
    /// ([`TensorGraph::mirror`]), each with the scalar node it copies, in
    /// the order of their ids.
    pub fn mirrors(&self) -> impl Iterator<Item = (TensorId, NodeId)> + '_ {
        self.mirrors.iter().copied()
    }

    /// The scalar graph's nodes this graph reads (the ids of its
    /// [`TensorOp::Scalar`] nodes and of the nodes its mirrors copy), each
    /// as often as it is read: what a compaction of the scalar graph must
    /// keep ([`Graph::retain_reachable`]'s roots).
    pub fn scalar_reads(&self) -> impl Iterator<Item = NodeId> + '_ {
        let reads = self.nodes.iter().filter_map(|node| match node.op {
            TensorOp::Scalar(id) => Some(id),
            _ => None,
        });
        reads.chain(self.mirrors.iter().map(|&(_, id)| id))
    }

    /// Renumbers the scalar nodes this graph reads after the scalar graph
    /// was compacted: each [`TensorOp::Scalar`] node's id, and each
    /// mirror's, becomes `remap.get(id)`.
    ///
    /// # Panics
    /// If a node this graph reads was dropped by the compaction (a caller
    /// keeps every one of [`TensorGraph::scalar_reads`]).
    pub fn remap_scalars(&mut self, remap: &crate::engine::Remap) {
        let get = |id: NodeId| {
            remap
                .get(id)
                .expect("the scalar nodes a tensor graph reads are kept")
        };
        for node in &mut self.nodes {
            if let TensorOp::Scalar(id) = &mut node.op {
                *id = get(*id);
            }
        }
        for (_, id) in &mut self.mirrors {
            *id = get(*id);
        }
    }

    /// Appends a node applying `op` to `inputs` (in operand order), checking
    /// the shapes and the budget, and computing its value now.
    ///
    /// # Errors
    /// [`TensorError::Shape`] when the shapes break the op's rule (the error
    /// names them and the rule), a label is not a class, the op is a leaf or a scalar op that does
    /// not apply elementwise, or the operand count is wrong;
    /// [`TensorError::Budget`] when the value would not fit in the budget;
    /// [`TensorError::Interrupted`] when the graph's interrupt asked a long
    /// kernel (a matrix product, between blocks) to stop: nothing is appended.
    ///
    /// # Panics
    /// If an input id is not a node of this graph.
    pub fn apply(&mut self, op: TensorOp, inputs: &[TensorId]) -> Result<TensorId, TensorError> {
        let shapes: Vec<Shape> = inputs.iter().map(|&id| self.shape(id)).collect();
        let out = op.output_shape(&shapes)?;
        self.check_budget(out)?;
        let values: Vec<&Tensor> = inputs.iter().map(|&id| self.value(id)).collect();
        op.check_values(&values)?;
        let hook = &self.interrupt;
        let value = op
            .forward(&values, out, &|| hook.asks_to_stop())
            .ok_or(TensorError::Interrupted)?;
        Ok(self.push(op, inputs, value))
    }

    /// The value of a node.
    ///
    /// # Panics
    /// If `id` is not a node of this graph.
    pub fn value(&self, id: TensorId) -> &Tensor {
        &self.values[id.index()]
    }

    /// The shape of a node's value.
    ///
    /// # Panics
    /// If `id` is not a node of this graph.
    pub fn shape(&self, id: TensorId) -> Shape {
        self.values[id.index()].shape()
    }

    /// The op of a node.
    ///
    /// # Panics
    /// If `id` is not a node of this graph.
    pub fn op(&self, id: TensorId) -> TensorOp {
        self.nodes[id.index()].op
    }

    /// The operands of a node, in order; empty for leaves.
    ///
    /// # Panics
    /// If `id` is not a node of this graph.
    pub fn operands(&self, id: TensorId) -> &[TensorId] {
        let node = &self.nodes[id.index()];
        &node.operands[..usize::from(node.count)]
    }

    /// Sets the value of a variable leaf (a parameter after an optimiser
    /// step, `:=`). The nodes built on it keep their old values until
    /// [`TensorGraph::rerun`].
    ///
    /// # Errors
    /// [`ShapeError::LeafShape`] when `value`'s shape is not the leaf's.
    ///
    /// # Panics
    /// If `id` is not a [`TensorOp::Variable`] node of this graph.
    pub fn set_leaf_value(&mut self, id: TensorId, value: Tensor) -> Result<(), ShapeError> {
        assert_eq!(
            self.op(id),
            TensorOp::Variable,
            "only a variable leaf's value can be set"
        );
        let expected = self.shape(id);
        if value.shape() != expected {
            return Err(ShapeError::LeafShape {
                expected,
                got: value.shape(),
            });
        }
        self.values[id.index()] = value;
        self.moved.push(id);
        Ok(())
    }

    /// Computes again the value of every node that depends on a leaf set by
    /// [`TensorGraph::set_leaf_value`] since the last rerun, or on a
    /// [`TensorOp::Scalar`] node or mirror ([`TensorGraph::mirror`]) whose
    /// scalar value in `scalars` changed, in arena order (operands come
    /// before their users), so that every value is the forward pass at the
    /// new leaves. Shapes do not change, so
    /// nothing can fail. Returns false when the graph's interrupt stopped it
    /// early (then the values are a mix: run it again).
    pub fn rerun(&mut self, scalars: &Graph) -> bool {
        let mut dirty = vec![false; self.nodes.len()];
        for id in std::mem::take(&mut self.moved) {
            dirty[id.index()] = true;
        }
        let mut mirrors = self.mirrors.iter().peekable();
        for i in 0..self.nodes.len() {
            let mirror = mirrors
                .next_if(|(id, _)| id.index() == i)
                .map(|&(_, id)| id);
            if self.interrupt.asks_to_stop() {
                // Keep what is not redone yet marked, so a second rerun finishes.
                self.moved
                    .extend((0..self.nodes.len()).filter(|&k| dirty[k]).map(to_id));
                return false;
            }
            let node = self.nodes[i];
            match (node.op, mirror) {
                (TensorOp::Variable | TensorOp::Const, _) => {}
                (TensorOp::Scalar(id), _) | (_, Some(id)) => {
                    let value = scalars.value(id);
                    if self.values[i].data()[0].to_bits() != value.to_bits() {
                        self.values[i] = Tensor::scalar(value);
                        dirty[i] = true;
                    }
                }
                (op, None) => {
                    let operands = &node.operands[..usize::from(node.count)];
                    if operands.iter().any(|o| dirty[o.index()]) {
                        let inputs: Vec<&Tensor> =
                            operands.iter().map(|&o| self.value(o)).collect();
                        let hook = &self.interrupt;
                        let stop = || hook.asks_to_stop();
                        let Some(value) = op.forward(&inputs, self.values[i].shape(), &stop) else {
                            // Stopped inside the kernel: what made this node
                            // dirty stays marked, so a second rerun redoes it.
                            self.moved
                                .extend((0..self.nodes.len()).filter(|&k| dirty[k]).map(to_id));
                            return false;
                        };
                        self.values[i] = value;
                        dirty[i] = true;
                    }
                }
            }
        }
        true
    }

    /// Sets the interrupt this graph's long loops poll ([`TensorGraph::rerun`],
    /// the backward walks, once a node); replaces any set before.
    pub fn set_interrupt(&mut self, interrupt: Arc<dyn Interrupt>) {
        self.interrupt = Hook(Some(interrupt));
    }

    /// True when the graph's interrupt asks to stop now: a caller checks it
    /// after a walk that may have stopped early.
    pub fn interrupted(&self) -> bool {
        self.interrupt.asks_to_stop()
    }

    /// The nodes reachable from `output`, in reverse topological order:
    /// `output` first, every node before its operands, each once. Operands
    /// are appended before their users, so descending ids are such an order:
    /// one loop down from `output` marks the operands of every node it
    /// keeps, and keeps the marked ones (no search, no stack). A tensor
    /// graph has few nodes (each is a whole tensor), so the loop over the
    /// ids below `output` costs nothing next to the kernels.
    ///
    /// # Panics
    /// If `output` is not a node of this graph.
    pub fn topo_order(&self, output: TensorId) -> Vec<TensorId> {
        assert!(
            output.index() < self.len(),
            "{output:?} is not a node of this graph"
        );
        let mut reached = vec![false; output.index() + 1];
        reached[output.index()] = true;
        let mut order = Vec::new();
        for i in (0..=output.index()).rev() {
            if reached[i] {
                let id = to_id(i);
                for operand in self.operands(id) {
                    reached[operand.index()] = true;
                }
                order.push(id);
            }
        }
        order
    }

    /// Appends a node with its operands and value.
    fn push(&mut self, op: TensorOp, operands: &[TensorId], value: Tensor) -> TensorId {
        let id = to_id(self.nodes.len());
        let mut packed = [TensorId(0); 2];
        packed[..operands.len()].copy_from_slice(operands);
        self.nodes.push(Node {
            op,
            operands: packed,
            count: u8::try_from(operands.len()).expect("at most two operands"),
        });
        self.held += value.len();
        self.values.push(value);
        id
    }

    /// The interrupt hook, for the walks.
    pub(super) fn hook(&self) -> &Hook {
        &self.interrupt
    }
}

fn to_id(n: usize) -> TensorId {
    TensorId(u32::try_from(n).expect("a tensor graph holds at most u32::MAX nodes"))
}
