//! Reverse mode over tensor nodes: one walk over the reverse topological
//! order, seeding the output with ones, passing each node's upstream
//! gradient to its operands by the op's vector–Jacobian product, and adding
//! tensors where an operand is used more than once (fan-out). The traced
//! form records each step with its rule, typed.

use super::accumulate::made;
use super::batch;
use super::blocks;
use super::kernels::{self, Factor};
use super::ops::matmul_factors;
use super::trace::{EveryStep, TraceReader};
use super::{Shape, Tensor, TensorGraph, TensorId, TensorOp};
use crate::engine::{NodeId, Op, Shortcut};

/// The vector–Jacobian product one operand of a tensor op receives, as a
/// renderer writes it (with the shapes it needs to say `(2×1)·(1×3) → 2×3`).
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    /// `upstream ⊙ ∂f/∂a`: the upstream times the scalar op's local
    /// derivative at `position`, element by element ([`OpInfo::local`](crate::engine::OpInfo::local)
    /// and [`Op::local_rule`] say what it is). Where the scalar op passes
    /// nothing ([`OpInfo::passes`](crate::engine::OpInfo::passes)) the element gets 0.
    Elementwise {
        /// The scalar op.
        op: Op,
        /// The operand's position (0 = left).
        position: usize,
    },
    /// A matrix product's operand: for the left factor `A` of `A @ B`,
    /// `upstream @ Bᵀ`; for the right factor, `Aᵀ @ upstream`. `factors` are
    /// the two factors of that product as matrices (a vector is a row or a
    /// column as it stands in `A @ B`), `result` their product's shape
    /// before it takes the operand's shape.
    MatMul {
        /// Which factor of `A @ B` this operand is.
        side: Side,
        /// The shapes of the product's two factors, in order: `upstream`
        /// and `Bᵀ`, or `Aᵀ` and `upstream`.
        factors: [Shape; 2],
        /// The shape of their product.
        result: Shape,
    },
    /// `upstreamᵀ` (the transpose's backward).
    Transposed,
    /// The upstream placed where the index selected, zeros elsewhere.
    Scatter,
    /// The upstream broadcast to the operand's shape: `sum`, whose local
    /// derivatives are all 1; `axis` is `Some` for `sum(W, axis)`.
    Broadcast {
        /// The summed axis, or `None` for the sum of everything.
        axis: Option<usize>,
    },
    /// The upstream, which kept the summed axis with size 1, broadcast back
    /// to the operand's shape (`sum(W, axis, keepdims)`).
    BroadcastKept {
        /// The summed axis.
        axis: usize,
    },
    /// An operand of the outer product `outer(u, x)`: `upstream @ x` to
    /// `u`, `u @ upstream` to `x`.
    Outer {
        /// Which operand: [`Side::Left`] is `u`.
        side: Side,
    },
    /// `upstream / count` broadcast to the operand's shape (`mean`).
    Mean {
        /// How many elements were averaged.
        count: usize,
    },
    /// `max(x)` or `min(x)` of every element: the upstream split evenly
    /// among the `ties` tied extrema (PyTorch's `evenly_distribute_backward`),
    /// zeros elsewhere; `index` is the first of them (row-major).
    Extremum {
        /// `true` for `max`, `false` for `min`.
        max: bool,
        /// The row-major index of the first extremum.
        index: usize,
        /// How many elements tie for it (1 when one is largest).
        ties: usize,
    },
    /// `max(W, axis=a)` or `min(W, axis=a)`: each lane's upstream at its
    /// first extremum, zeros elsewhere.
    ExtremumAlong {
        /// `true` for `max`, `false` for `min`.
        max: bool,
        /// The reduced axis.
        axis: usize,
    },
    /// `mean(W, axis)`: the upstream divided by the axis's length `count`,
    /// broadcast back along it.
    MeanAlong {
        /// The averaged axis.
        axis: usize,
        /// Its length.
        count: usize,
    },
    /// `upstream − softmax(z) ⊙ sum(upstream)`, per row (`log_softmax`).
    LogSoftmax,
    /// `upstream ⊙ (softmax(Z) − onehot(y, classes)) / count` (`cross_entropy`).
    CrossEntropy {
        /// The number of rows (examples) averaged over.
        count: usize,
        /// The number of classes.
        classes: usize,
    },
    /// Nothing: the op is piecewise constant in this operand (the class
    /// labels of `cross_entropy`, a comparison's operands).
    NoGradient,
    /// `p ⊙ (upstream − sum(p ⊙ upstream))`, `p` the softmax, per row.
    Softmax,
    /// `upstream ⊙ softmax(z)`, per row.
    LogSumExp,
}

