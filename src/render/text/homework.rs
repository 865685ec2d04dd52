//! Human text of `:expect`: correct, off by N %, wrong, wrong shape, or not
//! answered yet.

use std::fmt::Write;

use super::Painter;
use crate::session::homework::{HomeworkEvent, Verdict};

/// Renders one homework event as a line.
pub(super) fn render(event: &HomeworkEvent, p: &Painter) -> String {
    let HomeworkEvent::Expect {
        quantity,
        verdict,
        sealed,
        tol,
        shape,
        expected_shape,
        off_by_percent,
        off_by,
        at,
        reason,
    } = event;
    let mut out = String::new();
    let name = p.name(quantity);
    let _ = match verdict {
        Verdict::Correct => writeln!(
            out,
            "{} {name}: correct {}",
            p.value_text("✓"),
            p.dim(&format!("(within tol={})", p.number(tol.0)))
        ),
        Verdict::WrongShape => writeln!(
            out,
            "{} {name}: wrong shape ({}, expected {})",
            p.error("✗"),
            shape.as_deref().unwrap_or("?"),
            expected_shape.as_deref().unwrap_or("?")
        ),
        Verdict::Wrong if *sealed => writeln!(
            out,
            "{} {name}: wrong {}",
            p.error("✗"),
            p.dim(&format!(
                "(not within tol={} of the sealed answer; a sealed answer says only right or wrong)",
                p.number(tol.0)
            ))
        ),
        Verdict::Wrong => {
            let by = match off_by_percent {
                Some(percent) => format!("{} %", percent_text(percent.0)),
                None => p.number(off_by.map_or(f64::NAN, |n| n.0)),
            };
            let place = at.as_deref().map(|at| format!(" at {at}")).unwrap_or_default();
            writeln!(
                out,
                "{} {name}: off by {by}{place} {}",
                p.error("✗"),
                p.dim(&format!(
                    "(largest difference {}, tol={})",
                    p.number(off_by.map_or(f64::NAN, |n| n.0)),
                    p.number(tol.0)
                ))
            )
        }
        Verdict::Recorded => writeln!(
            out,
            "{} {name}: the key's own value here, {} {}",
            p.dim("•"),
            shape.as_deref().unwrap_or("()"),
            p.dim("(what `gradcalc --seal` hashes; nothing to compare it with)")
        ),
        Verdict::Unanswered => writeln!(
            out,
            "{} {name}: not answered yet ({})",
            p.warning("?"),
            reason.as_deref().unwrap_or("it does not evaluate")
        ),
    };
    out
}

/// A percentage to two significant digits, without trailing zeros: `3`,
/// `0.5`, `12`, `250`.
fn percent_text(percent: f64) -> String {
    if !percent.is_finite() {
        return percent.to_string();
    }
    let decimals = (1 - percent.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let text = format!("{percent:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn percentages_have_two_significant_digits() {
        assert_eq!(super::percent_text(3.0), "3");
        assert_eq!(super::percent_text(0.5), "0.5");
        assert_eq!(super::percent_text(12.34), "12");
        assert_eq!(super::percent_text(0.01234), "0.012");
    }
}
