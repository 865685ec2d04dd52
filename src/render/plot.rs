//! `:plot`: the output as a function of one variable and its derivative beside
//! it, in the terminal (braille dots, by `textplots`) or as SVG. Points where a
//! value is inf or nan break the curve; they are never bridged or smoothed.

use std::fmt::Write;

use textplots::{Chart, LabelBuilder, LabelFormat, Plot, Shape};

use super::svg::text_width;
use super::{Precision, format_number};
use crate::session::PlotSample;

/// Width and height of a terminal chart in braille dots (2 × 4 per character).
const DOTS_WIDE: u32 = 120;
const DOTS_HIGH: u32 = 40;

/// Which number of a sample a curve draws: the value or the gradient.
pub(super) type Curve = fn(&PlotSample) -> f64;

/// The finite stretches of a curve, as `(x, y)` runs between non-finite points.
fn segments(samples: &[PlotSample], y: impl Fn(&PlotSample) -> f64) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for sample in samples {
        let value = y(sample);
        if value.is_finite() {
            if let Some(run) = out.last_mut() {
                run.push((sample.x.0, value));
            }
        } else if out.last().is_some_and(|run| !run.is_empty()) {
            out.push(Vec::new());
        }
    }
    out.retain(|run| !run.is_empty());
    out
}

/// Round y ticks for values from `low` to `high` (finite, `low < high`): a step
/// of 1, 2 or 5 times a power of ten giving at most about five intervals, and
/// the range widened to the multiples of the step around it. Returns the ticks,
/// lowest first (the first and last are the ends of the range).
pub(super) fn round_ticks(low: f64, high: f64) -> Vec<f64> {
    let raw = (high - low) / 4.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|&step| step >= raw)
        .unwrap_or(10.0 * magnitude);
    let first = (low / step).floor();
    let last = (high / step).ceil();
    if !(step > 0.0 && first.is_finite() && last.is_finite()) || last - first > 20.0 {
        // Beyond f64's reach (a range near 1e308): the ends alone.
        return vec![low, high];
    }
    // k * step rather than repeated addition: no drift (0.30000000000000004).
    (first as i64..=last as i64)
        .map(|k| k as f64 * step)
        .collect()
}

/// A tick's text: as many decimals as its step needs (`0.5`, `20`, `-1.5`), or
/// four significant digits far from 1.
fn tick_text(tick: f64, ticks: &[f64]) -> String {
    let step = match ticks {
        [a, b, ..] => (b - a).abs(),
        _ => 1.0,
    };
    let decimals = (-step.log10().floor()).max(0.0);
    let text = if decimals > 6.0 || tick.abs() >= 1e7 {
        format_number(tick, Precision::Digits(4))
    } else {
        format!("{:.*}", decimals as usize, tick)
    };
    if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        "0".to_string()
    } else {
        text
    }
}

/// [`tick_text`], or, where that is wider than the SVG's room left of the
/// frame (`-500000000000000`), four significant digits in scientific notation
/// (`-5e14`, `1.234e15`).
fn short_tick_text(tick: f64, ticks: &[f64]) -> String {
    let text = tick_text(tick, ticks);
    if text_width(&text, false) * FONT / 18.0 <= MARGINS.left - 6.0 - EDGE {
        return text;
    }
    let scientific = format!("{tick:.3e}");
    match scientific.split_once('e') {
        Some((mantissa, exponent)) if mantissa.contains('.') => {
            let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
            format!("{mantissa}e{exponent}")
        }
        _ => scientific,
    }
}

/// How many samples have a non-finite value.
fn not_finite(samples: &[PlotSample], y: impl Fn(&PlotSample) -> f64) -> usize {
    samples.iter().filter(|s| !y(s).is_finite()).count()
}

/// Two braille charts, the output and its derivative, with a title each.
pub fn terminal(
    of: &str,
    wrt: &str,
    at: f64,
    samples: &[PlotSample],
    precision: Precision,
) -> String {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return String::new();
    };
    let number = |x: f64| format_number(x, precision);
    let mut out = String::new();
    let curves: [(String, Curve); 2] = [
        (of.to_string(), |s| s.value.0),
        (format!("∂{of}/∂{wrt}"), |s| s.grad.0),
    ];
    for (title, y) in curves {
        let _ = write!(
            out,
            "{title} for {wrt} from {} to {} ({wrt} = {} now)",
            number(first.x.0),
            number(last.x.0),
            number(at)
        );
        let missing = not_finite(samples, y);
        if missing > 0 {
            let _ = write!(
                out,
                "; inf or nan at {missing} of {} points: gaps",
                samples.len()
            );
        }
        out.push('\n');
        chart(&mut out, samples, y, &number);
        out.push('\n');
    }
    out
}