/// Which factor of a matrix product `A @ B` an operand is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// `A`: receives `upstream @ Bᵀ`.
    Left,
    /// `B`: receives `Aᵀ @ upstream`.
    Right,
}

/// One node's backward step ([`TensorGraph::backward_traced`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TensorStep {
    /// The node whose gradient is passed on.
    pub node: TensorId,
    /// The node's gradient when the walk reaches it (complete: every node
    /// using it came earlier), of the node's shape.
    pub upstream: Tensor,
    /// One entry per operand, in order; empty for leaves.
    pub contributions: Vec<TensorContribution>,
}

/// What one operand receives in a backward step.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorContribution {
    /// The operand.
    pub input: TensorId,
    /// Its position among the node's operands (0-based).
    pub position: usize,
    /// The vector–Jacobian product, typed.
    pub rule: Rule,
    /// For an elementwise operand that was broadcast: the shape of the
    /// product before it was summed over the broadcast axes down to the
    /// operand's shape; `None` when nothing was summed.
    pub summed_from: Option<Shape>,
    /// What the operand receives, of its shape: added to its gradient.
    pub contribution: Tensor,
    /// Which use of the operand this is, 1-based, in walk order (fan-out:
    /// "2nd of 2 uses": the contributions add up).
    pub use_number: u32,
    /// How many times the nodes reachable from the output use the operand.
    pub use_count: u32,
}

/// Gradients of one output with respect to the tensor nodes it reaches, and
/// of the scalar nodes bridged into it.
#[derive(Debug, Clone)]
pub struct TensorGradients {
    pub(super) grads: Vec<Option<Tensor>>,
    pub(super) scalars: Vec<(NodeId, f64)>,
}

impl TensorGradients {
    /// The gradient of the output with respect to node `id` (the node's
    /// shape); `None` when the output does not reach it (the gradient is
    /// zeros) or `id` is out of range.
    pub fn get(&self, id: TensorId) -> Option<&Tensor> {
        self.grads.get(id.index()).and_then(Option::as_ref)
    }

    /// The gradients of the scalar graph's nodes bridged in by
    /// [`TensorGraph::scalar`], one pair per scalar node (the bridges of one
    /// node added), in order of first use: the caller seeds the scalar
    /// backward walk with them.
    pub fn scalars(&self) -> &[(NodeId, f64)] {
        &self.scalars
    }
}

impl TensorGraph {
    /// Gradients of `output` with respect to every node it reaches, by
    /// reverse mode: the nodes of [`TensorGraph::topo_order`] in order, the
    /// output seeded with ones of its shape (1 for a shape-`()` output),
    /// each node's upstream passed to its operands by its op's
    /// vector–Jacobian product ([`Rule`]), and contributions to one operand
    /// added (fan-out). Operands that lead to no variable leaf and no scalar
    /// node (constants, and ops of constants only) receive nothing and have
    /// no gradient, as in PyTorch. Looks at the interrupt once a node; when it asks to
    /// stop, the gradients are incomplete ([`TensorGraph::interrupted`]).
    ///
    /// # Panics
    /// If `output` is not a node of this graph.
    pub fn backward(&self, output: TensorId) -> TensorGradients {
        self.walk_keeping(output, &|_| true)
    }

    /// [`TensorGraph::backward`] that keeps the gradients of the variable
    /// leaves and of the nodes in `keep` only ([`TensorGradients::get`] is
    /// `None` for the others): each other gradient is dropped as soon as
    /// the walk has passed it to its operands, as PyTorch keeps the
    /// gradients of leaves only, so that a pass holds few gradients at once.
    /// The gradients kept are those of [`TensorGraph::backward`], to the bit.
    ///
    /// # Panics
    /// If `output` is not a node of this graph.
    pub fn backward_keeping(&self, output: TensorId, keep: &[TensorId]) -> TensorGradients {
        let mut kept = vec![false; self.len()];
        for id in keep {
            kept[id.index()] = true;
        }
        self.walk_keeping(output, &|id| {
            kept[id.index()] || self.op(id) == TensorOp::Variable
        })
    }

