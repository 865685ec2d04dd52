//! `gradcalc completions SHELL` and `gradcalc man`, through the binary: the
//! completion script is one the shell itself accepts and that registers a
//! completion for `gradcalc`; the manual page is roff that `man` renders
//! with the options of `--help`.

use std::process::Command;

use crate::util::gradcalc;

/// The binary's standard output for `args`, which must succeed.
fn printed(args: &[&str]) -> String {
    let output = gradcalc().args(args).output().expect("runs");
    assert!(output.status.success(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).expect("UTF-8")
}

#[test]
fn bash_accepts_the_completion_script_and_completes_gradcalc() {
    let script = printed(&["completions", "bash"]);
    assert!(script.contains("--allow-writes-anywhere"));
    let Ok(bash) = Command::new("bash")
        .args(["-c", "eval \"$SCRIPT\" && complete -p gradcalc"])
        .env("SCRIPT", &script)
        .output()
    else {
        return; // no bash here: the text checks above stand
    };
    assert!(bash.status.success(), "{bash:?}");
    // bash's own listing of the completion it registered.
    assert!(
        String::from_utf8_lossy(&bash.stdout).contains("-F _gradcalc"),
        "{bash:?}"
    );
}

#[test]
fn every_shell_gets_its_script() {
    assert!(printed(&["completions", "zsh"]).starts_with("#compdef gradcalc"));
    assert!(printed(&["completions", "fish"]).contains("complete -c gradcalc"));
    assert!(printed(&["completions", "powershell"]).contains("Register-ArgumentCompleter"));
    assert!(
        printed(&["completions", "elvish"]).contains("edit:completion:arg-completer[gradcalc]")
    );
}

#[test]
fn an_unknown_shell_is_a_usage_error_naming_the_shells() {
    let output = gradcalc()
        .args(["completions", "tcsh"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("invalid value 'tcsh'"), "{error}");
    assert!(error.contains("bash") && error.contains("zsh"), "{error}");
}

#[test]
fn the_manual_page_renders_with_the_options() {
    let page = printed(&["man"]);
    assert!(
        page.contains(".TH gradcalc 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    assert!(page.contains("allow\\-writes\\-anywhere"));
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("gradcalc.1");
    std::fs::write(&path, &page).expect("written");
    // `man` renders it as a reader sees it (skipped where there is no man).
    let Ok(man) = Command::new("man")
        .arg("-l")
        .arg(&path)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
    else {
        return;
    };
    if !man.status.success() {
        return; // `man` without its formatter (groff) installed
    }
    // Words as `man` justifies them: one space between each.
    let text = String::from_utf8_lossy(&man.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(text.contains("NAME"), "{text}");
    assert!(
        text.contains("gradcalc - A calculator with gradients"),
        "{text}"
    );
    assert!(text.contains("--allow-writes-anywhere"), "{text}");
    assert!(text.contains("completions"), "{text}");
}

#[test]
fn a_script_named_like_a_tool_runs_as_a_path() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("man"), "x = 2\nx*3\n").expect("written");
    let output = gradcalc()
        .current_dir(dir.path())
        .arg("./man")
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "x = 2\n6\n");
}
