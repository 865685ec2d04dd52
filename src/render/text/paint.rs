//! How text looks: colours and symbols switched by the style, and the small
//! helpers every listing uses (plurals, padding, byte counts).

use owo_colors::OwoColorize;

use crate::render::notation;
use crate::render::{Style, format_number};
use crate::session::{NodeRef, NodeRow, Reclaim};

/// Colours and symbols, switched by the style.
pub(super) struct Painter<'a>(pub(super) &'a Style);

impl Painter<'_> {
    pub(super) fn number(&self, value: f64) -> String {
        format_number(value, self.0.precision)
    }
    /// A number as a factor of a product: negative ones in brackets,
    /// `0.5 × (-3)`.
    pub(super) fn factor(&self, value: f64) -> String {
        let text = self.number(value);
        match text.starts_with('-') {
            true => format!("({text})"),
            false => text,
        }
    }
    pub(super) fn value(&self, value: f64) -> String {
        let text = self.number(value);
        if self.0.color {
            text.green().to_string()
        } else {
            text
        }
    }
    pub(super) fn grad(&self, value: f64) -> String {
        let text = self.number(value);
        if self.0.color {
            text.red().to_string()
        } else {
            text
        }
    }
    /// Text already formatted as a gradient, coloured as one.
    pub(super) fn grad_text(&self, text: &str) -> String {
        if self.0.color {
            text.red().to_string()
        } else {
            text.to_string()
        }
    }
    /// Text already formatted as a value, coloured as one.
    pub(super) fn value_text(&self, text: &str) -> String {
        if self.0.color {
            text.green().to_string()
        } else {
            text.to_string()
        }
    }
    pub(super) fn name(&self, name: &str) -> String {
        if self.0.color {
            name.bold().to_string()
        } else {
            name.to_string()
        }
    }
    pub(super) fn warning(&self, text: &str) -> String {
        if self.0.color {
            text.yellow().bold().to_string()
        } else {
            text.to_string()
        }
    }
    pub(super) fn error(&self, text: &str) -> String {
        if self.0.color {
            text.red().bold().to_string()
        } else {
            text.to_string()
        }
    }
    pub(super) fn dim(&self, text: &str) -> String {
        if self.0.color {
            text.dimmed().to_string()
        } else {
            text.to_string()
        }
    }
    /// `∂z/∂x`, with the output parenthesised when it is an expression: `∂(x*x)/∂x`.
    pub(super) fn partial(&self, of: &str, wrt: &str) -> String {
        let d = '∂';
        let of = if is_plain_name(of) {
            of.to_string()
        } else {
            format!("({of})")
        };
        self.name(&format!("{d}{of}/{d}{wrt}"))
    }
    /// A local derivative: the partial, the formula, then its value unless the
    /// formula is that number (`∂(x + y)/∂x = 1`); `∂floor(x)/∂x passes nothing`
    /// when the op passes nothing to this input.
    pub(super) fn local(&self, partial: &str, formula: Option<&str>, value: f64) -> String {
        match formula {
            None => format!("{partial} passes nothing"),
            Some(formula) if formula.parse::<f64>().ok() == Some(value) => {
                format!("{partial} = {formula}")
            }
            Some(formula) => format!("{partial} = {formula} = {}", self.number(value)),
        }
    }

    /// A node by name, constant value or id.
    pub(super) fn node(&self, node: &NodeRef) -> String {
        notation::node(node, self.0.precision)
    }
    /// What a node computes, from its op and inputs: `x * y`, `tanh(_4)`, `leaf`.
    pub(super) fn expression(&self, row: &NodeRow) -> String {
        let inputs: Vec<String> = row.inputs.iter().map(|i| self.node(i)).collect();
        notation::expression(row.op, &inputs)
    }
}

pub(super) fn is_plain_name(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

pub(super) fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Pads `text` to `width` characters (char count, so `∂` and `θ` line up).
pub(super) fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    format!("{text}{}", " ".repeat(width.saturating_sub(len)))
}

/// `1.5 MiB`, `72 B`.
pub(super) fn human_bytes(bytes: usize) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `2097153 → 3 nodes, 48.0 MiB → 72 B, in 12.3 ms (automatic)`.
pub(super) fn reclaim_text(reclaim: &Reclaim) -> String {
    format!(
        "{} → {} nodes, {} → {}, in {:.1} ms{}",
        reclaim.nodes_before,
        reclaim.nodes_after,
        human_bytes(reclaim.bytes_before),
        human_bytes(reclaim.bytes_after),
        reclaim.millis,
        if reclaim.automatic {
            " (automatic)"
        } else {
            ""
        }
    )
}
