//! The Python package's core under Pyodide (`python/gradcalc/_wasm.py`):
//! one [`Cells`] session per module instance, the same code as the compiled
//! module's `Core` (`gradcalc::notebook`), reached through one export,
//! [`gradcalc_cells`], which takes a request and answers in JSON.
//!
//! A request (UTF-8 JSON in a buffer from `gradcalc_alloc`) is an object
//! with `call` and its arguments; the reply, in the output buffer, has `ok`
//! (the result), or `key` (a `KeyError`'s message), `value` (a
//! `ValueError`'s message) or `error` (`[code, message, help]`, a session
//! error):
//!
//! | `call` | arguments | `ok` |
//! |---|---|---|
//! | `run_json` | `source`, `origin` | the JSON Lines; also `files` |
//! | `run_rich` | `source`, `origin`, `color` | `[[kind, content], …]`; also `files` |
//! | `value` | `name` | `[shape, elements]` or `null` |
//! | `grad` | `of`, `wrt` | `[shape, elements]` |
//! | `names` | | `[[name, shape], …]` |
//! | `page` | | `[true, page]` or `[false, why]` |
//! | `update_source` | `name`, `shape`, `elements` | the statement |
//! | `cell_source` | `source` | the source a cell runs |
//! | `value_…` | `slot`, … | a `Value`'s label, op, inputs, source (module `values`) |
//!
//! A call that the host's interrupt stopped (the import
//! `gradcalc.interrupted`, polled wherever Ctrl-C is) also has
//! `"interrupted": true`: the statement stopped as after Ctrl-C in the
//! terminal, the session kept, and the Python layer raises
//! `KeyboardInterrupt` after showing what ran.
//!
//! `files` are the files the run wrote, as `[name, content]` pairs: the
//! module has no file system, so the Python layer writes them into
//! Pyodide's. Numbers that JSON cannot hold (`nan`, `inf`, `-inf`) are
//! those strings, both ways.

use std::cell::{Cell, RefCell};

use gradcalc::files::WritePolicy;
use gradcalc::interrupt;
use gradcalc::notebook::{self, Array, Cells, GradError};
use serde_json::{Value, json};

use crate::{STATE, TENSOR_BUDGET};

thread_local! {
    /// The session of this module instance: one per Python `Session`.
    static CELLS: RefCell<Cells> = RefCell::new({
        let mut cells = Cells::new(WritePolicy::default(), true);
        cells.session_mut().set_tensor_budget(TENSOR_BUDGET);
        cells
    });
}

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "gradcalc")]
unsafe extern "C" {
    /// The module's one import, `gradcalc.interrupted`: 1 when the host asks
    /// the running statement to stop, else 0. Under Pyodide it reads
    /// Pyodide's interrupt buffer (`pyodide.setInterruptBuffer`), taking the
    /// SIGINT it holds; the playground gives `() => 0` (its Stop ends the
    /// worker instead).
    fn interrupted() -> u32;
}

thread_local! {
    /// Whether the host's interrupt stopped the running call.
    static HOST_STOPPED: Cell<bool> = const { Cell::new(false) };
}

/// The host's answer to "stop?" ([`interrupted`]), asked whenever a long
/// loop polls for Ctrl-C inside [`gradcalc_cells`]; remembered, so that the
/// reply says `interrupted`.
fn host_asks_to_stop() -> bool {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: an import that takes nothing and returns a number.
    let asks = unsafe { interrupted() } != 0;
    #[cfg(not(target_arch = "wasm32"))]
    let asks = false;
    if asks {
        HOST_STOPPED.set(true);
    }
    asks
}

/// `x` for JSON: a number, or `"nan"`, `"inf"`, `"-inf"`.
fn number_out(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else if x.is_nan() {
        json!("nan")
    } else if x > 0.0 {
        json!("inf")
    } else {
        json!("-inf")
    }
}

