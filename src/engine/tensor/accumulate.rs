//! The gradients a backward walk holds while it runs, and how a
//! contribution is added to them: in place where a gradient is already a
//! whole tensor, into the upstream's own buffer where the walk owns it and
//! needs it no more, and as one number for the upstream of `sum` and `mean`
//! (the same number at every element), which is written out only when a
//! kernel needs every element or the caller keeps the gradient.
//!
//! Every element is the same sum of the same products as when each
//! contribution is made whole and then added (`a + b` of f64 is
//! commutative, and the order of the contributions to one gradient is the
//! walk's), so the gradients are the same to the bit.

use super::backward::{matmul_vjp, softmax_vjp_in_place};
use super::blocks::Blocks;
use super::kernels::{self, BLOCK_ELEMENTS};
use super::{Shape, Tensor, TensorGradients, TensorGraph, TensorId, TensorOp};
use crate::engine::{NodeId, Op, Passing, Shortcut};

/// A node's gradient while the walk runs.
#[derive(Debug)]
pub(super) enum Grad {
    /// Every element written out.
    Full(Tensor),
    /// `value` at every element of `shape`, not written out.
    Uniform {
        /// The one number.
        value: f64,
        /// The gradient's shape.
        shape: Shape,
    },
}

impl Grad {
    /// The gradient as a tensor, written out if uniform (the walk writes
    /// one out in blocks that look at Ctrl-C: `written_until`).
    #[cfg(test)]
    pub(super) fn into_tensor(self) -> Tensor {
        match self {
            Grad::Full(t) => t,
            Grad::Uniform { value, shape } => Tensor::full(shape, value),
        }
    }

    /// Element 0 (the whole of a shape-`()` gradient).
    pub(super) fn first(&self) -> f64 {
        match self {
            Grad::Full(t) => t.data()[0],
            Grad::Uniform { value, .. } => *value,
        }
    }
}

/// The upstream as one kernel reads it.
pub(super) enum Up<'a> {
    /// One number at every element.
    Uniform(f64),
    /// The walk holds the upstream and needs it after this kernel.
    Borrowed(&'a [f64]),
    /// The walk needs the upstream no more: its buffer may take the result.
    Owned(Vec<f64>),
}

/// Adds `contribution` to the gradient in `slot` (an empty slot takes it):
/// element by element `gradient + contribution`, in place in whichever of
/// the two is written out.
pub(super) fn accumulate(slot: &mut Option<Grad>, contribution: Grad) {
    *slot = Some(match (slot.take(), contribution) {
        (None, c) => c,
        (Some(Grad::Full(mut sum)), Grad::Full(c)) => {
            sum.add_assign(&c);
            Grad::Full(sum)
        }
        (Some(Grad::Full(mut sum)), Grad::Uniform { value, .. }) => {
            for a in sum.data_mut() {
                *a += value;
            }
            Grad::Full(sum)
        }
        (Some(Grad::Uniform { value, .. }), Grad::Full(mut c)) => {
            for a in c.data_mut() {
                *a += value; // value + a: f64 addition commutes
            }
            Grad::Full(c)
        }
        (Some(Grad::Uniform { value, shape }), Grad::Uniform { value: v, .. }) => Grad::Uniform {
            value: value + v,
            shape,
        },
    });
}

