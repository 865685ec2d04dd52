//! Events → lines for people, plain or coloured (values green, gradients red,
//! names bold, warnings yellow — the CS231n convention).

use std::fmt::Write;

mod calculus;
mod homework;
mod listings;
mod paint;
mod quiz;
mod tensor_steps;
mod tensor_tables;
mod tensors;

pub use tensor_tables::handout_table;
pub(crate) use tensors::axis_ends;

use paint::{Painter, human_bytes, plural, reclaim_text};

use super::number::write_number;
use super::{Precision, Style, dot, line_column, plot, tables, to_ascii};
use crate::engine::NodeId;
use crate::session::event::{
    file_events, listing_events, node_listing_events, plain_events, short_events,
};
use crate::session::{
    CHECK_TOLERANCE, Event, GradNote, Listing, NodeRow, Omitted, OutputStepModel, PathRow,
    PictureFormat, Session, Stats, StepModel, StepNode, StepPager, Tolerance, TopoRows, TraceStep,
    TraceSteps, Value, Verdict,
};
use crate::syntax::Span;

/// How much text [`write_event`] gathers before it hands a piece on.
const PIECE_BYTES: usize = 64 * 1024;

/// Appends a value line without colour to `out`: `x = 2` for an assignment
/// (`name`), `2` for an expression, then a newline. What [`render_event`]
/// writes for an [`Event::Value`] when the style has no colour (and, with
/// `ascii`, the name is ASCII); the printer calls it to write such lines
/// without building a `String` for each.
pub fn plain_value_line(out: &mut String, name: Option<&str>, value: f64, precision: Precision) {
    if let Some(name) = name {
        out.push_str(name);
        out.push_str(" = ");
    }
    let _ = write_number(out, value, precision);
    out.push('\n');
}

/// Renders one event as text ending in a newline, or "" when it shows nothing
/// (a function definition, `:quit`). `source` is the text the event's statement
/// came from, `origin` its name (`-e`, a file); warnings quote the one and
/// name the other. `session` is the session the event came from,
/// which makes the rows of a listing ([`crate::session::Listing`]); render an
/// event before that session runs its next statement.
///
/// The whole text is built in memory: a long listing is better written with
/// [`write_event`].
pub fn render_event(
    event: &Event,
    session: &Session,
    source: &str,
    origin: &str,
    style: &Style,
) -> String {
    let out = render_unicode(event, session, source, origin, style, &mut |_| true);
    if style.ascii { to_ascii(&out) } else { out }
}

/// Renders one event as [`render_event`] does, handing the text to `write` in
/// pieces of whole lines as it is made (every 64 KiB or so), so that a
/// listing's rows exist one at a time; `write` returns false to stop (the
/// output is closed): no more rows are made. With `style.ascii`, each piece is
/// in ASCII. Nothing is handed on for an event that shows nothing.
pub fn write_event(
    event: &Event,
    session: &Session,
    source: &str,
    origin: &str,
    style: &Style,
    write: &mut dyn FnMut(&str) -> bool,
) {
    let mut hand_on = |text: &mut String| {
        let going = if style.ascii {
            write(&to_ascii(text))
        } else {
            write(text)
        };
        text.clear();
        going
    };
    let mut going = true;
    let mut rest = render_unicode(event, session, source, origin, style, &mut |out| {
        if out.len() >= PIECE_BYTES {
            going = hand_on(out);
        }
        going
    });
    if going && !rest.is_empty() {
        hand_on(&mut rest);
    }
}

