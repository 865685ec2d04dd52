//! The listings of nodes: `:topo` and `:forward` rows, the `:trace` steps,
//! `:vars`, the `:graph` tree and `:topo kahn`.

use std::fmt::Write;

use super::paint::{Painter, ordinal, pad, plural};
use crate::render::notation::Form;
use crate::render::notes;
use crate::session::{
    EarlyVisit, FunctionRow, GradNote, GraphLine, KahnRow, NaiveRow, NodeRow, Omitted, TraceStep,
    VarRow,
};

/// Hands the text written so far on: called by a listing after each row with
/// the text being built; it may take the text (leaving `out` empty) and says
/// whether to go on (false: the output is closed, write no more rows).
pub(super) type Flush<'f> = dyn FnMut(&mut String) -> bool + 'f;

/// The `:topo` table: position, id, name, what the node computes, value.
/// `rows` makes the rows, afresh each time it is called: once to measure the
/// columns, once to write them, so that no more than one row exists at a time.
pub(super) fn rows<I: Iterator<Item = NodeRow>>(
    out: &mut String,
    rows: impl Fn() -> I,
    omitted: Option<Omitted>,
    p: &Painter,
    hint: &str,
    flush: &mut Flush,
) {
    let header = ["#", "node", "name", "computes"];
    let cells = |row: &NodeRow| {
        [
            row.position.to_string(),
            crate::session::node_label(row.node.id),
            row.node.name.clone().unwrap_or_default(),
            p.expression(row),
        ]
    };
    let mut widths = header.map(|h| h.chars().count());
    for row in rows() {
        for (width, cell) in widths.iter_mut().zip(cells(&row)) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let _ = writeln!(
        out,
        "  {}",
        p.dim(&format!(
            "{:>w0$}  {}  {}  {}  value",
            header[0],
            pad(header[1], widths[1]),
            pad(header[2], widths[2]),
            pad(header[3], widths[3]),
            w0 = widths[0]
        ))
    );
    for row in rows() {
        if crate::interrupt::requested() {
            break; // Ctrl-C: the driver says "interrupted"
        }
        if omitted.is_some_and(|o| row.position == o.after + o.count + 1)
            && let Some(o) = omitted
        {
            let _ = writeln!(
                out,
                "  {}",
                p.dim(&format!("… {} more nodes ({hint})", o.count))
            );
        }
        let cell = cells(&row);
        let _ = writeln!(
            out,
            "  {:>w0$}  {}  {}  {}  {}",
            cell[0],
            pad(&cell[1], widths[1]),
            p.name(&pad(&cell[2], widths[2])),
            pad(&cell[3], widths[3]),
            p.value(row.value.0),
            w0 = widths[0]
        );
        if !flush(out) {
            break;
        }
    }
}

/// The `:trace` listing: one block per node in reverse topological order.
/// `counts` is the number of steps and of constants left out.
pub(super) fn trace(
    out: &mut String,
    of: &str,
    (total, constants): (usize, usize),
    steps: impl IntoIterator<Item = TraceStep>,
    omitted: Option<Omitted>,
    p: &Painter,
    flush: &mut Flush,
) {
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
        if crate::interrupt::requested() {
            break; // Ctrl-C: the driver says "interrupted"
        }
        trace_step(out, of, &step, omitted, p);
        if !flush(out) {
            break;
        }
    }
}