/// One braille chart of `y` over `samples` (x ascending), appended to `out`:
/// the curve (gaps where y is not finite), y labelled at round ticks on the
/// rows they fall on, and, where textplots' f32 cannot hold the range, the
/// x ends written with `number`. Shared by `:plot` and `:repeat`.
pub(super) fn chart(
    out: &mut String,
    samples: &[PlotSample],
    y: Curve,
    number: &dyn Fn(f64) -> String,
) {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return;
    };
    let finite = segments(samples, y);
    let range = |round: fn(f64) -> f64| {
        finite
            .iter()
            .flatten()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(_, y)| {
                (lo.min(round(y)), hi.max(round(y)))
            })
    };
    let (low, high) = range(|y| y);
    // textplots draws in f32: beyond its range (|x| or |y| above 1e30,
    // 0 to 1e308 would be 0 to inf) the points are drawn in coordinates
    // scaled to 0..1, and the x-axis labels are written here.
    let out_of_f32 = |v: f64| v.abs() > 1e30 || (v != 0.0 && v.abs() < 1e-30);
    let scaled = [first.x.0, last.x.0, low, high].into_iter().any(out_of_f32);
    // In range, the ends as textplots sees them (rounded to f32).
    let (low, high) = if scaled {
        (low, high)
    } else {
        range(|y| f64::from(y as f32))
    };
    let ticks = if finite.is_empty() {
        vec![0.0, 1.0]
    } else {
        let (low, high) = if high - low <= 1e-6 * low.abs().max(1.0) {
            // A flat curve: give it a range to sit in, or nothing is drawn.
            (low - 1.0, high + 1.0)
        } else {
            (low, high)
        };
        round_ticks(low, high)
    };
    let (y0, y1) = (ticks[0], ticks[ticks.len() - 1]);
    let to_f32 = |x: f64, y: f64| {
        if scaled {
            // Differences of halves: no overflow for ends up to f64::MAX.
            let sx = (x / 2.0 - first.x.0 / 2.0) / (last.x.0 / 2.0 - first.x.0 / 2.0);
            let sy = (y / 2.0 - y0 / 2.0) / (y1 / 2.0 - y0 / 2.0);
            (sx as f32, sy as f32)
        } else {
            (x as f32, y as f32)
        }
    };
    let runs: Vec<Vec<(f32, f32)>> = finite
        .into_iter()
        .map(|run| run.into_iter().map(|(x, y)| to_f32(x, y)).collect())
        .collect();
    if runs.is_empty() {
        out.push_str("  (no finite point to draw)\n");
        return;
    }
    let shapes: Vec<Shape> = runs
        .iter()
        .map(|run| {
            if run.len() == 1 {
                Shape::Points(run)
            } else {
                Shape::Lines(run)
            }
        })
        .collect();
    let (xmin, xmax) = if scaled {
        (0.0, 1.0)
    } else {
        (first.x.0 as f32, last.x.0 as f32)
    };
    let (y0_drawn, y1_drawn) = if scaled {
        (0.0, 1.0)
    } else {
        (y0 as f32, y1 as f32)
    };
    let mut chart = Chart::new_with_y_range(DOTS_WIDE, DOTS_HIGH, xmin, xmax, y0_drawn, y1_drawn);
    let mut chart = chart.y_label_format(LabelFormat::None);
    if scaled {
        chart = chart.x_label_format(LabelFormat::None);
    }
    for shape in &shapes {
        chart = chart.lineplot(shape);
    }
    chart.figures();
    let drawn = chart.to_string();
    let labels = row_labels(&ticks);
    let mut width = 0;
    for (i, line) in drawn.lines().enumerate() {
        let line = line.trim_end();
        width = width.max(line.chars().count());
        match labels.get(i).and_then(Option::as_ref) {
            Some(label) => {
                let _ = writeln!(out, "{line} {label}");
            }
            None if scaled && line.is_empty() => {}
            None => {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    if scaled {
        let (left, right) = (number(first.x.0), number(last.x.0));
        let pad = width.saturating_sub(left.chars().count()).max(1);
        let _ = writeln!(out, "{left}{right:>pad$}");
    }
}

/// The label of each text row of a braille chart whose y axis runs over
/// `ticks` (ascending): each round tick on the row it falls on, the highest
/// first where two share a row. textplots labels only the ends, to one
/// decimal; its canvas has dots 0 to `DOTS_HIGH` from the top (the last tick
/// at 0, the first at `DOTS_HIGH`), and row r shows dots 4r to 4r + 3.
fn row_labels(ticks: &[f64]) -> Vec<Option<String>> {
    let (y0, y1) = (ticks[0], ticks[ticks.len() - 1]);
    let rows = (DOTS_HIGH / 4 + 1) as usize;
    let mut labels: Vec<Option<String>> = vec![None; rows];
    for &tick in ticks.iter().rev() {
        let dot = (y1 - tick) / (y1 - y0) * f64::from(DOTS_HIGH);
        let row = ((dot / 4.0).floor() as usize).min(rows - 1);
        labels[row].get_or_insert_with(|| tick_text(tick, ticks));
    }
    labels
}

/// Width of the SVG and height of a panel, in pixels.
const WIDTH: f64 = 720.0;
const PANEL_HEIGHT: f64 = 240.0;
/// The room around a panel's plot area, in pixels: the axis labels left,
/// the title above, the tick labels below.
struct Margins {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}
const MARGINS: Margins = Margins {
    left: 80.0,
    right: 20.0,
    top: 36.0,
    bottom: 30.0,
};
/// Text size of a chart in pixels (a panel's title is 14).
const FONT: f64 = 12.0;
/// The least room between a text and the canvas's side.
const EDGE: f64 = 2.0;

/// The plot as an SVG picture: the output above, its derivative below, the
/// current value of the variable marked, inf and nan regions shaded grey.
pub fn svg(of: &str, wrt: &str, at: f64, samples: &[PlotSample]) -> String {
    let height = 2.0 * PANEL_HEIGHT;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    let curves: [(String, &str, Curve); 2] = [
        (of.to_string(), "#1a7f37", |s| s.value.0),
        (format!("∂{of}/∂{wrt}"), "#cf222e", |s| s.grad.0),
    ];
    for (panel, (title, colour, y)) in curves.into_iter().enumerate() {
        let top = panel as f64 * PANEL_HEIGHT;
        panel_svg(&mut out, top, &title, colour, wrt, at, samples, y);
    }
    out.push_str("</svg>\n");
    out
}

/// Draws one panel of a plot into `out`, `top` pixels down: its `title` in
/// `colour`, the curve `y` of `samples` against the variable `wrt` over a grid
/// of round ticks, the variable's current value `at` marked, inf and nan
/// shaded grey. Nothing without samples.
#[allow(clippy::too_many_arguments)]
pub(super) fn panel_svg(
    out: &mut String,
    top: f64,
    title: &str,
    colour: &str,
    wrt: &str,
    at: f64,
    samples: &[PlotSample],
    y: Curve,
) {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return;
    };
    let ticks = value_ticks(samples, y);
    let frame = Frame {
        x: (first.x.0, last.x.0),
        y: (ticks[0], ticks[ticks.len() - 1]),
        left: MARGINS.left,
        right: WIDTH - MARGINS.right,
        high: top + MARGINS.top,
        low: top + PANEL_HEIGHT - MARGINS.bottom,
    };
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" font-size=\"14\" fill=\"{colour}\">{}</text>",
        frame.left,
        top + 18.0,
        escape(title)
    );
    shade_missing(out, &frame, samples, y);
    grid(out, &frame, &ticks);
    marker(out, &frame, wrt, at);
    curve(out, &frame, samples, y, colour);
    axis_labels(out, &frame, &ticks, wrt);
}

