//! The ops a batch of examples needs beside the layer's: reductions along
//! an axis (`mean`, `max`, `min`, `argmax`), the smallest element, the
//! log-softmax, the cross-entropy of scores against integer class labels,
//! one-hot rows, comparisons (0/1 tensors) and slices (`X[0:4]`, `X[:, 0]`).
//! The forward loops and the vector–Jacobian products are here; the op
//! table (`ops.rs`) and the backward walk (`backward.rs`) call them.

use std::ops::Range;

use super::blocks::{Blocks, each_row};
use super::kernels::{self, BLOCK_ELEMENTS};
use super::ops::{SOFTMAX_SOURCE, rows};
use super::{Shape, ShapeError, Tensor, TensorArity, TensorOp, TensorOpInfo};

/// A comparison of two tensors, element by element with numpy's
/// broadcasting, giving 1 where it holds and 0 where not (IEEE 754: every
/// comparison with nan is false but `!=`). It passes no gradient: its
/// output is piecewise constant, as PyTorch's comparisons return tensors
/// that do not require a gradient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Comparison {
    /// `a == b`
    Eq,
    /// `a != b`
    Ne,
    /// `a < b`
    Lt,
    /// `a <= b`
    Le,
    /// `a > b`
    Gt,
    /// `a >= b`
    Ge,
}

impl Comparison {
    /// Every comparison.
    pub const ALL: [Comparison; 6] = [
        Comparison::Eq,
        Comparison::Ne,
        Comparison::Lt,
        Comparison::Le,
        Comparison::Gt,
        Comparison::Ge,
    ];

    /// The operator as typed: `==`, `!=`, `<`, `<=`, `>`, `>=`.
    pub fn symbol(self) -> &'static str {
        match self {
            Comparison::Eq => "==",
            Comparison::Ne => "!=",
            Comparison::Lt => "<",
            Comparison::Le => "<=",
            Comparison::Gt => ">",
            Comparison::Ge => ">=",
        }
    }

    /// The comparison written `symbol`; `None` for any other text.
    pub fn from_symbol(symbol: &str) -> Option<Comparison> {
        Comparison::ALL.into_iter().find(|c| c.symbol() == symbol)
    }

    /// 1 where `a` compares so with `b`, else 0.
    pub fn apply(self, a: f64, b: f64) -> f64 {
        let holds = match self {
            Comparison::Eq => a == b,
            Comparison::Ne => a != b,
            Comparison::Lt => a < b,
            Comparison::Le => a <= b,
            Comparison::Gt => a > b,
            Comparison::Ge => a >= b,
        };
        if holds { 1.0 } else { 0.0 }
    }
}

/// What a slice takes along one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Select {
    /// The positions `start..end` (numpy's `start:end`); the axis stays.
    Range(usize, usize),
    /// The one position `i`; the axis is dropped (numpy's `X[:, 0]`).
    At(usize),
}

/// The data indices of `shape` that each element of `reduce(·, axis)`
/// reduces, one lane per output element in row-major order: a vector's one
/// lane; of an `m×n` matrix, axis 0 gives the `n` columns and axis 1 the `m`
/// rows. `axis` is one `shape` has ([`axis_shape`]).
pub(super) fn lanes(shape: Shape, axis: usize) -> Vec<Vec<usize>> {
    match (shape.dims(), axis) {
        (&[n], _) => vec![(0..n).collect()],
        (&[m, n], 0) => (0..n)
            .map(|j| (0..m).map(|i| i * n + j).collect())
            .collect(),
        (&[m, n], _) => (0..m).map(|i| (i * n..(i + 1) * n).collect()).collect(),
        _ => vec![vec![0]],
    }
}

/// The shape of a reduction `op` over `axis` of `shape`: the axis
/// disappears (`m×n` → `n` over axis 0, `m` over axis 1, `n` → `()`).
///
/// # Errors
/// [`ShapeError::NoSuchAxis`] for an axis `shape` does not have.
pub(super) fn axis_shape(op: &'static str, shape: Shape, axis: usize) -> Result<Shape, ShapeError> {
    match (shape.dims(), axis) {
        ([_], 0) => Ok(Shape::scalar()),
        (&[_, n], 0) => Ok(Shape::vector(n)),
        (&[m, _], 1) => Ok(Shape::vector(m)),
        _ => Err(ShapeError::NoSuchAxis { op, shape, axis }),
    }
}

