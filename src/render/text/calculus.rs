//! Human text of `:=`, `:repeat`, `:hessian` and `:diff`.

use crate::session::Number;
use std::fmt::Write;

use super::Painter;
use crate::render::series;
use crate::session::{CalculusEvent, MovedValue, Value};

/// Renders one derivative or loop event.
pub(super) fn render(event: &CalculusEvent, p: &Painter) -> String {
    let mut out = String::new();
    match event {
        CalculusEvent::Updated { .. } => updated(&mut out, event, p),
        CalculusEvent::Moved { changed } => moved(&mut out, changed, p),
        CalculusEvent::Repeat { .. } => repeat(&mut out, event, p),
        CalculusEvent::Descent { .. } => descent(&mut out, event, p),
        CalculusEvent::Hessian { .. } => hessian(&mut out, event, p),
        CalculusEvent::Diff { .. } => diff(&mut out, event, p),
    }
    out
}

/// Appends the text of a `:=` event to `out`: the value set, how many nodes were
/// evaluated again and the named values that changed. Nothing for other events.
fn updated(out: &mut String, event: &CalculusEvent, p: &Painter) {
    let CalculusEvent::Updated {
        name,
        value,
        recomputed,
        changed,
    } = event
    else {
        return;
    };
    let _ = write!(out, "{} := {}", p.name(name), p.value(value.0));
    if *recomputed > 0 {
        let _ = write!(
            out,
            "  {}",
            p.dim(&format!(
                "({recomputed} node{} evaluated again)",
                if *recomputed == 1 { "" } else { "s" }
            ))
        );
    }
    out.push('\n');
    for change in changed {
        let _ = writeln!(
            out,
            "  {} = {}  {}",
            p.name(&change.name),
            p.value(change.after.0),
            p.dim(&format!("(was {})", p.number(change.before.0)))
        );
    }
}

/// Appends the named values a `:=` of tensors moved to `out`, indented
/// under the values set as `updated` lists them: a number (or a tensor of
/// shape `()`) with what it was, a vector or matrix as a value is shown.
fn moved(out: &mut String, changed: &[MovedValue], p: &Painter) {
    for change in changed {
        let name = p.name(&change.name);
        match (&change.value, change.value.number()) {
            (_, Some(now)) => {
                let _ = write!(out, "  {name} = {}", p.value(now));
                if let Some(before) = change.before {
                    let _ = write!(out, "  {}", p.dim(&format!("(was {})", p.number(before.0))));
                }
                out.push('\n');
            }
            (Value::Tensor(value), None) => {
                super::tensors::block(out, &format!("  {name}"), value, p, &|s| p.value_text(s));
            }
            (Value::Number(_), None) => {}
        }
    }
}

/// Appends the text of a `:repeat` event to `out`: what ran (and where Ctrl-C
/// stopped it), the step table, the output's plot and its steps that are not
/// finite. Nothing for other events.
fn repeat(out: &mut String, event: &CalculusEvent, p: &Painter) {
    let CalculusEvent::Repeat {
        statement,
        of,
        assigned,
        steps,
        requested,
        rows,
        outputs,
        interrupted,
        partial,
        target,
    } = event
    else {
        return;
    };
    let _ = write!(
        out,
        "ran `{statement}` {steps} time{}",
        if *steps == 1 { "" } else { "s" }
    );
    if *interrupted {
        let _ = write!(
            out,
            ": interrupted after {steps} of {requested} steps by Ctrl-C; the steps done are kept"
        );
        if *partial > 0 {
            let s = if *partial == 1 { "" } else { "s" };
            let _ = write!(
                out,
                ", and the first {partial} statement{s} of step {}",
                steps + 1
            );
        }
    }
    out.push('\n');
    let mut names: Vec<&str> = of.iter().map(String::as_str).collect();
    names.extend(
        assigned
            .iter()
            .filter(|a| Some(*a) != of.as_ref())
            .map(String::as_str),
    );
    let cells = rows.iter().map(|row| {
        // The output's column, blank at a step before the output exists.
        let mut cells: Vec<String> = of
            .iter()
            .map(|_| output_cell(row.output.map(f64::from), p))
            .collect();
        for (name, value) in assigned.iter().zip(&row.values) {
            if Some(name) != of.as_ref() {
                cells.push(p.number(value.0));
            }
        }
        (row.step, cells)
    });
    step_table(out, &names, usize::from(of.is_some()), cells, p, false);
    // A step without an output (one the steps make has none at step 0) is
    // left out of the plot, but it is no non-finite value.
    let made: Vec<f64> = outputs.iter().map(|o| o.map_or(0.0, f64::from)).collect();
    let outputs: Vec<f64> = outputs
        .iter()
        .map(|o| o.map_or(f64::NAN, f64::from))
        .collect();
    if let (Some(of), None, true) = (of, target, p.0.charts) {
        out.push_str(&series::terminal(of, &outputs));
    }
    if let Some(of) = of
        && let Some(steps) = non_finite_steps(&made)
    {
        let _ = writeln!(
            out,
            "{} {of} is not finite after {steps}: the plot leaves {} out",
            p.dim("note:"),
            if steps.contains(',') || steps.contains(" to ") {
                "them"
            } else {
                "it"
            }
        );
    }
}

