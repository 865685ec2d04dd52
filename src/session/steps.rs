//! The step model: the backward walk of the output computed once, as typed
//! data that every surface draws — `:trace` and `:step` in the terminal, the
//! `:svg --step K` and `--steps` slides, the page of `:html`, `:serve`'s live
//! view and the playground. None of them numbers steps or sums gradients on
//! its own: they read a [`StepModel`].
//!
//! - The steps are `:trace`'s: the nodes of the reverse topological order but
//!   the constants, a call of a user function one step unless expanded
//!   (`--expand`, `--expand=CALL`), numbered from 1.
//! - Each step keeps its line pieces ([`TraceStep`]: the node, its upstream
//!   gradient, each input's local derivative, contribution and `grad before →
//!   after`), which the text renderer writes.
//! - Each node's gradient has a state at every step ([`GradState`]): blank
//!   until a use adds to it, partial with its sum so far while some of its
//!   uses (a fan-out) are still to come, final once every use has added (the
//!   output from step 1). At the step that changed it, the state also holds
//!   the sum before, so every surface writes `grad 3 → 5` where `:trace` does.
//! - A node inside a call shown as one step (drawn only when the page expands
//!   its calls) is final from that call's step on.
//! - A vector or matrix output is walked by the same model over the tensor
//!   graph's nodes ([`StepModel`]`<TensorId>`, made in `tensor_steps.rs`):
//!   each tensor op one step, its gradients tensors, the same states.
//! - The terminal's `:step` pages the walk its `:trace` event shows
//!   ([`Session::step_model_of`], an [`OutputStepModel`] of either kind):
//!   every step, step K's text written when shown. A number walk's steps
//!   are made by a [`StepPager`] from the trace's listing, a window of them
//!   at a time, so paging 200 000 steps holds the steps near the one shown
//!   (a tensor walk's from its model, whose steps are the tensor ops).

use rustc_hash::FxHashMap;

use super::boxes::Expand;
use super::{
    Event, Listing, Session, SessionError, TensorData, TensorName, TensorTraceStep, TraceStep,
    TraceSteps,
};
use crate::engine::tensor::TensorId;
use crate::engine::{NodeId, Op};
use crate::syntax::Span;

/// The state of one node's gradient at one step of the backward pass.
/// `G` is what a gradient is: a number (`f64`) for a scalar node, a
/// tensor's numbers ([`super::TensorData`]) for a vector or matrix node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GradState<G = f64> {
    /// No use has added to it yet: drawn blank.
    Blank,
    /// Some of its uses have added to it, not all (a fan-out): the sum so far;
    /// `before` when the step shown added to it (`grad 0 → 3`).
    Partial {
        /// The sum before this step, when this step added to it.
        before: Option<G>,
        /// The sum so far.
        sum: G,
    },
    /// Every use has added to it: the gradient ∂output/∂node; `before` when
    /// the step shown made it final (`grad 3 → 5`).
    Final {
        /// The sum before this step, when this step added to it.
        before: Option<G>,
        /// The gradient.
        sum: G,
    },
}

/// A change of one node's gradient: at `step`, its sum went from `before`
/// to `sum`; `done` when that was its last use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GradMark<G = f64> {
    /// The step (from 1).
    pub step: usize,
    /// The sum before the step (`None` for the output's seed, or for a node
    /// inside a call shown as one step, whose sums are not shown).
    pub before: Option<G>,
    /// The sum after it.
    pub sum: G,
    /// Every use of the node has added to it: the gradient is final.
    pub done: bool,
}

/// What a step model is over: the node ids of one arena, each with what its
/// gradient is and what a step's line pieces are. A number's nodes
/// ([`NodeId`]: gradients `f64`, steps [`TraceStep`]) and a tensor output's
/// ops ([`TensorId`]: gradients [`TensorData`], steps [`TensorTraceStep`])
/// are walked by the one [`StepModel`].
pub trait StepNode: Copy + std::hash::Hash + Eq + std::fmt::Debug {
    /// What a gradient of such a node is.
    type Grad: Clone + PartialEq + std::fmt::Debug;
    /// One step's line pieces, as `:trace` writes them.
    type Step: Clone + PartialEq + std::fmt::Debug;
}

impl StepNode for NodeId {
    type Grad = f64;
    type Step = TraceStep;
}

