//! Vectors and matrices as text: aligned rows with the shape, large ones
//! summarised as numpy summarises them (more than 1000 elements: the first
//! and last 3 of each axis, `…` between), and the steps of a tensor `:trace`.

use std::fmt::Write;

use super::paint::Painter;
use crate::session::{Number, TensorData, TensorName, TensorTraceStep};

/// Past this many elements a tensor is summarised (numpy's `threshold`).
const SUMMARY_THRESHOLD: usize = 1000;

/// How many elements of each end of an axis a summary keeps (numpy's `edgeitems`).
const EDGE_ITEMS: usize = 3;

/// The indices of an axis of `n` shown: all, or the ends with `None` for `…`.
fn shown(n: usize, summarise: bool) -> Vec<Option<usize>> {
    axis_ends(n, !summarise, EDGE_ITEMS)
}

/// The indices of an axis of `n` elements: all of them when `whole`, else
/// the first and last `edge` with `None` between them for `…` (numpy's
/// summary, its `edgeitems`). A tensor's text and its picture's boxes
/// summarise this way, each with its own `edge`.
pub(crate) fn axis_ends(n: usize, whole: bool, edge: usize) -> Vec<Option<usize>> {
    if whole || n <= 2 * edge {
        return (0..n).map(Some).collect();
    }
    (0..edge)
        .map(Some)
        .chain([None])
        .chain((n - edge..n).map(Some))
        .collect()
}

/// One element as laid out in a row: the spaces that align it, then its
/// text (painted when shown, `…` never).
struct Word {
    pad: usize,
    text: String,
    painted: bool,
}

impl Word {
    /// Its width in columns.
    fn len(&self) -> usize {
        self.pad + self.text.chars().count()
    }

    fn push_to(&self, out: &mut String, paint: &dyn Fn(&str) -> String) {
        out.extend(std::iter::repeat_n(' ', self.pad));
        if self.painted {
            out.push_str(&paint(&self.text));
        } else {
            out.push_str(&self.text);
        }
    }
}

/// The words of one axis, `[a, b, …]`, laid out as numpy's
/// `_formatArray` lays out its last axis: each word after `, ` on the same
/// line while the line, counted from the left margin with `hanging`
/// columns before its first word, stays within `limit` columns; else on a
/// new line indented by `hanging` (a line holds one word at least). The
/// first line has no indent (its caller writes what comes before it).
fn lay_out(words: &[Word], hanging: usize, limit: usize, paint: &dyn Fn(&str) -> String) -> String {
    let mut out = String::from("[");
    let mut line = hanging;
    for (k, word) in words.iter().enumerate() {
        if k > 0 && line + word.len() > limit {
            // numpy strips the space after the `,` that ends the line.
            while out.ends_with(' ') {
                out.pop();
            }
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', hanging));
            line = hanging;
        }
        word.push_to(&mut out, paint);
        line += word.len();
        if k + 1 < words.len() {
            out.push_str(", ");
            line += 2;
        }
    }
    out.push(']');
    out
}

/// The text of a tensor's elements, valid input (`[1, -1, 0.5]`,
/// `[[1, 2], [3, 4]]`, columns aligned), laid out for lines of `width`
/// columns with numpy's rule (its `linewidth`): `prefix` columns come before
/// the first line (`x = `, or a matrix's indent, which its other rows and
/// wrapped lines keep) and `suffix` columns after the last (a vector's
/// shape). A row wider than the line wraps between its elements, each
/// wrapped line indented under the row's first element. A vector that fits
/// is written unpadded; one that wraps, and every matrix, pads its elements
/// to align them by column. `paint` colours each number.
pub(super) fn elements(
    value: &TensorData,
    (prefix, suffix, width): (usize, usize, usize),
    p: &Painter,
    paint: &dyn Fn(&str) -> String,
) -> String {
    let summarise = value.summarised || value.len() > SUMMARY_THRESHOLD;
    let text = |x: &Number| p.number(x.0);
    match value.shape[..] {
        // Empty (a size 0 on some axis): `[]`, never a row per index.
        [_, ..] if value.is_empty() => "[]".to_string(),
        [] => value
            .data
            .first()
            .map(text)
            .map_or_else(String::new, |t| paint(&t)),
        [_] => {
            let cells: Vec<Option<String>> = shown(value.len(), summarise)
                .into_iter()
                .map(|k| k.map(|k| value.element(k).map_or_else(String::new, |x| text(&x))))
                .collect();
            let plain = |c: &Option<String>| c.as_deref().map_or(1, |c| c.chars().count());
            let one_line = 2 + cells.iter().map(|c| plain(c) + 2).sum::<usize>() - 2;
            let widest = if prefix + one_line + suffix <= width {
                0
            } else {
                cells.iter().map(plain).max().unwrap_or(0)
            };
            let words: Vec<Word> = cells
                .into_iter()
                .map(|c| match c {
                    Some(text) => Word {
                        pad: widest.saturating_sub(text.chars().count()),
                        text,
                        painted: true,
                    },
                    None => Word {
                        pad: 0,
                        text: "…".to_string(),
                        painted: false,
                    },
                })
                .collect();
            // numpy: the suffix shortens every line; `]` or `,` ends one.
            let limit = width.saturating_sub(suffix + 1);
            lay_out(&words, prefix + 1, limit, paint)
        }
        _ => matrix(value, (prefix, width), summarise, &text, paint),
    }
}

