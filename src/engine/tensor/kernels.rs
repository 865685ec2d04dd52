//! The vectorised loops every tensor op runs: elementwise maps and zips with
//! broadcasting, the sum over broadcast axes, reductions, and the matrix
//! product through the `gemm` crate on x86-64 (AVX-512 or AVX2 kernels,
//! chosen when run) and the `matrixmultiply` crate's dgemm elsewhere.

use std::mem::MaybeUninit;

use super::{Shape, Tensor};

/// How an operand of shape `input`, broadcast to `out`, is read at row `i`
/// and column `j` of `out` (as a matrix, [`Shape::as_matrix`]): element
/// `i·rows + j·cols` of its data. A broadcast axis (size 1, or missing) has
/// stride 0, so every position along it reads the same element.
#[derive(Debug, Clone, Copy)]
pub(super) struct Strides {
    rows: usize,
    cols: usize,
}

impl Strides {
    /// The strides of `input` read as `out` (which it broadcasts to).
    pub(super) fn of(input: Shape, out: Shape) -> Strides {
        let (m, n) = input.as_matrix();
        let (om, on) = out.as_matrix();
        Strides {
            rows: if m == 1 && om != 1 { 0 } else { n },
            cols: if n == 1 && on != 1 { 0 } else { 1 },
        }
    }

    /// The data index of `out`'s element (i, j).
    #[inline(always)]
    pub(super) fn at(self, i: usize, j: usize) -> usize {
        i * self.rows + j * self.cols
    }
}

/// How many elements an elementwise kernel ([`map_until`], [`zip_until`])
/// computes between two looks at `stop`: 2²⁰, a few ms to some 40 ms of a
/// release build on one core (a `pow` an element), so that Ctrl-C answers
/// well within a second on any elementwise op the memory budget allows (an
/// 8192×8192 result is 64 blocks).
pub(super) const BLOCK_ELEMENTS: usize = 1 << 20;

/// `f` applied to each element, in blocks of [`BLOCK_ELEMENTS`], asking
/// `stop` before each but the first (an op of one block runs as it did
/// before: whole): `None` when it said stop.
pub(super) fn map_until(
    a: &[f64],
    f: impl Fn(f64) -> f64,
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let mut out = Vec::with_capacity(a.len());
    for (k, block) in a.chunks(BLOCK_ELEMENTS).enumerate() {
        if k > 0 && stop() {
            return None;
        }
        out.extend(block.iter().map(|&x| f(x)));
    }
    Some(out)
}

/// [`map_until`] by a kernel that maps a slice at a time (`f(block, out)`
/// writes `out[i]` from `block[i]`, every element of `out`, which is
/// uninitialised: the row kernels of `rowtanh.rs`).
pub(super) fn map_slices_until(
    a: &[f64],
    f: fn(&[f64], &mut [MaybeUninit<f64>]),
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    // SAFETY: `f` writes every element of its `out` (its contract).
    unsafe {
        write_all(a.len(), stop, |start, out| {
            f(&a[start..start + out.len()], out)
        })
    }
}

/// A new buffer of `n` elements written by `write(start, out)` for each
/// block of at most [`BLOCK_ELEMENTS`] (`out` is elements `start..start +
/// out.len()`, uninitialised), asking `stop` before each block but the
/// first: `None` when it said stop. No element is written twice: the
/// buffer is not zeroed first (a large freed buffer reused by the
/// allocator, `gradcalc::hugepages`, would be zeroed for nothing).
///
/// # Safety
/// `write` must write every element of its `out` (the row kernels of
/// `rowtanh.rs` do: `RowKernels::forward`, `RowKernels::scaled_local`).
pub(super) unsafe fn write_all(
    n: usize,
    stop: &dyn Fn() -> bool,
    mut write: impl FnMut(usize, &mut [MaybeUninit<f64>]),
) -> Option<Vec<f64>> {
    let mut data: Vec<f64> = Vec::with_capacity(n);
    while data.len() < n {
        let start = data.len();
        if start > 0 && stop() {
            return None;
        }
        let len = (n - start).min(BLOCK_ELEMENTS);
        write(start, &mut data.spare_capacity_mut()[..len]);
        // SAFETY: `write` wrote every element of `start..start + len`
        // (the caller's promise), within the capacity of `n`.
        unsafe { data.set_len(start + len) };
    }
    Some(data)
}

