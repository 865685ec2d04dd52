//! The mechanical invariants of ARCHITECTURE.md, checked on the source text,
//! and the function lists of the docs against the op table.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gradcalc::engine::Op;

use crate::util::in_crate;

/// Every `.rs` file below `src/` (relative paths, `/`-separated), each with
/// its text up to its unit tests (`#[cfg(test)]`); `tests.rs` files left out.
fn sources() -> Vec<(String, String)> {
    let root = in_crate("src");
    let mut files = Vec::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path: PathBuf = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "tests.rs")
            {
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap().to_string();
                files.push((relative(&root, &path), code));
            }
        }
    }
    files.sort();
    files
}

fn relative(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap();
    relative.to_string_lossy().replace('\\', "/")
}

/// The places (`file: line`) among `files` whose code holds one of `words`,
/// comments left out.
fn uses<'a>(files: impl Iterator<Item = &'a (String, String)>, words: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (file, code) in files {
        for (number, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap();
            if words.iter().any(|word| line.contains(word)) {
                found.push(format!("{file}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    found
}

/// The files of `src/` below `folder` (`"syntax/"`) or named `folder`.
fn under<'a>(
    files: &'a [(String, String)],
    folder: &'a str,
) -> impl Iterator<Item = &'a (String, String)> {
    files
        .iter()
        .filter(move |(file, _)| file.starts_with(folder))
}

/// Asserts that no file below `src/FOLDER` names one of `modules`.
#[track_caller]
fn imports_nothing_from(folder: &str, modules: &[&str]) {
    let files = sources();
    let words: Vec<String> = modules.iter().map(|m| format!("crate::{m}")).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let found = uses(under(&files, folder), &words);
    assert!(found.is_empty(), "{folder} uses {modules:?}: {found:#?}");
}

#[test]
fn syntax_knows_nothing_of_graphs_sessions_or_output() {
    imports_nothing_from("syntax/", &["engine", "session", "render", "repl"]);
}

/// The session makes events and knows nothing of how they are shown: no
/// renderer, no front end, no browser page (`render`, `repl`, `web` use it,
/// never the other way round).
#[test]
fn the_session_imports_nothing_from_the_renderers() {
    imports_nothing_from("session/", &["render", "repl", "web", "driver"]);
}

/// The engine is a library of its own: even Ctrl-C reaches it as a value
/// passed in, not through `crate::interrupt`.
#[test]
fn the_engine_knows_nothing_of_text_sessions_or_output() {
    let modules = [
        "syntax",
        "session",
        "render",
        "repl",
        "driver",
        "files",
        "interrupt",
    ];
    imports_nothing_from("engine/", &modules);
}

#[test]
fn only_the_front_end_and_the_renderers_write_to_the_terminal_or_files() {
    let files = sources();
    let front = ["render/", "repl/", "driver.rs", "main.rs", "files.rs"];
    let others = files
        .iter()
        .filter(|(file, _)| !front.iter().any(|f| file.starts_with(f)));
    let words = [
        "println!",
        "print!(",
        "io::stdout",
        "io::stderr",
        "File::create",
        "fs::write",
        "OpenOptions",
    ];
    let found = uses(others, &words);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn only_the_renderers_and_the_repl_know_about_colour() {
    let files = sources();
    let others = files
        .iter()
        .filter(|(file, _)| !file.starts_with("render/") && !file.starts_with("repl/"));
    let found = uses(others, &["owo_colors", "\\x1b[", "\\u{1b}["]);
    assert!(found.is_empty(), "{found:#?}");
}

/// The function names of a list written as one code span after `heading` in
/// `doc`: words, with what is in brackets left out (`log (= ln)`, `min(a, b,
/// …)` and `log(x, b)` give `log` and `min`).
fn listed_functions(doc: &str, heading: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(in_crate(doc)).unwrap();
    let after = text
        .split_once(heading)
        .unwrap_or_else(|| panic!("{doc} has no {heading:?}"))
        .1;
    let span = after.split('`').nth(1).unwrap();
    let mut words = String::new();
    let mut depth = 0;
    for c in span.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => words.push(c),
            _ => {}
        }
    }
    words.split_whitespace().map(str::to_string).collect()
}

#[test]
fn every_function_list_in_the_docs_is_the_op_table() {
    let table: BTreeSet<String> = Op::function_names().map(str::to_string).collect();
    for (doc, heading) in [
        ("README.md", "- **Functions**: "),
        ("docs/language.md", "## 4. Functions built in"),
    ] {
        let listed = listed_functions(doc, heading);
        let missing: Vec<_> = table.difference(&listed).collect();
        let unknown: Vec<_> = listed.difference(&table).collect();
        assert!(
            missing.is_empty() && unknown.is_empty(),
            "{doc}: the op table's functions {missing:?} are not listed; {unknown:?} are not in the op table"
        );
    }
}

/// The REPL holds no browser logic: the page's model, the live server and
/// its sockets are `web/` (`web/serve.rs` for `:serve`).
#[test]
fn the_repl_holds_no_browser_logic() {
    let files = sources();
    let words = [
        "html::",
        "web::page",
        "TcpListener",
        "TcpStream",
        "page_model",
        "serde_json",
    ];
    let found = uses(under(&files, "repl/"), &words);
    assert!(found.is_empty(), "browser logic in repl/: {found:#?}");
    assert!(files.iter().any(|(file, _)| file == "web/serve.rs"));
}

/// The page is drawn in one place and served by the other: `render/` draws
/// it (`render/html.rs`) and names nothing of `web/`, which serves it.
#[test]
fn render_draws_the_page_and_web_serves_it() {
    imports_nothing_from("render/", &["web", "repl", "driver"]);
    assert!(sources().iter().any(|(file, _)| file == "render/html.rs"));
}

/// The playground's and the page's scripts.
const PAGE_SCRIPTS: [&str; 4] = [
    "web/playground.js",
    "web/worker.js",
    "web/page.js",
    "web/assignment.js",
];

/// Command names are matched nowhere: a command is treated apart by its
/// row's columns (`InRepl`, `Traits`, what it does for a tensor output,
/// `TensorCommand`), never by comparing its name — the command table
/// (`session/command.rs`) included, whose rows name each command once. Checked
/// as: no command written as typed (`":grad"`) outside the grammar's printer
/// (which writes `:repeat` back), and no name compared or matched (`==
/// "step"`, `"serve" =>`, `| "quit"`) in the session, the front ends or the
/// browser's side — but in the evaluator, its errors and its hints, which
/// read function names (`grad(y, x)`; `diff(…)` suggests `:diff`). One-letter
/// aliases (`q`) are keys and variable names too, and left out.
#[test]
fn command_names_are_matched_only_in_the_command_table() {
    let files = sources();
    let names: Vec<&str> = gradcalc::session::COMMANDS
        .iter()
        .flat_map(|spec| std::iter::once(spec.name).chain(spec.aliases.iter().copied()))
        .filter(|name| name.len() > 1)
        .collect();
    let typed: Vec<String> = names.iter().map(|name| format!("\":{name}\"")).collect();
    let typed: Vec<&str> = typed.iter().map(String::as_str).collect();
    let found = uses(
        files.iter().filter(|(file, _)| file != "syntax/print.rs"),
        &typed,
    );
    assert!(
        found.is_empty(),
        "commands written outside the table: {found:#?}"
    );
    let mut matched = Vec::new();
    for name in &names {
        for pattern in ["== \"{}\"", "\"{}\" =>", "\"{}\" |", "| \"{}\""] {
            matched.push(pattern.replace("{}", name));
        }
    }
    let matched: Vec<&str> = matched.iter().map(String::as_str).collect();
    // No file is exempt: the evaluator, its errors and its hints name the
    // functions that share a command's name (`grad`, `diff`) by a constant.
    let dispatching = files.iter().filter(|(file, _)| {
        ["session/", "repl/", "web/", "driver.rs", "main.rs"]
            .iter()
            .any(|folder| file.starts_with(folder))
    });
    let found = uses(dispatching, &matched);
    assert!(
        found.is_empty(),
        "command names matched outside the table: {found:#?}"
    );
    // The playground's page reads the names it acts on from the table (the
    // worker's `gradcalc_commands`): no command written in its scripts as a
    // string or a regular expression.
    for script in PAGE_SCRIPTS {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(script)).unwrap();
        for name in &names {
            for pattern in [
                format!("\":{name}\""),
                format!(":{name}\\b"),
                format!("'{name}'"),
                // An alternation of a regular expression: `:(grad|trace)\b`.
                format!("({name}|"),
                format!("|{name}|"),
                format!("|{name})"),
            ] {
                assert!(
                    !text.contains(&pattern),
                    "{script} matches the command `:{name}` itself ({pattern}): read it from the table"
                );
            }
        }
    }
    // The Python package reads them from the table too (`cell_source`): no
    // name compared or matched in its Rust (as above) or its Python (a
    // typed command compared, looked up or tested as a prefix; running one,
    // as `trace(v)` runs `:trace`, is no match).
    let python = |folder: &str, extension: &str| -> Vec<(String, String)> {
        let root = in_crate(folder);
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&root).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == extension) {
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap().to_string();
                files.push((format!("{folder}/{}", relative(&root, &path)), code));
            }
        }
        files
    };
    let rust = python("python/src", "rs");
    assert!(!rust.is_empty(), "python/src is read");
    let found = uses(rust.iter(), &matched);
    assert!(
        found.is_empty(),
        "command names matched in python/src: {found:#?}"
    );
    let mut typed_matches = Vec::new();
    for name in &names {
        for pattern in [
            "== \":{}\"",
            "!= \":{}\"",
            "in (\":{}\"",
            "in [\":{}\"",
            "in {\":{}\"",
            "startswith(\":{}",
            "== ':{}'",
            "startswith(':{}",
        ] {
            typed_matches.push(pattern.replace("{}", name));
        }
    }
    let typed_matches: Vec<&str> = typed_matches.iter().map(String::as_str).collect();
    let scripts = python("python/gradcalc", "py");
    assert!(!scripts.is_empty(), "python/gradcalc is read");
    let found = uses(scripts.iter(), &typed_matches);
    assert!(
        found.is_empty(),
        "command names matched in python/gradcalc: {found:#?}"
    );
}

