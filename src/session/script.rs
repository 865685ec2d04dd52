//! The statements that built a session, kept as source text for `:save`.

use std::collections::VecDeque;

use super::Session;
use crate::syntax::Statement;

/// The most statements the `:save` log keeps: past it, the oldest are dropped.
pub const MAX_LOG_STATEMENTS: usize = 100_000;

/// The most bytes of statement text the `:save` log keeps: past it, the
/// oldest statements are dropped.
pub const MAX_LOG_BYTES: usize = 16 * 1024 * 1024;

/// The statements that built a session, for `:save`, bounded: automatic
/// collection keeps a long session's graph small, so the log must not be what
/// grows without end. Past [`MAX_LOG_STATEMENTS`] statements or
/// [`MAX_LOG_BYTES`] bytes, the oldest statements are dropped (and counted):
/// `:save` then writes the most recent ones and says that the script no longer
/// rebuilds the session from its start.
#[derive(Debug, Default, Clone)]
pub(super) struct StatementLog {
    kept: VecDeque<String>,
    bytes: usize,
    dropped: usize,
}

impl StatementLog {
    /// Appends one statement's text, dropping the oldest past the bounds.
    pub(super) fn push(&mut self, statement: String) {
        self.bytes += statement.len();
        self.kept.push_back(statement);
        while self.kept.len() > MAX_LOG_STATEMENTS || self.bytes > MAX_LOG_BYTES {
            let Some(oldest) = self.kept.pop_front() else {
                break;
            };
            self.bytes -= oldest.len();
            self.dropped += 1;
        }
    }

    /// How many statements are kept.
    pub(super) fn len(&self) -> usize {
        self.kept.len()
    }

    /// The kept statement at `index` (oldest first).
    pub(super) fn entry(&self, index: usize) -> &str {
        &self.kept[index]
    }

    /// Puts `text` in place of the kept statement at `index`.
    pub(super) fn replace(&mut self, index: usize, text: String) {
        self.bytes = self.bytes - self.kept[index].len() + text.len();
        self.kept[index] = text;
    }

    /// Forgets the statements after the first `len` kept ones.
    pub(super) fn truncate(&mut self, len: usize) {
        while self.kept.len() > len {
            if let Some(last) = self.kept.pop_back() {
                self.bytes -= last.len();
            }
        }
    }
}

impl Session {
    /// The session as a script that reproduces it when run: every successful
    /// assignment, definition, expression statement and `:backward` since the
    /// start or the last `:reset`, one per line, after a comment line.
    pub fn script(&self) -> String {
        let mut text = format!(
            "# gradcalc {} session: run it with `gradcalc FILE` or `:load FILE`\n",
            env!("CARGO_PKG_VERSION")
        );
        if self.statements.dropped > 0 {
            text.push_str(&format!(
                "# the session's first {} statements are not here: the log keeps the last {} ({} MiB at most)\n",
                self.statements.dropped,
                MAX_LOG_STATEMENTS,
                MAX_LOG_BYTES / (1024 * 1024)
            ));
        }
        for statement in &self.statements.kept {
            text.push_str(statement);
            text.push('\n');
        }
        text
    }

    /// How many statements [`Session::script`] would write.
    pub fn statement_count(&self) -> usize {
        self.statements.len()
    }

    /// Keeps one statement's text for [`Session::script`].
    pub(super) fn record(&mut self, statement: &str) {
        self.statements.push(statement.to_string());
    }

    /// How many of the session's first statements the `:save` log dropped
    /// (the log keeps the last 100 000 statements, 16 MiB at most); 0 when [`Session::script`] rebuilds it all.
    pub fn statements_dropped(&self) -> usize {
        self.statements.dropped
    }
}

/// Whether a statement builds state that a saved script must repeat.
pub(super) fn builds_state(statement: &Statement) -> bool {
    match statement {
        Statement::Expr(_)
        | Statement::Assign { .. }
        | Statement::Updates { .. }
        | Statement::Define { .. } => true,
        // `:descend` and `:repeat` record themselves: after Ctrl-C, with the
        // steps they finished.
        Statement::Command { name, .. } => {
            super::command::find(&name.name).is_some_and(|c| c.traits.saved)
        }
        Statement::Repeat(_) => false,
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
    fn the_log_keeps_the_most_recent_statements_within_its_bounds() {
        use super::{MAX_LOG_BYTES, MAX_LOG_STATEMENTS, StatementLog};
        let mut log = StatementLog::default();
        for i in 0..MAX_LOG_STATEMENTS + 5 {
            log.push(format!("x = {i}"));
        }
        assert_eq!((log.len(), log.dropped), (MAX_LOG_STATEMENTS, 5));
        assert_eq!(log.kept.front().map(String::as_str), Some("x = 5"));
        // 3 statements of 7 MiB: the byte bound (16 MiB) keeps the last two.
        let mut log = StatementLog::default();
        for c in ['a', 'b', 'c'] {
            log.push(c.to_string().repeat(7 * 1024 * 1024));
        }
        assert_eq!((log.len(), log.dropped), (2, 1));
        assert!(log.bytes <= MAX_LOG_BYTES);
        assert!(log.kept[0].starts_with('b'));
        log.truncate(1);
        assert_eq!((log.len(), log.bytes), (1, 7 * 1024 * 1024));
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
