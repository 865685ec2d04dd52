//! The step model of a tensor output: the backward walk of `:trace` over the
//! tensor graph made once as data — the one [`StepModel`], over the tensor
//! graph's nodes — which `:step`, `:quiz`, the `:svg --step K` and
//! `--steps` slides, `:dot` and the page draw, as for a scalar output.
//!
//! - The steps are the tensor `:trace`'s, read by the same walk
//!   ([`Session::traced_walk`]): each tensor op one step (leaves and
//!   constants have none) and each call of a user function one step unless
//!   `--expand` opens it, numbered from 1, each with its line pieces
//!   ([`super::TensorTraceStep`]: the node, its upstream gradient, each operand's
//!   matrix rule with shapes and what it receives).
//! - A call shown as one step is drawn as one box ([`Session::picture_at`]),
//!   as a call of numbers is; a node inside it is final at the call's step
//!   (what the page's view of every node shows).
//! - Each node's gradient, a tensor of the node's shape, has a state at
//!   every step ([`GradState`] over [`TensorData`]): blank until a use adds
//!   to it, partial with its sum so far while uses of a fan-out are still to
//!   come, final once every use has added (the output from step 1) — the
//!   same states, kept by the same [`Marks`](super::steps::Marks), as a scalar node's.

use rustc_hash::FxHashMap;

use super::TopoRows;
use super::boxes::Expand;
use super::steps::{GradState, StepModel};
use super::tensor_trace::ModelMarks;
use super::tensors::{tensor_data, tensor_error};
use super::{Event, Picture, PictureStep, Session, SessionError, TensorData};
use crate::engine::Op;
use crate::engine::tensor::{Tensor, TensorGraph, TensorId, TensorOp};
use crate::syntax::{Ident, Span};

use super::error::ErrorCode;

/// A node of a tensor picture: a box with the name, shape and values, and
/// the gradient in its state at the picture's moment.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorPictureNode {
    /// The node.
    pub id: TensorId,
    /// The node as `:trace` names it (`W`, `W @ x`, `t7`).
    pub label: String,
    /// The op that computes it with the constants it reads folded in
    /// (`@`, `tanh`, `* 2`), or the function's name for a whole call drawn
    /// as one box; `None` for a leaf, a bridged scalar or a constant.
    pub op: Option<String>,
    /// A whole call of a user function drawn as one box (its body left
    /// out; `label` the call as written when no variable names it).
    pub call: bool,
    /// Its value (and so its shape).
    pub value: TensorData,
    /// Its gradient at the picture's moment (final in a finished picture;
    /// blank for a constant, which receives none).
    pub state: GradState<TensorData>,
    /// Every state the gradient takes over the pass but blank.
    pub states: Vec<GradState<TensorData>>,
    /// The node the step shown has just processed.
    pub current: bool,
    /// A leaf: a variable (or a scalar variable bridged in).
    pub leaf: bool,
}

/// An edge of a tensor picture: node `input` feeds the op of node `node`
/// (indices into [`TensorPicture::nodes`]), labelled with the matrix rule
/// of what it receives.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorPictureEdge {
    /// The operand.
    pub input: usize,
    /// The consumer.
    pub node: usize,
    /// `outer(upstream, x)`, `Wᵀ @ upstream`, …; empty for a constant operand.
    pub rule: String,
}

/// The graph of a tensor output, for a picture ([`Picture::tensor`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TensorPicture {
    /// The nodes drawn, inputs first (a topological order); constants of
    /// shape `()` are folded into their op's label instead.
    pub nodes: Vec<TensorPictureNode>,
    /// The edges, each operand once per use.
    pub edges: Vec<TensorPictureEdge>,
    /// The label of step K's node at index K − 1: every step's title gets
    /// room, so all steps share one canvas.
    pub step_nodes: Vec<String>,
}

/// A row of `:topo` of a tensor output.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TensorTopoRow {
    /// The node as `:trace` names it.
    pub node: String,
    /// What computes it over its operands' names (`W @ x`), `leaf` or
    /// `constant`.
    pub computes: String,
    /// Its shape as gradcalc writes it (`2×3`, `3`, `()`).
    pub shape: String,
    /// Its step of the backward pass (`:trace`'s numbering), if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
}