/// `f(a, b)` at each element of `out`, `a` and `b` broadcast to it, in
/// blocks of about [`BLOCK_ELEMENTS`] (whole rows where an operand is
/// broadcast), asking `stop` before each but the first: `None` when it said
/// stop. Each element is `f` of the same two numbers, however it is split.
pub(super) fn zip_until(
    a: &Tensor,
    b: &Tensor,
    out: Shape,
    f: impl Fn(f64, f64) -> f64,
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    zip_data_until((a.data(), a.shape()), (b.data(), b.shape()), out, f, stop)
}

/// [`zip_until`] of two operands given as their data and shape.
pub(super) fn zip_data_until(
    (x, xs): (&[f64], Shape),
    (y, ys): (&[f64], Shape),
    out: Shape,
    f: impl Fn(f64, f64) -> f64,
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let mut data = Vec::with_capacity(out.len());
    if xs == out && ys == out {
        for (k, (x, y)) in x
            .chunks(BLOCK_ELEMENTS)
            .zip(y.chunks(BLOCK_ELEMENTS))
            .enumerate()
        {
            if k > 0 && stop() {
                return None;
            }
            data.extend(x.iter().zip(y).map(|(&x, &y)| f(x, y)));
        }
        return Some(data);
    }
    let (sa, sb) = (Strides::of(xs, out), Strides::of(ys, out));
    let (m, n) = out.as_matrix();
    let rows_a_block = (BLOCK_ELEMENTS / n.max(1)).max(1);
    if n == 0 {
        return Some(data);
    }
    // Row by row, each operand read as a slice of the row or as the one
    // number a broadcast row repeats, so that the loop vectorises.
    for i in 0..m {
        if i > 0 && i % rows_a_block == 0 && stop() {
            return None;
        }
        let (xi, yi) = (sa.at(i, 0), sb.at(i, 0));
        match (sa.cols, sb.cols) {
            (0, 0) => data.extend(std::iter::repeat_n(f(x[xi], y[yi]), n)),
            (0, _) => data.extend(y[yi..yi + n].iter().map(|&y| f(x[xi], y))),
            (_, 0) => data.extend(x[xi..xi + n].iter().map(|&x| f(x, y[yi]))),
            _ => data.extend(
                x[xi..xi + n]
                    .iter()
                    .zip(&y[yi..yi + n])
                    .map(|(&x, &y)| f(x, y)),
            ),
        }
    }
    Some(data)
}

/// `full` (of shape `out`) summed over the axes along which `shape` was
/// broadcast to `out`, giving a tensor of `shape`: the adjoint of
/// broadcasting. `full` itself when the shapes are equal. `None` when
/// `stop` said stop ([`summed_to`]).
pub(super) fn sum_to(
    full: Vec<f64>,
    out: Shape,
    shape: Shape,
    stop: &dyn Fn() -> bool,
) -> Option<Tensor> {
    if shape == out {
        return Some(Tensor::new(shape, full));
    }
    Some(Tensor::new(shape, summed_to(&full, out, shape, stop)?))
}

/// The data of [`sum_to`] read from a borrowed `full`: row by row of
/// `out`, each element added to its place in `shape` (a row broadcast
/// down the rows takes every row in turn, a column broadcast along the
/// columns the row's elements in turn), in row-major order. Looks at
/// `stop` between two rows (`blocks.rs`): `None` when it said stop.
pub(super) fn summed_to(
    full: &[f64],
    out: Shape,
    shape: Shape,
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let s = Strides::of(shape, out);
    let (m, n) = out.as_matrix();
    let mut data = vec![0.0; shape.len()];
    if n == 0 {
        return Some(data);
    }
    let mut blocks = super::blocks::Blocks::new(stop);
    for (i, row) in full.chunks(n).take(m).enumerate() {
        if blocks.stop_before(n) {
            return None;
        }
        let at = s.at(i, 0);
        if s.cols == 0 {
            for &x in row {
                data[at] += x;
            }
        } else {
            for (d, &x) in data[at..at + n].iter_mut().zip(row) {
                *d += x;
            }
        }
    }
    Some(data)
}

