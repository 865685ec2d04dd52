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
