//! The tensor backward pass recorded as nodes: ∂L/∂W built from tensor ops
//! over the nodes of the graph, so that a tensor derivative is a value like
//! any other (printed, assigned, evaluated again when leaves move,
//! differentiated again: `grad(sum(grad(sum(x^3), x)), x)`, `:hessian`):
//! [`TensorGraph::grad`]. The scalar graph's `Graph::grad` does the same for
//! numbers (`engine/derivative.rs`).
//!
//! The walk is the backward pass's (`backward.rs`): the reverse topological
//! order of the output, the output's gradient seeded with the constant ones
//! of its shape, and for each node and each operand the vector–Jacobian
//! product, added with `+` where an operand fans out. Here every one of
//! these is a node:
//!
//! - `Elementwise(op)`: `upstream ⊙ f′`, the local derivative `f′` built
//!   elementwise from the scalar op row's typed rule ([`Op::local_rule`] in
//!   its built form, the same [`Expr`] `Graph::grad` builds) with
//!   elementwise tensor ops over the operand nodes, then summed over the
//!   broadcast axes back to the operand's shape (`sum`, `sum(·, axis)`,
//!   `sum(·, axis, keepdims)`);
//! - `A @ B`: `upstream @ Bᵀ` and `Aᵀ @ upstream` (a vector operand by
//!   `outer`, `@` of a vector, or `⊙` for the dot product);
//! - `ᵀ`, `sum`, `mean`, `sum`/`mean` along an axis, `outer`, indices, slices, the
//!   max and min reductions, `softmax`, `log_softmax`, `logsumexp` and
//!   `cross_entropy`: their rules of `backward.rs` written with the ops of
//!   the table. A gradient broadcast back to an operand's shape is
//!   `upstream ⊙ ones` (a constant of the operand's shape), and one placed
//!   back where an index took it is `upstream ⊙ mask` (a constant 1 at the
//!   positions taken, 0 elsewhere), so no op was added for this.
//!
//! Rules at kinks are piecewise at the *current* point, as in the scalar
//! derivative graph: `relu′` is the constant mask of the elements with
//! u > 0, a `max` the mask of its maxima, the forms of `^` chosen per
//! element. A derivative graph keeps the branch it was built on when a leaf
//! later moves across a kink (PyTorch's `create_graph=True` does the same).
//! An element on which the op passes nothing gets 0 from its mask; where
//! the rule's expression is not finite at such an element (`∂a^b/∂a` at
//! a = 0, b = 0), 0·inf would be nan, so the derivative is refused
//! ([`TensorGradError::Unsupported`]) rather than wrong. A slice's
//! gradient goes back by constant selection matrices (`E @ upstream @ Fᵀ`).
//!
//! A scalar node bridged in ([`TensorOp::Scalar`]) is a leaf here: the
//! caller names it among `wrt` and continues the chain rule in the scalar
//! graph (`Graph::grad` of the bridged node).

use super::{Select, Shape, Tensor, TensorError, TensorGraph, TensorId, TensorOp, batch, kernels};
use crate::engine::{Expr, Form, LocalRule, Op, Passing, Stable};

/// Why [`TensorGraph::grad`] built nothing. The graph is as it was before
/// the call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TensorGradError {
    /// The derivative graph would have had more than `limit` nodes.
    #[error("the derivative graph would have more than {limit} tensor nodes")]
    TooLarge {
        /// The node budget that was passed.
        limit: usize,
    },
    /// The graph's interrupt asked to stop.
    #[error("interrupted")]
    Interrupted,
    /// An op's rule is not finite at an element where its mask passes
    /// nothing (`^` at 0^0), so a node would hold nan where the gradient
    /// is 0.
    #[error("a derivative as nodes through `{op}` is not supported yet{why}")]
    Unsupported {
        /// The op's name as typed (`^`).
        op: &'static str,
        /// More words (`""`, or starting with `: `).
        why: &'static str,
    },
    /// A node of the derivative graph did not fit in the memory budget.
    #[error(transparent)]
    Budget(#[from] super::BudgetError),
}

impl From<TensorError> for TensorGradError {
    fn from(error: TensorError) -> TensorGradError {
        match error {
            TensorError::Budget(error) => TensorGradError::Budget(error),
            TensorError::Interrupted => TensorGradError::Interrupted,
            // The rules are built to the operands' shapes.
            TensorError::Shape(error) => unreachable!("a derivative rule broke a shape: {error}"),
        }
    }
}

type Built = Result<TensorId, TensorGradError>;

