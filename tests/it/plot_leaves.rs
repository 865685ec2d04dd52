//! `:plot NAME` moves a leaf and recomputes the output from it; a derived
//! value is refused with the leaves it is built from (before, `:plot yy` of
//! the output `yy` drew the identity: the output against itself).

use crate::util::{output_of, stderr_of, stdout_of};

#[test]
fn plotting_a_derived_value_is_refused_naming_its_leaves() {
    // yy = x*w + b is built from the leaves b, w, x (sorted by name).
    let out = output_of(&["-e", "x = 2; w = 3; b = 1; yy = x*w + b;\n:plot yy"]);
    assert_eq!(stdout_of(&out), "");
    assert_eq!(
        stderr_of(&out),
        "error: yy is a derived value, not a leaf: `:plot` moves a leaf and recomputes the output from it\n  \
         ┌─ -e:2:7\n  │\n2 │ :plot yy\n  │       ^^ plot a leaf it is built from: `b`, `w`, `x` (e.g. `:plot b`)\n\n"
    );
    assert_eq!(out.status.code(), Some(1));
    // One leaf: named as the command to type.
    let out = output_of(&["-e", "x = 2; h = x^2; L = h + 1;\n:plot h -1 1"]);
    assert!(
        stderr_of(&out).contains("plot the leaf it is built from: `:plot x`"),
        "{}",
        stderr_of(&out)
    );
    // The leaf itself still plots: L = x² + 1 at x = 2 is 5.
    let out = output_of(&["-e", "x = 2; h = x^2; L = h + 1;\n:plot x"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(stdout_of(&out).contains("L"), "{}", stdout_of(&out));
}
