//! The walks over a graph other than backprop, for what a teacher asks beyond
//! the gradients: forward values again with some nodes moved (gradient checks,
//! plots), the nodes a move reaches
//! ([`Downstream`]), Kahn's dependency-counting order, and the paths from an
//! output to a node. The gradient at moved values is the backward walk itself
//! ([`Graph::backward_at`], `backward.rs`).
//!
//! Every walk here is a loop over a reverse topological order or an explicit
//! stack: nothing recurses over the graph.

use std::collections::BinaryHeap;

use super::{Graph, Kinks, NodeId};

/// The paths from an output to one node ([`Graph::paths`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Paths {
    /// The first paths found, at most the `limit` asked for, in depth-first
    /// order (inputs in operand order). Each path is its edges from the output
    /// down to the node: `(consumer, input position)`.
    pub paths: Vec<Vec<(NodeId, usize)>>,
    /// How many paths there are in all, counted by dynamic programming over the
    /// order (never enumerated): an `f64`, since the count can pass `u64::MAX`.
    pub count: f64,
}

/// Which nodes of an output's graph use each node, directly or not
/// ([`Graph::downstream`]): moving a node changes exactly its descendants, so a
/// gradient check re-evaluates those and nothing else.
#[derive(Debug, Clone)]
pub struct Downstream {
    /// The consumers of node `i` are `list[start[i]..start[i + 1]]`.
    start: Vec<u32>,
    list: Vec<NodeId>,
    /// Scratch marks for [`Downstream::descendants`], all false between calls.
    seen: Vec<bool>,
}

impl Downstream {
    /// `node` and every node of the order this was built from that depends on it,
    /// inputs before consumers: `node` comes first. Found with an explicit stack
    /// over the consumer lists, so the cost is that of the descendants and their
    /// edges (plus a sort of them), not of the whole graph. The order is ascending
    /// id, which is a forward (topological) order because the arena appends a
    /// node only after its inputs.
    ///
    /// # Panics
    /// If `node` is not a node of the graph this was built from.
    pub fn descendants(&mut self, node: NodeId) -> Vec<NodeId> {
        let mut found = vec![node];
        self.seen[node.index()] = true;
        let mut stack = vec![node];
        while let Some(next) = stack.pop() {
            let (from, to) = (self.start[next.index()], self.start[next.index() + 1]);
            for &consumer in &self.list[from as usize..to as usize] {
                if !self.seen[consumer.index()] {
                    self.seen[consumer.index()] = true;
                    found.push(consumer);
                    stack.push(consumer);
                }
            }
        }
        for id in &found {
            self.seen[id.index()] = false;
        }
        found.sort_unstable();
        found
    }
}

impl Graph {
    /// Forward values of the nodes in `order` (a [`Graph::topo_order`]) computed
    /// again, with the nodes in `overrides` given new values; the graph is not
    /// changed. Returns one value per node of the graph, indexed by
    /// [`NodeId::index`]: nodes outside `order` keep their stored value, and an
    /// overridden node takes its new value whatever its op (so an intermediate
    /// node can be moved, as a leaf can).
    ///
    /// # Panics
    /// If `order` or `overrides` hold an id that is not a node of this graph.
    pub fn reevaluate(&self, order: &[NodeId], overrides: &[(NodeId, f64)]) -> Vec<f64> {
        let mut values: Vec<f64> = (0..self.len())
            .map(|i| self.value(NodeId(i as u32)))
            .collect();
        let mut overridden = vec![false; self.len()];
        for &(id, value) in overrides {
            values[id.index()] = value;
            overridden[id.index()] = true;
        }
        let mut input_values = Vec::new();
        // Reverse topological order backwards: every input before its consumers.
        for &node in order.iter().rev() {
            if !overridden[node.index()] {
                self.forward_one(node, &mut values, &mut input_values);
            }
        }
        values
    }

    /// Computes again, in the order given, the forward value of each node of
    /// `nodes` (inputs before consumers, e.g. [`Downstream::descendants`] without
    /// the moved node) from the values in `values`, which holds one value per node
    /// of the graph and receives the new ones. Leaves keep their value. Costs one
    /// op per node of `nodes`, whatever the size of the graph.
    ///
    /// # Panics
    /// If `values` is shorter than the graph, or `nodes` holds an id that is
    /// not a node of this graph.
    pub fn forward_over(&self, nodes: &[NodeId], values: &mut [f64]) {
        let mut input_values = Vec::new();
        for &node in nodes {
            self.forward_one(node, values, &mut input_values);
        }
    }