/// Adds the contribution `term(uᵢ, i)` at each element `i` of `shape` (the
/// upstream `uᵢ` read from `up`) to the gradient in `slot`, without making
/// the contribution a tensor of its own: written into the gradient when it
/// is whole, else into the upstream's buffer when owned, else into a new one.
/// Runs in blocks of [`BLOCK_ELEMENTS`], asking `stop` before each but the
/// first: false when it said stop (the slot is then emptied: the walk is
/// cut short).
pub(super) fn accumulate_map(
    slot: &mut Option<Grad>,
    shape: Shape,
    up: Up<'_>,
    term: impl Fn(f64, usize) -> f64,
    stop: &dyn Fn() -> bool,
) -> bool {
    let n = shape.len();
    let data = match (slot.take(), up) {
        (None, Up::Uniform(c)) => made(n, stop, |i| term(c, i)),
        (None, Up::Borrowed(u)) => {
            let u = &u[..n];
            made(n, stop, |i| term(u[i], i))
        }
        (None, Up::Owned(mut b)) => {
            in_blocks(&mut b[..n], stop, |i, x| *x = term(*x, i)).then_some(b)
        }
        (Some(Grad::Full(mut sum)), up) => {
            let s = &mut sum.data_mut()[..n];
            let whole = match &up {
                Up::Uniform(c) => in_blocks(s, stop, |i, a| *a += term(*c, i)),
                Up::Borrowed(u) => add_terms(s, &u[..n], &term, stop),
                Up::Owned(u) => add_terms(s, &u[..n], &term, stop),
            };
            whole.then(|| sum.into_data())
        }
        (Some(Grad::Uniform { value, .. }), Up::Uniform(c)) => {
            made(n, stop, |i| value + term(c, i))
        }
        (Some(Grad::Uniform { value, .. }), Up::Borrowed(u)) => {
            let u = &u[..n];
            made(n, stop, |i| value + term(u[i], i))
        }
        (Some(Grad::Uniform { value, .. }), Up::Owned(mut b)) => {
            in_blocks(&mut b[..n], stop, |i, x| *x = value + term(*x, i)).then_some(b)
        }
    };
    let Some(data) = data else {
        return false;
    };
    *slot = Some(Grad::Full(Tensor::new(shape, data)));
    true
}

/// `f(i)` for `i` in `0..n`, made in blocks of [`BLOCK_ELEMENTS`], asking
/// `stop` before each but the first: `None` when it said stop.
pub(super) fn made(
    n: usize,
    stop: &dyn Fn() -> bool,
    f: impl Fn(usize) -> f64,
) -> Option<Vec<f64>> {
    let mut data = Vec::with_capacity(n);
    while data.len() < n {
        if !data.is_empty() && stop() {
            return None;
        }
        let start = data.len();
        data.extend((start..n.min(start + BLOCK_ELEMENTS)).map(&f));
    }
    Some(data)
}

/// `f(i, &mut x[i])` for every element, in blocks of [`BLOCK_ELEMENTS`],
/// asking `stop` before each but the first: false when it said stop.
fn in_blocks(x: &mut [f64], stop: &dyn Fn() -> bool, f: impl Fn(usize, &mut f64)) -> bool {
    for (k, block) in x.chunks_mut(BLOCK_ELEMENTS).enumerate() {
        if k > 0 && stop() {
            return false;
        }
        let start = k * BLOCK_ELEMENTS;
        for (j, a) in block.iter_mut().enumerate() {
            f(start + j, a);
        }
    }
    true
}

/// Adds the contribution `upstream ⊙ f′(x)` to the gradient in `slot`,
/// computed by the op's row kernels: in the upstream's own buffer when
/// owned, else in a copy of it, or straight from the one number of a
/// uniform upstream. The same bits as [`accumulate_map`] with the term
/// `u·f′(xᵢ)`.
fn accumulate_times(
    slot: &mut Option<Grad>,
    shape: Shape,
    up: Up<'_>,
    x: &[f64],
    kernels: super::rowtanh::RowKernels,
    stop: &dyn Fn() -> bool,
) -> bool {
    let n = shape.len();
    let x = &x[..n];
    let mut data = match up {
        Up::Owned(b) => b,
        Up::Borrowed(u) => u[..n].to_vec(),
        Up::Uniform(c) => {
            // Written once, not zeroed first.
            // SAFETY: `scaled_local` writes every element of its `out`.
            let written = unsafe {
                super::kernels::write_all(n, stop, |start, out| {
                    (kernels.scaled_local)(&x[start..start + out.len()], c, out);
                })
            };
            let Some(data) = written else {
                return false;
            };
            accumulate(slot, Grad::Full(Tensor::new(shape, data)));
            return true;
        }
    };
    let blocks = x
        .chunks(BLOCK_ELEMENTS)
        .zip(data[..n].chunks_mut(BLOCK_ELEMENTS));
    for (k, (x, b)) in blocks.enumerate() {
        if k > 0 && stop() {
            return false;
        }
        (kernels.times_local)(x, b);
    }
    accumulate(slot, Grad::Full(Tensor::new(shape, data)));
    true
}

