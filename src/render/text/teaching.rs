//! Human text of the teaching commands' events: `:graph`, `:forward`,
//! `:topo kahn`, `:check`, `:paths`, a written file, and the printed forms of
//! `:dot`, `:trace md|tex` and `:plot` when no file is given.

use std::fmt::Write;

use super::{Painter, plural, render_rows};
use crate::render::notation::Form;
use crate::render::{dot, notes, plot};
use crate::session::{
    CHECK_TOLERANCE, Event, GraphLine, KahnRow, Omitted, PictureFormat, Tolerance, Verdict,
};

/// Renders a teaching event; `None` for any other event.
pub(super) fn render(event: &Event, p: &Painter) -> Option<String> {
    let mut out = String::new();
    match event {
        Event::Graph {
            of,
            total,
            lines,
            omitted,
        } => graph(&mut out, of, *total, lines, *omitted, p),
        Event::Forward {
            of,
            total,
            rows,
            omitted,
        } => {
            let _ = writeln!(
                out,
                "forward evaluation order of {}: {total} node{}, inputs first",
                p.name(of),
                plural(*total)
            );
            render_rows(
                &mut out,
                rows,
                *omitted,
                p,
                "`:forward all` lists every node",
            );
        }
        Event::Kahn {
            of,
            total,
            rows,
            omitted,
            differences,
        } => kahn(&mut out, of, *total, rows, *omitted, *differences, p),
        Event::Check {
            of,
            wrt,
            at,
            h,
            analytic,
            numeric,
            difference,
            tolerance,
            verdict,
            note,
            ..
        } => {
            let word = match verdict {
                Verdict::Pass => "pass".to_string(),
                Verdict::Warn | Verdict::Kink | Verdict::NotFinite => p.warning(verdict.word()),
                Verdict::Fail => p.error(verdict.word()),
            };
            // What the verdict rests on: |difference| against atol + rtol·|numeric|.
            let test = |t: Tolerance| {
                format!(
                    "{} + {}·|central difference|",
                    p.number(t.atol),
                    p.number(t.rtol)
                )
            };
            let basis = match verdict {
                Verdict::Pass => format!(" ≤ {}", test(*tolerance)),
                Verdict::Warn => format!(
                    " > {}, ≤ {} (gradcheck's tolerance)",
                    test(CHECK_TOLERANCE),
                    test(*tolerance)
                ),
                Verdict::Fail => format!(" > {} (gradcheck's tolerance)", test(*tolerance)),
                Verdict::Kink | Verdict::NotFinite => String::new(),
            };
            let _ = write!(
                out,
                "{} at {wrt} = {}: reverse mode {}, central difference {} (h = {}), |difference| {}{basis}  {word}",
                p.partial(of, wrt),
                p.number(*at),
                p.grad(*analytic),
                p.number(*numeric),
                p.number(*h),
                p.number(*difference),
            );
            let why = match verdict {
                Verdict::Kink => Some(
                    "the step ±h crosses a kink (relu, abs, max, min, floor…): a difference quotient does not measure the gradient there",
                ),
                Verdict::NotFinite => {
                    Some("inf or nan: the difference quotient cannot be compared")
                }
                _ => None,
            };
            for why in why.into_iter().chain(note.as_deref()) {
                let _ = write!(out, "  {}", p.dim(&format!("({why})")));
            }
            out.push('\n');
        }
        Event::Paths {
            of,
            wrt,
            paths,
            count,
            gradient,
            nodes,
        } => {
            let _ = writeln!(
                out,
                "paths from {} to {}: {} (chain rule: ∂{of}/∂{wrt} is the sum over paths of the product of local derivatives)",
                p.name(of),
                p.name(wrt),
                p.number(*count)
            );
            for (i, path) in paths.iter().enumerate() {
                let mut nodes_text = Vec::new();
                if let Some(first) = path.edges.first() {
                    nodes_text.push(p.node(&first.node));
                }
                nodes_text.extend(path.edges.iter().map(|e| p.node(&e.input)));
                let locals: Vec<String> = path.edges.iter().map(|e| p.number(e.local)).collect();
                let product = if locals.is_empty() {
                    "1 (the output itself)".to_string()
                } else {
                    format!("{} = {}", locals.join(" × "), p.grad(path.product))
                };
                if nodes_text.len() > 12 {
                    let hidden = nodes_text.len() - 8;
                    nodes_text.splice(4..nodes_text.len() - 4, [format!("… {hidden} nodes …")]);
                }
                let mut locals = locals;
                if locals.len() > 12 {
                    let hidden = locals.len() - 8;
                    locals.splice(4..locals.len() - 4, [format!("… {hidden} more …")]);
                }
                let product = if let Some(edge) = path.edges.iter().find(|e| e.passes_nothing) {
                    format!(
                        "{} passes nothing to {}: the path contributes {}",
                        p.node(&edge.node),
                        p.node(&edge.input),
                        p.grad(path.product)
                    )
                } else if locals.is_empty() {
                    product
                } else {
                    format!("{} = {}", locals.join(" × "), p.grad(path.product))
                };
                let _ = writeln!(
                    out,
                    "  {:>2}. {}   {product}",
                    i + 1,
                    nodes_text.join(" → ")
                );
            }
            let shown = paths.len() as f64;
            if shown == *count {
                let sum: f64 = paths.iter().map(|path| path.product).sum();
                let _ = writeln!(
                    out,
                    "  sum = {} = {}   (reverse mode visited each of {nodes} node{} once)",
                    p.grad(sum),
                    p.partial(of, wrt),
                    plural(*nodes)
                );
            } else {
                let _ = writeln!(
                    out,
                    "  … {} more paths not listed; the sum over all paths is {} = {}",
                    p.number(count - shown),
                    p.partial(of, wrt),
                    p.grad(*gradient)
                );
                let _ = writeln!(
                    out,
                    "  {}",
                    p.dim(&format!("reverse mode gets that sum by visiting each of the {nodes} nodes once; enumerating paths grows exponentially with depth"))
                );
            }
        }
        Event::Wrote { path, bytes, what } => {
            let _ = writeln!(out, "wrote {what} to {} ({bytes} bytes)", p.name(path));
        }
        Event::Picture {
            picture,
            format: PictureFormat::Dot,
            target: None,
        } => out.push_str(&dot::dot(picture)),
        Event::TraceTable {
            of,
            steps,
            omitted,
            format,
            target: None,
            ..
        } => out.push_str(&notes::table(of, steps, *omitted, *format, p.0.precision)),
        Event::Plot {
            of,
            wrt,
            at,
            samples,
            target: None,
        } => out.push_str(&plot::terminal(of, wrt, *at, samples, p.0.precision)),
        // Events with a file are written by the printer, which reports `Wrote`.
        Event::Picture { .. } | Event::TraceTable { .. } | Event::Plot { .. } => {}
        _ => return None,
    }
    Some(out)
}

