//! The arena: nodes appended in evaluation order; a node's op and operands
//! never change once appended (a leaf's value may, see `set_leaf_value`).

use super::{Arity, ArityError, Graph, NodeId, Op};

/// One node's structure: its op, its operand count and its operands (12
/// bytes). Its forward value lives at the same index of `Graph::values` (8
/// bytes): the topological sort reads only the structure, so keeping the values
/// apart makes it touch less memory, and the count byte lets it step through a
/// node's operands without looking the op up in the op table.
///
/// Up to two operands are kept inline in `packed` (a unary node uses the
/// first); a node with more (`min`, `max`) keeps the start and length of its
/// slice of `Graph::spilled` there instead, and `arity` is [`SPILLED`]. Only
/// [`Graph::push`] packs and only [`Graph::operands`] unpacks.
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    packed: [NodeId; 2],
    op: Op,
    /// How many operands are inline in `packed` (0, 1 or 2), or [`SPILLED`].
    arity: u8,
}

/// [`Node::arity`] of a node whose operands are in `Graph::spilled`.
const SPILLED: u8 = u8::MAX;

impl Graph {
    /// An empty graph.
    pub fn new() -> Graph {
        Graph {
            nodes: Vec::new(),
            values: Vec::new(),
            spilled: Vec::new(),
            interrupt: Default::default(),
        }
    }

