//! Golden sessions: each `tests/sessions/NAME.calc` runs through the binary
//! (`gradcalc --color never NAME.calc`) and its whole transcript must equal
//! `tests/sessions/NAME.out`. To accept new transcripts after reviewing them:
//! `GRADCALC_BLESS=1 cargo test --test it sessions::`.

use std::path::Path;

use crate::util::{gradcalc, in_crate};

/// stdout, then stderr and the exit status when they are not empty / zero.
fn transcript(script: &Path) -> String {
    let output = gradcalc()
        .current_dir(script.parent().expect("sessions dir"))
        .args(["--color", "never", "--keep-going"])
        .arg(script.file_name().expect("file name"))
        .output()
        .expect("gradcalc runs");
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.stderr.is_empty() {
        text.push_str("--- stderr ---\n");
        text.push_str(&String::from_utf8_lossy(&output.stderr));
    }
    let status = output.status.code().unwrap_or(-1);
    if status != 0 {
        text.push_str(&format!("--- exit status {status} ---\n"));
    }
    text
}

#[test]
fn golden_sessions() {
    let dir = in_crate("tests/sessions");
    let bless = std::env::var_os("GRADCALC_BLESS").is_some();
    let mut scripts: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/sessions exists")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "calc"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 4, "the golden sessions are there");
    let mut failures = Vec::new();
    for script in &scripts {
        let actual = transcript(script);
        let golden = script.with_extension("out");
        if bless {
            std::fs::write(&golden, &actual).expect("write golden transcript");
            continue;
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_default();
        if actual != expected {
            failures.push(format!(
                "{} differs from {}:\n--- expected ---\n{expected}--- actual ---\n{actual}",
                script.display(),
                golden.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The `--json` lines of `tests/sessions/json/every_event.calc`, run in a scratch
/// directory (it writes a file); the `millis` of a collection, which varies from
/// run to run, is set to 0.
fn every_event_json() -> Vec<serde_json::Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sessions/json");
    let scratch = tempfile::tempdir().expect("scratch directory");
    std::fs::copy(
        dir.join("every_event.calc"),
        scratch.path().join("every_event.calc"),
    )
    .expect("copy the script");
    let output = gradcalc()
        .current_dir(scratch.path())
        .args(["--json", "--keep-going", "every_event.calc"])
        .output()
        .expect("gradcalc runs");
    // Line mode's `ready`, after a line that leaves a bracket open and one that closes it.
    let lines = gradcalc()
        .args(["--json", "--lines"])
        .write_stdin("(1 +\n 2)\n")
        .output()
        .expect("gradcalc runs");
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&lines.stdout));
    text.lines()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            if value["kind"] == "gc" {
                value["millis"] = 0.into();
            }
            value
        })
        .collect()
}

/// One event of every kind, as JSON, equals `every_event.jsonl` (reviewed by hand
/// against docs/json.md; `GRADCALC_BLESS=1` rewrites it).
#[test]
fn json_golden_of_every_event_kind() {
    let golden =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sessions/json/every_event.jsonl");
    let actual: String = every_event_json()
        .iter()
        .map(|value| format!("{value}\n"))
        .collect();
    if std::env::var_os("GRADCALC_BLESS").is_some() {
        std::fs::write(&golden, &actual).expect("write the JSON golden");
        return;
    }
    let expected = std::fs::read_to_string(&golden).unwrap_or_default();
    assert_eq!(actual, expected, "{} differs", golden.display());
}

/// Words in backticks in docs/json.md's field column that are values, not fields.
const VALUE_WORDS: &[&str] = &[
    "null", "markdown", "latex", "pass", "warn", "fail", "kink", "unsteady", "floor", "relu",
    "max", "inf", "nan", "md", "tex", "true", "false",
];

/// The fields of a listing's `omitted` (`{after, count}`), there only when a
/// long order is summarised, which the golden's short listings are not
/// (`json_topo_summary_has_after_and_count` in tests/it/cli.rs checks them).
const SUMMARY_FIELDS: &[&str] = &["after", "count"];

/// Every key anywhere in a JSON value.
fn keys(value: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::Object(map) => {
                for (key, inner) in map {
                    out.insert(key.clone());
                    stack.push(inner);
                }
            }
            serde_json::Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
}

/// docs/json.md's table and the golden agree: every kind in the table appears in
/// the golden and every kind of the golden in the table, every field the table
/// lists for a kind (a word in backticks, or a word of a row `{a, b}`) is a key
/// of that kind's JSON, and every key of that JSON is listed for its kind.
#[test]
fn json_golden_matches_the_documented_kinds_and_fields() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md"))
        .expect("docs/json.md");
    let mut documented = std::collections::BTreeMap::new();
    let kinds_table = docs.split("## Error codes").next().expect("the kinds");
    for line in kinds_table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        let kind = cells[0]
            .trim_start_matches("| ")
            .trim_matches('`')
            .to_string();
        // A backticked word, or each word of a backticked `{a, b, c}` (a row's fields).
        let fields: Vec<String> = cells[2]
            .split('`')
            .skip(1)
            .step_by(2)
            .flat_map(
                |w| match w.strip_prefix('{').and_then(|w| w.strip_suffix('}')) {
                    Some(row) => row.split(", ").collect::<Vec<_>>(),
                    None => vec![w],
                },
            )
            .filter(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .filter(|w| !VALUE_WORDS.contains(w))
            .map(str::to_string)
            .collect();
        documented.insert(kind, fields);
    }
    assert!(documented.len() >= 20, "the table is read: {documented:?}");
    let mut seen = std::collections::BTreeMap::new();
    for mut value in every_event_json() {
        let kind = value["kind"].as_str().expect("a kind").to_string();
        // `from` is every event's, documented once above the table.
        if let Some(from) = value.as_object_mut().and_then(|v| v.remove("from")) {
            let fields: Vec<&String> = from.as_object().expect("an object").keys().collect();
            assert_eq!(fields, ["statement", "source", "line", "column"], "{kind}");
        } else {
            assert!(kind == "ready", "`{kind}` has no `from`");
        }
        keys(&value, seen.entry(kind).or_default());
    }
    assert!(docs.contains("carries `from`: `{statement, source, line,\ncolumn}`"));
    let documented_kinds: Vec<&String> = documented.keys().collect();
    let seen_kinds: Vec<&String> = seen.keys().collect();
    assert_eq!(
        documented_kinds, seen_kinds,
        "kinds in docs/json.md vs the golden"
    );
    for (kind, keys) in &seen {
        // Every key of the JSON is documented for its kind (or, for a listing
        // `as for `topo``, for the kind it points to).
        let words = &documented[kind];
        for key in keys.iter().filter(|k| *k != "kind") {
            let pointed = words
                .iter()
                .filter(|w| documented.contains_key(*w))
                .any(|w| documented[w].contains(key));
            assert!(
                words.contains(key) || pointed,
                "`{kind}` has `{key}`, which docs/json.md does not list for it"
            );
        }
    }
    for (kind, fields) in &documented {
        // Another kind named in the text (`as for `topo``) is not a field.
        for field in fields
            .iter()
            .filter(|f| !documented.contains_key(*f) || *f == "value")
        {
            assert!(
                seen[kind].contains(field) || SUMMARY_FIELDS.contains(&field.as_str()),
                "docs/json.md lists `{field}` for `{kind}`, the JSON has {:?}",
                seen[kind]
            );
        }
    }
}

/// docs/json.md's table under `## SECTION` lists `codes`, in their order, and
/// nothing else.
fn assert_documented<'a>(section: &str, codes: impl Iterator<Item = &'a str>) {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md"))
        .expect("docs/json.md");
    let table = docs
        .split(&format!("## {section}"))
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .unwrap_or_else(|| panic!("a {section} section"));
    let documented: Vec<&str> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    assert_eq!(documented, codes.collect::<Vec<_>>(), "{section}");
}

/// docs/json.md's table of error codes lists every code, in the order of
/// `ErrorCode::ALL`, and nothing else.
#[test]
fn json_error_codes_match_the_documented_table() {
    let codes = gradcalc::session::ErrorCode::ALL.iter();
    assert_documented("Error codes", codes.map(|c| c.as_str()));
}

/// docs/json.md's table of notice codes lists every code, in the order of
/// `NoticeCode::ALL`, and nothing else.
#[test]
fn json_notice_codes_match_the_documented_table() {
    let codes = gradcalc::session::NoticeCode::ALL.iter();
    assert_documented("Notice codes", codes.map(|c| c.as_str()));
}
