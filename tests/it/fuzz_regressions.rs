//! Every input in `fuzz/regressions/` (minimized crash inputs found by
//! `cargo fuzz run session`, and the seed corpus in `fuzz/seeds/`) replayed through the fuzz
//! target's harness and through the binary: no panic, no signal, exit 0 or 1.

// `run` is the fuzz target's entry point; the replay uses `run_with_budget`.
#[allow(dead_code)]
#[path = "../../fuzz/harness.rs"]
mod harness;

use std::path::PathBuf;

use crate::util::{gradcalc, in_crate, stderr_of};

fn inputs(dir: &str) -> Vec<PathBuf> {
    let dir = in_crate(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file() && path.extension().is_none_or(|e| e != "md"))
        .collect();
    files.sort();
    files
}

#[test]
fn saved_fuzz_inputs_run_through_the_harness() {
    // The minimised corpus of the fuzzing runs (`fuzz/minimized/README.md`)
    // replays here too: every input the fuzzer kept for its coverage, within
    // the same time budget per statement.
    let files = [
        inputs("fuzz/regressions"),
        inputs("fuzz/seeds"),
        inputs("fuzz/minimized"),
    ]
    .concat();
    assert!(!files.is_empty());
    for path in files {
        let data = std::fs::read(&path).unwrap();
        // Unoptimised here: ten times the fuzzer's budget per statement.
        let budget = harness::STATEMENT_BUDGET * 10;
        let result = std::panic::catch_unwind(|| harness::run_with_budget(&data, budget));
        assert!(result.is_ok(), "{} panics", path.display());
    }
}

#[test]
fn saved_fuzz_inputs_run_through_the_binary() {
    for path in inputs("fuzz/regressions") {
        let data = std::fs::read(&path).unwrap();
        let Some((&flags, source)) = data.split_first() else {
            continue;
        };
        let mut command = gradcalc();
        command
            .arg("--keep-going")
            .env("NO_COLOR", "1")
            .write_stdin(source.to_vec());
        if flags & 1 == 1 {
            command.arg("--json");
        }
        let output = command.output().unwrap();
        let stderr = stderr_of(&output);
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{}: {:?}\n{stderr}",
            path.display(),
            output.status
        );
        assert!(!stderr.contains("panicked"), "{}: {stderr}", path.display());
    }
}