    /// An empty graph with room for `nodes` nodes before it reallocates.
    pub fn with_capacity(nodes: usize) -> Graph {
        Graph {
            nodes: Vec::with_capacity(nodes),
            values: Vec::with_capacity(nodes),
            spilled: Vec::new(),
            interrupt: Default::default(),
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
        self.spilled.clear();
    }

    /// Removes the nodes appended after the first `len`, so that work nobody
    /// refers to (the evaluation of a constant expression) leaves no trace.
    /// Ids of removed nodes are no longer valid; nothing else changes.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.nodes.len() {
            return;
        }
        // Spilled operands are appended in node order, so the removed nodes'
        // are the tail of the side vector.
        let removed: usize = (len..self.nodes.len())
            .filter(|&i| self.nodes[i].arity == SPILLED)
            .map(|i| self.operands(NodeId(i as u32)).len())
            .sum();
        self.spilled.truncate(self.spilled.len() - removed);
        self.nodes.truncate(len);
        self.values.truncate(len);
    }

    /// Compaction in place: moves the nodes to keep down over the others, in
    /// their order, and releases the memory of the rest. `new` has one entry
    /// per node, `dropped` for a node to drop and anything else for one to
    /// keep; every operand of a kept node must be kept. On return each kept
    /// node's entry is its new index (its operands renumbered to match), and
    /// the graph holds the kept nodes only. Returns how many were kept.
    ///
    /// No second graph is built: each kept node is read once and written at
    /// or below its old index (operands come before their users, so theirs
    /// are renumbered by then), and the same for the spilled operands.
    pub(super) fn keep_in_place(&mut self, new: &mut [u32], dropped: u32) -> usize {
        debug_assert_eq!(new.len(), self.nodes.len());
        let mut kept = 0;
        let mut spilled = 0;
        for i in 0..self.nodes.len() {
            if new[i] == dropped {
                continue;
            }
            let mut node = self.nodes[i];
            match node.arity {
                SPILLED => {
                    let [start, len] = node.packed.map(NodeId::index);
                    // `spilled` ≤ `start`: each operand is read before its
                    // slot can be overwritten.
                    for k in 0..len {
                        let operand = self.spilled[start + k];
                        self.spilled[spilled + k] = NodeId(new[operand.index()]);
                    }
                    node.packed = [NodeId(to_u32(spilled)), NodeId(to_u32(len))];
                    spilled += len;
                }
                inline => {
                    for operand in &mut node.packed[..usize::from(inline)] {
                        *operand = NodeId(new[operand.index()]);
                    }
                }
            }
            self.nodes[kept] = node;
            self.values[kept] = self.values[i];
            new[i] = to_u32(kept);
            kept += 1;
        }
        self.nodes.truncate(kept);
        self.values.truncate(kept);
        self.spilled.truncate(spilled);
        self.nodes.shrink_to_fit();
        self.values.shrink_to_fit();
        self.spilled.shrink_to_fit();
        kept
    }

    /// Appends a variable (an [`Op::Variable`] leaf) with the given value: an input
    /// that gradients are taken for.
    ///
    /// # Panics
    /// If the graph already holds `u32::MAX` nodes.
    pub fn leaf(&mut self, value: f64) -> NodeId {
        self.push(Op::Variable, value, &[])
    }

    /// Appends a literal number (an [`Op::Const`] leaf) with the given value.
    ///
    /// # Panics
    /// If the graph already holds `u32::MAX` nodes.
    pub fn constant(&mut self, value: f64) -> NodeId {
        self.push(Op::Const, value, &[])
    }

    /// Appends a node that applies `op` to `inputs` (in operand order: `a - b`
    /// is `[a, b]`), computing its forward value now from the inputs' values.
    ///
    /// # Errors
    /// [`ArityError`] if `op` does not take `inputs.len()` inputs; a leaf op
    /// (`Variable`, `Const`) takes none through `apply` — use [`Graph::leaf`] or
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
        let value = match *inputs {
            [a] => (info.forward)(&[self.value(a)]),
            [a, b] => (info.forward)(&[self.value(a), self.value(b)]),
            _ => {
                let values: Vec<f64> = inputs.iter().map(|&id| self.value(id)).collect();
                (info.forward)(&values)
            }
        };
        Ok(self.push(op, value, inputs))
    }

    /// Appends the unary `op` applied to `a` (arity checked by the caller: `Var`'s methods).
    pub(super) fn apply_unary(&mut self, op: Op, a: NodeId) -> NodeId {
        debug_assert_eq!(op.info().arity, Arity::Unary);
        let value = (op.info().forward)(&[self.value(a)]);
        self.push(op, value, &[a])
    }

    /// Appends the binary `op` applied to `a` and `b` (arity checked by the caller).
    pub(super) fn apply_binary(&mut self, op: Op, a: NodeId, b: NodeId) -> NodeId {
        debug_assert_eq!(op.info().arity, Arity::Binary);
        let value = (op.info().forward)(&[self.value(a), self.value(b)]);
        self.push(op, value, &[a, b])
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
    /// If `id` is not an [`Op::Variable`] node of this graph.
    pub fn set_leaf_value(&mut self, id: NodeId, value: f64) {
        assert_eq!(
            self.nodes[id.index()].op,
            Op::Variable,
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

    /// The operands of a node in order (`a - b` gives `[a, b]`; `x * x`
    /// gives `[x, x]`); empty for leaves. The one place a node's operands are
    /// unpacked: the sort, the backward walk, compaction and the teaching
    /// walks all read them here.
    ///
    /// # Panics
    /// If `id` is not a node of this graph.
    pub fn operands(&self, id: NodeId) -> &[NodeId] {
        let node = &self.nodes[id.index()];
        match node.arity {
            SPILLED => {
                let [start, len] = node.packed.map(NodeId::index);
                &self.spilled[start..start + len]
            }
            inline => &node.packed[..inline as usize],
        }
    }

    /// The size of one node in the arena, in bytes (20: 12 of structure, 8 of
    /// value), not counting the operands of a `min`/`max` of more than two,
    /// which take 4 bytes each in a side vector.
    pub fn node_bytes() -> usize {
        std::mem::size_of::<Node>() + std::mem::size_of::<f64>()
    }

    /// The heap memory the graph holds, in bytes (allocated capacity).
    pub fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.values.capacity() * std::mem::size_of::<f64>()
            + self.spilled.capacity() * std::mem::size_of::<NodeId>()
    }

    /// Appends a node with its forward value and its operands, packing them as
    /// [`Node`] says: up to two inline, more into the side vector.
    pub(super) fn push(&mut self, op: Op, value: f64, operands: &[NodeId]) -> NodeId {
        let id = NodeId(to_u32(self.nodes.len()));
        let (packed, arity) = match *operands {
            [] => ([NodeId(0); 2], 0),
            [a] => ([a, NodeId(0)], 1),
            [a, b] => ([a, b], 2),
            _ => {
                let start = NodeId(to_u32(self.spilled.len()));
                self.spilled.extend_from_slice(operands);
                ([start, NodeId(to_u32(operands.len()))], SPILLED)
            }
        };
        self.nodes.push(Node { packed, op, arity });
        self.values.push(value);
        id
    }

    /// The forward values of every node, indexed by [`NodeId::index`].
    pub(super) fn values(&self) -> &[f64] {
        &self.values
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).expect("a graph holds at most u32::MAX nodes and inputs")
}