impl StepNode for TensorId {
    type Grad = TensorData;
    type Step = TensorTraceStep;
}

/// The backward walk of the output as every surface shows it (see the module
/// comment), over the nodes of either arena: `StepModel` (of [`NodeId`]) for
/// a number, `StepModel<TensorId>` for a vector or matrix output, each
/// tensor op one step as the tensor `:trace` numbers them. Made by
/// `Session::step_model` and `Session::step_model_tensors`; valid until the
/// session's next statement changes the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct StepModel<N: StepNode = NodeId> {
    /// The output's label.
    pub of: String,
    /// The constants of the order, which have no step (`:trace`'s header
    /// counts them apart; 0 for a tensor walk, whose header does not).
    pub constants: usize,
    /// What each short name (`t39`) of a tensor walk's steps stands for, as
    /// the tensor `:trace`'s header writes it (`where t39 = t32 + b`); empty
    /// for a number's walk, whose nodes are written out.
    pub legend: Vec<TensorName>,
    /// Step K at index K − 1: its line pieces.
    pub steps: Vec<N::Step>,
    /// Step K's node at index K − 1.
    nodes: Vec<N>,
    /// Each node's gradient changes, in step order.
    marks: Marks<N, N::Grad>,
    /// The step of each node processed at a step of its own.
    step_of: FxHashMap<N, usize>,
    /// The nodes inside a call shown as one step: that step.
    inside: FxHashMap<N, usize>,
    /// The rule each operand's edge carries, as `:trace` writes it:
    /// (node, operand position) → rule (a tensor walk's matrix rules).
    rules: FxHashMap<(N, usize), String>,
}

impl<N: StepNode> StepModel<N> {
    /// The model of a walk whose step K (line pieces `steps[K − 1]`)
    /// processes `nodes[K − 1]`, with each gradient's changes `marks`.
    pub(super) fn new(
        of: String,
        constants: usize,
        steps: Vec<N::Step>,
        nodes: Vec<N>,
        marks: Marks<N, N::Grad>,
    ) -> StepModel<N> {
        let step_of = nodes.iter().enumerate().map(|(i, &n)| (n, i + 1)).collect();
        StepModel {
            of,
            constants,
            legend: Vec::new(),
            steps,
            nodes,
            marks,
            step_of,
            inside: FxHashMap::default(),
            rules: FxHashMap::default(),
        }
    }

    /// How many steps the walk has (`:trace`'s count).
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    /// True for a walk with no steps.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The node step `k` (from 1) processes; `None` out of range.
    pub fn node(&self, k: usize) -> Option<N> {
        self.nodes.get(k.checked_sub(1)?).copied()
    }

    /// The step that processes `id`: its own, or that of the call shown as
    /// one step around it; `None` for a node the walk does not reach (a
    /// leaf of a tensor walk has none).
    pub fn step_of(&self, id: N) -> Option<usize> {
        self.step_of
            .get(&id)
            .or_else(|| self.inside.get(&id))
            .copied()
    }

    /// The changes of `id`'s gradient, in step order (empty for a node the
    /// walk does not reach).
    pub fn marks(&self, id: N) -> &[GradMark<N::Grad>] {
        self.marks.of(&id)
    }

    /// The state of `id`'s gradient after step `k` (0: before the pass).
    pub fn state(&self, id: N, k: usize) -> GradState<N::Grad> {
        self.marks.state(&id, k)
    }

    /// Every state `id`'s gradient takes over the walk but blank, in step
    /// order: what a picture reserves room for, so that every step of a
    /// graph has one layout.
    pub fn states(&self, id: N) -> Vec<GradState<N::Grad>> {
        self.marks.states(&id)
    }

    /// The steps at which `id`'s gradient as drawn changes, each with its
    /// state from then on: the page's timeline of one box.
    pub fn timeline(&self, id: N) -> Vec<(usize, GradState<N::Grad>)> {
        self.marks.timeline(&id)
    }

    /// The rule of the edge from operand `position` of `node`, as `:trace`
    /// writes it (a tensor walk's `outer(upstream, x)`); `None` where the
    /// model keeps none (a constant operand, a scalar walk).
    pub fn rule(&self, node: N, position: usize) -> Option<&str> {
        self.rules.get(&(node, position)).map(String::as_str)
    }

    /// Records the rule of the edge from operand `position` of `node`.
    pub(super) fn set_rule(&mut self, node: N, position: usize, rule: String) {
        self.rules.insert((node, position), rule);
    }

