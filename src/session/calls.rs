//! Calls of user functions: which call built each node, and the labels that
//! say so (`h3.relu`, `neuron2.mul1`).
//!
//! A call of `f(x, y) = body` builds the body's nodes once more. Each call is
//! numbered per function from 1 in the order the calls begin (`h1`, `h2`, …;
//! a name ending in a digit takes a `_`: `f2_1`), and each node the call's
//! body built itself (not its constants, not the nodes of calls inside it)
//! gets the label `CALL.OP`, where OP is the op's word (`add`, `sub`, `mul`,
//! `div`, `neg`, `pow`, or the function's name: `tanh`, `relu`, …), numbered
//! from 1 when the body has more than one of that op: `relu(p*x + q*y + c)`
//! gives `h1.mul1`, `h1.mul2`, `h1.add1`, `h1.add2`, `h1.relu`. A label is one
//! name for the lexer (a name may hold `.` followed by a letter), so it can be
//! typed wherever a `_N` label can: in expressions, `:grad`, `:paths`.
//!
//! Labels cost one map entry a node built inside a call; a session that calls
//! no function pays nothing.

use rustc_hash::FxHashMap;

use crate::engine::{Graph, NodeId, Op, Remap};

/// One call of a user function.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The function's name (`h`).
    pub function: String,
    /// Which call of that function it is, from 1 (`3` for `h3`).
    pub number: u32,
    /// The call's label, the prefix of its nodes' labels (`h3`, `f2_1`).
    pub label: String,
    /// The argument nodes, in parameter order.
    pub args: Vec<NodeId>,
    /// The node the call returned (an argument itself for `f(x) = x`); `None`
    /// once a collection dropped it.
    pub output: Option<NodeId>,
    /// The call whose body made this call (an index into the list of calls, [`Session::calls`](super::Session::calls)).
    pub parent: Option<usize>,
    /// The graph's length when the call began: its nodes are at or above it.
    first: NodeId,
}

/// A node built by a call's own body.
#[derive(Debug, Clone)]
struct CallNode {
    /// The call (an index into [`Calls::list`]).
    call: usize,
    /// The node's label (`h3.relu`).
    label: Box<str>,
}

/// Every call of the session and the labels of their nodes.
#[derive(Debug, Default)]
pub(super) struct Calls {
    /// In the order the calls began.
    list: Vec<Call>,
    /// The nodes built inside calls, by the innermost call that built them.
    nodes: FxHashMap<NodeId, CallNode>,
    /// The highest id in `nodes` (a truncation below it forgets labels).
    highest: Option<NodeId>,
    /// Finished calls whose caller has not finished yet: the caller and the
    /// run of ids the call built (its nodes and those of calls inside it),
    /// which the caller's own nodes skip. Innermost last.
    finished: Vec<(usize, u32, u32)>,
}

impl Calls {
    /// The calls, in the order they began.
    pub fn list(&self) -> &[Call] {
        &self.list
    }

    /// Records that a call of `function` begins, with the graph `len` nodes
    /// long, inside the call `parent`, numbered `least` or after the last
    /// call of `function` if that is more (`least`: the number after the
    /// calls of it on tensors, so that labels are one numbering per
    /// function). Returns the call's index.
    pub fn begin(
        &mut self,
        function: &str,
        args: Vec<NodeId>,
        parent: Option<usize>,
        len: usize,
        least: u32,
    ) -> usize {
        if parent.is_none() {
            // Runs left by calls that failed inside an earlier statement.
            self.finished.clear();
        }
        let number = self
            .list
            .iter()
            .rev()
            .find(|c| c.function == function)
            .map_or(1, |c| c.number + 1)
            .max(least);
        let separator = if function.ends_with(|c: char| c.is_numeric()) {
            "_"
        } else {
            ""
        };
        self.list.push(Call {
            function: function.to_string(),
            number,
            label: format!("{function}{separator}{number}"),
            args,
            output: None,
            parent,
            first: NodeId(len as u32),
        });
        self.list.len() - 1
    }

