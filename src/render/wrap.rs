//! A layered layout ([`super::layout`]) cut into bands, as a paragraph is
//! cut into lines, so a long chain fills a slide's shape instead of one long
//! strip: the ranks are cut where no node and no label spans the rank axis,
//! and each band is laid after the previous one across the rank axis (left
//! to right pictures wrap into rows under each other, top to bottom ones
//! into columns side by side). An edge that crosses a cut leaves its band
//! past the band's end, runs in the gap before the next band and enters
//! that band from its start, in straight pieces; the edges crossing one cut
//! each take their own lane, [`LANE`] apart. [`fit`] tries both directions
//! and 1 to [`MAX_BANDS`] bands and keeps the layout a screen of a given
//! size shows largest. Everything is in the layout's abstract `(along,
//! across)` coordinates.

use super::layout::{Layout, Size};

/// The most bands [`fit`] tries.
pub const MAX_BANDS: usize = 8;
/// Room between two edges crossing the same cut, and between the band and
/// its first lane.
pub const LANE: f64 = 8.0;
/// Room between two bands besides the lanes.
const BAND_GAP: f64 = 28.0;

/// `layout` (of nodes of `sizes`, edges with labels of `labels`, both as
/// the layout saw them) cut into at most `bands` bands of about equal
/// length; fewer when the ranks offer fewer places to cut. `layout` itself
/// when `bands` ≤ 1.
pub fn wrap(layout: &Layout, sizes: &[Size], labels: &[Size], bands: usize) -> Layout {
    let cuts = cuts(layout, sizes, bands);
    if cuts.is_empty() {
        return layout.clone();
    }
    let band_of = |along: f64| cuts.partition_point(|&c| c <= along);
    let count = cuts.len() + 1;
    let start = |j: usize| if j == 0 { 0.0 } else { cuts[j - 1] };
    let end = |j: usize| cuts.get(j).copied().unwrap_or(layout.extent.0);
    // Each band's extent across: its nodes, labels and route points.
    let mut low = vec![f64::INFINITY; count];
    let mut high = vec![f64::NEG_INFINITY; count];
    let mut widen = |along: f64, across: f64, half: f64| {
        let j = band_of(along);
        low[j] = low[j].min(across - half);
        high[j] = high[j].max(across + half);
    };
    for (&(along, across), size) in layout.centers.iter().zip(sizes) {
        widen(along, across, size.across / 2.0);
    }
    for (&(along, across), size) in layout.labels.iter().zip(labels) {
        widen(along, across, size.across / 2.0);
    }
    for &(along, across) in layout.routes.iter().flatten() {
        widen(along, across, 0.0);
    }
    for j in 0..count {
        if !low[j].is_finite() {
            (low[j], high[j]) = (0.0, 0.0);
        }
    }
    // The edges crossing each cut, for their lanes.
    let mut crossing = vec![0usize; count];
    for route in &layout.routes {
        for pair in route.windows(2) {
            let (from, to) = (band_of(pair[0].0), band_of(pair[1].0));
            if to > from {
                crossing[to] += 1;
            }
        }
    }
    let lanes = crossing.iter().copied().max().unwrap_or(0) as f64;
    let indent = LANE * (lanes + 1.0);
    let gap = BAND_GAP + LANE * lanes;
    let mut offset = vec![0.0; count];
    for j in 1..count {
        offset[j] = offset[j - 1] + (high[j - 1] - low[j - 1]) + gap;
    }
    let place = |(along, across): (f64, f64)| {
        let j = band_of(along);
        (along - start(j) + indent, across - low[j] + offset[j])
    };
    let mut lane = vec![0usize; count];
    let routes = layout
        .routes
        .iter()
        .map(|route| {
            let mut out = Vec::with_capacity(route.len());
            for (k, &point) in route.iter().enumerate() {
                if k > 0 {
                    let (from, to) = (band_of(route[k - 1].0), band_of(point.0));
                    if to > from {
                        lane[to] += 1;
                        let step = LANE * lane[to] as f64;
                        let across_from = place(route[k - 1]).1;
                        let across_to = place(point).1;
                        let out_at = end(from) - start(from) + indent + step;
                        let between = offset[to] - gap + BAND_GAP / 2.0 + step;
                        let in_at = indent - step;
                        out.extend([
                            (out_at, across_from),
                            (out_at, between),
                            (in_at, between),
                            (in_at, across_to),
                        ]);
                    }
                }
                out.push(place(point));
            }
            out
        })
        .collect();
    let longest = (0..count).map(|j| end(j) - start(j)).fold(0.0, f64::max);
    Layout {
        centers: layout.centers.iter().map(|&c| place(c)).collect(),
        ranks: layout.ranks.clone(),
        routes,
        labels: layout.labels.iter().map(|&l| place(l)).collect(),
        extent: (
            longest + 2.0 * indent,
            offset[count - 1] + high[count - 1] - low[count - 1],
        ),
        crossings: layout.crossings,
    }
}

