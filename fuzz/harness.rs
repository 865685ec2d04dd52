//! What the fuzz target does with one input, shared with `tests/it/fuzz_regressions.rs`
//! so that every saved input is replayed by `cargo test`.
//!
//! The first byte picks the output format and flags; the rest is a source text,
//! cut at the first invalid UTF-8 byte the way the binary cuts its input. The
//! source runs through a whole session (parse, evaluate, every command), every
//! result is rendered, and the session goes on after errors (`--keep-going`).
//! Beside the batch path it exercises what only the REPL runs: the line-joining
//! check, the live preview and the highlighter on every line, and wrapping at a
//! terminal width.
//!
//! Failures besides a panic, so that slowness and broken output are found too:
//! - a statement that takes longer than [`STATEMENT_BUDGET`] of this thread's
//!   CPU time (the budget a classroom REPL can afford; CPU time, so that a
//!   loaded machine does not fail it; libFuzzer's `-rss_limit_mb` bounds
//!   memory);
//! - a line of `--json` output that is not a JSON object with a `kind`;
//! - a preview that leaves the graph longer than it found it;
//! - a refused statement that leaves nodes (scalar or tensor) or changes a
//!   variable (a scalar's value, a tensor's shape or any element);
//! - a collection that changes what the session computes: every leaf set to
//!   its own value again (`x := …`, which reruns both graphs) and `:grad`
//!   give the same events after `:gc` as before it.
//!
//! No file is ever written: the printer's write policy refuses every path.
//!
//! The session's tensor memory budget is [`TENSOR_BUDGET`], not the default
//! 2²⁷ numbers: a statement's work is bounded by its length times its
//! operands' size, and at the default budget one line of twenty negations of
//! `ones(1e7)` is two seconds of honest arithmetic, not a hang. The refusals
//! at the budget's edge still run here (any shape past 2¹⁶ numbers is one);
//! the default budget's edges are tested through the binary under `prlimit`.

use std::io::Write;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use gradcalc::files::WritePolicy;
use gradcalc::render::{Format, Precision, Printer, Style};
use gradcalc::session::Session;

/// The most one statement may take (in an optimised build; the replay in
/// `cargo test` runs unoptimised and allows ten times more).
pub const STATEMENT_BUDGET: Duration = Duration::from_secs(2);

/// The tensor memory budget of the fuzzed session, in numbers (see the module
/// doc): a 256×256 product is 1.7·10⁷ multiply-adds, so even a line of a
/// hundred of them stays within [`STATEMENT_BUDGET`].
pub const TENSOR_BUDGET: usize = 1 << 16;

/// Runs `data` as described above. Panics if gradcalc panics, or on one of the
/// failures listed in the module doc.
pub fn run(data: &[u8]) {
    run_with_budget(data, STATEMENT_BUDGET);
}

/// Measures this thread's CPU time (Linux's `/proc/thread-self/schedstat`, in
/// nanoseconds), or the wall-clock time where that cannot be read.
struct Stopwatch {
    cpu: Option<Duration>,
    wall: Instant,
}

impl Stopwatch {
    fn start() -> Stopwatch {
        Stopwatch {
            cpu: thread_cpu_time(),
            wall: Instant::now(),
        }
    }

    fn elapsed(&self) -> Duration {
        match (self.cpu, thread_cpu_time()) {
            (Some(start), Some(now)) => now.saturating_sub(start),
            _ => self.wall.elapsed(),
        }
    }
}

/// The CPU time this thread has run, from the first field of
/// `/proc/thread-self/schedstat`.
fn thread_cpu_time() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// What a refused statement must leave as it found it: the sizes of both
/// graphs (a collection may only have made them smaller), every scalar
/// variable's value and every tensor variable's shape and elements, as bits.
struct State {
    nodes: usize,
    tensor_nodes: usize,
    values: Vec<(String, u64)>,
    tensors: Vec<(String, Vec<usize>, Vec<u64>)>,
}

impl State {
    fn of(session: &Session) -> State {
        let values = session
            .variable_names()
            .map(|name| {
                let node = session.variable(name).expect("a name listed is bound");
                (name.to_string(), session.graph().value(node).to_bits())
            })
            .collect();
        let tensors = session
            .tensor_variables()
            .map(|(name, value)| {
                let bits = value.data().iter().map(|x| x.to_bits()).collect();
                (name.to_string(), value.shape().dims().to_vec(), bits)
            })
            .collect();
        State {
            nodes: session.graph().len(),
            tensor_nodes: session.tensor_graph_len(),
            values,
            tensors,
        }
    }
}

