//! JSON of `:=`, `:repeat`, `:hessian` and `:diff` (docs/json.md).

use serde_json::{Value, json};

use super::number;
use crate::session::CalculusEvent;

/// The JSON object of one derivative or loop event.
pub(super) fn event(event: &CalculusEvent) -> Value {
    match event {
        CalculusEvent::Updated {
            name,
            value,
            recomputed,
            changed,
        } => json!({
            "kind": "updated",
            "name": name,
            "value": number(*value),
            "recomputed": recomputed,
            "changed": changed.iter().map(|c| json!({
                "name": c.name, "before": number(c.before), "after": number(c.after),
            })).collect::<Vec<_>>(),
        }),
        CalculusEvent::Repeat {
            statement,
            of,
            assigned,
            steps,
            requested,
            rows,
            outputs,
            interrupted,
            target,
        } => json!({
            "kind": "repeat",
            "statement": statement,
            "of": of,
            "assigned": assigned,
            "steps": steps,
            "requested": requested,
            "interrupted": interrupted,
            "rows": rows.iter().map(|r| json!({
                "step": r.step,
                "output": r.output.map(number),
                "values": r.values.iter().map(|&v| number(v)).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "outputs": outputs.iter().map(|&v| number(v)).collect::<Vec<_>>(),
            "file": target.as_ref().map(|t| t.path.clone()),
        }),
        CalculusEvent::Hessian {
            of,
            names,
            matrix,
            zero_rows,
            asymmetry,
        } => json!({
            "kind": "hessian",
            "of": of,
            "names": names,
            "matrix": matrix.iter().map(|row| row.iter().map(|&v| number(v)).collect::<Vec<_>>()).collect::<Vec<_>>(),
            "zero_rows": zero_rows,
            "asymmetry": number(*asymmetry),
        }),
        CalculusEvent::Diff {
            of,
            wrt,
            expression,
            value,
        } => json!({
            "kind": "diff",
            "of": of,
            "wrt": wrt,
            "expression": expression,
            "value": number(*value),
        }),
    }
}
