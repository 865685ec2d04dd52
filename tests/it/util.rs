//! Helpers shared by every module of the integration tests: the binary as a
//! command, its output as text or as JSON Lines, closeness of floats, and a
//! session run through the library.

use std::ops::ControlFlow;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use gradcalc::session::{Event, Session};
use serde_json::Value;

/// How long one run of the binary may take: a ceiling that only a hang
/// reaches, not a latency goal. A debug build on a 2-core machine running
/// other builds and busy loops takes minutes for the heaviest cases (a
/// 10⁵-statement script took over 60 s); latency goals live in the
/// benchmarks.
pub const TIMEOUT: Duration = Duration::from_secs(900);

/// A fresh temporary folder holding one file, `name` with `contents`, and
/// the file's path (both gone when the `TempDir` is dropped).
pub fn folder_with(name: &str, contents: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    (dir, path)
}

/// `gradcalc ARGS` ([`gradcalc`]) run to its end, whatever its exit status.
pub fn output_of<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    gradcalc().args(args).output().unwrap()
}

/// [`output_of`] run in the folder `dir`.
pub fn output_in<S: AsRef<std::ffi::OsStr>>(dir: impl AsRef<Path>, args: &[S]) -> Output {
    gradcalc().current_dir(dir).args(args).output().unwrap()
}

/// [`output_of`] with `stdin` as its standard input.
pub fn output_with_stdin<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    stdin: impl Into<Vec<u8>>,
) -> Output {
    gradcalc().args(args).write_stdin(stdin).output().unwrap()
}

/// Asserts that `text` contains `part`, showing `text` when not (its first
/// 4000 characters: some outputs are megabytes).
#[track_caller]
pub fn assert_contains(text: &str, part: &str) {
    assert!(
        text.contains(part),
        "{part:?} is not in:\n{}",
        text.chars().take(4000).collect::<String>()
    );
}

/// Asserts that `text` ends with `end`, showing its last 300 characters when
/// not.
#[track_caller]
pub fn assert_ends_with(text: &str, end: &str) {
    let chars: Vec<char> = text.chars().collect();
    let tail: String = chars[chars.len().saturating_sub(300)..].iter().collect();
    assert!(text.ends_with(end), "does not end with {end:?}:\n{tail}");
}

/// The binary as an `assert_cmd` command, with `NO_COLOR` removed from its
/// environment (colour then follows `--color` and the terminal; the output is
/// piped, so there is none unless asked) and a timeout of [`TIMEOUT`].
pub fn gradcalc() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::cargo_bin("gradcalc").expect("binary builds");
    command.env_remove("NO_COLOR").timeout(TIMEOUT);
    command
}

/// [`gradcalc`] allowed at most `seconds` of CPU time (`ulimit -t`: the
/// kernel stops it past that), for a test that the work is not quadratic or
/// worse. CPU time, not wall time: a loaded machine does not make it fail.
pub fn gradcalc_within_cpu(seconds: u32) -> assert_cmd::Command {
    let mut command = assert_cmd::Command::new("sh");
    command
        .args(["-c", &format!("ulimit -t {seconds} && exec \"$0\" \"$@\"")])
        .arg(env!("CARGO_BIN_EXE_gradcalc"))
        .env_remove("NO_COLOR")
        .timeout(TIMEOUT);
    command
}

/// The binary as a plain `std::process::Command` (to choose its stdout), with
/// `NO_COLOR=1`.
pub fn plain_gradcalc() -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_gradcalc"));
    command.env("NO_COLOR", "1");
    command
}

/// A path below the crate's root (`examples/neuron.calc`, `tests/sessions`).
pub fn in_crate(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// Standard output as text (invalid UTF-8 replaced).
pub fn stdout_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The standard output of `gradcalc -e script` run in `dir`, after checking
/// it exited 0 (else panics with both streams).
pub fn run_script_in(dir: &Path, script: &str) -> String {
    let output = output_in(dir, &["-e", script]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        stdout_of(&output),
        stderr_of(&output)
    );
    stdout_of(&output)
}

/// Standard error as text (invalid UTF-8 replaced).
pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// JSON Lines (docs/json.md): one value per line; panics naming a line that is
/// not JSON.
pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line:?}: {e}"))
        })
        .collect()
}