/// The sum of `a`, in eight interleaved partial sums added pairwise at the
/// end: the loop vectorises, and the rounding error grows about eight times
/// slower than a running sum's (numpy's `sum` is pairwise, in blocks of 8).
pub(super) fn sum(a: &[f64]) -> f64 {
    super::rowexp::sum_lanes(a)
}

/// `ln Σ exp(zᵢ)` computed stably as `m + ln Σ exp(zᵢ − m)`, `m = max z`, so
/// that no `exp` overflows (the usual shift; e.g. Blanchard, Higham and
/// Higham, "Accurate computation of the log-sum-exp and softmax functions",
/// 2021). `m` itself where it is ±inf or nan. `a` is not empty. Vectorised
/// (`rowexp.rs`).
pub(super) fn logsumexp(a: &[f64]) -> f64 {
    super::rowexp::logsumexp(a)
}

/// `exp(zᵢ − m)/Σ exp(zⱼ − m)`, `m = max z`, into `out`: the softmax with no
/// `exp` overflowing (the same shift as [`logsumexp`]). `a` is not empty.
/// Vectorised (`rowexp.rs`).
pub(super) fn softmax_into(a: &[f64], out: &mut Vec<f64>) {
    super::rowexp::softmax_into(a, out);
}

/// One factor of a matrix product as dgemm reads it: its data and the
/// strides of its rows and columns (`(n, 1)` for a row-major `m×n`, `(1, n)`
/// for its transpose, read in place).
#[derive(Clone, Copy)]
pub(super) struct Factor<'a> {
    pub(super) data: &'a [f64],
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) stride: (usize, usize),
}