/// The text of `event`; a listing hands what it has written to `flush` after
/// each row (see [`listings::Flush`]), and what is left is returned.
fn render_unicode(
    event: &Event,
    session: &Session,
    source: &str,
    origin: &str,
    style: &Style,
    flush: &mut listings::Flush,
) -> String {
    let p = Painter(style);
    let mut out = String::new();
    match event {
        Event::Value {
            name,
            value: Value::Number(value),
        } => value_line(&mut out, name.as_deref(), value.0, &p),
        Event::Value {
            name,
            value: Value::Tensor(value),
        } => {
            let head = name.as_deref().map_or_else(String::new, |n| p.name(n));
            tensors::block(&mut out, &head, value, &p, &|s| p.value_text(s));
        }
        Event::Defined { name, params } => {
            let _ = writeln!(out, "defined {}({})", p.name(name), params.join(", "));
        }
        Event::Quit => {}
        Event::Grad {
            of,
            wrt,
            value: Value::Number(value),
            note,
        } => grad_line(&mut out, (of, wrt), value.0, note.as_ref(), &p),
        Event::Grad {
            of,
            wrt,
            value: Value::Tensor(value),
            note,
        } => {
            tensors::block(&mut out, &p.partial(of, wrt), value, &p, &|s| {
                p.grad_text(s)
            });
            if let Some(note) = note
                && out.ends_with('\n')
            {
                out.pop();
                let _ = writeln!(out, "  {}", p.dim(&format!("({note})")));
            }
        }
        Event::Warning { message, span } => {
            warning_line(&mut out, message, span, source, origin, &p);
        }
        Event::Notice(notice) => {
            let _ = writeln!(out, "{} {notice}", p.dim("note:"));
        }
        listing_events!() | Event::Graph { .. } | Event::Naive { .. } => {
            listing(&mut out, event, session, &p, flush);
        }
        Event::Vars {
            of,
            vars,
            functions,
            tensors: tensor_vars,
        } => {
            vars_text(&mut out, of.as_deref(), (vars, tensor_vars), &p);
            listings::functions(&mut out, functions, &p);
        }
        Event::Shapes { rows } => listings::shapes(&mut out, rows, &p),
        Event::Help { text, .. } => {
            let _ = writeln!(out, "{text}");
        }
        Event::Stats(stats) => stats_lines(&mut out, stats),
        Event::Collected(reclaim) => {
            let _ = writeln!(out, "reclaimed {}", reclaim_text(reclaim));
        }
        Event::Precision { digits } => precision_line(&mut out, *digits),
        Event::Reset => {
            let _ = writeln!(
                out,
                "{}",
                p.dim("session cleared: no variables, functions or graph")
            );
        }
        Event::Check { .. } => check_line(&mut out, event, &p),
        Event::Paths { .. } => paths_lines(&mut out, event, &p),
        Event::Wrote { path, bytes, what } => {
            let _ = writeln!(out, "wrote {what} to {} ({bytes} bytes)", p.name(path));
        }
        Event::Calculus(event) => out.push_str(&calculus::render(event, &p)),
        Event::Homework(event) => out.push_str(&homework::render(event, &p)),
        Event::Quiz(event) => out.push_str(&quiz::render(event, &p)),
        Event::Picture { target: None, .. }
        | Event::TraceTable { target: None, .. }
        | Event::Plot { target: None, .. } => out.push_str(&shown_here(event, session, &p)),
        // Events with a file are written by the printer, which reports `Wrote`;
        // `:load` is carried out by the driver.
        file_events!() => {}
    }
    out
}

/// The variables of a `:vars` event: the numbers and the tensors of shape
/// `()` in one table, a line each, then each vector and matrix with its
/// gradient under it.
fn vars_text(
    out: &mut String,
    of: Option<&str>,
    (vars, tensor_vars): (&[crate::session::VarRow], &[crate::session::TensorVarRow]),
    p: &Painter,
) {
    // A tensor of shape `()` is a line of the numbers' table.
    let number = |data: &crate::session::TensorData| match data.shape[..] {
        [] => data.data.first().map(|n| n.0),
        _ => None,
    };
    let lines: Vec<listings::VarLine> = (vars.iter().map(listings::VarLine::from))
        .chain(tensor_vars.iter().filter_map(|row| {
            Some(listings::VarLine {
                name: &row.name,
                value: number(&row.value)?,
                leaf: row.leaf,
                built_from_earlier: &[],
                grad: row.grad.as_ref().and_then(number),
                grad_note: None,
            })
        }))
        .collect();
    if tensor_vars.is_empty() || !lines.is_empty() {
        listings::vars(out, of, &lines, p);
    }
    for row in tensor_vars
        .iter()
        .filter(|row| number(&row.value).is_none())
    {
        let kind = if row.leaf { "leaf" } else { "derived" };
        let head = format!("  {} ({kind})", p.name(&row.name));
        tensors::block(out, &head, &row.value, p, &|s| p.value_text(s));
        if let (Some(grad), Some(of)) = (&row.grad, of) {
            let head = format!("    {}", p.partial(of, &row.name));
            tensors::block(out, &head, grad, p, &|s| p.grad_text(s));
        }
    }
}

