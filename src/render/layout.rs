//! A layered drawing of a directed acyclic graph (Sugiyama, Tagawa and Toda 1981,
//! "Methods for visual understanding of hierarchical system structures"), the
//! method Graphviz's `dot` uses, in four passes that are all loops (no recursion):
//!
//! 1. **Ranks**: longest path from the sources (every edge goes to a higher
//!    rank); then, from the sinks back, a node with at least as many edges out
//!    as in moves down to just before its nearest consumer, so that a leaf sits
//!    just before the op that reads it and a side branch next to where it joins.
//! 2. **Dummy nodes**: between every two ranks there is a *label rank*, and an
//!    edge becomes a chain of dummy nodes, one per rank it crosses (label ranks
//!    included), so every edge joins neighbouring ranks. The dummy in the label
//!    rank just before the edge's head has the size of the edge's label (zero
//!    for none), as Graphviz's `dot` does with labels: the passes below keep
//!    labels apart from each other and from the edges passing by just as they
//!    keep nodes apart, and each label sits on its own edge.
//! 3. **Order within ranks**: sweeps of the barycenter heuristic (each node
//!    moves to the mean position of its neighbours in the rank just fixed), each
//!    followed by a *transpose* step that swaps neighbours while that removes
//!    crossings (Gansner et al. 1993, "A technique for drawing directed graphs");
//!    the order with the fewest crossings, counted exactly with a Fenwick tree
//!    (Barth, Jünger and Mutzel 2002), is kept.
//! 4. **Coordinates**: along each rank, nodes keep their order and their
//!    separations and move as close as they can to the weighted mean of their
//!    neighbours: a least-squares problem under order constraints, solved exactly
//!    per rank by pool-adjacent-violators, in alternating sweeps down and up.
//!
//! The layout is abstract: the *rank axis* is the direction edges point (left to
//! right or top to bottom, the caller chooses) and the *order axis* is across it.
//! Every pass is near-linear in the number of nodes plus dummy nodes.

/// How much room a node takes: its extent along the rank axis (the direction of
/// the edges) and across it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Size {
    /// Extent along the rank axis.
    pub along: f64,
    /// Extent across it (along the order axis).
    pub across: f64,
}

/// An edge `from → to`, with the room its label needs (both extents 0 without
/// a label). The label is drawn on the edge in the gap before `to`'s rank, and
/// no two labels, nor a label and an edge passing by, come closer across than
/// [`Spacing::edge`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    /// The tail (an index into the node sizes).
    pub from: usize,
    /// The head.
    pub to: usize,
    /// The label's extents, both 0 for none.
    pub label: Size,
}

impl Size {
    /// No room: an edge without a label.
    pub const NONE: Size = Size {
        along: 0.0,
        across: 0.0,
    };
}

/// Gaps of a layout, in the same units as the sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spacing {
    /// Between neighbouring ranks (before any label room; the labels of the gap
    /// are centred in it).
    pub rank: f64,
    /// Between neighbouring nodes of a rank.
    pub node: f64,
    /// Between an edge passing through a rank and its neighbours.
    pub edge: f64,
}

/// Where everything goes. Coordinates are `(along, across)` pairs, both ≥ 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Each node's centre.
    pub centers: Vec<(f64, f64)>,
    /// Each node's rank (0 first).
    pub ranks: Vec<usize>,
    /// Each edge's route: the tail's side, then two points per rank it passes
    /// through (where it enters and leaves the rank), then the head's side. Two
    /// neighbouring points in different ranks are joined by a curve, those in
    /// the same rank by a straight line.
    pub routes: Vec<Vec<(f64, f64)>>,
    /// Where each edge's label is centred: on the edge, in the gap before the
    /// head's rank.
    pub labels: Vec<(f64, f64)>,
    /// The extent of the whole drawing: `(along, across)`.
    pub extent: (f64, f64),
    /// Edge crossings left (between neighbouring ranks).
    pub crossings: usize,
}

