//! One step of the graph view (web/page.js, in the playground) on a graph of
//! about 500 nodes, the most the view draws, measured in Chromium's own
//! trace: from the key (→) to the end of the frame that shows the step — the script, style,
//! layout, paint and raster, on every thread of the page's renderer. The
//! figure is printed (`cargo test --test it view_step:: -- --nocapture`,
//! or scripts/bench_view_step.sh); what is asserted does not depend on the
//! machine's load: a step's handler does not lay the page out itself (the
//! frame does, once).

use serde_json::{Value, json};

use crate::playground::{READY, playground};

/// The graph of scripts/bench_view_step.sh: `a0 = 0.5`, `a1 = 0.4`, then
/// `aI = tanh(aI-1*0.9 + aI-2)` up to a124 (498 nodes, 249 value boxes).
fn chain() -> String {
    let mut text = String::from("a0 = 0.5\na1 = 0.4\n");
    for i in 2..=124 {
        text.push_str(&format!("a{i} = tanh(a{}*0.9 + a{})\n", i - 1, i - 2));
    }
    text
}

/// What one step cost, from the trace.
#[derive(Debug, Clone, Copy)]
pub struct StepCost {
    /// Milliseconds from the key's dispatch to the end of the last work of
    /// the frame that shows the step (main thread, compositor, raster).
    pub frame: f64,
    /// Milliseconds of the renderer's main thread in that time.
    pub main: f64,
    /// Milliseconds of CPU the step took on the renderer's threads (main,
    /// compositor, raster): the trace's thread time, which a busy machine
    /// stretches far less than the wall clock.
    pub cpu: f64,
    /// Whether the key's handler laid the page out itself (a layout forced
    /// by reading a size), besides the frame's own layout.
    pub forced_layout: bool,
}

/// The renderer's threads by role, from the trace's metadata: the main
/// thread's (pid, tid), and the other threads of that process.
pub fn renderer(trace: &[Value]) -> (Value, Value) {
    let main = trace
        .iter()
        .find(|e| {
            e["ph"] == "M" && e["name"] == "thread_name" && e["args"]["name"] == "CrRendererMain"
        })
        .expect("no renderer main thread in the trace");
    (main["pid"].clone(), main["tid"].clone())
}

/// The times (µs) of the user-timing marks `name` of the process `pid`,
/// in order (a mark traced twice counted once).
pub fn marks(trace: &[Value], pid: &Value, name: &str) -> Vec<f64> {
    let mut marks: Vec<f64> = trace
        .iter()
        .filter(|e| e["name"] == name && e["pid"] == *pid)
        .filter_map(|e| e["ts"].as_f64())
        .collect();
    marks.sort_by(f64::total_cmp);
    marks.dedup();
    marks
}

/// Milliseconds of CPU that the threads of the process `pid` (its main
/// thread, compositor, raster workers and web workers) spent in top-level
/// tasks starting from `start` to before `stop` (µs): the trace's thread
/// time, which a busy machine stretches far less than the wall clock.
/// Raster tasks run inside the raster workers' own top-level tasks.
pub fn cpu(trace: &[Value], pid: &Value, start: f64, stop: f64) -> f64 {
    trace
        .iter()
        .filter(|e| e["pid"] == *pid && e["ph"] == "X")
        .filter(|e| e["ts"].as_f64().is_some_and(|t| t >= start && t < stop))
        .filter(|e| {
            e["name"] == "ThreadControllerImpl::RunTask" || e["name"] == "TaskGraphRunner::RunTask"
        })
        .filter_map(|e| e["tdur"].as_f64())
        .sum::<f64>()
        / 1000.0
}

