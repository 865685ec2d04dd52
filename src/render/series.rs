//! A value over the steps of a `:repeat`: a braille chart in the terminal
//! (textplots) or one SVG panel (the same drawing as `:plot`'s panels).

use std::fmt::Write;

use textplots::{Chart, Plot, Shape};

use super::plot;
use crate::session::PlotSample;

/// Width and height of the terminal chart in braille dots.
const DOTS_WIDE: u32 = 100;
const DOTS_HIGH: u32 = 30;

/// `values[i]` (the value after step i + 1) as a braille chart titled
/// `title`; non-finite values are left out. Empty for fewer than two steps.
pub fn terminal(title: &str, values: &[f64]) -> String {
    let points: Vec<(f32, f32)> = values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .map(|(i, &v)| ((i + 1) as f32, v as f32))
        .collect();
    if values.len() < 2 || points.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let _ = writeln!(out, "{title} over {} steps", values.len());
    let (low, high) = points
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &(_, y)| {
            (lo.min(y), hi.max(y))
        });
    let xmax = values.len() as f32;
    let mut chart = if high - low <= 1e-6 * low.abs().max(1.0) {
        Chart::new_with_y_range(DOTS_WIDE, DOTS_HIGH, 1.0, xmax, low - 1.0, high + 1.0)
    } else {
        Chart::new(DOTS_WIDE, DOTS_HIGH, 1.0, xmax)
    };
    let shape = Shape::Lines(&points);
    let chart = chart.lineplot(&shape);
    chart.figures();
    let _ = writeln!(out, "{chart}");
    out
}

/// The same as SVG: one panel, steps along x.
pub fn svg(title: &str, values: &[f64]) -> String {
    let samples: Vec<PlotSample> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| PlotSample {
            x: (i + 1) as f64,
            value: v,
            grad: f64::NAN,
        })
        .collect();
    let mut out = String::from(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"720\" height=\"240\" viewBox=\"0 0 720 240\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
    );
    let last = values.len() as f64;
    let curve: plot::Curve = |s| s.value;
    plot::panel_svg(
        &mut out, 0.0, title, "#1a7f37", "step", last, &samples, curve,
    );
    out.push_str("</svg>\n");
    out
}
