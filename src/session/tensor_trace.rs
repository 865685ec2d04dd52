//! The lines of a tensor `:trace`, and the gradient states of the step
//! model (`:step`, `:svg --steps`, the page), read from one backward walk
//! as it runs ([`TraceReader`]): every value is summarised as it is read
//! ([`tensor_data`]: a large one keeps its edges), so the trace holds what
//! it shows and the walk drops each gradient once passed on. A `:trace` of
//! `sum(tanh(X) * X)` at 3000×3000 needs about the memory of `:grad X`.

use rustc_hash::{FxHashMap, FxHashSet};

use super::error::ErrorCode;
use super::event::{TensorTraceCall, TensorTraceContribution, TensorTraceStep};
use super::listings::element_chains;
use super::steps::{GradMark, Marks};
use super::tensors::CallBox;
use super::tensors::TensorCall;
use super::tensors::tensor_data;
use super::{Event, Number, Session, SessionError, TensorData, TensorName};
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
    /// The nodes inside a call shown as one step, each with that step.
    pub(super) inside: Vec<(TensorId, usize)>,
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
    /// count, the operand's gradient before it (for the marks), and its
    /// line in the last step.
    pending: Option<(u32, u32, Option<TensorData>, usize)>,
    /// The calls shown as one step each ([`TraceLines::with_calls`]).
    calls: CallSteps,
}

/// What a trace that shows calls of user functions as one step each keeps
/// while the walk crosses their bodies.
#[derive(Default)]
struct CallSteps {
    /// The calls shown as one step each (none: every node is a step), by
    /// their first id (their runs of ids are apart).
    boxes: Vec<CallBox>,
    /// The uses of each operand when a call counts as one user: its total
    /// and how many the walk has passed (by id).
    uses: FxHashMap<TensorId, (u32, u32)>,
    /// The (call, operand) pairs whose use is counted already.
    counted: FxHashSet<(usize, TensorId)>,
    /// The call whose step is the last written, if it is a call's.
    open: Option<usize>,
    /// The upstream of each call's output, read when the walk reaches it.
    upstream: FxHashMap<TensorId, Tensor>,
    /// ∂L/∂node of each node inside a call as text in the call's upstream
    /// (`upstream ⊙ (1 - tanh(u)^2)`): the rules composed along the body.
    texts: FxHashMap<TensorId, String>,
    /// Each operand's line in the open call's step, and the sum so far.
    lines: FxHashMap<TensorId, (usize, Tensor)>,
    /// The steps written for calls (an index into the steps) and their calls.
    steps: Vec<(usize, usize)>,
    /// The gradient of each node inside a call shown as one step, once its
    /// last use has added (for the step model), with the call.
    inside: FxHashMap<TensorId, (usize, TensorData)>,
    /// The node inside call `.0` whose last use was just read: its gradient
    /// is kept when the walk adds it.
    pending_inside: Option<(usize, TensorId)>,
}

/// Longest rule a call's step writes composed; a longer one is said in words.
const CALL_RULE_CHARS: usize = 160;