/// The index (into `lane`) of the first largest (`max`) or smallest value of
/// `data` at the lane's indices; the first nan if any (nan propagates, as in
/// numpy's `argmax`). `lane` is not empty.
pub(super) fn first_extremum(data: &[f64], lane: &[usize], max: bool) -> usize {
    let mut best = 0;
    for (k, &i) in lane.iter().enumerate() {
        let x = data[i];
        if x.is_nan() {
            return k;
        }
        let b = data[lane[best]];
        if max && x > b || !max && x < b {
            best = k;
        }
    }
    best
}

/// The data indices where `data` takes its largest (`max`) or smallest value:
/// every tie, in order; only the first nan when there is one. `data` is not
/// empty.
pub(super) fn ties(data: &[f64], max: bool) -> Vec<usize> {
    let all: Vec<usize> = (0..data.len()).collect();
    let first = all[first_extremum(data, &all, max)];
    let value = data[first];
    if value.is_nan() {
        return vec![first];
    }
    all.into_iter().filter(|&i| data[i] == value).collect()
}

/// The index of the first largest (`max`) or smallest element of `data`,
/// or of its first nan (as [`first_extremum`] over every index), looking at
/// `stop` once a block ([`Blocks`]): `None` when it said stop. `data` is
/// not empty.
pub(super) fn first_extremum_until(
    data: &[f64],
    max: bool,
    stop: &dyn Fn() -> bool,
) -> Option<usize> {
    let (mut best, mut b) = (0, data[0]);
    let mut blocks = Blocks::new(stop);
    for (c, chunk) in data.chunks(BLOCK_ELEMENTS).enumerate() {
        if blocks.stop_before(chunk.len()) {
            return None;
        }
        for (k, &x) in chunk.iter().enumerate() {
            if x.is_nan() {
                return Some(c * BLOCK_ELEMENTS + k);
            }
            if max && x > b || !max && x < b {
                (best, b) = (c * BLOCK_ELEMENTS + k, x);
            }
        }
    }
    Some(best)
}

/// `max(x)` or `min(x)` of every element's backward: the upstream split
/// evenly among the tied extrema (PyTorch's `evenly_distribute_backward`),
/// every tie found as [`ties`] finds them, looking at `stop` once a block:
/// the first extremum's index, how many tie for it, and the gradient;
/// `None` when `stop` said stop.
pub(super) fn extremum_vjp_until(
    data: &[f64],
    max: bool,
    up: f64,
    stop: &dyn Fn() -> bool,
) -> Option<(usize, usize, Vec<f64>)> {
    let first = first_extremum_until(data, max, stop)?;
    let value = data[first];
    let mut at = Vec::new();
    if value.is_nan() {
        at.push(first);
    } else {
        let mut blocks = Blocks::new(stop);
        for (c, chunk) in data.chunks(BLOCK_ELEMENTS).enumerate() {
            if blocks.stop_before(chunk.len()) {
                return None;
            }
            let start = c * BLOCK_ELEMENTS;
            at.extend(
                (0..chunk.len())
                    .filter(|&k| chunk[k] == value)
                    .map(|k| start + k),
            );
        }
    }
    let mut g = vec![0.0; data.len()];
    for &i in &at {
        g[i] = up / at.len() as f64;
    }
    Some((first, at.len(), g))
}

/// The lanes of a reduction over `axis` of `shape` as rows of a row-major
/// `m×n` matrix: `(m, n, true)` when each row is a lane (a matrix's axis
/// 1, a vector's one lane, a scalar's), `(m, n, false)` when each column is
/// (a matrix's axis 0); the lanes in order either way ([`lanes`]).
fn lanes_as_rows(shape: Shape, axis: usize) -> (usize, usize, bool) {
    match (shape.dims(), axis) {
        (&[n], _) => (1, n, true),
        (&[m, n], 0) => (m, n, false),
        (&[m, n], _) => (m, n, true),
        _ => (1, 1, true),
    }
}

