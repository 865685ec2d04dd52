//! Reverse mode: one walk over the reverse topological order, applying the
//! chain rule at the forward values it is given, optionally recording each step.
//! [`Graph::backward`], [`Graph::backward_traced`], [`Graph::backward_at`]
//! and the iterator [`Graph::backward_steps`] are that one walk: one per-node
//! body, `Walk::visit`, run in a loop or one node per step.

use super::interrupt::Poll;
use super::scaled::{Losses, Scaled, scaled_local};
use super::{Contribution, Gradients, Graph, NodeId, Shortcut, Step};

impl Graph {
    /// Gradients of the output `order[0]` with respect to every node, by reverse
    /// mode.
    ///
    /// `order` must be what [`Graph::topo_order`] returned for that output
    /// (output first, every node before its inputs). The output's gradient is
    /// seeded with 1; then, for each node in order and each of its operands, the
    /// chain rule adds `upstream × local` to the operand's gradient, so fan-out
    /// accumulates. Nodes not in `order` have gradient 0; an empty `order` gives
    /// all zeros. Where the op passes no gradient ([`OpInfo::passes`]: relu
    /// at u ≤ 0, floor, detach, …) the operand's gradient is not touched, so
    /// `sqrt(relu(x))` at 0 gives 0; everywhere else the product is computed,
    /// so `0 × inf` gives nan (`sqrt(x)^2` at 0).
    ///
    /// Where an upstream gradient or a local derivative leaves the f64 range
    /// although the true one is a finite nonzero number (`1/exp(x)` at x = 400
    /// passes −3.7e-348 to `exp(x)`), and what was lost could change a
    /// gradient (a gradient that ends 0 or subnormal, or one that a local
    /// derivative downstream multiplies back into the range), the walk is done
    /// again with gradients of unbounded exponent (`scaled.rs`), so every
    /// gradient that is itself a normal number comes out right (∂y/∂x =
    /// −1.9e-174 there, not 0). Losses that change no gradient beyond its
    /// rounding (the `0.5^k` upstream gradients of a deep fan-out, lost past
    /// k ≈ 1075 while ∂y/∂x is 4) do not send the walk again.
    ///
    /// [`OpInfo::passes`]: super::OpInfo::passes
    ///
    /// # Panics
    /// If `order` holds an id that is not a node of this graph.
    pub fn backward(&self, order: &[NodeId]) -> Gradients {
        self.walk(order, self.values(), &mut NoTrace)
    }

    /// The same walk as [`Graph::backward`], also returning one [`Step`] per
    /// node of `order`, in order: its upstream gradient and, for each operand
    /// position, the local derivative, the product, the operand's gradient
    /// before and after, and which of the operand's uses this is. Leaves get a
    /// step with no contributions, whose upstream is their final gradient.
    ///
    /// # Panics
    /// If `order` holds an id that is not a node of this graph.
    pub fn backward_traced(&self, order: &[NodeId]) -> (Gradients, Vec<Step>) {
        self.backward_traced_where(order, |_| true)
    }

    /// [`Graph::backward_traced`], keeping only the steps whose 0-based position
    /// in `order` satisfies `keep` (still in order). The walk and the gradients
    /// are the same; memory grows only with the steps kept, so a summary of a
    /// huge graph's trace costs no more than its gradients.
    ///
    /// # Panics
    /// If `order` holds an id that is not a node of this graph.
    pub fn backward_traced_where(
        &self,
        order: &[NodeId],
        keep: impl Fn(usize) -> bool,
    ) -> (Gradients, Vec<Step>) {
        let mut steps = self.backward_steps(order, keep);
        let kept = steps.by_ref().collect();
        (steps.into_gradients(), kept)
    }