    /// One node's forward value from its inputs' entries of `values` (a leaf keeps its entry).
    fn forward_one(&self, node: NodeId, values: &mut [f64], input_values: &mut Vec<f64>) {
        if self.op(node).is_leaf() {
            return;
        }
        input_values.clear();
        input_values.extend(self.operands(node).iter().map(|&i| values[i.index()]));
        values[node.index()] = (self.op(node).info().forward)(input_values);
    }

    /// The consumers of every node of `order` (a [`Graph::topo_order`]), for
    /// finding which nodes a moved node changes ([`Downstream::descendants`]).
    /// One pass over `order`; memory: one `u32` per node of the graph and one
    /// id per edge of `order`.
    ///
    /// # Panics
    /// If `order` holds an id that is not a node of this graph.
    pub fn downstream(&self, order: &[NodeId]) -> Downstream {
        // Compressed rows: the consumers of node i are list[start[i]..start[i + 1]].
        let mut start = vec![0u32; self.len() + 1];
        for &node in order {
            for &input in self.operands(node) {
                start[input.index() + 1] += 1;
            }
        }
        for i in 0..self.len() {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut list = vec![NodeId(0); start[self.len()] as usize];
        for &node in order {
            for &input in self.operands(node) {
                let slot = &mut fill[input.index()];
                list[*slot as usize] = node;
                *slot += 1;
            }
        }
        Downstream {
            start,
            list,
            seen: vec![false; self.len()],
        }
    }

    /// Kahn's order as PyTorch's autograd engine runs a backward pass: each
    /// node of `order` (a [`Graph::topo_order`]) waits until every use of it by
    /// the nodes of `order` has been processed; of the nodes ready, a leaf is
    /// taken first (PyTorch gives a leaf's `AccumulateGrad` node the highest
    /// sequence number, UINT64_MAX, "so it is called ASAP"), leaves in the
    /// order they became ready, and otherwise the most recently created node
    /// (the highest id: `ReadyQueue` in torch/csrc/autograd/engine.cpp pops
    /// the highest sequence number first). Starts with the output. Returns
    /// the nodes with their initial pending-consumer counts (uses, so `x*x`
    /// counts 2); like the depth-first order it is a reverse topological order
    /// of the same nodes. Constants, which have no node in PyTorch, are taken
    /// as leaves. Checked against PyTorch itself by `scripts/pytorch_kahn.py`.
    ///
    /// # Panics
    /// If `order` holds an id that is not a node of this graph.
    pub fn kahn_order(&self, order: &[NodeId]) -> Vec<(NodeId, u32)> {
        let mut pending = vec![0u32; self.len()];
        for &node in order {
            for &input in self.operands(node) {
                pending[input.index()] += 1;
            }
        }
        let initial = pending.clone();
        let mut result = Vec::with_capacity(order.len());
        // Max-heap keys: (is a leaf, rank, id); a leaf's rank falls with the
        // order it became ready in, another node's is its id.
        let mut ready: BinaryHeap<(bool, u64, u32)> = BinaryHeap::new();
        let mut leaves_ready = 0u64;
        let mut key = |node: NodeId| match self.op(node).is_leaf() {
            true => {
                leaves_ready += 1;
                (true, u64::MAX - leaves_ready, node.0)
            }
            false => (false, u64::from(node.0), node.0),
        };
        if let Some(&output) = order.first() {
            ready.push(key(output));
        }
        while let Some((_, _, id)) = ready.pop() {
            let node = NodeId(id);
            result.push((node, initial[node.index()]));
            for &input in self.operands(node) {
                pending[input.index()] -= 1;
                if pending[input.index()] == 0 {
                    ready.push(key(input));
                }
            }
        }
        result
    }

    /// The order a naive recursive backward visits the nodes of `output`'s
    /// graph, the one students write before they learn why backprop sorts:
    /// `visit(node)` handles `node`, then visits each input in operand order,
    /// skipping nodes visited already (depth-first preorder). Where a node has
    /// several consumers this is not a topological order: a node can come
    /// before one of its consumers, so a backward walk in this order
    /// ([`Graph::backward_traced`] takes any order) passes on, or reads at a
    /// leaf, a gradient that is not complete yet. Written with an explicit
    /// stack, not recursion.
    ///
    /// # Panics
    /// If `output` is not a node of this graph.
    pub fn naive_order(&self, output: NodeId) -> Vec<NodeId> {
        let mut seen = vec![false; self.len()];
        let mut order = Vec::new();
        let mut stack = vec![output];
        while let Some(node) = stack.pop() {
            if std::mem::replace(&mut seen[node.index()], true) {
                continue;
            }
            order.push(node);
            // Reversed, so the first input is visited next.
            stack.extend(self.operands(node).iter().rev());
        }
        order
    }

    /// The first node of `visit` (an order of one output's nodes, each once)
    /// that comes before one of its consumers, with the position of the
    /// latest such consumer: a node visited before all its uses passed it
    /// their gradient. `None` for a reverse topological order.
    ///
    /// # Panics
    /// If `visit` holds an id that is not a node of this graph.
    pub fn first_visited_too_early(&self, visit: &[NodeId]) -> Option<(usize, usize)> {
        // The position of each node's last consumer in `visit`.
        let mut last_use = vec![None::<usize>; self.len()];
        for (position, &node) in visit.iter().enumerate() {
            for &input in self.operands(node) {
                last_use[input.index()] = Some(position);
            }
        }
        visit.iter().enumerate().find_map(|(position, &node)| {
            last_use[node.index()]
                .filter(|&consumer| consumer > position)
                .map(|consumer| (position, consumer))
        })
    }

    /// The paths from the output `order[0]` down to `target`, each a list of
    /// edges, enumerated depth-first with an explicit stack until `limit` are
    /// found or the paths found hold `edge_budget` edges in all (a path through a
    /// long chain is long); [`Paths::count`] counts all of them. A node used twice by one
    /// consumer (`x*x`) gives two paths. No paths when `target` is not in `order`.
    ///
    /// By the chain rule the gradient is the sum over these paths of the product
    /// of the local derivatives along each; reverse mode gets that sum while
    /// visiting each node once, where the number of paths can grow exponentially.
    ///
    /// # Panics
    /// If `order` or `target` is not a node of this graph.
    pub fn paths(
        &self,
        order: &[NodeId],
        target: NodeId,
        limit: usize,
        edge_budget: usize,
    ) -> Paths {
        let Some(&output) = order.first() else {
            return Paths {
                paths: Vec::new(),
                count: 0.0,
            };
        };
        // Which nodes reach the target, inputs before their consumers.
        let mut reaches = vec![false; self.len()];
        reaches[target.index()] = true;
        for &node in order.iter().rev() {
            if self.operands(node).iter().any(|i| reaches[i.index()]) {
                reaches[node.index()] = true;
            }
        }
        // Paths from the output to each node, by dynamic programming.
        let mut count = vec![0.0f64; self.len()];
        count[output.index()] = 1.0;
        for &node in order {
            let here = count[node.index()];
            if here == 0.0 || node == target {
                continue;
            }
            for &input in self.operands(node) {
                count[input.index()] += here;
            }
        }
        let mut paths = Vec::new();
        if reaches[output.index()] && limit > 0 {
            // Each frame: a node and the next input position to try.
            let mut stack: Vec<(NodeId, usize)> = vec![(output, 0)];
            let mut edges: Vec<(NodeId, usize)> = Vec::new();
            let mut stored = 0;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                if node == target {
                    stored += edges.len();
                    if stored > edge_budget {
                        break;
                    }
                    paths.push(edges.clone());
                    if paths.len() >= limit {
                        break;
                    }
                    stack.pop();
                    edges.pop();
                    continue;
                }
                let inputs = self.operands(node);
                let position = *next;
                match inputs.get(position) {
                    Some(&input) => {
                        *next += 1;
                        if reaches[input.index()] {
                            edges.push((node, position));
                            stack.push((input, 0));
                        }
                    }
                    None => {
                        stack.pop();
                        edges.pop();
                    }
                }
            }
        }
        Paths {
            paths,
            count: count[target.index()],
        }
    }

