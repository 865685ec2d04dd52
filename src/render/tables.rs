//! The backward steps as tables for class notes: Markdown and LaTeX (`:trace md`,
//! `:trace tex`). Five columns, each number shown once: Node (`n = x*w + b =
//! -5.5`) | Upstream | Local derivative (`∂n/∂x = w = -3`: the formula, then
//! `= value` unless the formula is that value) | Contribution (upstream × local)
//! | Gradient (`x: 0 → -3`); one row per input that receives a gradient, one per
//! leaf with its final gradient (`∂o/∂x = …`). Constants are left out, as in
//! `:trace`. In Markdown every character a renderer reads as markup (`*`, `_`,
//! `|`, backticks, …) is escaped with a backslash, so a rendered cell shows the
//! formula exactly.
//!
//! The LaTeX table is an `xltabular` (a `tabularx` that runs over pages, its
//! header repeated) as wide as the text, with `booktabs` rules, set in
//! `\footnotesize`, so that it fits the text width of an A4 or Letter page;
//! names and formulas are in math mode (`x_1` is $x_{1}$), and a formula may
//! break after a comma or between `∂a/` and `∂b` in a narrow column.

use super::notation::{self, Form};
use super::notes;
use super::{Precision, format_number};
use crate::session::{Omitted, TableFormat, TraceCall, TraceStep};

/// The header of both tables.
const COLUMNS: [&str; 6] = [
    "Step",
    "Node",
    "Upstream",
    "Local derivative",
    "Contribution",
    "Gradient",
];

/// Part of a cell: a formula (math mode in LaTeX) or words.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Piece {
    Math(String),
    Text(String),
}

/// A cell: pieces in order.
pub(super) type Cell = Vec<Piece>;

/// The table of the backward steps `steps` (as [`Session::trace_steps`]
/// makes them, one at a time) in the given format, ending in a newline.
///
/// [`Session::trace_steps`]: crate::session::Session::trace_steps
pub fn table(
    of: &str,
    steps: impl IntoIterator<Item = TraceStep>,
    omitted: Option<Omitted>,
    format: TableFormat,
    precision: Precision,
) -> String {
    let rows = steps
        .into_iter()
        .flat_map(|step| numbered(rows(of, &step, omitted, precision), step.row.position));
    match format {
        TableFormat::Markdown => markdown(&COLUMNS, rows),
        TableFormat::Latex => latex(of, &COLUMNS, rows),
    }
}

fn math(text: String) -> Cell {
    vec![Piece::Math(text)]
}

fn text(text: &str) -> Cell {
    vec![Piece::Text(text.to_string())]
}

/// The rows of step `position` with the step column first: the number on
/// its first row, as `:trace` numbers it (`[3]`); notes stay one cell.
fn numbered(mut rows: Vec<Vec<Cell>>, position: usize) -> Vec<Vec<Cell>> {
    let mut first = true;
    for row in rows.iter_mut().filter(|row| row.len() > 1) {
        let number = match first {
            true => text(&position.to_string()),
            false => Cell::new(),
        };
        first = false;
        row.insert(0, number);
    }
    rows
}

