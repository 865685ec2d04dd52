//! What the fuzz target does with one input, shared with `tests/it/fuzz_regressions.rs`
//! so that every saved crash input is replayed by `cargo test`.
//!
//! The first byte picks the output format and flags; the rest is a source text,
//! cut at the first invalid UTF-8 byte the way the binary cuts its input. The
//! source runs through a whole session (parse, evaluate, every command), every
//! result is rendered, and the session goes on after errors (`--keep-going`).
//! The REPL's line-joining check runs on the same text.

use std::ops::ControlFlow;

use gradcalc::render::{Format, Precision, Printer, Style};
use gradcalc::session::Session;

/// Runs `data` as described above. Panics only if gradcalc does.
pub fn run(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let source = match std::str::from_utf8(rest) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&rest[..error.valid_up_to()]).unwrap_or_default(),
    };
    let format = if flags & 1 == 1 {
        Format::Json
    } else {
        Format::Human(Style {
            color: flags & 2 == 2,
            ascii: flags & 4 == 4,
            precision: if flags & 8 == 8 {
                Precision::Full
            } else {
                Precision::Digits(usize::from(flags >> 4) + 1)
            },
        })
    };
    let _ = gradcalc::syntax::needs_more_input(source);
    let mut printer = Printer::new(format, Vec::new(), Vec::new());
    let mut session = Session::new();
    let _ = session.run_source(source, |result| {
        let _ = printer.report(&result, source, "<fuzz>");
        ControlFlow::Continue(())
    });
    let _ = printer.flush();
}