/// Adds the contribution `term(i, j)` at row `i`, column `j` of `shape`
/// (as a matrix, [`Shape::as_matrix`]) to the gradient in `slot`, row by
/// row, without making it a tensor of its own: `sum(W, axis)`'s upstream
/// broadcast back. Looks at `stop` between two rows ([`Blocks`]): false
/// when it said stop (the slot is then emptied: the walk is cut short).
pub(super) fn accumulate_rows(
    slot: &mut Option<Grad>,
    shape: Shape,
    term: impl Fn(usize, usize) -> f64,
    stop: &dyn Fn() -> bool,
) -> bool {
    let (m, n) = shape.as_matrix();
    let mut blocks = Blocks::new(stop);
    let data = match slot.take() {
        Some(Grad::Full(mut sum)) => {
            for (i, row) in sum.data_mut().chunks_mut(n.max(1)).enumerate() {
                if blocks.stop_before(n) {
                    return false;
                }
                for (j, a) in row.iter_mut().enumerate() {
                    *a += term(i, j);
                }
            }
            sum.into_data()
        }
        slot => {
            let mut data = Vec::with_capacity(shape.len());
            for i in 0..m {
                if blocks.stop_before(n) {
                    return false;
                }
                match &slot {
                    Some(Grad::Uniform { value, .. }) => {
                        data.extend((0..n).map(|j| value + term(i, j)));
                    }
                    _ => data.extend((0..n).map(|j| term(i, j))),
                }
            }
            data
        }
    };
    *slot = Some(Grad::Full(Tensor::new(shape, data)));
    true
}

/// `s[i] += term(u[i], i)` for every `i`, in blocks of [`BLOCK_ELEMENTS`],
/// asking `stop` before each but the first: false when it said stop.
fn add_terms(
    s: &mut [f64],
    u: &[f64],
    term: &impl Fn(f64, usize) -> f64,
    stop: &dyn Fn() -> bool,
) -> bool {
    let blocks = s.chunks_mut(BLOCK_ELEMENTS).zip(u.chunks(BLOCK_ELEMENTS));
    for (k, (s, u)) in blocks.enumerate() {
        if k > 0 && stop() {
            return false;
        }
        let start = k * BLOCK_ELEMENTS;
        for (i, (a, &u)) in s.iter_mut().zip(u).enumerate() {
            *a += term(u, start + i);
        }
    }
    true
}

