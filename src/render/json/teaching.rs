//! JSON of the teaching commands' events (docs/json.md lists every field).

use serde_json::{Value, json};

use super::{number, omission, row};
use crate::render::{Precision, dot, notes};
use crate::session::{Event, GraphLine, PictureFormat, TableFormat, Target};

/// The JSON object of a teaching event; `None` for any other event.
pub(super) fn event(event: &Event) -> Option<Value> {
    Some(match event {
        Event::Graph {
            of,
            total,
            lines,
            omitted,
        } => json!({
            "kind": "graph",
            "of": of,
            "total": total,
            "lines": lines.iter().map(|line| match line {
                GraphLine::Node { depth, row: r, grad, shown_above } => {
                    let mut object = row(r);
                    object["depth"] = json!(depth);
                    object["grad"] = number(*grad);
                    object["shown_above"] = json!(shown_above);
                    object
                }
                GraphLine::More { depth, count } => json!({"depth": depth, "more": count}),
            }).collect::<Vec<_>>(),
            "omitted": omitted,
        }),
        Event::Forward {
            of,
            total,
            rows,
            omitted,
        } => json!({
            "kind": "forward",
            "of": of,
            "total": total,
            "nodes": rows.iter().map(row).collect::<Vec<_>>(),
            "omitted": omitted.map(omission),
        }),
        Event::Kahn {
            of,
            total,
            rows,
            omitted,
            differences,
        } => json!({
            "kind": "kahn",
            "of": of,
            "total": total,
            "nodes": rows.iter().map(|k| {
                let mut object = row(&k.row);
                object["pending"] = json!(k.pending);
                object["dfs_position"] = json!(k.dfs_position);
                object
            }).collect::<Vec<_>>(),
            "omitted": omitted.map(omission),
            "differences": differences,
        }),
        Event::Check {
            of,
            wrt,
            at,
            h,
            analytic,
            numeric,
            relative_error,
            difference,
            tolerance,
            verdict,
            note,
        } => {
            let mut object = json!({
                "kind": "check",
                "of": of,
                "wrt": wrt,
                "at": number(*at),
                "h": number(*h),
                "analytic": number(*analytic),
                "numeric": number(*numeric),
                "relative_error": number(*relative_error),
                "difference": number(*difference),
                "atol": number(tolerance.atol),
                "rtol": number(tolerance.rtol),
                "verdict": verdict.word().to_lowercase(),
            });
            if let Some(note) = note {
                object["note"] = json!(note);
            }
            object
        }
        Event::Paths {
            of,
            wrt,
            paths,
            count,
            gradient,
            nodes,
        } => json!({
            "kind": "paths",
            "of": of,
            "wrt": wrt,
            "count": number(*count),
            "gradient": number(*gradient),
            "nodes": nodes,
            "paths": paths.iter().map(|path| json!({
                "product": number(path.product),
                "edges": path.edges.iter().map(|e| json!({
                    "node": e.node.id.0,
                    "input": e.input.id.0,
                    "formula": e.formula,
                    "local": number(e.local),
                    "passes_nothing": e.passes_nothing,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        }),
        Event::Picture {
            picture,
            format: PictureFormat::Dot,
            target: None,
        } => json!({"kind": "dot", "of": picture.of, "text": dot::dot(picture)}),
        Event::TraceTable {
            of,
            steps,
            omitted,
            format,
            target: None,
            ..
        } => json!({
            "kind": "table",
            "of": of,
            "format": table_format(*format),
            "text": notes::table(of, steps, *omitted, *format, Precision::Full),
        }),
        Event::Plot {
            of,
            wrt,
            at,
            samples,
            target: None,
        } => json!({
            "kind": "plot",
            "of": of,
            "wrt": wrt,
            "at": number(*at),
            "samples": samples.iter().map(|s| json!({
                "x": number(s.x),
                "value": number(s.value),
                "grad": number(s.grad),
            })).collect::<Vec<_>>(),
        }),
        // With a file, the printer writes it and reports `wrote`.
        Event::Picture {
            target: Some(Target { .. }),
            ..
        }
        | Event::TraceTable {
            target: Some(_), ..
        }
        | Event::Plot {
            target: Some(_), ..
        } => Value::Null,
        Event::Wrote { path, bytes, what } => {
            json!({"kind": "wrote", "path": path, "bytes": bytes, "what": what})
        }
        _ => return None,
    })
}

fn table_format(format: TableFormat) -> &'static str {
    match format {
        TableFormat::Markdown => "markdown",
        TableFormat::Latex => "latex",
    }
}
