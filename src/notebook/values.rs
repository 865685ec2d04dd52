//! micrograd's `Value` on gradcalc's engine, for a notebook host: the
//! compiled Python module's `gradcalc.Value` (`python/src/value.rs`, pyo3)
//! and the WebAssembly build's under Pyodide (`web/wasm/src/values.rs`) are
//! handles to the slots of one [`Values`]: every value a node of one shared
//! [`Graph`] (the calculator's arena, op table, reverse topological sort and
//! backward walk), its gradient beside the node.
//!
//! Memory: a handle holds a slot, which names its node; a handle the host
//! drops [releases](Values::release) its slot. Nodes are appended as values
//! are computed; when the graph has doubled since the last collection, it is
//! compacted to what the live slots reach ([`Graph::retain_reachable`]) and
//! the slots renamed: a training loop that builds a new graph every step
//! (micrograd's way) stays within about twice the memory of what it keeps.

use std::collections::HashMap;

use crate::engine::{Arity, Graph, NodeId, Op};

use super::value_source;

/// A slot that names no node.
const FREE: u32 = u32::MAX;

/// The graph is not compacted below this many nodes.
const MIN_COLLECT: usize = 1 << 16;

/// An operand of [`Values::apply`]: a value's slot, or a number (which
/// becomes a constant node, as micrograd wraps a number in a `Value`).
#[derive(Debug, Clone, Copy)]
pub enum Operand {
    /// The value held in this slot.
    Value(u32),
    /// A plain number.
    Number(f64),
}

/// The nodes of every `Value`, their gradients, and the slots that name them.
#[derive(Debug)]
pub struct Values {
    graph: Graph,
    /// One gradient per node (micrograd's `.grad`).
    grads: Vec<f64>,
    /// The node of each slot, or [`FREE`].
    slots: Vec<u32>,
    /// Free slots, for reuse.
    free: Vec<u32>,
    /// `label`s given to nodes (by node index).
    labels: HashMap<u32, String>,
    /// The graph's size after the last collection.
    kept: usize,
}

impl Default for Values {
    fn default() -> Self {
        Values::new()
    }
}

impl Values {
    /// No values yet.
    pub fn new() -> Values {
        Values {
            graph: Graph::new(),
            grads: Vec::new(),
            slots: Vec::new(),
            free: Vec::new(),
            labels: HashMap::new(),
            kept: 0,
        }
    }

    /// The node of `slot`.
    fn node(&self, slot: u32) -> NodeId {
        NodeId(self.slots[slot as usize])
    }

    /// A slot for `id`.
    fn hold(&mut self, id: NodeId) -> u32 {
        if let Some(slot) = self.free.pop() {
            self.slots[slot as usize] = id.0;
            slot
        } else {
            self.slots.push(id.0);
            u32::try_from(self.slots.len() - 1).unwrap_or(FREE)
        }
    }

    /// A new node's gradient (0) and a slot for it; compacts the graph when it
    /// has doubled.
    fn added(&mut self, id: NodeId) -> u32 {
        self.grads.push(0.0);
        let slot = self.hold(id);
        if self.graph.len() >= MIN_COLLECT.max(2 * self.kept) {
            self.collect();
        }
        slot
    }

    /// Keeps only the nodes the live slots reach, renaming the slots, the
    /// gradients and the labels.
    fn collect(&mut self) {
        let roots: Vec<NodeId> = self
            .slots
            .iter()
            .filter(|&&s| s != FREE)
            .map(|&s| NodeId(s))
            .collect();
        let remap = self.graph.retain_reachable(&roots);
        for old in 0..remap.before() {
            if let Some(new) = remap.get(NodeId(old as u32)) {
                self.grads[new.index()] = self.grads[old];
            }
        }
        self.grads.truncate(remap.kept());
        self.grads.shrink_to_fit();
        for slot in &mut self.slots {
            if *slot != FREE {
                *slot = remap.get(NodeId(*slot)).map_or(FREE, |id| id.0);
            }
        }
        self.labels = std::mem::take(&mut self.labels)
            .into_iter()
            .filter_map(|(old, label)| remap.get(NodeId(old)).map(|new| (new.0, label)))
            .collect();
        self.kept = self.graph.len();
    }