    /// The walk of [`TensorGraph::backward`], also returning one
    /// [`TensorStep`] per node in walk order, with every contribution.
    ///
    /// # Panics
    /// If `output` is not a node of this graph.
    pub fn backward_traced(&self, output: TensorId) -> (TensorGradients, Vec<TensorStep>) {
        let mut steps = EveryStep::default();
        let grads = self.walk(output, &mut steps, true);
        (grads, steps.0)
    }

    /// The one traced backward walk, handed to `reader` as it runs; each
    /// node's gradient is kept to the end when `keep`, else dropped once
    /// passed on ([`TensorGraph::backward_read`]).
    pub(super) fn walk(
        &self,
        output: TensorId,
        reader: &mut dyn TraceReader,
        keep: bool,
    ) -> TensorGradients {
        let order = self.topo_order(output);
        let mut grads: Vec<Option<Tensor>> = vec![None; self.len()];
        grads[output.index()] = Some(Tensor::ones(self.shape(output)));
        let mut uses = UseCounts::new(self, &order);
        let needs = self.needs_gradient(&order);
        let mut scalars: Vec<(NodeId, f64)> = Vec::new();
        'walk: for &node in &order {
            if self.hook().asks_to_stop() {
                break;
            }
            // Nothing reaches a node that leads to no variable (a constant).
            let Some(upstream) = grads[node.index()].take() else {
                continue;
            };
            if let TensorOp::Scalar(id) = self.op(node) {
                let g = upstream.data()[0];
                match scalars.iter_mut().find(|(s, _)| *s == id) {
                    Some((_, sum)) => *sum += g,
                    None => scalars.push((id, g)),
                }
            }
            reader.step(node, &upstream);
            for (position, &input) in self.operands(node).iter().enumerate() {
                // The labels of cross_entropy are indices: nothing for them.
                if !needs[input.index()] || self.op(node) == TensorOp::CrossEntropy && position == 1
                {
                    continue;
                }
                let stop = || self.hook().asks_to_stop();
                let Some((rule, summed_from, contribution)) =
                    self.vjp_until(node, position, &upstream, &stop)
                else {
                    break 'walk;
                };
                let use_number = uses.next(input);
                let contribution = TensorContribution {
                    input,
                    position,
                    rule,
                    summed_from,
                    contribution,
                    use_number,
                    use_count: uses.count(input),
                };
                let slot = &mut grads[input.index()];
                reader.contribution(node, &upstream, &contribution, slot.as_ref());
                let TensorContribution { contribution, .. } = contribution;
                let gradient = match slot {
                    Some(sum) => {
                        sum.add_assign(&contribution);
                        sum
                    }
                    slot => slot.insert(contribution),
                };
                reader.added(input, gradient);
            }
            if keep {
                grads[node.index()] = Some(upstream);
            }
        }
        TensorGradients { grads, scalars }
    }

    /// The nodes whose step of the backward walk from `output` passes a
    /// gradient to an operand, in the walk's order: the steps of
    /// [`TensorGraph::backward_traced`] that have contributions, found from
    /// the graph's structure alone (no value is computed or copied).
    ///
    /// # Panics
    /// If `output` is not a node of this graph.
    pub fn step_nodes(&self, output: TensorId) -> Vec<TensorId> {
        let order = self.topo_order(output);
        let needs = self.needs_gradient(&order);
        order
            .into_iter()
            .filter(|&node| self.operands(node).iter().any(|o| needs[o.index()]))
            .collect()
    }

    /// For each node (by index), whether it leads to a variable leaf or a
    /// scalar node: only those receive gradients, as PyTorch computes none
    /// for tensors that do not require them. `order` is a reverse
    /// topological order, so read backwards it has operands first.
    pub(super) fn needs_gradient(&self, order: &[TensorId]) -> Vec<bool> {
        let mut needs = vec![false; self.len()];
        for &node in order.iter().rev() {
            needs[node.index()] = match self.op(node) {
                TensorOp::Variable | TensorOp::Scalar(_) => true,
                // Piecewise constant: no gradient passes (as PyTorch's
                // comparisons, argmax and one_hot give tensors without one).
                TensorOp::Const
                | TensorOp::Compare(_)
                | TensorOp::ArgMax(_)
                | TensorOp::OneHot(_) => false,
                TensorOp::Min
                | TensorOp::MeanAxis(_)
                | TensorOp::MaxAxis(_)
                | TensorOp::MinAxis(_)
                | TensorOp::LogSoftmax
                | TensorOp::CrossEntropy
                | TensorOp::Slice(_, _) => self.operands(node).iter().any(|o| needs[o.index()]),
                TensorOp::Elementwise(_)
                | TensorOp::MatMul
                | TensorOp::Transpose
                | TensorOp::Index(_)
                | TensorOp::Index2(_, _)
                | TensorOp::Sum
                | TensorOp::SumAxis(_)
                | TensorOp::SumKeepDims(_)
                | TensorOp::Outer
                | TensorOp::Mean
                | TensorOp::Max
                | TensorOp::Softmax
                | TensorOp::LogSumExp => self.operands(node).iter().any(|o| needs[o.index()]),
            };
        }
        needs
    }

    /// The vector–Jacobian product operand `position` of `node` receives
    /// from `upstream`: the rule, the shape summed from (broadcasting) and
    /// the contribution, of the operand's shape. One family of the tensor
    /// op table at a time: elementwise ops, the matrix product, ops that
    /// move elements ([`TensorGraph::moved_vjp`]), reductions
    /// ([`TensorGraph::reduction_vjp`]) and the ops along rows
    /// ([`TensorGraph::row_vjp`]).
    /// Asks `stop` between blocks of the long kernels (an elementwise rule's
    /// blocks of 2²⁰ elements, a product's blocks): `None` when it said stop.
    pub(super) fn vjp_until(
        &self,
        node: TensorId,
        position: usize,
        upstream: &Tensor,
        stop: &dyn Fn() -> bool,
    ) -> Option<(Rule, Option<Shape>, Tensor)> {
        let operands = self.operands(node);
        let shape = self.value(operands[position]).shape();
        let up = upstream.data();
        let (rule, data) = match self.op(node) {
            TensorOp::Variable | TensorOp::Const | TensorOp::Scalar(_) => {
                unreachable!("a leaf has no operands")
            }
            TensorOp::Elementwise(op) => {
                let out = self.value(node);
                let inputs: Vec<&Tensor> = operands.iter().map(|&o| self.value(o)).collect();
                let full = elementwise_vjp(op, &inputs, out, position, up, stop)?;
                let summed_from = (shape != out.shape()).then_some(out.shape());
                let rule = Rule::Elementwise { op, position };
                let contribution = kernels::sum_to(full, out.shape(), shape, stop)?;
                return Some((rule, summed_from, contribution));
            }
            TensorOp::MatMul => {
                let (a, b) = (self.value(operands[0]), self.value(operands[1]));
                matmul_vjp(a, b, position, upstream, stop)?
            }
            TensorOp::Transpose
            | TensorOp::Index(_)
            | TensorOp::Index2(_, _)
            | TensorOp::Slice(_, _)
            | TensorOp::Outer => self.moved_vjp(node, position, up, stop)?,
            TensorOp::Sum
            | TensorOp::SumAxis(_)
            | TensorOp::SumKeepDims(_)
            | TensorOp::Mean
            | TensorOp::Max
            | TensorOp::Min
            | TensorOp::MeanAxis(_)
            | TensorOp::MaxAxis(_)
            | TensorOp::MinAxis(_) => self.reduction_vjp(node, up, stop)?,
            TensorOp::Softmax
            | TensorOp::LogSoftmax
            | TensorOp::LogSumExp
            | TensorOp::CrossEntropy => self.row_vjp(node, position, up, stop)?,
            TensorOp::Compare(_) | TensorOp::ArgMax(_) | TensorOp::OneHot(_) => {
                (Rule::NoGradient, vec![0.0; shape.len()])
            }
        };
        Some((rule, None, Tensor::new(shape, data)))
    }

    /// [`TensorGraph::vjp_until`] of an op that moves elements without changing
    /// them (transpose, indexing, slicing) or the outer product: the upstream
    /// moved back (scattered into zeros where the op picked elements) or
    /// multiplied by the other factor. `None` when `stop` said stop between
    /// two rows.
    fn moved_vjp(
        &self,
        node: TensorId,
        position: usize,
        up: &[f64],
        stop: &dyn Fn() -> bool,
    ) -> Option<(Rule, Vec<f64>)> {
        let operands = self.operands(node);
        let a = self.value(operands[0]);
        let shape = self.value(operands[position]).shape();
        Some(match self.op(node) {
            TensorOp::Transpose => (
                Rule::Transposed,
                match *shape.dims() {
                    [m, n] => blocks::transpose(up, n, m, stop)?,
                    _ => up.to_vec(),
                },
            ),
            TensorOp::Index(i) => {
                let mut g = vec![0.0; shape.len()];
                let n = up.len();
                g[i * n..(i + 1) * n].copy_from_slice(up);
                (Rule::Scatter, g)
            }
            TensorOp::Index2(i, j) => {
                let mut g = vec![0.0; shape.len()];
                g[i * shape.as_matrix().1 + j] = up[0];
                (Rule::Scatter, g)
            }
            TensorOp::Slice(first, second) => {
                let taken = batch::taken(a.shape(), first, second).expect("built");
                (
                    Rule::Scatter,
                    batch::slice_vjp(shape.len(), &taken, up, stop)?,
                )
            }
            TensorOp::Outer => {
                let (u, x) = (a.data(), self.value(operands[1]).data());
                let n = x.len();
                let rows = &up[..(u.len() * n).min(up.len())];
                if position == 0 {
                    // (upstream @ x)[i] = Σⱼ upstream[i, j]·x[j].
                    let mut g = Vec::with_capacity(u.len());
                    let whole = blocks::each_row(rows, n, stop, |_, row| {
                        g.push(row.iter().zip(x).map(|(g, x)| g * x).sum());
                    });
                    g.resize(u.len(), std::iter::empty::<f64>().sum());
                    (Rule::Outer { side: Side::Left }, whole.then_some(g)?)
                } else {
                    // (u @ upstream)[j] = Σᵢ u[i]·upstream[i, j].
                    let mut g = vec![0.0; n];
                    let whole = blocks::each_row(rows, n, stop, |i, row| {
                        for (g, &v) in g.iter_mut().zip(row) {
                            *g += u[i] * v;
                        }
                    });
                    (Rule::Outer { side: Side::Right }, whole.then_some(g)?)
                }
            }
            op => unreachable!("{op:?} moves no elements"),
        })
    }

    /// [`TensorGraph::vjp_until`] of a reduction (of one operand): the upstream
    /// broadcast back over what was summed or averaged, or given to the
    /// extremum (ties split evenly). `None` when `stop` said stop between
    /// two rows.
    fn reduction_vjp(
        &self,
        node: TensorId,
        up: &[f64],
        stop: &dyn Fn() -> bool,
    ) -> Option<(Rule, Vec<f64>)> {
        let a = self.value(self.operands(node)[0]);
        let shape = a.shape();
        Some(match self.op(node) {
            TensorOp::Sum => (Rule::Broadcast { axis: None }, vec![up[0]; shape.len()]),
            TensorOp::SumAxis(axis) => (
                Rule::Broadcast { axis: Some(axis) },
                sum_axis_vjp(shape, axis, up, stop)?,
            ),
            // The kept axis of size 1 holds the same numbers as the dropped one.
            TensorOp::SumKeepDims(axis) => (
                Rule::BroadcastKept { axis },
                sum_axis_vjp(shape, axis, up, stop)?,
            ),
            TensorOp::Mean => {
                let count = shape.len();
                (Rule::Mean { count }, vec![up[0] / count as f64; count])
            }
            op @ (TensorOp::Max | TensorOp::Min) => {
                let max = op == TensorOp::Max;
                let (index, ties, g) = batch::extremum_vjp_until(a.data(), max, up[0], stop)?;
                (Rule::Extremum { max, index, ties }, g)
            }
            TensorOp::MeanAxis(axis) => {
                let count = shape.dims()[axis];
                (
                    Rule::MeanAlong { axis, count },
                    batch::reduce_axis_vjp(a, axis, None, up, stop)?,
                )
            }
            op @ (TensorOp::MaxAxis(axis) | TensorOp::MinAxis(axis)) => {
                let max = matches!(op, TensorOp::MaxAxis(_));
                (
                    Rule::ExtremumAlong { max, axis },
                    batch::reduce_axis_vjp(a, axis, Some(max), up, stop)?,
                )
            }
            op => unreachable!("{op:?} is no reduction"),
        })
    }

    /// [`TensorGraph::vjp_until`] of an op along each row: softmax, log-softmax,
    /// logsumexp, and the cross-entropy (to its scores; its labels get none).
    /// `None` when `stop` said stop between two rows.
    fn row_vjp(
        &self,
        node: TensorId,
        position: usize,
        up: &[f64],
        stop: &dyn Fn() -> bool,
    ) -> Option<(Rule, Vec<f64>)> {
        let operands = self.operands(node);
        let a = self.value(operands[0]);
        let out = self.value(node);
        Some(match self.op(node) {
            TensorOp::Softmax => {
                let mut g = up[..out.len()].to_vec();
                let n = out.shape().as_matrix().1;
                if !softmax_vjp_in_place(out, &mut g, n, stop) {
                    return None;
                }
                (Rule::Softmax, g)
            }
            TensorOp::LogSoftmax => (Rule::LogSoftmax, batch::log_softmax_vjp(out, up, stop)?),
            TensorOp::LogSumExp => {
                let mut g = Vec::with_capacity(a.len());
                let n = a.shape().as_matrix().1;
                let whole = blocks::each_row(a.data(), n, stop, |i, row| {
                    let start = g.len();
                    kernels::softmax_into(row, &mut g);
                    for p in &mut g[start..] {
                        *p *= up[i];
                    }
                });
                (Rule::LogSumExp, whole.then_some(g)?)
            }
            TensorOp::CrossEntropy if position == 0 => {
                let y = self.value(operands[1]);
                let rule = Rule::CrossEntropy {
                    count: y.len(),
                    classes: batch::classes(a.shape()),
                };
                (rule, batch::cross_entropy_vjp(a, y, up[0], stop)?)
            }
            TensorOp::CrossEntropy => (Rule::NoGradient, vec![0.0; self.value(operands[1]).len()]),
            op => unreachable!("{op:?} works on no rows"),
        })
    }
}

