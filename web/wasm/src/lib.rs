//! gradcalc in the browser: the library built for `wasm32-unknown-unknown`
//! with a plain C-style API, which `web/playground.js` calls (no
//! wasm-bindgen). One session lives in the module; text crosses the boundary
//! as UTF-8 bytes in the module's memory:
//!
//! 1. `gradcalc_alloc(len)` gives a buffer of `len` bytes; JavaScript copies
//!    the input there.
//! 2. `gradcalc_run(ptr, len)` runs it as the REPL runs a typed line (every
//!    statement, even after an error) and frees the buffer; the output — what
//!    the terminal shows, errors with their carets — is then at
//!    `gradcalc_output_ptr()`, `gradcalc_output_len()` bytes, as a JSON array
//!    of typed pieces `{"text", "class"}` (module `pieces`: the terminal's
//!    colours as classes, so that the page parses no escape codes; a `:plot`
//!    is a piece with an `svg` picture where the terminal draws braille). Returns 1 after
//!    `:quit`, else 0. `gradcalc_set_width(columns)` before it wraps the
//!    output to the pane's width, as the terminal's width does.
//! 3. `gradcalc_page()` puts the graph view's model of the current output
//!    (JSON, `src/render/html.rs`) in the same output buffer.
//! 4. `gradcalc_downloads()` puts the files the last run would have written
//!    (`:save FILE`, `:svg FILE`, …) in the output buffer, as a JSON array of
//!    `[name, content]` pairs, for the page to download; `-` still shows the
//!    content in the output instead.
//! 5. `gradcalc_script()` puts the session as a script (what `:save` writes)
//!    in the output buffer: the page keeps it across a reload and replays it
//!    to rebuild the session after Stop. Past the log's bounds (100 000
//!    statements) it is the session as values (`Session::values_script`).
//! 6. `gradcalc_commands()` puts the names of the commands the page carries
//!    out itself (`:load`'s file picker) or runs from a button (`:quiz`'s
//!    Quiz) in the output buffer, read from the command table.
//! 7. `gradcalc_view_after()` puts what the view does after the last input
//!    (show the finished pass; say that the view steps for `:step`) in the
//!    output buffer, decided by the command table as `:serve` decides.
//!
//! 8. `gradcalc_status()` puts what the page needs to know after the last
//!    input in the output buffer: `over`, the memory limit stopped it;
//!    `dropped`, how many of the session's first statements the script no
//!    longer holds (`Session::statements_dropped`); `quiz`, while a `:quiz`
//!    runs, `[k, n]`: its question k of n is asked, and the next input is
//!    its answer (`null` otherwise).
//! 9. `gradcalc_statements(ptr, len)` (a buffer from `gradcalc_alloc`, which
//!    it frees) puts the statements of a script, cut as a script is cut, in
//!    the output buffer as a JSON array of strings: the page replays a
//!    session a few statements at a time, saying how far it got.
//! 10. `gradcalc_assignment(ptr, len)` puts an assignment's problems (its
//!     text, starting code and `:expect` lines, nothing run) in the output
//!     buffer as JSON, and `gradcalc_transcript(ptr, len)` a transcript of
//!     inputs run in a fresh session, Markdown or JSON Lines (module
//!     `homework`).
//! 11. `gradcalc_cells(ptr, len)`: the Python package's core under Pyodide
//!     (module `notebook`: a request in JSON, the reply in the output
//!     buffer), a session of its own beside the playground's; and
//!     `gradcalc_value_…`, micrograd's `Value` on the engine (module
//!     `values`).
//!
//! Memory is bounded: past [`MEMORY_LIMIT`] bytes held, the running
//! statement is stopped (the flag Ctrl-C sets), the output keeps what came
//! before it and says that memory ran out, and `over` tells the page to
//! rebuild the session without it in a fresh module: a WebAssembly memory
//! never shrinks, so only a new one gives the memory back. The statement
//! that crossed the limit is left out of the script (a `:repeat` with the
//! steps it finished, too), as a failed statement is. The tensor budget is
//! [`TENSOR_BUDGET`] numbers, so that a tensor the budget allows fits in the
//! limit. All this happens well before the 4 GiB of a wasm32 memory, whose
//! exhaustion would end the module ("RuntimeError: unreachable"). Each run
//! keeps a finished `:descend` or `:repeat` of leaf updates in the script as
//! the values of the leaves it moved (`Session::checkpoint`), so that a
//! replay is quick. The output buffer is valid until the next call.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use gradcalc::driver::{self, Options, Outcome};
use gradcalc::render::{Format, Precision, Printer, Style, html, plot, series};
use gradcalc::session::{COMMANDS, CommandSpec, Event, Session, find_command};