/// One value model (ARCHITECTURE.md, "One value model"): the session holds
/// one name table, one output and one `ans` for numbers and tensors alike,
/// so no code reaches for a second one (`tensors.vars`, `tensors.output`,
/// `tensors.last`) and no event is a tensor twin (`Event::Tensor…`); the
/// tensor module keeps its graph, generator and undo journal and the
/// evaluator of tensor expressions, under 900 lines; a function named
/// `tensor_…` is one of the arena's own (at most 10), and a command's
/// tensor case lives beside its scalar case, by job. `TensorCommand` is a
/// column of the command table only.
#[test]
fn one_value_model_one_name_table_and_each_command_once() {
    let files = sources();
    let session = || under(&files, "session/");
    let second = uses(
        session(),
        &["tensors.vars", "tensors.output", "tensors.last"],
    );
    assert!(
        second.is_empty(),
        "a second name table, output or ans: {second:#?}"
    );
    let twins = uses(files.iter(), &["Event::Tensor"]);
    assert!(twins.is_empty(), "tensor twins of events: {twins:#?}");
    let tensor_functions = uses(files.iter(), &["fn tensor_"]);
    assert!(
        tensor_functions.len() <= 10,
        "{} functions named `tensor_…` (at most 10, the arena's own): {tensor_functions:#?}",
        tensor_functions.len()
    );
    let whole = std::fs::read_to_string(in_crate("src/session/tensors.rs")).unwrap();
    let lines = whole.lines().count();
    assert!(
        lines < 900,
        "src/session/tensors.rs has {lines} lines (fewer than 900)"
    );
    let column = uses(
        files
            .iter()
            .filter(|(file, _)| file != "session/command.rs"),
        &["TensorCommand"],
    );
    assert!(
        column.is_empty(),
        "TensorCommand outside the command table: {column:#?}"
    );
}

