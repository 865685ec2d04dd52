//! Checkpoints of the `:save` log, for a front end that rebuilds a session by
//! replaying its script (the playground after a reload, Stop or a crash): a
//! finished `:descend`, or a `:repeat` whose statements only move leaves
//! (`w := …`, `w, b := …, …`), is kept in the log as the values of the
//! leaves it moved (`w := 2.5e-1`), not as the command, so that a replay
//! takes no longer than a few assignments however long the steps took.
//!
//! A value is written in Rust's shortest form that reads back to the same
//! `f64` (`{:?}`: `0.1`, `1e-7`), so the replayed session holds the same bits.
//! An entry stays the command when a moved value is not finite, a tensor
//! holds more than [`MAX_CHECKPOINT_ELEMENTS`] numbers (its literal would be
//! slower to parse than the steps), or a `:repeat` rebinds a name (`y = y +
//! x` builds graph that only the command rebuilds).

use super::Session;
use crate::syntax::{self, AssignOp, Span, Statement};

/// The most numbers a checkpoint writes for one tensor leaf: past it, the
/// command stays in the log.
pub const MAX_CHECKPOINT_ELEMENTS: usize = 10_000;

impl Session {
    /// Rewrites the `:save` log's entries from position `from` on (a count of
    /// entries, as [`Session::statement_count`] gave it before the input ran)
    /// that are a `:descend` or a `:repeat` of leaf updates into updates of
    /// the leaves they moved, at their values now. Returns how many entries
    /// were rewritten. Call it right after the input ran: a later statement
    /// may move the leaves again.
    pub fn checkpoint(&mut self, from: usize) -> usize {
        let last = self.statements.len();
        let mut rewritten = 0;
        for index in from.min(last)..last {
            let text = self.statements.entry(index).to_string();
            let Some(leaves) = moved_leaves(&text) else {
                continue;
            };
            let Some(updates) = self.updates_of(&leaves) else {
                continue;
            };
            self.statements.replace(index, updates);
            rewritten += 1;
        }
        rewritten
    }

    /// Drops the log's last entry when it was recorded at position `from` or
    /// later (the statement a front end stopped: the steps a `:repeat` or
    /// `:descend` finished, or a statement that had run when it was stopped),
    /// so that a replay of [`Session::script`] leaves it out: the playground
    /// undoes a statement stopped by its memory limit this way. Returns
    /// whether an entry was dropped.
    pub fn forget_last_statement(&mut self, from: usize) -> bool {
        let len = self.statements.len();
        if len == 0 || len <= from {
            return false;
        }
        self.statements.truncate(len - 1);
        true
    }

    /// The log's last entry when it was recorded at position `from` or later
    /// and runs steps (a `:repeat`, or a command that moves its parameters,
    /// `:descend`): as logged, with the count of steps it finished, which
    /// differs from the count typed when it was stopped.
    pub fn last_logged_steps(&self, from: usize) -> Option<&str> {
        let len = self.statements.len();
        if len == 0 || len <= from {
            return None;
        }
        let text = self.statements.entry(len - 1);
        let located = syntax::parse_statement(text, Span::new(0, text.len())).ok()?;
        let steps = match located.statement {
            Statement::Repeat(_) => true,
            Statement::Command { name, .. } => {
                super::command::find(&name.name).is_some_and(|spec| spec.traits.moves_params)
            }
            _ => false,
        };
        steps.then_some(text)
    }

    /// The session as values, for a front end to keep when
    /// [`Session::script`] no longer rebuilds it (the log dropped its first
    /// statements, [`Session::statements_dropped`]): a first comment line
    /// saying so, then `name = value` for each variable (a tensor as a
    /// literal; one over 10 000 numbers, or a value that
    /// is not finite, as a comment saying it is not kept) and each function's
    /// definition. Run, it gives every name its value as a leaf: the graph
    /// that made a derived value is not kept.
    pub fn values_script(&self) -> String {
        let mut text = format!(
            "# gradcalc {} session, as values: its first {} statements were not kept, so each name holds its value as a leaf, without the graph that made it\n",
            env!("CARGO_PKG_VERSION"),
            self.statements.dropped()
        );
        let mut keep = |name: &str, value: Option<String>| match value {
            Some(value) => text.push_str(&format!("{name} = {value}\n")),
            None => text.push_str(&format!("# {name}: its value is not kept\n")),
        };
        for (name, node) in self.scalar_vars() {
            if !super::RESULT_NAMES.contains(&name.as_str()) {
                keep(name, number(self.graph.value(node)));
            }
        }
        for (name, id) in self.shaped_vars() {
            if super::RESULT_NAMES.contains(&name.as_str()) {
                continue;
            }
            let tensor = self.tensors.graph.value(id);
            let literal = (tensor.data().len() <= MAX_CHECKPOINT_ELEMENTS)
                .then(|| literal_of(tensor.shape().dims(), tensor.data()))
                .flatten();
            keep(name, literal);
        }
        for name in &self.function_order {
            if let Some(function) = self.functions.get(name) {
                text.push_str(&format!(
                    "{name}({}) = {}\n",
                    function.params.join(", "),
                    function.text
                ));
            }
        }
        text
    }

