//! Events → lines for people, plain or coloured (values green, gradients red,
//! names bold, warnings yellow — the CS231n convention).

use std::fmt::Write;

use owo_colors::OwoColorize;

use super::notation::{self, Form};
use super::{Style, format_number, line_column, to_ascii};

mod teaching;
use crate::session::{Event, NodeRef, NodeRow, Omitted, TraceStep, VarRow};

/// Renders one event as text ending in a newline, or "" when it shows nothing
/// (a function definition, `:quit`). `source` is the text the event's statement
/// came from; warnings quote it.
pub fn render_event(event: &Event, source: &str, style: &Style) -> String {
    let out = render_unicode(event, source, style);
    if style.ascii { to_ascii(&out) } else { out }
}

fn render_unicode(event: &Event, source: &str, style: &Style) -> String {
    let p = Painter(style);
    if let Some(out) = teaching::render(event, &p) {
        return out;
    }
    let mut out = String::new();
    match event {
        Event::Value {
            name: Some(name),
            value,
        } => {
            let _ = writeln!(out, "{} = {}", p.name(name), p.value(*value));
        }
        Event::Value { name: None, value } => {
            let _ = writeln!(out, "{}", p.value(*value));
        }
        Event::Defined { .. } | Event::Quit => {}
        Event::Grad {
            of,
            wrt,
            value,
            note,
        } => {
            let _ = write!(out, "{} = {}", p.partial(of, wrt), p.grad(*value));
            if let Some(note) = note {
                let _ = write!(out, "  {}", p.dim(&format!("({note})")));
            }
            out.push('\n');
        }
        Event::Warning { message, span } => {
            let (line, column) = line_column(source, span.start);
            let quoted = source.get(span.start..span.end).unwrap_or("").trim();
            let place = if !quoted.is_empty() && quoted.chars().count() <= 40 {
                format!("in `{quoted}` at {line}:{column}")
            } else {
                format!("at {line}:{column}")
            };
            let _ = writeln!(out, "{} {message} ({place})", p.warning("warning:"));
        }
        Event::Notice { message } => {
            let _ = writeln!(out, "{} {message}", p.dim("note:"));
        }
        Event::Topo {
            of,
            total,
            rows,
            omitted,
        } => {
            let _ = writeln!(
                out,
                "reverse topological order from {}: {total} node{}, output first",
                p.name(of),
                plural(*total)
            );
            render_rows(&mut out, rows, *omitted, &p, "`:topo all` lists every node");
        }
        Event::Trace {
            of,
            total,
            constants,
            steps,
            omitted,
        } => render_trace(&mut out, of, (*total, *constants), steps, *omitted, &p),
        Event::Vars { of, vars } => render_vars(&mut out, of.as_deref(), vars, &p),
        Event::Help { text, .. } => {
            let _ = writeln!(out, "{text}");
        }
        Event::Stats(stats) => {
            let _ = writeln!(
                out,
                "graph: {} nodes ({} reachable), {} ({} bytes a node)",
                stats.nodes,
                stats.reachable,
                human_bytes(stats.bytes),
                stats.node_bytes
            );
            let _ = writeln!(
                out,
                "orders computed: {}; collections: {}",
                stats.sorts, stats.collections
            );
            match &stats.last {
                Some(reclaim) => {
                    let _ = writeln!(out, "last reclaim: {}", reclaim_text(reclaim));
                }
                None => {
                    let _ = writeln!(out, "last reclaim: none yet");
                }
            }
        }
        Event::Collected(reclaim) => {
            let _ = writeln!(out, "reclaimed {}", reclaim_text(reclaim));
        }
        Event::Reset => {
            let _ = writeln!(
                out,
                "{}",
                p.dim("session cleared: no variables, functions or graph")
            );
        }
        _ => {}
    }
    out
}

/// A `:trace` event cut into pieces for `:step`: the header line, then one piece
/// per backward step (each as `:trace` prints it, numbered as there). Empty for
/// other events.
pub fn render_trace_pieces(event: &Event, style: &Style) -> Vec<String> {
    let Event::Trace {
        of,
        total,
        constants,
        steps,
        omitted,
    } = event
    else {
        return Vec::new();
    };
    let p = Painter(style);
    let counts = (*total, *constants);
    let mut header = String::new();
    render_trace(&mut header, of, counts, &[], None, &p);
    let mut pieces = vec![header];
    for step in steps {
        let mut text = String::new();
        render_trace(
            &mut text,
            of,
            counts,
            std::slice::from_ref(step),
            *omitted,
            &p,
        );
        let body = text.split_once('\n').map_or("", |(_, body)| body);
        pieces.push(body.to_string());
    }
    if style.ascii {
        pieces.iter().map(|piece| to_ascii(piece)).collect()
    } else {
        pieces
    }
}

