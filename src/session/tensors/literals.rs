//! Literals, sizes and indices in a tensor expression: `[…]` (a vector, or
//! a matrix of rows of one length), `zeros`, `ones`, `eye`, `randn`, `rand`
//! and `uniform` made whole within the memory budget, and `x[i]`, `W[i,
//! j]`, `W[i]`.

use crate::engine::tensor::{Rng, Shape, Tensor, TensorOp};
use crate::syntax::{Call, ExprTree, Span};

use super::super::error::ErrorCode;
use super::super::{Session, SessionError};
use super::builtins::Made;
use super::{TValue, from_engine, tensor_error};

impl Session {
    /// `x[i]`, `W[i, j]`, `W[i]` (a row).
    pub(super) fn index(
        &mut self,
        mut args: Vec<TValue>,
        call: &Call,
        tree: &ExprTree,
        span: Span,
    ) -> Result<TValue, SessionError> {
        let indices: Vec<usize> = (1..args.len())
            .map(|k| self.whole(&args[k], tree, call.args[k]))
            .collect::<Result<_, _>>()?;
        args.truncate(1);
        if matches!(args[0], TValue::Number(_)) {
            return Err(tensor_error(
                ErrorCode::Shape,
                span,
                "a number has no elements to index: an index takes a vector or a matrix",
                None,
            ));
        }
        let op = match indices[..] {
            [i] => TensorOp::Index(i),
            [i, j] => TensorOp::Index2(i, j),
            _ => {
                let shape = match &args[0] {
                    TValue::Literal(t) => t.shape(),
                    TValue::Node { id, .. } => self.tensors.graph.shape(*id),
                    TValue::Number(_) => Shape::scalar(),
                };
                return Err(tensor_error(
                    ErrorCode::Shape,
                    span,
                    crate::engine::tensor::ShapeError::TooManyIndices {
                        shape,
                        given: indices.len(),
                    }
                    .to_string(),
                    None,
                ));
            }
        };
        self.apply_tensor(op, args, span)
    }

    /// An index, axis or size: a whole number ≥ 0 (a number, or the value of
    /// a scalar of shape `()`).
    pub(super) fn whole(
        &self,
        value: &TValue,
        tree: &ExprTree,
        at: crate::syntax::ExprId,
    ) -> Result<usize, SessionError> {
        let span = tree.get(at).span();
        let x = match value {
            TValue::Number(x) => *x,
            TValue::Node { id, .. } if self.tensors.graph.shape(*id) == Shape::scalar() => {
                self.tensors.graph.value(*id).data()[0]
            }
            _ => {
                return Err(tensor_error(
                    ErrorCode::Shape,
                    span,
                    "an index, axis or size is a number, not a vector or a matrix",
                    None,
                ));
            }
        };
        if x.fract() == 0.0 && x > u32::MAX as f64 {
            return Err(tensor_error(
                ErrorCode::Limit,
                span,
                format!(
                    "{x:e} is too large for an index, axis or size: at most {} (and a tensor's numbers must fit in the memory budget, 2²⁷)",
                    u32::MAX
                ),
                None,
            ));
        }
        if x.fract() != 0.0 || !(0.0..=(u32::MAX as f64)).contains(&x) {
            return Err(tensor_error(
                ErrorCode::Shape,
                span,
                format!("an index, axis or size is a whole number from 0 up, not {x}"),
                (x < 0.0 && x.fract() == 0.0).then(|| {
                    "gradcalc counts from 0 only (no numpy `x[-1]`): the last of n elements is `x[n - 1]`, and a size is at least 0".to_string()
                }),
            ));
        }
        Ok(x as usize)
    }

