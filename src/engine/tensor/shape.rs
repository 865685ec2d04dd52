//! Shapes of rank 0, 1 and 2, numpy's broadcasting between them, and the
//! errors a node's shapes can give.

use std::fmt;

/// The shape of a tensor: `()` (a scalar), `n` (a vector) or `m×n` (a
/// matrix, `m` rows of `n`), row-major. Sizes may be 0 (an empty vector).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    rank: u8,
    dims: [usize; 2],
}

impl Shape {
    /// The shape `()` of a scalar: one element.
    pub const fn scalar() -> Shape {
        Shape {
            rank: 0,
            dims: [0; 2],
        }
    }

    /// The shape of a vector of `n` elements.
    pub const fn vector(n: usize) -> Shape {
        Shape {
            rank: 1,
            dims: [n, 0],
        }
    }

    /// The shape of a matrix of `m` rows and `n` columns.
    pub const fn matrix(m: usize, n: usize) -> Shape {
        Shape {
            rank: 2,
            dims: [m, n],
        }
    }

    /// The shape with the given sizes: `[]` a scalar, `[n]` a vector,
    /// `[m, n]` a matrix; `None` for more than two.
    pub fn from_dims(dims: &[usize]) -> Option<Shape> {
        match *dims {
            [] => Some(Shape::scalar()),
            [n] => Some(Shape::vector(n)),
            [m, n] => Some(Shape::matrix(m, n)),
            _ => None,
        }
    }

    /// 0 for a scalar, 1 for a vector, 2 for a matrix.
    pub fn rank(&self) -> usize {
        usize::from(self.rank)
    }

    /// The sizes, one per axis: `[]`, `[n]` or `[m, n]`.
    pub fn dims(&self) -> &[usize] {
        &self.dims[..self.rank()]
    }

    /// The number of elements: 1 for a scalar, `n`, or `m·n` (saturating at
    /// `usize::MAX`, so that a shape too large to hold is refused by the
    /// memory budget rather than wrapping).
    pub fn len(&self) -> usize {
        self.dims().iter().fold(1usize, |n, &d| n.saturating_mul(d))
    }

    /// True when the shape has no elements (a size is 0).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shape as a matrix, as the kernels walk it: a scalar is `1×1` and
    /// a vector of `n` is one row, `1×n` (numpy's alignment from the right).
    pub fn as_matrix(&self) -> (usize, usize) {
        match *self.dims() {
            [] => (1, 1),
            [n] => (1, n),
            [m, n] => (m, n),
            _ => unreachable!("a shape has rank 0, 1 or 2"),
        }
    }

    /// The transposed shape: `n×m` for `m×n`; a vector or a scalar is its
    /// own transpose (as numpy's `.T`).
    pub fn transposed(&self) -> Shape {
        match *self.dims() {
            [m, n] => Shape::matrix(n, m),
            _ => *self,
        }
    }

    /// numpy's broadcasting for rank ≤ 2: the shapes are aligned from the
    /// right, and along each axis the sizes must be equal or one of them 1
    /// (a missing axis counts as 1); the result takes the larger size. So a
    /// scalar goes with anything, a vector of `n` goes across the rows of an
    /// `m×n` matrix, and `m×1` with `1×n` gives `m×n`.
    ///
    /// Source: numpy's "Broadcasting" (numpy.org/doc/stable/user/basics.broadcasting.html).
    ///
    /// # Errors
    /// [`ShapeError::Broadcast`] (with the operator `op`) where an axis has
    /// two different sizes, neither 1.
    pub fn broadcast(op: &'static str, a: Shape, b: Shape) -> Result<Shape, ShapeError> {
        let rank = a.rank.max(b.rank);
        let mut dims = [0; 2];
        for axis in 0..usize::from(rank) {
            // Aligned from the right: axis counts from the last.
            let x = a.size_from_right(axis);
            let y = b.size_from_right(axis);
            let size = match (x, y) {
                (x, y) if x == y => x,
                (1, y) => y,
                (x, 1) => x,
                _ => {
                    return Err(ShapeError::Broadcast {
                        op,
                        left: a,
                        right: b,
                    });
                }
            };
            dims[usize::from(rank) - 1 - axis] = size;
        }
        Ok(Shape { rank, dims })
    }

