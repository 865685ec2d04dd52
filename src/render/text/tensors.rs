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
    if !summarise || n <= 2 * EDGE_ITEMS {
        return (0..n).map(Some).collect();
    }
    (0..EDGE_ITEMS)
        .map(Some)
        .chain([None])
        .chain((n - EDGE_ITEMS..n).map(Some))
        .collect()
}

/// The text of a tensor's elements, valid input (`[1, -1, 0.5]`,
/// `[[1, 2], [3, 4]]`, columns aligned), `indent` before each row after the
/// first; `paint` colours each number.
pub(super) fn elements(
    value: &TensorData,
    indent: &str,
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
            let item = |k: usize| {
                value
                    .element(k)
                    .map_or_else(String::new, |x| paint(&text(&x)))
            };
            let items: Vec<String> = shown(value.len(), summarise)
                .into_iter()
                .map(|k| k.map_or_else(|| "…".to_string(), item))
                .collect();
            format!("[{}]", items.join(", "))
        }
        _ => matrix(value, indent, summarise, &text, paint),
    }
}

/// A matrix's rows, aligned by column.
fn matrix(
    value: &TensorData,
    indent: &str,
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
    let cells: Vec<Option<Vec<String>>> = row_ids
        .iter()
        .map(|r| {
            r.map(|r| {
                column_ids
                    .iter()
                    .map(|c| c.map_or_else(|| "…".to_string(), |c| cell(r, c)))
                    .collect()
            })
        })
        .collect();
    let mut widths = vec![0; column_ids.len()];
    for row in cells.iter().flatten() {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::from("[");
    for (k, row) in cells.iter().enumerate() {
        if k > 0 {
            out.push_str(",\n");
            out.push_str(indent);
            out.push(' ');
        }
        match row {
            None => out.push('…'),
            Some(row) => {
                let padded: Vec<String> = row
                    .iter()
                    .zip(&widths)
                    .map(|(cell, w)| {
                        let pad = " ".repeat(w - cell.chars().count());
                        format!("{pad}{}", paint(cell))
                    })
                    .collect();
                let _ = write!(out, "[{}]", padded.join(", "));
            }
        }
    }
    out.push(']');
    out
}

/// `head = value`: a number or a vector on one line with its shape after
/// it, a matrix under a line `head = m×n`; without a head (an expression's
/// value) the value alone.
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
    match value.shape.len() {
        0 => {
            let _ = writeln!(out, "{equals}{}", elements(value, "", p, paint));
        }
        1 => {
            let _ = writeln!(
                out,
                "{equals}{}  {}",
                elements(value, "", p, paint),
                p.dim(&format!("({})", value.shape_text()))
            );
        }
        _ => {
            let _ = writeln!(out, "{equals}{}", p.dim(&value.shape_text()));
            let _ = writeln!(out, "{indent}{}", elements(value, &indent, p, paint));
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