    /// A new leaf holding `data`, named `label` in pictures (none when
    /// empty), in a new slot.
    pub fn leaf(&mut self, data: f64, label: &str) -> u32 {
        let id = self.graph.leaf(data);
        if !label.is_empty() {
            self.labels.insert(id.0, label.to_string());
        }
        self.added(id)
    }

    /// `op` applied to `inputs` (in operand order), in a new slot; the
    /// engine's message when `op` does not take that many inputs.
    pub fn apply(&mut self, op: Op, inputs: &[Operand]) -> Result<u32, String> {
        let ids: Vec<NodeId> = inputs
            .iter()
            .map(|operand| match *operand {
                Operand::Value(slot) => self.node(slot),
                Operand::Number(number) => {
                    self.grads.push(0.0);
                    self.graph.constant(number)
                }
            })
            .collect();
        let id = self
            .graph
            .apply(op, &ids)
            .map_err(|error| error.to_string())?;
        Ok(self.added(id))
    }

    /// Frees `slot` (its handle is gone); a slot already free is left alone.
    pub fn release(&mut self, slot: u32) {
        if let Some(node) = self.slots.get_mut(slot as usize)
            && *node != FREE
        {
            *node = FREE;
            self.free.push(slot);
        }
    }

    /// The forward value of `slot`.
    pub fn data(&self, slot: u32) -> f64 {
        self.graph.value(self.node(slot))
    }

    /// Sets a leaf's value (values built from it before keep theirs, as in
    /// micrograd). Errors: the message for a value computed by an op.
    pub fn set_data(&mut self, slot: u32, data: f64) -> Result<(), String> {
        let id = self.node(slot);
        let op = self.graph.op(id);
        if op != Op::Variable {
            return Err(format!(
                "only a leaf's data can be set: this Value is computed by `{}` from its inputs",
                op.info().name
            ));
        }
        self.graph.set_leaf_value(id, data);
        Ok(())
    }

    /// The gradient the last `backward` calls left at `slot` (0 at first).
    pub fn grad(&self, slot: u32) -> f64 {
        self.grads[self.node(slot).index()]
    }

    /// Sets the gradient at `slot` (micrograd's `p.grad = 0`).
    pub fn set_grad(&mut self, slot: u32, grad: f64) {
        let id = self.node(slot);
        self.grads[id.index()] = grad;
    }

    /// The name pictures and traces give `slot`'s node (empty for none).
    pub fn label(&self, slot: u32) -> String {
        let id = self.node(slot);
        self.labels.get(&id.0).cloned().unwrap_or_default()
    }

    /// Names `slot`'s node (an empty `label` removes its name).
    pub fn set_label(&mut self, slot: u32, label: &str) {
        let id = self.node(slot);
        if label.is_empty() {
            self.labels.remove(&id.0);
        } else {
            self.labels.insert(id.0, label.to_string());
        }
    }

    /// The op that computed `slot`'s value, as gradcalc names it (empty for
    /// a leaf or a constant).
    pub fn op_name(&self, slot: u32) -> String {
        match self.graph.op(self.node(slot)) {
            Op::Variable | Op::Const => String::new(),
            op => op.info().name.to_string(),
        }
    }

    /// A new slot for each input of `slot`'s node (numbers given to an
    /// operator are leaves here too), in operand order: micrograd's `_prev`.
    pub fn inputs(&mut self, slot: u32) -> Vec<u32> {
        let id = self.node(slot);
        let inputs = self.graph.operands(id).to_vec();
        inputs.into_iter().map(|input| self.hold(input)).collect()
    }