    /// The gradients of the output `order[0]`, as [`Graph::backward`] computes
    /// them, but at the forward values `values` (one per node, as returned by
    /// [`Graph::reevaluate`]) instead of the stored ones: the same walk, so the
    /// same chain rule and the same "passes nothing" ([`OpInfo::passes`]).
    ///
    /// [`OpInfo::passes`]: super::OpInfo::passes
    ///
    /// # Panics
    /// If `values` is shorter than the graph, or `order` holds an id that is
    /// not a node of this graph.
    pub fn backward_at(&self, order: &[NodeId], values: &[f64]) -> Gradients {
        self.walk(order, values, &mut NoTrace)
    }

    /// A traced backward walk as an iterator: the walk of
    /// [`Graph::backward_traced_where`], one node at a time, yielding the
    /// [`Step`] of each node whose 0-based position in `order` satisfies
    /// `keep`, in order. Only the walk's state is held (the gradients and two
    /// use counts a node), never the steps already yielded, so a listing of
    /// every step of a huge graph costs no more than its gradients.
    /// [`BackwardSteps::gradients`] gives the gradients so far. When the
    /// graph's interrupt asks to stop ([`Graph::set_interrupt`]) the iterator
    /// ends early.
    ///
    /// `order` is anything that reads as the order (a slice, a `Vec`, a shared
    /// handle to one), kept by the iterator.
    ///
    /// # Panics
    /// If `order` holds an id that is not a node of this graph.
    pub fn backward_steps<O: AsRef<[NodeId]>, F: Fn(usize) -> bool>(
        &self,
        order: O,
        keep: F,
    ) -> BackwardSteps<'_, O, F> {
        let trace = Trace::new(self, order.as_ref(), keep);
        let walk = Walk::new(self, order.as_ref(), self.values());
        BackwardSteps {
            order,
            next: 0,
            walk,
            trace,
            poll: Poll::of(self),
        }
    }

    /// The backward pass, shared by every method above but
    /// [`Graph::backward_steps`] (which runs the same [`Walk::visit`] one node
    /// at a time): walks `order` once, reading forward values from `values`
    /// (one per node), and tells `recorder` every step. When the interrupt asks
    /// ([`Graph::set_interrupt`]) it stops early and the gradients are incomplete:
    /// callers that may run under Ctrl-C check [`Graph::interrupted`].
    /// If what left the f64 range on the way could change a gradient
    /// ([`Losses`]), the walk is done again by [`Graph::walk_scaled`].
    fn walk<R: Recorder>(&self, order: &[NodeId], values: &[f64], recorder: &mut R) -> Gradients {
        let mut walk = Walk::new(self, order, values);
        let mut poll = Poll::of(self);
        for &node in order {
            if poll.tick() {
                return Gradients { grads: walk.grads };
            }
            walk.visit(node, recorder);
        }
        if walk.losses.rescale {
            return self.walk_scaled(order, values);
        }
        Gradients { grads: walk.grads }
    }

    /// The backward walk with every gradient a [`Scaled`] number (an f64
    /// mantissa and an unbounded exponent) and the local derivatives that leave
    /// the f64 range recomputed in that form ([`scaled_local`]): the same chain
    /// rule, the same "passes nothing", the same rounding wherever the numbers
    /// are normal f64s. The slow path of [`Graph::walk`], taken only when the
    /// f64 walk lost something below or above the range that could change a
    /// gradient ([`Losses`]).
    fn walk_scaled(&self, order: &[NodeId], values: &[f64]) -> Gradients {
        let mut grads = vec![Scaled::ZERO; self.len()];
        if let Some(&output) = order.first() {
            grads[output.index()] = Scaled::ONE;
        }
        let mut poll = Poll::of(self);
        let mut x = Vec::new();
        for &node in order {
            if poll.tick() {
                break;
            }
            let upstream = grads[node.index()];
            let (info, out) = (self.op(node).info(), values[node.index()]);
            let operands = self.operands(node);
            x.clear();
            x.extend(operands.iter().map(|o| values[o.index()]));
            for (position, &operand) in operands.iter().enumerate() {
                if !info.passes(&x, out, position) {
                    continue;
                }
                let local = scaled_local(info, &x, out, position)
                    .unwrap_or_else(|| Scaled::from_f64((info.local)(&x, out, position)));
                let slot = &mut grads[operand.index()];
                *slot = slot.add(upstream.mul(local));
            }
        }
        Gradients {
            grads: grads.into_iter().map(Scaled::to_f64).collect(),
        }
    }
}