impl TensorGraph {
    /// The derivatives of `output` with respect to each node of `wrt`, built
    /// as nodes of this graph: `results[i]` is the node of
    /// `∂output/∂wrt[i]`, of `wrt[i]`'s shape (the constant zeros where no
    /// path from the output reaches it). An output of another shape than
    /// `()` is seeded with ones, as [`TensorGraph::backward`] does (the
    /// derivatives of its sum). Each result is an ordinary node: its value
    /// follows [`TensorGraph::rerun`] after a leaf moves, and `grad` of an
    /// element or a sum of it is the next order.
    ///
    /// Only nodes that depend on some `wrt` node carry a derivative, and the
    /// walk covers the output's nodes from the smallest `wrt` id up. A local
    /// derivative that is the constant 1 is not multiplied, −1 becomes a
    /// negation, and ops of constants only fold into a constant.
    ///
    /// # Errors
    /// [`TensorGradError::TooLarge`] when more than `max_nodes` nodes would
    /// be appended; [`TensorGradError::Interrupted`] when the interrupt asks
    /// to stop; [`TensorGradError::Unsupported`] for an op without a rule of
    /// nodes on the way; [`TensorGradError::Budget`] when a value does not
    /// fit in the memory budget. Each time the graph is truncated back to
    /// its length before the call.
    ///
    /// # Panics
    /// If `output` or a `wrt` id is not a node of this graph.
    ///
    /// ```
    /// use gradcalc::engine::Op;
    /// use gradcalc::engine::tensor::{Tensor, TensorGraph, TensorOp};
    /// let mut g = TensorGraph::new();
    /// let x = g.leaf(Tensor::vector(vec![1.0, 2.0, 3.0])).unwrap();
    /// let three = g.constant(Tensor::scalar(3.0)).unwrap();
    /// let cube = g.apply(TensorOp::Elementwise(Op::Pow), &[x, three]).unwrap();
    /// let l = g.apply(TensorOp::Sum, &[cube]).unwrap();
    /// let d1 = g.grad(l, &[x], 1000).unwrap()[0]; // 3x²
    /// assert_eq!(g.value(d1).data(), &[3.0, 12.0, 27.0]);
    /// let s = g.apply(TensorOp::Sum, &[d1]).unwrap();
    /// let d2 = g.grad(s, &[x], 1000).unwrap()[0]; // 6x
    /// assert_eq!(g.value(d2).data(), &[6.0, 12.0, 18.0]);
    /// ```
    pub fn grad(
        &mut self,
        output: TensorId,
        wrt: &[TensorId],
        max_nodes: usize,
    ) -> Result<Vec<TensorId>, TensorGradError> {
        let mark = self.len();
        let limit = mark.saturating_add(max_nodes);
        let built = if self.hook().asks_to_stop() {
            Err(TensorGradError::Interrupted)
        } else {
            self.derivative_graph(output, wrt, limit)
        };
        match built {
            Ok(results) if self.len() <= limit => Ok(results),
            Ok(_) => {
                self.truncate(mark);
                Err(TensorGradError::TooLarge { limit: max_nodes })
            }
            Err(error) => {
                self.truncate(mark);
                Err(match error {
                    TensorGradError::TooLarge { .. } => {
                        TensorGradError::TooLarge { limit: max_nodes }
                    }
                    other => other,
                })
            }
        }
    }

    /// The walk of [`TensorGraph::grad`]; stops with an error once the graph
    /// passes `limit` nodes (the caller truncates).
    fn derivative_graph(
        &mut self,
        output: TensorId,
        wrt: &[TensorId],
        limit: usize,
    ) -> Result<Vec<TensorId>, TensorGradError> {
        let Some(&min) = wrt.iter().min() else {
            return Ok(Vec::new());
        };
        let len = self.len();
        let base = min.index();
        assert!(base < len, "{min:?} is not a node of this graph");
        let order: Vec<TensorId> = self
            .topo_order(output)
            .into_iter()
            .filter(|&id| id >= min)
            .collect();
        let depends = self.depends_on_wrt(&order, wrt, base);
        let depends_on = |id: TensorId| id.index().checked_sub(base).is_some_and(|i| depends[i]);
        let mut grads: Vec<Option<TensorId>> = vec![None; len - base];
        if depends_on(output) {
            let ones = Tensor::ones(self.shape(output));
            grads[output.index() - base] = Some(self.constant(ones)?);
        }
        for &node in &order {
            let Some(upstream) = grads[node.index() - base] else {
                continue;
            };
            if self.hook().asks_to_stop() {
                return Err(TensorGradError::Interrupted);
            }
            if self.len() > limit {
                return Err(TensorGradError::TooLarge { limit });
            }
            let operands = self.operands(node).to_vec();
            for (position, &input) in operands.iter().enumerate() {
                if !depends_on(input) || self.op(node) == TensorOp::CrossEntropy && position == 1 {
                    continue;
                }
                let Some(contribution) = self.vjp_node(node, position, upstream)? else {
                    continue;
                };
                let slot = input.index() - base;
                grads[slot] = Some(match grads[slot] {
                    None => contribution,
                    Some(before) => {
                        self.fold(TensorOp::Elementwise(Op::Add), &[before, contribution])?
                    }
                });
            }
        }
        wrt.iter()
            .map(|&x| match grads[x.index() - base] {
                Some(g) => Ok(g),
                None => Ok(self.constant(Tensor::zeros(self.shape(x)))?),
            })
            .collect()
    }

    /// `depends[i - base]`: node `i` is one of `wrt`, or an op that passes
    /// gradient built from one (comparisons, `argmax` and `onehot` pass none).
    fn depends_on_wrt(&self, order: &[TensorId], wrt: &[TensorId], base: usize) -> Vec<bool> {
        let mut depends = vec![false; self.len() - base];
        for &x in wrt {
            depends[x.index() - base] = true;
        }
        for &node in order.iter().rev() {
            let i = node.index() - base;
            if depends[i] {
                continue;
            }
            depends[i] = match self.op(node) {
                TensorOp::Compare(_) | TensorOp::ArgMax(_) | TensorOp::OneHot(_) => false,
                _ => self
                    .operands(node)
                    .iter()
                    .any(|o| o.index().checked_sub(base).is_some_and(|j| depends[j])),
            };
        }
        depends
    }

