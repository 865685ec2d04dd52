//! Reverse topological order by an iterative depth-first search.

use super::interrupt::Poll;
use super::{Graph, NodeId};

impl Graph {
    /// The nodes reachable from `output`, in reverse topological order: `output`
    /// first, every node before its inputs, each reachable node exactly once.
    /// This is the order [`Graph::backward`] walks.
    ///
    /// A depth-first search visiting inputs in operand order, returning the
    /// postorder reversed, so the order is deterministic: for `z = x*y + x`
    /// (nodes x, y, mul, add) it is `[add, mul, y, x]`. The search uses an
    /// explicit stack and a visited bitset, never recursion, so any depth is safe.
    ///
    /// When the graph's interrupt asks to stop ([`Graph::set_interrupt`]) the
    /// search stops early and the order
    /// is incomplete: a caller that set an interrupt checks
    /// [`Graph::interrupted`] before using it.
    ///
    /// # Panics
    /// If `output` is not a node of this graph.
    pub fn topo_order(&self, output: NodeId) -> Vec<NodeId> {
        self.topo_order_above(output, NodeId(0))
    }

    /// [`Graph::topo_order`] of `output` cut below `min`: the nodes reachable
    /// from `output` along paths of nodes with ids `≥ min`, in reverse
    /// topological order. The search never looks at a node below `min` (it
    /// stops at the edge), so it costs what the nodes kept cost, however large
    /// the graph below them. Empty when `output < min`.
    ///
    /// This is `topo_order(output)` with the nodes below `min` left out, in the
    /// same order: operands have smaller ids than their node, so no node below
    /// `min` leads back above it, and the search visits the nodes kept as the
    /// full search does. The derivatives with respect to nodes `≥ min` flow
    /// only through these nodes, so it is all [`Graph::grad`]
    /// needs with `min` the smallest node differentiated with respect to.
    ///
    /// Ctrl-C stops it early as it does [`Graph::topo_order`].
    ///
    /// # Panics
    /// If `output` is not a node of this graph.
    pub fn topo_order_above(&self, output: NodeId, min: NodeId) -> Vec<NodeId> {
        assert!(
            output.index() < self.len(),
            "{output:?} is not a node of this graph"
        );
        if output < min {
            return Vec::new();
        }
        let mut visited = Bitset::new(min, output.index() + 1);
        let mut postorder = Vec::new();
        // Each entry is a node and how many of its inputs have been looked at.
        let mut stack: Vec<(NodeId, u32)> = vec![(output, 0)];
        visited.insert(output);
        let mut poll = Poll::of(self);
        while let Some(top) = stack.last_mut() {
            if poll.tick() {
                break;
            }
            let (node, next) = *top;
            // Reads only the node's structure: its operand count and ids.
            match self.operands(node).get(next as usize).copied() {
                Some(input) => {
                    top.1 += 1;
                    // The graph is acyclic (inputs always precede their node), so
                    // marking on push cannot cut a path short.
                    if input >= min && visited.insert(input) {
                        stack.push((input, 0));
                    }
                }
                None => {
                    stack.pop();
                    postorder.push(node);
                }
            }
        }
        postorder.reverse();
        postorder
    }
}

/// A fixed-size set of the node ids from `min` to `end` (exclusive), one bit
/// per node.
struct Bitset {
    min: usize,
    words: Vec<u64>,
}

impl Bitset {
    fn new(min: NodeId, end: usize) -> Bitset {
        Bitset {
            min: min.index(),
            words: vec![0; end.saturating_sub(min.index()).div_ceil(64)],
        }
    }

    /// Adds `id` (`min ≤ id < end`); true if it was not in the set yet.
    fn insert(&mut self, id: NodeId) -> bool {
        let i = id.index() - self.min;
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        let fresh = self.words[word] & bit == 0;
        self.words[word] |= bit;
        fresh
    }
}