    /// The size `axis` places from the right (0 = the last axis); 1 past the rank.
    fn size_from_right(&self, axis: usize) -> usize {
        let dims = self.dims();
        if axis < dims.len() {
            dims[dims.len() - 1 - axis]
        } else {
            1
        }
    }
}

/// A shape written in parentheses, as messages and rules write it beside an
/// operator: `(2×3)`, `(3)`, and `()` for a scalar (not `(())`).
#[derive(Debug, Clone, Copy)]
pub struct Parenthesized(Shape);

impl fmt::Display for Parenthesized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.rank() {
            0 => f.write_str("()"),
            _ => write!(f, "({})", self.0),
        }
    }
}

impl Shape {
    /// The shape in parentheses: `(2×3)`, `(3)`, `()` ([`Parenthesized`]).
    pub fn parenthesized(self) -> Parenthesized {
        Parenthesized(self)
    }
}

impl fmt::Display for Shape {
    /// `()`, `3` or `2×3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self.dims() {
            [] => f.write_str("()"),
            [n] => write!(f, "{n}"),
            [m, n] => write!(f, "{m}×{n}"),
            _ => unreachable!("a shape has rank 0, 1 or 2"),
        }
    }
}

/// The message of [`ShapeError::TooManyIndices`]: what the tensor is and
/// how many indices it takes (`W[0][1]` is the number `W[0, 1]`).
fn too_many_indices(shape: Shape, given: usize) -> String {
    let indices = |n: usize| {
        if n == 1 {
            "1 index".to_string()
        } else {
            format!("{n} indices")
        }
    };
    match shape.rank() {
        0 => format!(
            "a number (shape ()) has nothing to index, but was given {}: a vector takes one index (`x[i]`), a matrix one or two (`W[i]`, `W[i, j]`)",
            indices(given)
        ),
        1 => format!(
            "a vector of shape ({shape}) takes one index (`x[i]`), not {}",
            given
        ),
        _ => format!(
            "a matrix of shape ({shape}) takes one index (a row, `W[i]`) or two (`W[i, j]`), not {given}"
        ),
    }
}

