//! Calls of user functions drawn as one box each (`:svg` and `:dot` unless
//! `--expand`): a network of `neuron(…)` calls fits a slide when each neuron
//! is one box between its inputs and its output.
//!
//! A call is boxed when its output is in the picture and nothing outside the
//! call reads one of its other nodes (a label typed back, `2*h1.mul1`, keeps
//! that call drawn node by node). The boxed call's nodes but its output leave
//! the picture; the output keeps its value and gradient and gets one edge from
//! each node outside the call that the body reads (the arguments, and the
//! variables the body names), labelled with ∂output/∂input: the chain rule
//! through the body, every other input held fixed, by a backward pass over the
//! call's nodes (their ids are a topological order).

use rustc_hash::{FxHashMap, FxHashSet};

use super::{PictureCall, Session, SessionError};
use std::collections::HashMap;

use crate::engine::{NodeId, Op};
use crate::syntax::Span;

/// Which calls a picture or a trace shows node by node (`--expand`, or
/// `--expand=CALL` once for each call); the others are one box each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum Expand {
    /// Every call one box (no flag).
    #[default]
    None,
    /// Every call node by node (`--expand`).
    All,
    /// These calls node by node, by label (`--expand=h1 --expand=h3`); a
    /// call inside one of them is a box unless named too.
    Calls(Vec<String>, Span),
}

impl Expand {
    /// Whether the call labelled `label` is shown node by node.
    fn expands(&self, label: &str) -> bool {
        match self {
            Expand::None => false,
            Expand::All => true,
            Expand::Calls(labels, _) => labels.iter().any(|l| l == label),
        }
    }
}

/// The setting that names a call to expand (`--expand=h1`).
pub(super) const EXPAND_SETTING: &str = "--expand=";

/// How a picture draws the calls among its nodes.
pub(super) struct CallBoxes {
    /// The nodes drawn, in the order's order (output first).
    pub order: Vec<NodeId>,
    /// The inputs of each boxed call's output, with ∂output/∂input.
    pub inputs: FxHashMap<NodeId, Vec<(NodeId, f64)>>,
    /// The calls among the drawn nodes (parents before their calls).
    pub calls: Vec<PictureCall>,
    /// Each drawn node's innermost call, an index into `calls`.
    pub call_of: FxHashMap<NodeId, usize>,
    /// Each boxed output's call, an index into `calls`.
    pub boxed: FxHashMap<NodeId, usize>,
    /// Each boxed output's call, an index into [`Session::calls`], and how
    /// many of the order's nodes but constants the box stands for.
    pub sizes: FxHashMap<NodeId, (usize, usize)>,
}

impl Session {
    /// The calls of `order` (a reverse topological order, output first) to
    /// draw as boxes: each node's outermost call that `expand` does not
    /// expand. Cost: linear in the order's nodes and edges.
    ///
    /// Errors: `--expand=CALL` naming no call of the order.
    pub(super) fn call_boxes(
        &self,
        order: &[NodeId],
        expand: &Expand,
    ) -> Result<CallBoxes, SessionError> {
        let outermost: Vec<Option<usize>> =
            order.iter().map(|&id| self.box_of(id, expand)).collect();
        let drawn: FxHashSet<NodeId> = order.iter().copied().collect();
        if let Expand::Calls(labels, span) = expand {
            self.check_labels(order, labels, *span)?;
        }
        let mut boxable: FxHashSet<usize> = outermost
            .iter()
            .flatten()
            .copied()
            .filter(|&c| self.calls()[c].output.is_some_and(|o| drawn.contains(&o)))
            .collect();
        // A call read inside from outside, or holding the picture's output
        // inside, stays expanded.
        let output_of = |c: usize| self.calls()[c].output;
        for (i, &id) in order.iter().enumerate() {
            if i == 0 && outermost[0].is_some_and(|c| output_of(c) != Some(id)) {
                boxable.remove(&outermost[0].unwrap_or_default());
            }
            for &input in self.graph.operands(id) {
                let Some(c) = self.box_of(input, expand) else {
                    continue;
                };
                if outermost[i] != Some(c) && output_of(c) != Some(input) {
                    boxable.remove(&c);
                }
            }
        }
        let mut boxes = CallBoxes {
            order: Vec::new(),
            inputs: FxHashMap::default(),
            calls: Vec::new(),
            call_of: FxHashMap::default(),
            boxed: FxHashMap::default(),
            sizes: FxHashMap::default(),
        };
        let mut members: FxHashMap<usize, Vec<NodeId>> = FxHashMap::default();
        let mut index: FxHashMap<usize, usize> = FxHashMap::default();
        for (i, &id) in order.iter().enumerate() {
            match outermost[i] {
                Some(c) if boxable.contains(&c) => {
                    members.entry(c).or_default().push(id);
                    if output_of(c) == Some(id) {
                        boxes.order.push(id);
                        let at = self.picture_call(c, true, &mut boxes.calls, &mut index);
                        boxes.boxed.insert(id, at);
                    }
                }
                _ => {
                    boxes.order.push(id);
                    if let Some(c) = self.calls.call_of(id) {
                        let at = self.picture_call(c, false, &mut boxes.calls, &mut index);
                        boxes.call_of.insert(id, at);
                    }
                }
            }
        }
        for (c, nodes) in members {
            if let Some(output) = output_of(c) {
                let size = nodes
                    .iter()
                    .filter(|&&id| self.graph.op(id) != crate::engine::Op::Const)
                    .count();
                boxes.sizes.insert(output, (c, size));
                boxes
                    .inputs
                    .insert(output, self.box_inputs(c, output, nodes));
            }
        }
        Ok(boxes)
    }