/// Appends the text of a `:descend` event to `out`: the run, the step table of
/// the loss and the parameters, the loss's plot and its steps that are not
/// finite. Nothing for other events.
fn descent(out: &mut String, event: &CalculusEvent, p: &Painter) {
    let CalculusEvent::Descent {
        of,
        params,
        rate,
        steps,
        requested,
        rows,
        losses,
        interrupted,
        all,
        ..
    } = event
    else {
        return;
    };
    let s = if *steps == 1 { "" } else { "s" };
    let _ = write!(
        out,
        "gradient descent on {} over {}, learning rate {}: {steps} step{s}, each one backward pass and all parameters moved together",
        p.name(of),
        params.join(", "),
        p.number(rate.0)
    );
    if *interrupted {
        let _ = write!(
            out,
            "; interrupted after {steps} of {requested} steps by Ctrl-C, the steps done are kept"
        );
    }
    out.push('\n');
    // A column a scalar parameter; vectors and matrices (whose rows carry
    // no values) are printed whole after the table.
    let columns = rows.first().map_or(0, |row| row.values.len());
    let mut names = vec![of.as_str()];
    names.extend(params.iter().take(columns).map(String::as_str));
    let cells = rows.iter().map(|row| {
        let mut cells = vec![output_cell(row.output.map(f64::from), p)];
        cells.extend(row.values.iter().map(|&v| p.number(v.0)));
        (row.step, cells)
    });
    step_table(out, &names, 1, cells, p, *all);
    let losses: Vec<f64> = losses.iter().map(|&loss| loss.0).collect();
    if p.0.charts {
        out.push_str(&series::terminal(of, &losses));
    }
    if let Some(steps) = non_finite_steps(&losses) {
        let _ = writeln!(
            out,
            "{} {of} is not finite at {steps}: the plot leaves it out",
            p.dim("note:")
        );
    }
}

/// Appends the text of a `:hessian` event to `out`: the matrix with its row and
/// column names, the rounding asymmetry and why rows are 0. Nothing for other
/// events.
fn hessian(out: &mut String, event: &CalculusEvent, p: &Painter) {
    let CalculusEvent::Hessian {
        of,
        names,
        matrix,
        zero_rows,
        asymmetry,
    } = event
    else {
        return;
    };
    let _ = writeln!(
        out,
        "Hessian of {}: ∂²{of}/∂row∂column, rows and columns {}",
        p.name(of),
        names.join(", ")
    );
    let cells: Vec<Vec<String>> = matrix
        .iter()
        .map(|row| row.iter().map(|&v| p.number(v.0)).collect())
        .collect();
    let name_width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let width = cells
        .iter()
        .flatten()
        .map(|c| c.chars().count())
        .chain(names.iter().map(|n| n.chars().count()))
        .max()
        .unwrap_or(1);
    let head: Vec<String> = names.iter().map(|n| format!("{n:>width$}")).collect();
    let _ = writeln!(out, "  {:name_width$}  {}", "", p.name(&head.join("  ")));
    for (name, row) in names.iter().zip(&cells) {
        let row: Vec<String> = row.iter().map(|c| format!("{c:>width$}")).collect();
        let _ = writeln!(
            out,
            "  {}  {}",
            p.name(&format!("{name:>name_width$}")),
            row.join("  ")
        );
    }
    if *asymmetry > Number(0.0) {
        let _ = writeln!(
            out,
            "  {}",
            p.dim(&format!(
                "(largest |H[a][b] - H[b][a]| = {}: rounding)",
                p.number(asymmetry.0)
            ))
        );
    }
    for note in zero_rows {
        let _ = writeln!(out, "  {}", p.dim(&format!("({note})")));
    }
}