/// The costs of the steps of `trace`, each step after a user-timing mark
/// `gc-step` (the page idle between steps: two frames waited).
pub fn step_costs(trace: &[Value]) -> Vec<StepCost> {
    let (pid, main_tid) = renderer(trace);
    let marks = marks(trace, &pid, "gc-step");
    let end_of_trace = trace
        .iter()
        .filter_map(|e| e["ts"].as_f64())
        .fold(0.0, f64::max);
    let mut costs = Vec::new();
    for (k, &start) in marks.iter().enumerate() {
        let stop = marks.get(k + 1).copied().unwrap_or(end_of_trace);
        let inside = |e: &&Value| {
            e["pid"] == pid
                && e["ph"] == "X"
                && e["ts"].as_f64().is_some_and(|t| t >= start && t < stop)
        };
        let work: Vec<&Value> = trace.iter().filter(inside).collect();
        let key = work
            .iter()
            .filter(|e| e["name"] == "EventDispatch" && e["args"]["data"]["type"] == "keydown")
            .filter_map(|e| e["ts"].as_f64())
            .fold(f64::INFINITY, f64::min);
        if !key.is_finite() {
            continue;
        }
        // The frame's work: what runs from the key on until the page is idle.
        let frame_names = [
            "EventDispatch",
            "FunctionCall",
            "UpdateLayoutTree",
            "Layout",
            "PrePaint",
            "Paint",
            "Layerize",
            "Commit",
            "RasterTask",
            "ProxyImpl::ScheduledActionDraw",
            "UpdateLayer",
            "PaintImage",
            "Rasterize",
        ];
        let end = work
            .iter()
            .filter(|e| frame_names.contains(&e["name"].as_str().unwrap_or("")))
            .filter(|e| e["ts"].as_f64().unwrap() >= key)
            .map(|e| e["ts"].as_f64().unwrap() + e["dur"].as_f64().unwrap_or(0.0))
            .fold(key, f64::max);
        // The main thread's busy time: its top-level tasks.
        let main: f64 = work
            .iter()
            .filter(|e| e["tid"] == main_tid && e["name"] == "ThreadControllerImpl::RunTask")
            .filter_map(|e| e["dur"].as_f64())
            .sum();
        let cpu = cpu(trace, &pid, start, stop);
        if std::env::var_os("GRADCALC_TRACE_DEBUG").is_some() && k == 10 {
            print_breakdown(&work);
        }
        let handler = work
            .iter()
            .filter(|e| e["name"] == "EventDispatch" && e["args"]["data"]["type"] == "keydown")
            .filter_map(|e| Some((e["ts"].as_f64()?, e["ts"].as_f64()? + e["dur"].as_f64()?)))
            .collect::<Vec<_>>();
        let forced_layout = work.iter().any(|e| {
            e["name"] == "Layout"
                && e["tid"] == main_tid
                && e["ts"]
                    .as_f64()
                    .is_some_and(|t| handler.iter().any(|&(a, b)| t >= a && t < b))
        });
        costs.push(StepCost {
            frame: (end - key) / 1000.0,
            main: main / 1000.0,
            cpu,
            forced_layout,
        });
    }
    costs
}

/// Prints the CPU time of one step's trace events by name and thread, the
/// largest first (`GRADCALC_TRACE_DEBUG=1`: where a step's time goes).
fn print_breakdown(work: &[&Value]) {
    let mut names: std::collections::BTreeMap<String, (f64, usize)> = Default::default();
    for e in work {
        let entry = names
            .entry(format!("{}@{}", e["name"].as_str().unwrap_or(""), e["tid"]))
            .or_default();
        entry.0 += e["tdur"].as_f64().unwrap_or(0.0) / 1000.0;
        entry.1 += 1;
    }
    let mut names: Vec<_> = names.into_iter().collect();
    names.sort_by(|a, b| b.1.0.total_cmp(&a.1.0));
    for (name, (ms, n)) in names.iter().take(40) {
        eprintln!("{ms:8.2} ms {n:4} {name}");
    }
}

/// The median, 90th percentile and largest of `values`.
pub fn spread(values: &mut [f64]) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((q * values.len() as f64) as usize).min(values.len() - 1)];
    (at(0.5), at(0.9), values[values.len() - 1])
}

#[test]
fn a_view_step_at_500_nodes_lays_out_once_and_reports_its_cost() {
    let Some((mut browser, url)) = playground("a view step in Chromium's trace") else {
        return;
    };
    // The playground's view (web/dist/page.js, as `:html` and `:serve` draw it).
    browser.open(&url, (1920, 1080), READY);
    browser.eval(&format!("window.gradcalcRun({:?}), true", chain()));
    browser.wait_for("window.gradcalcView.boxes.length > 200");
    browser.wait_for("document.body.getAttribute('data-busy') === 'no'");
    browser.eval("window.gradcalcView.graph.focus(), true");
    let steps = 60;
    let trace = browser.trace(
        "devtools.timeline,disabled-by-default-devtools.timeline,blink.user_timing,toplevel,cc",
        |browser| {
            browser.eval("window.gradcalcView.setStep(0), new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))");
            for _ in 0..steps {
                browser.eval("performance.mark('gc-step'), true");
                browser.press("ArrowRight");
                browser.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))");
            }
        },
    );
    assert_eq!(browser.eval("window.gradcalcView.step"), json!(steps));
    let costs = step_costs(&trace);
    assert!(
        costs.len() >= steps - 2,
        "{} steps found in the trace",
        costs.len()
    );
    let (frame, frame90, frame_max) =
        spread(&mut costs.iter().map(|c| c.frame).collect::<Vec<_>>());
    let (main, _, _) = spread(&mut costs.iter().map(|c| c.main).collect::<Vec<_>>());
    // The step's handler changes classes and text, and reads no size: the
    // page is laid out once, in the frame (the line is measured only when a
    // longer text comes; at fit no box is measured to follow it).
    let forced = costs.iter().filter(|c| c.forced_layout).count();
    assert!(
        forced * 5 <= costs.len(),
        "{forced} of {} steps laid the page out in the key's handler",
        costs.len()
    );
    let (cpu, cpu90, cpu_max) = spread(&mut costs.iter().map(|c| c.cpu).collect::<Vec<_>>());
    eprintln!(
        "view step at 498 nodes ({} steps, Chromium trace): CPU median {cpu:.1} ms, p90 {cpu90:.1} ms, max {cpu_max:.1} ms; wall clock key to frame median {frame:.1} ms, p90 {frame90:.1} ms, max {frame_max:.1} ms; main thread median {main:.1} ms",
        costs.len()
    );
}