    /// Records that call `index` returned `output`: labels the nodes its own
    /// body built (those from its start to the graph's end but the runs of
    /// the calls inside it, constants and leaves). Cost: linear in its own
    /// nodes.
    pub fn finish(&mut self, index: usize, output: NodeId, graph: &Graph) {
        let end = graph.len() as u32;
        let mut skips = Vec::new();
        while let Some(&(caller, from, to)) = self.finished.last() {
            if caller != index {
                break;
            }
            skips.push((from, to));
            self.finished.pop();
        }
        let call = &mut self.list[index];
        call.output = Some(output);
        let first = call.first.0;
        if let Some(caller) = call.parent {
            self.finished.push((caller, first, end));
        }
        // The runs between the inner calls' runs (pushed innermost last, so
        // popped from the latest down).
        let mut runs = Vec::with_capacity(skips.len() + 1);
        let mut from = first;
        for &(skip_from, skip_to) in skips.iter().rev() {
            runs.push(from..skip_from);
            from = skip_to;
        }
        runs.push(from..end);
        let own: Vec<NodeId> = runs
            .into_iter()
            .flatten()
            .map(NodeId)
            .filter(|&id| !matches!(graph.op(id), Op::Const | Op::Variable))
            .collect();
        let mut counts: FxHashMap<&str, u32> = FxHashMap::default();
        for &id in &own {
            *counts.entry(op_word(graph.op(id))).or_default() += 1;
        }
        let mut seen: FxHashMap<&str, u32> = FxHashMap::default();
        for &id in &own {
            let word = op_word(graph.op(id));
            let k = seen.entry(word).or_default();
            *k += 1;
            let label = if counts[word] > 1 {
                format!("{}.{word}{k}", call.label)
            } else {
                format!("{}.{word}", call.label)
            };
            self.nodes.insert(
                id,
                CallNode {
                    call: index,
                    label: label.into(),
                },
            );
            self.highest = self.highest.max(Some(id));
        }
    }

    /// The innermost call that built `id`, if a call did.
    pub fn call_of(&self, id: NodeId) -> Option<usize> {
        self.nodes.get(&id).map(|n| n.call)
    }

    /// Whether `id` was built by call `index` or by a call inside it.
    pub fn within(&self, id: NodeId, index: usize) -> bool {
        let mut call = self.call_of(id);
        while let Some(c) = call {
            if c == index {
                return true;
            }
            call = self.list[c].parent;
        }
        false
    }

    /// The label of every node built inside a call.
    pub fn labels(&self) -> impl Iterator<Item = (NodeId, &str)> {
        self.nodes.iter().map(|(&id, n)| (id, &*n.label))
    }

    /// The node labelled `label` (`h3.relu`), if any.
    pub fn find(&self, label: &str) -> Option<NodeId> {
        self.nodes
            .iter()
            .find(|(_, n)| &*n.label == label)
            .map(|(&id, _)| id)
    }

    /// Forgets the calls and labels past a graph truncated to `len` nodes (an
    /// undone statement, the REPL's preview), so the numbers they took are
    /// given again.
    pub fn truncate(&mut self, len: usize) {
        if self.highest.is_some_and(|h| h.index() >= len) {
            self.nodes.retain(|id, _| id.index() < len);
            self.highest = self.nodes.keys().copied().max();
        }
        while self.list.last().is_some_and(|c| c.first.index() >= len) {
            self.list.pop();
        }
        self.finished.clear();
    }

    /// Renumbers the nodes after a collection; labels of dropped nodes go.
    pub fn remap(&mut self, remap: &Remap) {
        self.nodes = std::mem::take(&mut self.nodes)
            .into_iter()
            .filter_map(|(id, node)| Some((remap.get(id)?, node)))
            .collect();
        self.highest = self.nodes.keys().copied().max();
        for call in &mut self.list {
            call.args.retain_mut(|id| match remap.get(*id) {
                Some(new) => {
                    *id = new;
                    true
                }
                None => false,
            });
            call.output = call.output.and_then(|id| remap.get(id));
            // A truncation after a collection forgets only calls made after it.
            call.first = NodeId(0);
        }
    }
}

/// The word for `op` in a label: `add`, `sub`, `mul`, `div`, `neg`, `pow`, or
/// the function name of the op table (`tanh`).
pub(super) fn op_word(op: Op) -> &'static str {
    match op {
        Op::Add => "add",
        Op::Sub => "sub",
        Op::Mul => "mul",
        Op::Div => "div",
        Op::Neg => "neg",
        Op::Pow => "pow",
        other => other.info().name,
    }
}