/// A number from JSON, as [`number_out`] writes it.
fn number_in(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "nan" => Some(f64::NAN),
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// `[shape, elements]`.
fn array_out((shape, elements): Array) -> Value {
    let elements: Vec<Value> = elements.into_iter().map(number_out).collect();
    json!([shape, elements])
}

/// The string argument `key` of `request` (empty when missing).
fn text<'a>(request: &'a Value, key: &str) -> &'a str {
    request.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The reply to `request` (see the module's table).
fn answer(cells: &mut Cells, request: &Value) -> Value {
    match text(request, "call") {
        "run_json" => {
            let out = cells.run_json(text(request, "source"), text(request, "origin"));
            json!({"ok": out, "files": cells.take_downloads()})
        }
        "run_rich" => {
            let color = request.get("color").and_then(Value::as_bool) == Some(true);
            let pieces = cells.run_rich(text(request, "source"), text(request, "origin"), color);
            json!({"ok": pieces, "files": cells.take_downloads()})
        }
        "value" => json!({"ok": cells.value(text(request, "name")).map(array_out)}),
        "grad" => match cells.grad(text(request, "of"), text(request, "wrt")) {
            Ok(gradient) => json!({"ok": array_out(gradient)}),
            Err(GradError::NoVariable(name)) => json!({"key": format!("no variable `{name}`")}),
            Err(GradError::Session(error)) => {
                json!({"error": [error.code().as_str(), error.to_string(), error.help()]})
            }
        },
        "names" => json!({"ok": cells.names()}),
        "page" => match cells.page() {
            Ok(page) => json!({"ok": [true, page]}),
            Err(why) => json!({"ok": [false, why]}),
        },
        "update_source" => {
            let shape: Option<Vec<usize>> =
                request.get("shape").and_then(Value::as_array).map(|sizes| {
                    sizes
                        .iter()
                        .filter_map(Value::as_u64)
                        .map(|n| n as usize)
                        .collect()
                });
            let elements: Option<Vec<f64>> = request
                .get("elements")
                .and_then(Value::as_array)
                .and_then(|xs| xs.iter().map(number_in).collect());
            let (Some(shape), Some(elements)) = (shape, elements) else {
                return json!({"value": "update_source needs a shape and numbers"});
            };
            match notebook::update_source(text(request, "name"), &shape, &elements) {
                Ok(source) => json!({"ok": source}),
                Err(message) => json!({"value": message}),
            }
        }
        "cell_source" => json!({"ok": notebook::cell_source(text(request, "source"))}),
        other => crate::values::answer(request)
            .unwrap_or_else(|| json!({"value": format!("no call `{other}`")})),
    }
}

/// Answers the request in the `len` bytes at `ptr` (from `gradcalc_alloc`,
/// which this frees): the reply, JSON, is then in the output buffer
/// (`gradcalc_output_ptr`, `gradcalc_output_len`).
///
/// # Safety
/// `ptr` and `len` are a buffer `gradcalc_alloc` gave, not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gradcalc_cells(ptr: *mut u8, len: usize) {
    // SAFETY: as for `gradcalc_run`: a buffer of exactly `len` bytes that
    // `gradcalc_alloc` leaked from a boxed slice.
    let input = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) };
    HOST_STOPPED.set(false);
    let mut reply = match serde_json::from_slice::<Value>(&input) {
        Ok(request) => interrupt::polling(host_asks_to_stop, || {
            CELLS.with(|cells| answer(&mut cells.borrow_mut(), &request))
        }),
        Err(error) => json!({"value": format!("a request that is not JSON: {error}")}),
    };
    if HOST_STOPPED.get() {
        // Stopped as by Ctrl-C: the statement undone (a `:repeat` keeps its
        // finished steps), the output kept; the flag cleared for the next call.
        interrupt::clear();
        reply["interrupted"] = json!(true);
    }
    let bytes = serde_json::to_vec(&reply).unwrap_or_default();
    STATE.with(|state| state.borrow_mut().output = bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(cells: &mut Cells, request: Value) -> Value {
        answer(cells, &request)
    }

    #[test]
    fn requests_answer_as_the_compiled_core_does() {
        let mut cells = Cells::new(WritePolicy::default(), true);
        let ran = call(
            &mut cells,
            json!({"call": "run_json", "source": "x = 2; y = x*x; :svg y.svg", "origin": "<t>"}),
        );
        assert_eq!(ran["ok"].as_str().unwrap().lines().count(), 3);
        assert_eq!(ran["files"][0][0], "y.svg");
        // y = x²: ∂y/∂x = 2x = 4.
        let grad = call(&mut cells, json!({"call": "grad", "of": "y", "wrt": "x"}));
        assert_eq!(grad, json!({"ok": [[], [4.0]]}));
        let missing = call(&mut cells, json!({"call": "grad", "of": "y", "wrt": "q"}));
        assert_eq!(missing, json!({"key": "no variable `q`"}));
        assert_eq!(
            call(&mut cells, json!({"call": "value", "name": "q"})),
            json!({"ok": null})
        );
        let refused = call(
            &mut cells,
            json!({"call": "run_json", "source": "v = [1, 2]", "origin": "<t>"}),
        );
        assert!(refused["ok"].as_str().unwrap().contains("\"value\""));
        let shape = call(&mut cells, json!({"call": "grad", "of": "v", "wrt": "x"}));
        assert_eq!(shape["error"][0], "shape");
        assert_eq!(
            call(&mut cells, json!({"call": "nothing"})),
            json!({"value": "no call `nothing`"})
        );
    }

    #[test]
    fn numbers_json_cannot_hold_go_as_their_names_both_ways() {
        let mut cells = Cells::new(WritePolicy::default(), true);
        let source = call(
            &mut cells,
            json!({"call": "update_source", "name": "v", "shape": [3], "elements": ["nan", "inf", -1.5]}),
        );
        assert_eq!(source, json!({"ok": "v := [nan, inf, -1.5]"}));
        call(
            &mut cells,
            json!({"call": "run_json", "source": "v = [1, 2, 3]; v := [nan, inf, -1.5]", "origin": "<t>"}),
        );
        let value = call(&mut cells, json!({"call": "value", "name": "v"}));
        assert_eq!(value, json!({"ok": [[3], ["nan", "inf", -1.5]]}));
        let bad = call(
            &mut cells,
            json!({"call": "update_source", "name": "v", "shape": [1], "elements": ["many"]}),
        );
        assert!(bad.get("value").is_some());
    }
}
