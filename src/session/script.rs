//! The statements that built a session, kept as source text for `:save`.

use super::Session;
use crate::syntax::Statement;

impl Session {
    /// The session as a script that reproduces it when run: every successful
    /// assignment, definition, expression statement and `:backward` since the
    /// start or the last `:reset`, one per line, after a comment line.
    pub fn script(&self) -> String {
        let mut text = format!(
            "# gradcalc {} session: run it with `gradcalc FILE` or `:load FILE`\n",
            env!("CARGO_PKG_VERSION")
        );
        text.push_str(&self.statements);
        text
    }

    /// How many statements [`Session::script`] would write.
    pub fn statement_count(&self) -> usize {
        self.statement_count
    }

    /// Keeps one statement's text for [`Session::script`].
    pub(super) fn record(&mut self, statement: &str) {
        self.statements.push_str(statement);
        self.statements.push('\n');
        self.statement_count += 1;
    }
}

/// Whether a statement builds state that a saved script must repeat.
pub(super) fn builds_state(statement: &Statement) -> bool {
    match statement {
        Statement::Expr(_) | Statement::Assign { .. } | Statement::Define { .. } => true,
        Statement::Command { name, .. } => name.name == "backward" || name.name == "repeat",
    }
}

#[cfg(test)]
mod tests {
    use crate::session::{Event, Session};

    fn run(session: &mut Session, source: &str) -> Vec<Event> {
        let mut all = Vec::new();
        let _ = session.run_source(source, |result| {
            if let Ok(events) = result {
                all.extend(events);
            }
            std::ops::ControlFlow::Continue(())
        });
        all
    }

    #[test]
    fn a_saved_script_reproduces_the_session() {
        let mut session = Session::new();
        let source = "x = 2\ny = (3 +\n 0)\nf(t) = t*y\nwrong + 1\nz = f(x) + x\n:grad\nx*x\n:backward z\n:help";
        run(&mut session, source);
        let script = session.script();
        assert_eq!(session.statement_count(), 6, "{script}");
        assert!(
            !script.contains("wrong") && !script.contains(":grad"),
            "{script}"
        );
        let mut replay = Session::new();
        run(&mut replay, &script);
        assert_eq!(
            run(&mut replay, ":vars; :grad"),
            run(&mut session, ":vars; :grad")
        );
        run(&mut session, ":reset");
        assert_eq!(session.statement_count(), 0);
    }
}
