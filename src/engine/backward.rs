//! Reverse mode: one walk over the reverse topological order, applying the
//! chain rule, optionally recording each step.

use super::{Arity, Contribution, Gradients, Graph, NodeId, Op, Step};

impl Graph {
    /// Gradients of the output `order[0]` with respect to every node, by reverse
    /// mode.
    ///
    /// `order` must be what [`Graph::topo_order`] returned for that output
    /// (output first, every node before its inputs). The output's gradient is
    /// seeded with 1; then, for each node in order and each of its inputs, the
    /// chain rule adds `upstream × local` to the input's gradient, so fan-out
    /// accumulates. Nodes not in `order` have gradient 0; an empty `order` gives
    /// all zeros. Where the op passes no gradient ([`OpInfo::passes`]: relu
    /// at u ≤ 0, floor, detach, …) the input's gradient is not touched, so
    /// `sqrt(relu(x))` at 0 gives 0; everywhere else the product is computed,
    /// so `0 × inf` gives nan (`sqrt(x)^2` at 0).
    ///
    /// [`OpInfo::passes`]: super::OpInfo::passes
    ///
    /// # Panics
    /// If `order` holds an id that is not a node of this graph.
    pub fn backward(&self, order: &[NodeId]) -> Gradients {
        self.walk(order, &mut NoTrace)
    }

    /// The same walk as [`Graph::backward`], also returning one [`Step`] per
    /// node of `order`, in order: its upstream gradient and, for each input
    /// position, the local derivative, the product, the input's gradient before
    /// and after, and which of the input's uses this is. Leaves get a step with
    /// no contributions, whose upstream is their final gradient.
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
        let mut trace = Trace::new(self, order, keep);
        let gradients = self.walk(order, &mut trace);
        (gradients, trace.steps)
    }

    /// The backward pass, shared by [`Graph::backward`] and
    /// [`Graph::backward_traced`]; `recorder` sees every step.
    fn walk<R: Recorder>(&self, order: &[NodeId], recorder: &mut R) -> Gradients {
        let mut grads = vec![0.0; self.len()];
        if let Some(&output) = order.first() {
            grads[output.index()] = 1.0; // ∂output/∂output
        }
        let mut input_values = Vec::new();
        let mut pair = [0.0; 2];
        for &node in order {
            // ∂output/∂node, complete: every node using this one came earlier.
            let upstream = grads[node.index()];
            recorder.node(node, upstream);
            let (op, value, inline) = self.node_parts(node);
            if !R::RECORDS {
                // The local derivatives of `+`, `−` and `·` (∂(a·b)/∂a = b, as in the
                // op table), without the call: most nodes of real graphs are these.
                let (a, b) = (inline[0].index(), inline[1].index());
                match op {
                    Op::Add => {
                        grads[a] += upstream;
                        grads[b] += upstream;
                        continue;
                    }
                    Op::Sub => {
                        grads[a] += upstream;
                        grads[b] -= upstream;
                        continue;
                    }
                    Op::Mul => {
                        let (va, vb) = (self.value(inline[0]), self.value(inline[1]));
                        grads[a] += upstream * vb;
                        grads[b] += upstream * va;
                        continue;
                    }
                    _ => {}
                }
            }
            let info = op.info();
            // Unary and binary nodes (nearly all) read their inputs' values
            // into an array; only min/max collect them into a vector.
            let (inputs, values): (&[NodeId], &[f64]) = match info.arity {
                Arity::Leaf => continue,
                Arity::Unary => {
                    pair[0] = self.value(inline[0]);
                    (&inline[..1], &pair[..1])
                }
                Arity::Binary => {
                    pair = [self.value(inline[0]), self.value(inline[1])];
                    (&inline[..], &pair[..])
                }
                Arity::Variadic => {
                    let inputs = self.inputs(node);
                    input_values.clear();
                    input_values.extend(inputs.iter().map(|&input| self.value(input)));
                    (inputs, &input_values)
                }
            };
            for (position, &input) in inputs.iter().enumerate() {
                let before = grads[input.index()];
                if !info.passes(values, value, position) {
                    recorder.contribution(input, position, upstream, None, before, before);
                    continue;
                }
                // The chain rule: ∂output/∂input += ∂output/∂node · ∂node/∂input.
                let local = (info.local)(values, value, position);
                let after = before + upstream * local;
                grads[input.index()] = after;
                recorder.contribution(input, position, upstream, Some(local), before, after);
            }
        }
        Gradients { grads }
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

    /// The current node passed `upstream × local` to its input at `position`
    /// (`local` is `None` where the op passed nothing).
    fn contribution(
        &mut self,
        _input: NodeId,
        _position: usize,
        _upstream: f64,
        _local: Option<f64>,
        _before: f64,
        _after: f64,
    ) {
    }
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
            for &input in graph.inputs(node) {
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

    fn contribution(
        &mut self,
        input: NodeId,
        position: usize,
        upstream: f64,
        local: Option<f64>,
        before: f64,
        after: f64,
    ) {
        let seen = &mut self.uses_seen[input.index()];
        *seen += 1;
        if !self.recording {
            return;
        }
        let contribution = Contribution {
            input,
            position,
            local: local.unwrap_or(0.0),
            product: local.map_or(0.0, |local| upstream * local),
            passes_nothing: local.is_none(),
            before,
            after,
            use_number: *seen,
            use_count: self.use_count[input.index()],
        };
        if let Some(step) = self.steps.last_mut() {
            step.contributions.push(contribution);
        }
    }
}