/// The state of one backward walk: the gradients so far and scratch space for
/// the operands' values. [`Walk::visit`] is the walk's one per-node body.
struct Walk<'a> {
    graph: &'a Graph,
    values: &'a [f64],
    grads: Vec<f64>,
    /// The operands' values: up to two in an array, more in a vector.
    pair: [f64; 2],
    many: Vec<f64>,
    /// What left the f64 range on the way, and whether it could change a
    /// gradient.
    losses: Losses,
}

impl<'a> Walk<'a> {
    /// A walk of `order` over `graph` at forward values `values`, its output
    /// `order[0]` seeded with 1.
    fn new(graph: &'a Graph, order: &[NodeId], values: &'a [f64]) -> Walk<'a> {
        let mut grads = vec![0.0; graph.len()];
        if let Some(&output) = order.first() {
            grads[output.index()] = 1.0; // ∂output/∂output
        }
        Walk {
            graph,
            values,
            grads,
            pair: [0.0; 2],
            many: Vec::new(),
            losses: Losses::new(),
        }
    }

    /// The chain rule at `node`, the next node of the order: its gradient is
    /// complete (every node using it came earlier), and each operand receives
    /// `upstream × local`; `recorder` is told the node and every edge.
    // Inlined into each walk's loop: as a call it cost a fifth more
    // instructions a node (callgrind, W4).
    #[inline(always)]
    fn visit<R: Recorder>(&mut self, node: NodeId, recorder: &mut R) {
        let (graph, values) = (self.graph, self.values);
        // ∂output/∂node, complete: every node using this one came earlier.
        let upstream = self.grads[node.index()];
        recorder.node(node, upstream);
        let op = graph.op(node);
        let operands = graph.operands(node);
        if self.losses.at(node.index()) != 0.0 {
            self.spread_losses(node, upstream);
        }
        if !R::RECORDS
            && let Some(shortcut) = op.shortcut()
        {
            if add_sub_mul(shortcut, operands, upstream, values, &mut self.grads) && upstream != 0.0
            {
                // A product of `·` is not normal, and not for a zero upstream
                // (an exact 0, W3's past depth 1075): what did it lose?
                let (a, b) = (operands[0].index(), operands[1].index());
                let len = self.grads.len();
                let losses = &mut self.losses;
                losses.exact_product(len, a, upstream, values[b], upstream * values[b]);
                losses.exact_product(len, b, upstream, values[a], upstream * values[a]);
            }
            return;
        }
        let x: &[f64] = match *operands {
            [] => return, // a leaf: nothing to pass on
            [a] => {
                self.pair[0] = values[a.index()];
                &self.pair[..1]
            }
            [a, b] => {
                self.pair = [values[a.index()], values[b.index()]];
                &self.pair
            }
            _ => {
                self.many.clear();
                self.many.extend(operands.iter().map(|o| values[o.index()]));
                &self.many
            }
        };
        let (info, out) = (op.info(), values[node.index()]);
        for (position, &operand) in operands.iter().enumerate() {
            let local = info
                .passes(x, out, position)
                .then(|| (info.local)(x, out, position));
            let before = self.grads[operand.index()];
            let (product, after) = match local {
                // The chain rule: ∂output/∂operand += ∂output/∂node · ∂node/∂operand.
                Some(local) => {
                    let product = upstream * local;
                    if !(product.is_normal() && local.is_normal()) {
                        let len = self.grads.len();
                        let (o, losses) = (operand.index(), &mut self.losses);
                        losses.product(len, o, upstream, local, product, info, x, out, position);
                    }
                    (product, before + product)
                }
                // Nothing passed: untouched, even for an infinite upstream.
                None => (0.0, before),
            };
            self.grads[operand.index()] = after;
            recorder.edge(Edge {
                operand,
                position,
                local,
                product,
                before,
                after,
            });
        }
    }
}

