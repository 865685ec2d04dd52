//! Hints that point the right way, and lines that are never read silently in
//! the less usual way: each input through the binary, the whole report
//! compared (issue 21's catalogue). Each expected text was checked by hand
//! against what a reader of the input meant.

use expect_test::{Expect, expect};

use crate::util::{gradcalc, stderr_of, stdout_of};

/// Runs `gradcalc -e source` and compares standard output then standard error.
fn check(source: &str, expected: Expect) {
    let output = gradcalc().args(["-e", source]).output().expect("runs");
    let text = format!("{}{}", stdout_of(&output), stderr_of(&output));
    expected.assert_eq(&text);
}

/// `e^-2x` agrees in value with e^(−2x) at x = 1 but not in derivative
/// (−2e⁻² = −0.2706705665 against e⁻² = 0.1353352832): refused with both
/// readings, each of which then gives its own derivative.
#[test]
fn an_implicit_product_after_an_exponent_is_refused_with_both_readings() {
    check(
        "x = 1; e^-2x",
        expect![[r#"
            x = 1
            error: an implicit product right after an exponent is ambiguous: `e^-2x`
              ┌─ -e:1:8
              │
            1 │ x = 1; e^-2x
              │        ^^^^^ in the exponent: `e^(-2x)`; a factor after the power: `e^(-2)*x`

        "#]],
    );
    check(
        "x = 1; y = e^(-2x); :grad x; y = e^(-2)*x; :grad x",
        expect![[r#"
            x = 1
            y = 0.1353352832
            ∂y/∂x = -0.2706705665
            y = 0.1353352832
            ∂y/∂x = 0.1353352832
        "#]],
    );
    check(
        "x = 1; y = 2; x^2y",
        expect![[r#"
            x = 1
            y = 2
            error: an implicit product right after an exponent is ambiguous: `x^2y`
              ┌─ -e:1:15
              │
            1 │ x = 1; y = 2; x^2y
              │               ^^^^ in the exponent: `x^(2y)`; a factor after the power: `x^2*y`

        "#]],
    );
    check(
        "x = 1; 2^3(x+1)",
        expect![[r#"
        x = 1
        error: an implicit product right after an exponent is ambiguous: `2^3(x+1)`
          ┌─ -e:1:8
          │
        1 │ x = 1; 2^3(x+1)
          │        ^^^^^^^^ in the exponent: `2^(3(x+1))`; a factor after the power: `2^3*(x+1)`

    "#]],
    );
    check(
        "x = 1; 2^-2 x",
        expect![[r#"
        x = 1
        error: an implicit product right after an exponent is ambiguous: `2^-2 x`
          ┌─ -e:1:8
          │
        1 │ x = 1; 2^-2 x
          │        ^^^^^^ in the exponent: `2^(-2 x)`; a factor after the power: `2^(-2)*x`

    "#]],
    );
    // A product before the power, a bracket product and a superscript stay.
    check(
        "x = 3; 2x^2; 2(x+1); (x+1)(x-1); 2²x",
        expect![[r#"
            x = 3
            18
            8
            8
            12
        "#]],
    );
}