impl<'a> Factor<'a> {
    /// The row-major `rows×cols` matrix held in `data`.
    pub(super) fn plain(data: &'a [f64], rows: usize, cols: usize) -> Factor<'a> {
        Factor {
            data,
            rows,
            cols,
            stride: (cols, 1),
        }
    }

    /// The transpose of the row-major `rows×cols` matrix in `data`, a
    /// `cols×rows` matrix read in place.
    pub(super) fn transposed(data: &'a [f64], rows: usize, cols: usize) -> Factor<'a> {
        Factor {
            data,
            rows: cols,
            cols: rows,
            stride: (1, cols),
        }
    }
}

/// The most multiply-adds one call of dgemm runs in [`matmul`] before
/// `stop` is asked again: 2³⁰ in a release build on x86-64, about 35 ms of
/// `gemm`'s AVX-512 kernels on one core (30 G multiply-adds a second), so
/// that Ctrl-C answers well within a second on any product the memory
/// budget allows (a 4000×4000 product is 64 blocks); 2²⁷ elsewhere, where
/// the kernel is slower (`matrixmultiply` in wasm32) or unoptimised (a
/// debug build, whose dependencies are not optimised).
///
/// `gemm` packs each block's factors again: the three products of a
/// 2048×2048 forward and backward (`A·B`, `G·Bᵀ`, `Aᵀ·G`) took 17–26% longer
/// in blocks of 2²⁷ (256×256 of the result) than each in one call, and
/// 4–12% longer in blocks of 2³⁰ (720×720) (docs/benchmarks.md).
pub(super) const BLOCK_MULTIPLY_ADDS: usize =
    if cfg!(all(target_arch = "x86_64", not(debug_assertions))) {
        1 << 30
    } else {
        1 << 27
    };

/// The matrix product `a·b` (`a.cols == b.rows`), row-major: on x86-64 by
/// the `gemm` crate (pure-Rust blocked kernels in BLIS's layout for
/// AVX-512, AVX2 with FMA or SSE, chosen when run: numpy's OpenBLAS runs
/// AVX-512 kernels, `matrixmultiply` has none), elsewhere (wasm32) by the
/// `matrixmultiply` crate's dgemm.
///
/// A product of more than [`BLOCK_MULTIPLY_ADDS`] multiply-adds runs as
/// blocks of the result (rows × columns, each over the whole inner
/// dimension), one dgemm call each, asking `stop` between two: `None` when
/// it said stop. Every element is still one dot product over the whole
/// inner dimension, in dgemm's order, so the blocks change no bit of the
/// result (`blocks_change_no_bit` in the tests).
pub(super) fn matmul(a: Factor<'_>, b: Factor<'_>, stop: &dyn Fn() -> bool) -> Option<Vec<f64>> {
    matmul_in_blocks(a, b, stop, BLOCK_MULTIPLY_ADDS)
}

/// [`matmul`] with blocks of at most `block` multiply-adds.
fn matmul_in_blocks(
    a: Factor<'_>,
    b: Factor<'_>,
    stop: &dyn Fn() -> bool,
    block: usize,
) -> Option<Vec<f64>> {
    debug_assert_eq!(a.cols, b.rows);
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if m == 0 || n == 0 || k == 0 {
        return Some(vec![0.0; m * n]);
    }
    assert!(a.data.len() >= m * k && b.data.len() >= k * n);
    // Not zeroed: dgemm writes every element without reading it (a large
    // buffer may be a freed one the allocator hands back, `hugepages`).
    let mut c: Vec<f64> = Vec::with_capacity(m * n);
    let (rows, cols) = block_sides(m, k, n, block);
    for i in (0..m).step_by(rows) {
        for j in (0..n).step_by(cols) {
            if stop() {
                return None;
            }
            let (mb, nb) = (rows.min(m - i), cols.min(n - j));
            let a_block = a.at(i, 0);
            let b_block = b.at(0, j);
            // SAFETY: `a_block` reads rows i..i+mb of `a` (k columns) and
            // `b_block` columns j..j+nb of `b` (k rows) at their strides,
            // within the lengths asserted above; the block of `c` at (i, j)
            // with row stride n holds mb×nb elements within its capacity
            // m×n, and c does not alias a or b.
            unsafe {
                let c_block = c.as_mut_ptr().add(i * n + j);
                dgemm_block(mb, k, nb, a_block, b_block, c_block, n);
            }
        }
    }
    // SAFETY: the blocks cover the m×n result, each element written once
    // by dgemm (which writes every element of its block, not reading it).
    unsafe { c.set_len(m * n) };
    Some(c)
}

/// The rows and columns of one block of an `m×k` by `k×n` product: the
/// whole result when it is within `block` multiply-adds, otherwise about
/// square blocks of at most that many (a multiple of 8 on a side, at least
/// 8; a thin result keeps its thin side whole).
fn block_sides(m: usize, k: usize, n: usize, block: usize) -> (usize, usize) {
    if m.saturating_mul(k).saturating_mul(n) <= block {
        return (m, n);
    }
    let side = (((block / k) as f64).sqrt() as usize / 8 * 8).max(8);
    if m <= side {
        (m, (block / (k * m)).max(8).min(n))
    } else if n <= side {
        ((block / (k * n)).max(8).min(m), n)
    } else {
        (side, side)
    }
}

/// One dgemm call: `c = a·b` for an `m×k` block read from `a` and a `k×n`
/// block read from `b` at their strides, into `c` with row stride `ldc`,
/// every element of the block written and none read (so `c` may be
/// uninitialised memory).
///
/// # Safety
/// `a` and `b` must cover the blocks at their strides, `c_at` must point
/// to memory for `m` rows of `n` elements `ldc` apart, not aliasing `a`
/// or `b`.
unsafe fn dgemm_block(
    m: usize,
    k: usize,
    n: usize,
    a: Block<'_>,
    b: Block<'_>,
    c_at: *mut f64,
    ldc: usize,
) {
    let stride = |s: usize| isize::try_from(s).expect("a stride fits an isize");
    let (a_at, a_rows, a_cols) = (a.data.as_ptr(), stride(a.stride.0), stride(a.stride.1));
    let (b_at, b_rows, b_cols) = (b.data.as_ptr(), stride(b.stride.0), stride(b.stride.1));
    let c_rows = stride(ldc);
    // SAFETY: as the caller promises. `gemm` writes `c = 1·(a·b)` without
    // reading `c` (`read_dst` false makes its `alpha` 0, and the kernels
    // then store without loading), on this thread. Its arguments: the
    // sizes m, n, k; c with its column and row strides, read_dst; a and b
    // each with column and row strides; alpha, beta, three conjugations.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        #[rustfmt::skip]
        gemm::gemm(m, n, k, c_at, 1, c_rows, false, a_at, a_cols, a_rows, b_at, b_cols, b_rows,
                   0.0, 1.0, false, false, false, gemm::Parallelism::None);
    }
    // SAFETY: as the caller promises. `dgemm`'s arguments: the sizes m, k,
    // n; alpha; a and b each with row and column strides; beta; c with
    // its row and column strides (beta 0: c is written, not read).
    #[cfg(not(target_arch = "x86_64"))]
    unsafe {
        #[rustfmt::skip]
        matrixmultiply::dgemm(m, k, n, 1.0, a_at, a_rows, a_cols, b_at, b_rows, b_cols,
                              0.0, c_at, c_rows, 1);
    }
}

/// A factor's data from one element on, with the factor's strides.
#[derive(Clone, Copy)]
struct Block<'a> {
    data: &'a [f64],
    stride: (usize, usize),
}