/// Where a panel is drawn: the ranges of the variable (`x`) and of the curve
/// (`y`) it shows, and the sides of its frame in pixels (`high` above `low`).
struct Frame {
    x: (f64, f64),
    y: (f64, f64),
    left: f64,
    right: f64,
    high: f64,
    low: f64,
}

impl Frame {
    /// The pixel across of the variable's value `x`.
    fn px(&self, x: f64) -> f64 {
        let (x0, x1) = self.x;
        self.left + (x - x0) / (x1 - x0) * (self.right - self.left)
    }

    /// The pixel down of the curve's value `v`.
    fn py(&self, v: f64) -> f64 {
        let (y0, y1) = self.y;
        self.low - (v - y0) / (y1 - y0) * (self.low - self.high)
    }
}

/// The round ticks of the curve `y` over `samples`: they span its finite
/// values (-1 to 1 when there are none, one either side of a flat curve).
fn value_ticks(samples: &[PlotSample], y: Curve) -> Vec<f64> {
    let finite: Vec<f64> = samples.iter().map(y).filter(|v| v.is_finite()).collect();
    let (mut y0, mut y1) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    if finite.is_empty() {
        (y0, y1) = (-1.0, 1.0);
    }
    if y1 - y0 < 1e-12 * y0.abs().max(1.0) {
        (y0, y1) = (y0 - 1.0, y1 + 1.0);
    }
    round_ticks(y0, y1)
}