/// Appends the listing of a `:topo` (`topo`) or `:forward` of the output
/// `of` of `total` nodes to `out`: its header, then `rows` as they are
/// made, `omitted` summarised, each handed to `flush`.
fn order_listing<I: Iterator<Item = NodeRow>>(
    out: &mut String,
    topo: bool,
    (of, total): (&str, usize),
    rows: impl Fn() -> I,
    omitted: Option<Omitted>,
    p: &Painter,
    flush: &mut listings::Flush,
) {
    let (order, first, hint) = if topo {
        (
            "reverse topological order from",
            "output",
            "`:topo all` lists every node",
        )
    } else {
        (
            "forward evaluation order of",
            "inputs",
            "`:forward all` lists every node",
        )
    };
    let _ = writeln!(
        out,
        "{order} {}: {total} node{}, {first} first",
        p.name(of),
        plural(total)
    );
    listings::rows(out, rows, omitted, p, hint, flush);
}

/// Appends the listing of a `:topo`, `:trace`, `:graph`, `:forward`, `:kahn`
/// or `:naive` event to `out`, its rows made from `session` and handed to
/// `flush` as they are written (see [`listings::Flush`]). Nothing for other
/// events.
fn listing(
    out: &mut String,
    event: &Event,
    session: &Session,
    p: &Painter,
    flush: &mut listings::Flush,
) {
    if let Some((topo, of, total, rows, omitted)) = node_order(event) {
        let rows = || session.node_rows(rows);
        order_listing(out, topo, (of, total), rows, omitted, p, flush);
        return;
    }
    if let Some((of, counts, steps, omitted)) = node_trace(event) {
        let steps = session.trace_steps(steps);
        listings::trace(out, of, counts, steps, omitted, p, flush);
        return;
    }
    if let Some((of, total, rows, omitted, differences)) = kahn_order(event) {
        let rows = session.kahn_rows(rows);
        listings::kahn(out, (of, total), rows, omitted, differences, p, flush);
        return;
    }
    match event {
        Event::Topo {
            of,
            rows: TopoRows::Tensors { rows, .. },
        } => tensor_steps::topo(out, of, rows, p),
        Event::Trace {
            of,
            steps: TraceSteps::Tensors { legend, steps, .. },
        } => tensors::trace(out, of, legend, steps, p),
        Event::Graph {
            of,
            total,
            lines,
            omitted,
        } => listings::graph(out, of, *total, lines, *omitted, p),
        Event::Naive {
            of,
            total,
            rows,
            omitted,
            wrong,
            early,
        } => listings::naive(
            out,
            (of, *total),
            rows,
            *omitted,
            (*wrong, early.as_ref()),
            p,
        ),
        // Written above.
        node_listing_events!() => {}
        short_events!() | file_events!() | Event::Calculus(_) => {}
    }
}

/// The table of a `:trace md|tex` event (a scalar output's or a tensor
/// output's, [`Event::TraceTable`]) with its
/// format, numbers to `precision`, its rows made from `session`; `None`
/// for other events.
pub fn table_text(
    event: &Event,
    session: &Session,
    precision: crate::render::Precision,
) -> Option<(crate::session::TableFormat, String)> {
    match event {
        Event::TraceTable {
            of,
            steps: TraceSteps::Nodes { steps, omitted, .. },
            format,
            ..
        } => Some((
            *format,
            tables::table(of, session.trace_steps(steps), *omitted, *format, precision),
        )),
        Event::TraceTable {
            of,
            steps: TraceSteps::Tensors { legend, steps, .. },
            format,
            ..
        } => Some((
            *format,
            handout_table(of, legend, steps, *format, precision),
        )),
        _ => None,
    }
}