    /// Sets how many numbers the session's tensor values may hold in all (the
    /// tensor memory budget, [`crate::engine::tensor::DEFAULT_BUDGET`] by
    /// default), kept across `:reset`. Call it on a new session: the tensors
    /// it holds are dropped.
    pub fn set_tensor_budget(&mut self, elements: usize) {
        self.tensors.graph = crate::engine::tensor::TensorGraph::with_budget(elements);
    }

    /// `name := value` lines for each of `leaves` at its value now, or `None`
    /// when one of them is not a leaf bound now, or its value cannot be
    /// written (see the module's doc).
    fn updates_of(&self, leaves: &[String]) -> Option<String> {
        let mut lines = Vec::with_capacity(leaves.len());
        for name in leaves {
            let value = if let Some(id) = self.shaped_var(name) {
                let tensor = self.tensors.graph.value(id);
                if tensor.data().len() > MAX_CHECKPOINT_ELEMENTS {
                    return None;
                }
                literal_of(tensor.shape().dims(), tensor.data())?
            } else {
                let node = self.variable(name)?;
                number(self.graph.value(node))?
            };
            lines.push(format!("{name} := {value}"));
        }
        Some(lines.join("\n"))
    }
}

/// A finite number as text that reads back to the same `f64`.
fn number(value: f64) -> Option<String> {
    value.is_finite().then(|| format!("{value:?}"))
}

/// A tensor literal `[1.0, 2.0]` or `[[1.0, 2.0], [3.0, 4.0]]` of a value of
/// shape `dims`, or `None` for a rank it does not write or a number that is
/// not finite.
fn literal_of(dims: &[usize], data: &[f64]) -> Option<String> {
    let row = |numbers: &[f64]| -> Option<String> {
        let texts: Option<Vec<String>> = numbers.iter().map(|&x| number(x)).collect();
        Some(format!("[{}]", texts?.join(", ")))
    };
    match dims {
        [_] => row(data),
        [rows, cols] if *rows > 0 && *cols > 0 => {
            let texts: Option<Vec<String>> = data.chunks(*cols).map(row).collect();
            Some(format!("[{}]", texts?.join(", ")))
        }
        _ => None,
    }
}

