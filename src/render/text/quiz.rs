//! Human text of `:quiz`: a question, a verdict (what was right; on a wrong
//! answer the rule and the number), the score.

use std::fmt::Write;

use super::Painter;
use crate::session::Value;
use crate::session::quiz::{Ask, QuizEvent};

/// Renders one quiz event as lines.
pub(super) fn render(event: &QuizEvent, p: &Painter) -> String {
    match event {
        QuizEvent::QuizQuestion { .. } => question(event, p),
        QuizEvent::QuizVerdict { .. } => verdict(event, p),
        QuizEvent::QuizScore {
            of,
            correct,
            answered,
            questions,
            finished,
        } => {
            let how = if *finished {
                format!("the backward pass of {} is done", p.name(of))
            } else {
                format!("quiz stopped after {answered} of {questions} questions")
            };
            format!(
                "{how}: score {} of {answered} right {}\n",
                p.value_text(&correct.to_string()),
                p.dim(&format!("({questions} questions)"))
            )
        }
    }
}

/// A value as the trace writes it: a number, or a tensor's elements with
/// its shape (`[1, 2]  (2)`).
fn value_text(value: &Value, p: &Painter) -> String {
    match value {
        Value::Number(n) => p.number(n.0),
        Value::Tensor(t) if t.shape.is_empty() => {
            super::tensors::elements(t, (0, 0, p.0.width), p, &|s| s.to_string())
        }
        Value::Tensor(t) => format!(
            "{}  {}",
            super::tensors::elements(t, (4, 0, p.0.width), p, &|s| s.to_string()),
            p.dim(&format!("({})", t.shape_text()))
        ),
    }
}

/// `quiz 3/27 · step 2 of 10 · n:` then what is asked, and the keys.
fn question(event: &QuizEvent, p: &Painter) -> String {
    let QuizEvent::QuizQuestion {
        number,
        questions,
        step,
        steps,
        ask,
        node,
        input,
        partial,
        rule,
        upstream,
        local,
        before,
        uses,
        keys,
        ..
    } = event
    else {
        return String::new();
    };
    let mut out = format!("quiz {number}/{questions} · step {step} of {steps}");
    if let Some(node) = node {
        let _ = write!(out, " · {}", p.name(node));
    }
    let input = input.as_deref().map(|i| p.name(i)).unwrap_or_default();
    let partial = partial.as_deref().unwrap_or("");
    let shown = |v: &Option<Value>| v.as_ref().map(|v| value_text(v, p)).unwrap_or_default();
    let asked = match ask {
        Ask::Next => "which node is next in reverse topological order?".to_string(),
        Ask::Local => format!("the local derivative {partial} = ? (a number or a formula)"),
        Ask::Product => format!(
            "upstream {} × local {} = ? (what {input} receives)",
            shown(upstream),
            shown(local)
        ),
        Ask::Accumulated => {
            let (k, n) = uses.unwrap_or((0, 0));
            format!(
                "{input} is used {n} times; its gradient so far is {}, use {k} of {n} adds {}: the gradient after it = ?",
                shown(before),
                shown(local)
            )
        }
        Ask::Shape => format!(
            "upstream = {}; {partial} += {}: its shape? (e.g. 2×3, 3, ())",
            shown(upstream),
            rule.as_deref().unwrap_or("")
        ),
        Ask::Numbers => format!(
            "{partial} += {}: its numbers? (a literal such as [1, 2], or the rule with `upstream`)",
            rule.as_deref().unwrap_or("")
        ),
    };
    let _ = writeln!(out, ": {asked}");
    if *number == 1 {
        let variable = |key: &str, short: &str| {
            if key == short {
                String::new()
            } else {
                format!(" (`{short}` is a variable here)")
            }
        };
        let _ = writeln!(
            out,
            "{}",
            p.dim(&format!(
                "  (each line is an answer; `?` shows it, `{}` goes back a question{}, `{}` stops{})",
                keys.back,
                variable(keys.back, "b"),
                keys.stop,
                variable(keys.stop, "q"),
            ))
        );
    }
    out
}

/// `✓ right: …` or `✗ not right: …` with the rule and the number.
fn verdict(event: &QuizEvent, p: &Painter) -> String {
    let QuizEvent::QuizVerdict {
        ask,
        answer,
        correct,
        shown,
        again,
        reason,
        node,
        shape,
        expected,
        got,
        rule,
        partial,
        tally,
        ..
    } = event
    else {
        return String::new();
    };
    let mut out = String::new();
    if *again {
        let _ = writeln!(
            out,
            "{} {} {}",
            p.warning("?"),
            reason.as_deref().unwrap_or("the answer was not taken"),
            p.dim("(not counted: answer again)")
        );
        return out;
    }
    let right = match (node, shape, expected) {
        (Some(node), ..) if *correct || *shown => p.name(node),
        (Some(node), ..) => format!(
            "{} {}",
            p.name(node),
            p.dim("(a node comes once every node that uses it has passed its gradient back)")
        ),
        (_, Some(shape), _) => match rule {
            Some(rule) => format!("{shape} ({rule})"),
            None => shape.clone(),
        },
        (.., Some(value)) => {
            let number = value_text(value, p);
            match (ask, partial, rule) {
                // A call's local derivative is a number, not a rule.
                (Ask::Local, Some(partial), Some(rule)) if rule.parse::<f64>().is_err() => {
                    format!("{partial} = {rule} = {number}")
                }
                (Ask::Local, Some(partial), _) => format!("{partial} = {number}"),
                (Ask::Numbers, Some(partial), Some(rule)) => {
                    format!("{partial} += {rule} = {number}")
                }
                (_, _, Some(rule)) => format!("{rule} = {number}"),
                _ => number,
            }
        }
        _ => String::new(),
    };
    let score = p.dim(&format!("({} of {} right)", tally.correct, tally.answered));
    let _ = if *correct {
        writeln!(out, "{} right: {right} {score}", p.value_text("✓"))
    } else if *shown {
        writeln!(out, "{} it is {right} {score}", p.dim("•"))
    } else {
        let yours = match got {
            Some(got) if answer.trim() != value_text(got, p) => {
                format!(" (your `{answer}` is {})", value_text(got, p))
            }
            _ => String::new(),
        };
        writeln!(
            out,
            "{} not right{yours}: it is {right} {score}",
            p.error("✗")
        )
    };
    out
}