/// The index of the first largest (`max`) or smallest element of `row`, or
/// of its first nan ([`first_extremum`] of one row). `row` is not empty.
fn row_extremum(row: &[f64], max: bool) -> usize {
    let (mut best, mut b) = (0, row[0]);
    for (k, &x) in row.iter().enumerate() {
        if x.is_nan() {
            return k;
        }
        if max && x > b || !max && x < b {
            (best, b) = (k, x);
        }
    }
    best
}

/// The first largest (`max`) or smallest element of each column of the
/// row-major `m×n` matrix `data` (`m ≥ 1`), or its first nan, read row by
/// row ([`first_extremum`] of each column, in one pass along the rows):
/// each column's row index and value; `None` when `stop` said stop
/// between two rows.
fn column_extrema(
    data: &[f64],
    (m, n): (usize, usize),
    max: bool,
    stop: &dyn Fn() -> bool,
) -> Option<(Vec<usize>, Vec<f64>)> {
    let mut at = vec![0; n];
    let mut best = data[..n].to_vec();
    let mut nan: Vec<bool> = best.iter().map(|x| x.is_nan()).collect();
    let mut blocks = Blocks::new(stop);
    for i in 1..m {
        if blocks.stop_before(n) {
            return None;
        }
        let row = &data[i * n..(i + 1) * n];
        for j in 0..n {
            let x = row[j];
            if nan[j] {
                continue;
            }
            if x.is_nan() || max && x > best[j] || !max && x < best[j] {
                (at[j], best[j], nan[j]) = (i, x, x.is_nan());
            }
        }
    }
    Some((at, best))
}

/// A reduction along an axis, forward: the mean, or the first extremum's
/// value of each lane (`argmax` gives its position instead), computed row
/// by row (each lane's numbers in the lane's order, the bits of a sum over
/// [`lanes`]), looking at `stop` between two rows: `None` when it said stop.
pub(super) fn reduce_axis(
    a: &Tensor,
    axis: usize,
    kind: AxisReduction,
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let data = a.data();
    let (m, n, along_rows) = lanes_as_rows(a.shape(), axis);
    if along_rows {
        let mut out = Vec::with_capacity(m);
        let whole = each_row(data, n, stop, |_, row| {
            out.push(match kind {
                AxisReduction::Mean => row.iter().sum::<f64>() / n as f64,
                AxisReduction::Max => row[row_extremum(row, true)],
                AxisReduction::Min => row[row_extremum(row, false)],
                AxisReduction::ArgMax => row_extremum(row, true) as f64,
            });
        });
        // m×0 has rows of nothing: the mean of each is nan (0/0).
        out.resize(m, f64::NAN);
        return whole.then_some(out);
    }
    if kind == AxisReduction::Mean {
        // Each column's sum from the neutral element of `f64`'s `Sum`, in
        // row order: the bits of `sum()` over the column.
        let mut sums = vec![std::iter::empty::<f64>().sum::<f64>(); n];
        let whole = each_row(&data[..m * n], n, stop, |_, row| {
            for (s, &x) in sums.iter_mut().zip(row) {
                *s += x;
            }
        });
        return whole.then(|| sums.into_iter().map(|s| s / m as f64).collect());
    }
    let (at, best) = column_extrema(data, (m, n), kind != AxisReduction::Min, stop)?;
    Some(match kind {
        AxisReduction::ArgMax => at.into_iter().map(|i| i as f64).collect(),
        _ => best,
    })
}

/// Which reduction along an axis [`reduce_axis`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AxisReduction {
    /// The mean of each lane.
    Mean,
    /// The largest element of each lane.
    Max,
    /// The smallest element of each lane.
    Min,
    /// The position of the first largest element of each lane.
    ArgMax,
}

