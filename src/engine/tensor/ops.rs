//! The tensor op table: for every tensor op its name, how it is written, the
//! rule for its output's shape, its forward kernel and its backward rule
//! (the vector–Jacobian product) as a textbook formula with its source.
//!
//! Elementwise ops are one row, [`TensorOp::Elementwise`], that applies a
//! scalar op of the scalar op table ([`Op::info`]) to each element: its
//! forward function and its numeric local derivative, with the same
//! conventions at kinks, are the scalar table's, never written again here,
//! but for one op computed faster: `tanh` and its local derivative `sech²`
//! (the table's formula) run as vectorised row kernels (`rowtanh.rs`),
//! within 2 and 4 ulps of the true values, where the table's functions call
//! the C library once an element.

use super::batch::{self, AxisReduction, Comparison, Select};
use super::blocks::{self, Blocks};
use super::kernels::{self, Factor};
use super::{Shape, ShapeError, Tensor};
use crate::engine::{Arity, NodeId, Op, Shortcut};

/// Every operation a tensor node can be. `Variable`, `Const` and `Scalar`
/// are leaves of the tensor graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TensorOp {
    /// A variable: a leaf that gradients are taken for ([`TensorGraph::leaf`](super::TensorGraph::leaf)).
    Variable,
    /// A literal tensor: a leaf that is not a variable ([`TensorGraph::constant`](super::TensorGraph::constant)).
    Const,
    /// A node of the scalar [`Graph`](crate::engine::Graph), as a tensor of
    /// shape `()` ([`TensorGraph::scalar`](super::TensorGraph::scalar)): its
    /// value is read from the scalar graph, and its gradient is handed back
    /// ([`TensorGradients::scalars`](super::TensorGradients::scalars)) for the
    /// caller to seed the scalar walk with.
    Scalar(NodeId),
    /// A scalar op applied to each element: a unary op (`tanh`, `neg`, …)
    /// to one tensor, a binary op (`+ − * / ^`) to two with numpy's
    /// broadcasting ([`Shape::broadcast`]). The backward sums the upstream
    /// gradient over the broadcast axes.
    Elementwise(Op),
    /// The matrix product `a @ b`: matrix·matrix, matrix·vector (a vector
    /// on the right is a column), vector·matrix (a vector on the left is a
    /// row) and vector·vector (the dot product, shape `()`).
    MatMul,
    /// The transpose `aᵀ`: `n×m` for `m×n`; a vector or a scalar is its own
    /// transpose (numpy's `.T`).
    Transpose,
    /// `x[i]`: element `i` of a vector (shape `()`), or row `i` of a matrix
    /// (a vector). 0-based.
    Index(usize),
    /// `W[i, j]`: the element at row `i`, column `j` of a matrix (shape `()`). 0-based.
    Index2(usize, usize),
    /// `sum(x)`: the sum of every element, shape `()`.
    Sum,
    /// `sum(W, axis)`: the sum along an axis, which disappears: of an `m×n`
    /// matrix, axis 0 gives the `n` column sums and axis 1 the `m` row sums;
    /// of a vector, axis 0 gives `()`.
    SumAxis(usize),
    /// `sum(W, axis, keepdims)`: the sum along an axis, which stays with
    /// size 1 (numpy's `keepdims=True`): of an `m×n` matrix, axis 0 gives the
    /// `1×n` row of column sums and axis 1 the `m×1` column of row sums; of
    /// a vector, axis 0 gives shape `(1)`. What a broadcast operand's
    /// gradient is summed with, so that the rule keeps its shape.
    SumKeepDims(usize),
    /// `outer(u, x)`: the outer product of two vectors, `(m)` and `(n)` →
    /// `m×n` with element `[i, j] = u[i]·x[j]` (numpy's `outer`): the
    /// gradient `upstream·xᵀ` of a matrix times a vector, written in the
    /// language.
    Outer,
    /// `mean(x)`: the mean of every element, shape `()` (nan for an empty tensor).
    Mean,
    /// `max(x)`: the largest element, shape `()`; the gradient is split
    /// evenly among tied maxima (PyTorch's `max()` of a whole tensor,
    /// `evenly_distribute_backward`). nan propagates: the value is nan and
    /// the gradient goes to the first nan.
    Max,
    /// `min(x)`: the smallest element, shape `()`; ties split as for [`TensorOp::Max`].
    Min,
    /// `mean(W, axis)`: the mean along an axis, which disappears (as [`TensorOp::SumAxis`]).
    MeanAxis(usize),
    /// `max(W, axis=a)`: the largest element along an axis, which
    /// disappears; the gradient goes to the first maximum of each lane
    /// (PyTorch's `max(x, dim)` returns that index; numpy's `argmax` is the first).
    MaxAxis(usize),
    /// `min(W, axis=a)`: as [`TensorOp::MaxAxis`], the smallest.
    MinAxis(usize),
    /// `argmax(x)` (the row-major position of the first maximum, shape
    /// `()`) or `argmax(W, axis)` (each lane's, the axis disappears), as
    /// whole numbers. It passes no gradient (piecewise constant).
    ArgMax(Option<usize>),
    /// `log_softmax(z)`: `zᵢ − logsumexp(z)` along the last axis, each row
    /// of a matrix on its own, stably.
    LogSoftmax,
    /// `cross_entropy(Z, y)`: `n×k` scores and `n` integer labels (or `k`
    /// scores and one label) → `()`, the mean over the rows of
    /// `−log_softmax(Z)[i, yᵢ]` (PyTorch's `cross_entropy`, `reduction='mean'`).
    /// The labels get no gradient.
    CrossEntropy,
    /// `onehot(y, k)`: `n` labels → `n×k` (one label → `k`), 1 at each
    /// row's label, 0 elsewhere. It passes no gradient.
    OneHot(usize),
    /// `a == b`, `a < b`, …: 1 where the comparison holds, 0 where not,
    /// with broadcasting. It passes no gradient.
    Compare(Comparison),
    /// `X[0:4]`, `X[:, 0]`, `X[1:]`, `x[2:5]`: a slice (rows, then columns
    /// of a matrix; `None` takes every column). A range keeps its axis, an
    /// index drops it. The gradient is scattered back to the positions taken.
    Slice(Select, Option<Select>),
    /// `softmax(z)`: `exp(zᵢ)/Σ exp(zⱼ)` along the last axis: a vector's
    /// elements, each row of a matrix on its own (PyTorch's `dim=-1`); a
    /// scalar gives 1. Computed with the maximum subtracted, so nothing overflows.
    Softmax,
    /// `logsumexp(z)`: `ln Σ exp(zᵢ)` along the last axis, stably (the
    /// maximum subtracted): of a vector, shape `()`; of an `m×n` matrix, the
    /// `m` values of its rows; a scalar gives itself.
    LogSumExp,
}