impl Walk<'_> {
    /// `node`'s gradient `upstream` is complete and something below the range
    /// was charged to it ([`Losses`]): judges it, and passes what remains on
    /// to the operands times their local derivatives, as the gradient goes.
    #[cold]
    fn spread_losses(&mut self, node: NodeId, upstream: f64) {
        let bound = self.losses.settle(node.index(), upstream);
        if bound == 0.0 {
            return;
        }
        let (graph, values) = (self.graph, self.values);
        let info = graph.op(node).info();
        let operands = graph.operands(node);
        let mut x = std::mem::take(&mut self.many);
        x.clear();
        x.extend(operands.iter().map(|o| values[o.index()]));
        let out = values[node.index()];
        for (position, &operand) in operands.iter().enumerate() {
            if info.passes(&x, out, position) {
                let local = (info.local)(&x, out, position);
                self.losses
                    .spread(self.grads.len(), operand.index(), bound, local);
            }
        }
        self.many = x;
    }
}

/// The traced backward walk as an iterator of [`Step`]s
/// ([`Graph::backward_steps`]).
pub struct BackwardSteps<'g, O, F> {
    order: O,
    /// Position in the order of the next node to visit.
    next: usize,
    walk: Walk<'g>,
    trace: Trace<F>,
    poll: Poll,
}

impl<O: AsRef<[NodeId]>, F: Fn(usize) -> bool> BackwardSteps<'_, O, F> {
    /// The gradients as far as the walk has gone: complete for the nodes
    /// already yielded and for every node once the iterator is exhausted.
    ///
    /// Once exhausted they are [`Graph::backward`]'s, bit for bit: where an
    /// `upstream × local` left the f64 range on the way, the whole walk is
    /// redone on the scaled path (`Graph::walk_scaled`), as the plain walk
    /// does (the steps already yielded keep the f64 products they showed).
    pub fn gradients(&self) -> Gradients {
        match self.rescaled() {
            Some(gradients) => gradients,
            None => Gradients {
                grads: self.walk.grads.clone(),
            },
        }
    }

    /// The gradients, giving the walk up (as [`BackwardSteps::gradients`]).
    pub fn into_gradients(self) -> Gradients {
        match self.rescaled() {
            Some(gradients) => gradients,
            None => Gradients {
                grads: self.walk.grads,
            },
        }
    }

    /// The scaled walk's gradients, when the walk is over and lost the range.
    fn rescaled(&self) -> Option<Gradients> {
        let order = self.order.as_ref();
        (self.walk.losses.rescale && self.next >= order.len())
            .then(|| self.walk.graph.walk_scaled(order, self.walk.values))
    }
}

impl<O: AsRef<[NodeId]>, F: Fn(usize) -> bool> Iterator for BackwardSteps<'_, O, F> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        while let Some(&node) = self.order.as_ref().get(self.next) {
            if self.poll.tick() {
                return None;
            }
            self.next += 1;
            self.walk.visit(node, &mut self.trace);
            if let Some(step) = self.trace.steps.pop() {
                return Some(step);
            }
        }
        None
    }
}