mod homework;
mod notebook;
mod pieces;
mod values;

/// How typed lines run: as in the REPL.
const TYPED: Options = Options {
    keep_going: true,
    loads_stop_at_error: true,
    script: false,
    lines: false,
};

/// The most bytes the module holds before the running statement is stopped:
/// 512 MiB, some 16 to 33 million nodes at 20 bytes a node with room for their
/// vectors to double, well under the 4 GiB a wasm32 memory can grow to.
pub const MEMORY_LIMIT: usize = 512 << 20;

/// The tensor memory budget in the playground, in numbers: 2²⁵ (256 MiB),
/// half of [`MEMORY_LIMIT`], so that a tensor the budget allows leaves room
/// for its gradient's temporaries and the scalar graph.
pub const TENSOR_BUDGET: usize = 1 << 25;

/// Bytes of output written since the run began ([`Screen`]).
static WRITTEN: AtomicUsize = AtomicUsize::new(0);

/// [`WRITTEN`] when the memory limit was passed: the output before the
/// statement that passed it.
static MARK: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Bytes allocated and not yet freed.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// Set when an allocation passed [`MEMORY_LIMIT`] while a statement ran.
static OVER: AtomicBool = AtomicBool::new(false);

/// The held bytes past which the running statement is stopped; `usize::MAX`
/// between statements and for `:gc` and `:reset`, which free memory.
static CEILING: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The room a statement has when the session already holds more than
/// [`MEMORY_LIMIT`] at its start (a `:repeat` stopped by the limit keeps the
/// steps it finished): enough for `:stats`, a small statement or `:save`.
const SMALL_ROOM: usize = 32 << 20;

/// Past this many bytes held only tiny statements run (and `:gc`, `:reset`):
/// what the small ones add cannot creep up to the 4 GiB.
const HARD_LIMIT: usize = 1 << 30;

/// The ceiling of a statement starting with `held` bytes held.
fn ceiling(held: usize) -> usize {
    if held < MEMORY_LIMIT {
        MEMORY_LIMIT
    } else if held < HARD_LIMIT {
        held + SMALL_ROOM
    } else {
        held + (1 << 20)
    }
}

/// The system allocator, counting what is held: past [`MEMORY_LIMIT`] it asks
/// the running statement to stop (the flag Ctrl-C sets, which every long loop
/// polls). The allocation itself still succeeds: the statement stops within a
/// few thousand iterations and is undone.
struct Counting;

impl Counting {
    fn grew(&self, size: usize) {
        let held = HELD.fetch_add(size, Ordering::Relaxed) + size;
        // Asked once: after the statement stopped, the driver clears the
        // flag to report a `:repeat`'s finished steps, which must not be cut
        // short by the allocations of that report.
        if held > CEILING.load(Ordering::Relaxed) && !OVER.swap(true, Ordering::Relaxed) {
            MARK.store(WRITTEN.load(Ordering::Relaxed), Ordering::Relaxed);
            gradcalc::interrupt::request();
        }
    }
}

// SAFETY: every call is passed on to `System` unchanged; only counts are kept.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller promises for `System`.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            self.grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller promises for `System`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            self.grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: as the caller promises for `System`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as the caller promises for `System`.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            HELD.fetch_sub(layout.size(), Ordering::Relaxed);
            self.grew(new_size);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What the terminal would show, results and errors in order, and the plots
/// drawn as SVG in place of its braille charts.
/// The third part is set when a `:repeat` or `:descend` was stopped with its
/// finished steps kept (its event says so).
#[derive(Clone, Default)]
struct Screen(
    Rc<RefCell<Vec<u8>>>,
    Rc<RefCell<Vec<pieces::Plot>>>,
    Rc<std::cell::Cell<bool>>,
);