/// `gradcalc --json ARGS`: its events and its exit status.
pub fn json_events(args: &[&str]) -> (Vec<Value>, Option<i32>) {
    let output = gradcalc().arg("--json").args(args).output().unwrap();
    (json_lines(&stdout_of(&output)), output.status.code())
}

/// The members of the JSON array `list`; panics, showing it, when it is not
/// an array.
#[track_caller]
pub fn members(list: &Value) -> std::slice::Iter<'_, Value> {
    list.as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"))
        .iter()
}

/// The member of the JSON array `list` whose `key` is `value` (a node of a
/// `topo` event by its `id`, a row by its `label`); panics, showing the array,
/// when none is.
#[track_caller]
pub fn member<'a, T: std::fmt::Debug>(list: &'a Value, key: &str, value: T) -> &'a Value
where
    Value: PartialEq<T>,
{
    members(list)
        .find(|item| item[key] == value)
        .unwrap_or_else(|| panic!("no member with {key} = {value:?} in {list}"))
}

/// A number of a JSON event: a JSON number, or the strings `"inf"`, `"-inf"`,
/// `"nan"` that stand for the values JSON has no number for.
pub fn json_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s == "inf" => Some(f64::INFINITY),
        Value::String(s) if s == "-inf" => Some(f64::NEG_INFINITY),
        Value::String(s) if s == "nan" => Some(f64::NAN),
        _ => None,
    }
}

/// `actual` is within relative tolerance `rel` of `expected` (measured against
/// the larger magnitude of the two), or within 1e-300 of it near zero; an
/// expected inf, -inf or nan must be met exactly.
pub fn close(actual: f64, expected: f64, rel: f64) -> bool {
    if expected.is_nan() {
        return actual.is_nan();
    }
    if expected.is_infinite() {
        return actual == expected;
    }
    let error = (actual - expected).abs();
    error <= rel * expected.abs().max(actual.abs()) || error <= 1e-300
}

/// Asserts [`close`], naming both values and the relative error.
#[track_caller]
pub fn assert_close(actual: f64, expected: f64, rel: f64) {
    assert!(
        close(actual, expected, rel),
        "got {actual:?}, expected {expected:?} (relative error {:e}, allowed {rel:e})",
        ((actual - expected) / expected).abs()
    );
}

/// examples/mlp.calc computed here in f64, independently of gradcalc: its
/// hidden units, its output and `dz` = ∂L/∂(the output unit's sum) =
/// 2(o − 1)(1 − o²) for L = (o − 1)², with the weights the example assigns.
pub struct MlpByHand {
    pub h1: f64,
    pub h2: f64,
    pub h3: f64,
    pub o: f64,
    pub dz: f64,
}

/// [`MlpByHand`]: h_j = tanh(x1·w_j1 + x2·w_j2 + b_j), o = tanh(h1·v1 +
/// h2·v2 + h3·v3 + c), at examples/mlp.calc's x1 = 0.5, x2 = -1.2.
pub fn mlp_by_hand() -> MlpByHand {
    let (x1, x2) = (0.5f64, -1.2f64);
    let h1 = (x1 * 0.3 + x2 * -0.7 + 0.1f64).tanh();
    let h2 = (x1 * 0.9 + x2 * -0.2 - 0.3f64).tanh();
    let h3 = (x1 * 0.5 + x2 * 0.6 + 0.2f64).tanh();
    let o = (h1 * 0.8 - h2 * 1.1 + h3 * 0.4 + 0.05f64).tanh();
    let dz = 2.0 * (o - 1.0) * (1.0 - o * o);
    MlpByHand { h1, h2, h3, o, dz }
}

/// Functions that double their work, joined by `separator` (`"\n"` or
/// `"; "`): `d0(t) = BASE`, then `dk(t) = d{k−1}(t) + d{k−1}(t)` for k = 1 to
/// `levels`, so that `dk(x)` holds 2^k copies of d0's body.
pub fn doubling_functions(base: &str, levels: usize, separator: &str) -> String {
    let mut text = format!("d0(t) = {base}");
    for k in 1..=levels {
        text.push_str(&format!("{separator}d{k}(t) = d{0}(t) + d{0}(t)", k - 1));
    }
    text
}

