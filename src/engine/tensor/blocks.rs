//! Ctrl-C inside the kernels of the ops that reduce, move or work along
//! rows (issue 39: Ctrl-C answers within a second on any work the memory
//! budget allows): their loops count the elements they have gone through
//! and ask the graph's interrupt once every [`BLOCK_ELEMENTS`] of them
//! ([`Blocks`]), between two rows, never inside one. A loop that is told to
//! stop gives `None`, and the node is not made (forward) or the walk ends
//! (backward). What each element is, and the order of every sum, is as it
//! was: only the looks are added. Also the loops that were slow for what
//! they did: the transpose in tiles, reductions along an axis row by row
//! (no list of each lane's indices), slices by ranges (no list of indices).

use super::kernels::BLOCK_ELEMENTS;

/// The looks of one loop at `stop`: one after every [`BLOCK_ELEMENTS`]
/// elements counted (a row is counted whole, and at least as one), never
/// before the first block, so a loop of one block runs as it did before.
pub(super) struct Blocks<'a> {
    stop: &'a dyn Fn() -> bool,
    counted: usize,
}

impl<'a> Blocks<'a> {
    /// The looks of a loop at `stop`, none counted yet.
    pub(super) fn new(stop: &'a dyn Fn() -> bool) -> Blocks<'a> {
        Blocks { stop, counted: 0 }
    }

    /// Counts `elements` about to be gone through; true when the elements
    /// counted before them fill a block and `stop` says stop (ask it before
    /// each row: `if blocks.stop_before(n) { return None; }`).
    #[inline]
    pub(super) fn stop_before(&mut self, elements: usize) -> bool {
        let full = self.counted >= BLOCK_ELEMENTS;
        if full {
            self.counted = 0;
        }
        self.counted += elements.max(1);
        full && (self.stop)()
    }
}

/// The side of the square tiles [`transpose`] copies: 32×32 numbers (8 KiB)
/// of the source, read along its rows, written along the columns of the
/// result, both within the first-level cache.
const TILE: usize = 32;

/// The transpose of the row-major `m×n` matrix in `a`, row-major `n×m`, in
/// tiles of [`TILE`]×[`TILE`] (a row at a time read down the columns of `a`
/// misses the cache at every element: an 8192×8192 transpose took 1.4 s, in
/// tiles well under a tenth of that). Looks at `stop` between two bands of
/// [`TILE`] rows of `a`: `None` when it said stop.
pub(super) fn transpose(
    a: &[f64],
    m: usize,
    n: usize,
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let mut t = vec![0.0; m * n];
    let mut blocks = Blocks::new(stop);
    for i0 in (0..m).step_by(TILE) {
        if blocks.stop_before(TILE * n) {
            return None;
        }
        let i1 = (i0 + TILE).min(m);
        for j0 in (0..n).step_by(TILE) {
            let j1 = (j0 + TILE).min(n);
            for i in i0..i1 {
                let row = &a[i * n..(i + 1) * n];
                for j in j0..j1 {
                    t[j * m + i] = row[j];
                }
            }
        }
    }
    Some(t)
}

/// `f(i, row)` for each row `i` of the row-major data `a` of rows of `n`
/// numbers, in order, looking at `stop` between two rows ([`Blocks`]):
/// false when it said stop.
pub(super) fn each_row(
    a: &[f64],
    n: usize,
    stop: &dyn Fn() -> bool,
    mut f: impl FnMut(usize, &[f64]),
) -> bool {
    let mut blocks = Blocks::new(stop);
    for (i, row) in a.chunks(n.max(1)).enumerate() {
        if blocks.stop_before(n) {
            return false;
        }
        f(i, row);
    }
    true
}

/// `f(i, row)` for each row `i` of the row-major data `a` of rows of `n`
/// numbers, each row written in place, looking at `stop` between two rows
/// ([`Blocks`]): false when it said stop.
pub(super) fn each_row_mut(
    a: &mut [f64],
    n: usize,
    stop: &dyn Fn() -> bool,
    mut f: impl FnMut(usize, &mut [f64]),
) -> bool {
    let mut blocks = Blocks::new(stop);
    for (i, row) in a.chunks_mut(n.max(1)).enumerate() {
        if blocks.stop_before(n) {
            return false;
        }
        f(i, row);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transpose in tiles is the transpose, for shapes that do not
    /// divide into tiles, thin ones and empty ones; asked to stop, it stops
    /// between bands, never before the first block.
    #[test]
    fn the_transpose_in_tiles_moves_each_element_and_stops_between_bands() {
        for (m, n) in [(1, 1), (3, 70), (70, 3), (33, 65), (0, 5), (5, 0), (64, 64)] {
            let a: Vec<f64> = (0..m * n).map(|e| e as f64).collect();
            let t = transpose(&a, m, n, &|| false).unwrap();
            for i in 0..m {
                for j in 0..n {
                    assert_eq!(t[j * m + i], a[i * n + j], "{m}×{n} at ({i}, {j})");
                }
            }
        }
        // 2²⁰ numbers a block: rows of 2¹⁵ make a band of 32 rows one block.
        let (m, n) = (3 * TILE, 1 << 15);
        let a = vec![1.0; m * n];
        let asked = std::cell::Cell::new(0);
        let stop = || {
            asked.set(asked.get() + 1);
            true
        };
        assert!(transpose(&a, m, n, &stop).is_none());
        assert_eq!(
            asked.get(),
            1,
            "asked before the second band, not the first"
        );
    }

    /// Rows are looked at once a block: rows of 1000 numbers, 1049 rows a block.
    #[test]
    fn each_row_asks_once_a_block_of_elements() {
        let n = 1000;
        let a = vec![0.5; 3000 * n];
        let asked = std::cell::Cell::new(0);
        let never = || {
            asked.set(asked.get() + 1);
            false
        };
        let mut rows = 0;
        assert!(each_row(&a, n, &never, |_, row| rows += row.len() / n));
        assert_eq!(rows, 3000);
        // After rows 1049 and 2098 (each count reaching 2²⁰ = 1048576).
        assert_eq!(asked.get(), 2);
        let mut b = a.clone();
        assert!(!each_row_mut(&mut b, n, &|| true, |_, row| row.fill(1.0)));
        let done = b.iter().filter(|&&x| x == 1.0).count();
        assert_eq!(done, 1049 * n, "one block of rows, then stopped");
    }

    /// Every op that reduces, moves or works along rows looks at the
    /// interrupt inside its forward kernel and inside its backward rule, on
    /// an operand of 4 blocks (2048×2048; `argmax` passes no gradient): a stop that says yes at its first
    /// look stops the forward (`Interrupted`, nothing appended), and a walk
    /// with a stop that never says yes looks more often than once a node.
    #[test]
    fn every_long_op_looks_at_the_interrupt_inside_its_kernels() {
        use super::super::{Select, Shape, Tensor, TensorError, TensorGraph, TensorOp};
        use crate::engine::Op;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let n = 2048;
        let square = || {
            let data = (0..n * n)
                .map(|e| ((e * 7919) % 1000) as f64 / 1000.0)
                .collect();
            Tensor::new(Shape::matrix(n, n), data)
        };
        let labels = Tensor::new(Shape::vector(n), (0..n).map(|i| (i % n) as f64).collect());
        let row = Tensor::new(Shape::vector(n), vec![0.5; n]);
        let column = Tensor::new(Shape::matrix(n, 1), vec![0.25; n]);
        let cases: Vec<(TensorOp, Vec<Tensor>)> = vec![
            (TensorOp::Transpose, vec![square()]),
            (TensorOp::SumAxis(0), vec![square()]),
            (TensorOp::SumAxis(1), vec![square()]),
            (TensorOp::SumKeepDims(0), vec![square()]),
            (TensorOp::MeanAxis(0), vec![square()]),
            (TensorOp::MeanAxis(1), vec![square()]),
            (TensorOp::Max, vec![square()]),
            (TensorOp::Min, vec![square()]),
            (TensorOp::MaxAxis(0), vec![square()]),
            (TensorOp::MinAxis(1), vec![square()]),
            (TensorOp::ArgMax(None), vec![square()]),
            (TensorOp::ArgMax(Some(0)), vec![square()]),
            (TensorOp::Softmax, vec![square()]),
            (TensorOp::LogSoftmax, vec![square()]),
            (TensorOp::LogSumExp, vec![square()]),
            (TensorOp::CrossEntropy, vec![square(), labels]),
            (TensorOp::Slice(Select::Range(1, n), None), vec![square()]),
            (
                TensorOp::Slice(Select::Range(0, n), Some(Select::Range(1, n))),
                vec![square()],
            ),
            (TensorOp::Outer, vec![row.clone(), row.clone()]),
            (TensorOp::Elementwise(Op::Add), vec![square(), row]),
            (TensorOp::Elementwise(Op::Add), vec![square(), column]),
        ];
        for (op, operands) in cases {
            let mut graph = TensorGraph::new();
            let ids: Vec<_> = operands
                .into_iter()
                .enumerate()
                .map(|(k, t)| match (op, k) {
                    (TensorOp::CrossEntropy, 1) => graph.constant(t).unwrap(),
                    _ => graph.leaf(t).unwrap(),
                })
                .collect();
            let looks = Arc::new(AtomicUsize::new(0));
            let stop = Arc::new(AtomicBool::new(true));
            let (l, s) = (Arc::clone(&looks), Arc::clone(&stop));
            graph.set_interrupt(Arc::new(move || {
                l.fetch_add(1, Ordering::Relaxed);
                s.load(Ordering::Relaxed)
            }));
            let before = graph.len();
            let stopped = graph.apply(op, &ids);
            assert!(
                matches!(stopped, Err(TensorError::Interrupted)),
                "{op:?} forward: {stopped:?}"
            );
            assert_eq!(graph.len(), before, "{op:?}: nothing appended");
            stop.store(false, Ordering::Relaxed);
            let node = graph.apply(op, &ids).unwrap();
            if matches!(op, TensorOp::ArgMax(_)) {
                continue; // no gradient passes
            }
            let loss = match graph.shape(node).rank() {
                0 => node,
                _ => graph.apply(TensorOp::Sum, &[node]).unwrap(),
            };
            looks.store(0, Ordering::Relaxed);
            let grads = graph.backward_keeping(loss, &[]);
            assert!(grads.get(ids[0]).is_some(), "{op:?}");
            // The walk looks once a node (the loss, the node, its operands).
            let nodes = graph.topo_order(loss).len();
            let seen = looks.load(Ordering::Relaxed);
            assert!(
                seen > nodes,
                "{op:?} backward: {seen} looks for {nodes} nodes"
            );
        }
    }
}