impl TensorGraph {
    /// The backward walk of [`TensorGraph::backward`] without its steps:
    /// the same gradients, to the bit, for the nodes `keep` says; every
    /// other node's gradient is dropped once the walk has passed it on (its
    /// last consumer has run), and its buffer taken by an operand's where it can.
    pub(super) fn walk_keeping(
        &self,
        output: TensorId,
        keep: &dyn Fn(TensorId) -> bool,
    ) -> TensorGradients {
        let order = self.topo_order(output);
        let needs = self.needs_gradient(&order);
        let mut grads: Vec<Option<Grad>> =
            std::iter::repeat_with(|| None).take(self.len()).collect();
        grads[output.index()] = Some(Grad::Uniform {
            value: 1.0,
            shape: self.shape(output),
        });
        let mut kept: Vec<Option<Tensor>> = vec![None; self.len()];
        let mut scalars: Vec<(NodeId, f64)> = Vec::new();
        let stop = || self.hook().asks_to_stop();
        'walk: for &node in &order {
            if stop() {
                break;
            }
            // Nothing reaches a node that leads to no variable (a constant).
            let Some(upstream) = grads[node.index()].take() else {
                continue;
            };
            if let TensorOp::Scalar(id) = self.op(node) {
                let g = upstream.first();
                match scalars.iter_mut().find(|(s, _)| *s == id) {
                    Some((_, sum)) => *sum += g,
                    None => scalars.push((id, g)),
                }
            }
            let keep_node = keep(node);
            let operands = self.operands(node);
            let last = (0..operands.len())
                .rev()
                .find(|&p| needs[operands[p].index()]);
            let mut upstream = Some(upstream);
            for (position, &input) in operands.iter().enumerate() {
                if !needs[input.index()] {
                    continue;
                }
                let owned = !keep_node && Some(position) == last;
                let slot = &mut grads[input.index()];
                if !self.pass(node, position, &mut upstream, owned, slot, &stop) {
                    break 'walk;
                }
            }
            if keep_node && let Some(grad) = upstream {
                let Some(tensor) = written_until(grad, &stop) else {
                    break 'walk;
                };
                kept[node.index()] = Some(tensor);
            }
        }
        // After an interruption: what the kept nodes had received so far.
        // A uniform gradient is written out in blocks that look at the
        // interrupt (the gradient of `sum(X)`); stopped, it is left out.
        for (i, grad) in grads.into_iter().enumerate() {
            if let Some(grad) = grad
                && keep(TensorId(i as u32))
            {
                kept[i] = written_until(grad, &stop);
            }
        }
        TensorGradients {
            grads: kept,
            scalars,
        }
    }

    /// Adds what operand `position` of `node` receives from `upstream` to
    /// its gradient in `slot`: the op's vector–Jacobian product, as
    /// [`TensorGraph::vjp_until`] computes it, without writing out what need not be.
    /// `owned`: the walk needs the upstream no more (it may be taken).
    /// False when `stop` said stop inside a kernel (between two blocks).
    fn pass(
        &self,
        node: TensorId,
        position: usize,
        upstream: &mut Option<Grad>,
        owned: bool,
        slot: &mut Option<Grad>,
        stop: &dyn Fn() -> bool,
    ) -> bool {
        let input = self.operands(node)[position];
        let shape = self.shape(input);
        let grad = upstream
            .as_ref()
            .expect("the upstream is held until its last use");
        match self.op(node) {
            TensorOp::Sum => {
                let value = grad.first();
                accumulate(slot, Grad::Uniform { value, shape });
            }
            TensorOp::Mean => {
                let value = grad.first() / shape.len() as f64;
                accumulate(slot, Grad::Uniform { value, shape });
            }
            TensorOp::Elementwise(op) if passes_upstream(op, position) => {
                let out = self.shape(node);
                if shape == out {
                    if !pass_on(slot, shape, take_up(upstream, owned), stop) {
                        return false;
                    }
                } else {
                    // A broadcast operand of `+`: the upstream summed over
                    // the broadcast axes, read where it is.
                    let Some(up) = written_out(upstream, stop) else {
                        return false;
                    };
                    let up = up.data();
                    let Some(sums) = kernels::summed_to(up, out, shape, stop) else {
                        return false;
                    };
                    accumulate(slot, Grad::Full(Tensor::new(shape, sums)));
                }
            }
            TensorOp::Elementwise(op)
                if self
                    .operands(node)
                    .iter()
                    .all(|&o| self.shape(o) == self.shape(node)) =>
            {
                let up = take_up(upstream, owned);
                if !self.elementwise_pass(op, node, position, up, slot, stop) {
                    return false;
                }
            }
            TensorOp::SumAxis(axis) => {
                // The upstream broadcast back along the summed axis.
                let Some(up) = written_out(upstream, stop) else {
                    return false;
                };
                let up = up.data();
                let whole = match (shape.dims(), axis) {
                    ([_], _) => accumulate_rows(slot, shape, |_, _| up[0], stop),
                    ([_, _], 0) => accumulate_rows(slot, shape, |_, j| up[j], stop),
                    _ => accumulate_rows(slot, shape, |i, _| up[i], stop),
                };
                if !whole {
                    return false;
                }
            }
            TensorOp::Softmax if owned && matches!(upstream, Some(Grad::Full(_))) => {
                // p ⊙ (u − p·u) per row, into the upstream's own buffer.
                let Some(Grad::Full(t)) = upstream.take() else {
                    unreachable!("a whole upstream")
                };
                let mut data = t.into_data();
                let n = shape.as_matrix().1;
                if !softmax_vjp_in_place(self.value(node), &mut data, n, stop) {
                    return false;
                }
                accumulate(slot, Grad::Full(Tensor::new(shape, data)));
            }
            TensorOp::MatMul => {
                let Some(up) = written_out(upstream, stop) else {
                    return false;
                };
                let operands = self.operands(node);
                let (a, b) = (self.value(operands[0]), self.value(operands[1]));
                let Some((_, data)) = matmul_vjp(a, b, position, up, stop) else {
                    return false;
                };
                accumulate(slot, Grad::Full(Tensor::new(shape, data)));
            }
            _ => {
                let Some(up) = written_out(upstream, stop) else {
                    return false;
                };
                let Some((_, _, contribution)) = self.vjp_until(node, position, up, stop) else {
                    return false;
                };
                accumulate(slot, Grad::Full(contribution));
            }
        }
        true
    }

    /// [`TensorGraph::pass`] for an elementwise node whose operands have its
    /// shape: `upstream ⊙ ∂f/∂operand` added element by element, `+ − ·`
    /// written out as [`TensorGraph::vjp_until`] does; false when `stop` said
    /// stop between two blocks of elements ([`accumulate_map`]).
    fn elementwise_pass(
        &self,
        op: Op,
        node: TensorId,
        position: usize,
        up: Up<'_>,
        slot: &mut Option<Grad>,
        stop: &dyn Fn() -> bool,
    ) -> bool {
        let info = op.info();
        let operands = self.operands(node);
        let out = self.value(node);
        let shape = out.shape();
        let n = shape.len();
        let o = &out.data()[..n];
        let chain = chain_rule(op, position);
        match (operands, info.shortcut) {
            ([_, _], Some(Shortcut::Add)) => pass_on(slot, shape, up, stop),
            ([_, _], Some(Shortcut::Sub)) if position == 0 => pass_on(slot, shape, up, stop),
            ([_, _], Some(Shortcut::Sub)) => accumulate_map(slot, shape, up, |u, _| -u, stop),
            ([a, b], Some(Shortcut::Mul)) => {
                let other = if position == 0 { *b } else { *a };
                let x = &self.value(other).data()[..n];
                accumulate_map(slot, shape, up, |u, i| u * x[i], stop)
            }
            ([a, b], None) => {
                let x = &self.value(*a).data()[..n];
                let y = &self.value(*b).data()[..n];
                accumulate_map(slot, shape, up, |u, i| chain(&[x[i], y[i]], o[i], u), stop)
            }
            ([a], _) => {
                let x = &self.value(*a).data()[..n];
                match super::rowtanh::row_kernels(op) {
                    Some(kernels) => accumulate_times(slot, shape, up, x, kernels, stop),
                    None => accumulate_map(slot, shape, up, |u, i| chain(&[x[i]], o[i], u), stop),
                }
            }
            _ => unreachable!("elementwise ops take one or two operands"),
        }
    }
}

