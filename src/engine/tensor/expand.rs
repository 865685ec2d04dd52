//! The scalar view of a tensor step, built only when asked (`--expand`):
//! for one element of one operand, every term of its chain rule,
//! `∂L/∂aₑ = Σₒ upstreamₒ · ∂nodeₒ/∂aₑ`, with the local derivative
//! `∂nodeₒ/∂aₑ` of each output element `o` that depends on it (the nonzero
//! entries of the op's Jacobian in that column).

use super::batch;
use super::kernels::{self, Strides};
use super::ops::rows;
use super::{TensorGraph, TensorId, TensorOp};

/// One term of an element's chain rule: `upstream × local`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ElementTerm {
    /// The output element (row-major index into the node's value).
    pub output: usize,
    /// `∂L/∂node` at that element.
    pub upstream: f64,
    /// `∂node[output]/∂operand[element]`.
    pub local: f64,
}

impl TensorGraph {
    /// The chain rule of element `element` (row-major) of operand `position`
    /// of `node`, given the node's upstream gradient `upstream`: one term per
    /// output element that depends on it, in row-major order of the output,
    /// so that the sum of `upstream × local` over the terms is that element
    /// of the operand's contribution ([`TensorContribution::contribution`](super::TensorContribution::contribution)).
    /// Elements that receive nothing (an element not indexed, a non-maximum)
    /// have no terms; an elementwise op's element where the scalar op passes
    /// nothing (relu at `u ≤ 0`, the smaller operand of `max`) has its term
    /// with local derivative 0, the mask of its rule. Its size is
    /// what the op's Jacobian has in that column: up to a row or a column of
    /// the output, so build it for shapes small enough to read.
    ///
    /// # Panics
    /// If `node` is not a node of this graph, has no operand at `position`,
    /// `element` is out of the operand's range, or `upstream` is not of the
    /// node's shape.
    pub fn expand(
        &self,
        node: TensorId,
        position: usize,
        element: usize,
        upstream: &[f64],
    ) -> Vec<ElementTerm> {
        let operands = self.operands(node);
        let input = self.value(operands[position]);
        assert!(
            element < input.len(),
            "element {element} of {}",
            input.shape()
        );
        let out = self.value(node);
        assert_eq!(upstream.len(), out.len(), "an upstream of the node's shape");
        let locals: Vec<(usize, f64)> = match self.op(node) {
            TensorOp::Variable | TensorOp::Const | TensorOp::Scalar(_) => {
                unreachable!("a leaf has no operands")
            }
            TensorOp::Elementwise(op) => self.elementwise_locals(node, op, position, element),
            TensorOp::MatMul => self.matmul_locals(node, position, element),
            TensorOp::Transpose
            | TensorOp::Index(_)
            | TensorOp::Index2(_, _)
            | TensorOp::Sum
            | TensorOp::SumAxis(_)
            | TensorOp::SumKeepDims(_)
            | TensorOp::Mean => self.structural_locals(node, element),
            TensorOp::Outer => self.outer_locals(node, position, element),
            TensorOp::Max
            | TensorOp::Min
            | TensorOp::MeanAxis(_)
            | TensorOp::MaxAxis(_)
            | TensorOp::MinAxis(_)
            | TensorOp::LogSoftmax
            | TensorOp::CrossEntropy
            | TensorOp::Slice(_, _)
            | TensorOp::Compare(_)
            | TensorOp::ArgMax(_)
            | TensorOp::OneHot(_) => self.batch_locals(node, position, element),
            TensorOp::Softmax | TensorOp::LogSumExp => self.softmax_locals(node, element),
        };
        locals
            .into_iter()
            .map(|(output, local)| ElementTerm {
                output,
                upstream: upstream[output],
                local,
            })
            .collect()
    }

    /// The output elements of the matrix product `node` that element
    /// `element` of operand `position` reaches, with the local derivative
    /// (`∂C[i, j]/∂A[i, l] = B[l, j]`, `∂C[i, j]/∂B[l, j] = A[i, l]`).
    fn matmul_locals(&self, node: TensorId, position: usize, element: usize) -> Vec<(usize, f64)> {
        let operands = self.operands(node);
        let a = self.value(operands[0]);
        let term = |output: usize, local: f64| (output, local);
        let b = self.value(operands[1]);
        let (fa, fb) = super::ops::matmul_factors(a, b);
        let (k, n) = (fa.cols, fb.cols);
        if position == 0 {
            // ∂C[i, j]/∂A[i, l] = B[l, j].
            let (i, l) = (element / k, element % k);
            (0..n)
                .map(|j| term(i * n + j, fb.data[l * n + j]))
                .collect()
        } else {
            // ∂C[i, j]/∂B[l, j] = A[i, l].
            let (l, j) = (element / n, element % n);
            (0..fa.rows)
                .map(|i| term(i * n + j, fa.data[i * k + l]))
                .collect()
        }
    }

