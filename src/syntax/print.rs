//! AST → text: `Display` for [`ExprTree`] and [`Statement`].
//!
//! The text parses back to the same tree (spans aside) for every tree the parser
//! makes: parentheses are written exactly where precedence or associativity
//! needs them (`(a + b)*c`, `a - (b - c)`, `(a^b)^c`, `(-a)^b`), implicit
//! multiplication is written `*`, and number literals use Rust's shortest
//! round-trip form (`0.1`, `1e300`; whole numbers below 10¹⁶ without
//! a fraction, `2`). Trees the parser cannot make print as the
//! closest text: a negative literal as `-1.5` (which parses as a negation), an
//! infinite or nan literal as the constant `inf` or `nan`.
//!
//! Printing walks the tree with an explicit stack and writes straight to the
//! output, so it takes linear time and no recursion at any depth.

use std::fmt;

use super::ast::{
    AssignOp, BinaryOp, COMPARISONS, Call, ExprId, ExprKind, ExprTree, INDEX, LIST, MATMUL, SLICE,
    SLICE_ALL, SLICE_FROM, SLICE_TO, Statement, UnaryOp, keyword_of,
};

/// Binding strength of what a node prints as, lowest first (docs/language.md §2).
const COMPARISON: u8 = 0;
const SUM: u8 = 1;
const PRODUCT: u8 = 2;
const SIGN: u8 = 3;
const POWER: u8 = 5;
const ATOM: u8 = 7;

/// One piece of pending output.
enum Work<'a> {
    /// Print node `ExprId`, in parentheses if it binds less tightly than the `u8`.
    Node(ExprId, u8),
    /// Print this text.
    Text(&'a str),
}

fn strength(tree: &ExprTree, id: ExprId) -> u8 {
    match &tree.get(id).kind {
        ExprKind::Number(x) if x.is_sign_negative() && !x.is_nan() => SIGN,
        ExprKind::Call(call) if call.name == MATMUL => PRODUCT,
        ExprKind::Call(call) if COMPARISONS.contains(&call.name.as_str()) => COMPARISON,
        ExprKind::Number(_) | ExprKind::Name(_) | ExprKind::Call { .. } => ATOM,
        ExprKind::Unary { .. } => SIGN,
        ExprKind::Binary { op, .. } => match op {
            BinaryOp::Add | BinaryOp::Sub => SUM,
            BinaryOp::Mul | BinaryOp::Div => PRODUCT,
            BinaryOp::Pow => POWER,
        },
    }
}

fn number(f: &mut fmt::Formatter<'_>, x: f64) -> fmt::Result {
    if x.is_nan() {
        f.write_str("nan")
    } else if x.is_infinite() {
        f.write_str(if x > 0.0 { "inf" } else { "-inf" })
    } else if x.fract() == 0.0 && x.abs() < 1e16 {
        // A whole number as people write it: `2`, not `2.0`.
        write!(f, "{x:.0}")
    } else {
        // `{:?}` is the shortest text that parses back to the same f64, in
        // exponent form for very large and small magnitudes.
        write!(f, "{x:?}")
    }
}

impl fmt::Display for ExprTree {
    /// Writes the expression with the fewest parentheses that keep its structure.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut stack = vec![Work::Node(self.root(), 0)];
        while let Some(work) = stack.pop() {
            let (id, needed) = match work {
                Work::Text(text) => {
                    f.write_str(text)?;
                    continue;
                }
                Work::Node(id, needed) => (id, needed),
            };
            if strength(self, id) < needed {
                f.write_str("(")?;
                stack.push(Work::Text(")"));
                stack.push(Work::Node(id, 0));
                continue;
            }
            match &self.get(id).kind {
                ExprKind::Number(x) => number(f, *x)?,
                ExprKind::Name(name) => f.write_str(name)?,
                ExprKind::Unary { op, operand } => {
                    f.write_str(match op {
                        UnaryOp::Neg => "-",
                        UnaryOp::Plus => "+",
                    })?;
                    stack.push(Work::Node(*operand, SIGN));
                }
                ExprKind::Binary { op, lhs, rhs } => {
                    // Left-associative operators need a tighter right operand;
                    // `^` is right-associative and its base must be an atom
                    // (`(-a)^b`, `(a^b)^c`); a signed exponent gets parentheses.
                    let (symbol, left, right) = match op {
                        BinaryOp::Add => (" + ", SUM, PRODUCT),
                        BinaryOp::Sub => (" - ", SUM, PRODUCT),
                        BinaryOp::Mul => ("*", PRODUCT, SIGN),
                        BinaryOp::Div => ("/", PRODUCT, SIGN),
                        BinaryOp::Pow => ("^", ATOM, POWER),
                    };
                    stack.push(Work::Node(*rhs, right));
                    stack.push(Work::Text(symbol));
                    stack.push(Work::Node(*lhs, left));
                }
                ExprKind::Call(call) => {
                    let Call {
                        name,
                        derivative,
                        args,
                        ..
                    } = &**call;
                    // `[a, b]`, `W[i, j]`, `A @ B`: the calls the parser makes of them.
                    match (name.as_str(), &args[..]) {
                        (MATMUL, [lhs, rhs]) => {
                            stack.push(Work::Node(*rhs, SIGN));
                            stack.push(Work::Text(" @ "));
                            stack.push(Work::Node(*lhs, PRODUCT));
                            continue;
                        }
                        (LIST, _) => {
                            f.write_str("[")?;
                            stack.push(Work::Text("]"));
                            push_args(&mut stack, args);
                            continue;
                        }
                        (name, _) if batch_syntax(f, &mut stack, name, args)? => continue,
                        (INDEX, [base, indices @ ..]) => {
                            stack.push(Work::Text("]"));
                            push_args(&mut stack, indices);
                            stack.push(Work::Text("["));
                            stack.push(Work::Node(*base, ATOM));
                            continue;
                        }
                        _ => {}
                    }
                    f.write_str(name)?;
                    for _ in 0..*derivative {
                        f.write_str("'")?;
                    }
                    f.write_str("(")?;
                    stack.push(Work::Text(")"));
                    push_args(&mut stack, args);
                }
            }
        }
        Ok(())
    }
}