    /// The node of what operand `position` of `node` receives from the node
    /// `g` (the upstream gradient, of `node`'s shape), of the operand's
    /// shape; `None` when it receives nothing.
    fn vjp_node(
        &mut self,
        node: TensorId,
        position: usize,
        g: TensorId,
    ) -> Result<Option<TensorId>, TensorGradError> {
        let operands = self.operands(node).to_vec();
        let input = operands[position];
        let shape = self.shape(input);
        let mul = TensorOp::Elementwise(Op::Mul);
        let div = TensorOp::Elementwise(Op::Div);
        let built = match self.op(node) {
            TensorOp::Variable | TensorOp::Const | TensorOp::Scalar(_) => {
                unreachable!("a leaf has no operands")
            }
            TensorOp::Compare(_) | TensorOp::ArgMax(_) | TensorOp::OneHot(_) => return Ok(None),
            TensorOp::Elementwise(op) => {
                let Some(local) = self.elementwise_local(node, op, position)? else {
                    return Ok(None);
                };
                let full = self.chain(g, local)?;
                self.sum_to(full, shape)?
            }
            TensorOp::MatMul => self.matmul_vjp(&operands, position, g)?,
            TensorOp::Transpose if shape.rank() == 2 => self.fold(TensorOp::Transpose, &[g])?,
            TensorOp::Transpose => g,
            TensorOp::Sum | TensorOp::SumKeepDims(_) => self.spread(g, shape)?,
            TensorOp::Mean => {
                let n = self.constant(Tensor::scalar(shape.len() as f64))?;
                let each = self.fold(div, &[g, n])?;
                self.spread(each, shape)?
            }
            TensorOp::SumAxis(axis) => self.spread_along(g, shape, axis)?,
            TensorOp::MeanAxis(axis) => {
                let n = self.constant(Tensor::scalar(shape.dims()[axis] as f64))?;
                let each = self.fold(div, &[g, n])?;
                self.spread_along(each, shape, axis)?
            }
            TensorOp::Outer => {
                // outer(u, x): upstream @ x to u, u @ upstream to x.
                let other = operands[1 - position];
                let pair = if position == 0 {
                    [g, other]
                } else {
                    [other, g]
                };
                self.fold(TensorOp::MatMul, &pair)?
            }
            TensorOp::Index(_) | TensorOp::Index2(_, _) => {
                let mask = self.taken_mask(node, shape);
                let mask = self.constant(mask)?;
                self.fold(mul, &[g, mask])?
            }
            TensorOp::Max | TensorOp::Min => {
                let data = self.value(input).data();
                let ties = batch::ties(data, self.op(node) == TensorOp::Max);
                let mut mask = vec![0.0; data.len()];
                for &i in &ties {
                    mask[i] = 1.0 / ties.len() as f64;
                }
                let mask = self.constant(Tensor::new(shape, mask))?;
                self.fold(mul, &[g, mask])?
            }
            TensorOp::MaxAxis(axis) | TensorOp::MinAxis(axis) => {
                let data = self.value(input).data();
                let max = matches!(self.op(node), TensorOp::MaxAxis(_));
                let mut mask = vec![0.0; data.len()];
                for lane in batch::lanes(shape, axis) {
                    mask[lane[batch::first_extremum(data, &lane, max)]] = 1.0;
                }
                let mask = self.constant(Tensor::new(shape, mask))?;
                let spread = self.spread_along(g, shape, axis)?;
                self.fold(mul, &[spread, mask])?
            }
            TensorOp::Softmax
            | TensorOp::LogSoftmax
            | TensorOp::LogSumExp
            | TensorOp::CrossEntropy => self.row_vjp_node(node, &operands, g)?,
            TensorOp::Slice(first, second) => self.slice_vjp_node(shape, first, second, g)?,
        };
        Ok(Some(built))
    }

    /// The vector–Jacobian products of the ops along rows (`softmax`,
    /// `log_softmax`, `logsumexp`, `cross_entropy`'s scores) from `g`, as
    /// `backward.rs` computes them, built of nodes.
    fn row_vjp_node(&mut self, node: TensorId, operands: &[TensorId], g: TensorId) -> Built {
        let input = operands[0];
        let shape = self.shape(input);
        let mul = TensorOp::Elementwise(Op::Mul);
        let div = TensorOp::Elementwise(Op::Div);
        Ok(match self.op(node) {
            TensorOp::Softmax => {
                // p ⊙ (upstream − sum(p ⊙ upstream)) per row, p the node.
                let pg = self.fold(mul, &[node, g])?;
                let s = self.row_sums(pg, shape)?;
                let centred = self.fold(TensorOp::Elementwise(Op::Sub), &[g, s])?;
                self.fold(mul, &[node, centred])?
            }
            TensorOp::LogSoftmax => {
                // upstream − softmax(z) ⊙ sum(upstream) per row.
                let p = self.fold(TensorOp::Softmax, &[input])?;
                let s = self.row_sums(g, shape)?;
                let ps = self.fold(mul, &[p, s])?;
                self.fold(TensorOp::Elementwise(Op::Sub), &[g, ps])?
            }
            TensorOp::LogSumExp => {
                // upstream ⊙ softmax(z), the upstream of row i on row i.
                let p = self.fold(TensorOp::Softmax, &[input])?;
                let rows = self.per_row(g, shape)?;
                self.fold(mul, &[rows, p])?
            }
            TensorOp::CrossEntropy => {
                // upstream ⊙ (softmax(Z) − onehot(y, k)) / rows.
                let p = self.fold(TensorOp::Softmax, &[input])?;
                let classes = batch::classes(shape);
                let onehot = self.fold(TensorOp::OneHot(classes), &[operands[1]])?;
                let diff = self.fold(TensorOp::Elementwise(Op::Sub), &[p, onehot])?;
                let rows = match *shape.dims() {
                    [m, _] => m,
                    _ => 1,
                };
                let n = self.constant(Tensor::scalar(rows as f64))?;
                let each = self.fold(div, &[diff, n])?;
                self.chain(g, each)?
            }
            _ => unreachable!("an op along rows"),
        })
    }

