//! Homework: `:expect`, an answer checked against the one a TA expects.
//!
//! A TA's key writes `:expect QUANTITY [= VALUE] [tol=T]`: QUANTITY is a
//! variable (`L`), a gradient written as a student writes it (`∂L/∂W1`,
//! `dL/dW1`, `grad(L, W1)`) or any expression; VALUE is the expected number
//! or tensor (an expression, `[[1, 2], [3, 4]]`), or, left out, the value the
//! key itself computes there. `gradcalc --seal key.calc` (`crate::homework`)
//! writes the file students receive, where each `:expect` carries a salted
//! hash instead of the value (`sealed=…`).
//!
//! What a check can say:
//! - with the value (the key): correct, or off by a relative error (`off by
//!   3 %`, the element furthest off of a tensor), or the wrong shape;
//! - sealed: correct, wrong, or the wrong shape (the shape is stored in the
//!   clear). A hash says only whether the answer falls in the expected
//!   answer's cell of a grid of width 2·tol centred on it, so "wrong" cannot
//!   say by how much.
//!
//! The sealed form: the expected value `v` of each element is read on a grid
//! of cells of width `w = 2·tol`; the cell's offset `q = round(1000·(v/w −
//! round(v/w)))` (a thousandth of a cell, which says nothing of `v` beyond a
//! fraction of the tolerance) is stored so that `v` sits at the centre of its
//! cell, and the cells `k = round(v/w − q/1000)` of all elements are hashed
//! with a random salt, the tolerance and the shape by SHA-256, iterated
//! [`ROUNDS`] times so that trying every cell costs about a millisecond a try.
//! An answer `s` is in the same cell exactly when `|s − v| < tol` (to a
//! thousandth of tol).

use sha2::{Digest, Sha256};

use super::{Event, Session, SessionError};
use crate::syntax::{self, Span};

/// The tolerance of an `:expect` without `tol=`.
pub const DEFAULT_TOL: f64 = 1e-6;

/// How many times a sealed answer's SHA-256 is iterated: trying one cell
/// costs this many hashes.
pub const ROUNDS: u32 = 4096;

/// The version of the sealed form, the first field of `sealed=`.
const SEAL_VERSION: &str = "1";

/// An answer: a number (shape `[]`) or a tensor, its elements row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The sizes of its axes: none for a number.
    pub shape: Vec<usize>,
    /// The elements, row-major.
    pub data: Vec<f64>,
}

impl Answer {
    /// The shape as gradcalc writes it: `()` for a number, `3`, `2×3`.
    pub fn shape_text(&self) -> String {
        shape_text(&self.shape)
    }
}

/// A shape as gradcalc writes it: `()`, `3`, `2×3`.
pub fn shape_text(shape: &[usize]) -> String {
    super::TensorData {
        shape: shape.to_vec(),
        data: Vec::new(),
        summarised: false,
    }
    .shape_text()
}

/// An `:expect` line read: what to check, against what, within what.
#[derive(Debug, Clone, PartialEq)]
pub struct Expectation {
    /// The quantity as typed (`∂L/∂W1`): what the check is reported under.
    pub quantity: String,
    /// The expression evaluated for the student's answer (`grad(L, W1)`).
    pub expression: String,
    /// The expected value as typed, if given.
    pub value: Option<String>,
    /// The tolerance: an answer within it of the expected value is correct.
    pub tol: f64,
    /// The sealed form of the expected value, if the line has one.
    pub sealed: Option<Sealed>,
    /// Where the settings (`tol=…`, `sealed=…`) start in the text, for
    /// rewriting the line.
    pub settings_at: usize,
}

/// An expected answer sealed: its shape, the cells' offsets, salt and hash.
#[derive(Debug, Clone, PartialEq)]
pub struct Sealed {
    /// The expected shape (stored in the clear).
    pub shape: Vec<usize>,
    /// Each element's cell offset, in thousandths of a cell (−500 to 500).
    pub offsets: Vec<i32>,
    /// The salt, 16 bytes.
    pub salt: [u8; 16],
    /// SHA-256 of the cells, iterated [`ROUNDS`] times.
    pub hash: [u8; 32],
}

/// What a check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within the tolerance (every element of a tensor).
    Correct,
    /// Not within it.
    Wrong,
    /// A different shape from the expected one.
    WrongShape,
    /// The quantity cannot be evaluated yet (a name not defined, …).
    Unanswered,
    /// A key's line without a value: the key's own value here, which
    /// `gradcalc --seal` hashes (nothing to compare it with).
    Recorded,
}

