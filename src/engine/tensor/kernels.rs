//! The vectorised loops every tensor op runs: elementwise maps and zips with
//! broadcasting, the sum over broadcast axes, reductions, and the matrix
//! product through the `matrixmultiply` crate's dgemm.

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

/// `f` applied to each element.
pub(super) fn map(a: &[f64], f: impl Fn(f64) -> f64) -> Vec<f64> {
    a.iter().map(|&x| f(x)).collect()
}

/// `f(a, b)` at each element of `out`, `a` and `b` broadcast to it.
pub(super) fn zip(a: &Tensor, b: &Tensor, out: Shape, f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
    zip_data((a.data(), a.shape()), (b.data(), b.shape()), out, f)
}

/// [`zip`] of two operands given as their data and shape.
pub(super) fn zip_data(
    (x, xs): (&[f64], Shape),
    (y, ys): (&[f64], Shape),
    out: Shape,
    f: impl Fn(f64, f64) -> f64,
) -> Vec<f64> {
    if xs == out && ys == out {
        return x.iter().zip(y).map(|(&x, &y)| f(x, y)).collect();
    }
    let (sa, sb) = (Strides::of(xs, out), Strides::of(ys, out));
    let (m, n) = out.as_matrix();
    let mut data = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            data.push(f(x[sa.at(i, j)], y[sb.at(i, j)]));
        }
    }
    data
}

/// `full` (of shape `out`) summed over the axes along which `shape` was
/// broadcast to `out`, giving a tensor of `shape`: the adjoint of
/// broadcasting. `full` itself when the shapes are equal.
pub(super) fn sum_to(full: Vec<f64>, out: Shape, shape: Shape) -> Tensor {
    if shape == out {
        return Tensor::new(shape, full);
    }
    let s = Strides::of(shape, out);
    let (m, n) = out.as_matrix();
    let mut data = vec![0.0; shape.len()];
    for i in 0..m {
        for j in 0..n {
            data[s.at(i, j)] += full[i * n + j];
        }
    }
    Tensor::new(shape, data)
}

/// The sum of `a`, in eight interleaved partial sums added pairwise at the
/// end: the loop vectorises, and the rounding error grows about eight times
/// slower than a running sum's (numpy's `sum` is pairwise, in blocks of 8).
pub(super) fn sum(a: &[f64]) -> f64 {
    let mut lanes = [0.0; 8];
    let chunks = a.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().sum();
    for chunk in chunks {
        for (lane, &x) in lanes.iter_mut().zip(chunk) {
            *lane += x;
        }
    }
    let [a0, a1, a2, a3, a4, a5, a6, a7] = lanes;
    ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)) + tail
}

/// The index of the first maximum of `a` (the first nan, if any: nan
/// propagates); `None` when `a` is empty.
pub(super) fn argmax(a: &[f64]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &x) in a.iter().enumerate() {
        if x.is_nan() {
            return Some(i);
        }
        if best.is_none_or(|b| x > a[b]) {
            best = Some(i);
        }
    }
    best
}

/// `ln Σ exp(zᵢ)` computed stably as `m + ln Σ exp(zᵢ − m)`, `m = max z`, so
/// that no `exp` overflows (the usual shift; e.g. Blanchard, Higham and
/// Higham, "Accurate computation of the log-sum-exp and softmax functions",
/// 2021). `m` itself where it is ±inf or nan. `a` is not empty.
pub(super) fn logsumexp(a: &[f64]) -> f64 {
    let m = a[argmax(a).expect("logsumexp of a nonempty row")];
    if !m.is_finite() {
        return m;
    }
    m + sum(&map(a, |z| (z - m).exp())).ln()
}

/// `exp(zᵢ − m)/Σ exp(zⱼ − m)`, `m = max z`, into `out`: the softmax with no
/// `exp` overflowing (the same shift as [`logsumexp`]). `a` is not empty.
pub(super) fn softmax_into(a: &[f64], out: &mut Vec<f64>) {
    let m = a[argmax(a).expect("softmax of a nonempty row")];
    let start = out.len();
    out.extend(a.iter().map(|&z| (z - m).exp()));
    let total = sum(&out[start..]);
    for p in &mut out[start..] {
        *p /= total;
    }
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

/// The matrix product `a·b` (`a.cols == b.rows`), row-major, by the
/// `matrixmultiply` crate's dgemm (a pure-Rust blocked kernel in BLIS's
/// layout, with SIMD where the machine has it; it builds for wasm32 too).
pub(super) fn matmul(a: Factor<'_>, b: Factor<'_>) -> Vec<f64> {
    debug_assert_eq!(a.cols, b.rows);
    let (m, k, n) = (a.rows, a.cols, b.cols);
    let mut c = vec![0.0; m * n];
    if m == 0 || n == 0 || k == 0 {
        return c;
    }
    assert!(a.data.len() >= m * k && b.data.len() >= k * n);
    let stride = |s: usize| isize::try_from(s).expect("a stride fits an isize");
    // SAFETY: the pointers cover `m×k`, `k×n` and `m×n` elements read at
    // the strides given (asserted above for a and b; c is allocated so), and
    // c does not alias a or b.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a.data.as_ptr(),
            stride(a.stride.0),
            stride(a.stride.1),
            b.data.as_ptr(),
            stride(b.stride.0),
            stride(b.stride.1),
            0.0,
            c.as_mut_ptr(),
            stride(n),
            1,
        );
    }
    c
}