impl Screen {
    /// Shows a `:plot` without a file as an SVG picture where the terminal
    /// draws braille (whose glyphs, from a fallback font, are wider than the
    /// pane's cells and wrap): its titles as text, then the picture. Other
    /// events are left to the printer (false).
    fn show(&self, event: &Event) -> bool {
        use gradcalc::session::CalculusEvent;
        if let Event::Calculus(
            CalculusEvent::Repeat {
                interrupted: true, ..
            }
            | CalculusEvent::Descent {
                interrupted: true, ..
            },
        ) = event
        {
            self.2.set(true);
        }
        let Event::Plot {
            of,
            wrt,
            at,
            samples,
            target: None,
        } = event
        else {
            return false;
        };
        let charts = plot::terminal(of, wrt, at.0, samples, Precision::default());
        let from = format!(" for {wrt} from ");
        let titles: Vec<&str> = charts.lines().filter(|l| l.contains(&from)).collect();
        self.1.borrow_mut().push(pieces::Plot {
            at: self.0.borrow().len(),
            titles: titles.join("\n"),
            svg: plot::svg(of, wrt, at.0, samples),
        });
        true
    }
}

impl Screen {
    /// Shows the chart of a `:repeat` or `:descend` as an SVG picture after
    /// its table, titled as the terminal titles its braille chart.
    fn chart(&self, title: &str, values: &[f64]) {
        let steps = values.len().saturating_sub(1);
        let s = if steps == 1 { "" } else { "s" };
        self.1.borrow_mut().push(pieces::Plot {
            at: self.0.borrow().len(),
            titles: format!("{title} from step 0 to step {steps} ({steps} step{s})"),
            svg: series::svg(title, values),
        });
    }
}

impl Write for Screen {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
        WRITTEN.fetch_add(bytes.len(), Ordering::Relaxed);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct State {
    session: Session,
    printer: Printer<Screen, Screen>,
    screen: Screen,
    /// The bytes the last call returned.
    output: Vec<u8>,
    /// The files the last run wrote, as (name, content), for the page.
    downloads: Vec<(String, String)>,
    /// What the view does after the last input ([`gradcalc_view_after`]).
    view_after: serde_json::Value,
    /// Whether the memory limit stopped the last input ([`gradcalc_status`]).
    over: bool,
}

impl State {
    fn new() -> State {
        let screen = Screen::default();
        // The charts of `:repeat` and `:descend` are SVG here, as `:plot`'s.
        let style = Style {
            color: true,
            charts: false,
            ..Style::default()
        };
        let mut printer = Printer::new(Format::Human(style), screen.clone(), screen.clone());
        printer.writes.nowhere = true;
        printer.downloads = Some(Vec::new());
        let shown = screen.clone();
        printer.show = Some(Box::new(move |event, _| shown.show(event)));
        let charted = screen.clone();
        printer.chart = Some(Box::new(move |title, values| charted.chart(title, values)));
        let mut session = Session::new();
        session.set_tensor_budget(TENSOR_BUDGET);
        State {
            session,
            printer,
            screen,
            output: Vec::new(),
            downloads: Vec::new(),
            view_after: serde_json::json!({"finished": false, "steps": false}),
            over: false,
        }
    }
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::new());
}

/// A buffer of `len` bytes for the input (freed by [`gradcalc_run`]).
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_alloc(len: usize) -> *mut u8 {
    let mut buffer = vec![0u8; len].into_boxed_slice();
    let ptr = buffer.as_mut_ptr();
    std::mem::forget(buffer);
    ptr
}

/// Runs the `len` bytes at `ptr` (from [`gradcalc_alloc`], which this frees)
/// as one typed input. Returns 1 after `:quit`, 0 otherwise.
///
/// # Safety
/// `ptr` and `len` are a buffer [`gradcalc_alloc`] gave, not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gradcalc_run(ptr: *mut u8, len: usize) -> u32 {
    // SAFETY: the caller passes back a buffer of exactly `len` bytes that
    // `gradcalc_alloc` leaked from a boxed slice.
    let input = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) };
    STATE.with(|state| {
        let state = &mut *state.borrow_mut();
        gradcalc::interrupt::clear();
        OVER.store(false, Ordering::Relaxed);
        WRITTEN.store(0, Ordering::Relaxed);
        MARK.store(usize::MAX, Ordering::Relaxed);
        state.screen.2.set(false);
        let logged = state.session.statement_count();
        let ceiling = if frees_memory(&input) {
            usize::MAX
        } else {
            ceiling(HELD.load(Ordering::Relaxed))
        };
        CEILING.store(ceiling, Ordering::Relaxed);
        let text = String::from_utf8_lossy(&input).into_owned();
        state.view_after = serde_json::json!({
            "finished": gradcalc::web::shows_finished_pass(&text),
            "steps": gradcalc::web::pages_steps(&text),
        });
        let outcome = driver::run(
            &mut state.session,
            &mut state.printer,
            input,
            "<input>",
            None,
            TYPED,
        );
        CEILING.store(usize::MAX, Ordering::Relaxed);
        gradcalc::interrupt::clear();
        let _ = state.printer.flush();
        state.over = OVER.swap(false, Ordering::Relaxed);
        if state.over {
            out_of_memory(state, logged, &text);
        } else {
            state.session.checkpoint(logged);
        }
        if let Some(files) = &mut state.printer.downloads {
            state.downloads.append(files);
        }
        let shown = std::mem::take(&mut *state.screen.0.borrow_mut());
        let plots = std::mem::take(&mut *state.screen.1.borrow_mut());
        state.output = serde_json::to_vec(&pieces::pieces(&shown, plots)).unwrap_or_default();
        u32::from(matches!(outcome, Outcome::Quit { .. }))
    })
}