/// `upstream · ∂f/∂operand` of the scalar op `op` at one element, for
/// operand `position`, as `chain(x, o, u)` (the operands, the output, the
/// upstream): the local derivative from the scalar op table, 0 where the op
/// passes nothing ([`OpInfo::passes`](crate::engine::OpInfo::passes); a
/// smooth op passes everywhere, and its test is skipped).
pub(super) fn chain_rule(op: Op, position: usize) -> impl Fn(&[f64], f64, f64) -> f64 {
    let info = op.info();
    let local = info.local;
    let always = info
        .derivative(position)
        .is_some_and(|d| d.passing == Passing::Always);
    move |x: &[f64], o: f64, u: f64| {
        if always || info.passes(x, o, position) {
            u * local(x, o, position)
        } else {
            0.0
        }
    }
}

/// Whether operand `position` of the elementwise op `op` receives the
/// upstream as it is (summed over its broadcast axes): either operand of
/// `+`, the left of `−`.
fn passes_upstream(op: Op, position: usize) -> bool {
    match op.info().shortcut {
        Some(Shortcut::Add) => true,
        Some(Shortcut::Sub) => position == 0,
        _ => false,
    }
}

/// The upstream as a kernel of the node's shape reads it: one number when
/// uniform, its buffer when `owned` (the walk needs it no more), else
/// borrowed where it is.
fn take_up(upstream: &mut Option<Grad>, owned: bool) -> Up<'_> {
    match (upstream.take(), owned) {
        (Some(Grad::Uniform { value, shape }), _) => {
            *upstream = Some(Grad::Uniform { value, shape });
            Up::Uniform(value)
        }
        (Some(Grad::Full(t)), true) => Up::Owned(t.into_data()),
        (full, false) => {
            *upstream = full;
            match upstream {
                Some(Grad::Full(t)) => Up::Borrowed(t.data()),
                _ => unreachable!("a whole upstream"),
            }
        }
        (None, true) => unreachable!("the upstream is held until its last use"),
    }
}

