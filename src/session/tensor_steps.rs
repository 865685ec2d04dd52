//! The step model of a tensor output: the backward walk of `:trace` over the
//! tensor graph made once as data — the one [`StepModel`], over the tensor
//! graph's nodes — which `:step`, `:quiz`, the `:svg --step K` and
//! `--steps` slides, `:dot` and the page draw, as for a scalar output.
//!
//! - The steps are the tensor `:trace`'s: each tensor op one step (leaves
//!   and constants have none), numbered from 1, each with its line pieces
//!   ([`super::TensorTraceStep`]: the node, its upstream gradient, each operand's
//!   matrix rule with shapes and what it receives).
//! - Each node's gradient, a tensor of the node's shape, has a state at
//!   every step ([`GradState`] over [`TensorData`]): blank until a use adds
//!   to it, partial with its sum so far while uses of a fan-out are still to
//!   come, final once every use has added (the output from step 1) — the
//!   same states, kept by the same [`Marks`](super::steps::Marks), as a scalar node's.

use rustc_hash::FxHashMap;

use super::TopoRows;
use super::steps::{GradState, StepModel};
use super::tensor_trace::{ModelMarks, TraceLines};
use super::tensors::{tensor_data, tensor_error};
use super::{Event, Picture, PictureStep, Session, SessionError, TensorData};
use crate::engine::Op;
use crate::engine::tensor::{Tensor, TensorId, TensorOp};
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
    /// (`@`, `tanh`, `* 2`); `None` for a leaf, a bridged scalar or a constant.
    pub op: Option<String>,
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
    /// The step model of the tensor output's backward pass; `span` is the
    /// command's, for errors.
    ///
    /// Errors: no tensor output; Ctrl-C.
    pub(super) fn step_model_tensors(
        &mut self,
        span: Span,
    ) -> Result<StepModel<TensorId>, SessionError> {
        self.step_model_tensors_expanded(span, &[])
    }

    /// The step model of the tensor output's backward pass with the steps
    /// of the nodes labelled `expand` shown element by element, as
    /// `:trace --expand=NODE` shows them (a label that is no step expands
    /// nothing); `span` is the command's, for errors. The model keeps the
    /// trace's legend of short names.
    ///
    /// Errors: no tensor output; Ctrl-C.
    pub(super) fn step_model_tensors_expanded(
        &mut self,
        span: Span,
        expand: &[&str],
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
        self.check_gradient_budget(output.node, span)?;
        let (labels, legend) = self.labels_and_legend(output.node);
        let graph = &self.tensors.graph;
        let expanded: Vec<(TensorId, &str, Span)> = match expand {
            [] => Vec::new(),
            _ => graph
                .step_nodes(output.node)
                .into_iter()
                .filter_map(|id| {
                    let label = expand.iter().find(|&&name| labels[id.index()] == name)?;
                    Some((id, *label, span))
                })
                .collect(),
        };
        // One walk, read as it runs: the trace's lines and the marks.
        let mut lines = TraceLines::new(graph, &labels, &output.label, &expanded).with_marks();
        graph.backward_read(output.node, &mut lines);
        if graph.interrupted() {
            return Err(SessionError::Interrupted { span });
        }
        let ModelMarks { marks, rules } = lines.model.unwrap_or_default();
        let mut model = StepModel::new(output.label.clone(), 0, lines.steps, lines.nodes, marks);
        model.legend = legend;
        for ((node, position), rule) in rules {
            model.set_rule(node, position, rule);
        }
        Ok(model)
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
    /// the finished pass).
    pub(super) fn picture_at(
        &self,
        model: &StepModel<TensorId>,
        step: Option<usize>,
        direction: super::Direction,
    ) -> Picture {
        let output = self.shaped_output().map_or(TensorId(0), |o| o.node);
        let labels = self.tensor_labels(output);
        let graph = &self.tensors.graph;
        let folded = |id: TensorId| graph.op(id) == TensorOp::Const && graph.shape(id).rank() == 0;
        let mut order = graph.topo_order(output);
        order.reverse();
        order.retain(|&id| !folded(id));
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
                let mut sign = model.step_of(id).map_or_else(
                    || op.info().name.to_string(),
                    |k| model.steps[k - 1].op.clone(),
                );
                for (position, &operand) in graph.operands(id).iter().enumerate() {
                    match at.get(&operand) {
                        Some(&input) => edges.push(TensorPictureEdge {
                            input,
                            node: i,
                            rule: model.rule(id, position).unwrap_or_default().to_string(),
                        }),
                        // A constant of shape (): written in the op's label.
                        None if position == 0 => {
                            sign = format!("{} {sign}", labels[operand.index()])
                        }
                        None => sign = format!("{sign} {}", labels[operand.index()]),
                    }
                }
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
                    label: labels[id.index()].clone(),
                    op: computed.then_some(sign),
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
                step_nodes: model.steps.iter().map(|s| s.node.clone()).collect(),
            })),
        }
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
        let picture = self.picture_at(&model, None, super::Direction::Auto);
        Ok(super::Page {
            picture,
            expanded: None,
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