/// The text of a picture, table or plot shown in the terminal (no file given):
/// the DOT of a `:dot`, the table of a `:table`, the plot of a `:plot`, its
/// rows made from `session`. "" for other events.
fn shown_here(event: &Event, session: &Session, p: &Painter) -> String {
    match event {
        Event::Picture {
            picture,
            format: PictureFormat::Dot,
            target: None,
        } => dot::dot(picture),
        Event::TraceTable { target: None, .. } => {
            table_text(event, session, p.0.precision).map_or_else(String::new, |t| t.1)
        }
        Event::Plot {
            of,
            wrt,
            at,
            samples,
            target: None,
        } => plot::terminal(of, wrt, at.0, samples, p.0.precision),
        // An SVG or a file is only written to a file; the rest are not pictures.
        file_events!() | plain_events!() | listing_events!() | Event::Calculus(_) => String::new(),
    }
}

/// Appends the line of an [`Event::Value`] to `out`: `x = 2` for an
/// assignment (`name`), `2` for an expression; plain without colour (see
/// [`plain_value_line`]), else the name bold and the value green.
fn value_line(out: &mut String, name: Option<&str>, value: f64, p: &Painter) {
    match name {
        _ if !p.0.color => plain_value_line(out, name, value, p.0.precision),
        Some(name) => {
            let _ = writeln!(out, "{} = {}", p.name(name), p.value(value));
        }
        None => {
            let _ = writeln!(out, "{}", p.value(value));
        }
    }
}

/// Appends the line of an [`Event::Grad`] to `out`: the partial of the output
/// by the input (`(of, wrt)`), its gradient, and the note, if any, dimmed.
fn grad_line(
    out: &mut String,
    (of, wrt): (&str, &str),
    value: f64,
    note: Option<&GradNote>,
    p: &Painter,
) {
    let _ = write!(out, "{} = {}", p.partial(of, wrt), p.grad(value));
    if let Some(note) = note {
        let _ = write!(out, "  {}", p.dim(&format!("({note})")));
    }
    out.push('\n');
}

/// Appends the line of an [`Event::Warning`] to `out`: the message, then where
/// in `source` its `span` is — quoted when short — as line and column,
/// named by `origin` unless it is the line just typed.
fn warning_line(
    out: &mut String,
    message: &str,
    span: &Span,
    source: &str,
    origin: &str,
    p: &Painter,
) {
    let (line, column) = line_column(source, span.start);
    let quoted = source.get(span.start..span.end).unwrap_or("").trim();
    // The line just typed at the prompt needs no name; a script, `-e`
    // or a `:load`ed file does (as an error's `-e:1:5`).
    let at = match origin {
        "<input>" => format!("{line}:{column}"),
        origin => format!("{origin}:{line}:{column}"),
    };
    let place = if !quoted.is_empty() && quoted.chars().count() <= 40 {
        format!("in `{quoted}` at {at}")
    } else {
        format!("at {at}")
    };
    let _ = writeln!(out, "{} {message} ({place})", p.warning("warning:"));
}