/// A reduction along an axis, backward: the upstream divided by the lane's
/// length at every element (`mean`), or put at the lane's first extremum
/// (`max`, `min`: PyTorch's `max(dim)` returns that index and its backward
/// scatters the upstream there, `value_selecting_reduction_backward`).
/// Row by row, looking at `stop` between two rows: `None` when it said stop.
pub(super) fn reduce_axis_vjp(
    a: &Tensor,
    axis: usize,
    max: Option<bool>,
    up: &[f64],
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let data = a.data();
    let (m, n, along_rows) = lanes_as_rows(a.shape(), axis);
    let mut g = vec![0.0; a.len()];
    let whole = match (max, along_rows) {
        (None, true) => super::blocks::each_row_mut(&mut g, n, stop, |i, row| {
            row.fill(up[i] / n as f64);
        }),
        (None, false) => super::blocks::each_row_mut(&mut g, n, stop, |_, row| {
            for (x, &u) in row.iter_mut().zip(up) {
                *x = u / m as f64;
            }
        }),
        (Some(max), true) => {
            let g = &mut g;
            each_row(data, n, stop, |i, row| {
                g[i * n + row_extremum(row, max)] = up[i];
            })
        }
        (Some(max), false) => {
            let (at, _) = column_extrema(data, (m, n), max, stop)?;
            for (j, (&i, &u)) in at.iter().zip(up).enumerate() {
                g[i * n + j] = u;
            }
            true
        }
    };
    whole.then_some(g)
}

/// `argmax(x)` of every element: the row-major position of the first
/// maximum; `None` when `stop` said stop ([`first_extremum_until`]).
pub(super) fn argmax_all(a: &Tensor, stop: &dyn Fn() -> bool) -> Option<f64> {
    first_extremum_until(a.data(), true, stop).map(|at| at as f64)
}

/// `log_softmax(z)` along the last axis: `zᵢ − logsumexp(z)`, each row on
/// its own (stable: [`kernels::logsumexp`] subtracts the maximum); `None`
/// when `stop` said stop between two rows.
pub(super) fn log_softmax(a: &Tensor, stop: &dyn Fn() -> bool) -> Option<Vec<f64>> {
    let mut out = Vec::with_capacity(a.len());
    let n = a.shape().as_matrix().1;
    let whole = each_row(a.data(), n, stop, |_, row| {
        let lse = kernels::logsumexp(row);
        out.extend(row.iter().map(|&z| z - lse));
    });
    whole.then_some(out)
}

/// `log_softmax`'s backward per row: `u − softmax(z)·Σu`, `softmax(z) =
/// exp(out)`; `None` when `stop` said stop between two rows.
pub(super) fn log_softmax_vjp(
    out: &Tensor,
    up: &[f64],
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let n = out.shape().as_matrix().1.max(1);
    let mut g = Vec::with_capacity(out.len());
    let whole = each_row(out.data(), n, stop, |i, row| {
        let u = &up[i * n..i * n + row.len()];
        let total: f64 = u.iter().sum();
        g.extend(row.iter().zip(u).map(|(o, u)| u - o.exp() * total));
    });
    whole.then_some(g)
}

/// The shape rule of `cross_entropy(Z, y)`: `Z` of `n×k` scores with `y` of
/// `n` labels, or a vector of `k` scores with one label `()`; the loss is `()`.
pub(super) fn cross_entropy_shape(z: Shape, y: Shape) -> Result<Shape, ShapeError> {
    match (z.dims(), y.dims()) {
        (&[n, k], &[m]) if n == m && k > 0 => Ok(Shape::scalar()),
        (&[k], []) if k > 0 => Ok(Shape::scalar()),
        _ => Err(ShapeError::Labels {
            scores: z,
            labels: y,
        }),
    }
}

/// The label `y` as a class index below `k`; `None` unless a whole number
/// from 0 to k − 1.
fn class(y: f64, k: usize) -> Option<usize> {
    (y.fract() == 0.0 && y >= 0.0 && y < k as f64).then_some(y as usize)
}

