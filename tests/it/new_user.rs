//! What a new user met in a first session of the vectorised lecture, each
//! through the binary: a lecturer's `grad(L, W)` differentiated again, a
//! student's typos (a stray `]`, PyTorch's `keepdim`), and the words of the
//! errors of `:check` and `:descend` given a name that is no parameter.

use crate::util::{assert_contains, output_of, stderr_of, stdout_of};

/// `gradcalc --keep-going -e SCRIPT`: its standard output and error.
fn run(script: &str) -> (String, String) {
    let output = output_of(&["--keep-going", "-e", script]);
    let stderr = stderr_of(&output);
    assert!(!stderr.contains("panicked"), "{stderr}");
    (stdout_of(&output), stderr)
}

/// A tensor `grad(L, W)` is a value held fixed, so a backward pass through
/// it would give 0 where the second derivative is not: with
/// `G = grad(sum(W*W), W) = 2W`, ∂sum(G)/∂W is 2 per element (by hand), and
/// with `L = mean((w*xs - ys)^2)`, ∂²L/∂w² = 2·mean(xs²) = 28/3 for
/// xs = [1, 2, 3]. `grad(grad(…))` was refused, but `:grad`, `:check` and
/// `:descend` of such an output printed 0 (`:check` even said "pass");
/// they are refused as `grad` is, and say so.
#[test]
fn a_gradient_of_a_tensor_gradient_is_refused_by_every_command() {
    let (stdout, stderr) = run("W = [1, 2]; G = grad(sum(W*W), W)\n:grad W\n\
         xs = [1, 2, 3]; ys = [2, 4, 6]; w = 0.5; L = mean((w*xs - ys)^2)\n\
         g = grad(L, w)\n:grad w\n:check w\n:descend g lr=0.1 steps=2 w\nh = g*w\n:grad");
    // The values themselves are right: 2W, and 2·mean((w·xs − ys)·xs) =
    // 2·(−1.5·1 − 3·2 − 4.5·3)/3 = −14.
    assert_contains(&stdout, "G = [2, 4]  (2)");
    assert_contains(&stdout, "g = -14");
    assert!(!stdout.contains("∂G/∂W"), "{stdout}");
    assert!(!stdout.contains("∂g/∂w"), "{stdout}");
    assert!(!stdout.contains("∂h/∂w"), "{stdout}");
    assert!(!stdout.contains("pass"), "{stdout}");
    assert_eq!(
        stderr
            .matches("error: a gradient of a gradient of tensors is not supported")
            .count(),
        5,
        "{stderr}"
    );
    assert_contains(
        &stderr,
        "2 │ :grad W\n  │  ^^^^ higher-order derivatives work for scalars",
    );
    assert_contains(&stderr, "6 │ :check w\n  │  ^^^^^");
}
