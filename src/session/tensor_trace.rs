//! The lines of a tensor `:trace`, and the gradient states of the step
//! model (`:step`, `:svg --steps`, the page), read from one backward walk
//! as it runs ([`TraceReader`]): every value is summarised as it is read
//! ([`tensor_data`]: a large one keeps its edges), so the trace holds what
//! it shows and the walk drops each gradient once passed on. A `:trace` of
//! `sum(tanh(X) * X)` at 3000×3000 needs about the memory of `:grad X`.

use rustc_hash::FxHashMap;

use super::event::{TensorTraceContribution, TensorTraceStep};
use super::listings::element_chains;
use super::steps::{GradMark, Marks};
use super::tensors::tensor_data;
use super::{Event, Number, TensorData};
use crate::engine::tensor::{
    Tensor, TensorContribution, TensorGraph, TensorId, TensorOp, TraceReader,
};
use crate::syntax::Span;

/// The gradient states and edge rules of a step model, as [`TraceLines`]
/// reads them.
#[derive(Default)]
pub(super) struct ModelMarks {
    /// Each node's gradient changes, in step order.
    pub(super) marks: Marks<TensorId, TensorData>,
    /// The matrix rule of each operand's edge: (node, operand position) → rule.
    pub(super) rules: FxHashMap<(TensorId, usize), String>,
}

/// A [`TraceReader`] writing the tensor trace's steps (the nodes that pass
/// a gradient to an operand, numbered from 1; constants left out), and the
/// step model's marks when asked ([`TraceLines::with_marks`]).
pub(super) struct TraceLines<'a> {
    graph: &'a TensorGraph,
    labels: &'a [String],
    /// The output's label, for the warnings of `--expand`.
    of: &'a str,
    /// The steps `--expand=NODE` shows element by element: node, name, where.
    expanded: &'a [(TensorId, &'a str, Span)],
    /// The steps written.
    pub(super) steps: Vec<TensorTraceStep>,
    /// Step K's node at index K − 1.
    pub(super) nodes: Vec<TensorId>,
    /// Warnings of `--expand` (an operand too large for the scalar view).
    pub(super) warnings: Vec<Event>,
    /// The step model's marks, when asked.
    pub(super) model: Option<ModelMarks>,
    /// The node the walk is at, and whether its step is written yet.
    at: Option<(TensorId, bool)>,
    /// The contribution just read and awaiting its sum: its use number and
    /// count, and the operand's gradient before it (for the marks).
    pending: Option<(u32, u32, Option<TensorData>)>,
}

impl<'a> TraceLines<'a> {
    /// A reader of the walk of output `of` whose nodes are named by
    /// `labels`, showing the steps of `expanded` element by element.
    pub(super) fn new(
        graph: &'a TensorGraph,
        labels: &'a [String],
        of: &'a str,
        expanded: &'a [(TensorId, &'a str, Span)],
    ) -> TraceLines<'a> {
        TraceLines {
            graph,
            labels,
            of,
            expanded,
            steps: Vec::new(),
            nodes: Vec::new(),
            warnings: Vec::new(),
            model: None,
            at: None,
            pending: None,
        }
    }

    /// The same reader, also keeping the step model's marks and rules.
    pub(super) fn with_marks(mut self) -> TraceLines<'a> {
        self.model = Some(ModelMarks::default());
        self
    }

    /// Writes the step of `node` (on its first contribution shown).
    fn start_step(&mut self, node: TensorId, upstream: &Tensor) {
        let upstream = tensor_data(upstream);
        let k = self.steps.len() + 1;
        if let Some(model) = &mut self.model
            && model.marks.of(&node).is_empty()
        {
            // The output's gradient: ones, final from step 1.
            model.marks.seed(node, k, upstream.clone());
        }
        self.steps.push(TensorTraceStep {
            step: k,
            node: self.labels[node.index()].clone(),
            op: super::tensors::op_name(self.graph.op(node)),
            upstream,
            contributions: Vec::new(),
        });
        self.nodes.push(node);
    }

    /// The scalar view of the contribution `c` when its step is expanded
    /// (`--expand=NODE`), with a warning where the operand is too large.
    fn elements(
        &mut self,
        node: TensorId,
        upstream: &Tensor,
        c: &TensorContribution,
    ) -> Vec<super::event::ElementChain> {
        let Some(&(_, name, at)) = self.expanded.iter().find(|e| e.0 == node) else {
            return Vec::new();
        };
        let chains = element_chains(self.graph, node, upstream, c, self.labels);
        let shape = self.graph.shape(c.input);
        if chains.is_empty() && !shape.is_empty() {
            self.warnings.push(Event::Warning {
                message: format!(
                    "--expand={name}: ∂{}/∂{} has {} elements, more than the {} the scalar view writes; its matrix rule is above",
                    self.of,
                    self.labels[c.input.index()],
                    shape.len(),
                    super::listings::EXPAND_ELEMENTS,
                ),
                span: at,
            });
        }
        chains
    }
}

impl TraceReader for TraceLines<'_> {
    fn step(&mut self, node: TensorId, _: &Tensor) {
        self.at = Some((node, false));
    }

    fn contribution(
        &mut self,
        node: TensorId,
        upstream: &Tensor,
        c: &TensorContribution,
        before: Option<&Tensor>,
    ) {
        self.pending = None;
        if self.graph.op(c.input) == TensorOp::Const {
            return;
        }
        if self.at != Some((node, true)) {
            self.start_step(node, upstream);
            self.at = Some((node, true));
        }
        let (rule, shapes) = super::tensor_rules::rule_text(self.graph, node, c, self.labels);
        let value = tensor_data(&c.contribution);
        let before = self.model.as_mut().map(|model| {
            model.rules.insert((node, c.position), rule.clone());
            match before {
                Some(sum) => tensor_data(sum),
                // Nothing yet: zeros, as many as the value shows.
                None => TensorData {
                    data: vec![Number(0.0); value.data.len()],
                    ..value.clone()
                },
            }
        });
        let elements = self.elements(node, upstream, c);
        let line = TensorTraceContribution {
            input: self.labels[c.input.index()].clone(),
            rule,
            shapes,
            value,
            uses: (c.use_count > 1).then_some((c.use_number, c.use_count)),
            elements,
            so_far: None,
        };
        if let Some(step) = self.steps.last_mut() {
            step.contributions.push(line);
        }
        self.pending = Some((c.use_number, c.use_count, before));
    }

    fn added(&mut self, input: TensorId, gradient: &Tensor) {
        let Some((use_number, use_count, before)) = self.pending.take() else {
            return;
        };
        // At a later use of a fan-out operand the trace shows the sum so far.
        let shown = use_count > 1 && use_number > 1;
        if !shown && self.model.is_none() {
            return;
        }
        let sum = tensor_data(gradient);
        if shown
            && let Some(line) = self
                .steps
                .last_mut()
                .and_then(|s| s.contributions.last_mut())
        {
            line.so_far = Some(sum.clone());
        }
        if let Some(model) = &mut self.model {
            model.marks.add(
                input,
                GradMark {
                    step: self.steps.len(),
                    before,
                    sum,
                    done: use_number >= use_count,
                },
            );
        }
    }
}