    /// `zeros(m, n)`, `ones(n)`, `randn(m, n)`, `eye(n)`: a literal, within
    /// the memory budget; `rand(m, n)`, `rand(n)`: uniform samples of [0,
    /// 1); `uniform(m, n, lo, hi)`, `uniform(n, lo, hi)`: of [lo, hi) (`lo
    /// + (hi − lo)·u`), from the generator `randn` draws from (`:seed N`).
    /// The count of `args` is the one the function table gives `made`.
    pub(super) fn make(
        &mut self,
        made: Made,
        args: &[TValue],
        call: &Call,
        tree: &ExprTree,
        span: Span,
    ) -> Result<TValue, SessionError> {
        let sizes = if made == Made::Uniform {
            args.len() - 2
        } else {
            args.len()
        };
        let dims: Vec<usize> = args[..sizes]
            .iter()
            .zip(&call.args)
            .map(|(a, at)| self.whole(a, tree, *at))
            .collect::<Result<_, _>>()?;
        let (lo, hi) = if made == Made::Uniform {
            let bound = |k: usize| {
                self.number_of(&args[k]).ok_or_else(|| {
                    tensor_error(
                        ErrorCode::BadArguments,
                        tree.get(call.args[k]).span(),
                        "uniform's bounds lo and hi are numbers",
                        None,
                    )
                })
            };
            (bound(sizes)?, bound(sizes + 1)?)
        } else {
            (0.0, 1.0)
        };
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(tensor_error(
                ErrorCode::BadArguments,
                span,
                format!("uniform(…, lo, hi) takes finite bounds with lo ≤ hi, not {lo} and {hi}"),
                None,
            ));
        }
        let shape = match dims[..] {
            [n] if made == Made::Eye => Shape::matrix(n, n),
            [n] => Shape::vector(n),
            [m, n] => Shape::matrix(m, n),
            _ => Shape::scalar(),
        };
        self.tensors
            .graph
            .check_budget(shape)
            .map_err(|e| from_engine(e.into(), span))?;
        Ok(TValue::Literal(match made {
            Made::Zeros => Tensor::zeros(shape),
            Made::Ones => Tensor::ones(shape),
            Made::Eye => Tensor::eye(dims[0]),
            Made::Randn => self.drawn(shape, span, Rng::normal)?,
            Made::Rand | Made::Uniform => {
                self.drawn(shape, span, |rng| lo + (hi - lo) * rng.uniform())?
            }
        }))
    }
}

impl Session {
    /// A tensor of `shape` drawn from the session's generator, `sample`
    /// once per element (`randn`, `rand`, `uniform`), answering Ctrl-C
    /// between blocks of 2²⁰ elements ([`Tensor::drawn`]); `span` is the
    /// call's.
    ///
    /// Errors: Ctrl-C, which leaves the generator as it was, so the
    /// statement typed again draws the same numbers.
    pub(super) fn drawn(
        &mut self,
        shape: Shape,
        span: Span,
        mut sample: impl FnMut(&mut Rng) -> f64,
    ) -> Result<Tensor, SessionError> {
        let before = self.tensors.rng.clone();
        let graph = &self.tensors.graph;
        let rng = &mut self.tensors.rng;
        Tensor::drawn(shape, &|| graph.interrupted(), || sample(rng)).ok_or_else(|| {
            self.tensors.rng = before;
            SessionError::Interrupted { span }
        })
    }
}

/// `[a, b, …]`: a vector of numbers, or a matrix of rows of one length.
pub(super) fn literal(
    args: Vec<TValue>,
    call: &Call,
    tree: &ExprTree,
) -> Result<TValue, SessionError> {
    let at = |k: usize| tree.get(call.args[k]).span();
    if args.iter().all(|a| matches!(a, TValue::Number(_))) {
        let numbers = args
            .iter()
            .map(|a| match a {
                TValue::Number(x) => *x,
                _ => f64::NAN,
            })
            .collect();
        return Ok(TValue::Literal(Tensor::vector(numbers)));
    }
    // A variable among the elements is named first, wherever it stands.
    if let Some(k) = args.iter().position(|a| matches!(a, TValue::Node { .. })) {
        return Err(tensor_error(
            ErrorCode::Unsupported,
            at(k),
            "the elements of a literal are numbers: a variable or a tensor cannot be one",
            Some(if args.len() == 1 {
                // `3*[x + 1]`: square brackets written to group, as by hand.
                "`[…]` makes a vector; to group, write round brackets: `(…)`".into()
            } else {
                "build it with operations instead, e.g. `x*[1, 0] + y*[0, 1]` for the vector of x and y".into()
            }),
        ));
    }
    let mut rows: Vec<Vec<f64>> = Vec::with_capacity(args.len());
    for (k, arg) in args.into_iter().enumerate() {
        match arg {
            TValue::Literal(row) if row.shape().rank() == 1 => rows.push(row.into_data()),
            TValue::Literal(_) => {
                return Err(tensor_error(
                    ErrorCode::Shape,
                    at(k),
                    "a row of a matrix is a list of numbers: vectors and matrices have at most 2 axes",
                    None,
                ));
            }
            // (A variable among the elements was refused above.)
            TValue::Number(_) | TValue::Node { .. } => {
                return Err(tensor_error(
                    ErrorCode::Shape,
                    at(k),
                    "a literal holds numbers (a vector) or rows `[…]` (a matrix), not both",
                    Some("write every row in brackets: `[[1, 2], [3, 4]]`".into()),
                ));
            }
        }
    }
    Tensor::from_rows(&rows)
        .map(TValue::Literal)
        .map_err(|ragged| {
            let row = at(ragged.row);
            tensor_error(
                ErrorCode::Shape,
                row,
                format!("ragged rows: {ragged}"),
                Some(format!(
                    "give every row {} element{}",
                    ragged.expected,
                    if ragged.expected == 1 { "" } else { "s" }
                )),
            )
        })
}
