//! A value over the steps of a `:repeat`: a braille chart in the terminal
//! (textplots) or one SVG panel (the same drawing as `:plot`'s panels).

use crate::session::Number;
use std::fmt::Write;

use super::plot;
use crate::session::PlotSample;

/// `values[i]` (the value after step i; `values[0]` before the first step)
/// as a braille chart titled `title`, drawn and labelled as `:plot` draws its
/// charts (y at round ticks on the rows they fall on); non-finite values are
/// gaps. Empty for fewer than two values or no finite value.
pub fn terminal(title: &str, values: &[f64]) -> String {
    if values.len() < 2 || !values.iter().any(|v| v.is_finite()) {
        return String::new();
    }
    let samples = samples_of(values);
    let mut out = String::new();
    let steps = values.len() - 1;
    let s = if steps == 1 { "" } else { "s" };
    let _ = writeln!(out, "{title} from step 0 to step {steps} ({steps} step{s})");
    let number = |x: f64| super::format_number(x, super::Precision::Digits(10));
    plot::chart(&mut out, &samples, |s| s.value.0, &number);
    out.push('\n');
    out
}

/// The steps as plot samples: x the step (0 to N), the value, no gradient.
fn samples_of(values: &[f64]) -> Vec<PlotSample> {
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| PlotSample {
            x: Number(i as f64),
            value: Number(v),
            grad: Number(f64::NAN),
        })
        .collect()
}

/// The same as SVG: one panel, steps along x.
pub fn svg(title: &str, values: &[f64]) -> String {
    let samples = samples_of(values);
    let mut out = String::from(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"240\" viewBox=\"0 0 720 240\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
    );
    let last = values.len().saturating_sub(1) as f64;
    let curve: plot::Curve = |s| s.value.0;
    plot::panel_svg(
        &mut out, 0.0, title, "#1a7f37", "step", last, &samples, curve,
    );
    out.push_str("</svg>\n");
    out
}