/// `upstream ⊙ ∂f/∂operand` at each element of the output (before any sum
/// over broadcast axes), the local derivative from the scalar op table, with
/// `+ − ·` written out ([`Shortcut`]); 0 where the op passes nothing. Runs
/// in blocks of 2²⁰ elements, asking `stop` between two: `None` when it
/// said stop.
fn elementwise_vjp(
    op: Op,
    inputs: &[&Tensor],
    out: &Tensor,
    position: usize,
    up: &[f64],
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let info = op.info();
    let chain = super::accumulate::chain_rule(op, position);
    let o = out.data();
    let n = o.len();
    let up = &up[..n];
    match *inputs {
        [a] => {
            let x = &a.data()[..n];
            match super::rowtanh::row_kernels(op) {
                Some(kernels) => {
                    let mut g = up.to_vec();
                    let blocks = x
                        .chunks(kernels::BLOCK_ELEMENTS)
                        .zip(g.chunks_mut(kernels::BLOCK_ELEMENTS));
                    for (k, (x, g)) in blocks.enumerate() {
                        if k > 0 && stop() {
                            return None;
                        }
                        (kernels.times_local)(x, g);
                    }
                    Some(g)
                }
                None => made(n, stop, |i| chain(&[x[i]], o[i], up[i])),
            }
        }
        [a, b] => {
            let shape = out.shape();
            match (info.shortcut, position) {
                (Some(Shortcut::Add), _) | (Some(Shortcut::Sub), 0) => Some(up.to_vec()),
                (Some(Shortcut::Sub), _) => made(n, stop, |i| -up[i]),
                (Some(Shortcut::Mul), _) => {
                    let other = if position == 0 { b } else { a };
                    let other = (other.data(), other.shape());
                    kernels::zip_data_until((up, shape), other, shape, |u, x| u * x, stop)
                }
                (None, _) => {
                    let x = kernels::zip_until(a, b, shape, |x, _| x, stop)?;
                    let y = kernels::zip_until(a, b, shape, |_, y| y, stop)?;
                    made(n, stop, |i| chain(&[x[i], y[i]], o[i], up[i]))
                }
            }
        }
        _ => unreachable!("elementwise ops take one or two operands"),
    }
}