/// Barycenter sweeps (each one down then up) at most,
const ORDER_SWEEPS: usize = 12;
/// stopping after this many sweeps without fewer crossings;
const ORDER_PATIENCE: usize = 3;
/// transpose passes over the ranks after each sweep at most;
const TRANSPOSE_PASSES: usize = 6;
/// coordinate sweeps (each one down then up).
const COORDINATE_SWEEPS: usize = 8;

/// Lays out a directed acyclic graph of `sizes.len()` nodes (see the module
/// comment for the method). An edge that would close a cycle, or from a node to
/// itself, is drawn but not used for ranking (it points backwards).
pub fn layout(sizes: &[Size], edges: &[Edge], spacing: Spacing) -> Layout {
    let n = sizes.len();
    let ranks = rank(n, edges);
    let mut graph = Layered::new(sizes, edges, &ranks, spacing);
    let crossings = graph.order();
    graph.add_label_ranks(edges);
    let across = graph.coordinates();
    graph.finish(sizes, edges, &ranks, &across, crossings)
}

/// Ranks by longest path from the sources (Kahn's algorithm; nodes on a cycle
/// get rank 0), then nodes moved towards their consumers where that shortens edges.
fn rank(n: usize, edges: &[Edge]) -> Vec<usize> {
    let mut indegree = vec![0usize; n];
    let mut outgoing: Vec<Vec<usize>> = vec![Vec::new(); n];
    for edge in edges.iter().filter(|e| e.from != e.to) {
        indegree[edge.to] += 1;
        outgoing[edge.from].push(edge.to);
    }
    let incoming = indegree.clone();
    let mut ranks = vec![0usize; n];
    let mut ready: Vec<usize> = (0..n).filter(|&v| indegree[v] == 0).collect();
    ready.reverse();
    let mut topological = Vec::with_capacity(n);
    while let Some(v) = ready.pop() {
        topological.push(v);
        for &w in &outgoing[v] {
            ranks[w] = ranks[w].max(ranks[v] + 1);
            indegree[w] -= 1;
            if indegree[w] == 0 {
                ready.push(w);
            }
        }
    }
    // Then, from the sinks back, each node moves down to just before its
    // nearest consumer when that shortens its edges in total (it has at least
    // as many edges out as in): the cheap half of network simplex's balancing.
    for &v in topological.iter().rev() {
        let Some(nearest) = outgoing[v].iter().map(|&w| ranks[w]).min() else {
            continue;
        };
        if outgoing[v].len() >= incoming[v] && nearest > ranks[v] + 1 {
            ranks[v] = nearest - 1;
        }
    }
    ranks
}

/// The graph with dummy nodes: nodes `0..real` are the caller's, the rest dummies.
/// Ordered with the caller's ranks; then [`Layered::add_label_ranks`] makes the
/// caller's rank `r` rank `2r` and puts a label rank between every two.
struct Layered {
    real: usize,
    /// Each node's rank.
    rank: Vec<usize>,
    /// Extent across of each node (0 for a dummy).
    across: Vec<f64>,
    /// Neighbours in the rank above and below.
    up: Vec<Vec<usize>>,
    down: Vec<Vec<usize>>,
    /// The nodes of each rank, in order.
    layers: Vec<Vec<usize>>,
    /// Each node's index in its layer.
    position: Vec<usize>,
    /// For each caller's edge, its chain of dummies (top to bottom); once the
    /// label ranks are in, the last one is in the label rank before the head
    /// and holds the label.
    chains: Vec<Vec<usize>>,
    spacing: Spacing,
}