/// Runs `source` in `session` through the library and returns every event, or
/// the first error (with the source) as text; statements after an error do
/// not run.
pub fn session_events(session: &mut Session, source: &str) -> Result<Vec<Event>, String> {
    let mut all = Vec::new();
    let mut failure = None;
    let _ = session.run_source(source, |result| match result {
        Ok(events) => {
            all.extend(events);
            ControlFlow::Continue(())
        }
        Err(error) => {
            failure = Some(format!("{source}: {error}"));
            ControlFlow::Break(())
        }
    });
    failure.map_or(Ok(all), Err)
}

/// Runs DOT text through Graphviz's `dot -Tsvg` when `dot` is installed
/// (nothing otherwise); panics, naming `what`, when dot fails or warns.
pub fn graphviz_accepts(dot: &str, what: &str) {
    if std::process::Command::new("dot")
        .arg("-V")
        .output()
        .is_err()
    {
        return;
    }
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
        "{what}: dot says {}",
        String::from_utf8_lossy(&result.stderr)
    );
}

/// The CPU time (user and system) that process `pid` has used so far, from
/// `/proc/PID/stat` (fields 14 and 15, in clock ticks of 1/100 s: Linux's
/// `USER_HZ`); `None` once the process has ended.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; the fields after it don't.
    let (_, after_name) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    if fields.first() == Some(&"Z") {
        return None;
    }
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    Some(Duration::from_millis(ticks * 10))
}