/// How many tensor operands a tensor op takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TensorArity {
    /// None: a leaf, made by its own method, never by [`TensorGraph::apply`](super::TensorGraph::apply).
    Leaf,
    /// One.
    Unary,
    /// Two.
    Binary,
    /// The scalar op's arity, one or two ([`TensorOp::Elementwise`]).
    OfScalarOp,
}

/// One row of the tensor op table.
#[derive(Debug)]
pub struct TensorOpInfo {
    /// The name users type or the operator: `"@"`, `"ᵀ"`, `"sum"`, …; for
    /// [`TensorOp::Elementwise`], `"elementwise"` (the scalar op's row has
    /// its own name).
    pub name: &'static str,
    /// How many operands.
    pub arity: TensorArity,
    /// The output's shape from the operands' shapes, in words.
    pub shape_rule: &'static str,
    /// The backward rule, the vector–Jacobian product for each operand, in
    /// textbook form.
    pub backward_rule: &'static str,
    /// Where the rule comes from.
    pub source: &'static str,
}

/// Where the matrix rules come from.
const MATRIX_CALCULUS: &str = "matrix calculus: Petersen and Pedersen, The Matrix Cookbook (2012), §2.4; Goodfellow, Bengio and Courville, Deep Learning (2016), §6.5";

/// Where the softmax and logsumexp rules come from.
pub(super) const SOFTMAX_SOURCE: &str = "the softmax Jacobian diag(p) − p·pᵀ (Goodfellow et al., Deep Learning, §6.2.2.3); stable forms by the max shift (Blanchard, Higham and Higham 2021)";

