//! How a notebook cell reads its source, decided by the library's command
//! table (never by a command's name or an error's wording in Python): a
//! command that writes a file it requires (`writes` and a required
//! [`Arg::File`] in its row: `:svg`, `:html`, `:save`), given none, shows
//! it in the cell, as if given `-` (standard output).

use gradcalc::session::{Arg, find_command, next_args};
use gradcalc::syntax::{Statement, Statements};
use pyo3::prelude::*;

/// The notebook's own short commands, and the command each one runs: a
/// notebook shows a page where a terminal would write it.
pub const NOTEBOOK_COMMANDS: &[(&str, &str)] = &[("show", ":html -")];

/// What a cell runs for `source`: each statement that is a command writing a
/// file it requires, with no file given, gets ` -` after its last word; a
/// notebook command ([`NOTEBOOK_COMMANDS`]) alone becomes the command it
/// stands for. Everything else (comments, `;`, statements that do not parse,
/// which then report their error) is kept as it is.
#[pyfunction]
pub fn cell_source(source: &str) -> String {
    // (byte offset, text to insert there, bytes of the source it replaces)
    let mut edits: Vec<(usize, &str, usize)> = Vec::new();
    for (span, parsed) in Statements::new(source) {
        let Ok(located) = parsed else { continue };
        let Statement::Command { name, args } = &located.statement else {
            continue;
        };
        if let Some((_, command)) = NOTEBOOK_COMMANDS.iter().find(|(n, _)| *n == name.name) {
            if args.is_empty() {
                edits.push((span.start, command, span.end - span.start));
            }
            continue;
        }
        let Some(spec) = find_command(&name.name) else {
            continue;
        };
        let requires_file = spec
            .params
            .iter()
            .any(|p| p.arg == Arg::File && !p.optional);
        let words: Vec<&str> = args.iter().map(|a| a.name.as_str()).collect();
        if spec.writes && requires_file && next_args(spec, &words).contains(&Arg::File) {
            edits.push((span.end, " -", 0));
        }
    }
    let mut out = String::with_capacity(source.len() + 2 * edits.len());
    let mut at = 0;
    for (offset, text, replaced) in edits {
        out.push_str(&source[at..offset]);
        out.push_str(text);
        at = offset + replaced;
    }
    out.push_str(&source[at..]);
    out
}
