//! The arena: nodes appended in evaluation order, never mutated.

use super::{Arity, ArityError, Graph, NodeId, Op};

/// One node's structure: its op and its inputs (12 bytes). Its forward value
/// lives at the same index of `Graph::values` (8 bytes): the topological sort
/// reads only the structure, so keeping the values apart makes it touch less
/// memory.
///
/// A unary or binary node keeps its input ids in `inputs` (a unary node uses
/// the first); a variadic node (`min`, `max`) keeps the start and length of its
/// slice of `Graph::variadic_inputs` there instead.
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    pub(super) inputs: [NodeId; 2],
    pub(super) op: Op,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Graph {
        Graph {
            nodes: Vec::new(),
            values: Vec::new(),
            variadic_inputs: Vec::new(),
        }
    }

    /// An empty graph with room for `nodes` nodes before it reallocates.
    pub fn with_capacity(nodes: usize) -> Graph {
        Graph {
            nodes: Vec::with_capacity(nodes),
            values: Vec::with_capacity(nodes),
            variadic_inputs: Vec::new(),
        }
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True if the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes every node. Ids handed out before are no longer valid.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.values.clear();
        self.variadic_inputs.clear();
    }

    /// Removes the nodes appended after the first `len`, so that work nobody
    /// refers to (the evaluation of a constant expression) leaves no trace.
    /// Ids of removed nodes are no longer valid; nothing else changes.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.nodes.len() {
            return;
        }
        let first_variadic = self.nodes[len..]
            .iter()
            .filter(|node| node.op.info().arity == Arity::Variadic)
            .map(|node| node.inputs[0].index())
            .min();
        if let Some(start) = first_variadic {
            self.variadic_inputs.truncate(start);
        }
        self.nodes.truncate(len);
        self.values.truncate(len);
    }

    /// Appends a variable (an [`Op::Input`] leaf) with the given value: an input
    /// that gradients are taken for.
    ///
    /// # Panics
    /// If the graph already holds `u32::MAX` nodes.
    pub fn leaf(&mut self, value: f64) -> NodeId {
        self.push(Op::Input, value, NO_INPUTS)
    }

    /// Appends a literal number (an [`Op::Const`] leaf) with the given value.
    ///
    /// # Panics
    /// If the graph already holds `u32::MAX` nodes.
    pub fn constant(&mut self, value: f64) -> NodeId {
        self.push(Op::Const, value, NO_INPUTS)
    }

    /// Appends a node that applies `op` to `inputs` (in operand order: `a - b`
    /// is `[a, b]`), computing its forward value now from the inputs' values.
    ///
    /// # Errors
    /// [`ArityError`] if `op` does not take `inputs.len()` inputs; a leaf op
    /// (`Input`, `Const`) takes none through `apply` — use [`Graph::leaf`] or
    /// [`Graph::constant`].
    ///
    /// # Panics
    /// If an input id is not a node of this graph (a programmer error), or the
    /// graph already holds `u32::MAX` nodes.
    pub fn apply(&mut self, op: Op, inputs: &[NodeId]) -> Result<NodeId, ArityError> {
        let info = op.info();
        if !info.arity.accepts(inputs.len()) {
            return Err(ArityError {
                op: info.name,
                expected: info.arity.expected(),
                got: inputs.len(),
            });
        }
        let id = match info.arity {
            Arity::Unary => {
                let value = (info.forward)(&[self.value(inputs[0])]);
                self.push(op, value, [inputs[0], NodeId(0)])
            }
            Arity::Binary => {
                let value = (info.forward)(&[self.value(inputs[0]), self.value(inputs[1])]);
                self.push(op, value, [inputs[0], inputs[1]])
            }
            Arity::Variadic => {
                let values: Vec<f64> = inputs.iter().map(|&id| self.value(id)).collect();
                let value = (info.forward)(&values);
                let start = self.variadic_inputs.len();
                self.variadic_inputs.extend_from_slice(inputs);
                self.push(
                    op,
                    value,
                    [NodeId(to_u32(start)), NodeId(to_u32(inputs.len()))],
                )
            }
            Arity::Leaf => unreachable!("Arity::accepts is false for leaves"),
        };
        Ok(id)
    }

    /// Appends the unary `op` applied to `a` (arity checked by the caller: `Var`'s methods).
    pub(super) fn apply_unary(&mut self, op: Op, a: NodeId) -> NodeId {
        debug_assert_eq!(op.info().arity, Arity::Unary);
        let value = (op.info().forward)(&[self.value(a)]);
        self.push(op, value, [a, NodeId(0)])
    }

    /// Appends the binary `op` applied to `a` and `b` (arity checked by the caller).
    pub(super) fn apply_binary(&mut self, op: Op, a: NodeId, b: NodeId) -> NodeId {
        debug_assert_eq!(op.info().arity, Arity::Binary);
        let value = (op.info().forward)(&[self.value(a), self.value(b)]);
        self.push(op, value, [a, b])
    }

    /// Sets the value of a variable leaf, e.g. a parameter after an optimiser
    /// step. Nodes already built on it keep their old values, so this is for a
    /// leaf whose users have been [truncated](Graph::truncate) (or not built yet).
    ///
    /// ```
    /// let mut g = gradcalc::engine::Graph::new();
    /// let w = g.leaf(1.0);
    /// g.set_leaf_value(w, 0.5);
    /// assert_eq!(g.value(w), 0.5);
    /// ```
    ///
    /// # Panics
    /// If `id` is not an [`Op::Input`] node of this graph.
    pub fn set_leaf_value(&mut self, id: NodeId, value: f64) {
        assert_eq!(
            self.nodes[id.index()].op,
            Op::Input,
            "only a variable leaf's value can be set"
        );
        self.values[id.index()] = value;
    }

    /// The forward value of a node.
    ///
    /// # Panics
    /// If `id` is not a node of this graph.
    pub fn value(&self, id: NodeId) -> f64 {
        self.values[id.index()]
    }

    /// The op of a node.
    ///
    /// # Panics
    /// If `id` is not a node of this graph.
    pub fn op(&self, id: NodeId) -> Op {
        self.nodes[id.index()].op
    }

    /// The inputs of a node in operand order (`a - b` gives `[a, b]`; `x * x`
    /// gives `[x, x]`); empty for leaves.
    ///
    /// # Panics
    /// If `id` is not a node of this graph.
    pub fn inputs(&self, id: NodeId) -> &[NodeId] {
        let node = &self.nodes[id.index()];
        match node.op.info().arity {
            Arity::Leaf => &[],
            Arity::Unary => &node.inputs[..1],
            Arity::Binary => &node.inputs,
            Arity::Variadic => {
                let [start, len] = node.inputs.map(NodeId::index);
                &self.variadic_inputs[start..start + len]
            }
        }
    }

    /// A node's op, value and inline input ids (see [`Node`]), in one lookup.
    pub(super) fn node_parts(&self, id: NodeId) -> (Op, f64, [NodeId; 2]) {
        let node = &self.nodes[id.index()];
        (node.op, self.values[id.index()], node.inputs)
    }

    /// The size of one node in the arena, in bytes (20: 12 of structure, 8 of
    /// value), not counting the inputs of `min`/`max`, which take 4 bytes each
    /// in a side vector.
    pub fn node_bytes() -> usize {
        std::mem::size_of::<Node>() + std::mem::size_of::<f64>()
    }

    /// The heap memory the graph holds, in bytes (allocated capacity).
    pub fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.values.capacity() * std::mem::size_of::<f64>()
            + self.variadic_inputs.capacity() * std::mem::size_of::<NodeId>()
    }

    fn push(&mut self, op: Op, value: f64, inputs: [NodeId; 2]) -> NodeId {
        let id = NodeId(to_u32(self.nodes.len()));
        self.nodes.push(Node { inputs, op });
        self.values.push(value);
        id
    }
}

/// The inline inputs of a leaf (unused).
const NO_INPUTS: [NodeId; 2] = [NodeId(0), NodeId(0)];

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).expect("a graph holds at most u32::MAX nodes and inputs")
}