impl Layered {
    fn new(sizes: &[Size], edges: &[Edge], ranks: &[usize], spacing: Spacing) -> Layered {
        let real = sizes.len();
        let depth = ranks.iter().copied().max().map_or(0, |r| r + 1);
        let mut graph = Layered {
            real,
            rank: ranks.to_vec(),
            across: sizes.iter().map(|s| s.across).collect(),
            up: vec![Vec::new(); real],
            down: vec![Vec::new(); real],
            layers: vec![Vec::new(); depth],
            position: Vec::new(),
            chains: Vec::with_capacity(edges.len()),
            spacing,
        };
        for edge in edges {
            let mut chain = Vec::new();
            let (from, to) = (ranks[edge.from], ranks[edge.to]);
            if to > from {
                let mut previous = edge.from;
                for r in from + 1..to {
                    let dummy = graph.rank.len();
                    graph.rank.push(r);
                    graph.across.push(0.0);
                    graph.up.push(vec![previous]);
                    graph.down.push(Vec::new());
                    graph.down[previous].push(dummy);
                    chain.push(dummy);
                    previous = dummy;
                }
                graph.down[previous].push(edge.to);
                graph.up[edge.to].push(previous);
            }
            graph.chains.push(chain);
        }
        // First order: nodes by index, each dummy right after its chain's tail
        // was placed (a depth-first-like start without recursion).
        for v in 0..graph.rank.len() {
            graph.layers[graph.rank[v]].push(v);
        }
        graph.position = vec![0; graph.rank.len()];
        graph.renumber();
        graph
    }

    fn renumber(&mut self) {
        for layer in &self.layers {
            for (i, &v) in layer.iter().enumerate() {
                self.position[v] = i;
            }
        }
    }

    /// Doubles every rank and puts a label rank between every two: each edge
    /// between neighbouring ranks gets a dummy there, the last one of an edge
    /// the size of its label across. The order found is kept, and each label
    /// rank is ordered by its dummies' ends above, then below, so it adds no
    /// crossing. (Ordering with the label ranks in would dilute the barycenters
    /// and leave crossings that only swapping in two ranks at once removes.)
    fn add_label_ranks(&mut self, edges: &[Edge]) {
        let depth = self.layers.len();
        for r in &mut self.rank {
            *r *= 2;
        }
        let mut label_layers: Vec<Vec<usize>> = vec![Vec::new(); depth.saturating_sub(1)];
        let chains = std::mem::take(&mut self.chains);
        for (edge, chain) in edges.iter().zip(chains) {
            if self.rank[edge.to] <= self.rank[edge.from] {
                self.chains.push(chain); // drawn, not laid out: no dummies
                continue;
            }
            let mut stops = Vec::with_capacity(chain.len() + 2);
            stops.push(edge.from);
            stops.extend_from_slice(&chain);
            stops.push(edge.to);
            let mut new_chain = Vec::with_capacity(2 * chain.len() + 1);
            for pair in stops.windows(2) {
                let (p, q) = (pair[0], pair[1]);
                let dummy = self.rank.len();
                let r = self.rank[p] + 1;
                self.rank.push(r);
                let last = q == edge.to;
                self.across.push(if last { edge.label.across } else { 0.0 });
                self.up.push(vec![p]);
                self.down.push(vec![q]);
                if let Some(slot) = self.down[p].iter_mut().find(|w| **w == q) {
                    *slot = dummy;
                }
                if let Some(slot) = self.up[q].iter_mut().find(|u| **u == p) {
                    *slot = dummy;
                }
                label_layers[r / 2].push(dummy);
                new_chain.push(dummy);
                if !last {
                    new_chain.push(q);
                }
            }
            self.chains.push(new_chain);
        }
        for layer in &mut label_layers {
            layer.sort_by_key(|&d| (self.position[self.up[d][0]], self.position[self.down[d][0]]));
        }
        let real_layers = std::mem::take(&mut self.layers);
        for (r, layer) in real_layers.into_iter().enumerate() {
            if r > 0 {
                self.layers.push(std::mem::take(&mut label_layers[r - 1]));
            }
            self.layers.push(layer);
        }
        self.position.resize(self.rank.len(), 0);
        self.renumber();
    }