    /// The output elements of the structural op or reduction `node`
    /// (transpose, index, sum, mean) that element `element` of its operand
    /// reaches, with the local derivative.
    fn structural_locals(&self, node: TensorId, element: usize) -> Vec<(usize, f64)> {
        let input = self.value(self.operands(node)[0]);
        let out = self.value(node);
        let term = |output: usize, local: f64| (output, local);
        match self.op(node) {
            TensorOp::Transpose => {
                let output = match *input.shape().dims() {
                    [m, n] => (element % n) * m + element / n,
                    _ => element,
                };
                vec![term(output, 1.0)]
            }
            TensorOp::Index(i) => {
                let n = out.len();
                (i * n..(i + 1) * n)
                    .contains(&element)
                    .then(|| term(element - i * n, 1.0))
                    .into_iter()
                    .collect()
            }
            TensorOp::Index2(i, j) => (element == i * input.shape().as_matrix().1 + j)
                .then(|| term(0, 1.0))
                .into_iter()
                .collect(),
            TensorOp::Sum => vec![term(0, 1.0)],
            TensorOp::SumAxis(axis) | TensorOp::SumKeepDims(axis) => {
                let n = input.shape().as_matrix().1;
                let output = match (input.shape().rank(), axis) {
                    (1, _) => 0,
                    (_, 0) => element % n,
                    _ => element / n,
                };
                vec![term(output, 1.0)]
            }
            TensorOp::Mean => vec![term(0, 1.0 / input.len() as f64)],
            _ => unreachable!("not a structural op"),
        }
    }

    /// The output elements of `softmax` or `logsumexp` (`node`) that
    /// element `element` of its operand reaches, with the local derivative.
    fn softmax_locals(&self, node: TensorId, element: usize) -> Vec<(usize, f64)> {
        let a = self.value(self.operands(node)[0]);
        let (input, out) = (a, self.value(node));
        let term = |output: usize, local: f64| (output, local);
        match self.op(node) {
            TensorOp::Softmax => {
                // ∂pⱼ/∂zₑ = pⱼ·(δⱼₑ − pₑ), j along the row of e.
                let n = input.shape().as_matrix().1.max(1);
                let start = element / n * n;
                let p = out.data();
                (start..start + n)
                    .map(|o| {
                        let delta = if o == element { 1.0 } else { 0.0 };
                        term(o, p[o] * (delta - p[element]))
                    })
                    .collect()
            }
            TensorOp::LogSumExp => {
                // ∂lse_r/∂zₑ = softmax(z_r)ₑ.
                let n = input.shape().as_matrix().1.max(1);
                let row = rows(a).nth(element / n).expect("the element's row");
                let mut p = Vec::with_capacity(n);
                kernels::softmax_into(row, &mut p);
                vec![term(element / n, p[element % n])]
            }
            _ => unreachable!("not softmax or logsumexp"),
        }
    }

