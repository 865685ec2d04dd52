//! A called name means what its row of the function table says, in a
//! statement of numbers and of tensors alike (docs/language.md §9,
//! "Functions of vectors and matrices"): the cases where the two paths
//! used to answer differently, through the binary.

use crate::tensor_help::{error_of, run};
use crate::util::assert_contains;

/// A function whose body calls a function of tensors, called with
/// numbers, gives what its body typed gives: sum(2) = 2 (it was "unknown
/// function `sum`"); `maximum`, an elementwise op, takes the numbers:
/// maximum(-2, 0) = 0, maximum(2, 0) = 2 (it was "unknown function").
#[test]
fn a_function_of_tensors_called_with_numbers_gives_what_its_body_gives() {
    assert_contains(&run("f(x) = sum(x)\nL = f(2)"), "L = 2\n");
    let out = run("relu2(x) = maximum(x, 0)\na = relu2(-2)\nb = relu2(2)");
    assert_contains(&out, "a = 0\n");
    assert_contains(&out, "b = 2\n");
}

/// A user function named like a tensor function is called, in a tensor
/// statement too, as `argmax(x) = …` was: sum(3) = 3·2 = 6, and sum([1, 2])
/// = [2, 4] (before, the built-in `sum` was taken: 3 and 3).
#[test]
fn a_user_function_named_like_a_tensor_function_is_the_one_called() {
    let out = run("sum(x) = x*2\na = sum(3)\nv = sum([1, 2])");
    assert_contains(&out, "a = 6\n");
    assert_contains(&out, "v = [2, 4]  (2)\n");
}

/// Counts of arguments as the table gives them: `mean` takes an axis (it
/// said "takes 1 argument"), `log` of tensors a base as of numbers.
#[test]
fn wrong_counts_name_what_the_function_takes() {
    assert_contains(
        &error_of("W = [[1, 2], [3, 4]]\nmean(W, 1, 2)"),
        "error: `mean` takes 1 or 2 arguments, got 3",
    );
    for source in ["log([1, 2], 2, 3)", "log(1, 2, 3)"] {
        assert_contains(
            &error_of(source),
            "error: `log` takes 1 or 2 arguments, got 3",
        );
    }
}

/// `min(x)` of a number variable in a tensor statement is that number (it
/// said "`min` of one tensor is not supported"): min(2) + sum([1]) = 3.
#[test]
fn min_of_a_number_in_a_tensor_statement_is_the_number() {
    assert_contains(&run("x = 2\nv = [1]\nL = min(x) + sum(v)"), "L = 3\n");
}

/// `sum(W, axis, keepdims)` reads its axis as `sum(W, axis)` does: -1 is
/// the last (row sums 1 + 2 = 3, 3 + 4 = 7, as a 2×1 column; it was refused
/// as "a whole number from 0 up"), and an axis W lacks is named.
#[test]
fn keepdims_takes_a_negative_axis_as_the_other_reductions() {
    let out = run("W = [[1, 2], [3, 4]]\nS = sum(W, -1, keepdims)");
    assert_contains(&out, "S = 2×1\n   [[3],\n    [7]]");
    assert_contains(
        &error_of("W = [[1, 2], [3, 4]]\nsum(W, 2, keepdims)"),
        "error: sum over axis 2: a tensor of 2 axes has axes 0 to 1 (or -2 to -1, counted from the last)",
    );
}

/// A constant called in a tensor statement is a value called, as in a
/// statement of numbers (it was "unknown function `pi`").
#[test]
fn a_constant_called_with_a_tensor_is_a_value_not_a_function() {
    for source in ["pi([1, 2])", "pi(2)"] {
        let error = error_of(source);
        assert_contains(&error, "error: `pi` is a variable, not a function");
        assert_contains(&error, "to multiply, write `pi*(…)`");
    }
}