/// Why a tensor node cannot be built from its operands' shapes: each names
/// the shapes and the rule they break. A caller renders it with a caret under
/// the expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// Elementwise operands whose shapes do not broadcast ([`Shape::broadcast`]).
    #[error(
        "({left}) {op} ({right}): the shapes do not broadcast (aligned from the right, each size must be equal or 1)"
    )]
    Broadcast {
        /// The operator or function, as written: `+`, `*`, `^`.
        op: &'static str,
        /// The left operand's shape.
        left: Shape,
        /// The right operand's shape.
        right: Shape,
    },
    /// A matrix product whose inner sizes differ.
    #[error("({left}) @ ({right}): the inner sizes must agree")]
    Inner {
        /// The left factor's shape.
        left: Shape,
        /// The right factor's shape.
        right: Shape,
    },
    /// A matrix product with a scalar factor.
    #[error(
        "{} @ {}: the matrix product takes a vector or a matrix on each side; use * to scale",
        left.parenthesized(),
        right.parenthesized()
    )]
    ScalarProduct {
        /// The left factor's shape.
        left: Shape,
        /// The right factor's shape.
        right: Shape,
    },
    /// An index past the end of its axis.
    #[error(
        "index {index} is out of range for axis {axis} of shape ({shape}): indices run from 0 to {}",
        shape.dims()[*axis].saturating_sub(1)
    )]
    IndexOutOfRange {
        /// The indexed tensor's shape.
        shape: Shape,
        /// The axis (0 = rows of a matrix, or a vector's only axis).
        axis: usize,
        /// The index given (0-based).
        index: usize,
    },
    /// More indices than the tensor has axes (a scalar takes none, a vector one).
    #[error("{}", too_many_indices(*shape, *given))]
    TooManyIndices {
        /// The indexed tensor's shape.
        shape: Shape,
        /// How many indices were given.
        given: usize,
    },
    /// An axis the tensor does not have (`sum(x, 1)` of a vector).
    #[error("{op} over axis {axis}: a tensor of shape {} has axes 0 to {}", shape.parenthesized(), shape.rank().saturating_sub(1))]
    NoSuchAxis {
        /// The reduction: `sum`.
        op: &'static str,
        /// The tensor's shape.
        shape: Shape,
        /// The axis asked for.
        axis: usize,
    },
    /// An op of two vectors given something else (`outer` of a matrix).
    #[error(
        "{op}({left}, {right}): {op} takes two vectors",
        left = left.parenthesized(),
        right = right.parenthesized()
    )]
    NotVectors {
        /// The op: `outer`.
        op: &'static str,
        /// The left operand's shape.
        left: Shape,
        /// The right operand's shape.
        right: Shape,
    },
    /// A reduction with no value for an empty tensor (`max`, `softmax`, `logsumexp`).
    #[error("{op} of an empty tensor of shape ({shape}) has no value")]
    Empty {
        /// The reduction.
        op: &'static str,
        /// The tensor's shape.
        shape: Shape,
    },
    /// Scores and labels whose shapes do not go together (`cross_entropy`,
    /// `onehot`).
    #[error(
        "cross_entropy(Z, y) takes n×k scores Z and n labels y (or k scores and one label), not {} and {}",
        scores.parenthesized(),
        labels.parenthesized()
    )]
    Labels {
        /// The scores' shape.
        scores: Shape,
        /// The labels' shape.
        labels: Shape,
    },
    /// A label that is not a class index (a whole number from 0 to k − 1).
    #[error("{op}: the label {value} at [{at}] is not a class: labels are whole numbers from 0 to {}", classes.saturating_sub(1))]
    Label {
        /// The op: `cross_entropy` or `onehot`.
        op: &'static str,
        /// The label as written.
        value: String,
        /// Its position among the labels.
        at: usize,
        /// How many classes there are.
        classes: usize,
    },
    /// A slice past the end of its axis, or backwards (`X[3:1]`).
    #[error(
        "the slice along axis {axis} is out of range for shape ({shape}): a range start:end takes 0 ≤ start ≤ end ≤ {}, an index 0 to {}",
        shape.dims()[*axis],
        shape.dims()[*axis].saturating_sub(1)
    )]
    Slice {
        /// The sliced tensor's shape.
        shape: Shape,
        /// The axis.
        axis: usize,
    },
    /// A new value for a leaf, of another shape than the leaf's.
    #[error(
        "a leaf of shape {} cannot take a value of shape {}",
        expected.parenthesized(),
        got.parenthesized()
    )]
    LeafShape {
        /// The leaf's shape.
        expected: Shape,
        /// The new value's shape.
        got: Shape,
    },
    /// A scalar op that does not apply elementwise (a leaf op, or the
    /// variadic `min`/`max`).
    #[error("`{op}` does not apply elementwise to tensors")]
    NotElementwise {
        /// The op's name.
        op: &'static str,
    },
    /// Wrong number of operands for a tensor op.
    #[error("`{op}` takes {expected} input(s), got {got}")]
    Arity {
        /// The tensor op's name.
        op: &'static str,
        /// How many it takes.
        expected: usize,
        /// How many were given.
        got: usize,
    },
}

impl ShapeError {
    /// The fix to show under the caret, where the message alone does not
    /// say what to type: for a matrix product whose inner sizes differ,
    /// which sizes must agree; for a leaf given a value of another shape,
    /// the shape it takes and how to bind the name again. `None` for the
    /// others, whose message names the rule and the shapes.
    pub fn help(&self) -> Option<String> {
        match self {
            Self::Inner { left, right } => {
                let (Some(k), Some(l)) = (left.dims().last(), right.dims().first()) else {
                    return None;
                };
                let (rows, columns) = match (left.rank(), right.rank()) {
                    (1, 1) => ("the two vectors' lengths", ""),
                    (_, 1) => ("the matrix's columns", " and the vector's length"),
                    (1, _) => ("the vector's length", " and the matrix's rows"),
                    _ => ("the left factor's columns", " and the right factor's rows"),
                };
                Some(format!(
                    "in `A @ B` {rows}{columns} must be equal; here they are {k} and {l}"
                ))
            }
            Self::LeafShape { expected, .. } => Some(format!(
                "give it a value of shape {}, or bind the name again with `=` (`NAME = …` takes any shape)",
                expected.parenthesized()
            )),
            _ => None,
        }
    }
}