/// The text of a tensor's elements on one line and unpadded, valid input
/// (`[[0.5, 0, -1], [2, 3, 4]]`), summarised as [`elements`] summarises it:
/// for a table's cell, where the terminal's aligning spaces would only
/// stretch the cell.
pub(super) fn elements_inline(value: &TensorData, p: &Painter) -> String {
    let summarise = value.summarised || value.len() > SUMMARY_THRESHOLD;
    let text = |k: Option<usize>| match k {
        Some(k) => value.element(k).map_or_else(String::new, |x| p.number(x.0)),
        None => "…".to_string(),
    };
    let list = |items: Vec<String>| format!("[{}]", items.join(", "));
    match value.shape[..] {
        [_, ..] if value.is_empty() => "[]".to_string(),
        [] => value
            .data
            .first()
            .map_or_else(String::new, |x| p.number(x.0)),
        [n] => list(shown(n, summarise).into_iter().map(text).collect()),
        [rows, columns, ..] => list(
            shown(rows, summarise)
                .into_iter()
                .map(|r| match r {
                    Some(r) => list(
                        shown(columns, summarise)
                            .into_iter()
                            .map(|c| text(c.map(|c| r * columns + c)))
                            .collect(),
                    ),
                    None => "…".to_string(),
                })
                .collect(),
        ),
    }
}

/// A matrix's rows, aligned by column, `prefix` spaces before each row
/// after the first, each row laid out for lines of `width` columns
/// ([`lay_out`]). Rows that fit on a line keep each column as wide as its
/// widest element; rows that wrap pad every element to the widest of all,
/// as numpy does.
fn matrix(
    value: &TensorData,
    (prefix, width): (usize, usize),
    summarise: bool,
    text: &dyn Fn(&Number) -> String,
    paint: &dyn Fn(&str) -> String,
) -> String {
    let rows = value.shape.first().copied().unwrap_or(0);
    let columns = value.shape.get(1).copied().unwrap_or(0);
    let row_ids = shown(rows, summarise);
    let column_ids = shown(columns, summarise);
    let cell = |r: usize, c: usize| {
        value
            .element(r * columns + c)
            .map_or_else(String::new, |x| text(&x))
    };
    let cells: Vec<Option<Vec<Option<String>>>> = row_ids
        .iter()
        .map(|r| r.map(|r| column_ids.iter().map(|c| c.map(|c| cell(r, c))).collect()))
        .collect();
    let mut widths = vec![0; column_ids.len()];
    for row in cells.iter().flatten() {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.as_deref().map_or(1, |c| c.chars().count()));
        }
    }
    // numpy: each nesting level takes a column (`[`) from the line and one
    // more for the `]` or `,` that ends it.
    let limit = width.saturating_sub(2);
    // Rows that fit keep each column as wide as its widest element; rows
    // that wrap give every element the width of the widest (numpy's rule),
    // so that the wrapped lines stay aligned with each other.
    let one_line = prefix + 2 + widths.iter().map(|w| w + 2).sum::<usize>() - 2;
    if one_line > limit {
        let widest = cells
            .iter()
            .flatten()
            .flatten()
            .flatten()
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0);
        for (w, c) in widths.iter_mut().zip(&column_ids) {
            *w = if c.is_some() { widest } else { 1 };
        }
    }
    let mut out = String::from("[");
    for (k, row) in cells.iter().enumerate() {
        if k > 0 {
            out.push_str(",\n");
            out.extend(std::iter::repeat_n(' ', prefix + 1));
        }
        match row {
            None => out.push('…'),
            Some(row) => {
                let words: Vec<Word> = row
                    .iter()
                    .zip(&widths)
                    .map(|(cell, w)| match cell {
                        Some(text) => Word {
                            pad: w - text.chars().count(),
                            text: text.clone(),
                            painted: true,
                        },
                        None => Word {
                            pad: w - 1,
                            text: "…".to_string(),
                            painted: false,
                        },
                    })
                    .collect();
                out.push_str(&lay_out(&words, prefix + 2, limit, paint));
            }
        }
    }
    out.push(']');
    out
}

