//! The REPL's live preview: the value a line would have, computed without
//! changing the session (no binding, no output, no `ans`, no nodes left behind).

use std::time::Duration;

use super::Session;
use crate::syntax::{self, AssignOp, Statement};

/// The most nodes a preview may build through calls before it gives up.
pub const PREVIEW_NODES: usize = 20_000;

/// The most CPU time a preview's evaluation may take before it gives up: well
/// under a frame (16 ms), so that with the parse before it and the undo after
/// it a key press is answered within one. Every way of building nodes
/// (arithmetic, calls, `f'(a)`, `grad(y, x)`) polls for it as for Ctrl-C
/// ([`crate::interrupt::within`]). CPU time, not wall time: a preview that
/// needs less is shown however loaded the machine is.
pub const PREVIEW_TIME: Duration = Duration::from_millis(8);

impl Session {
    /// The value `line` would show if it were run now, or `None` when it is not
    /// one expression or plain assignment (`x = …`), is unfinished, or fails.
    ///
    /// Nothing in the session changes: the nodes the evaluation appends are
    /// removed again and its events (warnings) are dropped. Compound assignments,
    /// definitions and commands are not previewed, nor a line whose calls would
    /// build more than `PREVIEW_NODES` (20 000) nodes, nor one whose evaluation
    /// takes more than `PREVIEW_TIME` (8 ms of CPU time: a derivative
    /// through a graph of 10⁶ nodes, `grad` nested 18 deep).
    pub fn preview(&mut self, line: &str) -> Option<f64> {
        self.preview_within(line, PREVIEW_TIME)
    }

    /// [`Session::preview`] with `budget` of CPU time instead of
    /// `PREVIEW_TIME` (the node budget is the same).
    pub fn preview_within(&mut self, line: &str, budget: Duration) -> Option<f64> {
        // A quiz's answer is not previewed: its value is what is asked.
        if self.quiz.is_some() || line.trim().is_empty() || syntax::needs_more_input(line) {
            return None;
        }
        let spans = syntax::statement_spans(line);
        let [span] = spans.as_slice() else {
            return None;
        };
        let located = syntax::parse_statement(line, *span).ok()?;
        let tree = match &located.statement {
            Statement::Expr(tree) => tree,
            Statement::Assign {
                op: AssignOp::Set,
                value,
                ..
            } => value,
            _ => return None,
        };
        // A value of tensors is not previewed (its kernels may be long).
        if self.touches_tensor(tree) {
            return None;
        }
        let (mark, tensor_mark) = (self.graph.len(), self.tensors.graph.len());
        let mut events = Vec::new();
        // Budgets: past either, no preview (a key press must never wait for a
        // statement that builds a million nodes, nor for one that sorts them).
        self.call_node_limit = Some(PREVIEW_NODES);
        let (result, stopped) = crate::interrupt::within(budget, || {
            let result = self.evaluate(tree, &mut events);
            // A loop cut short by the budget may have left a value unfinished.
            (result, crate::interrupt::requested())
        });
        self.call_node_limit = None;
        let value = result
            .ok()
            .filter(|_| !stopped)
            .map(|v| self.graph.value(v.node));
        self.graph.truncate(mark);
        self.forget_groups_past(mark);
        // A function's body may name a tensor (`f(a) = a*W`).
        self.tensors.truncate(tensor_mark);
        value
    }
}

#[cfg(test)]
mod tests {
    use crate::session::{Event, Number, Session};

    fn run(session: &mut Session, source: &str) -> Vec<Event> {
        let mut all = Vec::new();
        let _ = session.run_source(source, |result| {
            all.extend(result.expect("no error"));
            std::ops::ControlFlow::Continue(())
        });
        all
    }

