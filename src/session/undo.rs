//! A refused statement changes nothing: the journal of what the statement
//! running now has changed, and the undo that puts it all back when the
//! statement fails (an error or Ctrl-C) — the nodes it appended, the names it
//! bound, the output, `ans`, the leaves it moved (and their dependents,
//! recomputed), the derivative groups, call labels and cached order past its
//! first node, and the statement log.
//!
//! The journal is begun by [`Session::run_parsed`] before every statement and
//! read only when the statement fails, so its cost on success is one push per
//! name bound and one per leaf moved. A collection in the middle of a
//! statement (a long `:repeat`) keeps what the journal refers to alive and
//! renumbers it ([`Journal::remap`]).

use rustc_hash::FxHashSet;

use crate::engine::{NodeId, Remap};

use super::{Node, Output, Session};

/// What the running statement has changed so far.
#[derive(Debug, Default)]
pub(super) struct Journal {
    /// The graph's length before the statement: its nodes are the ones past it.
    graph_len: usize,
    /// The statement log's length before the statement.
    statements: usize,
    /// How many names were bound before the statement (`vars`' length):
    /// the names past it are new.
    names: usize,
    /// The output and `ans` before the statement.
    output: Option<Output>,
    last: Option<Node>,
    /// Each name rebound by the statement, with the node (of either graph)
    /// it named before (first rebinding only; the later ones are the
    /// statement's own).
    rebound: Vec<(String, Node)>,
    /// Each leaf the statement moved, with its value before (first move only).
    leaves: Vec<(NodeId, f64)>,
    /// The leaves in `leaves`, to record each one once.
    moved: FxHashSet<NodeId>,
}

impl Journal {
    /// The scalar nodes the undo would bring back as bindings, the output
    /// or `ans`: a collection keeps them.
    pub(super) fn roots(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.rebound
            .iter()
            .map(|(_, node)| *node)
            .chain(self.output.as_ref().map(|o| o.node))
            .chain(self.last)
            .filter_map(Node::scalar)
            .chain(self.leaves.iter().map(|(leaf, _)| *leaf))
    }

    /// Renumbers the journal after a collection in the middle of the
    /// statement: its nodes were kept (see [`Journal::roots`]) and moved down
    /// in order; the mark becomes the count of kept nodes below it.
    pub(super) fn remap(&mut self, remap: &Remap) {
        let get = |id: NodeId| remap.get(id).expect("the journal's nodes are roots");
        self.graph_len = (0..self.graph_len as u32)
            .rev()
            .find_map(|i| remap.get(NodeId(i)))
            .map_or(0, |kept| kept.index() + 1);
        for (_, node) in &mut self.rebound {
            *node = node.remap(get);
        }
        if let Some(output) = &mut self.output {
            output.node = output.node.remap(get);
        }
        self.last = self.last.map(|node| node.remap(get));
        self.moved.clear();
        for (leaf, _) in &mut self.leaves {
            *leaf = get(*leaf);
            self.moved.insert(*leaf);
        }
    }
}

impl Session {
    /// Starts the journal of a new statement: from here on, what it changes
    /// can be undone by [`Session::undo_statement`].
    /// The graph's length when the running statement began: what a
    /// derivative's budget is measured against (`derivatives.rs`), so that
    /// the inner orders of a nested `grad(grad(…))` do not raise it.
    pub(super) fn statement_start(&self) -> usize {
        self.journal.graph_len
    }

    pub(super) fn begin_statement(&mut self) {
        let journal = &mut self.journal;
        journal.graph_len = self.graph.len();
        journal.statements = self.statements.len();
        journal.names = self.vars.len();
        journal.output.clone_from(&self.output);
        journal.last = self.last;
        journal.rebound.clear();
        journal.leaves.clear();
        journal.moved.clear();
        self.tensors.begin();
    }

    /// Ends the journal of a statement that succeeded: nothing of it will be
    /// undone, and a collection need keep nothing of it.
    pub(super) fn end_statement(&mut self) {
        let journal = &mut self.journal;
        journal.output = None;
        journal.last = None;
        journal.rebound.clear();
        journal.leaves.clear();
        journal.moved.clear();
    }

    /// Records that the running statement rebinds `name`, which named `old`.
    pub(super) fn journal_rebinding(&mut self, name: &str, old: Node) {
        if !self.journal.rebound.iter().any(|(n, _)| n == name) {
            self.journal.rebound.push((name.to_string(), old));
        }
    }

    /// Records the values of `leaves` before the running statement moves them.
    pub(super) fn journal_leaves(&mut self, leaves: impl IntoIterator<Item = NodeId>) {
        for leaf in leaves {
            if self.journal.moved.insert(leaf) {
                let value = self.graph.value(leaf);
                self.journal.leaves.push((leaf, value));
            }
        }
    }

    /// Puts the session back as it was before the running statement began
    /// ([`Session::begin_statement`]): the statement failed.
    pub(super) fn undo_statement(&mut self) {
        self.undo_past(self.journal.graph_len, self.journal.statements);
        let scalars_moved = !self.journal.leaves.is_empty();
        if scalars_moved {
            let leaves = std::mem::take(&mut self.journal.leaves);
            self.graph.update_leaves(&leaves);
            self.journal.moved.clear();
        }
        // The scalar leaves first: the tensors read the scalars they use.
        self.tensors.undo(&self.graph);
        if scalars_moved {
            self.tensors.rerun_whole(&self.graph);
        }
        for (name, old) in std::mem::take(&mut self.journal.rebound) {
            if let Some(slot) = self.vars.get_mut(&name) {
                *slot = old;
            }
            if let Some(earlier) = self.earlier.get_mut(&name) {
                // The first rebinding pushed `old`; later ones pushed the
                // statement's own nodes after it.
                if let Some(at) = earlier.iter().rposition(|&n| n == old) {
                    earlier.truncate(at);
                }
                if earlier.is_empty() {
                    self.earlier.remove(&name);
                }
            }
        }
        for (name, _) in self.vars.drain(self.journal.names..) {
            self.earlier.remove(&name);
        }
        self.output = self.journal.output.take();
        self.last = self.journal.last;
    }
}