/// `head = value`: a number or a vector on one line with its shape after
/// it, a matrix under a line `head = m×n`; without a head (an expression's
/// value) the value alone. Vectors and matrices wider than the style's
/// width wrap ([`elements`]).
pub(super) fn block(
    out: &mut String,
    head: &str,
    value: &TensorData,
    p: &Painter,
    paint: &dyn Fn(&str) -> String,
) {
    let equals = if head.is_empty() {
        String::new()
    } else {
        format!("{head} = ")
    };
    // Columns, not characters: a coloured head holds escape codes.
    let columns = crate::render::printer::visible_columns(head);
    let indent = " ".repeat(columns.min(8) + 2);
    let width = p.0.width;
    match value.shape.len() {
        0 => {
            let _ = writeln!(out, "{equals}{}", elements(value, (0, 0, width), p, paint));
        }
        1 => {
            let shape = format!("({})", value.shape_text());
            let prefix = crate::render::printer::visible_columns(&equals);
            let suffix = 2 + shape.chars().count();
            let _ = writeln!(
                out,
                "{equals}{}  {}",
                elements(value, (prefix, suffix, width), p, paint),
                p.dim(&shape)
            );
        }
        _ => {
            let _ = writeln!(out, "{equals}{}", p.dim(&value.shape_text()));
            let _ = writeln!(
                out,
                "{indent}{}",
                elements(value, (indent.len(), 0, width), p, paint)
            );
        }
    }
}

/// A tensor `:trace`: its header, then per step the node and its upstream,
/// then per operand its matrix rule with shapes and what it receives.
pub(super) fn trace(
    out: &mut String,
    of: &str,
    legend: &[TensorName],
    steps: &[TensorTraceStep],
    p: &Painter,
) {
    trace_header(out, of, legend, p);
    if steps.is_empty() {
        let _ = writeln!(
            out,
            "(no steps: {of} is a leaf, no op is between it and itself; its gradient is the seed, ones of its shape)"
        );
    }
    trace_steps(out, of, steps, p);
}

/// The header of a tensor `:trace`, and what each short name (`t39`) of a
/// node whose expression is too long to write in every line stands for.
pub(super) fn trace_header(out: &mut String, of: &str, legend: &[TensorName], p: &Painter) {
    let _ = writeln!(
        out,
        "{}",
        p.dim(&format!(
            "backward pass from {of}: each tensor op one step, its rule with shapes, then the numbers"
        ))
    );
    for row in legend {
        let _ = writeln!(
            out,
            "  {} {} = {}",
            p.dim("where"),
            p.name(&row.name),
            row.computes
        );
    }
}

/// The steps of a tensor `:trace`, without its header.
pub(super) fn trace_steps(out: &mut String, of: &str, steps: &[TensorTraceStep], p: &Painter) {
    let grad = |s: &str| p.grad_text(s);
    let partial = |wrt: &str| {
        if wrt.contains(' ') {
            p.partial(of, &format!("({wrt})"))
        } else {
            p.partial(of, wrt)
        }
    };
    for step in steps {
        let _ = writeln!(out, "[{}] {} ({})", step.step, p.name(&step.node), step.op);
        block(
            out,
            &format!("    upstream {}", partial(&step.node)),
            &step.upstream,
            p,
            &grad,
        );
        for c in &step.contributions {
            let uses = c
                .uses
                .map(|(k, n)| format!("  (use {k} of {n}: contributions add)"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    {} += {}   {}{}",
                partial(&c.input),
                c.rule,
                p.dim(&c.shapes),
                p.dim(&uses)
            );
            block(out, "     ", &c.value, p, &grad);
            if let Some(sum) = &c.so_far {
                block(
                    out,
                    &format!("    {} so far", partial(&c.input)),
                    sum,
                    p,
                    &grad,
                );
            }
            for chain in &c.elements {
                let terms: Vec<String> = chain
                    .terms
                    .iter()
                    .map(|t| format!("{}·{}", p.factor(t.upstream.0), p.factor(t.local.0)))
                    .collect();
                let outputs: Vec<&str> = chain.terms.iter().map(|t| t.output.as_str()).collect();
                let _ = writeln!(
                    out,
                    "      {} = {} = {}   {}",
                    p.partial(of, &chain.element),
                    if terms.is_empty() {
                        "0".to_string()
                    } else {
                        terms.join(" + ")
                    },
                    p.grad(chain.value.0),
                    p.dim(&format!(
                        "(through {})",
                        if outputs.is_empty() {
                            "nothing".to_string()
                        } else {
                            outputs.join(", ")
                        }
                    ))
                );
            }
        }
    }
}