/// Pushes the pieces of a comparison `a == b`, a slice `1:3` or a keyword
/// argument `axis=1` (the calls the parser makes of them) and returns true;
/// false for any other call.
fn batch_syntax<'a>(
    f: &mut fmt::Formatter<'_>,
    stack: &mut Vec<Work<'a>>,
    name: &str,
    args: &'a [ExprId],
) -> Result<bool, fmt::Error> {
    if let (Some(op), [lhs, rhs]) = (COMPARISON_TEXTS.iter().find(|t| t.trim() == name), args) {
        stack.push(Work::Node(*rhs, SUM));
        stack.push(Work::Text(op));
        stack.push(Work::Node(*lhs, SUM));
        return Ok(true);
    }
    if [SLICE, SLICE_FROM, SLICE_TO, SLICE_ALL].contains(&name) {
        if let Some(&end) = args.get(usize::from(name != SLICE_TO)) {
            stack.push(Work::Node(end, 0));
        }
        stack.push(Work::Text(":"));
        if let (SLICE | SLICE_FROM, Some(&start)) = (name, args.first()) {
            stack.push(Work::Node(start, 0));
        }
        return Ok(true);
    }
    if let (Some(_), [value]) = (keyword_of(name), args) {
        f.write_str(name)?;
        stack.push(Work::Node(*value, 0));
        return Ok(true);
    }
    Ok(false)
}

/// The comparisons as printed, spaced (`COMPARISONS`).
const COMPARISON_TEXTS: [&str; 6] = [" == ", " != ", " < ", " <= ", " > ", " >= "];

/// Pushes `args` to be printed in order, `, ` between them.
fn push_args(stack: &mut Vec<Work<'_>>, args: &[ExprId]) {
    for (i, arg) in args.iter().enumerate().rev() {
        stack.push(Work::Node(*arg, 0));
        if i > 0 {
            stack.push(Work::Text(", "));
        }
    }
}

impl fmt::Display for Statement {
    /// Writes the statement as it could be typed: `z = x*y + x`, `f(a, b) = a*b`,
    /// `:grad x y`, `:repeat 3 x := x - 1; y`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Statement::Expr(tree) => write!(f, "{tree}"),
            Statement::Assign { target, op, value } => {
                let op = match op {
                    AssignOp::Set => "=",
                    AssignOp::Add => "+=",
                    AssignOp::Sub => "-=",
                    AssignOp::Mul => "*=",
                    AssignOp::Div => "/=",
                    AssignOp::Update => ":=",
                };
                write!(f, "{} {op} {value}", target.name)
            }
            Statement::Updates { targets, values } => {
                let targets: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
                let values: Vec<String> = values.iter().map(ToString::to_string).collect();
                write!(f, "{} := {}", targets.join(", "), values.join(", "))
            }
            Statement::Define { name, params, body } => {
                write!(f, "{}(", name.name)?;
                for (i, param) in params.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(&param.name)?;
                }
                write!(f, ") = {body}")
            }
            Statement::Command { name, args } => {
                write!(f, ":{}", name.name)?;
                for arg in args {
                    write!(f, " {}", arg.name)?;
                }
                Ok(())
            }
            Statement::Repeat(repeat) => {
                f.write_str(":repeat")?;
                if let Some(count) = &repeat.count {
                    write!(f, " {}", count.name)?;
                }
                if repeat.force {
                    f.write_str(" -f")?;
                }
                if let Some(file) = &repeat.file {
                    write!(f, " {}", file.name)?;
                }
                for (i, located) in repeat.body.iter().enumerate() {
                    let sep = if i == 0 { " " } else { "; " };
                    write!(f, "{sep}{}", located.statement)?;
                }
                Ok(())
            }
        }
    }
}
