//! Calls of user functions on tensors: which call built each tensor node,
//! so that `:trace` shows a call as one step (its rule composed from the
//! body's rules, its gradients the sums of what the body passes out), as
//! it does for numbers ([`super::super::calls`]); `--expand=CALL` shows
//! the body's steps.
//!
//! A call's nodes are one run of ids: the graph's length when it began up
//! to its output, the last node its body built (operands come before their
//! users). A call whose value is not a node it built (`f(x) = x`, a folded
//! number) is not recorded: it has no step of its own.

use crate::engine::tensor::{TensorGraph, TensorId, TensorOp};

/// One call of a user function on tensors.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::session) struct TensorCall {
    /// The function's name (`layer`).
    pub function: String,
    /// The call's label (`layer1`), numbered per function from 1 as calls
    /// of numbers are.
    pub label: String,
    /// The arguments: a node, or the text of a number or literal typed in
    /// the call (not a node of the graph).
    pub args: Vec<Result<TensorId, String>>,
    /// The first id the call's body could build.
    pub first: TensorId,
    /// The node the call returned (the last its body built).
    pub output: TensorId,
}

/// The calls of user functions on tensors, in the order they finished.
#[derive(Debug, Default)]
pub(in crate::session) struct TensorCalls {
    list: Vec<TensorCall>,
}

impl TensorCalls {
    /// The calls, in the order they finished (a call inside another before it).
    pub fn list(&self) -> &[TensorCall] {
        &self.list
    }

    /// Records the call of `function` on `args` whose body built the nodes
    /// from `first` to the graph's end, when its value is the last of them
    /// (`output`); `number` is its number among the calls of `function`.
    pub fn record(
        &mut self,
        function: &str,
        number: u32,
        args: Vec<Result<TensorId, String>>,
        first: usize,
        output: Option<TensorId>,
        graph: &TensorGraph,
    ) {
        let Some(output) = output else {
            return;
        };
        if output.index() < first || output.index() + 1 != graph.len() {
            return;
        }
        let separator = if function.ends_with(|c: char| c.is_numeric()) {
            "_"
        } else {
            ""
        };
        self.list.push(TensorCall {
            function: function.to_string(),
            label: format!("{function}{separator}{number}"),
            args,
            first: TensorId(first as u32),
            output,
        });
    }

    /// The number the next call of `function` takes: one more than the
    /// last recorded call's of it.
    pub fn next_number(&self, function: &str) -> u32 {
        1 + self
            .list
            .iter()
            .filter(|c| c.function == function)
            .filter_map(|c| {
                c.label[function.len()..]
                    .trim_start_matches('_')
                    .parse::<u32>()
                    .ok()
            })
            .max()
            .unwrap_or(0)
    }

    /// Forgets the calls past a graph truncated to `len` nodes (an undone
    /// statement, a value kept as a new leaf).
    pub fn truncate(&mut self, len: usize) {
        self.list.retain(|c| c.output.index() < len);
    }
}

/// A call drawn as one step of a tensor trace: the run of ids it built.
#[derive(Debug, Clone)]
pub(in crate::session) struct CallBox {
    /// The call's label (`layer1`).
    pub label: String,
    /// The function called (`layer`).
    pub function: String,
    /// The call as written over its arguments' labels (`layer(W, x, b)`).
    pub written: String,
    /// The arguments as written: a node's label, or the text typed.
    pub arg_texts: Vec<String>,
    /// The arguments' nodes (`None`: a number or literal typed in the call).
    pub args: Vec<Option<TensorId>>,
    /// The first id of the run.
    pub first: TensorId,
    /// The call's output, the last id of the run.
    pub output: TensorId,
    /// How many steps of the trace the box stands for.
    pub steps: usize,
}

impl CallBox {
    /// Whether `id` is a node the box stands for: in its run, and not a
    /// number bridged from the scalar graph (a variable the body names is
    /// an input of the call, as an argument is).
    pub fn holds(&self, id: TensorId, graph: &TensorGraph) -> bool {
        in_run(self.first, self.output, id, graph)
    }
}

impl TensorCall {
    /// Whether `id` is a node of the call's run but a number bridged from
    /// the scalar graph (as [`CallBox::holds`]).
    pub fn holds(&self, id: TensorId, graph: &TensorGraph) -> bool {
        in_run(self.first, self.output, id, graph)
    }
}

/// Whether `id` is in the run of ids `first..=output` and not a number
/// bridged from the scalar graph (a variable the body names is an input of
/// the call, as an argument is).
fn in_run(first: TensorId, output: TensorId, id: TensorId, graph: &TensorGraph) -> bool {
    first <= id && id <= output && !matches!(graph.op(id), TensorOp::Scalar(_))
}

/// The calls among the trace's `steps` (its nodes that pass a gradient on)
/// to show as one step each: the outermost calls not named by `expanded`
/// (labels, or functions' names: every call of it), whose output is a step.
pub(in crate::session) fn call_boxes(
    calls: &[TensorCall],
    steps: &[TensorId],
    expanded: &[&str],
    labels: &[String],
    graph: &TensorGraph,
) -> Vec<CallBox> {
    let opened = |c: &TensorCall| expanded.iter().any(|e| *e == c.label || *e == c.function);
    let mut boxes: Vec<CallBox> = Vec::new();
    // Outer calls finish after their inner calls: from the last back, an
    // outer call comes first.
    for call in calls.iter().rev() {
        if opened(call)
            || !steps.contains(&call.output)
            || boxes
                .iter()
                .any(|b| b.first <= call.first && call.output <= b.output)
        {
            continue;
        }
        let args: Vec<String> = call
            .args
            .iter()
            .map(|a| match a {
                Ok(id) if id.index() < labels.len() => labels[id.index()].clone(),
                Ok(_) => "…".to_string(),
                Err(text) => text.clone(),
            })
            .collect();
        let mut b = CallBox {
            label: call.label.clone(),
            function: call.function.clone(),
            written: format!("{}({})", call.function, args.join(", ")),
            arg_texts: args,
            args: call.args.iter().map(|a| a.as_ref().ok().copied()).collect(),
            first: call.first,
            output: call.output,
            steps: 0,
        };
        b.steps = steps.iter().filter(|&&s| b.holds(s, graph)).count();
        boxes.push(b);
    }
    boxes
}