    #[test]
    fn preview_changes_nothing() {
        let mut session = Session::new();
        run(&mut session, "x = 2; y = 3; z = x*y + x; f(t) = t^2; x*x");
        let before_len = session.graph().len();
        let before_vars = run(&mut session, ":vars");
        let before_grad = run(&mut session, ":grad");
        let before_len_after_queries = session.graph().len();
        assert_eq!(before_len, before_len_after_queries);

        assert_eq!(session.preview("z + 1"), Some(9.0));
        assert_eq!(session.preview("w = f(x) + pi*0"), Some(4.0));
        assert_eq!(session.preview("f'(x)"), Some(4.0));
        assert_eq!(session.preview("ans"), Some(4.0));
        assert_eq!(session.preview("1/0"), Some(f64::INFINITY));
        assert_eq!(session.preview("nope + 1"), None);
        assert_eq!(session.preview("x +"), None);
        assert_eq!(session.preview("x = 1; x"), None);
        assert_eq!(session.preview(":reset"), None);
        assert_eq!(session.preview("g(a) = a"), None);

        assert_eq!(session.graph().len(), before_len);
        assert_eq!(run(&mut session, ":vars"), before_vars);
        assert_eq!(run(&mut session, ":grad"), before_grad);
        assert_eq!(session.variable_names().count(), 3);
        assert_eq!(session.function_names().collect::<Vec<_>>(), ["f"]);
        // `f'(x)` in a preview left no node that would block a later backward pass.
        assert_eq!(run(&mut session, "x*y; :grad x")[1], before_grad_of_xy());
    }

    #[test]
    fn preview_gives_up_past_its_node_budget() {
        let mut session = Session::new();
        // Doubling functions: d12(1) builds 2^12 calls, within the budget;
        // d20(1) would build over a million nodes: no preview, and no trace of it.
        let mut doubling = String::from("d0(t) = t + 1");
        for i in 1..=20 {
            doubling.push_str(&format!("; d{i}(t) = d{}(t) + d{}(t)", i - 1, i - 1));
        }
        run(&mut session, &doubling);
        // (A generous time budget: this is about nodes, whatever the machine.)
        assert_eq!(session.preview_within("d12(1)", GENEROUS), Some(8192.0));
        assert_eq!(session.preview("d20(1) + 1"), None);
        assert_eq!(session.graph().len(), 0);
        assert_eq!(
            run(&mut session, "d13(1)")[0],
            Event::Value {
                name: None,
                value: Number(16384.0).into()
            }
        );
    }

    #[test]
    fn preview_gives_up_past_its_time_budget() {
        // `grad` nested 18 deep: each level multiplies the nodes, so the line
        // would build billions (it froze the REPL and aborted on memory);
        // `h` differentiated 12 times, likewise. No preview, nothing left.
        let mut session = Session::new();
        run(
            &mut session,
            "x = 0.5; y = tanh(x)*sin(x); h(t) = tanh(t)*sin(t)",
        );
        let len = session.graph().len();
        let mut nested = "y".to_string();
        for _ in 0..18 {
            nested = format!("grad({nested}, x)");
        }
        assert_eq!(session.preview(&nested), None);
        assert_eq!(session.preview(&format!("q = {nested}")), None);
        assert_eq!(session.preview("h''''''''''''(0.5)"), None);
        assert_eq!(session.graph().len(), len);
        // A small derivative is still previewed: d/dx x^3 = 3x^2 = 0.75 at 0.5,
        // and d²/dx² (tanh(x) sin(x)) at 0.5 = 0.810318668644860751…
        // (mpmath: `diff(lambda x: tanh(x)*sin(x), 0.5, 2)`).
        assert_eq!(session.preview_within("grad(x^3, x)", GENEROUS), Some(0.75));
        let second = session
            .preview_within("grad(grad(y, x), x)", GENEROUS)
            .expect("a preview");
        assert!((second - 0.810_318_668_644_860_8).abs() < 1e-13, "{second}");
        assert_eq!(session.graph().len(), len);
    }

    /// A time budget no machine's load exhausts for the small lines shown.
    const GENEROUS: std::time::Duration = std::time::Duration::from_secs(60);

    fn before_grad_of_xy() -> Event {
        Event::Grad {
            of: "x*y".to_string(),
            wrt: "x".to_string(),
            value: Number(3.0).into(),
            note: None,
        }
    }
}