/// The row of `mean(x)`.
const MEAN: TensorOpInfo = TensorOpInfo {
    name: "mean",
    arity: TensorArity::Unary,
    shape_rule: "→ ()",
    backward_rule: "∂L/∂x = upstream / n broadcast to x's shape (n elements)",
    source: "the chain rule: ∂(Σ xᵢ / n)/∂xᵢ = 1/n",
};

/// The row of `sum(W, axis, keepdims)`.
const SUM_KEEPDIMS: TensorOpInfo = TensorOpInfo {
    name: "sum",
    arity: TensorArity::Unary,
    shape_rule: "sum(m×n, 0, keepdims) → 1×n, sum(m×n, 1, keepdims) → m×1, sum(n, 0, keepdims) → 1",
    backward_rule: "∂L/∂W = upstream ⊙ ones of W's shape (the upstream broadcast back along the kept axis)",
    source: "the chain rule: ∂(Σᵢ Wᵢⱼ)/∂Wᵢⱼ = 1; numpy's sum(…, keepdims=True)",
};

/// The row of `outer(u, x)`.
const OUTER: TensorOpInfo = TensorOpInfo {
    name: "outer",
    arity: TensorArity::Binary,
    shape_rule: "outer((m), (n)) → m×n; both operands vectors",
    backward_rule: "∂L/∂u = upstream @ x, ∂L/∂x = u @ upstream",
    source: MATRIX_CALCULUS,
};