    /// Records that `node` is inside the call shown as one step at step `k`.
    pub(super) fn set_inside(&mut self, node: N, k: usize) {
        self.inside.insert(node, k);
    }
}

impl StepModel {
    /// Records the gradient changes of a scalar walk's `steps`.
    fn marks_of(steps: &[TraceStep]) -> Marks<NodeId, f64> {
        let mut marks: Marks<NodeId, f64> = Marks::default();
        for (i, step) in steps.iter().enumerate() {
            let k = i + 1;
            marks.seed(step.row.node.id, k, step.upstream.0);
            for c in &step.contributions {
                marks.add(
                    c.input.id,
                    GradMark {
                        step: k,
                        before: Some(c.before.0),
                        sum: c.after.0,
                        done: c.use_number >= c.use_count,
                    },
                );
            }
        }
        marks
    }
}

/// What the terminal's `:step` pages of the output's walk, whichever it
/// is: a number's (its walk, made again a window at a time by a
/// [`StepPager`], so that paging a walk of 200 000 steps holds the steps
/// near the one shown, not all of them) or a vector's or matrix's (its
/// [`StepModel`]`<TensorId>`, whose steps are the tensor ops).
#[derive(Debug, Clone, PartialEq)]
pub enum OutputStepModel {
    /// The walk of a number output's nodes.
    Numbers(NumberWalk),
    /// The walk of a tensor output, each tensor op one step.
    Tensors(StepModel<TensorId>),
}

/// A number output's backward walk as `:trace` lists it, every step of it,
/// without its steps: the listing they are made from again when shown
/// ([`Session::step_pager`]). Valid until the session's next statement.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberWalk {
    /// The output's label.
    pub of: String,
    /// How many steps the walk has.
    pub total: usize,
    /// The constants of the order, which have no step.
    pub constants: usize,
    /// The trace's listing with no step left out.
    listing: Listing,
}

impl OutputStepModel {
    /// How many steps the walk has.
    pub fn len(&self) -> usize {
        match self {
            OutputStepModel::Numbers(walk) => walk.total,
            OutputStepModel::Tensors(model) => model.len(),
        }
    }

    /// True for a walk with no steps (a tensor output that is a leaf).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How many steps of a number walk a [`StepPager`] keeps: the one shown and
/// those around it.
const WINDOW: usize = 64;

/// How many steps before the one asked for a [`StepPager`] makes when it
/// walks to it, so that ← from there needs no walk.
const BEHIND: usize = 32;

/// The steps of an [`OutputStepModel`] one at a time, as `:step` shows them
/// (made by [`Session::step_pager`]). A number walk's steps are made when
/// asked for and at most `WINDOW` (64) of them are kept: the walk goes on from
/// where it is to a later step (the steps passed on the way are walked, not
/// written out) and starts again from step 1 for an earlier step it no
/// longer keeps. So its memory is the walk's own (the gradients, as
/// `:trace`'s) and the steps kept, whatever the walk's length.
pub struct StepPager<'s> {
    session: &'s Session,
    model: &'s OutputStepModel,
    /// The number walk under way and the first step it has yet to make
    /// (from 1); `None` before the first step asked for.
    walk: Option<(Box<dyn Iterator<Item = TraceStep> + 's>, usize)>,
    /// From which step (0-based) the walk writes its steps out.
    from: std::rc::Rc<std::cell::Cell<usize>>,
    /// The steps kept, in step order.
    kept: std::collections::VecDeque<TraceStep>,
}

impl<'s> StepPager<'s> {
    /// The model paged.
    pub fn model(&self) -> &'s OutputStepModel {
        self.model
    }

    /// How many steps the walk has.
    pub fn len(&self) -> usize {
        self.model.len()
    }

    /// True for a walk with no steps.
    pub fn is_empty(&self) -> bool {
        self.model.is_empty()
    }