/// One step of `:trace`: the node's line and one line per input but the
/// constants; a summary's note first when the step follows the rows left out.
pub(super) fn trace_step(
    out: &mut String,
    of: &str,
    step: &TraceStep,
    omitted: Option<Omitted>,
    p: &Painter,
) {
    let arrow = '→';
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
            p.value(row.value.0),
            p.partial(of, &node),
            p.grad(step.upstream.0)
        ),
        Form::Constant => Ok(()),
        _ if step.call.is_some() => {
            let call = step.call.as_ref().map_or_else(String::new, |call| {
                let steps = format!(
                    "(one call of {}, {} step{}: `--expand={}` shows them)",
                    call.function,
                    call.steps,
                    plural(call.steps),
                    call.label
                );
                let text = crate::render::tables::call_text(call, p.0.precision);
                format!(
                    "{text} = {}   upstream {}   {}",
                    p.value(row.value.0),
                    p.grad(step.upstream.0),
                    p.dim(&steps)
                )
            });
            writeln!(out, "[{}] {} = {call}", row.position, p.name(&node))
        }
        Form::Prefix(_) | Form::Infix(_) | Form::Call(_) => writeln!(
            out,
            "[{}] {} = {} = {}   upstream {}",
            row.position,
            p.name(&node),
            p.expression(row),
            p.value(row.value.0),
            p.grad(step.upstream.0)
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
        if let Some(why) = &c.passes_nothing {
            let _ = writeln!(
                out,
                "      {arrow} {}: {} passes nothing here ({});  grad {} stays{fan_out}",
                p.name(&input),
                c.partial,
                notes::nothing_where(why.passing, &why.operands),
                p.grad(c.before.0),
            );
            continue;
        }
        let local = match step.call {
            // Through a call's body: a number, no formula.
            Some(_) => format!("{} = {}", c.partial, p.number(c.local.0)),
            None => p.local(&c.partial, c.formula.as_deref(), c.local.0),
        };
        let product = if c.formula.is_some() {
            format!(
                "{} × {} = {};  ",
                p.factor(step.upstream.0),
                p.factor(c.local.0),
                p.grad(c.product.0)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "      {arrow} {}: local {local};  {product}grad {} {arrow} {}{fan_out}",
            p.name(&input),
            p.number(c.before.0),
            p.grad(c.after.0),
        );
    }
}

/// One line of the `:vars` table: a number's, or a tensor's of shape `()`.
pub(super) struct VarLine<'a> {
    /// The variable's name.
    pub name: &'a str,
    /// Its value.
    pub value: f64,
    /// It is a leaf.
    pub leaf: bool,
    /// The variables whose earlier binding it was built from.
    pub built_from_earlier: &'a [String],
    /// ∂output/∂ it, when there is an output.
    pub grad: Option<f64>,
    /// Why that gradient is 0.
    pub grad_note: Option<&'a GradNote>,
}

impl<'a> From<&'a VarRow> for VarLine<'a> {
    fn from(var: &'a VarRow) -> VarLine<'a> {
        VarLine {
            name: &var.name,
            value: var.value.0,
            leaf: var.leaf,
            built_from_earlier: &var.built_from_earlier,
            grad: var.grad.map(|g| g.0),
            grad_note: var.grad_note.as_ref(),
        }
    }
}

/// The `:vars` table of the numbers and the tensors of shape `()`, one line
/// each.
pub(super) fn vars(out: &mut String, of: Option<&str>, vars: &[VarLine], p: &Painter) {
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
            p.name(&pad(var.name, name_width)),
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
            let _ = write!(out, "  {} = {}", p.partial(of, var.name), p.grad(grad));
            if let Some(note) = var.grad_note {
                let _ = write!(out, "  {}", p.dim(&format!("({note})")));
            }
        }
        let trimmed = out.trim_end_matches(' ').len();
        out.truncate(trimmed);
        out.push('\n');
    }
}

/// `:vars --shapes`: one `name  shape` a line, the shapes aligned (`()`
/// for a number, `3`, `2×3`).
pub(super) fn shapes(out: &mut String, rows: &[crate::session::ShapeRow], p: &Painter) {
    if rows.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            p.dim("no variables yet: assign one, e.g. `x = 2`")
        );
        return;
    }
    let name_width = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0);
    for row in rows {
        let shape = match row.shape[..] {
            [] => "()".to_string(),
            [n] => n.to_string(),
            [m, n, ..] => format!("{m}×{n}"),
        };
        let _ = writeln!(
            out,
            "  {}  {}",
            p.name(&pad(&row.name, name_width)),
            p.dim(&shape)
        );
    }
}