impl TensorOp {
    /// This op's row of the tensor op table.
    pub fn info(self) -> &'static TensorOpInfo {
        if let Some(info) = batch::info(self) {
            return info;
        }
        match self {
            TensorOp::Variable => &TensorOpInfo {
                name: "leaf",
                arity: TensorArity::Leaf,
                shape_rule: "the shape of its value",
                backward_rule: "a leaf: its gradient is the sum of what its users pass it",
                source: "reverse-mode differentiation",
            },
            TensorOp::Const => &TensorOpInfo {
                name: "const",
                arity: TensorArity::Leaf,
                shape_rule: "the shape of its value",
                backward_rule: "a literal: its gradient is computed but rarely wanted",
                source: "reverse-mode differentiation",
            },
            TensorOp::Scalar(_) => &TensorOpInfo {
                name: "scalar",
                arity: TensorArity::Leaf,
                shape_rule: "()",
                backward_rule: "its gradient is handed back to the scalar graph's walk",
                source: "reverse-mode differentiation",
            },
            TensorOp::Elementwise(_) => &TensorOpInfo {
                name: "elementwise",
                arity: TensorArity::OfScalarOp,
                shape_rule: "the operands' shapes broadcast (numpy): aligned from the right, each size equal or 1",
                backward_rule: "∂L/∂a = upstream ⊙ ∂f/∂a elementwise (the scalar op's local derivative), summed over the axes a was broadcast along",
                source: "the chain rule elementwise; numpy's broadcasting and its adjoint, the sum over broadcast axes",
            },
            TensorOp::MatMul => &TensorOpInfo {
                name: "@",
                arity: TensorArity::Binary,
                shape_rule: "(m×k) @ (k×n) → m×n; a vector on the left is a row (1×k), on the right a column (k×1), and that axis is dropped from the result",
                backward_rule: "∂L/∂A = upstream @ Bᵀ, ∂L/∂B = Aᵀ @ upstream (of a matrix times a vector x, ∂L/∂A = outer(upstream, x))",
                source: MATRIX_CALCULUS,
            },
            TensorOp::Transpose => &TensorOpInfo {
                name: "ᵀ",
                arity: TensorArity::Unary,
                shape_rule: "(m×n)ᵀ → n×m; a vector or a scalar is its own transpose",
                backward_rule: "∂L/∂A = upstreamᵀ",
                source: MATRIX_CALCULUS,
            },
            TensorOp::Index(_) => &TensorOpInfo {
                name: "index",
                arity: TensorArity::Unary,
                shape_rule: "x[i] of a vector → (); W[i] of a matrix → its row i, a vector",
                backward_rule: "∂L/∂x = upstream placed at the index, zeros elsewhere",
                source: "the chain rule: the selected elements have local derivative 1, the rest 0",
            },
            TensorOp::Index2(_, _) => &TensorOpInfo {
                name: "index",
                arity: TensorArity::Unary,
                shape_rule: "W[i, j] of a matrix → ()",
                backward_rule: "∂L/∂W = upstream placed at (i, j), zeros elsewhere",
                source: "the chain rule: the selected element has local derivative 1, the rest 0",
            },
            TensorOp::Sum => &TensorOpInfo {
                name: "sum",
                arity: TensorArity::Unary,
                shape_rule: "→ ()",
                backward_rule: "∂L/∂x = the upstream broadcast to x's shape (every local derivative is 1)",
                source: "the chain rule: ∂(Σ xᵢ)/∂xᵢ = 1",
            },
            TensorOp::SumAxis(_) => &TensorOpInfo {
                name: "sum",
                arity: TensorArity::Unary,
                shape_rule: "sum(m×n, 0) → n, sum(m×n, 1) → m, sum(n, 0) → ()",
                backward_rule: "∂L/∂W = the upstream broadcast back along the summed axis",
                source: "the chain rule: ∂(Σᵢ Wᵢⱼ)/∂Wᵢⱼ = 1",
            },
            TensorOp::SumKeepDims(_) => &SUM_KEEPDIMS,
            TensorOp::Outer => &OUTER,
            TensorOp::Mean => &MEAN,
            TensorOp::Softmax => &TensorOpInfo {
                name: "softmax",
                arity: TensorArity::Unary,
                shape_rule: "the same shape (along the last axis: each row of a matrix)",
                backward_rule: "∂L/∂z = p ⊙ (upstream − sum(p ⊙ upstream)), p = softmax(z); of a matrix, per row: sum(p ⊙ upstream, 1, keepdims)",
                source: SOFTMAX_SOURCE,
            },
            TensorOp::LogSumExp => &TensorOpInfo {
                name: "logsumexp",
                arity: TensorArity::Unary,
                shape_rule: "n → (), m×n → m (along the last axis), () → ()",
                backward_rule: "∂L/∂z = upstream ⊙ softmax(z); of a matrix, per row: outer(upstream, ones(n)) ⊙ softmax(z)",
                source: SOFTMAX_SOURCE,
            },
            // The batch ops' rows and max's, in batch.rs (returned above).
            _ => unreachable!("{self:?} has its row in batch.rs"),
        }
    }

    /// How many operands this op takes, or `None` for a leaf; for
    /// [`TensorOp::Elementwise`] the scalar op's arity (`None` for a scalar
    /// leaf op; the variadic `min`/`max` take two, elementwise).
    pub fn operand_count(self) -> Option<usize> {
        match self.info().arity {
            TensorArity::Leaf => None,
            TensorArity::Unary => Some(1),
            TensorArity::Binary => Some(2),
            // `min`/`max` of two operands apply elementwise (`max(W, 0)`);
            // of one tensor, `max(x)` is the reduction [`TensorOp::Max`].
            TensorArity::OfScalarOp => self.scalar_op().and_then(|op| match op.info().arity {
                Arity::Unary => Some(1),
                Arity::Binary | Arity::Variadic => Some(2),
                Arity::Leaf => None,
            }),
        }
    }

    /// The scalar op an elementwise op applies; `None` for the others.
    pub fn scalar_op(self) -> Option<Op> {
        if let TensorOp::Elementwise(op) = self {
            Some(op)
        } else {
            None
        }
    }

    /// The output's shape for operands of shapes `inputs` (as many as
    /// [`TensorOp::operand_count`]).
    ///
    /// # Errors
    /// The [`ShapeError`] that names the shapes and the rule they break.
    pub fn output_shape(self, inputs: &[Shape]) -> Result<Shape, ShapeError> {
        let expected = self.operand_count().ok_or(ShapeError::NotElementwise {
            op: self.name_of_row(),
        })?;
        if inputs.len() != expected {
            return Err(ShapeError::Arity {
                op: self.name_of_row(),
                expected,
                got: inputs.len(),
            });
        }
        let a = inputs[0];
        match self {
            TensorOp::Variable | TensorOp::Const | TensorOp::Scalar(_) => {
                unreachable!("a leaf has no operands (operand_count is None)")
            }
            TensorOp::Elementwise(op) => match *inputs {
                [_] => Ok(a),
                [_, b] => Shape::broadcast(op.info().name, a, b),
                _ => unreachable!("checked above"),
            },
            TensorOp::MatMul => matmul_shape(a, inputs[1]),
            TensorOp::Transpose => Ok(a.transposed()),
            TensorOp::Index(i) => match *a.dims() {
                [] => Err(ShapeError::TooManyIndices { shape: a, given: 1 }),
                [n] => index_in(a, 0, i, n).map(|()| Shape::scalar()),
                [m, n] => index_in(a, 0, i, m).map(|()| Shape::vector(n)),
                _ => unreachable!("rank ≤ 2"),
            },
            TensorOp::Index2(i, j) => match *a.dims() {
                [m, n] => {
                    index_in(a, 0, i, m)?;
                    index_in(a, 1, j, n)?;
                    Ok(Shape::scalar())
                }
                _ => Err(ShapeError::TooManyIndices { shape: a, given: 2 }),
            },
            TensorOp::Sum | TensorOp::Mean => Ok(Shape::scalar()),
            TensorOp::SumAxis(axis) => match (a.dims(), axis) {
                ([_], 0) => Ok(Shape::scalar()),
                (&[_, n], 0) => Ok(Shape::vector(n)),
                (&[m, _], 1) => Ok(Shape::vector(m)),
                _ => Err(ShapeError::NoSuchAxis {
                    op: "sum",
                    shape: a,
                    axis,
                }),
            },
            TensorOp::Max | TensorOp::Min | TensorOp::ArgMax(None) => {
                nonempty(self, a).map(|()| Shape::scalar())
            }
            TensorOp::MeanAxis(axis) => batch::axis_shape("mean", a, axis),
            TensorOp::MaxAxis(axis) | TensorOp::MinAxis(axis) | TensorOp::ArgMax(Some(axis)) => {
                let out = batch::axis_shape(self.info().name, a, axis)?;
                nonempty(self, a).map(|()| out)
            }
            TensorOp::LogSoftmax => nonempty(self, a).map(|()| a),
            TensorOp::CrossEntropy => batch::cross_entropy_shape(a, inputs[1]),
            TensorOp::OneHot(k) => batch::onehot_shape(a, k),
            TensorOp::Compare(c) => Shape::broadcast(c.symbol(), a, inputs[1]),
            TensorOp::Slice(first, second) => batch::taken(a, first, second).map(|t| t.shape),
            TensorOp::SumKeepDims(axis) => match (a.dims(), axis) {
                ([_], 0) => Ok(Shape::vector(1)),
                (&[_, n], 0) => Ok(Shape::matrix(1, n)),
                (&[m, _], 1) => Ok(Shape::matrix(m, 1)),
                _ => Err(ShapeError::NoSuchAxis {
                    op: "sum",
                    shape: a,
                    axis,
                }),
            },
            TensorOp::Outer => match (a.dims(), inputs[1].dims()) {
                (&[m], &[n]) => Ok(Shape::matrix(m, n)),
                _ => Err(ShapeError::NotVectors {
                    op: "outer",
                    left: a,
                    right: inputs[1],
                }),
            },
            TensorOp::Softmax => nonempty(self, a).map(|()| a),
            TensorOp::LogSumExp => nonempty(self, a).map(|()| match *a.dims() {
                [m, _] => Shape::vector(m),
                _ => Shape::scalar(),
            }),
        }
    }

    /// Checks the operands' values where the op needs more than their
    /// shapes: the labels of `cross_entropy` and `onehot` are class indices.
    ///
    /// # Errors
    /// [`ShapeError::Label`] for the first label that is not a class.
    pub(super) fn check_values(self, inputs: &[&Tensor]) -> Result<(), ShapeError> {
        match self {
            TensorOp::CrossEntropy => batch::check_labels(
                "cross_entropy",
                inputs[1],
                batch::classes(inputs[0].shape()),
            ),
            TensorOp::OneHot(k) => batch::check_labels("onehot", inputs[0], k),
            _ => Ok(()),
        }
    }

    /// The name for messages: the scalar op's for an elementwise op.
    fn name_of_row(self) -> &'static str {
        self.scalar_op()
            .map_or(self.info().name, |op| op.info().name)
    }

    /// The forward value for operand values `inputs`, of the shape
    /// [`TensorOp::output_shape`] gave (`out`).
    ///
    /// A long kernel (the matrix product, an elementwise op or comparison,
    /// and every op that reduces, moves or works along rows: `blocks.rs`)
    /// asks `stop` between blocks and gives `None` when it says stop.
    pub(super) fn forward(
        self,
        inputs: &[&Tensor],
        out: Shape,
        stop: &dyn Fn() -> bool,
    ) -> Option<Tensor> {
        let a = inputs[0];
        let data = match self {
            TensorOp::Variable | TensorOp::Const | TensorOp::Scalar(_) => {
                unreachable!("a leaf's value is given, not computed")
            }
            TensorOp::Elementwise(op) => elementwise(op, inputs, out, stop)?,
            TensorOp::MatMul => {
                let (x, y) = matmul_factors(a, inputs[1]);
                kernels::matmul(x, y, stop)?
            }
            TensorOp::Transpose => match *a.shape().dims() {
                [m, n] => blocks::transpose(a.data(), m, n, stop)?,
                _ => a.data().to_vec(),
            },
            TensorOp::Index(i) => {
                let n = out.len();
                a.data()[i * n..(i + 1) * n].to_vec()
            }
            TensorOp::Index2(i, j) => vec![a.data()[i * a.shape().as_matrix().1 + j]],
            TensorOp::Sum => vec![kernels::sum(a.data())],
            TensorOp::SumAxis(axis) | TensorOp::SumKeepDims(axis) => sum_axis(a, axis, stop)?,
            TensorOp::Outer => {
                let x = inputs[1].data();
                let mut data = Vec::with_capacity(out.len());
                let mut blocks = Blocks::new(stop);
                for &u in a.data() {
                    if blocks.stop_before(x.len()) {
                        return None;
                    }
                    data.extend(x.iter().map(|&x| u * x));
                }
                data
            }
            TensorOp::Mean => vec![kernels::sum(a.data()) / a.len() as f64],
            TensorOp::Max | TensorOp::Min => {
                let at = batch::first_extremum_until(a.data(), self == TensorOp::Max, stop)?;
                vec![a.data()[at]]
            }
            TensorOp::MeanAxis(axis) => batch::reduce_axis(a, axis, AxisReduction::Mean, stop)?,
            TensorOp::MaxAxis(axis) => batch::reduce_axis(a, axis, AxisReduction::Max, stop)?,
            TensorOp::MinAxis(axis) => batch::reduce_axis(a, axis, AxisReduction::Min, stop)?,
            TensorOp::ArgMax(Some(axis)) => {
                batch::reduce_axis(a, axis, AxisReduction::ArgMax, stop)?
            }
            TensorOp::ArgMax(None) => vec![batch::argmax_all(a, stop)?],
            TensorOp::LogSoftmax => batch::log_softmax(a, stop)?,
            TensorOp::CrossEntropy => vec![batch::cross_entropy(a, inputs[1], stop)?],
            TensorOp::OneHot(k) => batch::onehot(a, k),
            TensorOp::Compare(c) => {
                kernels::zip_until(a, inputs[1], out, |x, y| c.apply(x, y), stop)?
            }
            TensorOp::Slice(first, second) => {
                let taken = batch::taken(a.shape(), first, second).expect("checked shape");
                batch::sliced(a.data(), &taken, stop)?
            }
            TensorOp::Softmax => {
                let mut p = Vec::with_capacity(a.len());
                let n = a.shape().as_matrix().1;
                let whole = blocks::each_row(a.data(), n, stop, |_, row| {
                    kernels::softmax_into(row, &mut p);
                });
                whole.then_some(p)?
            }
            TensorOp::LogSumExp => {
                let mut sums = Vec::with_capacity(a.shape().as_matrix().0);
                let n = a.shape().as_matrix().1;
                let whole = blocks::each_row(a.data(), n, stop, |_, row| {
                    sums.push(kernels::logsumexp(row));
                });
                whole.then_some(sums)?
            }
        };
        Some(Tensor::new(out, data))
    }
}