/// Where to cut `layout` into `bands` bands: positions along the rank axis
/// just past the end of a rank of nodes (so an edge's label goes with its
/// head into the next band), each the nearest such place to an equal share
/// of the length, increasing; empty for one band.
fn cuts(layout: &Layout, sizes: &[Size], bands: usize) -> Vec<f64> {
    if bands <= 1 {
        return Vec::new();
    }
    let mut spans: Vec<(f64, f64)> = layout
        .centers
        .iter()
        .zip(sizes)
        .map(|(&(along, _), size)| (along - size.along / 2.0, along + size.along / 2.0))
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Just past the end of each run of overlapping nodes but the last.
    let mut free = Vec::new();
    let mut reach = f64::NEG_INFINITY;
    for (from, to) in spans {
        if reach.is_finite() && from > reach + 1.0 {
            free.push(reach + 0.5);
        }
        reach = reach.max(to);
    }
    let length = layout.extent.0;
    let mut cuts: Vec<f64> = Vec::new();
    for k in 1..bands {
        let goal = length * k as f64 / bands as f64;
        let after = cuts.last().copied().unwrap_or(f64::NEG_INFINITY);
        let best = free
            .iter()
            .copied()
            .filter(|&c| c > after)
            .min_by(|a, b| (a - goal).abs().total_cmp(&(b - goal).abs()));
        match best {
            Some(c) => cuts.push(c),
            None => break,
        }
    }
    cuts
}

/// The scale at which a screen of `screen` pixels (width, height) shows a
/// canvas of `canvas` pixels whole.
pub fn scale_on((width, height): (f64, f64), canvas: (f64, f64)) -> f64 {
    (width / canvas.0).min(height / canvas.1)
}

/// Of the layouts `arranged` gives for each direction (true: along is
/// horizontal), cut into 1 to [`MAX_BANDS`] bands, the one a screen of
/// `screen` pixels shows largest whole, with its direction: `canvas` turns
/// a layout's extent in one direction into the canvas size (x, y). A
/// layout with more bands, or top to bottom, must show it more than
/// [`GAIN`] times larger than the best one before it (left to right first,
/// fewer bands first), so a picture is not cut for a little.
pub fn fit(
    arranged: impl Fn(bool) -> (Layout, Vec<Size>, Vec<Size>),
    canvas: impl Fn(&Layout, bool) -> (f64, f64),
    screen: (f64, f64),
) -> (Layout, bool) {
    let mut best: Option<(f64, Layout, bool)> = None;
    for horizontal in [true, false] {
        let (layout, sizes, labels) = arranged(horizontal);
        let mut last_extent = None;
        for bands in 1..=MAX_BANDS {
            let wrapped = wrap(&layout, &sizes, &labels, bands);
            if last_extent == Some(wrapped.extent) {
                break;
            }
            last_extent = Some(wrapped.extent);
            let scale = scale_on(screen, canvas(&wrapped, horizontal));
            if best.as_ref().is_none_or(|(s, ..)| scale > s * GAIN) {
                best = Some((scale, wrapped, horizontal));
            }
        }
    }
    let (_, layout, horizontal) = best.expect("one direction at least");
    (layout, horizontal)
}