    /// The output elements that element `element` of operand `position` of
    /// the batch op `node` reaches (`max`, `min`, the axis reductions,
    /// `log_softmax`, `cross_entropy`, slices), with the local derivative
    /// there; none for the ops that pass no gradient.
    fn batch_locals(&self, node: TensorId, position: usize, element: usize) -> Vec<(usize, f64)> {
        let operands = self.operands(node);
        let input = self.value(operands[position]);
        let out = self.value(node);
        let a = self.value(operands[0]);
        let pair = |o: usize, local: f64| (o, local);
        match self.op(node) {
            TensorOp::Max | TensorOp::Min => {
                let at = batch::ties(a.data(), self.op(node) == TensorOp::Max);
                at.contains(&element)
                    .then(|| pair(0, 1.0 / at.len() as f64))
                    .into_iter()
                    .collect()
            }
            TensorOp::MeanAxis(axis) | TensorOp::MaxAxis(axis) | TensorOp::MinAxis(axis) => {
                let lanes = batch::lanes(input.shape(), axis);
                let o = lanes
                    .iter()
                    .position(|lane| lane.contains(&element))
                    .expect("every element is in a lane");
                let lane = &lanes[o];
                match self.op(node) {
                    TensorOp::MeanAxis(_) => vec![pair(o, 1.0 / lane.len() as f64)],
                    op => {
                        let max = matches!(op, TensorOp::MaxAxis(_));
                        (lane[batch::first_extremum(a.data(), lane, max)] == element)
                            .then(|| pair(o, 1.0))
                            .into_iter()
                            .collect()
                    }
                }
            }
            TensorOp::LogSoftmax => {
                // ∂outⱼ/∂zₑ = δⱼₑ − pₑ, j along the row of e, p = exp(out).
                let n = input.shape().as_matrix().1.max(1);
                let start = element / n * n;
                let p = out.data()[element].exp();
                (start..start + n)
                    .map(|o| pair(o, if o == element { 1.0 - p } else { -p }))
                    .collect()
            }
            TensorOp::CrossEntropy if position == 0 => {
                // ∂L/∂Zᵢₑ = (softmax(Zᵢ)ₑ − [e = yᵢ])/n.
                let y = self.value(operands[1]);
                let n = input.shape().as_matrix().1.max(1);
                let (i, e) = (element / n, element % n);
                let row = rows(a).nth(i).expect("the element's row");
                let mut p = Vec::with_capacity(n);
                kernels::softmax_into(row, &mut p);
                let hit = if y.data()[i] == e as f64 { 1.0 } else { 0.0 };
                vec![pair(0, (p[e] - hit) / y.len() as f64)]
            }
            TensorOp::Slice(first, second) => {
                let (_, index) = batch::slice(input.shape(), first, second).expect("built");
                index
                    .iter()
                    .enumerate()
                    .filter(|&(_, &i)| i == element)
                    .map(|(o, _)| pair(o, 1.0))
                    .collect()
            }
            TensorOp::CrossEntropy
            | TensorOp::Compare(_)
            | TensorOp::ArgMax(_)
            | TensorOp::OneHot(_) => Vec::new(),
            _ => unreachable!("not a batch op"),
        }
    }

    /// The output elements of the outer product `node` = `outer(u, x)`
    /// that element `element` of operand `position` reaches, with the local
    /// derivative: `∂C[i, j]/∂u[i] = x[j]`, `∂C[i, j]/∂x[j] = u[i]`.
    fn outer_locals(&self, node: TensorId, position: usize, element: usize) -> Vec<(usize, f64)> {
        let operands = self.operands(node);
        let other = self.value(operands[1 - position]).data();
        let n = self.value(operands[1]).len();
        other
            .iter()
            .enumerate()
            .map(|(k, &v)| {
                let output = if position == 0 {
                    element * n + k
                } else {
                    k * n + element
                };
                (output, v)
            })
            .collect()
    }

    /// The output elements that element `element` of operand `position` of
    /// the elementwise `node` (the scalar op `op`) reaches, with the scalar
    /// op's local derivative there; 0 where it passes nothing.
    fn elementwise_locals(
        &self,
        node: TensorId,
        op: crate::engine::Op,
        position: usize,
        element: usize,
    ) -> Vec<(usize, f64)> {
        let info = op.info();
        let operands = self.operands(node);
        let out = self.value(node);
        let shape = out.shape();
        let strides: Vec<Strides> = operands
            .iter()
            .map(|&o| Strides::of(self.shape(o), shape))
            .collect();
        let (m, n) = shape.as_matrix();
        let mut locals = Vec::new();
        for i in 0..m {
            for j in 0..n {
                if strides[position].at(i, j) != element {
                    continue;
                }
                let x: Vec<f64> = operands
                    .iter()
                    .zip(&strides)
                    .map(|(&o, s)| self.value(o).data()[s.at(i, j)])
                    .collect();
                let o = i * n + j;
                // Where the op passes nothing, the mask's 0 (a dead relu unit).
                let local = if info.passes(&x, out.data()[o], position) {
                    (info.local)(&x, out.data()[o], position)
                } else {
                    0.0
                };
                locals.push((o, local));
            }
        }
        locals
    }
}