    /// Barycenter sweeps with transposition; keeps the best order. Returns the
    /// crossings left.
    fn order(&mut self) -> usize {
        // Start from an order where each rank follows the one above.
        self.sweep(true);
        let mut best = self.layers.clone();
        let mut best_crossings = self.crossings();
        let mut since_better = 0;
        for iteration in 0..ORDER_SWEEPS {
            // Ctrl-C: keep the best order so far (the picture is thrown away).
            if best_crossings == 0
                || since_better >= ORDER_PATIENCE
                || crate::interrupt::requested()
            {
                break;
            }
            self.sweep(iteration % 2 == 1);
            self.transpose();
            let crossings = self.crossings();
            if crossings < best_crossings {
                best_crossings = crossings;
                best.clone_from(&self.layers);
                since_better = 0;
            } else {
                since_better += 1;
            }
        }
        self.layers = best;
        self.renumber();
        best_crossings
    }

    /// One barycenter pass over the ranks, downwards (each rank ordered by its
    /// neighbours above) or upwards.
    fn sweep(&mut self, downwards: bool) {
        let depth = self.layers.len();
        let mut keys: Vec<(f64, usize)> = Vec::new();
        for step in 1..depth {
            let r = if downwards { step } else { depth - 1 - step };
            keys.clear();
            for (i, &v) in self.layers[r].iter().enumerate() {
                let neighbours = if downwards {
                    &self.up[v]
                } else {
                    &self.down[v]
                };
                let key = if neighbours.is_empty() {
                    i as f64
                } else {
                    neighbours
                        .iter()
                        .map(|&u| self.position[u] as f64)
                        .sum::<f64>()
                        / neighbours.len() as f64
                };
                keys.push((key, v));
            }
            keys.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (i, &(_, v)) in keys.iter().enumerate() {
                self.layers[r][i] = v;
                self.position[v] = i;
            }
        }
    }

    /// Swaps neighbouring nodes of a rank while that lowers the crossings of
    /// their edges (up and down).
    fn transpose(&mut self) {
        let mut scratch = (Vec::new(), Vec::new());
        for _ in 0..TRANSPOSE_PASSES {
            let mut improved = false;
            for r in 0..self.layers.len() {
                for i in 1..self.layers[r].len() {
                    let (u, v) = (self.layers[r][i - 1], self.layers[r][i]);
                    let before = self.pair_crossings(u, v, &mut scratch);
                    let after = self.pair_crossings(v, u, &mut scratch);
                    if after < before {
                        self.layers[r].swap(i - 1, i);
                        self.position[u] = i;
                        self.position[v] = i - 1;
                        improved = true;
                    }
                }
            }
            if !improved {
                break;
            }
        }
    }

    /// Crossings between the edges of `u` and of `v` if `u` is left of `v`.
    fn pair_crossings(&self, u: usize, v: usize, scratch: &mut (Vec<usize>, Vec<usize>)) -> usize {
        let mut total = 0;
        for side in [&self.up, &self.down] {
            let (a, b) = (&mut scratch.0, &mut scratch.1);
            a.clear();
            b.clear();
            a.extend(side[u].iter().map(|&w| self.position[w]));
            b.extend(side[v].iter().map(|&w| self.position[w]));
            a.sort_unstable();
            b.sort_unstable();
            // Pairs with an end of u's right of an end of v's cross.
            let mut j = 0;
            for &x in b.iter() {
                while j < a.len() && a[j] <= x {
                    j += 1;
                }
                total += a.len() - j;
            }
        }
        total
    }