/// Shades grey into `out` each run of `samples` where the curve `y` is inf or
/// nan, half a sample's step either side, inside the frame.
fn shade_missing(out: &mut String, frame: &Frame, samples: &[PlotSample], y: Curve) {
    let (left, right, high, low) = (frame.left, frame.right, frame.high, frame.low);
    let step = (right - left) / (samples.len().max(2) - 1) as f64;
    let mut start: Option<f64> = None;
    for (i, sample) in samples.iter().enumerate() {
        let missing = !y(sample).is_finite();
        if missing && start.is_none() {
            start = Some((frame.px(sample.x.0) - step / 2.0).max(left));
        }
        let run_ends = i + 1 == samples.len() || y(&samples[i + 1]).is_finite();
        if let (true, true, Some(x)) = (missing, run_ends, start) {
            let end = (frame.px(sample.x.0) + step / 2.0).min(right);
            let _ = writeln!(
                out,
                "<rect x=\"{x:.2}\" y=\"{high}\" width=\"{:.2}\" height=\"{}\" fill=\"#d0d0d0\"/>",
                end - x,
                low - high
            );
            start = None;
        }
    }
}

/// Draws into `out` the grid at the inner `ticks` (under the frame and the
/// curve), the frame, and a dashed line at zero when the range crosses it.
fn grid(out: &mut String, frame: &Frame, ticks: &[f64]) {
    let (left, right, high, low) = (frame.left, frame.right, frame.high, frame.low);
    let (y0, y1) = frame.y;
    for &tick in ticks {
        if tick != y0 && tick != y1 {
            let _ = writeln!(
                out,
                "<line x1=\"{left}\" y1=\"{0:.2}\" x2=\"{right}\" y2=\"{0:.2}\" stroke=\"#e4e4e4\"/>",
                frame.py(tick)
            );
        }
    }
    let _ = writeln!(
        out,
        "<rect x=\"{left}\" y=\"{high}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888\"/>",
        right - left,
        low - high
    );
    if y0 < 0.0 && 0.0 < y1 {
        let _ = writeln!(
            out,
            "<line x1=\"{left}\" y1=\"{0:.2}\" x2=\"{right}\" y2=\"{0:.2}\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>",
            frame.py(0.0)
        );
    }
}

/// Marks in `out` the variable `wrt`'s current value `at` with a dotted line
/// and its label, when it is within the frame's range.
fn marker(out: &mut String, frame: &Frame, wrt: &str, at: f64) {
    let (x0, x1) = frame.x;
    if !(x0 <= at && at <= x1) {
        return;
    }
    // The marker's label centred over it, but moved in where that would
    // leave the canvas (`step = 20` at the right end) or run into the tick
    // labels left of the frame.
    let text = format!("{wrt} = {}", format_number(at, Precision::Digits(4)));
    let half = text_width(&text, false) * FONT / 18.0 / 2.0;
    let centre = frame.px(at).min(WIDTH - EDGE - half).max(frame.left + half);
    let _ = writeln!(
        out,
        "<line x1=\"{0:.2}\" y1=\"{high}\" x2=\"{0:.2}\" y2=\"{low}\" stroke=\"#0969da\" stroke-dasharray=\"2 3\"/>\n<text x=\"{1:.2}\" y=\"{2}\" fill=\"#0969da\" text-anchor=\"middle\">{3}</text>",
        frame.px(at),
        centre,
        frame.high - 4.0,
        escape(&text),
        high = frame.high,
        low = frame.low,
    );
}