/// Colours and symbols, switched by the style.
struct Painter<'a>(&'a Style);

impl Painter<'_> {
    fn number(&self, value: f64) -> String {
        format_number(value, self.0.precision)
    }
    fn value(&self, value: f64) -> String {
        let text = self.number(value);
        if self.0.color {
            text.green().to_string()
        } else {
            text
        }
    }
    fn grad(&self, value: f64) -> String {
        let text = self.number(value);
        if self.0.color {
            text.red().to_string()
        } else {
            text
        }
    }
    fn name(&self, name: &str) -> String {
        if self.0.color {
            name.bold().to_string()
        } else {
            name.to_string()
        }
    }
    fn warning(&self, text: &str) -> String {
        if self.0.color {
            text.yellow().bold().to_string()
        } else {
            text.to_string()
        }
    }
    fn error(&self, text: &str) -> String {
        if self.0.color {
            text.red().bold().to_string()
        } else {
            text.to_string()
        }
    }
    fn dim(&self, text: &str) -> String {
        if self.0.color {
            text.dimmed().to_string()
        } else {
            text.to_string()
        }
    }
    /// `∂z/∂x`, with the output parenthesised when it is an expression: `∂(x*x)/∂x`.
    fn partial(&self, of: &str, wrt: &str) -> String {
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
    fn local(&self, partial: &str, formula: Option<&str>, value: f64) -> String {
        match formula {
            None => format!("{partial} passes nothing"),
            Some(formula) if formula.parse::<f64>().ok() == Some(value) => {
                format!("{partial} = {formula}")
            }
            Some(formula) => format!("{partial} = {formula} = {}", self.number(value)),
        }
    }

    /// A node by name, constant value or id.
    fn node(&self, node: &NodeRef) -> String {
        notation::node(node, self.0.precision)
    }
    /// What a node computes, from its op and inputs: `x * y`, `tanh(#4)`, `leaf`.
    fn expression(&self, row: &NodeRow) -> String {
        let inputs: Vec<String> = row.inputs.iter().map(|i| self.node(i)).collect();
        notation::expression(row.op, &inputs)
    }
}

fn is_plain_name(text: &str) -> bool {
    text.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_alphanumeric() || c == '_')
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn ordinal(n: u32) -> String {
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
fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    format!("{text}{}", " ".repeat(width.saturating_sub(len)))
}