/// The matrix product's vector–Jacobian products: `upstream @ Bᵀ` to `A`,
/// `Aᵀ @ upstream` to `B`, with the factors as matrices (a vector a row on
/// the left, a column on the right). `None` when `stop` said stop between
/// two blocks of the product.
pub(super) fn matmul_vjp(
    a: &Tensor,
    b: &Tensor,
    position: usize,
    upstream: &Tensor,
    stop: &dyn Fn() -> bool,
) -> Option<(Rule, Vec<f64>)> {
    let (fa, fb) = matmul_factors(a, b);
    // The upstream as the m×n matrix of the product.
    let u = Factor::plain(upstream.data(), fa.rows, fb.cols);
    let shape_of = |f: Factor<'_>| Shape::matrix(f.rows, f.cols);
    let (side, x, y) = if position == 0 {
        (Side::Left, u, Factor::transposed(fb.data, fb.rows, fb.cols))
    } else {
        (
            Side::Right,
            Factor::transposed(fa.data, fa.rows, fa.cols),
            u,
        )
    };
    let rule = Rule::MatMul {
        side,
        factors: [shape_of(x), shape_of(y)],
        result: Shape::matrix(x.rows, y.cols),
    };
    Some((rule, kernels::matmul(x, y, stop)?))
}

/// `sum(W, axis)`'s backward: the upstream broadcast back along `axis`,
/// row by row; `None` when `stop` said stop between two rows.
fn sum_axis_vjp(
    shape: Shape,
    axis: usize,
    up: &[f64],
    stop: &dyn Fn() -> bool,
) -> Option<Vec<f64>> {
    let (_, n) = shape.as_matrix();
    let mut g = vec![0.0; shape.len()];
    let whole = match (shape.dims(), axis) {
        (&[_], _) => blocks::each_row_mut(&mut g, n, stop, |_, row| row.fill(up[0])),
        (&[_, _], 0) => blocks::each_row_mut(&mut g, n, stop, |_, row| row.copy_from_slice(up)),
        (&[_, _], _) => blocks::each_row_mut(&mut g, n, stop, |i, row| row.fill(up[i])),
        _ => unreachable!("sum over an axis of a vector or a matrix"),
    };
    whole.then_some(g)
}

