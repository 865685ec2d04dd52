//! Bounded memory: a long session reclaims the nodes that nothing can reach.
//!
//! The roots are every variable's node, the output, `ans` and the scalar
//! nodes the tensor graph reads (user functions keep ASTs, not nodes). The graph is compacted to what the roots reach
//! ([`Graph::retain_reachable`](crate::engine::Graph::retain_reachable)) and
//! every id the session holds is remapped: earlier bindings and `f'(x)` marks
//! survive when their node does (so "z was built from an earlier x" still
//! works for live outputs) and are dropped otherwise; the cached order is
//! remapped (compaction keeps relative order, so it stays an order).
//!
//! Automatic collection runs between statements (not right after a listing,
//! whose rows are still to be written by node id) once the graph holds more
//! than [`GC_MIN_NODES`] nodes and has doubled since the last collection.

use std::rc::Rc;

use super::{Event, Node, Session};
use crate::engine::{Graph, NodeId};

/// Below this many nodes the session never collects on its own.
pub const GC_MIN_NODES: usize = 1 << 20;

/// What one collection did.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Reclaim {
    /// Nodes before and after.
    pub nodes_before: usize,
    pub nodes_after: usize,
    /// The graph's heap bytes before and after.
    pub bytes_before: usize,
    pub bytes_after: usize,
    /// How long it took, in milliseconds.
    pub millis: f64,
    /// True when the session collected on its own (past the threshold), false for `:gc`.
    pub automatic: bool,
}

/// Memory figures of a session (`:stats`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Nodes in the graph.
    pub nodes: usize,
    /// Nodes reachable from a name, the output or `ans`: what a collection keeps.
    pub reachable: usize,
    /// The graph's heap bytes (allocated capacity).
    pub bytes: usize,
    /// Bytes per node slot, as the engine counts them.
    pub node_bytes: usize,
    /// How many reverse topological orders the session has computed (each
    /// `:grad`, `:trace`, … on an unchanged output reuses the cached one).
    pub sorts: usize,
    /// How many collections ran.
    pub collections: usize,
    /// The most recent collection.
    pub last: Option<Reclaim>,
    /// Nodes in the graph of vectors and matrices (`:gc` does not reclaim
    /// them; `:reset` does).
    pub tensor_nodes: usize,
    /// Numbers the tensor values hold, of [`Stats::tensor_budget`].
    pub tensor_numbers: usize,
    /// The memory budget of the tensor values, in numbers (2²⁷).
    pub tensor_budget: usize,
}

/// The memory bookkeeping a session carries.
#[derive(Debug, Default)]
pub(super) struct Memory {
    /// Nodes kept by the last collection (0 before the first).
    live_after_last: usize,
    /// The threshold, when set by [`Session::set_gc_min_nodes`].
    min_nodes: Option<usize>,
    pub(super) sorts: usize,
    collections: usize,
    last: Option<Reclaim>,
}

impl Session {
    /// The nodes a collection keeps everything reachable from.
    fn roots(&self) -> Vec<NodeId> {
        let mut roots: Vec<NodeId> = self.vars.values().filter_map(|n| n.scalar()).collect();
        roots.extend(self.output.as_ref().and_then(|o| o.node.scalar()));
        roots.extend(self.scalar_last());
        // What the running statement would put back if it failed.
        roots.extend(self.journal.roots());
        // The scalar nodes the tensor graph reads (a scalar `w` in
        // `mean((w*xs - ys)^2)`): a later rerun of the tensor graph reads them.
        roots.extend(self.tensors.graph.scalar_reads());
        roots
    }

