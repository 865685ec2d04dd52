//! What the user most likely meant by a name gradcalc does not know: two
//! defined names glued together (`xy` for `x*y`), or another language's
//! derivative notation (`dy/dx`, `diff(y, x)`). Each returns the whole help
//! line of the error, or `None` (then "did you mean" or "assign it first").

/// The longest unknown name (in characters) that is tried as glued names: the
/// split costs time proportional to the square of the length.
const MAX_GLUED: usize = 32;

use super::SessionError;
use crate::syntax::{DERIVATIVE_SPELLINGS, TokenKind, Tokens};

/// `name` cut into two or more names that `defined` knows, fewest pieces first
/// (`xy` → `x*y`, `x1w1` → `x1*w1`, `x₁x₂` → `x₁*x₂`), joined with `*`.
pub(super) fn glued_names(name: &str, defined: impl Fn(&str) -> bool) -> Option<String> {
    let bounds: Vec<usize> = name
        .char_indices()
        .map(|(i, _)| i)
        .chain([name.len()])
        .collect();
    if bounds.len() - 1 > MAX_GLUED {
        return None;
    }
    // best[k]: the fewest defined names that make up name[..bounds[k]], and
    // where the last of them starts.
    let mut best: Vec<Option<(usize, usize)>> = vec![None; bounds.len()];
    best[0] = Some((0, 0));
    for end in 1..bounds.len() {
        for start in 0..end {
            let Some((pieces, _)) = best[start] else {
                continue;
            };
            let piece = &name[bounds[start]..bounds[end]];
            if defined(piece) && best[end].is_none_or(|(p, _)| pieces + 1 < p) {
                best[end] = Some((pieces + 1, start));
            }
        }
    }
    let (pieces, _) = best[bounds.len() - 1]?;
    if pieces < 2 {
        return None;
    }
    let mut parts = Vec::with_capacity(pieces);
    let mut end = bounds.len() - 1;
    while end > 0 {
        let (_, start) = best[end]?;
        parts.push(&name[bounds[start]..bounds[end]]);
        end = start;
    }
    parts.reverse();
    Some(parts.join("*"))
}

/// The help for the unknown name `name`, when it reads as glued names or as
/// the `dy` of `dy/dx`; `defined` says which names have a value.
pub(super) fn unknown_name_hint(name: &str, defined: impl Fn(&str) -> bool) -> Option<String> {
    if let Some(product) = glued_names(name, &defined) {
        return Some(format!("to multiply, write `{product}`"));
    }
    let rest = name.strip_prefix('d')?;
    let mut chars = rest.chars();
    let one_letter = chars.next().is_some_and(char::is_alphabetic) && chars.next().is_none();
    (one_letter || defined(rest)).then(|| {
        format!("for the derivative d{rest}/dx write `grad({rest}, x)` or `:grad x`; to use `{name}` as a name, assign it first: `{name} = 1`")
    })
}

/// The help for a call of the unknown function `name` that another language
/// uses for derivatives (`diff(x^2, x)`, `D(f)`).
pub(super) fn unknown_function_hint(name: &str) -> Option<String> {
    /// Mathematica's and SymPy's word, also gradcalc's command `:diff`.
    const DIFF_FUNCTION: &str = "diff";
    /// numpy's product, also gradcalc's command `:dot`.
    const DOT_FUNCTION: &str = "dot";
    match name {
        DIFF_FUNCTION | "derivative" | "deriv" | "Derivative" | "differentiate" => Some(
            "write `grad` with the same arguments: ∂y/∂x is `grad(y, x)`; `:diff y x` prints its formula"
                .to_string(),
        ),
        "d" | "D" => Some(DERIVATIVE_SPELLINGS.to_string()),
        DOT_FUNCTION | "matmul" | "mm" | "np.dot" | "np.matmul" | "torch.matmul" | "torch.mm" => {
            Some("write the matrix product with `@`: `W @ x` (`:help @`)".to_string())
        }
        _ if crate::syntax::COMPARISONS.contains(&name) => Some(format!(
            "a comparison gives 1 or 0 in a statement (`y = x {name} 0`), not yet in a user function's body: compare outside the function"
        )),
        _ => [".transpose", ".t", ".T"]
            .iter()
            .find_map(|method| name.strip_suffix(method))
            .filter(|operand| !operand.is_empty())
            .map(transpose_help),
    }
}

/// The help for numpy's transpose spellings of `operand` (`W.T`, `W^T`):
/// gradcalc's own, `Wᵀ` and `transpose(W)`.
pub(super) fn transpose_help(operand: &str) -> String {
    format!(
        "to transpose, write `{operand}ᵀ` (ᵀ right after {operand}, no space) or `transpose({operand})`"
    )
}