/// Draws the curve `y` of `samples` into `out` in `colour`: a line through each
/// run of finite values, a dot for a run of one.
fn curve(out: &mut String, frame: &Frame, samples: &[PlotSample], y: Curve, colour: &str) {
    for run in segments(samples, y) {
        let points: Vec<String> = run
            .iter()
            .map(|&(x, v)| format!("{:.2},{:.2}", frame.px(x), frame.py(v)))
            .collect();
        if points.len() == 1 {
            let _ = writeln!(
                out,
                "<circle cx=\"{:.2}\" cy=\"{:.2}\" r=\"1.5\" fill=\"{colour}\"/>",
                frame.px(run[0].0),
                frame.py(run[0].1)
            );
        } else {
            let _ = writeln!(
                out,
                "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"{}\"/>",
                points.join(" ")
            );
        }
    }
}

/// Labels the axes in `out`: each of `ticks` left of the frame, the ends of the
/// variable's range under it, and the variable `wrt` between them.
fn axis_labels(out: &mut String, frame: &Frame, ticks: &[f64], wrt: &str) {
    let (left, right, low) = (frame.left, frame.right, frame.low);
    let number = |x: f64| escape(&format_number(x, Precision::Digits(4)));
    let label = |x: f64, y: f64, anchor: &str, text: String| {
        format!(
            "<text x=\"{x:.2}\" y=\"{y:.2}\" text-anchor=\"{anchor}\" fill=\"#333\">{text}</text>\n"
        )
    };
    for &tick in ticks {
        let at = frame.py(tick);
        out.push_str(&label(
            left - 6.0,
            at + 4.0,
            "end",
            escape(&short_tick_text(tick, ticks)),
        ));
    }
    out.push_str(&label(left, low + 16.0, "start", number(frame.x.0)));
    out.push_str(&label(right, low + 16.0, "end", number(frame.x.1)));
    out.push_str(&label(
        (left + right) / 2.0,
        low + 16.0,
        "middle",
        escape(wrt),
    ));
}

pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Number;

    #[test]
    fn nan_breaks_the_curve() {
        let samples: Vec<PlotSample> = [-1.0, -0.5, 0.0, 0.5, 1.0]
            .iter()
            .map(|&x: &f64| PlotSample {
                x: Number(x),
                value: Number(x.sqrt()),
                grad: Number(0.5 / x.sqrt()),
            })
            .collect();
        let runs = segments(&samples, |s| s.value.0);
        assert_eq!(
            runs,
            vec![vec![(0.0, 0.0), (0.5, 0.5f64.sqrt()), (1.0, 1.0)]]
        );
        let svg = svg("y", "x", 0.5, &samples);
        assert!(svg.contains("fill=\"#d0d0d0\""));
        assert!(svg.contains("<polyline"));
        let text = terminal("y", "x", 0.5, &samples, Precision::default());
        assert!(text.contains("inf or nan at 2 of 5 points"));
    }

    #[test]
    fn svg_ticks_too_wide_for_the_margin_go_scientific() {
        let wide = [-5e14, 0.0, 5e14, 1e15];
        assert_eq!(short_tick_text(-5e14, &wide), "-5e14");
        assert_eq!(short_tick_text(0.0, &wide), "0");
        let odd = [1.234e15, 1.235e15];
        assert_eq!(short_tick_text(1.234e15, &odd), "1.234e15");
        // Narrow enough: as the terminal shows it.
        let small = [-20.0, 0.0, 20.0];
        assert_eq!(short_tick_text(-20.0, &small), "-20");
        assert_eq!(short_tick_text(12345678.0, &[0.0, 12345678.0]), "12345678");
    }

    #[test]
    fn the_grid_is_drawn_before_the_curve() {
        let samples: Vec<PlotSample> = (0..=20)
            .map(|i| {
                let x = i as f64 / 10.0 - 1.0;
                PlotSample {
                    x: Number(x),
                    value: Number(x * x),
                    grad: Number(2.0 * x),
                }
            })
            .collect();
        let svg = svg("y", "x", 0.5, &samples);
        // Each panel starts with its title.
        let panels: Vec<&str> = svg.split("font-size=\"14\"").skip(1).collect();
        assert_eq!(panels.len(), 2);
        for panel in panels {
            let last_grid = panel.rfind("stroke=\"#e4e4e4\"").unwrap();
            let first_curve = panel.find("<polyline").unwrap();
            assert!(last_grid < first_curve, "{panel}");
        }
    }
}
