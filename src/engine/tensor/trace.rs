//! The traced backward walk read as it runs: each step's upstream gradient
//! and each operand's contribution are handed to a [`TraceReader`] while the
//! walk holds them, and dropped once the walk has passed them on (a node's
//! gradient once its last consumer has run, as [`TensorGraph::backward`]
//! drops it). A reader keeps what it shows (a summary of a large value), so
//! a trace of 3000×3000 matrices holds the few gradients the walk needs at
//! once, not every step's.

use super::{Tensor, TensorContribution, TensorGraph, TensorId, TensorStep};

/// What reads a traced backward walk ([`TensorGraph::backward_read`]), one
/// piece at a time, in the walk's order (reverse topological order, each
/// node's operands in order). Every reference is valid for the call only.
pub trait TraceReader {
    /// The walk reaches `node` with its complete upstream gradient (every
    /// node using it came earlier): leaves and nodes that pass nothing too.
    fn step(&mut self, node: TensorId, upstream: &Tensor);

    /// What operand `contribution.input` of `node` receives from `upstream`;
    /// `before` is the operand's gradient so far (`None`: no use has added
    /// to it yet). The walk adds the contribution next.
    fn contribution(
        &mut self,
        node: TensorId,
        upstream: &Tensor,
        contribution: &TensorContribution,
        before: Option<&Tensor>,
    );

    /// The gradient of `input` once the contribution just read is added.
    fn added(&mut self, input: TensorId, gradient: &Tensor);
}

/// The reader of [`TensorGraph::backward_traced`]: every step, whole.
#[derive(Default)]
pub(super) struct EveryStep(pub(super) Vec<TensorStep>);

impl TraceReader for EveryStep {
    fn step(&mut self, node: TensorId, upstream: &Tensor) {
        self.0.push(TensorStep {
            node,
            upstream: upstream.clone(),
            contributions: Vec::new(),
        });
    }

    fn contribution(
        &mut self,
        _: TensorId,
        _: &Tensor,
        contribution: &TensorContribution,
        _: Option<&Tensor>,
    ) {
        if let Some(step) = self.0.last_mut() {
            step.contributions.push(contribution.clone());
        }
    }

    fn added(&mut self, _: TensorId, _: &Tensor) {}
}

impl TensorGraph {
    /// The walk of [`TensorGraph::backward_traced`] handed to `reader` as it
    /// runs ([`TraceReader`]), keeping no gradient once the walk has passed
    /// it on: at any time it holds the gradients still to be passed (those
    /// of nodes whose consumers have run and that have not run yet), the
    /// step's upstream and one contribution. Looks at the interrupt once a
    /// node; when it asks to stop, the reader has seen part of the walk
    /// ([`TensorGraph::interrupted`]).
    ///
    /// # Panics
    /// If `output` is not a node of this graph.
    pub fn backward_read(&self, output: TensorId, reader: &mut dyn TraceReader) {
        self.walk(output, reader, false);
    }
}