/// The user functions after `:vars`'s variables, one `f(x, y) = body` a line.
pub(super) fn functions(out: &mut String, functions: &[FunctionRow], p: &Painter) {
    for function in functions {
        let _ = writeln!(
            out,
            "  {}({}) = {}  function",
            p.name(&function.name),
            function.params.join(", "),
            function.body
        );
    }
}

/// The `:graph` tree.
pub(super) fn graph(
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
                    p.value(row.value.0),
                    p.grad(grad.0)
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

/// Kahn's order (`:topo kahn`).
pub(super) fn kahn(
    out: &mut String,
    (of, total): (&str, usize),
    rows: impl IntoIterator<Item = KahnRow>,
    omitted: Option<Omitted>,
    differences: usize,
    p: &Painter,
    flush: &mut Flush,
) {
    let _ = writeln!(
        out,
        "Kahn's order from {}, as PyTorch's engine runs it: a node is ready when all its pending uses are done; of the ready nodes, a leaf first, else the one created last; {total} node{}",
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
        if !flush(out) {
            break;
        }
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

/// Backprop in a naive recursion's order (`:topo naive`): each node's
/// gradient at its visit beside the right one, marked where they differ, and
/// the first node visited too early.
pub(super) fn naive(
    out: &mut String,
    (of, total): (&str, usize),
    rows: &[NaiveRow],
    omitted: Option<Omitted>,
    (wrong, early): (usize, Option<&EarlyVisit>),
    p: &Painter,
) {
    let _ = writeln!(
        out,
        "backprop from {} in a naive recursion's order: visit a node, pass its gradient on, then visit its inputs, each node once, when first reached; {total} node{}",
        p.name(of),
        plural(total)
    );
    let cells: Vec<(String, String)> = rows
        .iter()
        .map(|r| (p.number(r.naive.0), p.number(r.right.0)))
        .collect();
    let width = cells
        .iter()
        .flat_map(|(a, b)| [a.chars().count(), b.chars().count()])
        .chain([5])
        .max()
        .unwrap_or(5);
    let _ = writeln!(
        out,
        "  {}",
        p.dim(&format!(
            "    #  {:>width$}  {:>width$}   node",
            "naive", "right"
        ))
    );
    for (row, (naive, right)) in rows.iter().zip(&cells) {
        if let Some(o) = omitted.filter(|o| row.row.position == o.after + o.count + 1) {
            let _ = writeln!(
                out,
                "  {}",
                p.dim(&format!(
                    "… {} more nodes (`:topo naive all` lists every node)",
                    o.count
                ))
            );
        }
        let marker = if naive == right { " " } else { "✗" };
        let node = p.node(&row.row.node);
        let _ = writeln!(
            out,
            "  {:>5}  {naive:>width$}  {right:>width$} {marker} {} = {}",
            row.row.position,
            p.name(&node),
            p.expression(&row.row),
        );
    }
    match early {
        Some(early) => {
            let did = if early.leaf { "read" } else { "passed on" };
            let _ = writeln!(
                out,
                "{} was visited at {}, before its consumer {} (at {}) passed it its gradient: the walk {did} ∂{of}/∂{} = {} where all its uses give {}",
                p.name(&early.node),
                early.position,
                p.name(&early.consumer),
                early.consumer_position,
                early.node,
                p.number(early.naive.0),
                p.number(early.right.0),
            );
            let _ = writeln!(
                out,
                "{wrong} of {total} gradient{} wrong (✗); backprop sorts the nodes in reverse topological order (`:topo`) so that it visits every node after all its consumers",
                plural(total),
            );
        }
        None => {
            let _ = writeln!(
                out,
                "every node is visited after all its consumers here (no fan-out below a node visited early), so the naive order gives the right gradients"
            );
        }
    }
}