/// Waits until process `pid` has used `work` of CPU time since it started
/// (not a wall-clock time: a loaded machine makes the wait longer, never the
/// work shorter); panics when the process ends first, or after [`TIMEOUT`]
/// twice over.
pub fn wait_for_cpu(pid: u32, work: Duration) {
    let started = std::time::Instant::now();
    loop {
        match cpu_time(pid) {
            Some(used) if used >= work => return,
            Some(_) => {}
            None => panic!("process {pid} ended before it used {work:?} of CPU time"),
        }
        assert!(
            started.elapsed() < 2 * TIMEOUT,
            "process {pid} did not use {work:?} of CPU time"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs `gradcalc ARGS` ([`plain_gradcalc`]), sends it SIGINT (Ctrl-C in a
/// batch run) once it has used `work` of CPU time ([`wait_for_cpu`]), checks
/// that it exits with status 130 (128 + SIGINT) and returns its output.
pub fn interrupted_after<S: AsRef<std::ffi::OsStr>>(args: &[S], work: Duration) -> Output {
    let child = plain_gradcalc()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_cpu(child.id(), work);
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{output:?}");
    output
}

/// Runs `gradcalc --json -e SETUP -e DESCEND -e "never = 1"`, interrupts it
/// once it has spent about a second of CPU in the descent, and returns every
/// event with the `descent` event. Asserts what every interrupted descent
/// owes its user: the statement after it never ran, the event says
/// `interrupted`, and it kept fewer steps than it was asked for.
pub fn interrupted_descent(setup: &str, descend: &str) -> (Vec<Value>, Value) {
    let output = interrupted_after(
        &["--json", "-e", setup, "-e", descend, "-e", "never = 1"],
        Duration::from_millis(1000),
    );
    let events = json_lines(&stdout_of(&output));
    assert!(!events.iter().any(|e| e["name"] == "never"));
    let descent = events
        .iter()
        .find(|e| e["kind"] == "descent")
        .unwrap_or_else(|| panic!("no descent event in {events:?}"))
        .clone();
    assert_eq!(descent["interrupted"], true, "{descent}");
    let asked: u64 = descend
        .split_whitespace()
        .find_map(|word| word.strip_prefix("steps="))
        .and_then(|n| n.parse().ok())
        .expect("the descent names its steps");
    assert!(descent["steps"].as_u64().unwrap() < asked, "{descent}");
    (events, descent)
}

/// The slides `:svg DIR --steps` wrote for a pass of `steps` steps, each
/// read by `read`: `DIR/step-000.svg` (before the first step) to
/// `DIR/step-{steps}.svg`, asserting that there is one slide a step and no
/// more.
pub fn slides_of<T>(dir: &Path, steps: usize, read: impl Fn(&str) -> T) -> Vec<T> {
    let path = |k: usize| dir.join(format!("step-{k:03}.svg"));
    let slides = (0..=steps)
        .map(|k| read(&std::fs::read_to_string(path(k)).unwrap()))
        .collect();
    assert!(!path(steps + 1).exists(), "one slide a step");
    slides
}

/// What `gradcalc ARGS` prints, as one text to compare whole: stdout, then
/// stderr after a line `--- stderr` when there is any, then a line
/// `--- exit status N` when the status is not 0.
pub fn transcript(args: &[&str]) -> String {
    let output = gradcalc().args(args).output().unwrap();
    let mut text = stdout_of(&output);
    let stderr = stderr_of(&output);
    if !stderr.is_empty() {
        text.push_str("--- stderr\n");
        text.push_str(&stderr);
    }
    match output.status.code() {
        Some(0) => {}
        Some(code) => text.push_str(&format!("--- exit status {code}\n")),
        None => text.push_str(&format!("--- {}\n", output.status)),
    }
    text
}

/// Checks the whole [`transcript`] of `gradcalc -e SCRIPT` against `expect`
/// (`UPDATE_EXPECT=1` rewrites it; review the change by hand).
#[track_caller]
pub fn check(script: &str, expect: expect_test::Expect) {
    expect.assert_eq(&transcript(&["-e", script]));
}

/// Whether a thread of process `pid` waits in the kernel function `wchan`
/// (`/proc/PID/task/*/wchan`: `pipe_write` for a write to a full pipe).
pub fn any_thread_waits_in(pid: u32, wchan: &str) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|task| {
            std::fs::read_to_string(task.path().join("wchan")).is_ok_and(|w| w.contains(wchan))
        })
}

/// The batch run's Ctrl-C grace (`interrupt::BATCH_GRACE`) as seen on the
/// thread of the SIGINT handler (named `ctrl-c`): it waits for a signal,
/// sleeps the grace (`hrtimer_nanosleep`), then ends the process or waits
/// again. Each time it blocks counts one voluntary context switch, so the
/// grace has started once the thread sleeps or has blocked once more than
/// before the signal, and ended once it has blocked twice more and sleeps
/// no longer: seen even when the sleep itself falls between two looks.
pub struct BatchGrace {
    task: std::path::PathBuf,
    switches: u64,
}

impl BatchGrace {
    /// Finds process `pid`'s handler thread and counts its switches so far:
    /// call it before sending SIGINT. Panics when it has none.
    pub fn watch(pid: u32) -> BatchGrace {
        let task = std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .flatten()
            .map(|task| task.path())
            .find(|task| {
                std::fs::read_to_string(task.join("comm")).is_ok_and(|c| c.trim() == "ctrl-c")
            })
            .expect("the SIGINT handler's thread");
        let switches = voluntary_switches(&task).expect("the handler's thread runs");
        BatchGrace { task, switches }
    }

    /// Waits until the grace has started and then ended (see [`BatchGrace`]);
    /// panics when the thread ends first (the process ended) or after
    /// [`TIMEOUT`].
    pub fn wait_for_its_end(&self) {
        let started = std::time::Instant::now();
        let mut slept = false;
        loop {
            let switches = voluntary_switches(&self.task).expect("the process ended in its grace");
            let asleep = std::fs::read_to_string(self.task.join("wchan"))
                .is_ok_and(|w| w.contains("hrtimer_nanosleep"));
            slept |= asleep || switches > self.switches;
            if slept && !asleep && switches >= self.switches + 2 {
                return;
            }
            assert!(started.elapsed() < TIMEOUT, "the grace never ended");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The voluntary context switches of thread `task` (`/proc/PID/task/TID`)
/// so far; `None` once it has ended.
fn voluntary_switches(task: &std::path::Path) -> Option<u64> {
    let status = std::fs::read_to_string(task.join("status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|n| n.trim().parse().ok())
}

/// The names of the files in `dir`, sorted.
pub fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