/// After the memory limit stopped a statement: the output keeps what came
/// before that statement, then says that memory ran out; the statement is
/// left out of the script when it was kept (a `:repeat` or `:descend` with
/// its finished steps, or a statement that had run when the limit was seen),
/// from `logged`, the script's length before the input. A stopped `:repeat`
/// or `:descend` is known by its event, or by its logged text, which counts
/// the steps it finished, not those typed in `input`.
fn out_of_memory(state: &mut State, logged: usize, input: &str) {
    let mark = MARK.load(Ordering::Relaxed);
    let after = {
        let shown = state.screen.0.borrow();
        String::from_utf8_lossy(&shown[mark.min(shown.len())..]).into_owned()
    };
    let stopped_steps = state
        .session
        .last_logged_steps(logged)
        .is_some_and(|logged| !input.contains(logged.trim()));
    if state.screen.2.get() || stopped_steps || after.contains("it is kept") {
        state.session.forget_last_statement(logged);
    }
    state.screen.0.borrow_mut().truncate(mark);
    state.screen.1.borrow_mut().retain(|plot| plot.at <= mark);
    let _ = writeln!(
        state.screen,
        "\x1b[1;31merror\x1b[0m: out of memory: this statement needs more than the {} MiB \
         the playground holds, so it is undone and nothing after it ran; the session is \
         rebuilt as it was before it. Smaller shapes or fewer steps fit; `:gc` reclaims \
         the nodes no name reaches",
        MEMORY_LIMIT >> 20
    );
}

/// Puts in the output buffer what the page needs to know after the last
/// input, as JSON: `over`, whether the memory limit stopped it (the page then
/// rebuilds the session from its script in a fresh module, which gives the
/// memory back); `dropped`, how many of the session's first statements the
/// script no longer holds (0 when it rebuilds the whole session).
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_status() {
    STATE.with(|state| {
        let state = &mut *state.borrow_mut();
        let status = serde_json::json!({
            "over": state.over,
            "dropped": state.session.statements_dropped(),
            "quiz": state.session.quiz().map(|quiz| quiz.position()),
        });
        state.output = status.to_string().into_bytes();
    });
}

/// Puts the statements of the script in the `len` bytes at `ptr` (from
/// [`gradcalc_alloc`], which this frees) in the output buffer, as a JSON
/// array of their texts, cut as a script is cut (a statement may span
/// lines); comments and blank lines are left out.
///
/// # Safety
/// `ptr` and `len` are a buffer [`gradcalc_alloc`] gave, not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gradcalc_statements(ptr: *mut u8, len: usize) {
    // SAFETY: as for `gradcalc_run`.
    let input = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) };
    let text = String::from_utf8_lossy(&input);
    let statements: Vec<&str> = gradcalc::syntax::statement_spans(&text)
        .into_iter()
        .map(|span| &text[span.start..span.end])
        .collect();
    let json = serde_json::to_vec(&statements).unwrap_or_default();
    STATE.with(|state| state.borrow_mut().output = json);
}

/// Puts in the output buffer what the view does after the last input, as
/// JSON: `finished`, whether it shows the finished backward pass (the last
/// statement asked for the gradients, as `:serve` decides); `steps`, whether
/// the input ran `:step` (here the view steps, and the page says so).
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_view_after() {
    STATE.with(|state| {
        let state = &mut *state.borrow_mut();
        state.output = state.view_after.to_string().into_bytes();
    });
}

