//! Homework in the playground: an assignment's problems read without running
//! anything, and a transcript of a session's inputs for grading — the
//! library's own `homework::assignment` and `transcript::record`, so that the
//! playground reads and records exactly as `gradcalc --assignment` and
//! `gradcalc --transcript` do.

use gradcalc::{homework, transcript};

use crate::STATE;

/// Puts the assignment in the `len` bytes at `ptr` (from `gradcalc_alloc`,
/// which this frees) in the output buffer, as JSON: `{title, problems:
/// [{title, text, code, checks, expects, quizzes: [{command, asks}]}]}`
/// (`homework::Assignment`). Nothing of it runs.
///
/// # Safety
/// `ptr` and `len` are a buffer `gradcalc_alloc` gave, not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gradcalc_assignment(ptr: *mut u8, len: usize) {
    // SAFETY: as the caller promises.
    let input = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) };
    let text = String::from_utf8_lossy(&input);
    let json = serde_json::to_vec(&homework::assignment(&text)).unwrap_or_default();
    STATE.with(|state| state.borrow_mut().output = json);
}

/// What `gradcalc_transcript` reads: the inputs, where they came from, when,
/// and the format.
#[derive(serde::Deserialize)]
struct Request {
    /// The inputs, one statement or more a line, as typed.
    source: String,
    /// The transcript's `origin` (the assignment's title).
    origin: String,
    /// The time, RFC 3339 in UTC (the page's clock).
    recorded: String,
    /// `md` or `jsonl`.
    format: String,
}

/// Puts a transcript in the output buffer: the request in the `len` bytes at
/// `ptr` (from `gradcalc_alloc`, which this frees) is JSON `{source, origin,
/// recorded, format}`; the source runs in a fresh session, as `gradcalc
/// --transcript FORMAT` runs a file, and the transcript is Markdown (`md`)
/// or JSON Lines (`jsonl`, which `gradcalc --check-transcript` reruns). A
/// request that does not read gives an empty output.
///
/// # Safety
/// `ptr` and `len` are a buffer `gradcalc_alloc` gave, not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gradcalc_transcript(ptr: *mut u8, len: usize) {
    // SAFETY: as the caller promises.
    let input = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) };
    let text = match serde_json::from_slice::<Request>(&input) {
        Ok(request) => {
            let recorded = transcript::record(&request.source, &request.origin, &request.recorded);
            if request.format == "md" {
                recorded.markdown()
            } else {
                recorded.json_lines()
            }
        }
        Err(_) => String::new(),
    };
    STATE.with(|state| state.borrow_mut().output = text.into_bytes());
}
