//! The backward steps as tables for class notes: Markdown and LaTeX (`:trace md`,
//! `:trace tex`). Columns: Node | Computation | Value | Local derivative |
//! Upstream | Contribution | Gradient; one row per input that receives a
//! gradient, one per leaf with its final gradient. Constants are left out, as in
//! `:trace`.

use super::notation::{self, Form};
use super::{Precision, format_number};
use crate::session::{Omitted, TableFormat, TraceStep};

/// The header of both tables.
const COLUMNS: [&str; 7] = [
    "Node",
    "Computation",
    "Value",
    "Local derivative",
    "Upstream",
    "Contribution",
    "Gradient",
];

/// The table in the given format, ending in a newline.
pub fn table(
    of: &str,
    steps: &[TraceStep],
    omitted: Option<Omitted>,
    format: TableFormat,
    precision: Precision,
) -> String {
    let rows = rows(of, steps, omitted, precision);
    match format {
        TableFormat::Markdown => markdown(&rows),
        TableFormat::Latex => latex(of, &rows),
    }
}

/// The cells of every row; a row of one cell is a note spanning the table.
fn rows(
    of: &str,
    steps: &[TraceStep],
    omitted: Option<Omitted>,
    precision: Precision,
) -> Vec<Vec<String>> {
    let number = |x: f64| format_number(x, precision);
    let mut rows = Vec::new();
    for step in steps {
        let row = &step.row;
        if let Some(o) = omitted.filter(|o| row.position == o.after + o.count + 1) {
            rows.push(vec![format!("… {} more steps", o.count)]);
        }
        let node = notation::node(&row.node, precision);
        match Form::of(row.op) {
            Form::Constant => continue,
            Form::Leaf => {
                rows.push(vec![
                    node.clone(),
                    "leaf".to_string(),
                    number(row.value),
                    String::new(),
                    number(step.upstream),
                    String::new(),
                    format!("∂{of}/∂{node} = {}", number(step.upstream)),
                ]);
                continue;
            }
            Form::Prefix(_) | Form::Infix(_) | Form::Call(_) => {}
        }
        let inputs: Vec<String> = row
            .inputs
            .iter()
            .map(|i| notation::node(i, precision))
            .collect();
        let computation = notation::expression(row.op, &inputs);
        let mut first = true;
        for c in step
            .contributions
            .iter()
            .filter(|c| c.input.constant.is_none())
        {
            let input = notation::node(&c.input, precision);
            let local = match (&c.formula, c.passes_nothing) {
                (_, Some(why)) => format!("{} passes nothing ({why})", c.partial),
                (Some(formula), None) => format!("{} = {formula} → {}", c.partial, number(c.local)),
                (None, None) => format!("{} passes nothing", c.partial),
            };
            let (node_cell, computation_cell, value_cell, upstream_cell) = if first {
                (
                    node.clone(),
                    computation.clone(),
                    number(row.value),
                    number(step.upstream),
                )
            } else {
                Default::default()
            };
            first = false;
            rows.push(vec![
                node_cell,
                computation_cell,
                value_cell,
                local,
                upstream_cell,
                if c.passes_nothing.is_some() {
                    format!("nothing → {input}")
                } else if c.formula.is_some() {
                    format!(
                        "{} × {} = {} → {input}",
                        number(step.upstream),
                        number(c.local),
                        number(c.product)
                    )
                } else {
                    String::new()
                },
                format!("{input}: {} → {}", number(c.before), number(c.after)),
            ]);
        }
        if first {
            // Every input is a constant: the node still shows its upstream gradient.
            rows.push(vec![
                node,
                computation,
                number(row.value),
                String::new(),
                number(step.upstream),
                String::new(),
                String::new(),
            ]);
        }
    }
    rows
}

fn markdown(rows: &[Vec<String>]) -> String {
    let cell = |text: &str| text.replace('|', "\\|");
    let mut out = format!("| {} |\n", COLUMNS.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(COLUMNS.len())));
    for row in rows {
        if let [note] = row.as_slice() {
            out.push_str(&format!(
                "| {} |{}\n",
                cell(note),
                " |".repeat(COLUMNS.len() - 1)
            ));
        } else {
            let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
    }
    out
}

fn latex(of: &str, rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "% backward pass of {}, written by gradcalc\n\\begin{{tabular}}{{lllllll}}\n\\hline\n",
        tex(of)
    );
    let header: Vec<String> = COLUMNS.iter().map(|c| tex(c)).collect();
    out.push_str(&format!("{} \\\\\n\\hline\n", header.join(" & ")));
    for row in rows {
        if let [note] = row.as_slice() {
            out.push_str(&format!(
                "\\multicolumn{{{}}}{{l}}{{{}}} \\\\\n",
                COLUMNS.len(),
                tex(note)
            ));
        } else {
            let cells: Vec<String> = row.iter().map(|c| tex(c)).collect();
            out.push_str(&format!("{} \\\\\n", cells.join(" & ")));
        }
    }
    out.push_str("\\hline\n\\end{tabular}\n");
    out
}

/// Text as LaTeX: special characters escaped, symbols in math mode.
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
            '∂' => out.push_str("$\\partial$"),
            '×' => out.push_str("$\\times$"),
            '·' => out.push_str("$\\cdot$"),
            '−' => out.push_str("$-$"),
            '→' => out.push_str("$\\to$"),
            '²' => out.push_str("$^2$"),
            '…' => out.push_str("\\ldots{}"),
            '≥' => out.push_str("$\\geq$"),
            '√' => out.push_str("$\\surd$"),
            'ᵢ' => out.push_str("$_i$"),
            'π' => out.push_str("$\\pi$"),
            'θ' => out.push_str("$\\theta$"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::tex;

    #[test]
    fn latex_escapes_and_symbols() {
        assert_eq!(tex("#3 & x_1"), "\\#3 \\& x\\_1");
        assert_eq!(tex("∂f/∂q"), "$\\partial$f/$\\partial$q");
    }
}