    /// Whether the three forward evaluations `evaluations` (from
    /// [`Graph::reevaluate`]: one node moved by −h, not moved, moved by +h) make
    /// a node of `order` cross or touch a point where its op is not
    /// differentiable: 0 for `relu` and `abs`, a tie between different
    /// inputs of `max` or `min`, an integer for `floor`, `ceil`, `round`, 0 for
    /// `sign`. A central difference across such a point does not approximate
    /// the gradient.
    pub fn crosses_kink(&self, order: &[NodeId], evaluations: [&[f64]; 3]) -> bool {
        order.iter().any(|&node| {
            let inputs = self.operands(node);
            // The input's lowest and highest value over the three evaluations.
            let input_range = |shift: f64| range(evaluations.map(|v| v[inputs[0].index()] + shift));
            let touches_integer = |[lo, hi]: [f64; 2]| {
                lo.floor() != hi.floor() || lo == lo.floor() || hi == hi.floor()
            };
            match self.op(node).info().kinks {
                Kinks::Smooth => false,
                Kinks::AtZero => {
                    let [lo, hi] = input_range(0.0);
                    lo <= 0.0 && 0.0 <= hi
                }
                Kinks::AtIntegers => touches_integer(input_range(0.0)),
                Kinks::AtHalfIntegers => touches_integer(input_range(0.5)),
                Kinks::AtTies => {
                    let winners = evaluations.map(|v| winner(inputs, v, v[node.index()]));
                    // A tie between two different nodes, or a change of winner.
                    winners.iter().any(|w| w.is_none())
                        || winners[0] != winners[2]
                        || winners[0] != winners[1]
                }
            }
        })
    }
}