/// Checks that every element of `labels` is a class index below `k`, for `op`.
///
/// # Errors
/// [`ShapeError::Label`] naming the first element that is not.
pub(super) fn check_labels(op: &'static str, labels: &Tensor, k: usize) -> Result<(), ShapeError> {
    match labels.data().iter().position(|&y| class(y, k).is_none()) {
        None => Ok(()),
        Some(at) => Err(ShapeError::Label {
            op,
            value: labels.data()[at].to_string(),
            at,
            classes: k,
        }),
    }
}

/// The number of classes `k` of scores `z` (its last axis).
pub(super) fn classes(z: Shape) -> usize {
    z.as_matrix().1
}

/// `cross_entropy(Z, y)`: the mean over the rows of `logsumexp(Zᵢ) − Zᵢ[yᵢ]`,
/// that is `−log_softmax(Z)[i, yᵢ]` (PyTorch's `cross_entropy` with
/// `reduction='mean'`). nan where a label is not a class (only after a leaf
/// moved: [`check_labels`] refuses it when the node is built). `None` when
/// `stop` said stop between two rows ([`Blocks`]).
pub(super) fn cross_entropy(z: &Tensor, y: &Tensor, stop: &dyn Fn() -> bool) -> Option<f64> {
    let k = classes(z.shape());
    let n = y.len();
    let mut total = 0.0;
    let mut blocks = Blocks::new(stop);
    for (row, &label) in rows(z).zip(y.data()) {
        if blocks.stop_before(k) {
            return None;
        }
        match class(label, k) {
            Some(c) => total += kernels::logsumexp(row) - row[c],
            None => return Some(f64::NAN),
        }
    }
    Some(total / n as f64)
}

/// `cross_entropy(Z, y)`'s backward to `Z`: `upstream·(softmax(Z) −
/// onehot(y, k))/n`, `n` the number of rows; `None` when `stop` said stop
/// between two rows.
pub(super) fn cross_entropy_vjp(
    z: &Tensor,
    y: &Tensor,
    up: f64,
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let k = classes(z.shape());
    let n = y.len() as f64;
    let mut g = Vec::with_capacity(z.len());
    let mut blocks = Blocks::new(stop);
    for (row, &label) in rows(z).zip(y.data()) {
        if blocks.stop_before(k) {
            return None;
        }
        let start = g.len();
        kernels::softmax_into(row, &mut g);
        if let Some(c) = class(label, k) {
            g[start + c] -= 1.0;
        }
        for x in &mut g[start..] {
            *x *= up / n;
        }
    }
    Some(g)
}

/// The shape of `onehot(y, k)`: one label `()` gives `k`; `n` labels an `n×k` matrix.
pub(super) fn onehot_shape(y: Shape, k: usize) -> Result<Shape, ShapeError> {
    match *y.dims() {
        [] => Ok(Shape::vector(k)),
        [n] => Ok(Shape::matrix(n, k)),
        _ => Err(ShapeError::Labels {
            scores: Shape::vector(k),
            labels: y,
        }),
    }
}

/// `onehot(y, k)`: row i has a 1 at column `yᵢ`, 0 elsewhere (a row of nan
/// where a label is not a class, only after a leaf moved).
pub(super) fn onehot(y: &Tensor, k: usize) -> Vec<f64> {
    let mut out = vec![0.0; y.len() * k];
    for (i, &label) in y.data().iter().enumerate() {
        match class(label, k) {
            Some(c) => out[i * k + c] = 1.0,
            None => out[i * k..(i + 1) * k].fill(f64::NAN),
        }
    }
    out
}

/// A slice as ranges: rows `rows` and columns `cols` of its operand read as
/// a row-major matrix of `n` columns (a vector as a column: `n` is 1), and
/// the output's `shape`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Taken {
    /// The output's shape.
    pub(super) shape: Shape,
    /// The rows taken.
    pub(super) rows: Range<usize>,
    /// The columns taken of each row.
    pub(super) cols: Range<usize>,
    /// The operand's columns.
    pub(super) n: usize,
}

