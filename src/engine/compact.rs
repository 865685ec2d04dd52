//! Compaction: keep the nodes reachable from a set of roots, drop the rest,
//! and say where each kept node went. What a long session needs to stay small.

use super::{Graph, NodeId};

/// Where the nodes of a graph went when it was [compacted](Graph::retain_reachable):
/// old id → new id, or `None` for a node that was dropped.
#[derive(Debug, Clone)]
pub struct Remap {
    /// New index per old index; `u32::MAX` for dropped nodes.
    new: Vec<u32>,
    kept: usize,
}

const DROPPED: u32 = u32::MAX;

impl Remap {
    /// The new id of the node that was `old`, or `None` if it was dropped (or
    /// `old` was out of range).
    ///
    /// ```
    /// use gradcalc::engine::{Graph, Op};
    /// let mut g = Graph::new();
    /// let unused = g.leaf(1.0);
    /// let x = g.leaf(2.0);
    /// let y = g.apply(Op::Neg, &[x]).unwrap();
    /// let remap = g.retain_reachable(&[y]);
    /// assert_eq!(remap.get(unused), None);
    /// assert_eq!(remap.get(y).map(|id| g.value(id)), Some(-2.0));
    /// ```
    pub fn get(&self, old: NodeId) -> Option<NodeId> {
        match self.new.get(old.index()) {
            Some(&new) if new != DROPPED => Some(NodeId(new)),
            _ => None,
        }
    }

    /// How many nodes there were before.
    ///
    /// ```
    /// let mut g = gradcalc::engine::Graph::new();
    /// g.leaf(1.0);
    /// assert_eq!(g.retain_reachable(&[]).before(), 1);
    /// ```
    pub fn before(&self) -> usize {
        self.new.len()
    }

    /// How many nodes were kept.
    ///
    /// ```
    /// let mut g = gradcalc::engine::Graph::new();
    /// g.leaf(1.0);
    /// assert_eq!(g.retain_reachable(&[]).kept(), 0);
    /// ```
    pub fn kept(&self) -> usize {
        self.kept
    }
}

impl Graph {
    /// Marks the nodes reachable from `roots`: one entry per node, true if reached.
    ///
    /// Inputs always precede their node, so one sweep from the last node down
    /// to the first marks everything (no stack, no recursion).
    ///
    /// ```
    /// use gradcalc::engine::{Graph, Op};
    /// let mut g = Graph::new();
    /// let x = g.leaf(1.0);
    /// let _unused = g.leaf(2.0);
    /// let y = g.apply(Op::Exp, &[x]).unwrap();
    /// assert_eq!(g.reachable(&[y]), [true, false, true]);
    /// ```
    ///
    /// # Panics
    /// If a root is not a node of this graph.
    pub fn reachable(&self, roots: &[NodeId]) -> Vec<bool> {
        let mut live = vec![false; self.len()];
        for root in roots {
            live[root.index()] = true;
        }
        for i in (0..self.len()).rev() {
            if live[i] {
                for input in self.operands(NodeId(i as u32)) {
                    live[input.index()] = true;
                }
            }
        }
        live
    }

    /// Keeps only the nodes reachable from `roots`, in their order (so every
    /// node still comes after its inputs, and reverse topological orders map
    /// to reverse topological orders), and releases the memory of the rest.
    /// Works in place (the kept nodes are moved down, no second graph is
    /// built): the extra memory is the returned map, 4 bytes a node.
    /// Returns where every node went; ids not remapped through it are invalid.
    ///
    /// ```
    /// use gradcalc::engine::{Graph, Op};
    /// let mut g = Graph::new();
    /// let mut x = g.leaf(1.0);
    /// for _ in 0..1000 {
    ///     let c = g.constant(2.0);
    ///     x = g.apply(Op::Mul, &[x, c]).unwrap(); // the old x is garbage
    ///     x = g.leaf(g.value(x));
    /// }
    /// let remap = g.retain_reachable(&[x]);
    /// assert_eq!(g.len(), 1);
    /// assert_eq!(g.value(remap.get(x).unwrap()), 2f64.powi(1000));
    /// ```
    ///
    /// # Panics
    /// If a root is not a node of this graph.
    pub fn retain_reachable(&mut self, roots: &[NodeId]) -> Remap {
        // Marked in place of a bitset: `KEPT` for a node reached, then its new index.
        const KEPT: u32 = 0;
        let mut new = vec![DROPPED; self.len()];
        for root in roots {
            new[root.index()] = KEPT;
        }
        for i in (0..self.len()).rev() {
            if new[i] != DROPPED {
                for input in self.operands(NodeId(i as u32)) {
                    new[input.index()] = KEPT;
                }
            }
        }
        let kept = self.keep_in_place(&mut new, DROPPED);
        Remap { new, kept }
    }
}