    /// All crossings between neighbouring ranks, each pair of ranks by counting
    /// inversions with a Fenwick tree.
    fn crossings(&self) -> usize {
        let mut total = 0;
        let mut ends: Vec<(usize, usize)> = Vec::new();
        for r in 0..self.layers.len().saturating_sub(1) {
            ends.clear();
            for &v in &self.layers[r] {
                for &w in &self.down[v] {
                    ends.push((self.position[v], self.position[w]));
                }
            }
            ends.sort_unstable();
            let width = self.layers[r + 1].len();
            let mut tree = vec![0usize; width + 1];
            for (seen, &(_, lower)) in ends.iter().enumerate() {
                // Edges already seen whose lower end is right of this one cross it.
                let mut at = lower + 1;
                let mut not_right = 0;
                while at > 0 {
                    not_right += tree[at];
                    at &= at - 1;
                }
                total += seen - not_right;
                let mut at = lower + 1;
                while at <= width {
                    tree[at] += 1;
                    at += at & at.wrapping_neg();
                }
            }
        }
        total
    }

    /// The least separation between neighbours `u`, `v` (centre to centre).
    fn separation(&self, u: usize, v: usize) -> f64 {
        let gap = if u >= self.real || v >= self.real {
            self.spacing.edge
        } else {
            self.spacing.node
        };
        (self.across[u] + self.across[v]) / 2.0 + gap
    }

    /// Positions across: each rank packed, then sweeps that move every node
    /// towards its neighbours' mean without breaking order or separation.
    fn coordinates(&self) -> Vec<f64> {
        let mut x = vec![0.0; self.rank.len()];
        for layer in &self.layers {
            let mut at = 0.0;
            for (i, &v) in layer.iter().enumerate() {
                if i > 0 {
                    at += self.separation(layer[i - 1], v);
                }
                x[v] = at;
            }
            // Centre each rank on 0.
            let middle = at / 2.0;
            for &v in layer {
                x[v] -= middle;
            }
        }
        let depth = self.layers.len();
        let mut targets = Vec::new();
        let mut weights = Vec::new();
        let mut gaps = Vec::new();
        for sweep in 0..2 * COORDINATE_SWEEPS {
            if crate::interrupt::requested() {
                break; // Ctrl-C: the picture is thrown away
            }
            let downwards = sweep % 2 == 0;
            for step in 0..depth {
                let r = if downwards { step } else { depth - 1 - step };
                let layer = &self.layers[r];
                targets.clear();
                weights.clear();
                gaps.clear();
                for (i, &v) in layer.iter().enumerate() {
                    if i > 0 {
                        gaps.push(self.separation(layer[i - 1], v));
                    }
                    let (sum, count) = self.up[v]
                        .iter()
                        .chain(&self.down[v])
                        .fold((0.0, 0usize), |(s, c), &u| (s + x[u], c + 1));
                    // Dummies pull harder, so long edges run straight.
                    let pull = if v >= self.real { 4.0 } else { 1.0 };
                    if count == 0 {
                        targets.push(x[v]);
                        weights.push(0.25);
                    } else {
                        targets.push(sum / count as f64);
                        weights.push(pull * count as f64);
                    }
                }
                let placed = isotonic(&targets, &weights, &gaps);
                for (&v, &p) in layer.iter().zip(&placed) {
                    x[v] = p;
                }
            }
        }
        x
    }