/// What `:expect` reports, carried by [`Event::Homework`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HomeworkEvent {
    /// An answer checked.
    Expect {
        /// The quantity as typed (`∂L/∂W1`).
        quantity: String,
        /// What the check found.
        verdict: Verdict,
        /// The expected value was sealed (only correct, wrong or wrong shape
        /// can be said).
        sealed: bool,
        /// The tolerance.
        tol: super::Number,
        /// The answer's shape (`()` for a number), if it has one.
        shape: Option<String>,
        /// The expected shape.
        expected_shape: Option<String>,
        /// Unsealed and wrong: how far off, in percent of the expected
        /// value's largest magnitude (or absolute, when that is 0).
        off_by_percent: Option<super::Number>,
        /// Unsealed and wrong: the largest absolute difference.
        off_by: Option<super::Number>,
        /// Unsealed and wrong, a tensor: the element furthest off (`[1, 0]`).
        at: Option<String>,
        /// Unanswered: why (the error's message).
        reason: Option<String>,
    },
}

/// A malformed `:expect` line: the message and its place in the line.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpectError {
    /// What is wrong.
    pub message: String,
    /// The byte range of the text at fault, within the line's text after
    /// `:expect`.
    pub at: (usize, usize),
}

/// Reads the text after `:expect`: `QUANTITY [= VALUE] [tol=T] [sealed=…]`.
///
/// Errors: no quantity, a `tol=` that is not a positive finite number, a
/// `sealed=` that is not gradcalc's sealed form, a setting given twice.
pub fn parse_expectation(text: &str) -> Result<Expectation, ExpectError> {
    let mut end = text.trim_end().len();
    let mut tol = None;
    let mut sealed = None;
    // The settings are the last words.
    loop {
        let head = text[..end].trim_end();
        let start = head.rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let word = &head[start..];
        let at = (start, head.len());
        if let Some(value) = word.strip_prefix("tol=") {
            if tol.is_some() {
                return Err(error("`tol=` is given twice", at));
            }
            tol = Some(parse_tol(value).ok_or_else(|| {
                error(
                    &format!("`tol={value}`: the tolerance is a positive number, e.g. `tol=1e-6`"),
                    at,
                )
            })?);
        } else if let Some(value) = word.strip_prefix("sealed=") {
            if sealed.is_some() {
                return Err(error("`sealed=` is given twice", at));
            }
            sealed = Some(parse_sealed(value).ok_or_else(|| {
                error(
                    "this `sealed=` is not one `gradcalc --seal` wrote (was the line edited?)",
                    at,
                )
            })?);
        } else {
            break;
        }
        end = start;
    }
    let head = &text[..end];
    let (quantity, value) = match top_level_equals(head) {
        Some(i) => (&head[..i], Some(head[i + 1..].trim())),
        None => (head, None),
    };
    let quantity = quantity.trim();
    if quantity.is_empty() {
        return Err(error(
            "`:expect` needs what to check, e.g. `:expect ∂L/∂w = 0.5 tol=1e-6`",
            (0, text.len()),
        ));
    }
    if value == Some("") {
        return Err(error(
            "nothing after `=`: write the expected value, or leave out `=` to expect what the key computes",
            (0, text.len()),
        ));
    }
    if value.is_some() && sealed.is_some() {
        return Err(error(
            "a line has either the expected value or `sealed=`, not both",
            (0, text.len()),
        ));
    }
    Ok(Expectation {
        quantity: quantity.to_string(),
        expression: gradient_expression(quantity).unwrap_or_else(|| quantity.to_string()),
        value: value.map(str::to_string),
        tol: tol.unwrap_or(DEFAULT_TOL),
        sealed,
        settings_at: end,
    })
}

fn error(message: &str, at: (usize, usize)) -> ExpectError {
    ExpectError {
        message: message.to_string(),
        at,
    }
}

fn parse_tol(text: &str) -> Option<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|t| t.is_finite() && *t > 0.0)
}