/// What a slice of `shape` takes ([`Taken`]).
///
/// # Errors
/// [`ShapeError::Slice`] for a range past the axis's end or backwards, an
/// index past it, or a second selection of a vector.
pub(super) fn taken(
    shape: Shape,
    first: Select,
    second: Option<Select>,
) -> Result<Taken, ShapeError> {
    let (m, n) = match (shape.dims(), second) {
        (&[n], None) => (n, 1),
        (&[m, n], _) => (m, n),
        _ => {
            let given = 1 + usize::from(second.is_some());
            return Err(ShapeError::TooManyIndices { shape, given });
        }
    };
    let positions = |select: Select, axis: usize, size: usize| match select {
        Select::Range(start, end) if start <= end && end <= size => Ok((start..end, true)),
        Select::At(i) if i < size => Ok((i..i + 1, false)),
        _ => Err(ShapeError::Slice { shape, axis }),
    };
    let (rows, keep_rows) = positions(first, 0, m)?;
    let (cols, keep_cols) = match (shape.rank(), second) {
        (2, Some(select)) => positions(select, 1, n)?,
        (2, None) => (0..n, true),
        _ => (0..1, false),
    };
    let dims: Vec<usize> = [(rows.len(), keep_rows), (cols.len(), keep_cols)]
        .iter()
        .filter(|(_, keep)| *keep)
        .map(|(len, _)| *len)
        .collect();
    let shape = Shape::from_dims(&dims).expect("rank ≤ 2");
    Ok(Taken {
        shape,
        rows,
        cols,
        n,
    })
}

/// The output shape of a slice of `shape` and, for each output element in
/// row-major order, the data index of `shape` it copies ([`taken`]).
///
/// # Errors
/// As [`taken`].
pub(super) fn slice(
    shape: Shape,
    first: Select,
    second: Option<Select>,
) -> Result<(Shape, Vec<usize>), ShapeError> {
    let Taken {
        shape,
        rows,
        cols,
        n,
    } = taken(shape, first, second)?;
    let mut index = Vec::with_capacity(shape.len());
    for i in rows {
        index.extend(cols.clone().map(|j| i * n + j));
    }
    Ok((shape, index))
}

/// The numbers a slice takes from `a`, row by row, looking at `stop`
/// between two rows: `None` when it said stop.
pub(super) fn sliced(a: &[f64], taken: &Taken, stop: &dyn Fn() -> bool) -> Option<Vec<f64>> {
    let Taken { rows, cols, n, .. } = taken;
    let mut out = Vec::with_capacity(rows.len() * cols.len());
    let mut blocks = Blocks::new(stop);
    for i in rows.clone() {
        if blocks.stop_before(cols.len()) {
            return None;
        }
        out.extend_from_slice(&a[i * n + cols.start..i * n + cols.end]);
    }
    Some(out)
}

/// A slice's backward: the upstream `up` added at the positions taken of
/// zeros of `len` numbers (the operand's), row by row, looking at `stop`
/// between two rows: `None` when it said stop.
pub(super) fn slice_vjp(
    len: usize,
    taken: &Taken,
    up: &[f64],
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let Taken { rows, cols, n, .. } = taken;
    let w = cols.len();
    let mut g = vec![0.0; len];
    let mut blocks = Blocks::new(stop);
    for (k, i) in rows.clone().enumerate() {
        if blocks.stop_before(w) {
            return None;
        }
        let at = i * n + cols.start;
        for (d, &u) in g[at..at + w].iter_mut().zip(&up[k * w..(k + 1) * w]) {
            *d += u;
        }
    }
    Some(g)
}