    /// The call whose box `id` would be drawn in: the outermost call around
    /// it that `expand` does not expand.
    fn box_of(&self, id: NodeId, expand: &Expand) -> Option<usize> {
        let mut chain = vec![self.calls.call_of(id)?];
        while let Some(parent) = self.calls()[chain[chain.len() - 1]].parent {
            chain.push(parent);
        }
        chain
            .into_iter()
            .rev()
            .find(|&c| !expand.expands(&self.calls()[c].label))
    }

    /// Errors for a label of `--expand=CALL` that no call among `order`'s
    /// nodes has, listing those that do.
    fn check_labels(
        &self,
        order: &[NodeId],
        labels: &[String],
        span: Span,
    ) -> Result<(), SessionError> {
        let mut present: Vec<usize> = Vec::new();
        for &id in order {
            let mut call = self.calls.call_of(id);
            while let Some(c) = call {
                if !present.contains(&c) {
                    present.push(c);
                }
                call = self.calls()[c].parent;
            }
        }
        present.sort_unstable();
        let known: Vec<&str> = present
            .iter()
            .map(|&c| self.calls()[c].label.as_str())
            .collect();
        match labels.iter().find(|l| !known.contains(&l.as_str())) {
            None if !labels.is_empty() => Ok(()),
            missing => Err(SessionError::BadArguments {
                message: match missing {
                    Some(label) => format!("no call labelled `{label}` in the output's graph"),
                    None => "`--expand=` takes the labels of calls, e.g. `--expand=h1`".to_string(),
                },
                span,
                help: Some(match known.is_empty() {
                    true => "the output's graph has no calls of user functions".to_string(),
                    false => format!("its calls: {}", known.join(", ")),
                }),
            }),
        }
    }

    /// The index in `calls` of session call `c`, added (after its parents)
    /// the first time.
    fn picture_call(
        &self,
        c: usize,
        boxed: bool,
        calls: &mut Vec<PictureCall>,
        index: &mut FxHashMap<usize, usize>,
    ) -> usize {
        // The chain from `c` out to the first call already listed.
        let mut chain = vec![c];
        while let Some(parent) = self.calls()[*chain.last().unwrap_or(&c)].parent {
            if index.contains_key(&parent) {
                break;
            }
            chain.push(parent);
        }
        for &call in chain.iter().rev() {
            if index.contains_key(&call) {
                continue;
            }
            let session_call = &self.calls()[call];
            index.insert(call, calls.len());
            calls.push(PictureCall {
                label: session_call.label.clone(),
                function: session_call.function.clone(),
                written: self.call_written(call, &self.names_by_node()),
                args: session_call.args.len(),
                parent: session_call.parent.and_then(|p| index.get(&p).copied()),
                output: session_call.output,
                boxed: boxed && call == c,
            });
        }
        index[&c]
    }

    /// Call `c` (an index into [`Session::calls`]) as written: the function
    /// and its arguments' labels by `names` (constants as numbers), `h(a, 3)`.
    pub(super) fn call_written(&self, c: usize, names: &HashMap<NodeId, &str>) -> String {
        let call = &self.calls()[c];
        let args: Vec<String> = call
            .args
            .iter()
            .map(|&a| match (self.graph.op(a), names.get(&a)) {
                (Op::Const, _) => self.graph.value(a).to_string(),
                (_, Some(name)) => name.to_string(),
                (_, None) => format!("_{}", a.index()),
            })
            .collect();
        format!("{}({})", call.function, args.join(", "))
    }

    /// The inputs of a boxed call (the nodes outside `nodes` that they read,
    /// its arguments first) with ∂output/∂input through the body.
    fn box_inputs(&self, c: usize, output: NodeId, mut nodes: Vec<NodeId>) -> Vec<(NodeId, f64)> {
        nodes.sort_unstable_by(|a, b| b.cmp(a));
        let inside: FxHashSet<NodeId> = nodes.iter().copied().collect();
        let mut grads: FxHashMap<NodeId, f64> = FxHashMap::default();
        grads.insert(output, 1.0);
        let mut inputs: Vec<NodeId> = Vec::new();
        for &id in &nodes {
            let upstream = grads.get(&id).copied().unwrap_or(0.0);
            for (position, &input) in self.graph.operands(id).iter().enumerate() {
                let passes = self.passes(id, position);
                let add = if passes {
                    upstream * self.local_derivative(id, position)
                } else {
                    0.0
                };
                *grads.entry(input).or_default() += add;
                if !inside.contains(&input) && !inputs.contains(&input) {
                    inputs.push(input);
                }
            }
        }
        // Arguments first, in parameter order; then the rest by id.
        let args = &self.calls()[c].args;
        inputs.sort_by_key(|id| (args.iter().position(|a| a == id).unwrap_or(usize::MAX), *id));
        inputs.into_iter().map(|id| (id, grads[&id])).collect()
    }
}