    /// A slice's vector–Jacobian product: the upstream `g` put back where
    /// the slice took it, zeros elsewhere, by constant selection matrices
    /// (`E @ g @ Fᵀ`, `E` of the operand's rows by the rows taken with a 1
    /// where a row was taken, `F` the same of the columns), `outer` with a
    /// one-hot vector where an index dropped an axis, `g ⊙ mask` for one
    /// element.
    fn slice_vjp_node(
        &mut self,
        shape: Shape,
        first: Select,
        second: Option<Select>,
        g: TensorId,
    ) -> Built {
        let taken = batch::taken(shape, first, second).expect("a slice that was built");
        let (rows, cols) = (taken.rows.clone(), taken.cols.clone());
        let keep_rows = matches!(first, Select::Range(..));
        let keep_cols = shape.rank() == 2 && !matches!(second, Some(Select::At(_)));
        let m = shape.dims()[0];
        let n = taken.n;
        // E: m × rows.len(), 1 at [rows.start + i, i]; an identity is skipped.
        let select = |size: usize, range: std::ops::Range<usize>| {
            let k = range.len();
            let mut data = vec![0.0; size * k];
            for (i, r) in range.enumerate() {
                data[r * k + i] = 1.0;
            }
            Tensor::new(Shape::matrix(size, k), data)
        };
        let one_hot = |size: usize, at: usize| {
            let mut data = vec![0.0; size];
            data[at] = 1.0;
            Tensor::vector(data)
        };
        let matmul = TensorOp::MatMul;
        match (shape.rank(), keep_rows, keep_cols) {
            // A vector's range, a matrix's rows (all columns kept or some).
            (1, true, _) | (2, true, true) => {
                let mut out = g;
                if rows.len() != m {
                    let e = self.constant(select(m, rows))?;
                    out = self.fold(matmul, &[e, out])?;
                }
                if shape.rank() == 2 && cols.len() != n {
                    let f = select(n, cols);
                    let (k, size) = (f.shape().dims()[1], n);
                    let mut ft = vec![0.0; k * size];
                    for r in 0..size {
                        for c in 0..k {
                            ft[c * size + r] = f.data()[r * k + c];
                        }
                    }
                    let ft = self.constant(Tensor::new(Shape::matrix(k, size), ft))?;
                    out = self.fold(matmul, &[out, ft])?;
                }
                Ok(out)
            }
            // Rows taken, one column: outer(E @ g, e_j).
            (2, true, false) => {
                let e = self.constant(select(m, rows))?;
                let column = self.fold(matmul, &[e, g])?;
                let at = self.constant(one_hot(n, cols.start))?;
                self.fold(TensorOp::Outer, &[column, at])
            }
            // One row, columns taken: outer(e_i, F @ g).
            (2, false, true) => {
                let f = self.constant(select(n, cols))?;
                let row = self.fold(matmul, &[f, g])?;
                let at = self.constant(one_hot(m, rows.start))?;
                self.fold(TensorOp::Outer, &[at, row])
            }
            // One element: g ⊙ its mask.
            _ => {
                let mut mask = vec![0.0; shape.len()];
                mask[rows.start * n + cols.start] = 1.0;
                let mask = self.constant(Tensor::new(shape, mask))?;
                self.fold(TensorOp::Elementwise(Op::Mul), &[g, mask])
            }
        }
    }

    /// `A @ B`'s vector–Jacobian product to operand `position` from `g`:
    /// `g @ Bᵀ` and `Aᵀ @ g` for matrices; `outer` where a vector stands as
    /// a column or a row; `g ⊙ the other` for the dot product.
    fn matmul_vjp(&mut self, operands: &[TensorId], position: usize, g: TensorId) -> Built {
        let (a, b) = (operands[0], operands[1]);
        let matmul = TensorOp::MatMul;
        match (self.shape(a).rank(), self.shape(b).rank(), position) {
            (2, 2, 0) => {
                let bt = self.fold(TensorOp::Transpose, &[b])?;
                self.fold(matmul, &[g, bt])
            }
            (2, _, 1) => {
                let at = self.fold(TensorOp::Transpose, &[a])?;
                self.fold(matmul, &[at, g])
            }
            (2, 1, 0) => self.fold(TensorOp::Outer, &[g, b]),
            (1, 2, 0) => self.fold(matmul, &[b, g]),
            (1, 2, 1) => self.fold(TensorOp::Outer, &[a, g]),
            // The dot product: g of shape () times the other vector.
            (_, _, position) => {
                let other = operands[1 - position];
                self.chain(g, other)
            }
        }
    }

