//! Changing a variable in place: a leaf gets a new value and every node built
//! from it is evaluated again, without building new nodes (`b := 3`).

use super::{Graph, NodeId, Op};

impl Graph {
    /// Sets the variable leaf `leaf` to `value` and re-evaluates every node that
    /// depends on it, in topological order; returns those nodes (by id, which is
    /// a topological order: inputs come before their consumers).
    ///
    /// The structure of the graph does not change, so a reverse topological
    /// order computed before stays valid. One pass over the nodes appended after
    /// `leaf`, with one flag per node: a node is evaluated again (through the op
    /// table's forward function) only if one of its inputs changed, so the
    /// arithmetic done is linear in the number of dependents. Nodes that do not
    /// depend on `leaf` keep their values.
    ///
    /// ```
    /// let mut g = gradcalc::engine::Graph::new();
    /// let x = g.leaf(2.0);
    /// let y = g.apply(gradcalc::engine::Op::Mul, &[x, x]).unwrap();
    /// assert_eq!(g.update_leaf(x, 3.0), vec![y]);
    /// assert_eq!(g.value(y), 9.0);
    /// ```
    ///
    /// # Panics
    /// If `leaf` is not an [`Op::Variable`] node of this graph (the session checks
    /// before it calls).
    pub fn update_leaf(&mut self, leaf: NodeId, value: f64) -> Vec<NodeId> {
        self.update_leaves(&[(leaf, value)])
    }

    /// Sets several variable leaves at once (`w1, b := …, …`: one step of
    /// gradient descent) and re-evaluates every node that depends on any of
    /// them once, in topological order; returns those nodes by increasing id.
    /// The same pass as [`Graph::update_leaf`], from the smallest leaf
    /// changed. Nothing changes when `updates` is empty.
    ///
    /// # Panics
    /// If a node of `updates` is not an [`Op::Variable`] node of this graph.
    pub fn update_leaves(&mut self, updates: &[(NodeId, f64)]) -> Vec<NodeId> {
        let Some(first) = updates.iter().map(|(leaf, _)| leaf.index()).min() else {
            return Vec::new();
        };
        // changed[i - first]: node i was evaluated again (or is a leaf set).
        let mut changed = vec![false; self.len() - first];
        for &(leaf, value) in updates {
            assert_eq!(
                self.op(leaf),
                Op::Variable,
                "only a variable leaf can be updated"
            );
            self.values[leaf.index()] = value;
            changed[leaf.index() - first] = true;
        }
        let mut updated = Vec::new();
        let mut values = Vec::new();
        for i in first + 1..self.len() {
            let id = NodeId(i as u32);
            if changed[i - first] {
                continue;
            }
            let inputs = self.operands(id);
            let touched = inputs
                .iter()
                .any(|input| input.index() >= first && changed[input.index() - first]);
            if !touched {
                continue;
            }
            values.clear();
            values.extend(inputs.iter().map(|&input| self.values[input.index()]));
            self.values[i] = (self.op(id).info().forward)(&values);
            changed[i - first] = true;
            updated.push(id);
        }
        updated
    }
}