    /// How many nodes the shared graph holds now (for tests of its memory).
    pub fn nodes(&self) -> usize {
        self.graph.len()
    }

    /// The gradcalc statements that build the graph of `slot` (ending with
    /// `:backward` of it) and the name they give it (module `value_source`).
    pub fn source(&self, slot: u32) -> (String, String) {
        let root = self.node(slot);
        value_source::statements(&self.graph, root, |id| self.labels.get(&id.0).cloned())
    }

    /// micrograd's `backward()` from `slot`: its gradient set to 1, then for
    /// every node reachable, in reverse topological order, the chain rule
    /// adds upstream × local to each input's `.grad` (accumulation at
    /// fan-out, and onto what `.grad` held: micrograd never zeroes a
    /// gradient itself).
    pub fn backward(&mut self, slot: u32) {
        let root = self.node(slot);
        let order = self.graph.topo_order(root);
        // A node below the root whose `.grad` is already set passes it down
        // too (micrograd's walk reads every node's `.grad` as its upstream):
        // by linearity, one more walk from each such node, scaled by it.
        let seeded: Vec<(NodeId, f64)> = order
            .iter()
            .skip(1)
            .filter(|&&id| self.graph.op(id).info().arity != Arity::Leaf)
            .map(|&id| (id, self.grads[id.index()]))
            .filter(|&(_, grad)| grad != 0.0)
            .collect();
        let from_root = self.graph.backward(&order);
        for &id in order.iter().skip(1) {
            self.grads[id.index()] += from_root.get(id);
        }
        self.grads[root.index()] = 1.0;
        for (node, upstream) in seeded {
            let below = self.graph.topo_order(node);
            let grads = self.graph.backward(&below);
            for &id in below.iter().skip(1) {
                self.grads[id.index()] += upstream * grads.get(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micrograds_sanity_check_gives_its_numbers() {
        // micrograd's test_sanity_check (numbers from PyTorch): x = -4,
        // z = 2x + 2 + x, q = relu(z) + z·x, h = relu(z·z), y = h + q + q·x.
        use Operand::{Number as N, Value as V};
        let mut v = Values::new();
        let x = v.leaf(-4.0, "");
        let mut op = |op: Op, inputs: &[Operand]| v.apply(op, inputs).unwrap();
        let two_x = op(Op::Mul, &[N(2.0), V(x)]);
        let a = op(Op::Add, &[V(two_x), N(2.0)]);
        let z = op(Op::Add, &[V(a), V(x)]);
        let rz = op(Op::Relu, &[V(z)]);
        let zx = op(Op::Mul, &[V(z), V(x)]);
        let q = op(Op::Add, &[V(rz), V(zx)]);
        let zz = op(Op::Mul, &[V(z), V(z)]);
        let h = op(Op::Relu, &[V(zz)]);
        let hq = op(Op::Add, &[V(h), V(q)]);
        let qx = op(Op::Mul, &[V(q), V(x)]);
        let y = op(Op::Add, &[V(hq), V(qx)]);
        v.backward(y);
        assert_eq!((v.data(y), v.grad(x)), (-20.0, 46.0));
        assert_eq!(v.op_name(y), "+");
        assert_eq!(v.inputs(y).len(), 2);
        assert!(
            v.set_data(y, 1.0)
                .unwrap_err()
                .contains("only a leaf's data")
        );
        let (source, name) = v.source(y);
        assert_eq!(name, "out");
        assert!(source.ends_with(":backward out\n"));
    }

    #[test]
    fn a_released_slot_is_reused_and_released_once() {
        let mut v = Values::new();
        let a = v.leaf(1.0, "a");
        v.release(a);
        v.release(a);
        let b = v.leaf(2.0, "");
        let c = v.leaf(3.0, "");
        assert_eq!(b, a);
        assert_ne!(c, a);
        assert_eq!(v.data(b), 2.0);
    }
}