    /// Compacts the graph to the nodes reachable from the roots and remaps
    /// every id the session holds.
    pub(super) fn collect_garbage(&mut self, automatic: bool) -> Reclaim {
        let start = Clock::start();
        let (nodes_before, bytes_before) = (self.graph.len(), self.graph.memory_bytes());
        let roots = self.roots();
        let remap = self.graph.retain_reachable(&roots);
        let get = |id: &NodeId| remap.get(*id).expect("roots are kept");
        for node in self.vars.values_mut() {
            *node = node.remap(|id| get(&id));
        }
        if let Some(output) = &mut self.output {
            output.node = output.node.remap(|id| get(&id));
        }
        self.last = self.last.map(|node| node.remap(|id| get(&id)));
        self.earlier = std::mem::take(&mut self.earlier)
            .into_iter()
            .filter_map(|(name, old)| {
                let old: Vec<Node> = old
                    .iter()
                    .filter_map(|&node| match node {
                        Node::Scalar(id) => remap.get(id).map(Node::Scalar),
                        tensor @ Node::Tensor(_) => Some(tensor),
                    })
                    .collect();
                (!old.is_empty()).then_some((name, old))
            })
            .collect();
        self.calls.remap(&remap);
        self.journal.remap(&remap);
        self.tensors.graph.remap_scalars(&remap);
        // A derivative group is a run of ids; compaction keeps relative order,
        // so its kept nodes are a run again. The branches it was built across
        // are kept too, for the stale-branch warning of a later `:=`.
        self.derivative_groups = std::mem::take(&mut self.derivative_groups)
            .into_iter()
            .filter_map(|group| {
                let result = remap.get(group.result)?;
                let of = remap.get(group.of)?;
                let mut kept = (group.first.0..group.end.0).filter_map(|id| remap.get(NodeId(id)));
                let first = kept.clone().next();
                let (first, end) = match (first, kept.next_back()) {
                    (Some(first), Some(last)) => (first, NodeId(last.0 + 1)),
                    // Nothing of the run kept: an empty run next to the
                    // result, on the same side of it as before.
                    _ if group.result < group.first => (NodeId(result.0 + 1), NodeId(result.0 + 1)),
                    _ => (result, result),
                };
                let branches = group
                    .branches
                    .iter()
                    .filter_map(|(id, passes)| Some((remap.get(*id)?, passes.clone())))
                    .collect();
                Some(super::derivatives::DerivativeGroup {
                    first,
                    end,
                    label: group.label,
                    of,
                    result,
                    branches,
                })
            })
            .collect();
        self.order_cache = self.order_cache.take().and_then(|(output, mut order)| {
            let output = remap.get(output)?;
            // In place unless a caller still holds the order (then a copy).
            for id in Rc::make_mut(&mut order) {
                *id = get(id);
            }
            Some((output, order))
        });
        // Listings made before name nodes by their old ids: no longer valid.
        self.statement += 1;
        let reclaim = Reclaim {
            nodes_before,
            nodes_after: self.graph.len(),
            bytes_before,
            bytes_after: self.graph.memory_bytes(),
            millis: start.millis(),
            automatic,
        };
        self.memory.live_after_last = reclaim.nodes_after;
        self.memory.collections += 1;
        self.memory.last = Some(reclaim);
        reclaim
    }

    /// Collects when the graph is past [`GC_MIN_NODES`] and twice what the
    /// last collection kept. Runs between statements, never inside one.
    pub(super) fn collect_if_due(&mut self) {
        let len = self.graph.len();
        let min_nodes = self.memory.min_nodes.unwrap_or(GC_MIN_NODES);
        if len > min_nodes && len > 2 * self.memory.live_after_last {
            self.collect_garbage(true);
        }
    }

    /// Sets the graph size below which the session never collects on its own
    /// (default [`GC_MIN_NODES`]); past it, it collects when the graph has
    /// doubled since the last collection.
    ///
    /// ```
    /// use gradcalc::session::Session;
    /// let mut session = Session::new();
    /// session.set_gc_min_nodes(100);
    /// let script = format!("x = 0.5\n{}", "y = x*1.0001\n".repeat(1000));
    /// let _ = session.run_source(&script, |_| std::ops::ControlFlow::Continue(()));
    /// assert!(session.graph().len() <= 200);
    /// assert!(session.stats().collections > 0);
    /// ```
    pub fn set_gc_min_nodes(&mut self, nodes: usize) {
        self.memory.min_nodes = Some(nodes);
    }

    /// `:gc`.
    pub(super) fn gc_command(&mut self, events: &mut Vec<Event>) {
        let reclaim = self.collect_garbage(false);
        events.push(Event::Collected(reclaim));
    }

    /// `:stats`.
    pub(super) fn stats_command(&self, events: &mut Vec<Event>) {
        events.push(Event::Stats(self.stats()));
    }

    /// The session's memory figures, as `:stats` shows them.
    ///
    /// ```
    /// use gradcalc::session::Session;
    /// let mut session = Session::new();
    /// let _ = session.run_source("x = 2; y = x*x; :grad; :grad", |_| std::ops::ControlFlow::Continue(()));
    /// let stats = session.stats();
    /// assert_eq!((stats.nodes, stats.sorts), (2, 1)); // x and x*x; one sort for both `:grad`s
    /// ```
    pub fn stats(&self) -> Stats {
        let reachable = self
            .graph
            .reachable(&self.roots())
            .iter()
            .filter(|&&l| l)
            .count();
        Stats {
            nodes: self.graph.len(),
            reachable,
            bytes: self.graph.memory_bytes(),
            node_bytes: Graph::node_bytes(),
            sorts: self.memory.sorts,
            collections: self.memory.collections,
            last: self.memory.last,
            tensor_nodes: self.tensors.graph.len(),
            tensor_numbers: self.tensors.graph.held(),
            tensor_budget: self.tensors.graph.budget(),
        }
    }
}

/// The time a collection takes, for `:stats`. The browser's build
/// (wasm32-unknown-unknown) has no clock in the standard library: 0 there.
struct Clock(#[cfg(not(target_family = "wasm"))] std::time::Instant);

impl Clock {
    fn start() -> Clock {
        Clock(
            #[cfg(not(target_family = "wasm"))]
            std::time::Instant::now(),
        )
    }

    /// Milliseconds since [`Clock::start`].
    fn millis(&self) -> f64 {
        #[cfg(not(target_family = "wasm"))]
        return self.0.elapsed().as_secs_f64() * 1e3;
        #[cfg(target_family = "wasm")]
        return 0.0;
    }
}
