//! The REPL's live preview: the value a line would have, computed without
//! changing the session (no binding, no output, no `ans`, no nodes left behind).

use super::Session;
use crate::syntax::{self, AssignOp, Statement};

/// The most nodes a preview may build through calls before it gives up.
pub const PREVIEW_NODES: usize = 20_000;

impl Session {
    /// The value `line` would show if it were run now, or `None` when it is not
    /// one expression or plain assignment (`x = …`), is unfinished, or fails.
    ///
    /// Nothing in the session changes: the nodes the evaluation appends are
    /// removed again and its events (warnings) are dropped. Compound assignments,
    /// definitions and commands are not previewed, nor a line whose calls would
    /// build more than `PREVIEW_NODES` (20 000) nodes.
    pub fn preview(&mut self, line: &str) -> Option<f64> {
        if line.trim().is_empty() || syntax::needs_more_input(line) {
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
        let mark = self.graph.len();
        let mut events = Vec::new();
        // A budget: past it, no preview (a key press must never wait for a
        // statement that builds a million nodes through calls).
        self.call_node_limit = Some(PREVIEW_NODES);
        let result = self.evaluate(tree, &mut events);
        self.call_node_limit = None;
        let value = result.ok().map(|v| self.graph.value(v.node));
        self.graph.truncate(mark);
        self.forget_groups_past(mark);
        value
    }
}

#[cfg(test)]
mod tests {
    use crate::session::{Event, Session};

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
        assert_eq!(session.preview("d12(1)"), Some(8192.0));
        assert_eq!(session.preview("d20(1) + 1"), None);
        assert_eq!(session.graph().len(), 0);
        assert_eq!(
            run(&mut session, "d13(1)")[0],
            Event::Value {
                name: None,
                value: 16384.0
            }
        );
    }

    fn before_grad_of_xy() -> Event {
        Event::Grad {
            of: "x*y".to_string(),
            wrt: "x".to_string(),
            value: 3.0,
            note: None,
        }
    }
}