impl<'a> Factor<'a> {
    /// The factor read from row `i`, column `j` on.
    fn at(self, i: usize, j: usize) -> Block<'a> {
        Block {
            data: &self.data[i * self.stride.0 + j * self.stride.1..],
            stride: self.stride,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row-major `rows×cols` data, element e = sin(1 + seed + 0.37·e).
    fn data(seed: f64, rows: usize, cols: usize) -> Vec<f64> {
        (0..rows * cols)
            .map(|e| (1.0 + seed + 0.37 * e as f64).sin())
            .collect()
    }

    /// Blocks of a product change no bit of it: each element is one dot
    /// product over the whole inner dimension either way. Shapes that do
    /// not divide into the blocks, thin ones, and transposed factors. And
    /// a product writes every element of its result, which is not zeroed
    /// first: over memory just freed full of nan (which the allocator hands
    /// out again), each element is the dot product of its row and column
    /// (within 1e-12 of one summed in index order).
    #[test]
    fn blocks_change_no_bit() {
        for (m, k, n) in [(37, 53, 29), (5, 40, 301), (301, 40, 5), (64, 64, 64)] {
            let (a, b) = (data(0.0, m, k), data(1.0, k, n));
            let (at, bt) = (data(2.0, k, m), data(3.0, n, k));
            let pairs = [
                (Factor::plain(&a, m, k), Factor::plain(&b, k, n)),
                (Factor::transposed(&at, k, m), Factor::transposed(&bt, n, k)),
            ];
            let product = |x, y, block| {
                drop(std::hint::black_box(vec![f64::NAN; m * n]));
                matmul_in_blocks(x, y, &|| false, block).unwrap()
            };
            for (x, y) in pairs {
                let whole = product(x, y, usize::MAX);
                let element = |f: Factor<'_>, i, j| f.data[i * f.stride.0 + j * f.stride.1];
                for (e, got) in whole.iter().enumerate() {
                    let (i, j) = (e / n, e % n);
                    let dot: f64 = (0..k).map(|l| element(x, i, l) * element(y, l, j)).sum();
                    assert!((got - dot).abs() <= 1e-12, "({i}, {j}): {got}, not {dot}");
                }
                for block in [1, 1000, 20_000] {
                    let (rows, cols) = block_sides(m, k, n, block);
                    assert!(rows < m || cols < n, "{m}×{k}×{n} in blocks of {block}");
                    let blocked = product(x, y, block);
                    assert!(
                        whole
                            .iter()
                            .zip(&blocked)
                            .all(|(p, q)| p.to_bits() == q.to_bits()),
                        "{m}×{k}×{n} in blocks of {block}"
                    );
                }
            }
        }
    }

    /// An elementwise kernel asked to stop stops between blocks of
    /// [`BLOCK_ELEMENTS`]; not asked, it gives each element as the op
    /// gives it, same shapes and broadcast.
    #[test]
    fn elementwise_kernels_stop_between_blocks() {
        let n = 2 * BLOCK_ELEMENTS + 5;
        let x = data(0.0, 1, n);
        let asked = std::cell::Cell::new(0);
        let stop_at_second = || {
            asked.set(asked.get() + 1);
            asked.get() == 2
        };
        // Asked before the second and the third block (not the first).
        assert!(map_until(&x, f64::tanh, &stop_at_second).is_none());
        assert_eq!(asked.get(), 2);
        let mapped = map_until(&x, f64::tanh, &|| false).unwrap();
        assert!(
            mapped
                .iter()
                .zip(&x)
                .all(|(m, x)| m.to_bits() == x.tanh().to_bits())
        );
        let a = Tensor::new(Shape::vector(n), x.clone());
        let b = Tensor::new(Shape::vector(n), data(1.0, 1, n));
        asked.set(0);
        assert!(zip_until(&a, &b, a.shape(), |x, y| x * y, &stop_at_second).is_none());
        let zipped = zip_until(&a, &b, a.shape(), |x, y| x * y, &|| false).unwrap();
        assert!(
            zipped
                .iter()
                .zip(x.iter().zip(b.data()))
                .all(|(z, (x, y))| *z == x * y)
        );
        // Broadcast: a 3000×1 column against a 1×1000 row, stopped at the
        // third block of rows (1048 rows a block; asked before the second).
        let col = Tensor::new(Shape::matrix(3000, 1), data(2.0, 3000, 1));
        let row = Tensor::new(Shape::matrix(1, 1000), data(3.0, 1, 1000));
        let out = Shape::matrix(3000, 1000);
        asked.set(0);
        let stop_at_second = || {
            asked.set(asked.get() + 1);
            asked.get() == 2
        };
        assert!(zip_until(&col, &row, out, |x, y| x - y, &stop_at_second).is_none());
        assert_eq!(asked.get(), 2);
        let whole = zip_until(&col, &row, out, |x, y| x - y, &|| false).unwrap();
        assert_eq!(whole.len(), 3_000_000);
        assert_eq!(whole[1000 * 1234 + 567], col.data()[1234] - row.data()[567]);
    }

    /// A product asked to stop stops between two blocks: `stop` is asked
    /// once a block (here 3 blocks of rows by 1 of columns is more than 2).
    #[test]
    fn a_product_stops_between_blocks() {
        let (a, b) = (data(0.0, 24, 8), data(1.0, 8, 8));
        let asked = std::cell::Cell::new(0);
        let stop = || {
            asked.set(asked.get() + 1);
            asked.get() > 2
        };
        let x = Factor::plain(&a, 24, 8);
        let y = Factor::plain(&b, 8, 8);
        assert_eq!(block_sides(24, 8, 8, 8 * 8 * 8), (8, 8));
        assert!(matmul_in_blocks(x, y, &stop, 8 * 8 * 8).is_none());
        assert_eq!(asked.get(), 3);
        // Not asked to stop: 3 blocks, asked 3 times, the whole product.
        let asked = std::cell::Cell::new(0);
        let never = || {
            asked.set(asked.get() + 1);
            false
        };
        assert!(matmul_in_blocks(x, y, &never, 8 * 8 * 8).is_some());
        assert_eq!(asked.get(), 3);
    }
}