/// The chain rule of the walk for `+`, `−` and `·`, with their local
/// derivatives written out instead of called through the op table: most nodes
/// of real graphs are these. The table's `Add`, `Sub` and `Mul` rows say the
/// locals are 1 and 1, 1 and −1, b and a, and that they pass to every operand,
/// so `before + upstream × local` is computed here as `before + upstream`,
/// `before − upstream`, `before + upstream × b`, `before + upstream × a`: the
/// same numbers. Only the untraced walk takes this path; a trace shows each
/// local, so it calls the table. Returns whether a product of `·` is not a
/// normal number (the caller asks [`Losses`] whether that lost anything).
#[inline(always)] // in the loop, as the reference tape's arms are
fn add_sub_mul(
    shortcut: Shortcut,
    operands: &[NodeId],
    upstream: f64,
    values: &[f64],
    grads: &mut [f64],
) -> bool {
    let &[a, b] = operands else {
        unreachable!("+, − and · are binary");
    };
    let (a, b) = (a.index(), b.index());
    match shortcut {
        Shortcut::Add => {
            grads[a] += upstream;
            grads[b] += upstream;
            false
        }
        Shortcut::Sub => {
            grads[a] += upstream;
            grads[b] -= upstream;
            false
        }
        Shortcut::Mul => {
            let (to_a, to_b) = (upstream * values[b], upstream * values[a]);
            grads[a] += to_a;
            grads[b] += to_b;
            !(to_a.is_normal() && to_b.is_normal())
        }
    }
}

impl Gradients {
    /// The gradient of the output with respect to `id`; 0 for nodes the output
    /// does not reach and for ids out of range. Same as `gradients[id]`.
    pub fn get(&self, id: NodeId) -> f64 {
        self[id]
    }

    /// The number of nodes covered: the graph's length when computed.
    pub fn len(&self) -> usize {
        self.grads.len()
    }

    /// True if the graph was empty.
    pub fn is_empty(&self) -> bool {
        self.grads.is_empty()
    }

    /// Every node's gradient, indexed by [`NodeId::index`].
    pub fn as_slice(&self) -> &[f64] {
        &self.grads
    }
}

/// What a backward walk reports as it goes. The default methods do nothing, so
/// the untraced walk compiles to the bare loop.
trait Recorder {
    /// Whether the walk reports anything; when not, the commonest ops take a
    /// shortcut (same arithmetic, no call through the op table).
    const RECORDS: bool = true;

    /// The walk reached `node`, whose gradient is `upstream`.
    fn node(&mut self, _node: NodeId, _upstream: f64) {}

    /// The current node passed something to one operand ([`Edge`]).
    fn edge(&mut self, _edge: Edge) {}
}

/// What the current node of a backward walk passed to one of its operands.
struct Edge {
    /// The operand node.
    operand: NodeId,
    /// Its position among the node's operands.
    position: usize,
    /// The local derivative, or `None` where the op passed nothing.
    local: Option<f64>,
    /// `upstream × local`; 0 where the op passed nothing.
    product: f64,
    /// The operand's gradient before this edge.
    before: f64,
    /// The operand's gradient after it: `before + upstream × local`, or `before`.
    after: f64,
}

/// Records nothing: [`Graph::backward`].
struct NoTrace;

impl Recorder for NoTrace {
    const RECORDS: bool = false;
}

/// Records the steps `keep` asks for: [`Graph::backward_traced_where`].
struct Trace<F> {
    keep: F,
    /// Position in the order of the next node.
    position: usize,
    /// Whether the current node's step is being kept.
    recording: bool,
    steps: Vec<Step>,
    /// Per node: how many uses of it the walk has passed so far.
    uses_seen: Vec<u32>,
    /// Per node: how many uses of it there are in the walked subgraph.
    use_count: Vec<u32>,
}

impl<F: Fn(usize) -> bool> Trace<F> {
    fn new(graph: &Graph, order: &[NodeId], keep: F) -> Trace<F> {
        let mut use_count = vec![0u32; graph.len()];
        for &node in order {
            for &input in graph.operands(node) {
                use_count[input.index()] += 1;
            }
        }
        Trace {
            keep,
            position: 0,
            recording: false,
            steps: Vec::new(),
            uses_seen: vec![0; graph.len()],
            use_count,
        }
    }
}

impl<F: Fn(usize) -> bool> Recorder for Trace<F> {
    fn node(&mut self, node: NodeId, upstream: f64) {
        self.recording = (self.keep)(self.position);
        self.position += 1;
        if self.recording {
            self.steps.push(Step {
                node,
                upstream,
                contributions: Vec::new(),
            });
        }
    }

