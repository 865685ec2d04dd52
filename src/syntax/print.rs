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
    BinaryOp, COMPARISONS, Call, ExprId, ExprKind, ExprTree, INDEX, LIST, MATMUL, SLICE, SLICE_ALL,
    SLICE_FROM, SLICE_TO, Statement, UnaryOp, keyword_of,
};

/// Binding strength of what a node prints as, lowest first (docs/language.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Binding {
    Comparison,
    Sum,
    Product,
    Sign,
    Power,
    Atom,
}

/// One piece of pending output.
enum Work<'a> {
    /// Print node `ExprId`, in parentheses if it binds less tightly than the [`Binding`].
    Node(ExprId, Binding),
    /// Print this text.
    Text(&'a str),
}

fn strength(tree: &ExprTree, id: ExprId) -> Binding {
    match &tree.get(id).kind {
        ExprKind::Number(x) if x.is_sign_negative() && !x.is_nan() => Binding::Sign,
        ExprKind::Call(call) if call.name == MATMUL => Binding::Product,
        ExprKind::Call(call) if COMPARISONS.contains(&call.name.as_str()) => Binding::Comparison,
        ExprKind::Number(_) | ExprKind::Name(_) | ExprKind::Call { .. } => Binding::Atom,
        ExprKind::Unary { .. } => Binding::Sign,
        ExprKind::Binary { op, .. } => match op {
            BinaryOp::Add | BinaryOp::Sub => Binding::Sum,
            BinaryOp::Mul | BinaryOp::Div => Binding::Product,
            BinaryOp::Pow => Binding::Power,
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
        let mut stack = vec![Work::Node(self.root(), Binding::Comparison)];
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
                stack.push(Work::Node(id, Binding::Comparison));
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
                    stack.push(Work::Node(*operand, Binding::Sign));
                }
                ExprKind::Binary { op, lhs, rhs } => {
                    // Left-associative operators need a tighter right operand;
                    // `^` is right-associative and its base must be an atom
                    // (`(-a)^b`, `(a^b)^c`); a signed exponent gets parentheses.
                    let (symbol, left, right) = match op {
                        BinaryOp::Add => (" + ", Binding::Sum, Binding::Product),
                        BinaryOp::Sub => (" - ", Binding::Sum, Binding::Product),
                        BinaryOp::Mul => ("*", Binding::Product, Binding::Sign),
                        BinaryOp::Div => ("/", Binding::Product, Binding::Sign),
                        BinaryOp::Pow => ("^", Binding::Atom, Binding::Power),
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
                            stack.push(Work::Node(*rhs, Binding::Sign));
                            stack.push(Work::Text(" @ "));
                            stack.push(Work::Node(*lhs, Binding::Product));
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
                            stack.push(Work::Node(*base, Binding::Atom));
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
        stack.push(Work::Node(*rhs, Binding::Sum));
        stack.push(Work::Text(op));
        stack.push(Work::Node(*lhs, Binding::Sum));
        return Ok(true);
    }
    if [SLICE, SLICE_FROM, SLICE_TO, SLICE_ALL].contains(&name) {
        if let Some(&end) = args.get(usize::from(name != SLICE_TO)) {
            stack.push(Work::Node(end, Binding::Comparison));
        }
        stack.push(Work::Text(":"));
        if let (SLICE | SLICE_FROM, Some(&start)) = (name, args.first()) {
            stack.push(Work::Node(start, Binding::Comparison));
        }
        return Ok(true);
    }
    if let (Some(_), [value]) = (keyword_of(name), args) {
        f.write_str(name)?;
        stack.push(Work::Node(*value, Binding::Comparison));
        return Ok(true);
    }
    Ok(false)
}

/// The comparisons as printed, spaced (`COMPARISONS`).
const COMPARISON_TEXTS: [&str; 6] = [" == ", " != ", " < ", " <= ", " > ", " >= "];

/// Pushes `args` to be printed in order, `, ` between them.
fn push_args(stack: &mut Vec<Work<'_>>, args: &[ExprId]) {
    for (i, arg) in args.iter().enumerate().rev() {
        stack.push(Work::Node(*arg, Binding::Comparison));
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
                write!(f, "{} {} {value}", target.name, op.text())
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