/// The cells of the rows of one step (without the step column); a row of
/// one cell is a note spanning the table.
fn rows(
    of: &str,
    step: &TraceStep,
    omitted: Option<Omitted>,
    precision: Precision,
) -> Vec<Vec<Cell>> {
    let number = |x: f64| format_number(x, precision);
    let mut rows = Vec::new();
    let row = &step.row;
    if let Some(o) = omitted.filter(|o| row.position == o.after + o.count + 1) {
        rows.push(vec![text(&format!("… {} more steps", o.count))]);
    }
    let node = notation::node(&row.node, precision);
    match Form::of(row.op) {
        Form::Constant => return rows,
        Form::Leaf => {
            rows.push(vec![
                vec![
                    Piece::Math(format!("{node} = {}", number(row.value.0))),
                    Piece::Text(" (leaf)".to_string()),
                ],
                Cell::new(),
                Cell::new(),
                Cell::new(),
                math(format!(
                    "{} = {}",
                    total_partial(of, &node),
                    number(step.upstream.0)
                )),
            ]);
            return rows;
        }
        Form::Prefix(_) | Form::Infix(_) | Form::Call(_) => {}
    }
    let inputs: Vec<String> = row
        .inputs
        .iter()
        .map(|i| notation::node(i, precision))
        .collect();
    let computation = match &step.call {
        // A call shown as one step: the call as written.
        Some(call) => call_text(call, precision),
        None => notation::expression(row.op, &inputs),
    };
    let node_cell = math(format!("{node} = {computation} = {}", number(row.value.0)));
    let mut first = true;
    for c in step
        .contributions
        .iter()
        .filter(|c| c.input.constant.is_none())
    {
        let input = notation::node(&c.input, precision);
        // The local partial by the operands (`∂(x*y + x)/∂x`), as `:trace`
        // writes it: `∂z/∂x` would read as the whole gradient of z.
        let partial = c.partial.clone();
        let local = match (&c.formula, &c.passes_nothing) {
            // Through a call's body: a number, no formula.
            (Some(_), None) if step.call.is_some() => {
                math(format!("{partial} = {}", number(c.local.0)))
            }
            (Some(formula), None) if *formula == number(c.local.0) => {
                math(format!("{partial} = {formula}"))
            }
            (Some(formula), None) => math(format!("{partial} = {formula} = {}", number(c.local.0))),
            (_, Some(why)) => vec![
                Piece::Math(partial),
                Piece::Text(format!(
                    " passes nothing ({})",
                    notes::nothing_where(why.passing, &why.operands)
                )),
            ],
            (None, None) => vec![Piece::Math(partial), Piece::Text(" passes nothing".into())],
        };
        let contribution = match (&c.passes_nothing, &c.formula) {
            (None, Some(_)) => math(number(c.product.0)),
            _ => text("nothing"),
        };
        let (node_cell, upstream_cell) = if first {
            (node_cell.clone(), math(number(step.upstream.0)))
        } else {
            Default::default()
        };
        first = false;
        rows.push(vec![
            node_cell,
            upstream_cell,
            local,
            contribution,
            vec![
                Piece::Math(input),
                Piece::Text(": ".to_string()),
                Piece::Math(format!("{} → {}", number(c.before.0), number(c.after.0))),
            ],
        ]);
    }
    if first {
        // Every input is a constant: the node still shows its upstream gradient.
        rows.push(vec![
            node_cell,
            math(number(step.upstream.0)),
            Cell::new(),
            Cell::new(),
            Cell::new(),
        ]);
    }
    rows
}

/// A call of a user function as written: `neuron(x1, x2, w11, w12, b1)`.
pub(crate) fn call_text(call: &TraceCall, precision: Precision) -> String {
    let args: Vec<String> = call
        .args
        .iter()
        .map(|a| notation::node(a, precision))
        .collect();
    format!("{}({})", call.function, args.join(", "))
}

/// The characters that mean something to a Markdown renderer inside a table
/// cell (emphasis, code, links, HTML, entities, cell ends, strikethrough,
/// math): each is written after a backslash, which CommonMark reads as that
/// character itself.
const MARKDOWN_ACTIVE: [char; 11] = ['\\', '`', '*', '_', '|', '<', '[', ']', '~', '&', '$'];

/// `text` with [`MARKDOWN_ACTIVE`] characters escaped, so that a renderer shows
/// it exactly (`a*b*c` would otherwise be a, an emphasised b, and c).
fn markdown_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if MARKDOWN_ACTIVE.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A Markdown table of `rows` under the header `columns`; a row of one
/// cell is a note spanning the table.
pub(super) fn markdown(columns: &[&str], rows: impl Iterator<Item = Vec<Cell>>) -> String {
    let cell = |pieces: &Cell| {
        pieces
            .iter()
            .map(|p| match p {
                Piece::Math(s) | Piece::Text(s) => markdown_escape(s),
            })
            .collect::<String>()
    };
    let mut out = format!("| {} |\n", columns.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(columns.len())));
    for row in rows {
        if let [note] = row.as_slice() {
            out.push_str(&format!(
                "| {} |{}\n",
                cell(note),
                " |".repeat(columns.len() - 1)
            ));
        } else {
            let cells: Vec<String> = row.iter().map(cell).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
    }
    out
}

/// The column types: the wide columns wrap (ragged right), numbers align right.
const LATEX_COLUMNS: &str = "@{}r >{\\raggedright\\arraybackslash}X r >{\\raggedright\\arraybackslash}X r >{\\raggedright\\arraybackslash}X@{}";