/// The leaves a logged `:descend` or `:repeat` moves, or `None` when the
/// entry is another statement or a `:repeat` that does more than move
/// leaves. A logged `:descend` is written `:descend LOSS lr=R steps=N P…`
/// (`Descent::script`): its parameters follow the first three words. Which
/// command moves its parameters is its row's trait
/// ([`super::command::Traits::moves_params`]), never its name.
fn moved_leaves(text: &str) -> Option<Vec<String>> {
    let located = syntax::parse_statement(text, Span::new(0, text.len())).ok()?;
    match located.statement {
        Statement::Command { name, args } => {
            let spec = super::command::find(&name.name)?;
            if !spec.traits.moves_params {
                return None;
            }
            let params: Vec<String> = args.iter().skip(3).map(|a| a.name.clone()).collect();
            (!params.is_empty()).then_some(params)
        }
        Statement::Repeat(repeat) => {
            let mut leaves: Vec<String> = Vec::new();
            for step in &repeat.body {
                let targets = match &step.statement {
                    Statement::Assign {
                        target,
                        op: AssignOp::Update,
                        ..
                    } => std::slice::from_ref(target),
                    Statement::Updates { targets, .. } => targets.as_slice(),
                    _ => return None,
                };
                for target in targets {
                    if !leaves.contains(&target.name) {
                        leaves.push(target.name.clone());
                    }
                }
            }
            (!leaves.is_empty()).then_some(leaves)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::session::Session;

    fn run(session: &mut Session, source: &str) -> String {
        let mut shown = String::new();
        let _ = session.run_source(source, |result| {
            shown.push_str(&format!("{result:?}\n"));
            std::ops::ControlFlow::Continue(())
        });
        shown
    }

    fn value(session: &Session, name: &str) -> f64 {
        session.graph().value(session.variable(name).unwrap())
    }

    #[test]
    fn a_descent_is_kept_as_the_values_of_its_leaves() {
        let mut session = Session::new();
        run(&mut session, "w = 3; b = 1; L = (w*2 + b - 1)^2");
        let before = session.statement_count();
        run(&mut session, ":descend L lr=0.01 steps=50 w b");
        assert_eq!(session.checkpoint(before), 1);
        let script = session.script();
        assert!(!script.contains(":descend"), "{script}");
        // The replay holds the same bits: each step is w -= 0.01·4(2w + b - 1),
        // b -= 0.01·2(2w + b - 1), computed here by hand.
        let (mut w, mut b) = (3.0_f64, 1.0_f64);
        for _ in 0..50 {
            let r = w * 2.0 + b - 1.0;
            (w, b) = (w - 0.01 * (4.0 * r), b - 0.01 * (2.0 * r));
        }
        let mut replay = Session::new();
        run(&mut replay, &script);
        assert!((value(&replay, "w") - w).abs() < 1e-12, "{script}");
        assert!((value(&replay, "b") - b).abs() < 1e-12, "{script}");
        assert_eq!(value(&replay, "w"), value(&session, "w"));
        assert_eq!(value(&replay, "L"), value(&session, "L"));
    }

    #[test]
    fn a_repeat_of_updates_is_kept_as_values_and_one_that_rebinds_stays() {
        let mut session = Session::new();
        run(&mut session, "w = 3");
        let before = session.statement_count();
        // w ← w − 0.1·2w = 0.8·w, 10 times: 3·0.8¹⁰.
        run(&mut session, ":repeat 10 w := w - 0.1*grad(w^2, w)");
        assert_eq!(session.checkpoint(before), 1);
        let script = session.script();
        assert!(!script.contains(":repeat"), "{script}");
        let mut replay = Session::new();
        run(&mut replay, &script);
        assert!((value(&replay, "w") - 3.0 * 0.8_f64.powi(10)).abs() < 1e-12);
        // y = y + x rebinds y: the command stays.
        run(&mut session, "x = 1; y = 0");
        let before = session.statement_count();
        run(&mut session, ":repeat 3 y = y + x");
        assert_eq!(session.checkpoint(before), 0);
        assert!(session.script().contains(":repeat 3 y = y + x"));
    }

    #[test]
    fn a_tensor_leaf_is_kept_as_a_literal() {
        let mut session = Session::new();
        run(&mut session, "W = [[1, 2], [3, 4]]; L = sum(W^2)");
        let before = session.statement_count();
        // dL/dW = 2W: one step of lr 0.25 halves W.
        run(&mut session, ":descend L lr=0.25 steps=1 W");
        assert_eq!(session.checkpoint(before), 1);
        let script = session.script();
        assert!(script.contains("W := [[0.5, 1.0], [1.5, 2.0]]"), "{script}");
        let mut replay = Session::new();
        let shown = run(&mut replay, &format!("{script}\nL"));
        // 0.25 + 1 + 2.25 + 4 = 7.5
        assert!(shown.contains("7.5"), "{shown}");
    }

    #[test]
    fn a_session_past_the_log_is_kept_as_its_values() {
        let mut session = Session::new();
        run(&mut session, "f(t) = t*2\nW = [1, 2]\nx = 0");
        let steps = "x = x + 1\n".repeat(super::super::script::MAX_LOG_STATEMENTS + 1);
        run(&mut session, &steps);
        // 3 + 100 001 statements: the log keeps the last 100 000.
        assert_eq!(session.statements_dropped(), 4);
        let values = session.values_script();
        assert!(values.starts_with("# gradcalc "), "{values}");
        assert!(
            values.contains("session, as values: its first 4 statements were not kept"),
            "{values}"
        );
        assert!(values.contains("\nW = [1.0, 2.0]\n"), "{values}");
        let mut replay = Session::new();
        // x counted 100 001 ones; f(3) = 6.
        run(&mut replay, &format!("{values}\ny = f(3)"));
        assert_eq!(value(&replay, "x"), 100_001.0, "{values}");
        assert_eq!(value(&replay, "y"), 6.0, "{values}");
    }

    #[test]
    fn stopped_steps_are_forgotten_and_the_budget_outlives_reset() {
        let mut session = Session::new();
        run(&mut session, "w = 1");
        let before = session.statement_count();
        run(&mut session, ":repeat 2 w := w + 1");
        assert_eq!(
            session.last_logged_steps(before),
            Some(":repeat 2 w := w + 1")
        );
        assert!(session.forget_last_statement(before));
        assert_eq!(session.last_logged_steps(before), None);
        assert_eq!(session.statement_count(), before);
        assert!(!session.forget_last_statement(before));
        session.set_tensor_budget(100);
        let refused = run(&mut session, "A = zeros(20, 20)");
        assert!(refused.contains("budget"), "{refused}");
        run(&mut session, ":reset");
        let refused = run(&mut session, "A = zeros(20, 20)");
        assert!(refused.contains("budget"), "{refused}");
    }
}