    /// Step `k` (from 1) of a number walk; `None` out of range, for a tensor
    /// walk, or when Ctrl-C cut the walk short.
    pub fn number_step(&mut self, k: usize) -> Option<&TraceStep> {
        let OutputStepModel::Numbers(walk) = self.model else {
            return None;
        };
        if !(1..=walk.total).contains(&k) {
            return None;
        }
        if let Some(i) = self.kept.iter().position(|s| s.row.position == k) {
            return self.kept.get(i);
        }
        if self.walk.as_ref().is_none_or(|(_, next)| k < *next) {
            // An earlier step than the walk has reached: walk again.
            let from = std::rc::Rc::clone(&self.from);
            let steps = self
                .session
                .trace_steps_where(&walk.listing, move |i| i >= from.get());
            self.walk = Some((Box::new(steps), 1));
            self.kept.clear();
        }
        let (steps, next) = self.walk.as_mut()?;
        self.from
            .set((*next).max(k.saturating_sub(BEHIND)).saturating_sub(1));
        while *next <= k {
            let step = steps.next()?;
            *next = step.row.position + 1;
            if self.kept.len() == WINDOW {
                self.kept.pop_front();
            }
            self.kept.push_back(step);
        }
        self.kept.iter().rev().find(|s| s.row.position == k)
    }
}

impl Session {
    /// The step model of the output's backward pass, its calls shown as
    /// `expand` says (one step each unless expanded, as `:trace`); `span` is
    /// the command's, for errors.
    ///
    /// Errors: as `:trace` (no output, an output built with `f'(x)` of a
    /// variable, `--expand=CALL` naming no call); Ctrl-C.
    pub(super) fn step_model(
        &mut self,
        span: Span,
        expand: &Expand,
    ) -> Result<StepModel, SessionError> {
        let mut events = Vec::new();
        self.trace(span, true, expand, &mut events)?;
        let Some(Event::Trace {
            of,
            steps:
                TraceSteps::Nodes {
                    constants,
                    steps: listing,
                    ..
                },
        }) = events.pop()
        else {
            return Err(SessionError::Interrupted { span });
        };
        self.model_of_listing(span, of, constants, &listing)
    }

    /// What the terminal's `:step` pages of the walk `trace` shows, a
    /// `:trace` (or `:step`) event of the statement this session ran last:
    /// every step of it, a long trace's middle steps too (which its text
    /// leaves out), calls shown as one step or expanded as the trace shows
    /// them, a tensor step's scalar view (`--expand=NODE`) where the trace
    /// has it. A number's walk is its listing (its steps are made when
    /// shown, [`Session::step_pager`]), a tensor's its step model. `None`
    /// for another event; `span` is the command's, for errors.
    ///
    /// Errors: (a tensor output) no output any more; Ctrl-C.
    pub fn step_model_of(
        &mut self,
        trace: &Event,
        span: Span,
    ) -> Result<Option<OutputStepModel>, SessionError> {
        let Event::Trace { of, steps } = trace else {
            return Ok(None);
        };
        Ok(Some(match steps {
            TraceSteps::Nodes {
                total,
                constants,
                steps,
                ..
            } => OutputStepModel::Numbers(NumberWalk {
                of: of.clone(),
                total: *total,
                constants: *constants,
                listing: steps.every_row(),
            }),
            TraceSteps::Tensors { steps, .. } => {
                OutputStepModel::Tensors(self.step_model_tensors_of(span, steps)?)
            }
        }))
    }

    /// The pager of `model`, a model this session made: its steps one at a
    /// time ([`StepPager`]). Valid until the session's next statement.
    pub fn step_pager<'s>(&'s self, model: &'s OutputStepModel) -> StepPager<'s> {
        StepPager {
            session: self,
            model,
            walk: None,
            from: std::rc::Rc::default(),
            kept: std::collections::VecDeque::new(),
        }
    }

    /// The step model of the scalar walk `listing` (a `:trace` listing of
    /// the output `of`, with `constants` constants) lists: every step it
    /// shows, each node's marks, and the nodes inside calls shown as one
    /// step.
    ///
    /// Errors: Ctrl-C; no output (for a call shown as one step).
    fn model_of_listing(
        &mut self,
        span: Span,
        of: String,
        constants: usize,
        listing: &Listing,
    ) -> Result<StepModel, SessionError> {
        let steps: Vec<TraceStep> = self.trace_steps(listing).collect();
        self.check_interrupt()?;
        let marks = StepModel::marks_of(&steps);
        let nodes = steps.iter().map(|s| s.row.node.id).collect();
        let mut model = StepModel::new(of, constants, steps, nodes, marks);
        // The nodes inside calls shown as one step: final at that step.
        if model.steps.iter().any(|s| s.call.is_some()) {
            let output = self.require_output(span)?;
            let (gradients, _) = self.backprop(&output, span)?;
            let order = self.order_for(output.node);
            for &id in order.iter() {
                if model.step_of.contains_key(&id) || self.graph.op(id) == Op::Const {
                    continue;
                }
                if let Some(k) = self.outer_call_step(id, &model.step_of) {
                    model.inside.insert(id, k);
                    model.marks.map.entry(id).or_default().push(GradMark {
                        step: k,
                        before: None,
                        sum: gradients[id],
                        done: true,
                    });
                }
            }
        }
        Ok(model)
    }