/// Appends the lines of an [`Event::Stats`] to `out`: the graph's nodes and
/// bytes, the orders computed and collections made, and the last reclaim.
fn stats_lines(out: &mut String, stats: &Stats) {
    let _ = writeln!(
        out,
        "graph: {} node{} ({} reachable), {} ({} bytes a node)",
        stats.nodes,
        plural(stats.nodes),
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
    if stats.tensor_nodes > 0 {
        let _ = writeln!(
            out,
            "vectors and matrices: {} nodes holding {} numbers ({}) of the budget of {}; `:reset` frees them, `:gc` does not",
            stats.tensor_nodes,
            stats.tensor_numbers,
            human_bytes(stats.tensor_numbers * 8),
            stats.tensor_budget
        );
    }
}

/// Appends the line of an [`Event::Precision`] to `out`: how many significant
/// digits numbers show from now on (`None`: full precision).
fn precision_line(out: &mut String, digits: Option<usize>) {
    let _ = match digits {
        Some(1) => writeln!(out, "numbers show 1 significant digit"),
        Some(n) => writeln!(out, "numbers show {n} significant digits"),
        None => writeln!(out, "numbers show full precision"),
    };
}

/// Appends the line of an [`Event::Check`] to `out`: the gradient by reverse
/// mode against the central difference, the test the verdict rests on, the
/// verdict, and why it is no comparison (a kink, inf or nan, an unsteady
/// quotient) with the check's note. Nothing for other events.
fn check_line(out: &mut String, event: &Event, p: &Painter) {
    let Event::Check {
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
    } = event
    else {
        return;
    };
    let word = match verdict {
        Verdict::Pass => "pass".to_string(),
        Verdict::Warn | Verdict::Kink | Verdict::NotFinite | Verdict::Unsteady => {
            p.warning(verdict.word())
        }
        Verdict::Fail => p.error(verdict.word()),
    };
    let basis = check_basis(*verdict, *tolerance, p);
    let _ = write!(
        out,
        "{} at {wrt} = {}: reverse mode {}, central difference {} (h = {}), |difference| {}{basis}  {word}",
        p.partial(of, wrt),
        p.number(at.0),
        p.grad(analytic.0),
        p.number(numeric.0),
        p.number(h.0),
        p.number(difference.0),
    );
    if let Some(why) = check_why(*verdict) {
        let _ = write!(out, "  {}", p.dim(&format!("({why})")));
    }
    if let Some(note) = note {
        let _ = write!(out, "  {}", p.dim(&format!("({note})")));
    }
    out.push('\n');
}

/// What a check's `verdict` rests on: |difference| against atol +
/// rtol·|numeric| of the `tolerance` asked for (and gradcheck's, for a warning);
/// "" for a verdict that is no comparison.
fn check_basis(verdict: Verdict, tolerance: Tolerance, p: &Painter) -> String {
    let test = |t: Tolerance| {
        format!(
            "{} + {}·|central difference|",
            p.number(t.atol.0),
            p.number(t.rtol.0)
        )
    };
    match verdict {
        Verdict::Pass => format!(" ≤ {}", test(tolerance)),
        Verdict::Warn => format!(
            " > {}, ≤ {} (gradcheck's tolerance)",
            test(CHECK_TOLERANCE),
            test(tolerance)
        ),
        Verdict::Fail => format!(" > {} (gradcheck's tolerance)", test(tolerance)),
        Verdict::Kink | Verdict::NotFinite | Verdict::Unsteady => String::new(),
    }
}

/// Why a check's `verdict` is no comparison of the gradient with the central
/// difference; `None` for a pass, a warning or a failure.
fn check_why(verdict: Verdict) -> Option<&'static str> {
    match verdict {
        Verdict::Kink => Some(
            "the step ±h crosses a kink (relu, abs, max, min, floor…): a difference quotient does not measure the gradient there",
        ),
        Verdict::NotFinite => Some("inf or nan: the difference quotient cannot be compared"),
        Verdict::Unsteady => Some(
            "the difference quotient changes with the step more than that: the function varies faster than the doubles near this point resolve, so a central difference measures nothing here",
        ),
        Verdict::Pass | Verdict::Warn | Verdict::Fail => None,
    }
}

/// Appends the lines of an [`Event::Paths`] to `out`: the count of paths from
/// the output to the input, one line per path listed, then their sum — or, when
/// not all are listed, the gradient reverse mode found. Nothing for other events.
fn paths_lines(out: &mut String, event: &Event, p: &Painter) {
    let Event::Paths {
        of,
        wrt,
        paths,
        count,
        gradient,
        nodes,
    } = event
    else {
        return;
    };
    let _ = writeln!(
        out,
        "paths from {} to {}: {} (chain rule: {} is the sum over paths of the product of local derivatives)",
        p.name(of),
        p.name(wrt),
        path_count(count.0, p.0),
        p.partial(of, wrt)
    );
    for (i, path) in paths.iter().enumerate() {
        path_line(out, i + 1, path, p);
    }
    let shown = paths.len() as f64;
    if shown == count.0 {
        let sum: f64 = paths.iter().map(|path| path.product.0).sum();
        let _ = writeln!(
            out,
            "  sum = {} = {}   (reverse mode visited each of {nodes} node{} once)",
            p.grad(sum),
            p.partial(of, wrt),
            plural(*nodes)
        );
    } else {
        let omitted = if paths.is_empty() {
            format!(
                "{} too long to list",
                if count.0 == 1.0 {
                    "the path is"
                } else {
                    "the paths are"
                }
            )
        } else {
            let more = count.0 - shown;
            format!(
                "… {} more path{} not listed",
                path_count(more, p.0),
                if more == 1.0 { "" } else { "s" }
            )
        };
        let _ = writeln!(
            out,
            "  {omitted}; the sum over all paths is {} = {}",
            p.partial(of, wrt),
            p.grad(gradient.0)
        );
        let _ = writeln!(
            out,
            "  {}",
            p.dim(&format!("reverse mode gets that sum by visiting each of the {nodes} nodes once; enumerating paths grows exponentially with depth"))
        );
    }
}