/// The `:topo` table: position, id, name, what the node computes, value.
fn render_rows(
    out: &mut String,
    rows: &[NodeRow],
    omitted: Option<Omitted>,
    p: &Painter,
    hint: &str,
) {
    let header = [
        "#".to_string(),
        "node".to_string(),
        "name".to_string(),
        "computes".to_string(),
    ];
    let cells: Vec<[String; 4]> = std::iter::once(header.clone())
        .chain(rows.iter().map(|row| {
            [
                row.position.to_string(),
                format!("#{}", row.node.id.0),
                row.node.name.clone().unwrap_or_default(),
                p.expression(row),
            ]
        }))
        .collect();
    let width = |i: usize| {
        cells
            .iter()
            .map(|c| c[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths = [width(0), width(1), width(2), width(3)];
    let _ = writeln!(
        out,
        "  {}",
        p.dim(&format!(
            "{:>w0$}  {}  {}  {}  value",
            header[0],
            pad(&header[1], widths[1]),
            pad(&header[2], widths[2]),
            pad(&header[3], widths[3]),
            w0 = widths[0]
        ))
    );
    let cells = &cells[1..];
    for (row, cell) in rows.iter().zip(cells) {
        if omitted.is_some_and(|o| row.position == o.after + o.count + 1) {
            if let Some(o) = omitted {
                let _ = writeln!(
                    out,
                    "  {}",
                    p.dim(&format!("… {} more nodes ({hint})", o.count))
                );
            }
        }
        let _ = writeln!(
            out,
            "  {:>w0$}  {}  {}  {}  {}",
            cell[0],
            pad(&cell[1], widths[1]),
            p.name(&pad(&cell[2], widths[2])),
            pad(&cell[3], widths[3]),
            p.value(row.value),
            w0 = widths[0]
        );
    }
}

/// The `:trace` listing: one block per node in reverse topological order.
/// `counts` is the number of steps and of constants left out.
fn render_trace(
    out: &mut String,
    of: &str,
    (total, constants): (usize, usize),
    steps: &[TraceStep],
    omitted: Option<Omitted>,
    p: &Painter,
) {
    let arrow = '→';
    let constants = match constants {
        0 => String::new(),
        1 => " (1 constant not shown)".to_string(),
        n => format!(" ({n} constants not shown)"),
    };
    let _ = writeln!(
        out,
        "backward pass from {}: {total} node{} in reverse topological order{constants}; upstream = {}, seeded with 1",
        p.name(of),
        plural(total),
        p.partial(of, "node")
    );
    for step in steps {
        let row = &step.row;
        if let Some(o) = omitted.filter(|o| row.position == o.after + o.count + 1) {
            let skipped = format!("… {} more steps (`:trace all` shows every step)", o.count);
            let _ = writeln!(out, "  {}", p.dim(&skipped));
        }
        let node = p.node(&row.node);
        let _ = match Form::of(row.op) {
            Form::Leaf => writeln!(
                out,
                "[{}] {} leaf = {}   {} = {}",
                row.position,
                p.name(&node),
                p.value(row.value),
                p.partial(of, &node),
                p.grad(step.upstream)
            ),
            Form::Constant => Ok(()),
            Form::Prefix(_) | Form::Infix(_) | Form::Call(_) => writeln!(
                out,
                "[{}] {} = {} = {}   upstream {}",
                row.position,
                p.name(&node),
                p.expression(row),
                p.value(row.value),
                p.grad(step.upstream)
            ),
        };
        // Constants take gradients too, but nobody asks for them: leave them out.
        for c in step
            .contributions
            .iter()
            .filter(|c| c.input.constant.is_none())
        {
            let input = p.node(&c.input);
            let fan_out = if c.use_count > 1 {
                // Nothing passed is nothing accumulated.
                let how = if c.use_number > 1 && c.passes_nothing.is_none() {
                    ": accumulated"
                } else {
                    ""
                };
                format!(
                    "   ({} of {} uses{how})",
                    ordinal(c.use_number),
                    c.use_count
                )
            } else {
                String::new()
            };
            if let Some(why) = c.passes_nothing {
                let _ = writeln!(
                    out,
                    "      {arrow} {}: {} passes nothing here ({why});  grad {} stays{fan_out}",
                    p.name(&input),
                    c.partial,
                    p.grad(c.before),
                );
                continue;
            }
            let local = p.local(&c.partial, c.formula.as_deref(), c.local);
            let product = if c.formula.is_some() {
                format!(
                    "{} × {} = {};  ",
                    p.number(step.upstream),
                    p.number(c.local),
                    p.grad(c.product)
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "      {arrow} {}: local {local};  {product}grad {} {arrow} {}{fan_out}",
                p.name(&input),
                p.number(c.before),
                p.grad(c.after),
            );
        }
    }
}

/// The `:vars` table.
fn render_vars(out: &mut String, of: Option<&str>, vars: &[VarRow], p: &Painter) {
    if vars.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            p.dim("no variables yet: assign one, e.g. `x = 2`")
        );
        return;
    }
    let name_width = vars
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(0);
    let values: Vec<String> = vars.iter().map(|v| p.number(v.value)).collect();
    let value_width = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
    for (var, value) in vars.iter().zip(&values) {
        let kind = if var.leaf { "leaf" } else { "derived" };
        let _ = write!(
            out,
            "  {} = {}  {kind:<7}",
            p.name(&pad(&var.name, name_width)),
            pad(value, value_width)
        );
        if !var.built_from_earlier.is_empty() {
            let from = var.built_from_earlier.join(", ");
            let _ = write!(
                out,
                "  {}",
                p.dim(&format!("(built from an earlier {from})"))
            );
        }
        if let (Some(of), Some(grad)) = (of, var.grad) {
            let _ = write!(out, "  {} = {}", p.partial(of, &var.name), p.grad(grad));
            if let Some(note) = &var.grad_note {
                let _ = write!(out, "  {}", p.dim(&format!("({note})")));
            }
        }
        let trimmed = out.trim_end_matches(' ').len();
        out.truncate(trimmed);
        out.push('\n');
    }
}

/// `1.5 MiB`, `72 B`.
fn human_bytes(bytes: usize) -> String {
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
fn reclaim_text(reclaim: &crate::session::Reclaim) -> String {
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