/// Checks that `shape` has elements, for the reduction `op` that needs one.
fn nonempty(op: TensorOp, shape: Shape) -> Result<(), ShapeError> {
    if shape.is_empty() {
        return Err(ShapeError::Empty {
            op: op.info().name,
            shape,
        });
    }
    Ok(())
}

/// Checks `index < size` along `axis` of `shape`.
fn index_in(shape: Shape, axis: usize, index: usize, size: usize) -> Result<(), ShapeError> {
    if index < size {
        Ok(())
    } else {
        Err(ShapeError::IndexOutOfRange { shape, axis, index })
    }
}

/// The shape of `a @ b`.
fn matmul_shape(a: Shape, b: Shape) -> Result<Shape, ShapeError> {
    let inner = |ka: usize, kb: usize, shape: Shape| {
        if ka == kb {
            Ok(shape)
        } else {
            Err(ShapeError::Inner { left: a, right: b })
        }
    };
    match (a.dims(), b.dims()) {
        ([], _) | (_, []) => Err(ShapeError::ScalarProduct { left: a, right: b }),
        (&[k], &[l]) => inner(k, l, Shape::scalar()),
        (&[k], &[l, n]) => inner(k, l, Shape::vector(n)),
        (&[m, k], &[l]) => inner(k, l, Shape::vector(m)),
        (&[m, k], &[l, n]) => inner(k, l, Shape::matrix(m, n)),
        _ => unreachable!("rank ≤ 2"),
    }
}