    /// The step of the outermost call around `id` whose output is a step of
    /// `step_of` (a call shown as one step).
    fn outer_call_step(&self, id: NodeId, step_of: &FxHashMap<NodeId, usize>) -> Option<usize> {
        let mut call = self.call_of(id);
        let mut found = None;
        while let Some(c) = call {
            let made = self.calls().get(c)?;
            found = made.output.and_then(|o| step_of.get(&o).copied()).or(found);
            call = made.parent;
        }
        found
    }
}

/// Each node's gradient changes, in step order: what [`StepModel`] keeps of
/// a walk (`K` the node's id, `G` what a gradient is), and the states every
/// surface reads from them.
#[derive(Debug, Clone)]
pub struct Marks<K, G> {
    map: FxHashMap<K, Vec<GradMark<G>>>,
}

impl<K: std::hash::Hash + Eq, G: PartialEq> PartialEq for Marks<K, G> {
    fn eq(&self, other: &Marks<K, G>) -> bool {
        self.map == other.map
    }
}

impl<K, G> Default for Marks<K, G> {
    fn default() -> Marks<K, G> {
        Marks {
            map: FxHashMap::default(),
        }
    }
}

impl<K: std::hash::Hash + Eq, G: Clone + PartialEq> Marks<K, G> {
    /// Records `id`'s seed at step `k` when nothing has added to it before
    /// (the output's gradient, or a node no use reached): final, `sum`.
    pub fn seed(&mut self, id: K, k: usize, sum: G) {
        let own = self.map.entry(id).or_default();
        if own.is_empty() {
            own.push(GradMark {
                step: k,
                before: None,
                sum,
                done: true,
            });
        }
    }

    /// Records a use's contribution to `id`'s gradient; an input read twice
    /// by one op (`x*x`) makes one change of its step.
    pub fn add(&mut self, id: K, mark: GradMark<G>) {
        let list = self.map.entry(id).or_default();
        match list.last_mut() {
            Some(last) if last.step == mark.step => {
                last.sum = mark.sum;
                last.done = mark.done;
            }
            _ => list.push(mark),
        }
    }

    /// The changes of `id`'s gradient, in step order.
    pub fn of(&self, id: &K) -> &[GradMark<G>] {
        self.map.get(id).map_or(&[], Vec::as_slice)
    }

    /// The state of `id`'s gradient after step `k` (0: before the pass).
    pub fn state(&self, id: &K, k: usize) -> GradState<G> {
        match self.of(id).iter().rev().find(|m| m.step <= k) {
            None => GradState::Blank,
            Some(mark) => {
                let before = mark.before.clone().filter(|_| mark.step == k);
                let sum = mark.sum.clone();
                match mark.done {
                    true => GradState::Final { before, sum },
                    false => GradState::Partial { before, sum },
                }
            }
        }
    }

    /// Every state `id`'s gradient takes but blank, in step order.
    pub fn states(&self, id: &K) -> Vec<GradState<G>> {
        let mut states = Vec::new();
        for mark in self.of(id) {
            for k in [mark.step, mark.step + 1] {
                let state = self.state(id, k);
                if state != GradState::Blank && !states.contains(&state) {
                    states.push(state);
                }
            }
        }
        states
    }

    /// The steps at which `id`'s gradient as drawn changes, each with its
    /// state from then on.
    pub fn timeline(&self, id: &K) -> Vec<(usize, GradState<G>)> {
        let mut timeline: Vec<(usize, GradState<G>)> = Vec::new();
        for mark in self.of(id) {
            for k in [mark.step, mark.step + 1] {
                let state = self.state(id, k);
                if timeline.last().is_none_or(|(_, last)| *last != state) {
                    timeline.push((k, state));
                }
            }
        }
        timeline
    }
}