impl Session {
    /// The step model of the tensor output's backward pass, each call of a
    /// user function one step (as `:trace` shows it); `span` is the
    /// command's, for errors.
    ///
    /// Errors: no tensor output; Ctrl-C.
    pub(super) fn step_model_tensors(
        &mut self,
        span: Span,
    ) -> Result<StepModel<TensorId>, SessionError> {
        self.step_model_tensors_expanded(span, &[])
    }

    /// The step model of the walk a tensor `:trace` (or `:step`) showed in
    /// `steps`: its calls shown as one step where it shows them so, the
    /// others step by step, and the steps it shows element by element
    /// (`--expand=NODE`) so again. `span` is the command's, for errors.
    ///
    /// Errors: no tensor output; Ctrl-C.
    pub(super) fn step_model_tensors_of(
        &mut self,
        span: Span,
        steps: &[super::TensorTraceStep],
    ) -> Result<StepModel<TensorId>, SessionError> {
        let output = self.shaped_output().map_or(TensorId(0), |o| o.node);
        let shown: Vec<&str> = steps
            .iter()
            .filter_map(|s| s.call.as_ref().map(|c| c.label.as_str()))
            .collect();
        let mut opened = self.call_labels(output);
        opened.retain(|label| !shown.contains(&label.as_str()));
        let elements = steps
            .iter()
            .filter(|s| s.contributions.iter().any(|c| !c.elements.is_empty()))
            .map(|s| s.node.clone());
        let names: Vec<String> = opened.into_iter().chain(elements).collect();
        let expand: Vec<(&str, Span)> = names.iter().map(|n| (n.as_str(), span)).collect();
        self.step_model_tensors_expanded(span, &expand)
    }

    /// The step model of the tensor output's backward pass with the calls
    /// and steps `expand` names opened, as `:trace --expand=…` opens them
    /// ([`Session::traced_walk`]): a call's label or function's name shows
    /// its steps, a step's node its scalar view. `span` is the command's,
    /// for errors. The model keeps the trace's legend of short names; a
    /// node inside a call shown as one step is final at the call's step.
    ///
    /// Errors: no tensor output; a name that is no call nor step; Ctrl-C.
    pub(super) fn step_model_tensors_expanded(
        &mut self,
        span: Span,
        expand: &[(&str, Span)],
    ) -> Result<StepModel<TensorId>, SessionError> {
        let no_output = || {
            tensor_error(
                ErrorCode::BadArguments,
                span,
                "there is no tensor output to step through",
                None,
            )
        };
        let output = self.shaped_output().ok_or_else(no_output)?;
        let walk = self.traced_walk(output.node, &output.label, span, expand, true)?;
        let ModelMarks {
            marks,
            rules,
            inside,
        } = walk.model.unwrap_or_default();
        let mut model = StepModel::new(output.label.clone(), 0, walk.steps, walk.nodes, marks);
        model.legend = walk.legend;
        for ((node, position), rule) in rules {
            model.set_rule(node, position, rule);
        }
        for (node, step) in inside {
            model.set_inside(node, step);
        }
        Ok(model)
    }

    /// The step model a picture of the tensor output draws (`:svg`,
    /// `:dot`): its calls one step each but those `expand` opens (a bare
    /// `--expand` every call), as `:trace --expand` opens them.
    ///
    /// Errors: as [`Session::step_model_tensors_expanded`].
    pub(super) fn step_model_tensors_drawn(
        &mut self,
        span: Span,
        expand: &Expand,
    ) -> Result<StepModel<TensorId>, SessionError> {
        let names = self.expand_names(expand, span);
        let expand: Vec<(&str, Span)> = names.iter().map(|(n, at)| (n.as_str(), *at)).collect();
        self.step_model_tensors_expanded(span, &expand)
    }

    /// The names `expand` opens in the tensor output's walk, each where it
    /// was typed (`span` for a bare `--expand`, which opens every call made
    /// up to the output).
    fn expand_names(&self, expand: &Expand, span: Span) -> Vec<(String, Span)> {
        let output = self.shaped_output().map_or(TensorId(0), |o| o.node);
        match expand {
            Expand::None => Vec::new(),
            Expand::All => self
                .call_labels(output)
                .into_iter()
                .map(|label| (label, span))
                .collect(),
            Expand::Calls(names, at) => names.iter().map(|n| (n.clone(), *at)).collect(),
        }
    }

