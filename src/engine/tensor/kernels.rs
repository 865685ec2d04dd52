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
    m + sum(&map(a, |z| exp_nonpositive(z - m))).ln()
}

/// `exp(z)` for `z ≤ 0` (what the max shift of [`logsumexp`] and
/// [`softmax_into`] leaves), within 1 ulp of `f64::exp` (tested over
/// [−745, 0] and at the edges), written without branches or calls so that
/// a loop of it vectorises (`f64::exp` is a call per element; numpy's is
/// vectorised too). nan stays nan, −∞ gives 0.
///
/// The usual reduction (e.g. Muller, *Elementary Functions*, 3rd ed.,
/// §11.2; fdlibm's `e_exp.c`): `k = round(z/ln 2)`, `r = z − k·ln 2` in
/// two parts (Cody and Waite) so that `r` is exact to about 2⁻⁶⁴, `exp(r)`
/// by its Taylor series to `r¹³/13!` (|r| ≤ ln 2 / 2: the first term left
/// out is below 2⁻⁵⁸ of the sum), then `2^k` by building its exponent
/// bits, in two factors so that a result below 2⁻¹⁰²² is rounded once into
/// the subnormals as `f64::exp`'s is.
#[inline(always)]
pub(super) fn exp_nonpositive(z: f64) -> f64 {
    // ln 2 in two parts, fdlibm's: the high part's last 32 bits are zero,
    // so k·LN2_HI is exact for |k| < 2²⁰.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    const SHIFT: f64 = 6_755_399_441_055_744.0; // 1.5·2⁵²: adding it rounds to an integer
    // Below −746 exp rounds to 0; the bound keeps k in range.
    let x = if z < -746.0 { -746.0 } else { z };
    let t = x * std::f64::consts::LOG2_E + SHIFT;
    let k = t - SHIFT;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut p = 1.0 / 6_227_020_800.0; // 1/13!
    for c in [
        1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        1.0 / 40_320.0,
        1.0 / 5_040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ] {
        p = p * r + c;
    }
    // k as an integer: the low bits of t (t − SHIFT is exact).
    let k = (t.to_bits() as i64).wrapping_sub(SHIFT.to_bits() as i64);
    let half = k >> 1;
    let scale = |e: i64| f64::from_bits(((e + 1023) as u64) << 52);
    let e = p * scale(half) * scale(k - half);
    if z.is_nan() {
        z
    } else if z < -746.0 {
        0.0
    } else {
        e
    }
}

/// `exp(zᵢ − m)/Σ exp(zⱼ − m)`, `m = max z`, into `out`: the softmax with no
/// `exp` overflowing (the same shift as [`logsumexp`]). `a` is not empty.
pub(super) fn softmax_into(a: &[f64], out: &mut Vec<f64>) {
    let m = a[argmax(a).expect("softmax of a nonempty row")];
    let start = out.len();
    out.extend(a.iter().map(|&z| exp_nonpositive(z - m)));
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

/// The most multiply-adds one call of dgemm runs in [`matmul`] before
/// `stop` is asked again: 2²⁷, about 15–40 ms of a release build on one core,
/// so that Ctrl-C answers well within a second on any product the memory
/// budget allows (a 4000×4000 product is about 480 blocks).
pub(super) const BLOCK_MULTIPLY_ADDS: usize = 1 << 27;

/// The matrix product `a·b` (`a.cols == b.rows`), row-major, by the
/// `matrixmultiply` crate's dgemm (a pure-Rust blocked kernel in BLIS's
/// layout, with SIMD where the machine has it; it builds for wasm32 too).
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
    let mut c = vec![0.0; m * n];
    if m == 0 || n == 0 || k == 0 {
        return Some(c);
    }
    assert!(a.data.len() >= m * k && b.data.len() >= k * n);
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
            // with row stride n holds mb×nb elements within its m×n, and c
            // does not alias a or b.
            unsafe { dgemm_block(mb, k, nb, a_block, b_block, &mut c[i * n + j..], n) };
        }
    }
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
/// block read from `b` at their strides, into `c` with row stride `ldc`.
///
/// # Safety
/// `a` and `b` must cover the blocks at their strides, `c` must hold `m`
/// rows of `n` elements `ldc` apart, and not alias `a` or `b`.
unsafe fn dgemm_block(
    m: usize,
    k: usize,
    n: usize,
    a: Block<'_>,
    b: Block<'_>,
    c: &mut [f64],
    ldc: usize,
) {
    debug_assert!(c.len() >= (m - 1) * ldc + n);
    let stride = |s: usize| isize::try_from(s).expect("a stride fits an isize");
    // SAFETY: as the caller promises.
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
            stride(ldc),
            1,
        );
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

    /// The softmax's `exp` is within 1 ulp of `f64::exp` over [−745, 0]
    /// (10⁶ points and the edges), 0 below, nan for nan.
    #[test]
    fn exp_of_a_nonpositive_number_is_within_an_ulp_of_the_library_one() {
        let ulps = |a: f64, b: f64| (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
        let mut worst = 0;
        for i in 0..=1_000_000 {
            let z = -745.0 * f64::from(i) / 1e6;
            worst = worst.max(ulps(exp_nonpositive(z), z.exp()));
        }
        for z in [
            0.0,
            -0.0,
            -1e-300,
            -1e-17,
            -0.34657359,
            -0.34657360,
            -708.39,
            -708.4,
            -744.4,
            -745.1,
        ] {
            worst = worst.max(ulps(exp_nonpositive(z), z.exp()));
        }
        assert!(worst <= 1, "{worst} ulps");
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert_eq!(exp_nonpositive(-800.0), 0.0);
        assert_eq!(exp_nonpositive(f64::NEG_INFINITY), 0.0);
        assert!(exp_nonpositive(f64::NAN).is_nan());
    }

    /// Blocks of a product change no bit of it: each element is one dot
    /// product over the whole inner dimension either way. Shapes that do
    /// not divide into the blocks, thin ones, and transposed factors.
    #[test]
    fn blocks_change_no_bit() {
        for (m, k, n) in [(37, 53, 29), (5, 40, 301), (301, 40, 5), (64, 64, 64)] {
            let (a, b) = (data(0.0, m, k), data(1.0, k, n));
            let (at, bt) = (data(2.0, k, m), data(3.0, n, k));
            let pairs = [
                (Factor::plain(&a, m, k), Factor::plain(&b, k, n)),
                (Factor::transposed(&at, k, m), Factor::transposed(&bt, n, k)),
            ];
            for (x, y) in pairs {
                let whole = matmul_in_blocks(x, y, &|| false, usize::MAX).unwrap();
                for block in [1, 1000, 20_000] {
                    let (rows, cols) = block_sides(m, k, n, block);
                    assert!(rows < m || cols < n, "{m}×{k}×{n} in blocks of {block}");
                    let blocked = matmul_in_blocks(x, y, &|| false, block).unwrap();
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
