//! Events → JSON Lines (every kind is listed in docs/json.md).
//!
//! Finite numbers are JSON numbers with full round-trip precision (integers
//! without a fraction); inf, -inf and nan are the strings `"inf"`, `"-inf"`, `"nan"`.

use serde_json::{Map, Value, json};

use super::line_column;
use crate::session::{Event, NodeRef, NodeRow, Omitted, SessionError};

mod teaching;

/// A number as JSON: exact integers as integers, other finite values as the
/// shortest round-trip float, non-finite values as strings.
pub fn number(value: f64) -> Value {
    if value.is_nan() {
        return json!("nan");
    }
    if value.is_infinite() {
        return json!(if value > 0.0 { "inf" } else { "-inf" });
    }
    // Every integral f64 below 2^63 is exactly an i64; larger ones print in
    // exponent form, which has no fraction either.
    if value.fract() == 0.0 && value.abs() < i64::MAX as f64 {
        return json!(value as i64);
    }
    json!(value)
}

/// One event as one JSON object (one line of output). `source` is the text the
/// statement came from, for the line and column of warnings.
pub fn event(event: &Event, source: &str) -> Value {
    match event {
        Event::Value { name, value } => {
            let mut object = Map::new();
            object.insert("kind".into(), json!("value"));
            if let Some(name) = name {
                object.insert("name".into(), json!(name));
            }
            object.insert("value".into(), number(*value));
            Value::Object(object)
        }
        Event::Defined { name, params } => {
            json!({"kind": "defined", "name": name, "params": params})
        }
        Event::Grad {
            of,
            wrt,
            value,
            note,
        } => {
            let mut object = json!({"kind": "grad", "of": of, "wrt": wrt, "value": number(*value)});
            if let Some(note) = note {
                object["note"] = json!(note);
            }
            object
        }
        Event::Warning { message, span } => {
            let (line, column) = line_column(source, span.start);
            json!({"kind": "warning", "message": message, "line": line, "column": column})
        }
        Event::Notice { message } => json!({"kind": "notice", "message": message}),
        Event::Topo {
            of,
            total,
            rows,
            omitted,
        } => json!({
            "kind": "topo",
            "of": of,
            "total": total,
            "nodes": rows.iter().map(row).collect::<Vec<_>>(),
            "omitted": omitted.map(omission),
        }),
        Event::Trace {
            of,
            total,
            constants,
            steps,
            omitted,
        } => json!({
            "kind": "trace",
            "of": of,
            "total": total,
            "constants": constants,
            "steps": steps.iter().map(|step| {
                let mut object = row(&step.row);
                object["upstream"] = number(step.upstream);
                object["differentiable"] = json!(!step.blocks_gradient);
                object["contributions"] = step.contributions.iter().map(|c| json!({
                    "input": c.input.id.0,
                    "input_name": c.input.name,
                    "partial": c.partial,
                    "formula": c.formula,
                    "local": number(c.local),
                    "product": number(c.product),
                    "passes_nothing": c.passes_nothing.is_some(),
                    "before": number(c.before),
                    "after": number(c.after),
                    "use": c.use_number,
                    "uses": c.use_count,
                })).collect::<Vec<_>>().into();
                object
            }).collect::<Vec<_>>(),
            "omitted": omitted.map(omission),
        }),
        Event::Vars { of, vars } => json!({
            "kind": "vars",
            "of": of,
            "vars": vars.iter().map(|v| {
                let mut object = json!({
                    "name": v.name,
                    "id": v.node.0,
                    "value": number(v.value),
                    "leaf": v.leaf,
                    "grad": v.grad.map(number),
                });
                if let Some(note) = &v.grad_note {
                    object["note"] = json!(note);
                }
                if !v.built_from_earlier.is_empty() {
                    object["built_from_earlier"] = json!(v.built_from_earlier);
                }
                object
            }).collect::<Vec<_>>(),
        }),
        Event::Help { topic, text } => json!({"kind": "help", "topic": topic, "text": text}),
        Event::Stats(stats) => json!({
            "kind": "stats",
            "nodes": stats.nodes,
            "reachable": stats.reachable,
            "bytes": stats.bytes,
            "node_bytes": stats.node_bytes,
            "sorts": stats.sorts,
            "collections": stats.collections,
            "last": stats.last.as_ref().map(reclaim),
        }),
        Event::Collected(r) => {
            let mut object = Map::new();
            object.insert("kind".into(), json!("gc"));
            if let Value::Object(fields) = reclaim(r) {
                object.extend(fields);
            }
            Value::Object(object)
        }
        Event::Reset => json!({"kind": "reset"}),
        Event::Quit => json!({"kind": "quit"}),
        other => teaching::event(other).unwrap_or(Value::Null),
    }
}

/// A collection's figures (`gc` events and the `last` of `stats`).
fn reclaim(r: &crate::session::Reclaim) -> Value {
    json!({
        "nodes_before": r.nodes_before,
        "nodes_after": r.nodes_after,
        "bytes_before": r.bytes_before,
        "bytes_after": r.bytes_after,
        "millis": r.millis,
        "automatic": r.automatic,
    })
}

/// An error as a JSON object with its 1-based line and column in `source`.
pub fn error(error: &SessionError, source: &str, origin: &str) -> Value {
    message(
        &error.to_string(),
        error.span().start,
        error.help(),
        source,
        origin,
    )
}

/// Any error message as the `error` event, placed at byte `offset` of `source`.
pub fn message(
    text: &str,
    offset: usize,
    help: Option<String>,
    source: &str,
    origin: &str,
) -> Value {
    let (line, column) = line_column(source, offset);
    let text = super::shorten_quotes(text);
    let mut object =
        json!({"kind": "error", "message": text, "line": line, "column": column, "source": origin});
    if let Some(help) = help {
        object["help"] = json!(super::shorten_quotes(&help));
    }
    object
}

fn node(node: &NodeRef) -> Value {
    json!(node.id.0)
}

fn row(row: &NodeRow) -> Value {
    json!({
        "position": row.position,
        "id": row.node.id.0,
        "name": row.node.name,
        "op": row.op.info().name,
        "inputs": row.inputs.iter().map(node).collect::<Vec<_>>(),
        "value": number(row.value),
    })
}

fn omission(omitted: Omitted) -> Value {
    json!({"after": omitted.after, "count": omitted.count})
}

#[cfg(test)]
mod tests {
    use super::number;

    #[test]
    fn numbers_round_trip_and_specials_are_strings() {
        assert_eq!(number(8.0).to_string(), "8");
        assert_eq!(number(-0.75).to_string(), "-0.75");
        assert_eq!(number(0.1 + 0.2).to_string(), "0.30000000000000004");
        assert_eq!(number(3.3554432e-18).to_string(), "3.3554432e-18");
        assert_eq!(number(f64::INFINITY).to_string(), "\"inf\"");
        assert_eq!(number(f64::NEG_INFINITY).to_string(), "\"-inf\"");
        assert_eq!(number(f64::NAN).to_string(), "\"nan\"");
        assert_eq!(number(1e300).to_string(), "1e+300");
        assert_eq!(number(9007199254740992.0).to_string(), "9007199254740992");
        assert_eq!(number(-1e18).to_string(), "-1000000000000000000");
    }
}