/// numpy's transpose written in gradcalc: the unknown name `W.T`, or the
/// unknown name `T` of `W^T` (`W**T`), gets the help to write `Wᵀ` or
/// `transpose(W)`, its place kept; an unknown function without a help gets
/// [`unknown_function_hint`]'s (`W.t()`, `np.dot(W, x)`, also where the
/// tensor graph made the error), or the nearest built-in function's name.
/// Any other error is returned as it is.
pub(super) fn numpy_transpose(source: &str, error: SessionError) -> SessionError {
    // A call that the tensor graph did not know (`W.t()`, `np.dot(W, x)`).
    if let SessionError::UnknownFunction {
        name,
        span,
        suggestion,
        hint: None,
    } = error
    {
        let hint = unknown_function_hint(&name);
        // The tensor graph suggests only its own functions (`sinn` → none).
        let suggestion =
            suggestion.or_else(|| super::nearest(&name, super::tensors::builtin_names()));
        return SessionError::UnknownFunction {
            suggestion: suggestion.filter(|_| hint.is_none()),
            name,
            span,
            hint,
        };
    }
    let SessionError::UnknownName {
        name,
        span,
        suggestion,
        hint,
    } = error
    else {
        return error;
    };
    let operand = match name.strip_suffix(".T") {
        Some(operand) if !operand.is_empty() => Some(operand.to_string()),
        _ if name == "T" => {
            let before = source.get(..span.start).unwrap_or("").trim_end();
            before
                .strip_suffix('^')
                .or_else(|| before.strip_suffix("**"))
                .map(|base| operand_name(base.trim_end()).unwrap_or("W").to_string())
        }
        _ => None,
    };
    let hint = match operand {
        Some(operand) if name == "T" => Some(format!(
            "{}; for a power, assign `T` first",
            transpose_help(&operand)
        )),
        Some(operand) => Some(transpose_help(&operand)),
        None => hint.or_else(|| python_word_help(&name)),
    };
    SessionError::UnknownName {
        name,
        span,
        suggestion: if hint.is_some() { None } else { suggestion },
        hint,
    }
}

/// The help for a word of Python that gradcalc spells otherwise: PyTorch's
/// `keepdim` (numpy's `keepdims`, gradcalc's word: `sum(X, 1, keepdims)`),
/// and `True` and `False`, which gradcalc writes 1 and 0
/// (`keepdims=True` is the word `keepdims` alone).
fn python_word_help(name: &str) -> Option<String> {
    match name {
        "keepdim" => Some(
            "the word is `keepdims`, numpy's: `sum(X, 1, keepdims)` keeps the summed axis with size 1"
                .to_string(),
        ),
        "True" | "False" | "true" | "false" => Some(format!(
            "gradcalc has no booleans: write {} (a comparison in brackets gives 1 or 0, `(x > 0)`); numpy's `keepdims=True` is the word alone: `sum(X, 1, keepdims)`",
            if name.eq_ignore_ascii_case("true") { "1" } else { "0" }
        )),
        _ => None,
    }
}

/// The help for MATLAB's transpose `W'` of the vector or matrix `name`.
pub(super) fn matlab_transpose_help(name: &str) -> String {
    format!(
        "MATLAB's transpose `{name}'` is `{name}ᵀ` or `transpose({name})` here; `f'(a)` is the derivative of a one-argument function at a"
    )
}

/// The name at the end of `text` (`W` of `2*W`), if it ends with one.
pub(super) fn operand_name(text: &str) -> Option<&str> {
    let start = text
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
        .last()?
        .0;
    let name = &text[start..];
    (!name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// The power written at byte `at` of `source` (`^2`, `**-1`, `^x`: `^` or
/// `**`, signs, then a number or a name), as its text and where it ends.
pub(super) fn power_after(source: &str, at: usize) -> Option<(String, usize)> {
    let mut tokens = Tokens::starting_at(source, at);
    let caret = tokens.next()?;
    if !matches!(&source[caret.start..caret.end], "^" | "**") {
        return None;
    }
    let operand = tokens.find(|t| !matches!(&source[t.start..t.end], "-" | "+" | "−"))?;
    matches!(operand.kind, TokenKind::Number | TokenKind::Name).then(|| {
        let text: String = source[caret.start..operand.end]
            .split_whitespace()
            .collect();
        (text, operand.end)
    })
}

/// `sin^2(x)`: the error that `sin` is no value, with the call it most
/// likely meant, `sin(x)^2`. Any other error is returned as it is.
pub(super) fn power_of_function(source: &str, error: SessionError) -> SessionError {
    let SessionError::FunctionAsValue {
        name,
        span,
        call: None,
    } = error
    else {
        return error;
    };
    let call = power_after(source, span.end).and_then(|(power, end)| {
        let mut tokens = Tokens::starting_at(source, end);
        let open = tokens.next().filter(|t| t.kind == TokenKind::LParen)?;
        let mut depth = 1usize;
        let close = tokens.find(|t| {
            match t.kind {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => depth -= 1,
                _ => {}
            }
            depth == 0
        })?;
        let argument = &source[open.start..close.end];
        (argument.chars().count() <= 40).then(|| format!("{name}{argument}{power}"))
    });
    SessionError::FunctionAsValue { name, span, call }
}