/// The byte index of the first `=` at bracket depth 0 that is not part of
/// `==`, `<=`, `>=`, `!=` or `:=`.
fn top_level_equals(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'=' if depth == 0 => {
                let before = i.checked_sub(1).map(|j| bytes[j]);
                let after = bytes.get(i + 1).copied();
                if !matches!(before, Some(b'=' | b'<' | b'>' | b'!' | b':')) && after != Some(b'=')
                {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `∂L/∂W1` or `dL/dW1` (two names) written as `grad(L, W1)`.
fn gradient_expression(quantity: &str) -> Option<String> {
    let (top, bottom) = quantity.split_once('/')?;
    let strip = |part: &str| {
        let part = part.trim();
        part.strip_prefix('∂')
            .or_else(|| part.strip_prefix('d'))
            .map(str::to_string)
    };
    let (of, wrt) = (strip(top)?, strip(bottom)?);
    (syntax::is_name(&of) && syntax::is_name(&wrt)).then(|| format!("grad({of}, {wrt})"))
}

fn parse_sealed(text: &str) -> Option<Sealed> {
    let mut fields = text.split(':');
    if fields.next()? != SEAL_VERSION {
        return None;
    }
    let salt: [u8; 16] = from_hex(fields.next()?)?.try_into().ok()?;
    let shape_field = fields.next()?;
    let shape = if shape_field == "s" {
        Vec::new()
    } else {
        shape_field
            .split('x')
            .map(|n| n.parse::<usize>().ok())
            .collect::<Option<Vec<_>>>()?
    };
    let offsets = fields
        .next()?
        .split('/')
        .map(|n| n.parse::<i32>().ok().filter(|q| q.abs() <= 500))
        .collect::<Option<Vec<_>>>()?;
    let hash: [u8; 32] = from_hex(fields.next()?)?.try_into().ok()?;
    if fields.next().is_some() || offsets.len() != shape.iter().product::<usize>() {
        return None;
    }
    Some(Sealed {
        shape,
        offsets,
        salt,
        hash,
    })
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Sealed {
    /// Seals `expected` within `tol` with `salt`.
    pub fn new(expected: &Answer, tol: f64, salt: [u8; 16]) -> Sealed {
        let width = 2.0 * tol;
        let offsets: Vec<i32> = expected
            .data
            .iter()
            .map(|v| {
                let c = v / width;
                ((c - c.round()) * 1000.0).round() as i32
            })
            .collect();
        let cells = cells(&expected.data, &offsets, width);
        Sealed {
            hash: digest(&salt, tol, &expected.shape, &cells),
            shape: expected.shape.clone(),
            offsets,
            salt,
        }
    }

    /// The `sealed=` word's value: `1:SALT:SHAPE:OFFSETS:HASH`.
    pub fn text(&self) -> String {
        let shape = if self.shape.is_empty() {
            "s".to_string()
        } else {
            self.shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join("x")
        };
        let offsets = self
            .offsets
            .iter()
            .map(i32::to_string)
            .collect::<Vec<_>>()
            .join("/");
        format!(
            "{SEAL_VERSION}:{}:{shape}:{offsets}:{}",
            to_hex(&self.salt),
            to_hex(&self.hash)
        )
    }

    /// Whether `answer` is within `tol` of the sealed value (its shape is
    /// checked first by the caller).
    pub fn matches(&self, answer: &Answer, tol: f64) -> bool {
        let cells = cells(&answer.data, &self.offsets, 2.0 * tol);
        digest(&self.salt, tol, &answer.shape, &cells) == self.hash
    }
}

/// Each element's cell on the grid of `width`, shifted by its offset.
fn cells(data: &[f64], offsets: &[i32], width: f64) -> Vec<i64> {
    data.iter()
        .zip(offsets)
        .map(|(v, q)| (v / width - f64::from(*q) / 1000.0).round() as i64)
        .collect()
}

fn digest(salt: &[u8; 16], tol: f64, shape: &[usize], cells: &[i64]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(b"gradcalc :expect v1");
    hasher.update(salt);
    hasher.update(tol.to_bits().to_le_bytes());
    hasher.update((shape.len() as u64).to_le_bytes());
    for n in shape {
        hasher.update((*n as u64).to_le_bytes());
    }
    for k in cells {
        hasher.update(k.to_le_bytes());
    }
    let mut hash: [u8; 32] = hasher.finalize().into();
    for _ in 0..ROUNDS {
        hash = Sha256::new()
            .chain_update(hash)
            .chain_update(salt)
            .finalize()
            .into();
    }
    hash
}

/// Compares `answer` with the `expected` value within `tol`.
pub fn compare(quantity: &str, answer: &Answer, expected: &Answer, tol: f64) -> HomeworkEvent {
    let mut event = verdict_event(quantity, Verdict::Correct, false, tol);
    let HomeworkEvent::Expect {
        verdict,
        shape,
        expected_shape,
        off_by_percent,
        off_by,
        at,
        ..
    } = &mut event;
    *shape = Some(answer.shape_text());
    *expected_shape = Some(expected.shape_text());
    if answer.shape != expected.shape {
        *verdict = Verdict::WrongShape;
        return event;
    }
    let (worst, difference) = answer
        .data
        .iter()
        .zip(&expected.data)
        .map(|(s, v)| if s == v { 0.0 } else { (s - v).abs() })
        .enumerate()
        .fold((0, 0.0f64), |best, (i, d)| {
            // A nan difference is the furthest off.
            if d.is_nan() && !best.1.is_nan() || d > best.1 {
                (i, d)
            } else {
                best
            }
        });
    if difference <= tol {
        return event;
    }
    *verdict = Verdict::Wrong;
    let scale = expected.data.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    *off_by = Some(super::Number(difference));
    if scale > 0.0 {
        *off_by_percent = Some(super::Number(100.0 * difference / scale));
    }
    if !answer.shape.is_empty() {
        *at = Some(index_text(&answer.shape, worst));
    }
    event
}

/// `[i]` or `[i, j]` of the element at `flat` of a tensor of `shape`.
fn index_text(shape: &[usize], flat: usize) -> String {
    match shape {
        [_, columns] => format!("[{}, {}]", flat / columns, flat % columns),
        _ => format!("[{flat}]"),
    }
}

/// Checks `answer` against a sealed value within `tol`.
pub fn check_sealed(quantity: &str, answer: &Answer, sealed: &Sealed, tol: f64) -> HomeworkEvent {
    let verdict = if answer.shape != sealed.shape {
        Verdict::WrongShape
    } else if sealed.matches(answer, tol) {
        Verdict::Correct
    } else {
        Verdict::Wrong
    };
    let mut event = verdict_event(quantity, verdict, true, tol);
    let HomeworkEvent::Expect {
        shape,
        expected_shape,
        ..
    } = &mut event;
    *shape = Some(answer.shape_text());
    *expected_shape = Some(shape_text(&sealed.shape));
    event
}

fn verdict_event(quantity: &str, verdict: Verdict, sealed: bool, tol: f64) -> HomeworkEvent {
    HomeworkEvent::Expect {
        quantity: quantity.to_string(),
        verdict,
        sealed,
        tol: super::Number(tol),
        shape: None,
        expected_shape: None,
        off_by_percent: None,
        off_by: None,
        at: None,
        reason: None,
    }
}

impl Session {
    /// `:expect …`: `text` is the line after `:expect`, which starts at
    /// `start` in the statement's source (for the places of errors).
    /// Evaluates the quantity in the session (changing nothing) and reports
    /// the check; a quantity that cannot be evaluated yet is reported as
    /// unanswered, not as an error.
    ///
    /// Errors: [`SessionError::BadArguments`] for a malformed line and an
    /// expected value that does not evaluate.
    pub(super) fn expect(
        &mut self,
        text: &str,
        start: usize,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let expectation = parse_expectation(text).map_err(|e| SessionError::BadArguments {
            message: e.message,
            span: Span::new(start + e.at.0, start + e.at.1),
            help: Some("e.g. `:expect ∂L/∂w = 0.5 tol=1e-6`".to_string()),
        })?;
        let whole = Span::new(start, start + text.len());
        let expected = match &expectation.value {
            Some(value) => {
                Some(
                    self.answer_of(value)
                        .map_err(|reason| SessionError::BadArguments {
                            message: format!(
                                "the expected value `{value}` does not evaluate: {reason}"
                            ),
                            span: whole,
                            help: None,
                        })?,
                )
            }
            None => None,
        };
        let event = match self.answer_of(&expectation.expression) {
            Err(reason) => {
                let mut event = verdict_event(
                    &expectation.quantity,
                    Verdict::Unanswered,
                    expectation.sealed.is_some(),
                    expectation.tol,
                );
                let HomeworkEvent::Expect { reason: slot, .. } = &mut event;
                *slot = Some(reason);
                event
            }
            Ok(answer) => match (&expected, &expectation.sealed) {
                (Some(expected), _) => {
                    compare(&expectation.quantity, &answer, expected, expectation.tol)
                }
                (None, Some(sealed)) => {
                    check_sealed(&expectation.quantity, &answer, sealed, expectation.tol)
                }
                (None, None) => {
                    let mut event = verdict_event(
                        &expectation.quantity,
                        Verdict::Recorded,
                        false,
                        expectation.tol,
                    );
                    let HomeworkEvent::Expect { shape, .. } = &mut event;
                    *shape = Some(answer.shape_text());
                    event
                }
            },
        };
        events.push(Event::Homework(event));
        Ok(())
    }

    /// `:expect` as the command table runs it: reads the statement's text
    /// after the command's name (words lose their commas: `[[1, 2]]`).
    pub(super) fn expect_command(
        &mut self,
        command: &super::command::Command,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let (base, text) = std::mem::take(&mut self.command_text);
        let from = command.name.span.end.saturating_sub(base);
        let line = text.get(from..).unwrap_or("");
        // A comment after the line is not part of it.
        let line = line.split('#').next().unwrap_or("");
        self.expect(line, command.name.span.end, events)
    }

    /// The value of `expression` in this session, a number or a tensor,
    /// computed without changing the session: the nodes it builds are
    /// removed again. Errors: the evaluation's error, as its message.
    pub fn answer_of(&mut self, expression: &str) -> Result<Answer, String> {
        let tree = syntax::parse_expression(expression).map_err(|e| e.to_string())?;
        // The journal from here: what the undo below takes back (called
        // between statements too, by `gradcalc --seal`).
        self.begin_statement();
        let mut scratch = Vec::new();
        let answer = if self.touches_tensor(&tree) {
            self.evaluate_tensor(&tree, &mut scratch).map(|(id, _)| {
                let data = super::tensors::tensor_data(self.tensors.graph.value(id));
                Answer {
                    shape: data.shape,
                    data: data.data.iter().map(|n| n.0).collect(),
                }
            })
        } else {
            self.evaluate(&tree, &mut scratch).map(|value| Answer {
                shape: Vec::new(),
                data: vec![self.graph.value(value.node)],
            })
        };
        // Nothing of the evaluation stays: put the session back as the
        // statement found it, and go on from there.
        self.undo_statement();
        self.begin_statement();
        answer.map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_read_into_quantity_value_and_settings() {
        let e = parse_expectation("∂L/∂W1 = [[1, 2], [3, 4]] tol=1e-3").unwrap();
        assert_eq!(e.quantity, "∂L/∂W1");
        assert_eq!(e.expression, "grad(L, W1)");
        assert_eq!(e.value.as_deref(), Some("[[1, 2], [3, 4]]"));
        assert_eq!(e.tol, 1e-3);
        let e = parse_expectation("dz/dx").unwrap();
        assert_eq!(
            (e.expression.as_str(), e.value, e.tol),
            ("grad(z, x)", None, 1e-6)
        );
        assert!(parse_expectation("L tol=-1").is_err());
        assert!(parse_expectation(" = 3").is_err());
    }

    #[test]
    fn a_sealed_value_accepts_exactly_the_answers_within_tol() {
        // v = 0.7 at tol 0.01: answers in (0.69, 0.71) are correct.
        let expected = Answer {
            shape: vec![],
            data: vec![0.7],
        };
        let sealed = Sealed::new(&expected, 0.01, [7; 16]);
        let read = parse_sealed(&sealed.text()).unwrap();
        assert_eq!(read, sealed);
        for (s, ok) in [
            (0.7, true),
            (0.6905, true),
            (0.7095, true),
            (0.6895, false),
            (0.7105, false),
            (-0.7, false),
        ] {
            let answer = Answer {
                shape: vec![],
                data: vec![s],
            };
            assert_eq!(sealed.matches(&answer, 0.01), ok, "{s}");
        }
        // The tolerance is part of the hash: a student cannot widen it.
        let answer = Answer {
            shape: vec![],
            data: vec![0.7],
        };
        assert!(!sealed.matches(&answer, 0.02));
    }

    #[test]
    fn off_by_is_the_element_furthest_off_relative_to_the_largest_expected() {
        let expected = Answer {
            shape: vec![2, 2],
            data: vec![1.0, 2.0, 3.0, 4.0],
        };
        let answer = Answer {
            shape: vec![2, 2],
            data: vec![1.0, 2.0, 3.12, 4.0],
        };
        let HomeworkEvent::Expect {
            verdict,
            off_by_percent,
            at,
            ..
        } = compare("W", &answer, &expected, 1e-6);
        assert_eq!(verdict, Verdict::Wrong);
        // 0.12 / 4 = 3 %.
        assert!((off_by_percent.unwrap().0 - 3.0).abs() < 1e-9);
        assert_eq!(at.as_deref(), Some("[1, 0]"));
    }
}