fn graph(
    out: &mut String,
    of: &str,
    total: usize,
    lines: &[GraphLine],
    omitted: usize,
    p: &Painter,
) {
    let _ = writeln!(
        out,
        "graph of {}: {total} node{}, output first; value, then gradient {}",
        p.name(of),
        plural(total),
        p.partial(of, "node")
    );
    for line in lines {
        match line {
            GraphLine::Node {
                depth,
                row,
                grad,
                shown_above,
            } => {
                let indent = "  ".repeat(*depth + 1);
                let node = p.node(&row.node);
                if *shown_above {
                    let _ = writeln!(out, "{indent}{} {}", p.name(&node), p.dim("(shown above)"));
                    continue;
                }
                let what = p.expression(row);
                let head = match Form::of(row.op) {
                    Form::Constant => what,
                    Form::Leaf => format!("{} leaf", p.name(&node)),
                    Form::Prefix(_) | Form::Infix(_) | Form::Call(_) => {
                        format!("{} = {what}", p.name(&node))
                    }
                };
                let _ = writeln!(
                    out,
                    "{indent}{head}   value {}   grad {}",
                    p.value(row.value),
                    p.grad(*grad)
                );
            }
            GraphLine::More { depth, count } => {
                let indent = "  ".repeat(*depth + 1);
                let _ = writeln!(
                    out,
                    "{indent}{}",
                    p.dim(&format!("… {count} more input{}", plural(*count)))
                );
            }
        }
    }
    if omitted > 0 {
        let _ = writeln!(
            out,
            "  {}",
            p.dim(&format!(
                "… {omitted} more node{} not drawn (`:topo all` lists every node)",
                plural(omitted)
            ))
        );
    }
}

fn kahn(
    out: &mut String,
    of: &str,
    total: usize,
    rows: &[KahnRow],
    omitted: Option<Omitted>,
    differences: usize,
    p: &Painter,
) {
    let _ = writeln!(
        out,
        "Kahn's order from {} (PyTorch's engine): a node is ready when all its pending uses are done; {total} node{}",
        p.name(of),
        plural(total)
    );
    let _ = writeln!(out, "  {}", p.dim("    #  pending  dfs  node"));
    for row in rows {
        if let Some(o) = omitted.filter(|o| row.row.position == o.after + o.count + 1) {
            let _ = writeln!(
                out,
                "  {}",
                p.dim(&format!(
                    "… {} more nodes (`:topo kahn all` lists every node)",
                    o.count
                ))
            );
        }
        let marker = if row.dfs_position == row.row.position {
            " "
        } else {
            "*"
        };
        let node = p.node(&row.row.node);
        let what = p.expression(&row.row);
        let _ = writeln!(
            out,
            "  {:>5}  {:>7}  {:>3}{marker} {} = {what}",
            row.row.position,
            row.pending,
            row.dfs_position,
            p.name(&node),
        );
    }
    if differences == 0 {
        let _ = writeln!(out, "same order as the depth-first order of `:topo`");
    } else {
        let _ = writeln!(
            out,
            "differs from the depth-first order of `:topo` at {differences} of {total} position{} (marked *); both are reverse topological orders: every node comes before its inputs, so backprop gives the same gradients",
            plural(total)
        );
    }
}