/// `a` and `b` as the factors of their matrix product: a vector on the
/// left is a row, `1×k`; on the right a column, `k×1`.
pub(super) fn matmul_factors<'a>(a: &'a Tensor, b: &'a Tensor) -> (Factor<'a>, Factor<'a>) {
    let (m, k) = a.shape().as_matrix();
    let (l, n) = match *b.shape().dims() {
        [l] => (l, 1),
        _ => b.shape().as_matrix(),
    };
    (Factor::plain(a.data(), m, k), Factor::plain(b.data(), l, n))
}

/// The rows of `a` along its last axis: a scalar's one element, a vector,
/// or each row of a matrix.
pub(super) fn rows(a: &Tensor) -> impl Iterator<Item = &[f64]> {
    let n = a.shape().as_matrix().1.max(1);
    a.data().chunks(n)
}

/// `sum(a, axis)`'s data; `None` when `stop` said stop between two rows.
fn sum_axis(a: &Tensor, axis: usize, stop: &dyn Fn() -> bool) -> Option<Vec<f64>> {
    match (a.shape().dims(), axis) {
        ([_], _) => Some(vec![kernels::sum(a.data())]),
        (&[_, n], 0) => {
            let mut sums = vec![0.0; n];
            let whole = blocks::each_row(a.data(), n, stop, |_, row| {
                for (s, &x) in sums.iter_mut().zip(row) {
                    *s += x;
                }
            });
            whole.then_some(sums)
        }
        // Row sums, one per row even when the rows are empty (m×0).
        _ => {
            let (m, n) = a.shape().as_matrix();
            let mut sums = Vec::with_capacity(m);
            let whole = blocks::each_row(a.data(), n, stop, |_, row| {
                sums.push(kernels::sum(row));
            });
            sums.resize(m, kernels::sum(&[]));
            whole.then_some(sums)
        }
    }
}

/// The scalar op `op` at each element: its forward function from the scalar
/// op table, with `+ − ·` written out as the scalar backward walk does
/// ([`Shortcut`]) so that the loop vectorises. Asks `stop` between blocks
/// of elements ([`kernels::BLOCK_ELEMENTS`]): `None` when it said stop.
fn elementwise(
    op: Op,
    inputs: &[&Tensor],
    out: Shape,
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let info = op.info();
    let forward = info.forward;
    match *inputs {
        [a] => match super::rowtanh::row_kernels(op) {
            Some(kernels) => kernels::map_slices_until(a.data(), kernels.forward, stop),
            None => kernels::map_until(a.data(), |x| forward(&[x]), stop),
        },
        [a, b] => match info.shortcut {
            Some(Shortcut::Add) => kernels::zip_until(a, b, out, |x, y| x + y, stop),
            Some(Shortcut::Sub) => kernels::zip_until(a, b, out, |x, y| x - y, stop),
            Some(Shortcut::Mul) => kernels::zip_until(a, b, out, |x, y| x * y, stop),
            None => kernels::zip_until(a, b, out, |x, y| forward(&[x, y]), stop),
        },
        _ => unreachable!("elementwise ops take one or two operands"),
    }
}