/// [`run`] with another time budget per statement.
pub fn run_with_budget(data: &[u8], budget: Duration) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let source = match std::str::from_utf8(rest) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&rest[..error.valid_up_to()]).unwrap_or_default(),
    };
    let json = flags & 1 == 1;
    let format = if json {
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
            // Charts in the text, or left to a front end as the playground
            // leaves them (a bit shared with the digits).
            charts: flags & 0x10 == 0,
            // Narrow and wide lines: values wrap at any width.
            width: 1 + usize::from(flags) % 120,
        })
    };
    let _ = gradcalc::syntax::needs_more_input(source);
    let mut printer = Printer::new(format, Vec::new(), Vec::new());
    // Wrap at a terminal width chosen by the flags (28 to 88 columns), as the REPL does.
    if flags & 0x40 == 0x40 {
        printer.width = Some(28 + usize::from(flags & 0x3c));
    }
    printer.writes = WritePolicy {
        nowhere: true,
        ..WritePolicy::default()
    };
    printer.script = true;
    let mut session = Session::new();
    session.set_tensor_budget(TENSOR_BUDGET);
    session.writes = printer.writes.clone();
    session.from_script = true;

    // What the REPL does while a line is typed, for every line of the source.
    for line in source.lines().take(64) {
        let before = (session.graph().len(), session.tensor_graph_len());
        let started = Stopwatch::start();
        let _ = session.preview(line);
        assert_eq!(
            (session.graph().len(), session.tensor_graph_len()),
            before,
            "a preview left nodes behind: {line:?}"
        );
        assert!(
            started.elapsed() < budget,
            "a preview took {:?}: {line:?}",
            started.elapsed()
        );
        let _ = gradcalc::render::highlight::highlight_line(line, line.len() / 2, &|_| true);
    }

    let mut started = Stopwatch::start();
    // A refused statement changes nothing: the state it leaves is the state
    // before it (a collection may only have made the graph smaller).
    let mut before = State::of(&session);
    let _ = session.run_source_with(source, |session, result| {
        let took = started.elapsed();
        assert!(took < budget, "a statement took {took:?}");
        let after = State::of(session);
        if result.is_err() {
            assert!(
                after.nodes <= before.nodes,
                "a refused statement left nodes"
            );
            assert!(
                after.tensor_nodes <= before.tensor_nodes,
                "a refused statement left tensor nodes"
            );
            assert_eq!(
                after.values, before.values,
                "a refused statement changed a variable"
            );
            assert_eq!(
                after.tensors, before.tensors,
                "a refused statement changed a tensor variable"
            );
        }
        before = after;
        let _ = printer.report(&result, session, source, "<fuzz>");
        started = Stopwatch::start();
        ControlFlow::Continue(())
    });
    collection_changes_nothing(&mut session);
    let _ = printer.flush();
    let (out, _err) = printer.into_streams();
    if json {
        let out = String::from_utf8_lossy(&out);
        for line in out.lines() {
            let value: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
            assert!(
                value.get("kind").is_some_and(|k| k.is_string()),
                "no kind: {line}"
            );
        }
    }
    let _ = std::io::sink().write_all(&out);
}

/// The statements that set every variable to its own value again (`x := 2`,
/// `W := [[1, 2], [3, 4]]`), so that both graphs are evaluated again from
/// their leaves; derived names are refused, the same way each time. Values
/// that cannot be written back exactly (not finite, or tensors past 64
/// elements) are left out.
fn rerun_statements(session: &Session) -> Vec<String> {
    let mut statements: Vec<String> = session
        .variable_names()
        .filter_map(|name| {
            let value = session.graph().value(session.variable(name)?);
            value.is_finite().then(|| format!("{name} := {value:?}"))
        })
        .collect();
    for (name, value) in session.tensor_variables() {
        let data = value.data();
        if data.len() > 64 || data.iter().any(|x| !x.is_finite()) {
            continue;
        }
        let number = |x: &f64| format!("{x:?}");
        let literal = match *value.shape().dims() {
            [] => data.first().map(number).unwrap_or_default(),
            [_] => format!(
                "[{}]",
                data.iter().map(number).collect::<Vec<_>>().join(", ")
            ),
            [_, cols] if cols > 0 => {
                let rows: Vec<String> = data
                    .chunks(cols)
                    .map(|row| {
                        format!(
                            "[{}]",
                            row.iter().map(number).collect::<Vec<_>>().join(", ")
                        )
                    })
                    .collect();
                format!("[{}]", rows.join(", "))
            }
            _ => continue,
        };
        statements.push(format!("{name} := {literal}"));
    }
    statements
}

/// What running `statements` then `:grad` reports, each statement's events
/// or error on a line, leaving out how many nodes a `:=` evaluated again and
/// the warnings of nodes evaluated again (a collection leaves fewer nodes to
/// evaluate: a dropped node no longer warns).
fn outcome(session: &mut Session, statements: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    for statement in statements.iter().map(String::as_str).chain([":grad"]) {
        let _ = session.run_source_with(statement, |_, result| {
            match result {
                Ok(events) => {
                    lines.extend(events.iter().map(|e| format!("{e:?}")).filter(|e| {
                        !e.starts_with("Calculus(Updated") && !e.starts_with("Warning")
                    }))
                }
                Err(error) => lines.push(format!("error: {error}")),
            }
            ControlFlow::Continue(())
        });
    }
    lines
}

/// The collection oracle of the module doc: the session's values and
/// gradients after a collection are those before it.
fn collection_changes_nothing(session: &mut Session) {
    let statements = rerun_statements(session);
    let before = outcome(session, &statements);
    let _ = session.run_source_with(":gc", |_, _| ControlFlow::Continue(()));
    let after = outcome(session, &statements);
    assert_eq!(before, after, "a collection changed values or gradients");
}
