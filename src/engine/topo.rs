//! Reverse topological order by an iterative depth-first search.

use super::{Graph, NodeId};
use crate::interrupt::Poll;

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
    /// After Ctrl-C ([`crate::interrupt`]) the search stops early and the order
    /// is incomplete: a caller that may run under Ctrl-C checks
    /// [`crate::interrupt::requested`] before using it.
    ///
    /// # Panics
    /// If `output` is not a node of this graph.
    pub fn topo_order(&self, output: NodeId) -> Vec<NodeId> {
        let mut visited = Bitset::new(self.len());
        let mut postorder = Vec::new();
        // Each entry is a node and how many of its inputs have been looked at.
        let mut stack: Vec<(NodeId, u32)> = vec![(output, 0)];
        visited.insert(output);
        let mut poll = Poll::new();
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
                    if visited.insert(input) {
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

/// A fixed-size set of node ids, one bit per node.
struct Bitset {
    words: Vec<u64>,
}

impl Bitset {
    fn new(len: usize) -> Bitset {
        Bitset {
            words: vec![0; len.div_ceil(64)],
        }
    }

    /// Adds `id`; true if it was not in the set yet.
    fn insert(&mut self, id: NodeId) -> bool {
        let (word, bit) = (id.index() / 64, 1u64 << (id.index() % 64));
        let fresh = self.words[word] & bit == 0;
        self.words[word] |= bit;
        fresh
    }
}