    /// `:topo` of a tensor output: its nodes in reverse topological order,
    /// output first, each with what computes it, its shape and its step.
    ///
    /// Built from the graph's structure and shapes alone: no value is copied
    /// or computed, so a listing of two 4600×4600 products costs what it
    /// writes.
    pub(super) fn topo_tensors(
        &mut self,
        span: Span,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let Some(super::Output {
            node: output,
            label: of,
        }) = self.shaped_output()
        else {
            return Err(tensor_error(
                ErrorCode::BadArguments,
                span,
                "there is no tensor output to step through",
                None,
            ));
        };
        let labels = self.tensor_labels(output);
        let graph = &self.tensors.graph;
        let steps: FxHashMap<TensorId, usize> = graph
            .step_nodes(output)
            .into_iter()
            .enumerate()
            .map(|(i, id)| (id, i + 1))
            .collect();
        let rows = graph
            .topo_order(output)
            .into_iter()
            .map(|id| {
                let operands: Vec<&str> = graph
                    .operands(id)
                    .iter()
                    .map(|o| labels[o.index()].as_str())
                    .collect();
                TensorTopoRow {
                    node: labels[id.index()].clone(),
                    computes: computes(graph.op(id), &operands),
                    shape: graph.shape(id).to_string(),
                    step: steps.get(&id).copied(),
                }
            })
            .collect();
        events.push(Event::Topo {
            of,
            rows: TopoRows::Tensors {
                shape: graph.shape(output).dims().to_vec(),
                rows,
            },
        });
        Ok(())
    }

    /// The picture of the tensor output at step `step` of `model` (`None`:
    /// the finished pass). With `boxed`, each call the model shows as one
    /// step is drawn as one box, as a picture of numbers draws a call: its
    /// body's nodes left out, its output's op the function's name, and one
    /// edge from each node outside the call that the body reads, labelled
    /// with the call step's rule for it; without, node by node.
    pub(super) fn picture_at(
        &self,
        model: &StepModel<TensorId>,
        step: Option<usize>,
        direction: super::Direction,
        boxed: bool,
    ) -> Picture {
        let output = self.shaped_output().map_or(TensorId(0), |o| o.node);
        let labels = self.tensor_labels(output);
        let graph = &self.tensors.graph;
        let boxes = match boxed {
            true => self.picture_boxes(model),
            false => Vec::new(),
        };
        let box_with_output = |id: TensorId| boxes.iter().find(|b| b.call.output == id);
        let hidden = |id: TensorId| {
            boxes
                .iter()
                .any(|b| b.call.holds(id, graph) && b.call.output != id)
        };
        let folded = |id: TensorId| graph.op(id) == TensorOp::Const && graph.shape(id).rank() == 0;
        let mut order = graph.topo_order(output);
        order.reverse();
        order.retain(|&id| !folded(id) && !hidden(id));
        let at: FxHashMap<TensorId, usize> =
            order.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        let current = step.and_then(|k| model.node(k));
        let last = model.len();
        let mut edges = Vec::new();
        let nodes = order
            .iter()
            .enumerate()
            .map(|(i, &id)| {
                let op = graph.op(id);
                let leaf = matches!(op, TensorOp::Variable | TensorOp::Scalar(_));
                let computed = !leaf && op != TensorOp::Const;
                let mut label = labels[id.index()].clone();
                let sign = match box_with_output(id) {
                    Some(b) => {
                        for (input, rule) in b.inputs(graph, &labels, &model.steps[b.step - 1]) {
                            if let Some(&input) = at.get(&input) {
                                edges.push(TensorPictureEdge {
                                    input,
                                    node: i,
                                    rule,
                                });
                            }
                        }
                        label = b.name(&label);
                        b.call.function.clone()
                    }
                    None => self.picture_operands(model, id, i, &at, &labels, &mut edges),
                };
                let state = match (step, model.state(id, step.unwrap_or(last))) {
                    // A leaf output has no step: its gradient is ones.
                    (None, GradState::Blank) if id == output => GradState::Final {
                        before: None,
                        sum: tensor_data(&Tensor::ones(graph.shape(id))),
                    },
                    (_, state) => state,
                };
                TensorPictureNode {
                    id,
                    label,
                    op: computed.then_some(sign),
                    call: box_with_output(id).is_some(),
                    value: tensor_data(graph.value(id)),
                    state,
                    states: model.states(id),
                    current: current == Some(id),
                    leaf,
                }
            })
            .collect();
        Picture {
            of: model.of.clone(),
            nodes: Vec::new(),
            edges: Vec::new(),
            step: step.map(|number| PictureStep {
                number,
                last,
                nodes: Vec::new(),
            }),
            groups: Vec::new(),
            calls: Vec::new(),
            direction,
            tensor: Some(Box::new(TensorPicture {
                nodes,
                edges,
                step_nodes: model
                    .steps
                    .iter()
                    .map(|s| match boxes.iter().find(|b| b.step == s.step) {
                        Some(b) => b.name(&s.node),
                        None => s.node.clone(),
                    })
                    .collect(),
            })),
        }
    }