/// Appends path number `number` of `:paths` to `out`: its nodes from the
/// output down (the middle of a long path elided), then the product of its
/// local derivatives — or the node that passes nothing down it.
fn path_line(out: &mut String, number: usize, path: &PathRow, p: &Painter) {
    let mut nodes_text = Vec::new();
    if let Some(first) = path.edges.first() {
        nodes_text.push(p.node(&first.node));
    }
    // Two uses of one input (`x*x`) give paths that read alike: say which
    // use each one goes through, as `:trace` does.
    nodes_text.extend(path.edges.iter().map(|e| {
        if e.use_count > 1 {
            format!(
                "{} ({} of {} uses)",
                p.node(&e.input),
                paint::ordinal(e.use_number),
                e.use_count
            )
        } else {
            p.node(&e.input)
        }
    }));
    // Negative factors in brackets when there is a product to read.
    let factor = |v: f64| match path.edges.len() {
        1 => p.number(v),
        _ => p.factor(v),
    };
    let mut locals: Vec<String> = path.edges.iter().map(|e| factor(e.local.0)).collect();
    if nodes_text.len() > 12 {
        let hidden = nodes_text.len() - 8;
        nodes_text.splice(4..nodes_text.len() - 4, [format!("… {hidden} nodes …")]);
    }
    if locals.len() > 12 {
        let hidden = locals.len() - 8;
        locals.splice(4..locals.len() - 4, [format!("… {hidden} more …")]);
    }
    let product = if let Some(edge) = path.edges.iter().find(|e| e.passes_nothing) {
        format!(
            "{} passes nothing to {}: the path contributes {}",
            p.node(&edge.node),
            p.node(&edge.input),
            p.grad(path.product.0)
        )
    } else if locals.is_empty() {
        "1 (the output itself)".to_string()
    } else {
        format!("{} = {}", locals.join(" × "), p.grad(path.product.0))
    };
    let _ = writeln!(
        out,
        "  {:>2}. {}   {product}",
        number,
        nodes_text.join(" → ")
    );
}

/// A `:topo` or `:forward` event of scalar nodes: whether it is `:topo`,
/// its output's label, how many nodes the graph has, its rows and what was
/// left out of them. `None` for other events.
pub(crate) fn node_order(event: &Event) -> Option<(bool, &str, usize, &Listing, Option<Omitted>)> {
    match event {
        Event::Topo {
            of,
            rows:
                TopoRows::Nodes {
                    total,
                    rows,
                    omitted,
                },
        } => Some((true, of, *total, rows, *omitted)),
        Event::Forward {
            of,
            total,
            rows,
            omitted,
        } => Some((false, of, *total, rows, *omitted)),
        _ => None,
    }
}

/// A scalar `:trace`'s output label, counts of nodes and constants, steps
/// and what was left out of them.
pub(crate) type NodeTrace<'a> = (&'a str, (usize, usize), &'a Listing, Option<Omitted>);

/// A `:topo kahn` event: its output's label, how many nodes the graph has,
/// its rows, what was left out of them, and at how many positions the order
/// differs from `:topo`'s depth-first one. `None` for other events.
pub(crate) fn kahn_order(event: &Event) -> Option<(&str, usize, &Listing, Option<Omitted>, usize)> {
    match event {
        Event::Kahn {
            of,
            total,
            rows,
            omitted,
            differences,
        } => Some((of, *total, rows, *omitted, *differences)),
        _ => None,
    }
}