/// A LaTeX table (an `xltabular` of six columns) of `rows` under the header
/// `columns`, for the backward pass of `of`; a row of one cell is a note
/// spanning the table.
pub(super) fn latex(
    of: &str,
    columns: &[&str; 6],
    rows: impl Iterator<Item = Vec<Cell>>,
) -> String {
    let cell = |pieces: &Cell| {
        pieces
            .iter()
            .map(|p| match p {
                Piece::Math(s) => format!("${}$", tex_math(s)),
                Piece::Text(s) => tex(s),
            })
            .collect::<String>()
    };
    let mut out = format!(
        "% backward pass of {}, written by gradcalc\n\
         % needs \\usepackage{{booktabs,xltabular}} in the preamble\n\
         % a table over several pages needs a second LaTeX run (column widths)\n\
         {{\\footnotesize\\setlength{{\\tabcolsep}}{{4pt}}\n\
         \\begin{{xltabular}}{{\\linewidth}}{{{LATEX_COLUMNS}}}\n\\toprule\n",
        tex(of)
    );
    // The header repeats on every page the table runs onto.
    out.push_str(&format!(
        "{} \\\\\n\\midrule\n\\endhead\n",
        columns.join(" & ")
    ));
    for row in rows {
        if let [note] = row.as_slice() {
            out.push_str(&format!(
                "\\multicolumn{{{}}}{{@{{}}l}}{{{}}} \\\\\n",
                columns.len(),
                cell(note)
            ));
        } else {
            let cells: Vec<String> = row.iter().map(cell).collect();
            out.push_str(&format!("{} \\\\\n", cells.join(" & ")));
        }
    }
    out.push_str("\\bottomrule\n\\end{xltabular}}\n");
    out
}

/// Words as LaTeX text: special characters escaped, symbols in math mode.
fn tex(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '…' => out.push_str("\\ldots{}"),
            c => match math_symbol(c) {
                Some(symbol) => out.push_str(&format!("${symbol}$")),
                None => out.push(c),
            },
        }
    }
    out
}

/// A symbol gradcalc prints, as a math-mode command.
fn math_symbol(c: char) -> Option<&'static str> {
    Some(match c {
        '∂' => "\\partial ",
        '×' => "\\times ",
        '·' => "\\cdot ",
        '*' => "\\cdot ",
        '−' => "-",
        '→' => "\\to ",
        '≤' => "\\leq ",
        '≥' => "\\geq ",
        '√' => "\\surd ",
        '…' => "\\ldots ",
        '⊙' => "\\odot ",
        'ᵀ' => "^{\\top}",
        '²' => "^{2}",
        'ᵢ' => "_{i}",
        'π' => "\\pi ",
        'τ' => "\\tau ",
        'θ' => "\\theta ",
        'α' => "\\alpha ",
        'β' => "\\beta ",
        'γ' => "\\gamma ",
        'δ' => "\\delta ",
        'η' => "\\eta ",
        'λ' => "\\lambda ",
        'μ' => "\\mu ",
        'σ' => "\\sigma ",
        'ω' => "\\omega ",
        _ => return None,
    })
}

/// Functions LaTeX has an operator for (`\tanh`); other calls are `\mathrm{relu}`.
const LATEX_FUNCTIONS: [&str; 12] = [
    "sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "log", "ln", "max", "min", "arctan",
];

/// A formula as printed by gradcalc (`∂n/∂x_1 = 1/cosh(n)^2 = 6.68e-05`) as
/// LaTeX math: names in math italic with `_` as a subscript (`x_{1}`), labels
/// `\_3`, calls upright, `*` as `\cdot`, powers raised, exponent forms as
/// `\times 10^{…}`. Reads the text once, left to right.
fn tex_math(formula: &str) -> String {
    let chars: Vec<char> = formula.chars().collect();
    let mut out = String::new();
    // Depths of brackets after which a `^{` group closes.
    let mut groups: Vec<usize> = Vec::new();
    let mut depth = 0;
    let mut pending_power = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let mut atom = true;
        if c.is_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            out.push_str(&tex_name(&word, chars.get(i) == Some(&'(')));
        } else if c.is_ascii_digit() || c == '.' {
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let mantissa: String = chars[start..i].iter().collect();
            out.push_str(&mantissa);
            if chars.get(i) == Some(&'e') {
                let mut j = i + 1;
                if matches!(chars.get(j), Some('-' | '+')) {
                    j += 1;
                }
                let digits = j;
                while j < chars.len() && chars[j].is_ascii_digit() {
                    j += 1;
                }
                if j > digits {
                    let exponent: String = chars[i + 1..j].iter().collect();
                    let exponent = exponent.trim_start_matches('+');
                    out.push_str(&format!("\\times 10^{{{exponent}}}"));
                    i = j;
                }
            }
        } else {
            i += 1;
            atom = false;
            match c {
                ' ' => {}
                '^' => {
                    out.push_str("^{");
                    pending_power = true;
                    continue;
                }
                '(' => {
                    out.push('(');
                    if pending_power {
                        groups.push(depth);
                        pending_power = false;
                    }
                    depth += 1;
                    continue;
                }
                ')' => {
                    out.push(')');
                    depth = depth.saturating_sub(1);
                    if groups.last() == Some(&depth) {
                        groups.pop();
                        out.push('}');
                    } else if pending_power {
                        out.push('}');
                        pending_power = false;
                    }
                    continue;
                }
                '-' if pending_power => {
                    out.push('-');
                    continue;
                }
                '&' | '%' | '$' | '#' | '{' | '}' => {
                    out.push('\\');
                    out.push(c);
                }
                '\\' => out.push_str("\\backslash "),
                // A narrow column may break a formula after a comma.
                ',' => out.push_str(",\\allowbreak "),
                '/' if chars.get(i) == Some(&'∂') => out.push_str("/\\allowbreak "),
                c => match math_symbol(c) {
                    Some(symbol) => out.push_str(symbol),
                    None => out.push(c),
                },
            }
        }
        if atom && pending_power {
            out.push('}');
            pending_power = false;
        }
    }
    if pending_power {
        out.push('}');
    }
    for _ in groups {
        out.push('}');
    }
    out
}