    /// The edges into node `id` (drawn at index `i`) from its operands
    /// drawn (`at`), each labelled with the rule `model` keeps for it;
    /// returns the node's op label, the constants of shape `()` it reads
    /// written in it (`* 2`).
    fn picture_operands(
        &self,
        model: &StepModel<TensorId>,
        id: TensorId,
        i: usize,
        at: &FxHashMap<TensorId, usize>,
        labels: &[String],
        edges: &mut Vec<TensorPictureEdge>,
    ) -> String {
        let graph = &self.tensors.graph;
        let mut sign = super::tensors::op_name(graph.op(id));
        for (position, &operand) in graph.operands(id).iter().enumerate() {
            match at.get(&operand) {
                Some(&input) => edges.push(TensorPictureEdge {
                    input,
                    node: i,
                    rule: model.rule(id, position).unwrap_or_default().to_string(),
                }),
                // A constant of shape (): written in the op's label.
                None if position == 0 => sign = format!("{} {sign}", labels[operand.index()]),
                None => sign = format!("{sign} {}", labels[operand.index()]),
            }
        }
        sign
    }

    /// The calls `model` shows as one step each, with their steps.
    fn picture_boxes<'a>(&'a self, model: &'a StepModel<TensorId>) -> Vec<PictureBox<'a>> {
        let calls = self.tensors.calls.list();
        model
            .steps
            .iter()
            .filter_map(|s| {
                let shown = s.call.as_ref()?;
                let call = calls.iter().find(|c| c.label == shown.label)?;
                Some(PictureBox {
                    call,
                    shown,
                    step: s.step,
                })
            })
            .collect()
    }
}

/// A call of a user function drawn as one box of a tensor picture.
struct PictureBox<'a> {
    /// The call.
    call: &'a super::tensors::TensorCall,
    /// The call as its step shows it.
    shown: &'a super::TensorTraceCall,
    /// Its step.
    step: usize,
}

impl PictureBox<'_> {
    /// The name of the box of the call's output, labelled `label`: the
    /// variable that names it, else the call as written over its
    /// arguments' labels (`layer(W, x, b)`), as a picture of numbers
    /// names a call's box.
    fn name(&self, label: &str) -> String {
        let short = label == format!("t{}", self.call.output.index());
        match crate::syntax::is_name(label) && !short {
            true => label.to_string(),
            false => format!("{}({})", self.shown.function, self.shown.args.join(", ")),
        }
    }

    /// The nodes outside the call that its body reads (its arguments, the
    /// variables it names, the literals typed in it), each with the rule
    /// of its line of the call's step `step` (empty for a literal, which
    /// has none): the lines' order, then the other inputs by id.
    fn inputs(
        &self,
        graph: &TensorGraph,
        labels: &[String],
        step: &super::TensorTraceStep,
    ) -> Vec<(TensorId, String)> {
        let mut inputs: Vec<TensorId> = Vec::new();
        for k in self.call.first.index()..=self.call.output.index() {
            let id = TensorId(k as u32);
            if !self.call.holds(id, graph) {
                continue;
            }
            for &operand in graph.operands(id) {
                if !self.call.holds(operand, graph) && !inputs.contains(&operand) {
                    inputs.push(operand);
                }
            }
        }
        let line = |id: &TensorId| {
            step.contributions
                .iter()
                .position(|c| c.input == labels[id.index()])
        };
        inputs.sort_by_key(|id| (line(id).unwrap_or(usize::MAX), *id));
        inputs
            .into_iter()
            .map(|id| {
                let rule =
                    line(&id).map_or_else(String::new, |k| step.contributions[k].rule.clone());
                (id, rule)
            })
            .collect()
    }
}