/// How much larger a screen must show a layout with more bands (or turned)
/// for [`fit`] to take it.
pub const GAIN: f64 = 1.1;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::layout::{Edge, Spacing, layout};

    /// A chain of `n` boxes 100 × 40, each edge labelled 60 × 20.
    fn chain(n: usize) -> (Layout, Vec<Size>, Vec<Size>) {
        let sizes = vec![
            Size {
                along: 100.0,
                across: 40.0
            };
            n
        ];
        let label = Size {
            along: 60.0,
            across: 20.0,
        };
        let edges: Vec<Edge> = (1..n)
            .map(|k| Edge {
                from: k - 1,
                to: k,
                label,
            })
            .collect();
        let spacing = Spacing {
            rank: 30.0,
            node: 10.0,
            edge: 10.0,
        };
        (layout(&sizes, &edges, spacing), sizes, vec![label; n - 1])
    }

    #[test]
    fn a_chain_of_ten_wraps_into_two_rows_of_five() {
        let (laid, sizes, labels) = chain(10);
        let wrapped = wrap(&laid, &sizes, &labels, 2);
        // By hand: ten boxes 100 long with 60-long labels and 15 + 15 of
        // spacing around each label rank: 10·100 + 9·(60 + 30) = 1810 long,
        // box k from 190k to 190k + 100; cut just past the box end nearest
        // 905, the fifth's (860).
        assert_eq!(laid.extent.0, 1810.0);
        let rows: Vec<f64> = wrapped.centers.iter().map(|c| c.1).collect();
        assert!(rows[..5].iter().all(|&y| y == rows[0]), "{rows:?}");
        assert!(rows[5..].iter().all(|&y| y == rows[5]), "{rows:?}");
        assert!(rows[5] > rows[0] + 40.0, "{rows:?}");
        // The second row starts where the first does, with the label of
        // the edge into its first box (60 + 15 + 15 of spacing) before it.
        assert_eq!(wrapped.centers[5].0 - wrapped.centers[0].0, 90.0 - 0.5);
        // The one edge crossing the cut leaves past the first row's end and
        // enters the second from its start, in straight pieces.
        // Its route: the tail's side, the four corners of the way round,
        // the label rank's two points, the head's side.
        let route = &wrapped.routes[4];
        assert_eq!(route.len(), 8);
        for pair in route[0..6].windows(2) {
            assert!(
                pair[0].0 == pair[1].0 || pair[0].1 == pair[1].1,
                "{route:?}"
            );
        }
        assert!(wrapped.extent.0 < 1000.0, "{:?}", wrapped.extent);
    }

    #[test]
    fn fit_wraps_a_long_chain_for_a_wide_screen_and_keeps_a_short_one() {
        let long = chain(30);
        let short = chain(3);
        let canvas = |layout: &Layout, horizontal: bool| match horizontal {
            true => layout.extent,
            false => (layout.extent.1, layout.extent.0),
        };
        let (wrapped, _) = fit(|_| long.clone(), canvas, (1920.0, 1080.0));
        let one = scale_on((1920.0, 1080.0), long.0.extent);
        let best = scale_on((1920.0, 1080.0), wrapped.extent);
        assert!(best > 2.0 * one, "{best} vs {one}");
        // Three boxes on a screen much wider than tall stay in one row.
        let (kept, horizontal) = fit(|_| short.clone(), canvas, (10000.0, 300.0));
        assert!(horizontal);
        assert_eq!(kept.extent, short.0.extent);
    }
}