    /// The caller's coordinates: ranks stacked along with room for labels,
    /// positions across shifted to start at 0, routes through the dummies.
    fn finish(
        &self,
        sizes: &[Size],
        edges: &[Edge],
        ranks: &[usize],
        across: &[f64],
        crossings: usize,
    ) -> Layout {
        let depth = self.layers.len();
        // Thickness of each rank (doubled numbering): its nodes, or its labels.
        let mut thickness = vec![0.0f64; depth];
        for (v, size) in sizes.iter().enumerate() {
            let r = self.rank[v];
            thickness[r] = thickness[r].max(size.along);
        }
        for (edge, chain) in edges.iter().zip(&self.chains) {
            if let Some(&label) = chain.last() {
                let r = self.rank[label];
                thickness[r] = thickness[r].max(edge.label.along);
            }
        }
        // Half the rank spacing each side of a label rank.
        let mut start = vec![0.0f64; depth];
        let mut at = 0.0;
        for r in 0..depth {
            if r > 0 {
                at += self.spacing.rank / 2.0;
            }
            start[r] = at;
            at += thickness[r];
        }
        let along_extent = at;
        // Shift across so the smallest edge is at 0.
        let mut low = f64::INFINITY;
        let mut high = f64::NEG_INFINITY;
        for (&at, &size) in across.iter().zip(&self.across) {
            low = low.min(at - size / 2.0);
            high = high.max(at + size / 2.0);
        }
        if !low.is_finite() {
            (low, high) = (0.0, 0.0);
        }
        let centre_of = |r: usize| start[r] + thickness[r] / 2.0;
        let centers: Vec<(f64, f64)> = (0..sizes.len())
            .map(|v| (centre_of(self.rank[v]), across[v] - low))
            .collect();
        let mut routes = Vec::with_capacity(edges.len());
        let mut labels = Vec::with_capacity(edges.len());
        for (edge, chain) in edges.iter().zip(&self.chains) {
            let (tail, head) = (centers[edge.from], centers[edge.to]);
            let mut route = vec![(tail.0 + sizes[edge.from].along / 2.0, tail.1)];
            for &dummy in chain {
                let r = self.rank[dummy];
                // A label rank without labels is no stop: one curve across the gap.
                if r % 2 == 1 && thickness[r] == 0.0 {
                    continue;
                }
                let y = across[dummy] - low;
                route.push((start[r], y));
                route.push((start[r] + thickness[r], y));
            }
            route.push((head.0 - sizes[edge.to].along / 2.0, head.1));
            let label = match chain.last() {
                Some(&dummy) => (centre_of(self.rank[dummy]), across[dummy] - low),
                // An edge pointing backwards: between its ends.
                None => ((tail.0 + head.0) / 2.0, (tail.1 + head.1) / 2.0),
            };
            labels.push(label);
            routes.push(route);
        }
        Layout {
            centers,
            ranks: ranks.to_vec(),
            routes,
            labels,
            extent: (along_extent, high - low),
            crossings,
        }
    }
}