impl Session {
    /// The page of `:html` and `:serve` for the tensor output: its finished
    /// picture and its step model.
    ///
    /// Errors: Ctrl-C.
    pub(super) fn page_tensors(&mut self, name: &Ident) -> Result<super::Page, SessionError> {
        self.check_tensor_picture_size(name)?;
        let model = self.step_model_tensors(name.span)?;
        let picture = self.picture_at(&model, None, super::Direction::Auto, true);
        // Calls drawn as boxes: the page also has every node drawn, the
        // same steps lighting the call's output.
        let expanded = model
            .steps
            .iter()
            .any(|s| s.call.is_some())
            .then(|| self.picture_at(&model, None, super::Direction::Auto, false));
        Ok(super::Page {
            picture,
            expanded,
            steps: Err("a tensor output: its steps are the tensor steps".to_string()),
            tensor: Some(Box::new(model)),
        })
    }
}

/// The most tensor nodes a picture, a page or the live page (`:svg`,
/// `:dot`, `:html`, `:serve`) draws: as for scalars.
const TENSOR_PICTURE_NODES: usize = super::exports::PICTURE_NODES;

impl Session {
    /// Refuses a picture or page of the tensor output (command `name`) of
    /// more than [`TENSOR_PICTURE_NODES`] nodes, before anything is built:
    /// the message of the scalar pictures, with what works for tensors.
    pub(super) fn check_tensor_picture_size(&self, name: &Ident) -> Result<(), SessionError> {
        let Some(super::Output {
            node: output,
            label: of,
        }) = &self.shaped_output()
        else {
            return Ok(());
        };
        let count = self.tensors.graph.topo_order(*output).len();
        if count <= TENSOR_PICTURE_NODES {
            return Ok(());
        }
        Err(SessionError::BadArguments {
            message: format!(
                "the graph of {of} has {count} nodes: `:{}` draws at most {TENSOR_PICTURE_NODES}",
                name.name
            ),
            span: name.span,
            help: Some(
                "`:topo` lists a tensor graph of any size and `:trace` writes its steps; or make a part of it the output (`:grad` of a smaller expression named) to draw that"
                    .to_string(),
            ),
        })
    }
}

/// What computes a node of op `op` over its operands' labels, as `:topo`
/// writes it: `W @ x`, `tanh(u)`, `leaf`.
fn computes(op: TensorOp, operands: &[&str]) -> String {
    let name = match op {
        TensorOp::Variable | TensorOp::Scalar(_) => return "leaf".to_string(),
        TensorOp::Const => return "constant".to_string(),
        TensorOp::Elementwise(op) => op.info().name,
        op => op.info().name,
    };
    let sum = matches!(op, TensorOp::Elementwise(Op::Add | Op::Sub));
    // An operand in brackets where it binds less tightly: a sum inside
    // anything but a sum, any compound operand of a postfix or a sign.
    let wrap = |text: &str| {
        let compound = text.contains(' ');
        let is_sum = text.contains(" + ") || text.contains(" - ");
        if compound && (operands.len() == 1 || is_sum && !sum) {
            format!("({text})")
        } else {
            text.to_string()
        }
    };
    match (op, operands) {
        (TensorOp::Elementwise(Op::Neg), [a]) => format!("-{}", wrap(a)),
        (TensorOp::Transpose, [a]) => format!("{}ᵀ", wrap(a)),
        (TensorOp::Index(i), [a]) => format!("{}[{i}]", wrap(a)),
        (TensorOp::Index2(i, j), [a]) => format!("{}[{i}, {j}]", wrap(a)),
        (TensorOp::SumAxis(axis), [a]) => format!("sum({a}, {axis})"),
        (TensorOp::SumKeepDims(axis), [a]) => format!("sum({a}, {axis}, keepdims)"),
        (TensorOp::Outer, [a, b]) => format!("outer({a}, {b})"),
        (_, [a, b]) => format!("{} {name} {}", wrap(a), wrap(b)),
        _ => format!("{name}({})", operands.join(", ")),
    }
}
