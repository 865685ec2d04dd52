//! README.md's examples, run through the binary and compared with the text the
//! README shows, so that the page cannot drift from the program.
//!
//! An example is a ```` ```text ```` block that shows a command with its output:
//! a `$ gradcalc …` (or `$ cargo run --release [-- …]`) line runs that command
//! through `sh` with the built binary first on `PATH`; the lines after it up to
//! the next `$` line are what it prints (stdout and stderr merged, in the order
//! a terminal shows them). A line starting
//! with `> ` is a REPL input line: those lines are fed to the command's standard
//! input (a block of `> ` lines without a `$` line runs plain `gradcalc`), and the
//! other lines are the expected output. The REPL's banner line (`gradcalc 0.1.0 —
//! …`), printed only at a terminal, is skipped. Blocks with neither (lists of
//! commands) are not examples. The comparison is exact but for trailing blank
//! lines.

use std::path::Path;
use std::process::Command;

use super::util::in_crate;

/// One runnable example: where it starts in README.md, the shell command, the
/// REPL lines for its stdin, and the text it must print.
#[derive(Debug)]
struct Example {
    line: usize,
    command: String,
    stdin: String,
    expected: String,
}

/// The examples of a Markdown text, in order (see the module comment).
fn examples(markdown: &str) -> Vec<Example> {
    let mut found = Vec::new();
    let mut block: Option<Vec<(usize, &str)>> = None;
    for (number, line) in markdown.lines().enumerate() {
        match &mut block {
            None if line.trim_start() == "```text" => block = Some(Vec::new()),
            None => {}
            Some(lines) if line.trim_start() == "```" => {
                examples_of_block(lines, &mut found);
                block = None;
            }
            Some(lines) => lines.push((number + 1, line)),
        }
    }
    found
}

fn examples_of_block(lines: &[(usize, &str)], found: &mut Vec<Example>) {
    let has_command = lines.iter().any(|(_, l)| command_of(l).is_some());
    let has_input = lines.iter().any(|(_, l)| l.starts_with("> "));
    if !has_command && !has_input {
        return;
    }
    let mut current: Option<Example> = None;
    for &(number, line) in lines {
        if let Some(command) = command_of(line) {
            found.extend(current.take());
            current = Some(Example {
                line: number,
                command,
                stdin: String::new(),
                expected: String::new(),
            });
            continue;
        }
        let example = current.get_or_insert_with(|| Example {
            line: number,
            command: "gradcalc".to_owned(),
            stdin: String::new(),
            expected: String::new(),
        });
        if let Some(input) = line.strip_prefix("> ") {
            example.stdin.push_str(input);
            example.stdin.push('\n');
        } else if !is_banner(line) {
            example.expected.push_str(line);
            example.expected.push('\n');
        }
    }
    found.extend(current);
}

/// The command of a `$ …` line that runs gradcalc, with `cargo run --release
/// [--]` written as `gradcalc`.
fn command_of(line: &str) -> Option<String> {
    let command = line.strip_prefix("$ ")?.trim();
    if let Some(rest) = command.strip_prefix("cargo run --release") {
        let args = rest.trim_start().strip_prefix("--").unwrap_or(rest);
        return Some(format!("gradcalc{args}"));
    }
    command.starts_with("gradcalc").then(|| command.to_owned())
}

/// The REPL's greeting, e.g. `gradcalc 0.1.0 — a calculator with gradients. …`.
fn is_banner(line: &str) -> bool {
    line.starts_with(&format!("gradcalc {} ", env!("CARGO_PKG_VERSION")))
}

/// Runs one example in the crate's root and returns what it printed, stderr
/// merged into stdout in the order a terminal shows them.
fn run(example: &Example) -> String {
    use std::io::Write;
    let binary = Path::new(env!("CARGO_BIN_EXE_gradcalc"));
    let path = match std::env::var_os("PATH") {
        Some(rest) => {
            let mut dirs = vec![binary.parent().unwrap().to_path_buf()];
            dirs.extend(std::env::split_paths(&rest));
            std::env::join_paths(dirs).unwrap()
        }
        None => binary.parent().unwrap().as_os_str().to_owned(),
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("{{ {}\n}} 2>&1", example.command))
        .current_dir(in_crate(""))
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env("LC_ALL", "C.UTF-8")
        .env("GRADCALC_HISTORY", "off")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sh runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(example.stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn every_readme_example_prints_what_the_readme_shows() {
    let readme = std::fs::read_to_string(in_crate("README.md")).unwrap();
    let examples = examples(&readme);
    // The tour, the error report, the JSON lines and the paths transcript.
    assert!(examples.len() >= 4, "examples found: {examples:#?}");
    let mut drifted = Vec::new();
    for example in &examples {
        let actual = run(example);
        if actual.trim_end() != example.expected.trim_end() {
            drifted.push(format!(
                "README.md:{}: `{}`\n--- README shows:\n{}\n--- the program prints:\n{}",
                example.line,
                example.command,
                example.expected.trim_end(),
                actual.trim_end()
            ));
        }
    }
    assert!(drifted.is_empty(), "{}", drifted.join("\n\n"));
}

#[test]
fn readme_examples_are_found_as_described() {
    // A check of the reader itself on a made-up page: a transcript with its
    // banner, a `$` line with output, and a list that is not an example.
    let page = format!(
        "```text\n$ cargo run --release\ngradcalc {} — hi\n> x = 2\nx = 2\n```\n\
         ```text\n$ gradcalc -e '1+1'\n2\n$ gradcalc --json -e '1'\n{{}}\n```\n\
         ```text\n:graph   the graph\n```\n",
        env!("CARGO_PKG_VERSION")
    );
    let found = examples(&page);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert_eq!(found[0].command, "gradcalc");
    assert_eq!(found[0].stdin, "x = 2\n");
    assert_eq!(found[0].expected, "x = 2\n");
    assert_eq!(found[1].command, "gradcalc -e '1+1'");
    assert_eq!(found[1].expected, "2\n");
    assert_eq!(found[2].command, "gradcalc --json -e '1'");
}