/// The subscript digits ₀ … ₉, in order.
const SUBSCRIPT_DIGITS: [char; 10] = ['₀', '₁', '₂', '₃', '₄', '₅', '₆', '₇', '₈', '₉'];

/// A name in math mode: a call upright (`\tanh`, `\mathrm{relu}`), a label
/// `_3` as `\_3`, a name with `_` subscripted after its first `_` (`w_{21}`),
/// a name of several letters in `\mathit`.
fn tex_name(word: &str, called: bool) -> String {
    if called {
        return match LATEX_FUNCTIONS.contains(&word) {
            true => format!("\\{word}"),
            false => format!("\\mathrm{{{}}}", word.replace('_', "\\_")),
        };
    }
    if crate::session::label_id(word).is_some() {
        return format!("\\_{}", &word[1..]);
    }
    // Subscript digits (`x₁`, `w₂₁`) are a subscript: `x_{1}`, as `x_1` is.
    if let Some(start) = word.find(|c| SUBSCRIPT_DIGITS.contains(&c)) {
        let (base, digits) = word.split_at(start);
        if !base.is_empty() && digits.chars().all(|c| SUBSCRIPT_DIGITS.contains(&c)) {
            let digits: String = digits
                .chars()
                .map(|c| {
                    let at = SUBSCRIPT_DIGITS.iter().position(|&d| d == c).unwrap_or(0);
                    char::from(b'0' + at as u8)
                })
                .collect();
            return tex_name(&format!("{base}_{digits}"), false);
        }
    }
    let letters = |part: &str| {
        let mut text = String::new();
        for c in part.chars() {
            match math_symbol(c) {
                Some(symbol) => text.push_str(symbol),
                None if c == '_' => text.push_str("\\_"),
                None => text.push(c),
            }
        }
        match part.chars().count() {
            1 => text,
            _ if part
                .chars()
                .all(|c| math_symbol(c).is_some() || c.is_ascii_digit()) =>
            {
                text
            }
            _ => format!("\\mathit{{{text}}}"),
        }
    };
    match word.split_once('_') {
        Some((base, sub)) if !base.is_empty() && !sub.is_empty() => {
            format!("{}_{{{}}}", letters(base), letters(sub))
        }
        _ => letters(word),
    }
}

/// `∂of/∂wrt` for a whole gradient, the output in brackets when it is an
/// expression (`∂(x^2 + sin(x))/∂x`), as the text output writes it.
fn total_partial(of: &str, wrt: &str) -> String {
    if of.chars().all(|c| c.is_alphanumeric() || c == '_') {
        format!("∂{of}/∂{wrt}")
    } else {
        format!("∂({of})/∂{wrt}")
    }
}

#[cfg(test)]
mod tests {
    use super::{tex, tex_math};

    #[test]
    fn latex_escapes_and_symbols() {
        assert_eq!(tex("#3 & x_1"), "\\#3 \\& x\\_1");
        assert_eq!(tex("∂f/∂q"), "$\\partial $f/$\\partial $q");
    }

    #[test]
    fn formulas_in_math_mode() {
        assert_eq!(tex_math("x_1"), "x_{1}");
        assert_eq!(tex_math("w_21*x"), "w_{21}\\cdot x");
        assert_eq!(
            tex_math("∂_3/∂b"),
            "\\partial \\_3/\\allowbreak \\partial b"
        );
        assert_eq!(
            tex_math("1/cosh(n)^2 = 6.68e-05"),
            "1/\\cosh(n)^{2}=6.68\\times 10^{-05}"
        );
        assert_eq!(tex_math("x^(y - 1)"), "x^{(y-1)}");
        assert_eq!(tex_math("relu(prod)"), "\\mathrm{relu}(\\mathit{prod})");
        assert_eq!(tex_math("x₁*w₂₁"), tex_math("x_1*w_21"));
        assert_eq!(tex_math("max(a, b)"), "\\max(a,\\allowbreak b)");
        assert_eq!(tex_math("θ^-2"), "\\theta ^{-2}");
    }
}