/// The upstream as it is (`upstream · 1`), added to `slot`: a uniform one
/// stays uniform, an owned buffer is moved, a borrowed one is copied (false
/// when `stop` said stop meanwhile).
fn pass_on(slot: &mut Option<Grad>, shape: Shape, up: Up<'_>, stop: &dyn Fn() -> bool) -> bool {
    match up {
        Up::Uniform(value) => accumulate(slot, Grad::Uniform { value, shape }),
        Up::Owned(data) => accumulate(slot, Grad::Full(Tensor::new(shape, data))),
        Up::Borrowed(_) => return accumulate_map(slot, shape, up, |u, _| u, stop),
    }
    true
}

/// `grad` as a tensor: a uniform one written out in blocks of
/// [`BLOCK_ELEMENTS`], looking at `stop` between two (`None` when it said
/// stop).
fn written_until(grad: Grad, stop: &dyn Fn() -> bool) -> Option<Tensor> {
    match grad {
        Grad::Full(t) => Some(t),
        Grad::Uniform { value, shape } => {
            made(shape.len(), stop, |_| value).map(|data| Tensor::new(shape, data))
        }
    }
}

/// The upstream written out (in place), for a kernel that reads every
/// element: a uniform one filled in blocks of [`BLOCK_ELEMENTS`], looking
/// at `stop` between two (`None` when it said stop; the upstream is then
/// left as it was).
fn written_out<'a>(upstream: &'a mut Option<Grad>, stop: &dyn Fn() -> bool) -> Option<&'a Tensor> {
    let tensor = match upstream
        .take()
        .expect("the upstream is held until its last use")
    {
        Grad::Full(t) => t,
        Grad::Uniform { value, shape } => match made(shape.len(), stop, |_| value) {
            Some(data) => Tensor::new(shape, data),
            None => {
                *upstream = Some(Grad::Uniform { value, shape });
                return None;
            }
        },
    };
    *upstream = Some(Grad::Full(tensor));
    match upstream {
        Some(Grad::Full(t)) => Some(t),
        _ => unreachable!("just written out"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Graph;

    /// A `rows×cols` tensor (a vector when `rows` is 0), element e =
    /// 0.5·sin(1 + seed + 0.37·e), as the benchmarks make them.
    fn input(seed: f64, rows: usize, cols: usize) -> Tensor {
        let shape = if rows == 0 {
            Shape::vector(cols)
        } else {
            Shape::matrix(rows, cols)
        };
        let data = (0..shape.len())
            .map(|e| 0.5 * (1.0 + seed + 0.37 * e as f64).sin())
            .collect();
        Tensor::new(shape, data)
    }

    /// The walk that keeps every gradient gives, at every node, the bits of
    /// the traced walk (every contribution written out, then added: the
    /// walk as it was), and the walk that keeps the leaves only gives the
    /// leaves' same bits: sums and means (uniform upstreams), fan-out
    /// (one operand twice, a leaf in many nodes), `+ − · /` and unary ops
    /// with their shapes, broadcasting, products, softmax, logsumexp,
    /// reductions and a scalar node.
    #[test]
    fn the_walk_gives_the_bits_of_the_walk_with_every_contribution_written_out() {
        let ew = TensorOp::Elementwise;
        let mut scalars = Graph::new();
        let s = scalars.leaf(0.75);
        let mut g = TensorGraph::new();
        let x = g.leaf(input(0.0, 5, 7)).unwrap();
        let y = g.leaf(input(1.0, 5, 7)).unwrap();
        let b = g.leaf(input(2.0, 0, 7)).unwrap();
        let w = g.leaf(input(3.0, 7, 4)).unwrap();
        let r = g.constant(input(4.0, 5, 4)).unwrap();
        let ts = g.scalar(s, scalars.value(s));
        let mut apply = |op, operands: &[TensorId]| g.apply(op, operands).unwrap();
        let xy = apply(ew(Op::Mul), &[x, y]);
        let u = apply(ew(Op::Add), &[xy, x]);
        let d = apply(ew(Op::Sub), &[u, y]);
        let q = apply(ew(Op::Div), &[d, y]);
        let t = apply(ew(Op::Tanh), &[q]);
        let sq = apply(ew(Op::Mul), &[t, t]);
        let ub = apply(ew(Op::Add), &[sq, b]);
        let scaled = apply(ew(Op::Mul), &[ub, ts]);
        let z = apply(TensorOp::MatMul, &[scaled, w]);
        let p = apply(TensorOp::Softmax, &[z]);
        let pr = apply(ew(Op::Mul), &[p, r]);
        let l1 = apply(TensorOp::Sum, &[pr]);
        let lse = apply(TensorOp::LogSumExp, &[z]);
        let l2 = apply(TensorOp::Mean, &[lse]);
        let rows = apply(TensorOp::SumAxis(1), &[x]);
        let l3 = apply(TensorOp::Max, &[rows]);
        let zz = apply(TensorOp::MatMul, &[x, w]);
        let l4 = apply(TensorOp::Sum, &[zz]);
        let l5 = apply(TensorOp::Mean, &[u]);
        let columns = apply(TensorOp::SumAxis(0), &[y]);
        let l6 = apply(TensorOp::Max, &[columns]);
        let l7 = apply(TensorOp::SumAxis(0), &[b]);
        let kept = apply(TensorOp::SumKeepDims(1), &[y]);
        let l8 = apply(TensorOp::Max, &[kept]);
        let outer = apply(TensorOp::Outer, &[b, b]);
        let l9 = apply(TensorOp::Mean, &[outer]);
        let mut loss = l1;
        for term in [l2, l3, l4, l5, l6, l7, l8, l9] {
            loss = apply(ew(Op::Add), &[loss, term]);
        }
        let bits = |t: Option<&Tensor>| {
            t.map(|t| t.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>())
        };
        let (traced, _) = g.backward_traced(loss);
        let all = g.backward(loss);
        for i in 0..g.len() {
            let id = TensorId(i as u32);
            assert_eq!(bits(all.get(id)), bits(traced.get(id)), "node {i}");
        }
        assert_eq!(all.scalars(), traced.scalars());
        let leaves = g.backward_keeping(loss, &[]);
        for id in [x, y, b, w] {
            assert!(traced.get(id).is_some());
            assert_eq!(bits(leaves.get(id)), bits(traced.get(id)));
        }
        assert_eq!(leaves.get(u), None, "a node not asked for is not kept");
        let asked = g.backward_keeping(loss, &[u]);
        assert_eq!(bits(asked.get(u)), bits(traced.get(u)));
    }

    /// Every pairing of what a slot holds and what is added gives the sum
    /// made by writing both out and adding them (the walk before).
    #[test]
    fn every_pairing_adds_as_written_out_tensors_do() {
        let shape = Shape::vector(3);
        let full = |d: &[f64]| Grad::Full(Tensor::new(shape, d.to_vec()));
        let uniform = |value| Grad::Uniform { value, shape };
        let cases = [
            (None, full(&[1.0, 2.0, 3.0]), [1.0, 2.0, 3.0]),
            (
                Some(full(&[0.1, 0.2, 0.3])),
                full(&[1.0, 2.0, 3.0]),
                [1.1, 2.2, 3.3],
            ),
            (Some(full(&[0.1, 0.2, 0.3])), uniform(1.0), [1.1, 1.2, 1.3]),
            (Some(uniform(0.1)), full(&[1.0, 2.0, 3.0]), [1.1, 2.1, 3.1]),
            (Some(uniform(0.1)), uniform(0.2), [0.1 + 0.2; 3]),
        ];
        for (before, added, expected) in cases {
            let mut slot = before;
            accumulate(&mut slot, added);
            assert_eq!(slot.unwrap().into_tensor().data(), expected);
        }
    }

    /// `accumulate_map` gives what `accumulate` of the written-out
    /// contribution gives, for every slot and every kind of upstream.
    #[test]
    fn a_mapped_contribution_adds_as_a_written_out_one() {
        let shape = Shape::vector(3);
        let other = [0.3, -0.7, 1.9];
        let u = [0.5, 0.25, -2.0];
        let term = |u: f64, i: usize| u * other[i];
        let slots = || {
            [
                None,
                Some(Grad::Full(Tensor::new(shape, vec![0.1, 0.2, 0.3]))),
                Some(Grad::Uniform { value: 0.1, shape }),
            ]
        };
        for (k, slot) in slots().into_iter().enumerate() {
            let mut expected = slot;
            let c: Vec<f64> = (0..3).map(|i| term(u[i], i)).collect();
            accumulate(&mut expected, Grad::Full(Tensor::new(shape, c)));
            let expected = expected.unwrap().into_tensor();
            for up in [Up::Borrowed(&u), Up::Owned(u.to_vec())] {
                let mut slot = slots().into_iter().nth(k).unwrap();
                assert!(accumulate_map(&mut slot, shape, up, term, &|| false));
                assert_eq!(slot.unwrap().into_tensor(), expected);
            }
            // A uniform upstream reads as its number at every element.
            let mut slot = slots().into_iter().nth(k).unwrap();
            let mut expected = slots().into_iter().nth(k).unwrap();
            let c: Vec<f64> = (0..3).map(|i| term(0.5, i)).collect();
            accumulate(&mut expected, Grad::Full(Tensor::new(shape, c)));
            assert!(accumulate_map(
                &mut slot,
                shape,
                Up::Uniform(0.5),
                term,
                &|| false
            ));
            assert_eq!(slot.unwrap().into_tensor(), expected.unwrap().into_tensor());
        }
    }
    /// A mapped contribution (the backward elementwise kernel) asked to stop
    /// stops between blocks of [`BLOCK_ELEMENTS`], asking before each block
    /// but the first, and empties the slot; not asked, it gives every
    /// element, into whichever buffer it writes.
    #[test]
    fn a_mapped_contribution_stops_between_blocks() {
        let n = 2 * BLOCK_ELEMENTS + 5;
        let shape = Shape::vector(n);
        let asked = std::cell::Cell::new(0);
        let stop_at_second = || {
            asked.set(asked.get() + 1);
            asked.get() >= 2
        };
        let ones = vec![1.0; n];
        let ups = || {
            [
                Up::Uniform(1.0),
                Up::Borrowed(&ones),
                Up::Owned(ones.clone()),
            ]
        };
        for up in ups() {
            asked.set(0);
            let mut slot = Some(Grad::Uniform { value: 2.0, shape });
            assert!(!accumulate_map(
                &mut slot,
                shape,
                up,
                |u, _| u,
                &stop_at_second
            ));
            assert!(slot.is_none());
            assert_eq!(asked.get(), 2, "stopped before the third block");
        }
        for up in ups() {
            asked.set(0);
            let never = || {
                asked.set(asked.get() + 1);
                false
            };
            let mut slot = Some(Grad::Full(Tensor::new(shape, vec![0.5; n])));
            assert!(accumulate_map(
                &mut slot,
                shape,
                up,
                |u, i| u * i as f64,
                &never
            ));
            assert_eq!(
                asked.get(),
                2,
                "3 blocks: asked before the second and the third"
            );
            let sum = slot.unwrap().into_tensor();
            assert_eq!(sum.data()[n - 1], 0.5 + (n - 1) as f64);
        }
    }
}