    /// The local derivative `∂node/∂operand[position]` of the elementwise
    /// `op`, as a node broadcasting to the node's shape: the scalar rule's
    /// built form over the operand nodes where every element takes the same
    /// rule; otherwise each rule met, times the constant mask of the
    /// elements that take it (divided by the ties of max and min), plus nan
    /// where the derivative is undefined. `None` where no element passes.
    fn elementwise_local(
        &mut self,
        node: TensorId,
        op: Op,
        position: usize,
    ) -> Result<Option<TensorId>, TensorGradError> {
        let operands = self.operands(node).to_vec();
        let Some(derivative) = op.info().derivative(position) else {
            return Ok(None);
        };
        let uniform = derivative.passing == Passing::Always
            && !matches!(derivative.stable, Stable::AtPoint { .. });
        if uniform {
            let probe = [0.0; 2];
            let LocalRule::Expr { expr, .. } =
                op.local_rule(position, &probe[..operands.len()], 0.0, Form::Built)
            else {
                unreachable!("a rule that always passes has an expression")
            };
            return self.build_expr(expr, &operands, node).map(Some);
        }
        // The rule of each element, at its operands' values broadcast.
        let out = self.shape(node);
        let columns: Vec<Vec<f64>> = match *operands.as_slice() {
            [a] => vec![self.value(a).data().to_vec()],
            [a, b] => {
                let (x, y) = (self.value(a), self.value(b));
                let never = || false;
                let first = kernels::zip_until(x, y, out, |p, _| p, &never);
                let second = kernels::zip_until(x, y, out, |_, q| q, &never);
                vec![
                    first.expect("never stopped"),
                    second.expect("never stopped"),
                ]
            }
            _ => unreachable!("elementwise ops take one or two operands"),
        };
        let values = self.value(node).data().to_vec();
        let mut rules: Vec<(&'static Expr, Vec<f64>)> = Vec::new();
        let mut undefined: Option<Vec<f64>> = None;
        let mut point = Vec::with_capacity(2);
        for (i, &value) in values.iter().enumerate() {
            point.clear();
            point.extend(columns.iter().map(|c| c[i]));
            match op.local_rule(position, &point, value, Form::Built) {
                LocalRule::PassesNothing => {}
                LocalRule::Undefined => {
                    undefined.get_or_insert_with(|| vec![0.0; values.len()])[i] = f64::NAN;
                }
                LocalRule::Expr { expr, ties } => {
                    let k = match rules.iter().position(|(e, _)| std::ptr::eq(*e, expr)) {
                        Some(k) => k,
                        None => {
                            rules.push((expr, vec![0.0; values.len()]));
                            rules.len() - 1
                        }
                    };
                    rules[k].1[i] = 1.0 / ties as f64;
                }
            }
        }
        if let ([(expr, mask)], None) = (rules.as_slice(), &undefined)
            && mask.iter().all(|&m| m == 1.0)
        {
            return self.build_expr(expr, &operands, node).map(Some);
        }
        let mut local: Option<TensorId> = None;
        for (expr, mask) in rules {
            let built = self.build_expr(expr, &operands, node)?;
            let masked_out: Vec<bool> = mask.iter().map(|&m| m == 0.0).collect();
            let mask = self.constant(Tensor::new(out, mask))?;
            let term = self.fold(TensorOp::Elementwise(Op::Mul), &[built, mask])?;
            let poisoned = self
                .value(term)
                .data()
                .iter()
                .zip(&masked_out)
                .any(|(v, &out)| out && v.is_nan());
            if poisoned {
                return Err(TensorGradError::Unsupported {
                    op: op.info().name,
                    why: ": its rule is not finite at an element it passes nothing to",
                });
            }
            local = Some(match local {
                None => term,
                Some(sum) => self.fold(TensorOp::Elementwise(Op::Add), &[sum, term])?,
            });
        }
        if let Some(nan) = undefined {
            let nan = self.constant(Tensor::new(out, nan))?;
            local = Some(match local {
                None => nan,
                Some(sum) => self.fold(TensorOp::Elementwise(Op::Add), &[sum, nan])?,
            });
        }
        Ok(local)
    }

    /// Builds `expr` as elementwise tensor nodes over `node`'s `operands`
    /// ([`Expr::Output`] is `node` itself; a number a constant of shape
    /// `()`). Recursion is over the rule's small fixed tree, never over the
    /// graph.
    fn build_expr(&mut self, expr: &Expr, operands: &[TensorId], node: TensorId) -> Built {
        match *expr {
            Expr::Operand(k) => Ok(operands[k]),
            Expr::Output => Ok(node),
            Expr::Num(x) => Ok(self.constant(Tensor::scalar(x))?),
            Expr::Named(c) => Ok(self.constant(Tensor::scalar(c.value()))?),
            Expr::Apply(op, args) => {
                let mut inputs = Vec::with_capacity(args.len());
                for arg in args {
                    inputs.push(self.build_expr(arg, operands, node)?);
                }
                self.fold(TensorOp::Elementwise(op), &inputs)
            }
        }
    }

    /// `upstream ⊙ local` as a node, without multiplying by a constant 1 or
    /// −1 that would not change the shape.
    fn chain(&mut self, upstream: TensorId, local: TensorId) -> Built {
        let all = |g: &TensorGraph, id: TensorId, x: f64| {
            g.op(id) == TensorOp::Const && g.value(id).data().iter().all(|&v| v == x)
        };
        let (su, sl) = (self.shape(upstream), self.shape(local));
        let keeps = |into: Shape| Shape::broadcast("*", su, sl).is_ok_and(|s| s == into);
        if all(self, local, 1.0) && keeps(su) {
            return Ok(upstream);
        }
        if all(self, upstream, 1.0) && keeps(sl) {
            return Ok(local);
        }
        if all(self, local, -1.0) && keeps(su) {
            return self.fold(TensorOp::Elementwise(Op::Neg), &[upstream]);
        }
        self.fold(TensorOp::Elementwise(Op::Mul), &[upstream, local])
    }

    /// `g` summed over the axes it was broadcast along, down to `shape`
    /// (numpy's broadcasting for rank ≤ 2): the leading axis of a higher
    /// rank by `sum(·, 0)` (all by `sum` for shape `()`), then each axis of
    /// size 1 in `shape` by `sum(·, axis, keepdims)`.
    fn sum_to(&mut self, g: TensorId, shape: Shape) -> Built {
        let mut g = g;
        if shape.rank() == 0 {
            return if self.shape(g).rank() == 0 {
                Ok(g)
            } else {
                self.fold(TensorOp::Sum, &[g])
            };
        }
        while self.shape(g).rank() > shape.rank() {
            g = self.fold(TensorOp::SumAxis(0), &[g])?;
        }
        for axis in 0..shape.rank() {
            if shape.dims()[axis] == 1 && self.shape(g).dims()[axis] != 1 {
                g = self.fold(TensorOp::SumKeepDims(axis), &[g])?;
            }
        }
        Ok(g)
    }

    /// `g` broadcast to `shape` (`g ⊙ ones`), or `g` when it has that shape.
    fn spread(&mut self, g: TensorId, shape: Shape) -> Built {
        if self.shape(g) == shape {
            return Ok(g);
        }
        let ones = self.constant(Tensor::ones(shape))?;
        self.fold(TensorOp::Elementwise(Op::Mul), &[g, ones])
    }

    /// The gradient `g` of a reduction along `axis` of an operand of
    /// `shape`, put back along that axis: each of the `n` column values of
    /// a reduction over rows down its column (`g ⊙ ones`), each of the `m`
    /// row values along its row (`outer(g, ones(n))`).
    fn spread_along(&mut self, g: TensorId, shape: Shape, axis: usize) -> Built {
        match (shape.dims(), axis) {
            (&[_, n], 1) => {
                let ones = self.constant(Tensor::ones(Shape::vector(n)))?;
                self.fold(TensorOp::Outer, &[g, ones])
            }
            _ => self.spread(g, shape),
        }
    }

    /// The sums of `x` along its last axis, kept so that they broadcast
    /// back: `sum(x)` of a vector or a scalar, `sum(x, 1, keepdims)` of a
    /// matrix of `shape`.
    fn row_sums(&mut self, x: TensorId, shape: Shape) -> Built {
        match shape.rank() {
            2 => self.fold(TensorOp::SumKeepDims(1), &[x]),
            _ => self.fold(TensorOp::Sum, &[x]),
        }
    }

    /// `g`, one value per row of an operand of `shape` (a reduction along
    /// the last axis), as a tensor that multiplies each row by its value.
    fn per_row(&mut self, g: TensorId, shape: Shape) -> Built {
        match *shape.dims() {
            [_, n] => {
                let ones = self.constant(Tensor::ones(Shape::vector(n)))?;
                self.fold(TensorOp::Outer, &[g, ones])
            }
            _ => Ok(g),
        }
    }

    /// The mask of the positions an index `node` took from its operand of
    /// `shape`: 1 there, 0 elsewhere.
    fn taken_mask(&self, node: TensorId, shape: Shape) -> Tensor {
        let mut mask = vec![0.0; shape.len()];
        match (self.op(node), shape.dims()) {
            (TensorOp::Index(i), [_]) => mask[i] = 1.0,
            (TensorOp::Index(i), &[_, n]) => mask[i * n..(i + 1) * n].fill(1.0),
            (TensorOp::Index2(i, j), &[_, n]) => mask[i * n + j] = 1.0,
            _ => unreachable!("an index of a vector or a matrix"),
        }
        Tensor::new(shape, mask)
    }

    /// Appends `op(inputs)`, or a constant with the same value when every
    /// input is a constant (so constant arithmetic of the rules folds away).
    fn fold(&mut self, op: TensorOp, inputs: &[TensorId]) -> Built {
        let id = self.apply(op, inputs)?;
        if inputs
            .iter()
            .all(|&input| self.op(input) == TensorOp::Const)
        {
            let value = self.value(id).clone();
            self.truncate(id.index());
            return Ok(self.constant(value)?);
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::TensorGradError;
    use crate::engine::Op;
    use crate::engine::tensor::{Select, Shape, Tensor, TensorGraph, TensorId, TensorOp};

    fn elementwise(g: &mut TensorGraph, op: Op, inputs: &[TensorId]) -> TensorId {
        g.apply(TensorOp::Elementwise(op), inputs).unwrap()
    }

    /// Asserts `got` is `expected` element by element, to `rtol` relative.
    #[track_caller]
    fn close(got: &Tensor, expected: &[f64], rtol: f64) {
        assert_eq!(got.len(), expected.len(), "{got:?}");
        for (g, e) in got.data().iter().zip(expected) {
            assert!(
                (g - e).abs() <= rtol * e.abs().max(1.0),
                "{got:?} vs {expected:?}"
            );
        }
    }

    /// ∂²/∂x² sum(x³) = 6x, and ∂/∂W sum(W ⊙ W) = 2W whose sum gives 2 per
    /// element: by hand.
    #[test]
    fn second_derivatives_of_cubes_and_squares() {
        let mut g = TensorGraph::new();
        let x = g.leaf(Tensor::vector(vec![1.0, 2.0, 3.0])).unwrap();
        let three = g.constant(Tensor::scalar(3.0)).unwrap();
        let cube = elementwise(&mut g, Op::Pow, &[x, three]);
        let l = g.apply(TensorOp::Sum, &[cube]).unwrap();
        let d1 = g.grad(l, &[x], 1000).unwrap()[0];
        close(g.value(d1), &[3.0, 12.0, 27.0], 0.0);
        let s = g.apply(TensorOp::Sum, &[d1]).unwrap();
        let d2 = g.grad(s, &[x], 1000).unwrap()[0];
        close(g.value(d2), &[6.0, 12.0, 18.0], 0.0);
        // The derivative follows the leaf: at x = (2, 0, −1), 6x.
        g.set_leaf_value(x, Tensor::vector(vec![2.0, 0.0, -1.0]))
            .unwrap();
        assert!(g.rerun(&crate::engine::Graph::new()));
        close(g.value(d2), &[12.0, 0.0, -6.0], 0.0);
        close(g.value(d1), &[12.0, 0.0, 3.0], 0.0);
    }

    /// A layer tanh(W @ x + b), relu, max, softmax, log_softmax, logsumexp
    /// and a cross-entropy: the derivative
    /// graph's first-order values are the numeric backward pass's (whose
    /// numbers tests/it/tensors.rs checks against numpy), to 1e-12.
    #[test]
    fn first_order_values_are_the_backward_passes() {
        let mut g = TensorGraph::new();
        let w = g
            .leaf(Tensor::from_rows(&[vec![0.5, -1.0, 0.25], vec![1.5, 0.5, -0.5]]).unwrap())
            .unwrap();
        let x = g.leaf(Tensor::vector(vec![1.0, 2.0, -1.0])).unwrap();
        let b = g.leaf(Tensor::vector(vec![0.1, -0.3])).unwrap();
        let v = g
            .leaf(Tensor::from_rows(&[vec![1.0, -2.0], vec![0.5, 0.5], vec![-1.0, 1.0]]).unwrap())
            .unwrap();
        let wx = g.apply(TensorOp::MatMul, &[w, x]).unwrap();
        let u = elementwise(&mut g, Op::Add, &[wx, b]);
        let h = elementwise(&mut g, Op::Tanh, &[u]);
        let z = g.apply(TensorOp::MatMul, &[v, h]).unwrap();
        let r = elementwise(&mut g, Op::Relu, &[z]);
        let m = g.apply(TensorOp::Max, &[r]).unwrap();
        let p = g.apply(TensorOp::Softmax, &[z]).unwrap();
        let lp = g.apply(TensorOp::LogSoftmax, &[z]).unwrap();
        let lse = g.apply(TensorOp::LogSumExp, &[z]).unwrap();
        let pm = g.apply(TensorOp::Mean, &[p]).unwrap();
        let t = g.apply(TensorOp::Index(1), &[lp]).unwrap();
        let s1 = elementwise(&mut g, Op::Add, &[m, pm]);
        let s2 = elementwise(&mut g, Op::Sub, &[s1, t]);
        let s3 = elementwise(&mut g, Op::Mul, &[s2, lse]);
        let label = g.constant(Tensor::scalar(1.0)).unwrap();
        let ce = g.apply(TensorOp::CrossEntropy, &[z, label]).unwrap();
        let out = elementwise(&mut g, Op::Add, &[s3, ce]);
        let numeric = g.backward(out);
        let wrt = [w, x, b, v];
        let built = g.grad(out, &wrt, 10_000).unwrap();
        for (&id, &d) in wrt.iter().zip(&built) {
            close(g.value(d), numeric.get(id).unwrap().data(), 1e-12);
        }
    }

    /// Matrix and axis ops: ∂/∂W of sum(mean(outer(a, c) ⊙ Wᵀ, 1)) +
    /// sum(W, 0)[1] + W[1, 0]·max(W, 1)[0] against the numeric pass.
    #[test]
    fn axis_ops_outer_and_indices_match_the_backward_pass() {
        let mut g = TensorGraph::new();
        let w = g
            .leaf(Tensor::from_rows(&[vec![1.0, -2.0, 0.5], vec![3.0, 0.25, -1.0]]).unwrap())
            .unwrap();
        let a = g.leaf(Tensor::vector(vec![2.0, -1.0, 0.5])).unwrap();
        let c = g.leaf(Tensor::vector(vec![1.5, 0.5])).unwrap();
        let o = g.apply(TensorOp::Outer, &[a, c]).unwrap();
        let wt = g.apply(TensorOp::Transpose, &[w]).unwrap();
        let prod = elementwise(&mut g, Op::Mul, &[o, wt]);
        let rows = g.apply(TensorOp::MeanAxis(1), &[prod]).unwrap();
        let first = g.apply(TensorOp::Sum, &[rows]).unwrap();
        let cols = g.apply(TensorOp::SumAxis(0), &[w]).unwrap();
        let second = g.apply(TensorOp::Index(1), &[cols]).unwrap();
        let maxes = g.apply(TensorOp::MaxAxis(1), &[w]).unwrap();
        let m0 = g.apply(TensorOp::Index(0), &[maxes]).unwrap();
        let w10 = g.apply(TensorOp::Index2(1, 0), &[w]).unwrap();
        let third = elementwise(&mut g, Op::Mul, &[w10, m0]);
        let kept = g.apply(TensorOp::SumKeepDims(0), &[w]).unwrap();
        let fourth = g.apply(TensorOp::Mean, &[kept]).unwrap();
        let s = elementwise(&mut g, Op::Add, &[first, second]);
        let s = elementwise(&mut g, Op::Add, &[s, third]);
        let out = elementwise(&mut g, Op::Add, &[s, fourth]);
        let numeric = g.backward(out);
        let wrt = [w, a, c];
        let built = g.grad(out, &wrt, 10_000).unwrap();
        for (&id, &d) in wrt.iter().zip(&built) {
            close(g.value(d), numeric.get(id).unwrap().data(), 1e-12);
        }
        assert_eq!(g.shape(built[0]), Shape::matrix(2, 3));
    }

    /// `x^e` with x = (0, 2), e = (0, 2): the element 0^0 passes nothing
    /// (∂a^b/∂a where b = 0), but its rule b·a^(b−1) is 0·inf there, so the
    /// derivative is refused by name rather than nan; the graph as it was. A
    /// budget too small is refused the same way.
    #[test]
    fn refusals_leave_the_graph_as_it_was() {
        let mut g = TensorGraph::new();
        let x = g.leaf(Tensor::vector(vec![0.0, 2.0])).unwrap();
        let e = g.constant(Tensor::vector(vec![0.0, 2.0])).unwrap();
        let p = elementwise(&mut g, Op::Pow, &[x, e]);
        let l = g.apply(TensorOp::Sum, &[p]).unwrap();
        let len = g.len();
        let error = g.grad(l, &[x], 1000).unwrap_err();
        assert_eq!(
            error.to_string(),
            "a derivative as nodes through `^` is not supported yet: its rule is not finite at an element it passes nothing to"
        );
        assert_eq!(g.len(), len);
        let sq = elementwise(&mut g, Op::Sin, &[x]);
        let l = g.apply(TensorOp::Sum, &[sq]).unwrap();
        let len = g.len();
        assert_eq!(
            g.grad(l, &[x], 0).unwrap_err(),
            TensorGradError::TooLarge { limit: 0 }
        );
        assert_eq!(g.len(), len);
    }

    /// One step of a random program: the op numbered `op` (modulo the list)
    /// over the nodes counted back `a` and `b` from the newest; `None` when
    /// the shapes do not fit. Ops 0–25 are smooth (21–25 slices); 26–29
    /// have kinks.
    fn step(g: &mut TensorGraph, op: usize, a: usize, b: usize) -> Option<TensorId> {
        let newest = g.len() - 1;
        let x = TensorId((newest - a % (newest + 1)) as u32);
        let y = TensorId((newest - b % (newest + 1)) as u32);
        let unary = |op: Op| (TensorOp::Elementwise(op), vec![x]);
        let (op, inputs) = match op % 30 {
            0 => unary(Op::Tanh),
            1 => unary(Op::Sin),
            2 => unary(Op::Sigmoid),
            3 => unary(Op::Softplus),
            4 => (TensorOp::Elementwise(Op::Add), vec![x, y]),
            5 => (TensorOp::Elementwise(Op::Sub), vec![x, y]),
            6 => (TensorOp::Elementwise(Op::Mul), vec![x, y]),
            7 => (TensorOp::MatMul, vec![x, y]),
            8 => (TensorOp::Transpose, vec![x]),
            9 => (TensorOp::Sum, vec![x]),
            10 => (TensorOp::Mean, vec![x]),
            11 => (TensorOp::SumAxis(0), vec![x]),
            12 => (TensorOp::SumAxis(1), vec![x]),
            13 => (TensorOp::MeanAxis(0), vec![x]),
            14 => (TensorOp::Softmax, vec![x]),
            15 => (TensorOp::LogSumExp, vec![x]),
            16 => (TensorOp::Outer, vec![x, y]),
            17 => (TensorOp::Index(0), vec![x]),
            18 => (TensorOp::SumKeepDims(1), vec![x]),
            19 => (TensorOp::LogSoftmax, vec![x]),
            20 => unary(Op::Cos),
            21 => (TensorOp::Slice(Select::Range(1, 3), None), vec![x]),
            22 => (
                TensorOp::Slice(Select::Range(0, 2), Some(Select::At(1))),
                vec![x],
            ),
            23 => (
                TensorOp::Slice(Select::At(1), Some(Select::Range(1, 3))),
                vec![x],
            ),
            24 => (
                TensorOp::Slice(Select::Range(0, 1), Some(Select::Range(0, 2))),
                vec![x],
            ),
            25 => (TensorOp::Slice(Select::At(1), None), vec![x]),
            26 => unary(Op::Relu),
            27 => unary(Op::Abs),
            28 => (TensorOp::Max, vec![x]),
            _ => (TensorOp::MaxAxis(1), vec![x]),
        };
        g.apply(op, &inputs).ok()
    }

    /// A random program over the leaves A (2×3), b (3), c (), D (3×2):
    /// the graph, its leaves, and `L = sum(last ⊙ R)` (R fixed samples).
    fn program(
        values: &[f64],
        steps: &[(usize, usize, usize)],
        smooth: bool,
    ) -> (TensorGraph, Vec<TensorId>, TensorId) {
        let mut g = TensorGraph::new();
        let shapes = [
            Shape::matrix(2, 3),
            Shape::vector(3),
            Shape::scalar(),
            Shape::matrix(3, 2),
        ];
        let mut taken = values.iter().copied();
        let leaves: Vec<TensorId> = shapes
            .iter()
            .map(|&s| {
                let data: Vec<f64> = taken.by_ref().take(s.len()).collect();
                g.leaf(Tensor::new(s, data)).unwrap()
            })
            .collect();
        for &(op, a, b) in steps {
            let op = if smooth { op % 26 } else { op };
            step(&mut g, op, a, b);
        }
        APPLIED.with(|n| n.set(n.get() + g.len() - leaves.len()));
        let last = TensorId((g.len() - 1) as u32);
        let r = Tensor::randn(g.shape(last), &mut crate::engine::tensor::Rng::new(3));
        let r = g.constant(r).unwrap();
        let weighted = g.apply(TensorOp::Elementwise(Op::Mul), &[last, r]).unwrap();
        let l = g.apply(TensorOp::Sum, &[weighted]).unwrap();
        (g, leaves, l)
    }

    thread_local! {
        /// How many ops the random programs applied, in all (shapes that do
        /// not fit skip a step).
        static APPLIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn strategy()
    -> impl proptest::strategy::Strategy<Value = (Vec<f64>, Vec<(usize, usize, usize)>)> {
        use proptest::prelude::*;
        (
            prop::collection::vec(-1.5f64..1.5, 18),
            prop::collection::vec((0..30usize, 0..4usize, 0..6usize), 1..12),
        )
    }

    /// On random small graphs (every covered op, broadcasting, fan-out,
    /// kinks), the derivative graph's first-order values are the numeric
    /// backward pass's, to 1e-10.
    #[test]
    fn first_order_nodes_equal_the_numeric_backward_on_random_graphs() {
        use proptest::test_runner::{Config, TestRunner};
        let mut runner = TestRunner::new(Config {
            cases: 256,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&strategy(), |(values, steps)| {
            let (mut g, leaves, l) = program(&values, &steps, false);
            let numeric = g.backward(l);
            let built = g.grad(l, &leaves, 100_000).expect("every op covered");
            for (&id, &d) in leaves.iter().zip(&built) {
                let want = numeric
                    .get(id)
                    .map_or_else(|| Tensor::zeros(g.shape(id)), Clone::clone);
                for (x, y) in g.value(d).data().iter().zip(want.data()) {
                    proptest::prop_assert!(
                        (x - y).abs() <= 1e-10 * y.abs().max(1.0),
                        "{x} vs {y} in {steps:?}"
                    );
                }
            }
            Ok(())
        });
        if let Err(error) = result {
            panic!("{error}");
        }
        // The programs did build graphs: 2 ops a case at least (about 4 on
        // average; proptest draws new cases each run).
        assert!(
            APPLIED.with(std::cell::Cell::get) > 2 * 256,
            "{}",
            APPLIED.with(std::cell::Cell::get)
        );
    }

    /// On random smooth graphs, the second derivative built as nodes is the
    /// central difference of the first derivative's nodes (moved leaf
    /// element by element, the graph run again): an independent check of
    /// the rules of nodes, to 1e-5 relative.
    #[test]
    fn second_order_nodes_equal_central_differences_on_random_smooth_graphs() {
        use proptest::test_runner::{Config, TestRunner};
        let mut runner = TestRunner::new(Config {
            cases: 96,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&strategy(), |(values, steps)| {
            let (mut g, leaves, l) = program(&values, &steps, true);
            let firsts = g.grad(l, &leaves, 100_000).expect("every op covered");
            // s = Σ sum(firstᵢ ⊙ Rᵢ): one number of every first derivative.
            let mut s: Option<TensorId> = None;
            for (k, &d) in firsts.iter().enumerate() {
                let r = Tensor::randn(
                    g.shape(d),
                    &mut crate::engine::tensor::Rng::new(11 + k as u64),
                );
                let r = g.constant(r).unwrap();
                let w = g.apply(TensorOp::Elementwise(Op::Mul), &[d, r]).unwrap();
                let t = g.apply(TensorOp::Sum, &[w]).unwrap();
                s = Some(match s {
                    None => t,
                    Some(sum) => g.apply(TensorOp::Elementwise(Op::Add), &[sum, t]).unwrap(),
                });
            }
            let s = s.expect("four leaves");
            let seconds = g.grad(s, &leaves, 100_000).expect("every op covered");
            let wanted: Vec<Tensor> = seconds.iter().map(|&d| g.value(d).clone()).collect();
            let none = crate::engine::Graph::new();
            let h = 1e-5;
            for (&leaf, want) in leaves.iter().zip(&wanted) {
                let base = g.value(leaf).clone();
                for (i, &w) in want.data().iter().enumerate() {
                    let mut at = |delta: f64| {
                        let mut moved = base.clone();
                        moved.data_mut()[i] += delta;
                        g.set_leaf_value(leaf, moved).unwrap();
                        assert!(g.rerun(&none));
                        g.value(s).data()[0]
                    };
                    let central = (at(h) - at(-h)) / (2.0 * h);
                    g.set_leaf_value(leaf, base.clone()).unwrap();
                    assert!(g.rerun(&none));
                    proptest::prop_assert!(
                        (central - w).abs() <= 1e-5 * w.abs().max(1.0),
                        "{central} vs {w} in {steps:?}"
                    );
                }
            }
            Ok(())
        });
        if let Err(error) = result {
            panic!("{error}");
        }
    }
}