/// The smallest and largest of three numbers.
fn range(values: [f64; 3]) -> [f64; 2] {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    [lo, hi]
}

/// The input node of a `max` (or `min`) whose value is the result `best`;
/// `None` when different nodes tie (or none has it: a nan). The same node
/// used twice (`max(x, x)`) is no tie.
fn winner(inputs: &[NodeId], values: &[f64], best: f64) -> Option<NodeId> {
    let mut tied = inputs.iter().filter(|i| values[i.index()] == best);
    let first = *tied.next()?;
    tied.all(|&i| i == first).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Op;

    /// colah's `e = (a + b)(b + 1)` at a = 2, b = 1: nodes a, b, c, 1, d, e.
    fn colah() -> (Graph, [NodeId; 3]) {
        let mut g = Graph::new();
        let a = g.leaf(2.0);
        let b = g.leaf(1.0);
        let c = g.apply(Op::Add, &[a, b]).unwrap();
        let one = g.constant(1.0);
        let d = g.apply(Op::Add, &[b, one]).unwrap();
        let e = g.apply(Op::Mul, &[c, d]).unwrap();
        (g, [a, b, e])
    }

    #[test]
    fn reevaluation_moves_a_leaf_without_changing_the_graph() {
        let (g, [a, b, e]) = colah();
        let order = g.topo_order(e);
        let values = g.reevaluate(&order, &[(b, 2.0)]);
        assert_eq!(values[e.index()], 12.0); // (2 + 2)(2 + 1)
        assert_eq!(g.value(e), 6.0);
        let grads = g.backward_at(&order, &values);
        assert_eq!(grads[a], 3.0);
        assert_eq!(grads[b], 7.0); // d + c = 3 + 4
        let same = g.backward_at(&order, &g.reevaluate(&order, &[]));
        assert_eq!(same.as_slice(), g.backward(&order).as_slice());
    }

    #[test]
    fn a_move_reevaluates_exactly_the_descendants() {
        let (g, [a, b, e]) = colah();
        let order = g.topo_order(e);
        let mut downstream = g.downstream(&order);
        // b feeds c = a + b and d = b + 1, which feed e: ids 1, 2, 4, 5.
        let from_b = downstream.descendants(b);
        assert_eq!(from_b, [b, NodeId(2), NodeId(4), e]);
        assert_eq!(downstream.descendants(a), [a, NodeId(2), e]);
        assert_eq!(downstream.descendants(e), [e]);
        // Re-evaluating only those nodes gives what a full re-evaluation gives.
        let mut values: Vec<f64> = (0..g.len()).map(|i| g.value(NodeId(i as u32))).collect();
        values[b.index()] = 2.0;
        g.forward_over(&from_b[1..], &mut values);
        assert_eq!(values, g.reevaluate(&order, &[(b, 2.0)]));
        assert_eq!(values[e.index()], 12.0); // (2 + 2)(2 + 1)
        // A node outside the order has no descendants in it.
        let mut g = g;
        let lone = g.leaf(7.0);
        let mut downstream = g.downstream(&order);
        assert_eq!(downstream.descendants(lone), [lone]);
    }

    #[test]
    fn paths_sum_to_the_gradient_and_are_counted_beyond_the_limit() {
        let (g, [a, b, e]) = colah();
        let order = g.topo_order(e);
        let paths = g.paths(&order, b, 64, 4096);
        assert_eq!(paths.count, 2.0);
        assert_eq!(paths.paths.len(), 2);
        let values = g.reevaluate(&order, &[]);
        let sum: f64 = paths
            .paths
            .iter()
            .map(|path| {
                path.iter()
                    .map(|&(node, position)| {
                        let inputs: Vec<f64> =
                            g.operands(node).iter().map(|i| values[i.index()]).collect();
                        (g.op(node).info().local)(&inputs, values[node.index()], position)
                    })
                    .product::<f64>()
            })
            .sum();
        assert_eq!(sum, g.backward(&order)[b]);
        assert_eq!(g.paths(&order, a, 64, 4096).count, 1.0);

        // A chain of 100 doublings y = y + y has 2^100 paths: counted, not enumerated.
        let mut g = Graph::new();
        let x = g.leaf(1.0);
        let mut y = x;
        for _ in 0..100 {
            y = g.apply(Op::Add, &[y, y]).unwrap();
        }
        let order = g.topo_order(y);
        let paths = g.paths(&order, x, 64, 10_000);
        assert_eq!(paths.paths.len(), 64);
        assert_eq!(paths.count, 2f64.powi(100));
        // Paths of 100 edges: a budget of 1000 edges keeps 10 of them.
        assert_eq!(g.paths(&order, x, 64, 1000).paths.len(), 10);
    }

    #[test]
    fn kahn_waits_for_every_use() {
        let (g, [a, b, e]) = colah();
        let order = g.topo_order(e);
        let kahn = g.kahn_order(&order);
        assert_eq!(kahn.len(), order.len());
        let position = |id: NodeId| kahn.iter().position(|&(n, _)| n == id).unwrap();
        // b is used by c and by d: it comes after both, with 2 pending consumers.
        assert_eq!(kahn[position(b)].1, 2);
        for &(node, _) in &kahn {
            for &input in g.operands(node) {
                assert!(position(node) < position(input));
            }
        }
        assert_eq!(kahn[position(a)].1, 1);
    }

    #[test]
    fn kinks_are_found_where_the_step_reaches_them() {
        let mut g = Graph::new();
        let x = g.leaf(0.0);
        let r = g.apply(Op::Relu, &[x]).unwrap();
        let order = g.topo_order(r);
        let h = 1e-5;
        let lo = g.reevaluate(&order, &[(x, -h)]);
        let mid = g.reevaluate(&order, &[]);
        let hi = g.reevaluate(&order, &[(x, h)]);
        assert!(g.crosses_kink(&order, [&lo, &mid, &hi]));
        let lo = g.reevaluate(&order, &[(x, 1.0 - h)]);
        let mid = g.reevaluate(&order, &[(x, 1.0)]);
        let hi = g.reevaluate(&order, &[(x, 1.0 + h)]);
        assert!(!g.crosses_kink(&order, [&lo, &mid, &hi]));
        // max(x, x) has no kink: the same node on both sides.
        let m = g.apply(Op::Max, &[x, x]).unwrap();
        let order = g.topo_order(m);
        let lo = g.reevaluate(&order, &[(x, -h)]);
        let mid = g.reevaluate(&order, &[]);
        let hi = g.reevaluate(&order, &[(x, h)]);
        assert!(!g.crosses_kink(&order, [&lo, &mid, &hi]));
    }
}