    fn edge(&mut self, edge: Edge) {
        let seen = &mut self.uses_seen[edge.operand.index()];
        *seen += 1;
        if !self.recording {
            return;
        }
        let contribution = Contribution {
            input: edge.operand,
            position: edge.position,
            local: edge.local.unwrap_or(0.0),
            product: edge.product,
            passes_nothing: edge.local.is_none(),
            before: edge.before,
            after: edge.after,
            use_number: *seen,
            use_count: self.use_count[edge.operand.index()],
        };
        if let Some(step) = self.steps.last_mut() {
            step.contributions.push(contribution);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Op;

    /// `upstream × local` of a product, judged by its own two factors: an
    /// exact 0 from a zero factor is not a lost product (it would send the
    /// walk again with scaled gradients for nothing), an underflow is charged
    /// to its operand, and an overflow from finite factors asks for the
    /// scaled walk.
    #[test]
    fn a_product_loses_range_only_when_its_own_factors_are_ordinary() {
        let walk = |upstream: f64, a: f64, b: f64| {
            let mut losses = Losses::new();
            losses.exact_product(2, 0, upstream, b, upstream * b);
            losses.exact_product(2, 1, upstream, a, upstream * a);
            ([losses.at(0) != 0.0, losses.at(1) != 0.0], losses.rescale)
        };
        // w = 3 times h = relu(…) = 0: w gets exactly 0, h gets 3.
        assert_eq!(walk(1.0, 3.0, 0.0), ([false, false], false));
        assert_eq!(walk(1.0, 0.0, 3.0), ([false, false], false));
        // To a: 1e-200 × 1 = 1e-200. To b: 1e-200 × 1e-200 underflows to 0
        // although both factors are normal.
        assert_eq!(walk(1e-200, 1e-200, 1.0), ([false, true], false));
        // A zero or infinite upstream loses nothing: its products are exact.
        assert_eq!(walk(0.0, 1e-200, 1e-200), ([false, false], false));
        assert_eq!(walk(f64::INFINITY, 1.0, 1.0), ([false, false], false));
        // 1e200 × 1e200 overflows from finite factors.
        assert!(walk(1e200, 1e200, 1.0).1);
    }

    /// W3's lost upstream gradients `0.5^k` (k past 1075) change no gradient
    /// beyond its rounding: the walk is not done again, and ∂y/∂x is 4 (the
    /// sum of the geometric series, docs/benchmarks.md). `1/exp(x)` at 400
    /// does need it: ∂y/∂x = −1.915169596714006e-174 (mpmath).
    #[test]
    fn only_a_loss_that_could_change_a_gradient_takes_the_scaled_walk() {
        let mut g = Graph::new();
        let x = g.leaf(0.5);
        let mut y = x;
        for _ in 0..3000 {
            let product = g.apply(Op::Mul, &[y, x]).unwrap();
            y = g.apply(Op::Add, &[product, x]).unwrap();
        }
        let order = g.topo_order(y);
        let mut walk = Walk::new(&g, &order, g.values());
        for &node in &order {
            walk.visit(node, &mut NoTrace);
        }
        assert!(!walk.losses.rescale, "W3 needs no second walk");
        assert!((g.backward(&order)[x] - 4.0).abs() < 1e-14);

        let mut g = Graph::new();
        let x = g.leaf(400.0);
        let one = g.constant(1.0);
        let e = g.apply(Op::Exp, &[x]).unwrap();
        let y = g.apply(Op::Div, &[one, e]).unwrap();
        let order = g.topo_order(y);
        let mut walk = Walk::new(&g, &order, g.values());
        for &node in &order {
            walk.visit(node, &mut NoTrace);
        }
        assert!(walk.losses.rescale);
        assert_eq!(g.backward(&order)[x], -1.915169596714006e-174);
    }
}