/// The function table (`session/tensors/builtins.rs`) against the docs,
/// written by hand: its names are the functions of docs/language.md §4,
/// `grad`, and the functions of vectors and matrices of §9; `:help` lists
/// each function of §9 and answers `:help NAME` for it.
#[test]
fn the_function_table_is_the_docs_lists_and_help_lists_it() {
    let table: BTreeSet<String> = gradcalc::session::builtin_names()
        .map(str::to_string)
        .collect();
    let tensors = listed_functions(
        "docs/language.md",
        "**Functions of vectors and matrices**: ",
    );
    let mut listed = listed_functions("docs/language.md", "## 4. Functions built in");
    listed.extend(tensors.iter().cloned());
    listed.insert("grad".to_string());
    assert_eq!(
        table, listed,
        "the function table and docs/language.md §4 and §9"
    );
    let mut session = gradcalc::session::Session::new();
    let help = |session: &mut gradcalc::session::Session, topic: &str| {
        let source = format!(":help {topic}").trim_end().to_string();
        let span = gradcalc::syntax::Span::new(0, source.len());
        match session.run_statement(&source, span).as_deref() {
            Ok([gradcalc::session::Event::Help { text, .. }]) => text.clone(),
            other => panic!("{source}: {other:?}"),
        }
    };
    let overview = help(&mut session, "");
    let words: BTreeSet<&str> = overview
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    for name in &tensors {
        assert!(
            words.contains(name.as_str()),
            "`:help` does not list {name}"
        );
        let text = help(&mut session, name);
        assert!(text.contains(name.as_str()), ":help {name}: {text}");
    }
}

