//! The browser's side of gradcalc: the live server of `:serve` (`serve.rs`,
//! with the `cli` feature) and which commands page the steps of a finished
//! pass. The page every web surface shows (the `:html` file, `:serve`'s live
//! view, the playground's view) is drawn by [`crate::render::html`] from the
//! session's step model: this module serves it and draws nothing itself.

#[cfg(feature = "cli")]
pub mod serve;

use crate::session::{CommandSpec, InRepl};

/// The commands that `input`'s statements run, in order (a statement that
/// is no command is left out): `x = 2; :grad x` runs `:grad`.
fn commands_in(input: &str) -> Vec<&'static CommandSpec> {
    crate::syntax::statement_spans(input)
        .into_iter()
        .filter_map(|span| {
            input[span.start..span.end]
                .trim_start()
                .strip_prefix(':')
                .and_then(|text| text.split(char::is_whitespace).next())
                .and_then(crate::session::find_command)
        })
        .collect()
}

/// Whether a view of the graph shows the finished backward pass after
/// `input` (rather than the forward pass, step 0): its last statement is a
/// command that asks for the gradients (the command table's
/// `finishes_pass`: `:grad`, `:backward`, `:trace`, `:check`). `:serve` and
/// the playground decide by it.
pub fn shows_finished_pass(input: &str) -> bool {
    let spans = crate::syntax::statement_spans(input);
    spans.last().is_some_and(|span| {
        commands_in(&input[span.start..span.end])
            .first()
            .is_some_and(|command| command.traits.finishes_pass)
    })
}

/// Whether `input` runs a command that the terminal pages a step at a time
/// (`:step`, [`InRepl::Step`]): in the playground the view steps instead,
/// and says so.
pub fn pages_steps(input: &str) -> bool {
    commands_in(input)
        .iter()
        .any(|command| command.traits.repl == InRepl::Step)
}
