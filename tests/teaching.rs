//! The teaching commands through the binary: `:check` on every row of the
//! gradient table, DOT that Graphviz parses, files written (and not written),
//! paths past the listing limit, and the JSON events of each command.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn gradcalc() -> Command {
    let mut command = Command::cargo_bin("gradcalc").expect("binary builds");
    command.env_remove("NO_COLOR");
    command
}

fn json_events(args: &[&str]) -> (Vec<Value>, Option<i32>) {
    let output = gradcalc().arg("--json").args(args).output().unwrap();
    let events = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect();
    (events, output.status.code())
}

fn examples(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
        .display()
        .to_string()
}

/// Every row of tests/cases/gradients.tsv with each `:grad NAMES` turned into
/// `:check NAMES`: rows whose gradients are all finite pass, except at kinks —
/// G11 (abs at 0), G12 (max at a tie) and G27 (relu at 0) report "kink".
#[test]
fn check_passes_on_the_gradient_table_and_finds_the_kinks() {
    let table = include_str!("cases/gradients.tsv");
    let mut failures = Vec::new();
    let mut checked = 0;
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split('\t').collect();
        let (id, input, expected) = (fields[0], fields[1], fields[2]);
        if !input.contains(":grad") || expected.contains("inf") || expected.contains("nan") {
            continue;
        }
        let input = input.replace(":grad", ":check");
        let (events, status) = json_events(&["-e", &input]);
        let verdicts: Vec<&str> = events
            .iter()
            .filter(|e| e["kind"] == "check")
            .map(|e| e["verdict"].as_str().unwrap_or(""))
            .collect();
        checked += verdicts.len();
        let at_kink = matches!(id, "G11" | "G12" | "G27");
        let ok = status == Some(0)
            && !verdicts.is_empty()
            && verdicts
                .iter()
                .all(|v| *v == "pass" || (at_kink && *v == "kink"))
            && (!at_kink || verdicts.contains(&"kink"));
        if !ok {
            failures.push(format!("{id}: {verdicts:?} {events:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 40, "only {checked} checks ran");
}

#[test]
fn a_step_of_floor_is_a_kink_and_a_flat_stretch_passes() {
    // At 1 the step ±h of floor lies within h: the difference quotient sees a jump.
    let (events, _) = json_events(&[
        "-e",
        "x = 1; floor(x) ; :check x ; x = 1.5 ; floor(x) ; :check x",
    ]);
    let verdicts: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "check")
        .map(|e| &e["verdict"])
        .collect();
    assert_eq!(verdicts, ["kink", "pass"]);
}

#[test]
fn dot_parses_with_graphviz_when_it_is_installed() {
    let has_dot = std::process::Command::new("dot").arg("-V").output().is_ok();
    for example in ["neuron.calc", "circuit.calc", "paths.calc"] {
        let output = gradcalc()
            .args([&examples(example), "-e", ":dot"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        let stdout = String::from_utf8_lossy(&output.stdout);
        let dot = &stdout[stdout.find("digraph").expect("DOT printed")..];
        assert!(dot.contains("rankdir=LR") && dot.contains("shape=record"));
        if has_dot {
            let mut graphviz = std::process::Command::new("dot")
                .arg("-Tsvg")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            graphviz
                .stdin
                .take()
                .unwrap()
                .write_all(dot.as_bytes())
                .unwrap();
            let result = graphviz.wait_with_output().unwrap();
            assert!(
                result.status.success() && result.stderr.is_empty(),
                "{example}: dot says {}",
                String::from_utf8_lossy(&result.stderr)
            );
        }
    }
}

#[test]
fn files_are_written_and_failures_point_at_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("neuron.svg");
    let dot = dir.path().join("neuron.dot");
    let tex = dir.path().join("trace.tex");
    let plot = dir.path().join("plot.svg");
    let script = format!(
        ":svg {}\n:dot {}\n:trace tex {}\n:plot x1 -1 3 {}\n",
        svg.display(),
        dot.display(),
        tex.display(),
        plot.display()
    );
    let output = gradcalc()
        .args([&examples("neuron.calc"), "-e", &script])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("wrote the graph as SVG to"), "{stdout}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    assert!(
        std::fs::read_to_string(&dot)
            .unwrap()
            .starts_with("digraph")
    );
    let table = std::fs::read_to_string(&tex).unwrap();
    assert!(table.contains("\\begin{tabular}") && table.contains("$\\partial$o/$\\partial$b"));
    assert!(
        std::fs::read_to_string(&plot)
            .unwrap()
            .contains("<polyline")
    );

    // A missing directory: an error at the file name, exit status 1, nothing written.
    let missing = dir.path().join("no/such/dir/graph.dot");
    let output = gradcalc()
        .args(["-e", &format!("x = 2; x*x; :dot {}", missing.display())])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("does not exist") && stderr.contains("mkdir -p"),
        "{stderr}"
    );
    let (events, status) = json_events(&["-e", &format!("x = 2; x*x; :svg {}", missing.display())]);
    assert_eq!(status, Some(1));
    assert!(
        events
            .iter()
            .any(|e| e["kind"] == "error"
                && e["message"].as_str().unwrap().contains("does not exist"))
    );
}

#[test]
fn paths_past_the_limit_are_counted_not_listed() {
    let mut script = String::from("x = 1; y = x + x");
    for _ in 0..9 {
        script.push_str("; y = y + y");
    }
    script.push_str("; y; :paths x");
    let output = gradcalc().args(["-e", &script]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("paths from y to x: 1024"), "{stdout}");
    assert!(stdout.contains("  64. "), "{stdout}");
    assert!(!stdout.contains("  65. "), "{stdout}");
    assert!(stdout.contains("960 more paths not listed; the sum over all paths is ∂y/∂x = 1024"));
    assert!(stdout.contains("grows exponentially"));
}

#[test]
fn every_teaching_command_has_a_json_event() {
    let (events, status) = json_events(&[
        &examples("paths.calc"),
        "-e",
        ":graph\n:forward\n:topo kahn\n:check b\n:paths b\n:dot\n:trace md\n:plot b 0 2",
    ]);
    assert_eq!(status, Some(0));
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["kind"].as_str()).collect();
    for kind in [
        "graph", "forward", "kahn", "check", "paths", "dot", "table", "plot",
    ] {
        assert!(kinds.contains(&kind), "no {kind} event in {kinds:?}");
    }
    let paths = events.iter().find(|e| e["kind"] == "paths").unwrap();
    assert_eq!(paths["count"], 2);
    assert_eq!(paths["gradient"], 5);
    let kahn = events.iter().find(|e| e["kind"] == "kahn").unwrap();
    let b = kahn["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "b")
        .unwrap();
    assert_eq!(b["pending"], 2);
    let plot = events.iter().find(|e| e["kind"] == "plot").unwrap();
    assert_eq!(plot["samples"].as_array().unwrap().len(), 241);
}

#[test]
fn a_wide_graph_is_summarised() {
    let mut script = String::from("x = 1; y = max(x");
    for i in 0..200 {
        script.push_str(&format!(", x + {i}"));
    }
    script.push_str("); :graph");
    let output = gradcalc().args(["-e", &script]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines = stdout.lines().count();
    assert!(lines < 80, "{lines} lines:\n{stdout}");
    assert!(stdout.contains("… 193 more inputs"), "{stdout}");
}
