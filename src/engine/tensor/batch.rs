//! The ops a batch of examples needs beside the layer's: reductions along
//! an axis (`mean`, `max`, `min`, `argmax`), the smallest element, the
//! log-softmax, the cross-entropy of scores against integer class labels,
//! one-hot rows, comparisons (0/1 tensors) and slices (`X[0:4]`, `X[:, 0]`).
//! The forward loops and the vector–Jacobian products are here; the op
//! table (`ops.rs`) and the backward walk (`backward.rs`) call them.

use super::kernels;
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

/// `max(x)` or `min(x)` of every element's backward: the upstream split
/// evenly among the tied extrema (PyTorch's `evenly_distribute_backward`).
pub(super) fn extremum_vjp(data: &[f64], max: bool, up: f64) -> (usize, Vec<f64>) {
    let at = ties(data, max);
    let mut g = vec![0.0; data.len()];
    for &i in &at {
        g[i] = up / at.len() as f64;
    }
    (at.len(), g)
}

/// A reduction along an axis, forward: the mean, or the first extremum's
/// value of each lane (`argmax` gives its position instead).
pub(super) fn reduce_axis(a: &Tensor, axis: usize, kind: AxisReduction) -> Vec<f64> {
    let data = a.data();
    lanes(a.shape(), axis)
        .iter()
        .map(|lane| match kind {
            AxisReduction::Mean => lane.iter().map(|&i| data[i]).sum::<f64>() / lane.len() as f64,
            AxisReduction::Max => data[lane[first_extremum(data, lane, true)]],
            AxisReduction::Min => data[lane[first_extremum(data, lane, false)]],
            AxisReduction::ArgMax => first_extremum(data, lane, true) as f64,
        })
        .collect()
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
pub(super) fn reduce_axis_vjp(a: &Tensor, axis: usize, max: Option<bool>, up: &[f64]) -> Vec<f64> {
    let data = a.data();
    let mut g = vec![0.0; a.len()];
    for (lane, &u) in lanes(a.shape(), axis).iter().zip(up) {
        match max {
            None => {
                for &i in lane {
                    g[i] = u / lane.len() as f64;
                }
            }
            Some(max) => g[lane[first_extremum(data, lane, max)]] = u,
        }
    }
    g
}

/// `argmax(x)` of every element: the row-major position of the first maximum.
pub(super) fn argmax_all(a: &Tensor) -> f64 {
    let all: Vec<usize> = (0..a.len()).collect();
    first_extremum(a.data(), &all, true) as f64
}

/// `log_softmax(z)` along the last axis: `zᵢ − logsumexp(z)`, each row on
/// its own (stable: [`kernels::logsumexp`] subtracts the maximum).
pub(super) fn log_softmax(a: &Tensor) -> Vec<f64> {
    let mut out = Vec::with_capacity(a.len());
    for row in rows(a) {
        let lse = kernels::logsumexp(row);
        out.extend(row.iter().map(|&z| z - lse));
    }
    out
}

/// `log_softmax`'s backward per row: `u − softmax(z)·Σu`, `softmax(z) =
/// exp(out)`.
pub(super) fn log_softmax_vjp(out: &Tensor, up: &[f64]) -> Vec<f64> {
    let n = out.shape().as_matrix().1.max(1);
    let mut g = Vec::with_capacity(out.len());
    for (row, u) in out.data().chunks(n).zip(up.chunks(n)) {
        let total: f64 = u.iter().sum();
        g.extend(row.iter().zip(u).map(|(o, u)| u - o.exp() * total));
    }
    g
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
/// moved: [`check_labels`] refuses it when the node is built).
pub(super) fn cross_entropy(z: &Tensor, y: &Tensor) -> f64 {
    let k = classes(z.shape());
    let n = y.len();
    let mut total = 0.0;
    for (row, &label) in rows(z).zip(y.data()) {
        match class(label, k) {
            Some(c) => total += kernels::logsumexp(row) - row[c],
            None => return f64::NAN,
        }
    }
    total / n as f64
}

/// `cross_entropy(Z, y)`'s backward to `Z`: `upstream·(softmax(Z) −
/// onehot(y, k))/n`, `n` the number of rows.
pub(super) fn cross_entropy_vjp(z: &Tensor, y: &Tensor, up: f64) -> Vec<f64> {
    let k = classes(z.shape());
    let n = y.len() as f64;
    let mut g = Vec::with_capacity(z.len());
    for (row, &label) in rows(z).zip(y.data()) {
        let start = g.len();
        kernels::softmax_into(row, &mut g);
        if let Some(c) = class(label, k) {
            g[start + c] -= 1.0;
        }
        for x in &mut g[start..] {
            *x *= up / n;
        }
    }
    g
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

/// The output shape of a slice of `shape` and, for each output element in
/// row-major order, the data index of `shape` it copies.
///
/// # Errors
/// [`ShapeError::Slice`] for a range past the axis's end or backwards, an
/// index past it, or a second selection of a vector.
pub(super) fn slice(
    shape: Shape,
    first: Select,
    second: Option<Select>,
) -> Result<(Shape, Vec<usize>), ShapeError> {
    let (m, n) = match (shape.dims(), second) {
        (&[n], None) => (n, 1),
        (&[m, n], _) => (m, n),
        _ => {
            let given = 1 + usize::from(second.is_some());
            return Err(ShapeError::TooManyIndices { shape, given });
        }
    };
    let positions = |select: Select, axis: usize, size: usize| match select {
        Select::Range(start, end) if start <= end && end <= size => {
            Ok(((start..end).collect::<Vec<_>>(), true))
        }
        Select::At(i) if i < size => Ok((vec![i], false)),
        _ => Err(ShapeError::Slice { shape, axis }),
    };
    let (rows, keep_rows) = positions(first, 0, m)?;
    let (cols, keep_cols) = match (shape.rank(), second) {
        (2, Some(select)) => positions(select, 1, n)?,
        (2, None) => ((0..n).collect(), true),
        _ => (vec![0], false),
    };
    let dims: Vec<usize> = [(rows.len(), keep_rows), (cols.len(), keep_cols)]
        .iter()
        .filter(|(_, keep)| *keep)
        .map(|(len, _)| *len)
        .collect();
    let out = Shape::from_dims(&dims).expect("rank ≤ 2");
    let mut index = Vec::with_capacity(out.len());
    for &i in &rows {
        for &j in &cols {
            index.push(i * n + j);
        }
    }
    Ok((out, index))
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
