//! Human text of `:=`, `:repeat`, `:hessian` and `:diff`.

use std::fmt::Write;

use super::Painter;
use crate::render::series;
use crate::session::CalculusEvent;

/// Renders one derivative or loop event.
pub(super) fn render(event: &CalculusEvent, p: &Painter) -> String {
    let mut out = String::new();
    match event {
        CalculusEvent::Updated {
            name,
            value,
            recomputed,
            changed,
        } => {
            let _ = write!(out, "{} := {}", p.name(name), p.value(*value));
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
                    p.value(change.after),
                    p.dim(&format!("(was {})", p.number(change.before)))
                );
            }
        }
        CalculusEvent::Repeat {
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
        } => {
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
            let mut header = vec!["step".to_string()];
            header.extend(of.iter().cloned());
            header.extend(assigned.iter().filter(|a| Some(*a) != of.as_ref()).cloned());
            let mut table: Vec<Vec<String>> = vec![header];
            let mut previous = 0;
            for row in rows {
                if row.step > previous + 1 {
                    table.push(vec!["…".to_string()]);
                }
                previous = row.step;
                let mut cells = vec![row.step.to_string()];
                if let Some(value) = row.output {
                    cells.push(p.number(value));
                }
                for (name, value) in assigned.iter().zip(&row.values) {
                    if Some(name) != of.as_ref() {
                        cells.push(p.number(*value));
                    }
                }
                table.push(cells);
            }
            let columns = table.iter().map(Vec::len).max().unwrap_or(0);
            let widths: Vec<usize> = (0..columns)
                .map(|c| {
                    table
                        .iter()
                        .filter_map(|r| r.get(c))
                        .map(|s| s.chars().count())
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            for (i, row) in table.iter().enumerate() {
                let cells: Vec<String> = row
                    .iter()
                    .zip(&widths)
                    .map(|(cell, &w)| format!("{cell:>w$}"))
                    .collect();
                let line = cells.join("  ");
                let _ = writeln!(out, "  {}", if i == 0 { p.name(&line) } else { line });
            }
            if let (Some(of), None) = (of, target) {
                out.push_str(&series::terminal(of, outputs));
            }
            if let Some(of) = of {
                if let Some(steps) = non_finite_steps(outputs) {
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
        }
        CalculusEvent::Hessian {
            of,
            names,
            matrix,
            zero_rows,
            asymmetry,
        } => {
            let _ = writeln!(
                out,
                "Hessian of {}: ∂²{of}/∂a∂b, rows and columns {}",
                p.name(of),
                names.join(", ")
            );
            let cells: Vec<Vec<String>> = matrix
                .iter()
                .map(|row| row.iter().map(|&v| p.number(v)).collect())
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
            if *asymmetry > 0.0 {
                let _ = writeln!(
                    out,
                    "  {}",
                    p.dim(&format!(
                        "(largest |H[a][b] - H[b][a]| = {}: rounding)",
                        p.number(*asymmetry)
                    ))
                );
            }
            for note in zero_rows {
                let _ = writeln!(out, "  {}", p.dim(&format!("({note})")));
            }
        }
        CalculusEvent::Diff {
            of,
            wrt,
            expression,
            value,
        } => {
            let _ = writeln!(
                out,
                "{} = {expression}  {}",
                p.partial(of, wrt),
                p.dim(&format!("(= {} now)", p.number(*value)))
            );
        }
    }
    out
}

/// The steps (1-based) after which the output was inf or nan, as ranges
/// (`step 2`, `steps 2 to 5, 9`; at most 5 ranges, then `…`); `None` when every
/// step was finite.
fn non_finite_steps(outputs: &[f64]) -> Option<String> {
    const SHOWN: usize = 5;
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for (i, value) in outputs.iter().enumerate() {
        if value.is_finite() {
            continue;
        }
        let step = i + 1;
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