/// Appends the text of a `:diff` event to `out`: the shared parts, then the
/// derivative's expression or its pieces with where each holds, and its value
/// now. Nothing for other events.
fn diff(out: &mut String, event: &CalculusEvent, p: &Painter) {
    let CalculusEvent::Diff {
        of,
        wrt,
        expression,
        value,
        formula_value,
        at,
        pieces,
        more_pieces,
        parts,
    } = event
    else {
        return;
    };
    // The shared parts first, as statements to type before the
    // expression that uses them.
    if !parts.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            p.dim(&format!(
                "{} with {} parts used more than once named once (type these lines, then the expression):",
                p.partial(of, wrt),
                parts.len()
            ))
        );
        for part in parts {
            let _ = writeln!(out, "{} = {}", part.name, part.expression);
        }
    }
    // Where the derivative graph is inf or nan and the expression
    // is not, both values.
    let now = match formula_value {
        Some(typed) if !value.0.is_finite() => format!(
            "(= {} now, where grad({of}, {wrt}) computes {}: its nodes are undefined here)",
            p.number(typed.0),
            p.number(value.0)
        ),
        // The textbook form overflows or cancels here; the graph does not.
        Some(typed) => format!(
            "(= {} now; typed back here in double precision this form gives {}: it overflows or cancels at this point)",
            p.number(value.0),
            p.number(typed.0)
        ),
        None => format!("(= {} now)", p.number(value.0)),
    };
    if pieces.is_empty() {
        let _ = writeln!(
            out,
            "{} = {expression}  {}",
            p.partial(of, wrt),
            p.dim(&now)
        );
    }
    // One line a piece, the one that holds at the point marked; on a
    // kink, what the convention gives there.
    for piece in pieces {
        let here = if piece.here {
            format!(
                "  {}",
                p.dim(&format!("(holds here: = {} now)", p.number(value.0)))
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{} = {}   for {}{here}",
            p.partial(of, wrt),
            piece.expression,
            piece.holds_where
        );
    }
    if *more_pieces > 0 {
        let _ = writeln!(
            out,
            "  {}",
            p.dim(&format!("({more_pieces} more pieces not listed)"))
        );
    }
    if !pieces.is_empty() && !pieces.iter().any(|piece| piece.here) {
        let _ = writeln!(
            out,
            "  at {wrt} = {}, where no piece holds, the convention (`:help grad`) gives {} = {expression}  {}",
            p.number(at.0),
            p.partial(of, wrt),
            p.dim(&now)
        );
    }
}

/// The steps (`outputs[0]` is step 0, the start) at which the output was inf or nan, as ranges
/// (`step 2`, `steps 2 to 5, 9`; at most 5 ranges, then `…`); `None` when every
/// step was finite.
fn non_finite_steps(outputs: &[f64]) -> Option<String> {
    const SHOWN: usize = 5;
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for (i, value) in outputs.iter().enumerate() {
        if value.is_finite() {
            continue;
        }
        let step = i;
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == step => *end = step,
            _ => ranges.push((step, step)),
        }
    }
    let single = matches!(ranges.as_slice(), [(a, b)] if a == b);
    let mut parts: Vec<String> = ranges
        .iter()
        .take(SHOWN)
        .map(|&(a, b)| match a == b {
            true => a.to_string(),
            false => format!("{a} to {b}"),
        })
        .collect();
    if ranges.len() > SHOWN {
        parts.push("…".to_string());
    }
    match (parts.is_empty(), single) {
        (true, _) => None,
        (false, true) => Some(format!("step {}", parts[0])),
        (false, false) => Some(format!("steps {}", parts.join(", "))),
    }
}

/// The widest a step table's line may be, in characters: a terminal's default.
const TABLE_WIDTH: usize = 80;

/// A step's output in a loop's table: blank at a step where there is none
/// (an output the steps make has none at step 0).
fn output_cell(output: Option<f64>, p: &Painter) -> String {
    output.map_or_else(String::new, |v| p.number(v))
}

/// A table of a loop's steps (`:repeat`, `:descend`): a `step` column, then
/// one column per name of `names`, right-aligned; `rows` are each step's
/// number with its cells in the order of `names`. Past [`TABLE_WIDTH`]
/// characters the columns after the first `fixed` ones go into further
/// blocks, each repeating `step` and the `fixed` columns, unless `all` (one
/// wide table).
fn step_table(
    out: &mut String,
    names: &[&str],
    fixed: usize,
    rows: impl Iterator<Item = (usize, Vec<String>)>,
    p: &Painter,
    all: bool,
) {
    let mut table: Vec<Vec<String>> = vec![
        std::iter::once("step")
            .chain(names.iter().copied())
            .map(str::to_string)
            .collect(),
    ];
    let mut previous = None;
    for (step, cells) in rows {
        if previous.is_some_and(|before: usize| step > before + 1) {
            table.push(vec!["…".to_string()]);
        }
        previous = Some(step);
        table.push(std::iter::once(step.to_string()).chain(cells).collect());
    }
    let widths: Vec<usize> = (0..=names.len())
        .map(|c| {
            table
                .iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let fixed = (fixed + 1).min(widths.len());
    // Each block: the fixed columns and as many others as fit (at least one).
    let mut blocks: Vec<std::ops::Range<usize>> = Vec::new();
    let fixed_width = 2 + widths[..fixed].iter().map(|w| w + 2).sum::<usize>() - 2;
    let mut start = fixed;
    while start < widths.len() || blocks.is_empty() {
        let mut end = start;
        let mut width = fixed_width;
        while end < widths.len() && (all || end == start || width + 2 + widths[end] <= TABLE_WIDTH)
        {
            width += 2 + widths[end];
            end += 1;
        }
        blocks.push(start..end);
        start = end;
    }
    for (b, block) in blocks.iter().enumerate() {
        if b > 0 {
            out.push('\n');
        }
        let columns: Vec<usize> = (0..fixed).chain(block.clone()).collect();
        for (i, row) in table.iter().enumerate() {
            let cells: Vec<String> = columns
                .iter()
                .filter_map(|&c| row.get(c).map(|cell| format!("{cell:>w$}", w = widths[c])))
                .collect();
            let line = cells.join("  ");
            let _ = writeln!(out, "  {}", if i == 0 { p.name(&line) } else { line });
        }
    }
}