/// The command an input starts with (`:gc`, `:load lesson.calc`), if it
/// starts with one, looked up in the session's command table.
fn command_of(input: &[u8]) -> Option<&'static CommandSpec> {
    let text = String::from_utf8_lossy(input);
    let name = text.split_whitespace().next()?.strip_prefix(':')?;
    find_command(name)
}

/// Whether an input is one of the commands that free memory (`:gc`,
/// `:reset`: `Traits::frees_memory`), which run past the memory limit.
fn frees_memory(input: &[u8]) -> bool {
    command_of(input).is_some_and(|spec| spec.traits.frees_memory)
}

/// Puts in the output buffer which typed commands the page carries out
/// itself, as a JSON object of name lists read from the command table (so
/// that the page matches no command name of its own): `load`, the commands
/// that read a script (`Traits::reads_script`: the page opens a file
/// picker).
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_commands() {
    let names = |keep: fn(&CommandSpec) -> bool| -> Vec<&'static str> {
        COMMANDS
            .iter()
            .filter(|spec| keep(spec))
            .flat_map(|spec| std::iter::once(spec.name).chain(spec.aliases.iter().copied()))
            .collect()
    };
    let lists = serde_json::json!({
        "load": names(|spec| spec.traits.reads_script),
        "quiz": names(|spec| spec.traits.starts_quiz),
    });
    STATE.with(|state| state.borrow_mut().output = lists.to_string().into_bytes());
}

/// Sets the width of the output pane in columns, as the terminal's width is
/// set: longer lines wrap (a trace line between its parts, continuation lines
/// indented) and tables are laid out in blocks that fit. Under 20: no wrapping.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_set_width(columns: usize) {
    STATE.with(|state| {
        state.borrow_mut().printer.width = (columns >= 20).then_some(columns);
    });
}

/// Puts the files of the runs since the last call in the output buffer, as a
/// JSON array of `[name, content]` pairs, and forgets them.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_downloads() {
    STATE.with(|state| {
        let state = &mut *state.borrow_mut();
        let files = std::mem::take(&mut state.downloads);
        state.output = serde_json::to_vec(&files).unwrap_or_default();
    });
}

/// Puts the session as a script (what `:save` writes) in the output buffer;
/// once the `:save` log has dropped its first statements, the session as
/// values instead (`Session::values_script`), which rebuilds every name.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_script() {
    STATE.with(|state| {
        let state = &mut *state.borrow_mut();
        // Past the log's bounds the script no longer rebuilds the session:
        // its values do.
        let script = if state.session.statements_dropped() > 0 {
            state.session.values_script()
        } else {
            state.session.script()
        };
        state.output = script.into_bytes();
    });
}

/// Puts the graph view's model of the current output (JSON) in the output
/// buffer: the picture and the backward steps, or a message why there is none.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_page() {
    STATE.with(|state| {
        let state = &mut *state.borrow_mut();
        let style = match state.printer.format {
            Format::Human(style) => style,
            Format::Json => Style::default(),
        };
        let model = match state.session.page() {
            Ok(page) => html::model(&page, &state.session, &style),
            Err(error) => html::message_model(&view_message(&error)),
        };
        state.output = model.to_string().into_bytes();
    });
}

/// Why the view shows no graph, and what to do, in the playground's words:
/// the view (not `:html`, which the student never typed) draws at most 500
/// nodes; a larger graph is summarised by `:graph` and `:topo`, or a smaller
/// part named and made the output.
fn view_message(error: &gradcalc::session::SessionError) -> String {
    let text = error.to_string();
    if text.contains("draws at most") {
        let text = text.replace("`:html` draws", "the view draws");
        return format!(
            "{text}: `:graph` and `:topo` summarise a graph of any size, or give a smaller \
             part a name (`h = …`) to see it here"
        );
    }
    match error.help() {
        Some(help) => format!("{text}: {help}"),
        None => format!("{text}: type a statement on the left"),
    }
}

/// Where the last call's output starts.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_output_ptr() -> *const u8 {
    STATE.with(|state| state.borrow().output.as_ptr())
}

/// How many bytes the last call's output has.
#[unsafe(no_mangle)]
pub extern "C" fn gradcalc_output_len() -> usize {
    STATE.with(|state| state.borrow().output.len())
}
