//! gradcalc in the browser: the library built for `wasm32-unknown-unknown`
//! with a plain C-style API, which `web/playground.js` calls (no
//! wasm-bindgen). One session lives in the module; text crosses the boundary
//! as UTF-8 bytes in the module's memory:
//!
//! 1. `gradcalc_alloc(len)` gives a buffer of `len` bytes; JavaScript copies
//!    the input there.
//! 2. `gradcalc_run(ptr, len)` runs it as the REPL runs a typed line (every
//!    statement, even after an error) and frees the buffer; the output — what
//!    the terminal shows, in ANSI colour, errors with their carets — is then
//!    at `gradcalc_output_ptr()`, `gradcalc_output_len()` bytes. Returns 1 after
//!    `:quit`, else 0.
//! 3. `gradcalc_page()` puts the graph view's model of the current output
//!    (JSON, `src/render/html.rs`) in the same output buffer.
//!
//! No file is written (this build has none to write: `:save` and the other
//! exports say so; `-` shows the content instead). The output buffer is valid
//! until the next call.

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

use gradcalc::driver::{self, Options, Outcome};
use gradcalc::render::{Format, Precision, Printer, Style, html};
use gradcalc::session::Session;

/// How typed lines run: as in the REPL.
const TYPED: Options = Options {
    keep_going: true,
    loads_stop_at_error: true,
    script: false,
    lines: false,
};

/// What the terminal would show, results and errors in order.
#[derive(Clone, Default)]
struct Screen(Rc<RefCell<Vec<u8>>>);

impl Write for Screen {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(bytes);
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
}

impl State {
    fn new() -> State {
        let screen = Screen::default();
        let style = Style {
            color: true,
            ascii: false,
            precision: Precision::default(),
        };
        let mut printer = Printer::new(Format::Human(style), screen.clone(), screen.clone());
        printer.writes.nowhere = true;
        State {
            session: Session::new(),
            printer,
            screen,
            output: Vec::new(),
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
        let outcome = driver::run(
            &mut state.session,
            &mut state.printer,
            input,
            "<input>",
            None,
            TYPED,
        );
        let _ = state.printer.flush();
        state.output = std::mem::take(&mut *state.screen.0.borrow_mut());
        u32::from(matches!(outcome, Outcome::Quit { .. }))
    })
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
            Err(error) => html::message_model(&format!("{error}: type a statement on the left")),
        };
        state.output = model.to_string().into_bytes();
    });
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