/// Positions `x` minimising `Σ wᵢ (xᵢ − targetᵢ)²` subject to
/// `xᵢ₊₁ − xᵢ ≥ gapᵢ`: with `yᵢ = xᵢ − (gap₀ + … + gapᵢ₋₁)` the constraints read
/// `y` non-decreasing, an isotonic regression solved by pool-adjacent-violators
/// (Ayer et al. 1955) in linear time.
fn isotonic(targets: &[f64], weights: &[f64], gaps: &[f64]) -> Vec<f64> {
    let mut offsets = Vec::with_capacity(targets.len());
    let mut sum = 0.0;
    for i in 0..targets.len() {
        if i > 0 {
            sum += gaps[i - 1];
        }
        offsets.push(sum);
    }
    // Blocks of pooled values: (weighted mean, weight, count).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(targets.len());
    for i in 0..targets.len() {
        let mut block = (targets[i] - offsets[i], weights[i], 1);
        while let Some(&(mean, weight, count)) = blocks.last() {
            if mean <= block.0 {
                break;
            }
            blocks.pop();
            let total = weight + block.1;
            block = (
                (mean * weight + block.0 * block.1) / total,
                total,
                count + block.2,
            );
        }
        blocks.push(block);
    }
    let mut out = Vec::with_capacity(targets.len());
    for (mean, _, count) in blocks {
        for _ in 0..count {
            let i = out.len();
            out.push(mean + offsets[i]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPACING: Spacing = Spacing {
        rank: 30.0,
        node: 20.0,
        edge: 10.0,
    };

    fn boxes(n: usize) -> Vec<Size> {
        vec![
            Size {
                along: 100.0,
                across: 60.0
            };
            n
        ]
    }

    fn edge(from: usize, to: usize) -> Edge {
        Edge {
            from,
            to,
            label: Size::NONE,
        }
    }

    fn assert_no_overlap(sizes: &[Size], layout: &Layout) {
        for a in 0..sizes.len() {
            for b in a + 1..sizes.len() {
                let (ca, cb) = (layout.centers[a], layout.centers[b]);
                let apart_along = (ca.0 - cb.0).abs() >= (sizes[a].along + sizes[b].along) / 2.0;
                let apart_across =
                    (ca.1 - cb.1).abs() >= (sizes[a].across + sizes[b].across) / 2.0 - 1e-9;
                assert!(apart_along || apart_across, "nodes {a} and {b} overlap");
            }
        }
    }

    #[test]
    fn least_squares_under_order_constraints() {
        // Two nodes wanting the same place split around it.
        let x = isotonic(&[0.0, 0.0], &[1.0, 1.0], &[10.0]);
        assert_eq!(x, vec![-5.0, 5.0]);
        // Already far enough apart: unchanged.
        let x = isotonic(&[0.0, 20.0, 21.0], &[1.0, 1.0, 3.0], &[10.0, 1.0]);
        assert_eq!(x, vec![0.0, 20.0, 21.0]);
    }

    #[test]
    fn a_crossing_that_reordering_removes_is_removed() {
        // a→d, b→c with c, d given in the crossing order first.
        let sizes = boxes(4);
        let edges = [edge(0, 3), edge(1, 2)];
        let out = layout(&sizes, &edges, SPACING);
        assert_eq!(out.crossings, 0);
        assert_no_overlap(&sizes, &out);
    }

    #[test]
    fn ranks_follow_edges_and_leaves_sit_before_their_consumer() {
        // 0 → 1 → 2 → 3, and the source 4 feeds only 3.
        let sizes = boxes(5);
        let edges = [edge(0, 1), edge(1, 2), edge(2, 3), edge(4, 3)];
        let out = layout(&sizes, &edges, SPACING);
        assert_eq!(out.ranks, vec![0, 1, 2, 3, 2]);
        assert_no_overlap(&sizes, &out);
    }

    #[test]
    fn labels_into_one_node_are_kept_apart_on_their_edges() {
        // Four sources into one node: the four labels share one gap.
        let sizes = boxes(5);
        let label = Size {
            along: 40.0,
            across: 22.0,
        };
        let edges: Vec<Edge> = (0..4).map(|from| Edge { from, to: 4, label }).collect();
        let out = layout(&sizes, &edges, SPACING);
        let mut across: Vec<f64> = out.labels.iter().map(|l| l.1).collect();
        across.sort_by(f64::total_cmp);
        for pair in across.windows(2) {
            assert!(
                pair[1] - pair[0] >= 22.0 + SPACING.edge - 1e-9,
                "{across:?}"
            );
        }
        for (route, &(along, at)) in out.routes.iter().zip(&out.labels) {
            // Tail, the label's rank entered and left at the label, head.
            assert_eq!(route.len(), 4);
            assert_eq!((route[1].1, route[2].1), (at, at));
            assert!(route[1].0 <= along - 20.0 && along + 20.0 <= route[2].0);
            // Centred in the gap: rank spacing and label room as before.
            assert_eq!(route[3].0 - route[0].0, SPACING.rank + 40.0);
        }
        assert_no_overlap(&sizes, &out);
    }

    #[test]
    fn long_edges_route_through_every_rank_between() {
        let sizes = boxes(4);
        let edges = [edge(0, 1), edge(1, 2), edge(2, 3), edge(0, 3)];
        let out = layout(&sizes, &edges, SPACING);
        // Tail, two points in each of ranks 1 and 2, head.
        assert_eq!(out.routes[3].len(), 6);
        assert_no_overlap(&sizes, &out);
    }
}