/// `rule` with its `upstream` read as `text` (∂L/∂node as text in the
/// call's upstream): each whole word `upstream` replaced, in brackets
/// unless it is a whole argument or the whole rule.
fn compose(text: &str, rule: &str) -> String {
    if text == "upstream" {
        return rule.to_string();
    }
    let word = "upstream";
    let name_char = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(rule.len() + text.len());
    let mut rest = rule;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if name_char(before) || name_char(after) {
            out.push_str(word);
        } else {
            let whole = (before.is_none() && after.is_none())
                || (matches!(before, Some('(' | ' ')) && matches!(after, Some(')' | ',')))
                    && !out
                        .trim_end()
                        .ends_with(['⊙', '@', '+', '-', '−', '*', '/']);
            if whole || !text.contains(' ') {
                out.push_str(text);
            } else {
                out.push('(');
                out.push_str(text);
                out.push(')');
            }
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
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
            calls: CallSteps::default(),
        }
    }

    /// The same reader, showing each call of `boxes` as one step: its
    /// output's step, whose lines are what the body passes to the nodes
    /// outside it (its arguments, the variables it names), each rule
    /// composed along the body and each use of an operand by the call
    /// counted once. `order` is the walk's (the output's reverse
    /// topological order).
    pub(super) fn with_calls(mut self, boxes: Vec<CallBox>, order: &[TensorId]) -> TraceLines<'a> {
        let graph = self.graph;
        let box_of = |id: TensorId| boxes.iter().position(|b| b.holds(id, graph));
        let mut counted: Vec<(usize, TensorId)> = Vec::new();
        for &node in order {
            let inside = box_of(node);
            for &input in graph.operands(node) {
                if let Some(k) = inside {
                    if boxes[k].holds(input, graph) || counted.contains(&(k, input)) {
                        continue;
                    }
                    counted.push((k, input));
                }
                self.calls.uses.entry(input).or_default().0 += 1;
            }
        }
        self.calls.boxes = boxes;
        self
    }

    /// The steps once the walk is done: each call's lines in the order of
    /// its parameters (then the variables its body names, by id), as a
    /// call of numbers lists them.
    pub(super) fn finish(mut self) -> Self {
        for &(step, k) in &self.calls.steps {
            let b = &self.calls.boxes[k];
            let position = |input: &str| {
                b.args
                    .iter()
                    .position(|a| a.is_some_and(|id| self.labels[id.index()] == input))
                    .unwrap_or(usize::MAX)
            };
            if let Some(step) = self.steps.get_mut(step) {
                step.contributions.sort_by_key(|line| position(&line.input));
            }
        }
        // A node inside a call shown as one step: final at the call's step.
        if let Some(model) = &mut self.model {
            let step_of_call: FxHashMap<usize, usize> = self
                .calls
                .steps
                .iter()
                .map(|&(step, k)| (k, step + 1))
                .collect();
            let mut inside: Vec<(TensorId, (usize, TensorData))> =
                self.calls.inside.drain().collect();
            inside.sort_by_key(|(id, _)| *id);
            for (id, (k, sum)) in inside {
                let Some(&step) = step_of_call.get(&k) else {
                    continue;
                };
                model.inside.push((id, step));
                model.marks.add(
                    id,
                    GradMark {
                        step,
                        before: None,
                        sum,
                        done: true,
                    },
                );
            }
        }
        self
    }

    /// The call whose step stands for `node`, if one does.
    fn box_of(&self, node: TensorId) -> Option<usize> {
        self.calls
            .boxes
            .iter()
            .position(|b| b.holds(node, self.graph))
    }

    /// Which use of `input` a contribution from `node` is and how many
    /// there are, a call counting as one user; the engine's numbers when
    /// no call is shown as one step.
    fn uses(&mut self, node: TensorId, c: &TensorContribution) -> (u32, u32) {
        if self.calls.boxes.is_empty() {
            return (c.use_number, c.use_count);
        }
        if let Some(k) = self.box_of(node)
            && !self.calls.counted.insert((k, c.input))
        {
            let (total, seen) = self.calls.uses.get(&c.input).copied().unwrap_or((1, 1));
            return (seen, total);
        }
        let entry = self.calls.uses.entry(c.input).or_insert((1, 0));
        entry.1 += 1;
        (entry.1, entry.0)
    }

    /// Reads the contribution `c` of `node`, inside call `k` (shown as one
    /// step): to a node inside the call, its rule composed into that
    /// node's text; to one outside, added to the call step's line for it.
    /// Returns the line's index when one was written.
    fn call_contribution(
        &mut self,
        k: usize,
        node: TensorId,
        c: &TensorContribution,
        uses: (u32, u32),
    ) -> Option<usize> {
        let (rule, _) = super::tensor_rules::rule_text(self.graph, node, c, self.labels);
        let own = self
            .calls
            .texts
            .get(&node)
            .map_or("upstream", String::as_str);
        let text = compose(own, &rule);
        if self.calls.boxes[k].holds(c.input, self.graph) {
            self.calls
                .texts
                .entry(c.input)
                .and_modify(|t| {
                    t.push_str(" + ");
                    t.push_str(&text);
                })
                .or_insert(text);
            return None;
        }
        let output = self.calls.boxes[k].output;
        if self.calls.open != Some(k) {
            let upstream = self.calls.upstream.get(&output).cloned();
            let upstream = upstream.unwrap_or_else(|| Tensor::ones(self.graph.shape(output)));
            self.start_step(output, &upstream);
            let b = &self.calls.boxes[k];
            if let Some(step) = self.steps.last_mut() {
                step.op = format!(
                    "{} = {}: one call, {} steps: `--expand={}` shows them",
                    b.label, b.written, b.steps, b.label
                );
                step.call = Some(TensorTraceCall {
                    label: b.label.clone(),
                    function: b.function.clone(),
                    args: b.arg_texts.clone(),
                    steps: b.steps,
                });
            }
            self.calls.open = Some(k);
            self.calls.lines.clear();
            self.calls.steps.push((self.steps.len() - 1, k));
        }
        let b = &self.calls.boxes[k];
        let too_long = || {
            format!(
                "the chain rule through {}'s body (`--expand={}` writes each step's)",
                b.label, b.label
            )
        };
        let step = self.steps.last_mut()?;
        if let Some((line, sum)) = self.calls.lines.get_mut(&c.input) {
            sum.add_assign(&c.contribution);
            let entry = &mut step.contributions[*line];
            entry.value = tensor_data(sum);
            if entry.rule.len() + text.len() > CALL_RULE_CHARS {
                entry.rule = too_long();
            } else if !entry.rule.starts_with("the chain rule") {
                entry.rule = format!("{} + {text}", entry.rule);
            }
            return Some(*line);
        }
        let shapes = format!(
            "through {}, {} → {}",
            b.label,
            self.graph.shape(output).parenthesized(),
            self.graph.shape(c.input)
        );
        let rule = if text.len() > CALL_RULE_CHARS {
            too_long()
        } else {
            text
        };
        step.contributions.push(TensorTraceContribution {
            input: self.labels[c.input.index()].clone(),
            rule,
            shapes,
            value: tensor_data(&c.contribution),
            uses: (uses.1 > 1).then_some(uses),
            elements: Vec::new(),
            so_far: None,
        });
        let line = step.contributions.len() - 1;
        self.calls
            .lines
            .insert(c.input, (line, c.contribution.clone()));
        Some(line)
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
            call: None,
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
    fn step(&mut self, node: TensorId, upstream: &Tensor) {
        self.at = Some((node, false));
        if self.calls.boxes.iter().any(|b| b.output == node) {
            self.calls.upstream.insert(node, upstream.clone());
        }
    }

    fn contribution(
        &mut self,
        node: TensorId,
        upstream: &Tensor,
        c: &TensorContribution,
        before: Option<&Tensor>,
    ) {
        self.pending = None;
        self.calls.pending_inside = None;
        if self.graph.op(c.input) == TensorOp::Const {
            return;
        }
        let (use_number, use_count) = self.uses(node, c);
        if let Some(k) = self.box_of(node) {
            let before = before.filter(|_| self.model.is_some()).map(tensor_data);
            match self.call_contribution(k, node, c, (use_number, use_count)) {
                Some(line) => self.pending = Some((use_number, use_count, before, line)),
                // Inside the call: its gradient is kept once its last use adds.
                None if self.model.is_some() && c.use_number >= c.use_count => {
                    self.calls.pending_inside = Some((k, c.input));
                }
                None => {}
            }
            return;
        }
        if self.at != Some((node, true)) {
            self.start_step(node, upstream);
            self.at = Some((node, true));
            self.calls.open = None;
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
            uses: (use_count > 1).then_some((use_number, use_count)),
            elements,
            so_far: None,
        };
        let mut at = 0;
        if let Some(step) = self.steps.last_mut() {
            step.contributions.push(line);
            at = step.contributions.len() - 1;
        }
        self.pending = Some((use_number, use_count, before, at));
    }

    fn added(&mut self, input: TensorId, gradient: &Tensor) {
        if let Some((k, node)) = self.calls.pending_inside.take()
            && node == input
        {
            self.calls.inside.insert(input, (k, tensor_data(gradient)));
        }
        let Some((use_number, use_count, before, line)) = self.pending.take() else {
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
                .and_then(|s| s.contributions.get_mut(line))
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

/// A tensor output's backward walk as `:trace` shows it, read once
/// ([`Session::traced_walk`]): what the trace, the step model, the
/// pictures and the page are made of.
pub(super) struct TensorWalk {
    /// The steps, numbered from 1.
    pub(super) steps: Vec<TensorTraceStep>,
    /// Step K's node at index K − 1.
    pub(super) nodes: Vec<TensorId>,
    /// Warnings of `--expand` (an operand too large for the scalar view).
    pub(super) warnings: Vec<Event>,
    /// The step model's marks and rules, when asked.
    pub(super) model: Option<ModelMarks>,
    /// What each short name (`t39`) of the steps stands for.
    pub(super) legend: Vec<TensorName>,
}

impl Session {
    /// The backward walk of the tensor `output` (labelled `of`) as `:trace`
    /// shows it: each call of a user function one step, but those
    /// `expand` opens; with the step model's marks when `marks`. `expand`
    /// holds names as typed, each where it was typed: a call's label or a
    /// function's name (its calls shown step by step), or a step's node
    /// (shown element by element, opening the call it is inside). `span`
    /// is the command's, for errors.
    ///
    /// Errors: the gradients would not fit; a name that is neither a call
    /// nor a step (the error lists those that are); Ctrl-C.
    pub(super) fn traced_walk(
        &self,
        output: TensorId,
        of: &str,
        span: Span,
        expand: &[(&str, Span)],
        marks: bool,
    ) -> Result<TensorWalk, SessionError> {
        self.check_gradient_budget(output, span)?;
        let (labels, legend) = self.labels_and_legend(output);
        let graph = &self.tensors.graph;
        let step_nodes = graph.step_nodes(output);
        let calls = self.tensors.calls.list();
        // `--expand=CALL` (a call's label, or a function's name: each of
        // its calls) shows a call's steps; `--expand=NODE` a step element
        // by element, opening the call it is inside. A call of another
        // output's graph is no name here.
        let here: FxHashSet<TensorId> = step_nodes.iter().copied().collect();
        let is_call = |name: &str| {
            calls
                .iter()
                .any(|c| (c.label == name || c.function == name) && here.contains(&c.output))
        };
        let mut opened: Vec<&str> = expand
            .iter()
            .map(|&(name, _)| name)
            .filter(|name| is_call(name))
            .collect();
        let nodes = expand.iter().copied().filter(|(name, _)| !is_call(name));
        let mut expanded = Vec::with_capacity(expand.len());
        for (name, at) in nodes {
            let node = step_nodes
                .iter()
                .copied()
                .find(|s| labels[s.index()] == name)
                .ok_or_else(|| no_step(name, at, of, &step_nodes, calls, &labels))?;
            expanded.push((node, name, at));
            for call in calls {
                if call.first <= node && node < call.output {
                    opened.push(&call.label);
                }
            }
        }
        let order = graph.topo_order(output);
        let boxes = super::tensors::call_boxes(calls, &step_nodes, &opened, &labels, graph);
        // Read as the walk runs: only what is shown is kept.
        let mut lines = TraceLines::new(graph, &labels, of, &expanded).with_calls(boxes, &order);
        if marks {
            lines = lines.with_marks();
        }
        graph.backward_read(output, &mut lines);
        if graph.interrupted() {
            return Err(SessionError::Interrupted { span });
        }
        let lines = lines.finish();
        Ok(TensorWalk {
            steps: lines.steps,
            nodes: lines.nodes,
            warnings: lines.warnings,
            model: lines.model,
            legend,
        })
    }
}

/// The error of `--expand=NAME` (typed at `at`) naming no call and no step
/// of the trace of `of` (whose steps' nodes are `steps`), with the names
/// it can take: the calls shown as one step, then the steps' nodes that
/// are names.
fn no_step(
    name: &str,
    at: Span,
    of: &str,
    steps: &[TensorId],
    calls: &[TensorCall],
    labels: &[String],
) -> SessionError {
    let mut choices: Vec<String> = calls
        .iter()
        .filter(|c| steps.contains(&c.output))
        .map(|c| format!("`--expand={}` (a call of {})", c.label, c.function))
        .collect();
    choices.extend(
        steps
            .iter()
            .map(|s| labels[s.index()].as_str())
            .filter(|l| crate::syntax::is_name(l))
            .map(|l| format!("`--expand={l}`")),
    );
    let help = match choices.len() {
        0 => "its steps have no names: give a node a name where it is built (`h = …`) to expand its step".to_string(),
        n if n > EXPAND_CHOICES => format!(
            "it can expand: {}, … ({n} in all)",
            choices[..EXPAND_CHOICES].join(", ")
        ),
        _ => format!("it can expand: {}", choices.join(", ")),
    };
    super::tensors::tensor_error(
        ErrorCode::BadArguments,
        at,
        format!("`{name}` is not a step of the trace of {of}"),
        Some(help),
    )
}

/// How many names the error of `--expand=NAME` lists at most.
const EXPAND_CHOICES: usize = 8;

impl Session {
    /// The labels of the calls of user functions on tensors in the walk
    /// from `output`: those whose output is one of its steps, in the order
    /// they finished. What a bare `--expand` opens.
    pub(super) fn call_labels(&self, output: TensorId) -> Vec<String> {
        let graph = &self.tensors.graph;
        let steps: FxHashSet<TensorId> = graph.step_nodes(output).into_iter().collect();
        self.tensors
            .calls
            .list()
            .iter()
            .filter(|c| steps.contains(&c.output))
            .map(|c| c.label.clone())
            .collect()
    }
}