/// The op table's rows of the batch ops and `max` ([`TensorOp::info`]);
/// `None` for the others (their rows are in ops.rs).
pub(super) fn info(op: TensorOp) -> Option<&'static TensorOpInfo> {
    Some(match op {
        TensorOp::Max => &TensorOpInfo {
            name: "max",
            arity: TensorArity::Unary,
            shape_rule: "→ ()",
            backward_rule: "∂L/∂x = upstream / t at each of the t tied maxima, zeros elsewhere",
            source: "PyTorch's max() of a whole tensor (evenly_distribute_backward in derivatives.yaml)",
        },
        TensorOp::Min => &TensorOpInfo {
            name: "min",
            arity: TensorArity::Unary,
            shape_rule: "→ ()",
            backward_rule: "∂L/∂x = upstream / t at each of the t tied minima, zeros elsewhere",
            source: "PyTorch's min() of a whole tensor (evenly_distribute_backward in derivatives.yaml)",
        },
        TensorOp::MeanAxis(_) => &TensorOpInfo {
            name: "mean",
            arity: TensorArity::Unary,
            shape_rule: "mean(m×n, 0) → n, mean(m×n, 1) → m, mean(n, 0) → ()",
            backward_rule: "∂L/∂W = upstream / (the axis's length), broadcast back along the axis",
            source: "the chain rule: ∂(Σᵢ Wᵢⱼ / m)/∂Wᵢⱼ = 1/m",
        },
        TensorOp::MaxAxis(_) => &TensorOpInfo {
            name: "max",
            arity: TensorArity::Unary,
            shape_rule: "max(m×n, axis=0) → n, axis=1 → m, max(n, axis=0) → ()",
            backward_rule: "∂L/∂W = each lane's upstream at its first maximum, zeros elsewhere",
            source: "PyTorch's max(x, dim) (value_selecting_reduction_backward at the returned index); numpy's argmax picks the first",
        },
        TensorOp::MinAxis(_) => &TensorOpInfo {
            name: "min",
            arity: TensorArity::Unary,
            shape_rule: "min(m×n, axis=0) → n, axis=1 → m, min(n, axis=0) → ()",
            backward_rule: "∂L/∂W = each lane's upstream at its first minimum, zeros elsewhere",
            source: "PyTorch's min(x, dim) (value_selecting_reduction_backward at the returned index); numpy's argmin picks the first",
        },
        TensorOp::ArgMax(_) => &TensorOpInfo {
            name: "argmax",
            arity: TensorArity::Unary,
            shape_rule: "argmax(x) → (), argmax(m×n, 0) → n, argmax(m×n, 1) → m",
            backward_rule: "none: whole-number positions, piecewise constant",
            source: "numpy's argmax (the first maximum); PyTorch's argmax is not differentiable",
        },
        TensorOp::LogSoftmax => &TensorOpInfo {
            name: "log_softmax",
            arity: TensorArity::Unary,
            shape_rule: "the same shape (along the last axis: each row of a matrix)",
            backward_rule: "∂L/∂z = upstream − softmax(z) ⊙ sum(upstream), per row",
            source: SOFTMAX_SOURCE,
        },
        TensorOp::CrossEntropy => &TensorOpInfo {
            name: "cross_entropy",
            arity: TensorArity::Binary,
            shape_rule: "(n×k scores, n labels) → (), (k scores, one label) → ()",
            backward_rule: "∂L/∂Z = upstream ⊙ (softmax(Z) − onehot(y, k)) / n; the labels get none",
            source: "Goodfellow et al., Deep Learning (2016), §6.2.2.3; PyTorch's cross_entropy (reduction='mean')",
        },
        TensorOp::OneHot(_) => &TensorOpInfo {
            name: "onehot",
            arity: TensorArity::Unary,
            shape_rule: "onehot(n labels, k) → n×k, onehot(one label, k) → k",
            backward_rule: "none: the labels are class indices",
            source: "PyTorch's one_hot",
        },
        TensorOp::Compare(_) => &TensorOpInfo {
            name: "comparison",
            arity: TensorArity::Binary,
            shape_rule: "the operands' shapes broadcast (numpy)",
            backward_rule: "none: 0/1, piecewise constant",
            source: "numpy's comparison ufuncs; PyTorch's comparisons do not require grad",
        },
        TensorOp::Slice(_, _) => &TensorOpInfo {
            name: "slice",
            arity: TensorArity::Unary,
            shape_rule: "a range start:end keeps its axis (end − start long), an index drops it",
            backward_rule: "∂L/∂X = upstream placed at the positions taken, zeros elsewhere",
            source: "the chain rule: the taken elements have local derivative 1, the rest 0 (numpy's basic slicing)",
        },
        _ => return None,
    })
}