/// Tensor functions resolve through the function table like every other
/// name: no function of the table is matched by name (`"softmax" =>`, `==
/// "sum"`, `| "argmax"`) outside its rows, in the session (the evaluator,
/// help, hints) for every name, and anywhere in `src/` for the functions of
/// vectors and matrices (docs/language.md §9, read by hand apart from the table).
#[test]
fn no_function_is_dispatched_by_name_outside_the_function_table() {
    let files = sources();
    let patterns = |names: &mut dyn Iterator<Item = String>| -> Vec<String> {
        names
            .flat_map(|name| {
                ["\"{}\" =>", "== \"{}\"", "\"{}\" |", "| \"{}\""]
                    .map(|pattern| pattern.replace("{}", &name))
            })
            .collect()
    };
    let table = "session/tensors/builtins.rs";
    let outside = || files.iter().filter(|(file, _)| file != table);
    let every = patterns(&mut gradcalc::session::builtin_names().map(str::to_string));
    let every: Vec<&str> = every.iter().map(String::as_str).collect();
    let found = uses(
        outside().filter(|(file, _)| file.starts_with("session/")),
        &every,
    );
    assert!(
        found.is_empty(),
        "functions matched by name in the session: {found:#?}"
    );
    let tensors = listed_functions(
        "docs/language.md",
        "**Functions of vectors and matrices**: ",
    );
    let tensors = patterns(&mut tensors.into_iter());
    let tensors: Vec<&str> = tensors.iter().map(String::as_str).collect();
    let found = uses(outside(), &tensors);
    assert!(
        found.is_empty(),
        "tensor functions matched by name: {found:#?}"
    );
}