/// softmax's backward per row of `n` numbers, in place: `u ← p ⊙ (u −
/// p·u)`, `p` the softmax (the upstream `u` given in `g`); false when `stop`
/// said stop between two rows.
pub(super) fn softmax_vjp_in_place(
    p: &Tensor,
    g: &mut [f64],
    n: usize,
    stop: &dyn Fn() -> bool,
) -> bool {
    let p = p.data();
    blocks::each_row_mut(g, n, stop, |i, u| {
        let row = &p[i * u.len()..(i + 1) * u.len()];
        let dot: f64 = row.iter().zip(&*u).map(|(p, u)| p * u).sum();
        for (p, u) in row.iter().zip(u) {
            *u = p * (*u - dot);
        }
    })
}

/// How many times each node is used by the nodes of an order, and how many
/// uses the walk has passed so far.
struct UseCounts {
    total: Vec<u32>,
    seen: Vec<u32>,
}

impl UseCounts {
    /// The counts for a walk of `order`.
    fn new(graph: &TensorGraph, order: &[TensorId]) -> UseCounts {
        let mut total = vec![0; graph.len()];
        for &node in order {
            for input in graph.operands(node) {
                total[input.index()] += 1;
            }
        }
        UseCounts {
            seen: vec![0; graph.len()],
            total,
        }
    }

    /// Counts one more use of `id`; its number, 1-based.
    fn next(&mut self, id: TensorId) -> u32 {
        self.seen[id.index()] += 1;
        self.seen[id.index()]
    }

    /// How many uses `id` has in the order.
    fn count(&self, id: TensorId) -> u32 {
        self.total[id.index()]
    }
}
