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

/// The help line of each error, for inputs whose hint pointed the wrong way
/// (before: `tahn` → `tan`, `d/dx x^2` → `dx*x`, `xy` → `x`, `grad z` →
/// `grad*z`, `|x|` and `x!` → nothing).
#[test]
fn hints_say_what_was_meant() {
    let cases = [
        "tahn(1)",
        "x = 2; d/dx x^2",
        "x = 2; y = x^2; dy/dx",
        "x = 2; derivative of x^2",
        "x = 2; diff(x^2, x)",
        "x = 2; y = x^2; y'",
        "x = 1; y = 2*x; grad x",
        "x = 1; y = 2; z = xy",
        "x1 = 1; w1 = 2; x1w1",
        "x₁ = 1; x₂ = 2; 3x₁x₂",
        "x = 30; sin(x deg)",
        "sin(90°)",
        "x = 1; |x|",
        "x = 3; x!",
        "x = 8; ∛x",
        "x = 2, y = 3",
        "x = 1; y = x*x; :grad(x)",
    ];
    let helps: Vec<String> = cases
        .iter()
        .map(|source| {
            let output = gradcalc().args(["-e", source]).output().expect("runs");
            let stderr = stderr_of(&output);
            let help = stderr.lines().rev().find(|l| l.contains('^')).unwrap_or("");
            format!(
                "{source}\n    {}",
                help.trim_start_matches([' ', '│']).trim()
            )
        })
        .collect();
    expect![[r#"
        tahn(1)
            ^^^^ did you mean `tanh`?
        x = 2; d/dx x^2
            ^^^^ d/dx of an expression is `grad(x^2, x)`
        x = 2; y = x^2; dy/dx
            ^^ for the derivative dy/dx write `grad(y, x)` or `:grad x`; to use `dy` as a name, assign it first: `dy = 1`
        x = 2; derivative of x^2
            ^^^^^^^^^^^^^ gradcalc writes a derivative as `grad(y, x)` (a value), `f'(a)` (of a one-argument function), `:diff y x` (its formula) or `:grad` (every gradient of the output)
        x = 2; diff(x^2, x)
            ^^^^ write `grad` with the same arguments: ∂y/∂x is `grad(y, x)`; `:diff y x` prints its formula
        x = 2; y = x^2; y'
            ^ `f'(a)` is the derivative of a one-argument function at a; for a variable write `grad(y, x)` or `:grad`
        x = 1; y = 2*x; grad x
            ^^^^^^ `:grad x` gives the output's gradient; `grad(y, x)` is ∂y/∂x as a value
        x = 1; y = 2; z = xy
            ^^ to multiply, write `x*y`
        x1 = 1; w1 = 2; x1w1
            ^^^^ to multiply, write `x1*w1`
        x₁ = 1; x₂ = 2; 3x₁x₂
            ^^^^ to multiply, write `x₁*x₂`
        x = 30; sin(x deg)
            ^^^^^ angles are in radians: write `x*pi/180` for x degrees
        sin(90°)
            ^ angles are in radians: write `90*pi/180`
        x = 1; |x|
            ^ write `abs(x)` for |x|
        x = 3; x!
            ^ `!` is not an operator: gradcalc has no factorial; write the product, e.g. `4*3*2*1`
        x = 8; ∛x
            ^ write `cbrt(x)` for the cube root ∛x
        x = 2, y = 3
            ^ separate statements with `;`: `x = 2; y = 3`
        x = 1; y = x*x; :grad(x)
            ^ commands take words, not brackets: `:grad x`"#]]
    .assert_eq(&helps.join("\n"));
}

/// A line that ends in `,` outside brackets is an error at the `,`, not a
/// statement that waits for (and swallows) the next line.
#[test]
fn a_trailing_comma_ends_the_statement() {
    let output = gradcalc()
        .write_stdin("x1 = 2,\nx1 = 3\n")
        .output()
        .expect("runs");
    expect![[r#"
        error: expected an operator or the end of the statement, found `,`
          ┌─ <stdin>:1:7
          │
        1 │ x1 = 2,
          │       ^ separate statements with `;`: `x1 = 2;`

    "#]]
    .assert_eq(&stderr_of(&output));
}

/// `sin x^2` reads as sin(x²) or sin(x)²: both are shown. `sin^2(x)` is the
/// square of sin(x) in print: the fix keeps the square (`sin(x)^2`).
#[test]
fn a_function_without_brackets_and_a_function_power() {
    check(
        "x = 1; sin x^2",
        expect![[r#"
            x = 1
            error: `sin` is a function: call it with parentheses
              ┌─ -e:1:8
              │
            1 │ x = 1; sin x^2
              │        ^^^^^^^ write `sin(x^2)` for sin of x^2, or `sin(x)^2` for the power of sin(x)

        "#]],
    );
    check(
        "x = 1; sin^2(x)",
        expect![[r#"
        x = 1
        error: `sin` is a function, not a value
          ┌─ -e:1:8
          │
        1 │ x = 1; sin^2(x)
          │        ^^^ the power of a call comes after it: `sin(x)^2`

    "#]],
    );
}

/// `f'` alone is the derivative of f, a function: it is called at a point
/// (`f'(2)` = 4 for x²), not written `f(')`; `grad(y)` needs the variable.
#[test]
fn a_derivative_or_grad_without_its_point_says_how_to_write_it() {
    check(
        "f(x) = x^2\nf'",
        expect![[r#"
            defined f(x)
            error: `f` is a function: call it with parentheses
              ┌─ -e:2:1
              │
            2 │ f'
              │ ^^ write `f'(2)` for the derivative of f at 2 (any point in the brackets)

        "#]],
    );
    check(
        "x = 2; y = x^2\ngrad(y)",
        expect![[r#"
            x = 2
            y = 4
            error: `grad` takes 2 arguments, got 1
              ┌─ -e:2:1
              │
            2 │ grad(y)
              │ ^^^^^^^ write `grad(y, x)` for ∂y/∂x: the expression, then the variable

        "#]],
    );
}