/// A `:trace` event of scalar nodes, as [`NodeTrace`]. `None` for other
/// events.
pub(crate) fn node_trace(event: &Event) -> Option<NodeTrace<'_>> {
    match event {
        Event::Trace {
            of,
            steps:
                TraceSteps::Nodes {
                    total,
                    constants,
                    steps,
                    omitted,
                },
        } => Some((of, (*total, *constants), steps, *omitted)),
        _ => None,
    }
}

/// How the steps of a [`StepModel`] over `Self` are written, as `:trace`
/// writes them: a number's nodes ([`NodeId`]) or a tensor output's ops
/// (`TensorId`, in `tensor_steps.rs`). What [`model_texts`] calls.
pub trait StepText: StepNode {
    /// Writes the header of `model`'s walk, and for a walk with no step why
    /// it has none.
    fn header(model: &StepModel<Self>, out: &mut String, style: &Style);
    /// Writes `step`, a step of `model`.
    fn step(model: &StepModel<Self>, step: &Self::Step, out: &mut String, style: &Style);
}

impl StepText for NodeId {
    fn header(model: &StepModel, out: &mut String, style: &Style) {
        number_walk_header(out, &model.of, (model.len(), model.constants), style);
    }

    fn step(model: &StepModel, step: &TraceStep, out: &mut String, style: &Style) {
        listings::trace_step(out, &model.of, step, None, &Painter(style));
    }
}

/// The header and the step lines of a [`StepModel`] of either kind as
/// `:trace` prints them (the header and each step's lines without the last
/// newline; step K at index K − 1), in `style`: what the page shows under
/// its picture.
pub fn model_texts<N: StepText>(model: &StepModel<N>, style: &Style) -> (String, Vec<String>) {
    let header = model_text(model, 0, style).unwrap_or_default();
    let steps = (1..=model.len())
        .filter_map(|k| model_text(model, k, style))
        .collect();
    (header, steps)
}

/// Step `k` (from 1) of a [`StepModel`] of either kind as `:trace` prints
/// it, or for `k` 0 the walk's header, in `style`, without the last
/// newline; `None` past the last step.
pub fn model_text<N: StepText>(model: &StepModel<N>, k: usize, style: &Style) -> Option<String> {
    let mut text = String::new();
    match k {
        0 => N::header(model, &mut text, style),
        k => N::step(model, model.steps.get(k - 1)?, &mut text, style),
    }
    Some(page_text(text, style))
}

/// The header of a number output's walk (`of`, with `counts` steps and
/// constants), as `:trace` writes it.
fn number_walk_header(out: &mut String, of: &str, counts: (usize, usize), style: &Style) {
    listings::trace(out, of, counts, [], None, &Painter(style), &mut |_| true);
}

/// `text` as a page shows it: ASCII if `style` says so, without the last
/// newline.
fn page_text(text: String, style: &Style) -> String {
    let text = if style.ascii { to_ascii(&text) } else { text };
    text.trim_end().to_string()
}

/// What the terminal's `:step` shows of the output's walk, whichever kind
/// it is, as [`model_text`] writes it: the header (`k` 0), then step K
/// (`None` past the last step), each made by `pager` when asked for.
pub fn step_page(pager: &mut StepPager, k: usize, style: &Style) -> Option<String> {
    let walk = match pager.model() {
        OutputStepModel::Tensors(model) => return model_text(model, k, style),
        OutputStepModel::Numbers(walk) => walk,
    };
    let mut text = String::new();
    match k {
        0 => number_walk_header(&mut text, &walk.of, (walk.total, walk.constants), style),
        k => listings::trace_step(
            &mut text,
            &walk.of,
            pager.number_step(k)?,
            None,
            &Painter(style),
        ),
    }
    Some(page_text(text, style))
}

/// A number of paths: counted in floating point, so past 1.8·10³⁰⁸ the count
/// overflows to inf, which is shown as "more than 10³⁰⁸".
fn path_count(count: f64, style: &Style) -> String {
    if count.is_finite() {
        Painter(style).number(count)
    } else if style.ascii {
        "more than 1e308".to_string()
    } else {
        "more than 10³⁰⁸".to_string()
    }
}
