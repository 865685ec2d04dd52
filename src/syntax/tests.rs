use super::*;

// ---------------------------------------------------------------------------
// Helpers

/// Parses `source` as one statement.
fn parse(source: &str) -> Result<Located, SyntaxError> {
    parse_statement(source, Span::new(0, source.len()))
}

/// The expression tree of an expression statement.
fn expr(source: &str) -> ExprTree {
    match parse(source) {
        Ok(Located {
            statement: Statement::Expr(tree),
            ..
        }) => tree,
        other => panic!("`{source}` is not an expression statement: {other:?}"),
    }
}

/// The error of a statement that must not parse.
fn error(source: &str) -> SyntaxError {
    match parse(source) {
        Err(e) => e,
        Ok(located) => panic!("`{source}` parsed: {located:?}"),
    }
}

/// `source` fails to parse with exactly `expected`, whose help is `help`.
#[track_caller]
fn assert_error(source: &str, expected: SyntaxError, help: &str) {
    let err = error(source);
    assert_eq!(err, expected, "{source}");
    assert_eq!(err.help().as_deref(), Some(help), "{source}");
}

/// The latest value of `name` in `env`.
fn lookup(env: &[(String, f64)], name: &str) -> Option<f64> {
    env.iter().rev().find(|(n, _)| n == name).map(|(_, v)| *v)
}

/// A test-only evaluator: one loop over the flat tree. Names come from `env`
/// (the latest binding counts); `None` for a call or an unknown name.
fn try_eval(tree: &ExprTree, env: &[(String, f64)]) -> Option<f64> {
    let mut values: Vec<f64> = Vec::with_capacity(tree.nodes.len());
    for node in &tree.nodes {
        let value = match &node.kind {
            ExprKind::Number(v) => *v,
            ExprKind::Name(name) => lookup(env, name)?,
            ExprKind::Unary { op, operand } => {
                let v = values[operand.0 as usize];
                match op {
                    UnaryOp::Neg => -v,
                    UnaryOp::Plus => v,
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (values[lhs.0 as usize], values[rhs.0 as usize]);
                match op {
                    BinaryOp::Add => a + b,
                    BinaryOp::Sub => a - b,
                    BinaryOp::Mul => a * b,
                    BinaryOp::Div => a / b,
                    BinaryOp::Pow => a.powf(b),
                }
            }
            ExprKind::Call(_) => return None,
        };
        values.push(value);
    }
    values.last().copied()
}

/// [`try_eval`] with names from `env`; panics on a call or an unknown name.
fn eval_with(tree: &ExprTree, env: &[(&str, f64)]) -> f64 {
    let env: Vec<(String, f64)> = env.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    try_eval(tree, &env).unwrap_or_else(|| panic!("a call or an unknown name in {tree:?}"))
}

fn eval(source: &str) -> f64 {
    eval_with(&expr(source), &[])
}

fn assert_close(source: &str, got: f64, want: f64) {
    let tolerance = 1e-12 * want.abs().max(1.0);
    assert!(
        (got - want).abs() <= tolerance,
        "`{source}` gave {got}, expected {want}"
    );
}

// ---------------------------------------------------------------------------
// Precedence and associativity: the rows of the language table

/// The values of the statements of a table row, evaluated by the test
/// evaluator with assignments (`=`, `+=`, …) into an environment that starts
/// with `pi` and `e`; `None` when a statement is a definition, a command or an
/// update `:=`, calls a function, or names what the row has not assigned
/// (`ans`): those rows are the session's, run through the binary in
/// tests/it/cases.rs.
fn row_values(source: &str) -> Option<Vec<f64>> {
    let mut env: Vec<(String, f64)> = vec![
        ("pi".into(), std::f64::consts::PI),
        ("e".into(), std::f64::consts::E),
    ];
    let mut values = Vec::new();
    for span in statement_spans(source) {
        let value = match parse_statement(source, span).ok()?.statement {
            Statement::Expr(tree) => try_eval(&tree, &env)?,
            Statement::Assign { target, op, value } => {
                let v = try_eval(&value, &env)?;
                let old = || lookup(&env, &target.name);
                let new = match op {
                    AssignOp::Set => v,
                    AssignOp::Add => old()? + v,
                    AssignOp::Sub => old()? - v,
                    AssignOp::Mul => old()? * v,
                    AssignOp::Div => old()? / v,
                    // `:=` reruns what was built from the leaf: the session's.
                    AssignOp::Update => return None,
                };
                env.push((target.name, new));
                new
            }
            _ => return None,
        };
        values.push(value);
    }
    Some(values)
}

/// Every row of tests/cases/language.tsv whose statements the syntax alone
/// decides (see [`row_values`]) gives the table's values: precedence,
/// associativity, signs, number forms and implicit multiplication.
#[test]
fn language_table_rows_evaluate() {
    let table = include_str!("../../tests/cases/language.tsv");
    let mut checked = 0;
    for line in table.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split('\t').collect();
        let (id, input, expected) = (fields[0], fields[1], fields[2]);
        if expected.contains("error") {
            continue;
        }
        let Some(values) = row_values(input) else {
            continue;
        };
        let expected: Vec<f64> = expected
            .split(" | ")
            .map(|entry| entry.trim().parse().expect("a number"))
            .collect();
        assert_eq!(
            values.len(),
            expected.len(),
            "{id}: {input} gave {values:?}"
        );
        for (&got, &want) in values.iter().zip(&expected) {
            if want.is_finite() {
                assert_close(input, got, want);
            } else {
                assert!(
                    got == want || (got.is_nan() && want.is_nan()),
                    "{id}: {got}"
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 55, "only {checked} rows checked");
}

/// The tree of `source` with every grouping written out, independent of the
/// printer: `((2 ^ (-2)) * x)`. Built bottom-up in one loop over the flat tree.
fn grouped(source: &str) -> String {
    let tree = expr(source);
    let mut texts: Vec<String> = Vec::with_capacity(tree.nodes.len());
    for node in &tree.nodes {
        let text = match &node.kind {
            ExprKind::Number(x) => format!("{x}"),
            ExprKind::Name(name) => name.to_string(),
            ExprKind::Unary { op, operand } => {
                let sign = if *op == UnaryOp::Neg { "-" } else { "+" };
                format!("({sign}{})", texts[operand.0 as usize])
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let symbol = match op {
                    BinaryOp::Add => "+",
                    BinaryOp::Sub => "-",
                    BinaryOp::Mul => "*",
                    BinaryOp::Div => "/",
                    BinaryOp::Pow => "^",
                };
                let (l, r) = (&texts[lhs.0 as usize], &texts[rhs.0 as usize]);
                format!("({l} {symbol} {r})")
            }
            ExprKind::Call(call) => format!("{}(…)", call.name),
        };
        texts.push(text);
    }
    texts.pop().unwrap_or_default()
}

/// A sign in an exponent binds only what an unsigned exponent would: the
/// next operand and its `^` chain (`2^-2^3` = 2^(−(2^3))), never a product.
#[test]
fn a_sign_in_an_exponent_binds_like_an_unsigned_exponent() {
    let rows: &[(&str, &str)] = &[
        ("2^-2^3", "(2 ^ (-(2 ^ 3)))"),
        ("2^-2^-3*x", "((2 ^ (-(2 ^ (-3)))) * x)"),
        ("2 ^ - 2 * x", "((2 ^ (-2)) * x)"),
        ("2**-2*x", "((2 ^ (-2)) * x)"),
        ("2^--2*x", "((2 ^ (-(-2))) * x)"),
        ("2^-+2*x", "((2 ^ (-(+2))) * x)"),
        ("2^-x", "(2 ^ (-x))"),
        ("2^-(2x)", "(2 ^ (-(2 * x)))"),
        ("2^(-2x)", "(2 ^ (-(2 * x)))"),
        // a sign outside an exponent binds up to the next `+ - * /`
        ("-2x", "(-(2 * x))"),
        ("-2^2", "(-(2 ^ 2))"),
        ("-2^2*x", "((-(2 ^ 2)) * x)"),
        ("2*-3x", "(2 * (-(3 * x)))"),
        ("2^-2*x", "((2 ^ (-2)) * x)"),
        ("2^-2/x", "((2 ^ (-2)) / x)"),
        ("1/2^-2*x", "((1 / (2 ^ (-2))) * x)"),
        // a product before a power, and a superscript power, stay products
        ("2x^2", "(2 * (x ^ 2))"),
        ("2²x", "((2 ^ 2) * x)"),
    ];
    for &(source, want) in rows {
        assert_eq!(grouped(source), want, "{source}");
    }
}

/// An implicit product right after an exponent is refused with both readings:
/// handwriting means `e^(-2x)` as often as `e^(-2)*x`.
#[test]
fn an_implicit_product_after_an_exponent_is_refused_with_both_readings() {
    let rows: &[(&str, &str)] = &[
        (
            "e^-2x",
            "in the exponent: `e^(-2x)`; a factor after the power: `e^(-2)*x`",
        ),
        (
            "2^2x",
            "in the exponent: `2^(2x)`; a factor after the power: `2^2*x`",
        ),
        (
            "2^-2 x",
            "in the exponent: `2^(-2 x)`; a factor after the power: `2^(-2)*x`",
        ),
        (
            "x^2y",
            "in the exponent: `x^(2y)`; a factor after the power: `x^2*y`",
        ),
        (
            "2^3(x+1)",
            "in the exponent: `2^(3(x+1))`; a factor after the power: `2^3*(x+1)`",
        ),
        (
            "1 + f(x)^-(1)(a)b",
            "in the exponent: `f(x)^(-(1)(a)b)`; a factor after the power: `f(x)^(-(1))*(a)b`",
        ),
        (
            "2**√2y²",
            "in the exponent: `2**(√2y²)`; a factor after the power: `2**(√2)*y²`",
        ),
    ];
    for &(source, want) in rows {
        let error = error(source);
        assert!(
            matches!(error, SyntaxError::ImplicitAfterExponent { .. }),
            "{source}: {error:?}"
        );
        assert_eq!(error.help().as_deref(), Some(want), "{source}");
    }
    let e = error("y = 3*e^-2x + 1");
    assert_eq!(e.span(), Span::new(6, 11));
    assert_eq!(
        e.to_string(),
        "an implicit product right after an exponent is ambiguous: `e^-2x`"
    );
}

#[test]
fn implicit_multiplication_is_a_mul_node() {
    let tree = expr("2x");
    assert_eq!(tree.nodes.len(), 3);
    assert_eq!(
        tree.get(tree.root()).kind,
        ExprKind::Binary {
            op: BinaryOp::Mul,
            lhs: ExprId(0),
            rhs: ExprId(1)
        }
    );
    assert_eq!(tree.span(), Span::new(0, 2));
}

#[test]
fn operands_come_before_their_nodes() {
    let tree = expr("-(1+2)*f(3, x^2)/4 + g'(5)");
    for (index, node) in tree.nodes.iter().enumerate() {
        let children: Vec<ExprId> = match &node.kind {
            ExprKind::Unary { operand, .. } => vec![*operand],
            ExprKind::Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
            ExprKind::Call(call) => call.args.clone(),
            _ => vec![],
        };
        assert!(children.iter().all(|c| (c.0 as usize) < index));
    }
    assert_eq!(tree.span(), Span::new(0, 26));
}

// ---------------------------------------------------------------------------
// Names, calls and statements

#[test]
fn names_and_calls() {
    assert_eq!(expr("x2").nodes[0].kind, ExprKind::Name("x2".into()));
    assert_eq!(expr("_").nodes[0].kind, ExprKind::Name("_".into()));
    assert_eq!(expr("π").nodes[0].kind, ExprKind::Name("π".into()));
    assert_eq!(expr("α_1").nodes[0].kind, ExprKind::Name("α_1".into()));

    for (source, call) in [
        (
            "max(1, 5, 3)",
            Call {
                name: "max".into(),
                name_span: Span::new(0, 3),
                derivative: 0,
                args: vec![ExprId(0), ExprId(1), ExprId(2)],
            },
        ),
        (
            "f'(2)",
            Call {
                name: "f".into(),
                name_span: Span::new(0, 1),
                derivative: 1,
                args: vec![ExprId(0)],
            },
        ),
    ] {
        let tree = expr(source);
        let root = &tree.get(tree.root()).kind;
        assert_eq!(*root, ExprKind::Call(Box::new(call)), "{source}");
    }

    // `x(2)` is a call; the evaluator reports that x is not a function.
    let tree = expr("x(2)");
    assert!(matches!(&tree.get(tree.root()).kind, ExprKind::Call(call) if call.name == "x"));

    let tree = expr("rand()");
    assert!(matches!(&tree.get(tree.root()).kind, ExprKind::Call(call) if call.args.is_empty()));
}

#[test]
fn parentheses_widen_the_span() {
    let tree = expr("(1+2)*3");
    assert_eq!(tree.span(), Span::new(0, 7));
    let ExprKind::Binary { lhs, .. } = tree.get(tree.root()).kind else {
        panic!("not binary")
    };
    assert_eq!(tree.get(lhs).span(), Span::new(0, 5));
}

#[test]
fn assignments() {
    let ops = [
        ("c = 1", AssignOp::Set),
        ("c += 1", AssignOp::Add),
        ("c -= 1", AssignOp::Sub),
        ("c *= 1", AssignOp::Mul),
        ("c /= 1", AssignOp::Div),
        ("c := 1", AssignOp::Update),
        ("c:=1", AssignOp::Update),
    ];
    for (source, want) in ops {
        let Ok(Located {
            statement: Statement::Assign { target, op, value },
            span,
            rest: None,
        }) = parse(source)
        else {
            panic!("`{source}` is not an assignment")
        };
        assert_eq!(
            target,
            Ident {
                name: "c".into(),
                span: Span::new(0, 1)
            }
        );
        assert_eq!(op, want);
        assert_eq!(eval_with(&value, &[]), 1.0);
        assert_eq!(value.span(), Span::new(source.len() - 1, source.len()));
        assert_eq!(span, Span::new(0, source.len()));
    }
    let Ok(Located {
        statement: Statement::Assign { value, .. },
        ..
    }) = parse("x = -1.5")
    else {
        panic!("not an assignment")
    };
    assert_eq!(eval_with(&value, &[]), -1.5);
}

#[test]
fn definitions() {
    let Ok(Located {
        statement: Statement::Define { name, params, body },
        ..
    }) = parse("f(a, b) = a*b + a")
    else {
        panic!("not a definition")
    };
    assert_eq!(name.name, "f");
    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(params[1].span, Span::new(5, 6));
    assert_eq!(eval_with(&body, &[("a", 2.0), ("b", 3.0)]), 8.0);

    let Ok(Located {
        statement: Statement::Define { params, .. },
        ..
    }) = parse("g() = 1")
    else {
        panic!("not a definition")
    };
    assert!(params.is_empty());
}

fn command(source: &str) -> (String, Vec<String>) {
    match parse(source) {
        Ok(Located {
            statement: Statement::Command { name, args },
            ..
        }) => (name.name, args.into_iter().map(|a| a.name).collect()),
        other => panic!("`{source}` is not a command: {other:?}"),
    }
}

#[test]
fn commands() {
    assert_eq!(
        command(":grad x y"),
        ("grad".into(), vec!["x".into(), "y".into()])
    );
    assert_eq!(
        command(":grad x, y"),
        ("grad".into(), vec!["x".into(), "y".into()])
    );
    assert_eq!(
        command(":grad x ,y "),
        ("grad".into(), vec!["x".into(), "y".into()])
    );
    assert_eq!(
        command(":help tanh # why"),
        ("help".into(), vec!["tanh".into()])
    );
    assert_eq!(command(":topo all"), ("topo".into(), vec!["all".into()]));
    assert_eq!(command(":grad"), ("grad".into(), vec![]));
    assert_eq!(command(":help +"), ("help".into(), vec!["+".into()]));
    let Ok(Located {
        statement: Statement::Command { args, .. },
        ..
    }) = parse(":grad x, y")
    else {
        panic!("not a command")
    };
    assert_eq!(args[1].span, Span::new(9, 10));
}

/// The `:repeat` statement `source` parses to.
fn repeat(source: &str) -> Repeat {
    match parse(source) {
        Ok(Located {
            statement: Statement::Repeat(repeat),
            ..
        }) => *repeat,
        other => panic!("`{source}` is not a `:repeat`: {other:?}"),
    }
}

#[test]
fn repeat_is_a_statement_with_its_statements_parsed() {
    let source = ":repeat 3 x := x - 1; y";
    let r = repeat(source);
    assert_eq!(r.head, Span::new(0, 7));
    let count = r.count.as_ref().unwrap();
    assert_eq!((count.name.as_str(), count.span), ("3", Span::new(8, 9)));
    assert!(!r.force && r.file.is_none());
    // The statements' text starts where the last word ends.
    assert_eq!(
        &source[r.body_span.start..r.body_span.end],
        " x := x - 1; y"
    );
    let [first, second] = &r.body[..] else {
        panic!("two statements: {:?}", r.body);
    };
    assert!(matches!(
        &first.statement,
        Statement::Assign { target, op: AssignOp::Update, .. } if target.name == "x"
    ));
    assert_eq!(&source[first.span.start..first.span.end], "x := x - 1");
    assert!(matches!(&second.statement, Statement::Expr(_)));
    assert_eq!(second.span, Span::new(22, 23));
    assert_eq!(
        Statement::Repeat(Box::new(r)).to_string(),
        ":repeat 3 x := x - 1; y"
    );
    // Splitting keeps the `;` of its statements with it.
    assert_eq!(
        pieces(
            "x = 1; :repeat 3 x := x - 1; y
z"
        ),
        ["x = 1", ":repeat 3 x := x - 1; y", "z"]
    );
}

#[test]
fn repeat_reads_a_file_and_force_only_before_its_statements() {
    let r = repeat(":repeat 50 -f loss.svg w := w - 0.1*grad(L, w)");
    assert_eq!(r.count.unwrap().name, "50");
    assert!(r.force);
    assert_eq!(r.file.unwrap().name, "loss.svg");
    assert_eq!(r.body.len(), 1);
    // A word that does not end in `.svg` starts the statements.
    let r = repeat(":repeat 2 a.svg.bak");
    assert!(r.file.is_none());
    assert_eq!(r.body.len(), 1);
    let r = repeat(":repeat 2 --force b.svg\"\" y");
    assert!(r.force);
    assert_eq!(r.file.unwrap().name, "b.svg\"\"");
    // `-f` without a file after it starts the statements (`-f` is `-(f)`).
    let r = repeat(":repeat 2 -f");
    assert!(!r.force && r.file.is_none());
    assert!(matches!(
        &r.body[..],
        [Located {
            statement: Statement::Expr(_),
            ..
        }]
    ));
    let r = repeat(":repeat 2 \"r.svg\"");
    assert_eq!(r.file.unwrap().name, "\"r.svg\"");
    assert!(r.body.is_empty());
    // No count, no statements: the session says what is missing.
    let r = repeat(":repeat");
    assert!(r.count.is_none() && r.body.is_empty());
    assert_eq!(r.body_span, Span::new(7, 7));
    // Any word is the count; `;` is no separator before the statements.
    assert_eq!(repeat(":repeat;").count.unwrap().name, ";");
    assert_eq!(repeat(":repeat x y").count.unwrap().name, "x");
}

#[test]
fn names_that_hold_repeat_are_not_repeat() {
    assert_eq!(command(":repeatx 3"), ("repeatx".into(), vec!["3".into()]));
    assert_eq!(command(":repeat_ 3"), ("repeat_".into(), vec!["3".into()]));
    assert_eq!(command(":repeat.x"), ("repeat.x".into(), vec![]));
    assert_eq!(command(":repeat₂"), ("repeat₂".into(), vec![]));
    assert!(matches!(
        parse("repeat = 1").map(|l| l.statement),
        Ok(Statement::Assign { .. })
    ));
    // The splitter cuts at their `;` as at any command's.
    assert_eq!(pieces("x = 1; :repeatx; y"), ["x = 1", ":repeatx", "y"]);
    assert_eq!(pieces("repeat = 1; repeat"), ["repeat = 1", "repeat"]);
    assert_eq!(pieces(":help repeat; y"), [":help repeat", "y"]);
}

#[test]
fn a_syntax_error_in_a_repeated_statement_is_at_its_place() {
    let source = ":repeat 3 x := x - 1; y = (";
    let e = error(source);
    assert_eq!(e.span().start, source.len() - 1, "{e:?}");
    // Statements in a longer source: spans are offsets into all of it.
    let source = "a = 1\n:repeat 2 a := a*2; b = a";
    let span = statement_spans(source)[1];
    let Ok(Located {
        statement: Statement::Repeat(r),
        span: whole,
        ..
    }) = parse_statement(source, span)
    else {
        panic!("not a `:repeat`")
    };
    assert_eq!(whole, span);
    assert_eq!(&source[r.body[1].span.start..r.body[1].span.end], "b = a");
}

#[test]
fn spans_are_offsets_into_the_whole_source() {
    let source = "x = 1; y = (x +\n  2) # two\n";
    let spans = statement_spans(source);
    assert_eq!(spans, vec![Span::new(0, 5), Span::new(7, 20)]);
    let located = parse_statement(source, spans[1]).expect("parses");
    assert_eq!(located.span, Span::new(7, 20));
    let Statement::Assign { target, value, .. } = located.statement else {
        panic!("not an assignment")
    };
    assert_eq!(target.span, Span::new(7, 8));
    assert_eq!(value.span(), Span::new(11, 20));
    assert_eq!(
        &source[value.nodes[1].span().start..value.nodes[1].span().end],
        "2"
    );

    let source = "1 + 2; sqrt(123+)";
    let spans = statement_spans(source);
    let err = parse_statement(source, spans[1]).expect_err("fails");
    assert_eq!(err.span(), Span::new(16, 17));
}

// ---------------------------------------------------------------------------
// Errors

#[test]
fn missing_operand_points_at_the_token() {
    let err = error("sqrt(123+)");
    assert_eq!(err.span(), Span::new(9, 10));
    assert_eq!(err.to_string(), "expected an operand after `+`, found `)`");

    let err = error("1 +");
    assert_eq!(
        err.to_string(),
        "expected an operand after `+`, found end of input"
    );
    assert_eq!(err.span(), Span::new(3, 3));

    let err = error("2 * * 3");
    assert_eq!(err.to_string(), "expected an operand after `*`, found `*`");
}

#[test]
fn missing_operator() {
    // (source, message, help; None: its help is not checked)
    let rows = [
        (
            "2 3",
            "expected an operator or the end of the statement, found number `3`",
            Some("use `*` to multiply: `2*3`"),
        ),
        (
            "f(1 2)",
            "expected an operator, `,` or `)`, found number `2`",
            None,
        ),
        (
            "(1+2)3",
            "expected an operator or the end of the statement, found number `3`",
            Some("use `*` to multiply"),
        ),
    ];
    for (source, message, help) in rows {
        let err = error(source);
        assert_eq!(err.to_string(), message, "{source}");
        if help.is_some() {
            assert_eq!(err.help().as_deref(), help, "{source}");
        }
    }

    let err = error("x + 1 = 3");
    assert_eq!(err.span(), Span::new(6, 7));
    assert!(err.help().is_some_and(|h| h.contains("left of `=`")));
}

#[test]
fn unexpected_characters() {
    let err = error("x ²");
    assert_eq!(err.span(), Span::new(2, 4));
    assert!(err.to_string().ends_with("found `²`"));
    assert!(err.help().is_some_and(|h| h.contains("right after")));

    let err = error("7 % 2");
    assert_eq!(err.span(), Span::new(2, 3));
    assert!(err.help().is_some_and(|h| h.contains("x - b*floor(x/b)")));
    let err = error("7 mod 2");
    assert!(err.help().is_some_and(|h| h.contains("x - b*floor(x/b)")));

    let err = error("2 $ 3");
    assert_eq!(err.span(), Span::new(2, 3));
}

#[test]
fn malformed_numbers() {
    let err = error("1e- 1");
    assert!(matches!(err, SyntaxError::MalformedNumber { .. }));
    assert_eq!(err.span(), Span::new(0, 3));
    assert_eq!(
        err.to_string(),
        "malformed number `1e-`: the exponent has no digits"
    );

    let err = error("1e-");
    assert_eq!(err.span(), Span::new(0, 3));

    let err = error("2e1.5");
    assert_eq!(err.span(), Span::new(0, 5));
    assert_eq!(
        err.to_string(),
        "malformed number `2e1.5`: exponents are whole numbers"
    );

    for source in ["1.2.3", "1__000", "1_", "x = 3 + 1_.5"] {
        let err = error(source);
        assert!(
            matches!(err, SyntaxError::MalformedNumber { .. }),
            "{source}: {err:?}"
        );
    }

    // `2e` (2·e = 5.44, beside `2e3` = 2000) is refused; `2 e` and `2exp(1)`
    // are implicit multiplications by a name.
    let err = error("x = 2e + 1");
    assert_eq!(err.span(), Span::new(4, 6));
    assert!(
        err.help()
            .is_some_and(|h| h.contains("`2*e`") && h.contains("`2e0`"))
    );
    let tree = expr("2 e");
    assert_eq!(tree.nodes[1].kind, ExprKind::Name("e".into()));
    let tree = expr("2exp(1)");
    assert!(matches!(&tree.nodes[2].kind, ExprKind::Call(call) if call.name == "exp"));
}

#[test]
fn numbers_out_of_range() {
    assert_error(
        "1e400",
        SyntaxError::NumberOverflow {
            span: Span::new(0, 5),
            text: "1e400".into(),
        },
        "write `inf` for infinity",
    );

    let err = error("2 * 1e-400");
    assert!(matches!(err, SyntaxError::NumberUnderflow { .. }));
    assert_eq!(err.span(), Span::new(4, 10));

    assert_eq!(eval("0e-400"), 0.0);
    assert_eq!(eval("1e-310"), 1e-310); // subnormal but not zero
    assert_eq!(eval("1.7976931348623157e308"), f64::MAX);
}

#[test]
fn unbalanced_parentheses() {
    for (source, expected, message) in [
        (
            "2*(1+3",
            SyntaxError::UnclosedParen {
                span: Span::new(2, 3),
            },
            "unclosed `(`",
        ),
        (
            "1+2)",
            SyntaxError::UnmatchedParen {
                span: Span::new(3, 4),
            },
            "unmatched `)`",
        ),
    ] {
        let err = error(source);
        assert_eq!(err, expected);
        assert_eq!(err.to_string(), message);
    }
    assert_eq!(error("2*(1+3").help().as_deref(), Some("add `)`"));
    assert_eq!(error("f((1)").span(), Span::new(1, 2));
}

#[test]
fn curly_brackets_and_a_closer_of_the_other_kind_are_named() {
    // `]` meant to close the `(`: the `]` is the mistake, not the `(`.
    assert_error(
        "z = (1 + ]",
        SyntaxError::WrongBracket {
            span: Span::new(9, 10),
            bracket: ']',
            expected: ')',
        },
        "write `)` here",
    );
    assert!(!needs_more_input("z = (1 + ]"));
    assert_error(
        "x = [1, 2)",
        SyntaxError::WrongBracket {
            span: Span::new(9, 10),
            bracket: ')',
            expected: ']',
        },
        "write `]` here",
    );
    assert_error(
        "x = [1, 2",
        SyntaxError::UnclosedBracket {
            span: Span::new(4, 5),
        },
        "add `]`",
    );
    assert!(needs_more_input("x = [1,"));
    assert_error(
        "{1 + 2}*3",
        SyntaxError::WrongBracket {
            span: Span::new(0, 1),
            bracket: '{',
            expected: '(',
        },
        "write `(` here",
    );
    // An earlier problem still comes first, and so does a `(` left open
    // before an opening `{` (that one cannot be meant to close it).
    assert_eq!(error("x y + [1]").span(), Span::new(0, 3));
    assert_eq!(error("(1 + {2").span(), Span::new(0, 1));
}

#[test]
fn vectors_matrices_indices_and_matrix_products_print_as_they_parse() {
    let rows = [
        ("[1, -1, 0.5]", "[1, -1, 0.5]"),
        ("[[1, 2, 0],\n [3, 4, 1]]", "[[1, 2, 0], [3, 4, 1]]"),
        ("W[1, 2] + x[0]", "W[1, 2] + x[0]"),
        ("-ln(softmax(z)[k])", "-ln(softmax(z)[k])"),
        ("tanh(W @ x + b)", "tanh(W @ x + b)"),
        ("A @ B * 2", "A @ B*2"),
        ("A @ (B @ C)", "A @ (B @ C)"),
        ("2 * A @ B", "2*A @ B"),
        ("Wᵀ @ x", "transpose(W) @ x"),
        ("x[0]²", "x[0]^2"),
        ("(W @ x)[1]", "(W @ x)[1]"),
    ];
    for (source, want) in rows {
        let tree = expr(source);
        let printed = tree.to_string();
        assert_eq!(printed, want, "{source}");
        let again = expr(&printed);
        assert_eq!(again.to_string(), want, "{source}");
    }
    // `@` binds as `*` does (left to right), an index and `ᵀ` tighter than `^`.
    let tree = expr("A @ B * C");
    let ExprKind::Binary {
        op: BinaryOp::Mul,
        lhs,
        ..
    } = tree.get(tree.root()).kind
    else {
        panic!("{tree:?}")
    };
    assert!(matches!(&tree.get(lhs).kind, ExprKind::Call(call) if call.name == MATMUL));
    // `ᵀ` is no part of a name.
    let tree = expr("Wᵀ");
    assert!(
        matches!(&tree.get(tree.root()).kind, ExprKind::Call(call) if call.name == "transpose")
    );
}

#[test]
fn two_names_side_by_side() {
    assert_error(
        "x y",
        SyntaxError::AdjacentNames {
            span: Span::new(0, 3),
            left: "x".into(),
            right: "y".into(),
            hint: None,
        },
        "use `*` to multiply: `x*y`",
    );
    assert!(matches!(error("2x y"), SyntaxError::AdjacentNames { .. }));
    assert!(matches!(
        error("a = sin x"),
        SyntaxError::AdjacentNames { .. }
    ));
}

/// A line ending in an operator does not join a next line that starts a new
/// statement, so its error is its own (at its end), not the next line's `=`;
/// it still joins a line that continues it.
#[test]
fn a_trailing_operator_does_not_swallow_the_next_assignment() {
    let source = "b1 = a1 +\nb2 = 3";
    assert_eq!(
        statement_spans(source),
        vec![Span::new(0, 9), Span::new(10, 16)]
    );
    let err = error("b1 = a1 +");
    assert_eq!(err.span().start, 9, "{err:?}");
    assert_eq!(statement_spans("y = a +\n  b"), vec![Span::new(0, 11)]);
    // The REPL's check still waits for the rest of the line.
    assert!(super::needs_more_input("b1 = a1 +"));
}

/// `:=` is an assignment operator: it ends an unfinished line, starts a new
/// statement after an open `(`, and only a name may stand left of it.
#[test]
fn colon_equals_is_an_assignment() {
    assert_eq!(
        statement_spans("w := (1 +\nv := 2"),
        vec![Span::new(0, 9), Span::new(10, 16)]
    );
    assert!(matches!(
        parse("w := 2").map(|l| l.statement),
        Ok(Statement::Assign {
            op: AssignOp::Update,
            ..
        })
    ));
    let err = error("2 := 3");
    assert_eq!(err.span(), Span::new(2, 4), "{err:?}");
    assert!(matches!(error(":= 3"), SyntaxError::Unexpected { .. }));
    // A command is not an assignment: `:=` there is only text.
    assert!(matches!(
        parse(":save a:=b").map(|l| l.statement),
        Ok(Statement::Command { .. })
    ));
}

/// Errors whose hint names what was most likely meant: (source, span, help).
#[test]
fn misreadings_get_the_fix_that_was_meant() {
    let long = format!("x=1{} y=3", "+1".repeat(50));
    let long_fix: Option<&str> = Some("put `;` before the second statement");
    let rows: &[(&str, (usize, usize), Option<&str>)] = &[
        ("let x = 2", (0, 3), Some("write `x = 2`")),
        ("var x=2*y", (0, 3), Some("write `x=2*y`")),
        ("const f(t) = t", (0, 5), Some("write `f(t) = t`")),
        ("x=2 y=3", (4, 5), Some("write `x=2; y=3`")),
        ("x=2 y+=3*x", (4, 5), Some("write `x=2; y+=3*x`")),
        ("x=y z=3", (4, 5), Some("write `x=y; z=3`")),
        ("x=sin(1) z=3", (9, 10), Some("write `x=sin(1); z=3`")),
        (&long, (long.len() - 3, long.len() - 2), long_fix),
    ];
    for &(source, (start, end), help) in rows {
        let err = error(source);
        assert_eq!(err.span(), Span::new(start, end), "{source}: {err:?}");
        assert_eq!(err.help().as_deref(), help, "{source}");
    }
    // `x := 2` (an update in place) and `f''(2)` (a second derivative) are statements now.
    let update = parse_statement("x:=y+1", Span::new(0, 6)).expect("parses");
    assert!(matches!(
        update.statement,
        Statement::Assign {
            op: AssignOp::Update,
            ..
        }
    ));
    let tree = expr("sin'''(x)");
    assert!(matches!(
        &tree.get(tree.root()).kind,
        ExprKind::Call(call) if call.derivative == 3
    ));
    // Not misreadings: the old messages stay.
    for source in ["x = let y", "(x y = 3)"] {
        let err = error(source);
        assert!(
            matches!(err, SyntaxError::AdjacentNames { .. }),
            "{source}: {err:?}"
        );
    }
    assert!(matches!(error("2y = 3"), SyntaxError::Unexpected { .. }));
}

#[test]
fn bad_spans_are_errors_not_panics() {
    let source = "θ = 1";
    assert!(parse_statement(source, Span::new(1, 3)).is_err());
    assert!(parse_statement(source, Span::new(0, 99)).is_err());
    assert!(parse_statement(source, Span::new(4, 2)).is_err());
}

#[test]
fn empty_statement() {
    let err = error("  # nothing");
    assert!(err.to_string().ends_with("found end of input"));
}

// ---------------------------------------------------------------------------
// Splitting into statements

fn pieces(source: &str) -> Vec<&str> {
    statement_spans(source)
        .into_iter()
        .map(|s| &source[s.start..s.end])
        .collect()
}

#[test]
fn statements_split_at_newlines_and_semicolons() {
    assert_eq!(pieces("6/2 ; 1/2"), ["6/2", "1/2"]);
    assert_eq!(
        pieces("x = 2\ny = 3\n\nz = x*y + x\n"),
        ["x = 2", "y = 3", "z = x*y + x"]
    );
    assert_eq!(pieces("# only a comment\n  \n;;\n"), Vec::<&str>::new());
    assert_eq!(pieces("x = 1 # set x\nx"), ["x = 1", "x"]);
    assert_eq!(pieces("a = 1\r\nb = 2\r\n"), ["a = 1", "b = 2"]);
    assert_eq!(pieces(""), Vec::<&str>::new());
}

#[test]
fn open_brackets_and_trailing_operators_join_lines() {
    assert_eq!(pieces("a = (1 +\n 2)\nb"), ["a = (1 +\n 2)", "b"]);
    assert_eq!(pieces("a = 1 +\n 2\nb"), ["a = 1 +\n 2", "b"]);
    assert_eq!(pieces("a = (1 # one\n + 2)"), ["a = (1 # one\n + 2)"]);
    assert_eq!(pieces("f(1,\n2)"), ["f(1,\n2)"]);
    assert_eq!(pieces("max(1;\n2); 3"), ["max(1;\n2)", "3"]);
    assert_eq!(pieces("x =\r\n 1\r\n"), ["x =\r\n 1"]);
    assert_eq!(pieces("x ^\n2\n"), ["x ^\n2"]);
    assert_eq!(pieces("2*(1+3\n4\n"), ["2*(1+3\n4"]);
    // An unmatched `)` does not swallow later lines.
    assert_eq!(pieces("1)\n2"), ["1)", "2"]);
    // Commands end at their line, whatever their last word is.
    assert_eq!(pieces(":help +\nx = 1"), [":help +", "x = 1"]);
    assert_eq!(pieces(":grad x, # c\ny"), [":grad x,", "y"]);
    assert_eq!(pieces(":help (\ny"), [":help (", "y"]);
}

#[test]
fn an_open_bracket_does_not_swallow_new_statements() {
    assert_eq!(pieces("x = (1\nz = 2\nz\n"), ["x = (1", "z = 2", "z"]);
    assert_eq!(pieces("y = (x +\n 1)"), ["y = (x +\n 1)"]);
    assert_eq!(pieces("(1\n:grad"), ["(1", ":grad"]);
    assert_eq!(pieces("(1\n  :grad x\n2"), ["(1", ":grad x", "2"]);
    // Definitions, with or without parameters.
    assert_eq!(
        pieces("a = (1 +\nf(x, y) = x*y\n"),
        ["a = (1 +", "f(x, y) = x*y"]
    );
    assert_eq!(pieces("a = (1\n  g ( ) = 2"), ["a = (1", "g ( ) = 2"]);
    // Every assignment operator, after blank and comment lines.
    for op in ["=", "+=", "-=", "*=", "/="] {
        let source = format!("a = (1\n\n# c\n\tb {op} 2\nb");
        assert_eq!(pieces(&source), ["a = (1", &format!("b {op} 2"), "b"]);
    }
    // Inside brackets after a `;`.
    assert_eq!(pieces("max(1;\nb = 2"), ["max(1;", "b = 2"]);
    // Lines that do not clearly start a statement still continue the bracket.
    assert_eq!(pieces("f(x,\n y)"), ["f(x,\n y)"]);
    assert_eq!(pieces("(1\nb == 2\n"), ["(1\nb == 2"]);
    assert_eq!(pieces("(1\nf(x) + 2\n"), ["(1\nf(x) + 2"]);
    assert_eq!(pieces("(1\nf(x) == 2\n"), ["(1\nf(x) == 2"]);
    assert_eq!(pieces("(1\nf(2) = 2\n"), ["(1\nf(2) = 2"]);
    assert_eq!(pieces("(1\nb # = 2\n"), ["(1\nb"]);
    // Without an open bracket, nothing changes.
    assert_eq!(pieces("a = 1 +\n 2\nb = 3"), ["a = 1 +\n 2", "b = 3"]);
    // The cut statement reports its unclosed `(`; the next one parses.
    let source = "x = (1\nz = 2\n";
    let spans = statement_spans(source);
    let err = parse_statement(source, spans[0]).expect_err("unclosed");
    assert!(err.span().end <= 6, "{err:?}");
    assert!(parse_statement(source, spans[1]).is_ok());
}

#[test]
fn joined_statements_parse() {
    let source = "a = (1 +\r\n 2) # c\nb = a *\n  3\n";
    let spans = statement_spans(source);
    assert_eq!(spans.len(), 2);
    for span in spans {
        assert!(parse_statement(source, span).is_ok());
    }
}

#[test]
fn needs_more_input_while_unfinished() {
    assert!(needs_more_input("2*(1+3"));
    assert!(needs_more_input("a = (1 +\n 2"));
    assert!(needs_more_input("a = 1 +"));
    assert!(needs_more_input("a ="));
    assert!(needs_more_input("w :="));
    assert!(needs_more_input("f(1,"));
    assert!(needs_more_input("x ** # comment"));
    assert!(needs_more_input("x = 1; y = (2 # (\n"));
    assert!(!needs_more_input("2*(1+3)"));
    assert!(!needs_more_input("x = 1 # (unclosed in comment"));
    assert!(!needs_more_input("1 + 2 ;"));
    assert!(!needs_more_input(":help +"));
    assert!(!needs_more_input(""));
    assert!(!needs_more_input("1)"));
    // A `,` outside brackets is a mistake to report, not a continuation.
    assert!(!needs_more_input("x1 = 2,"));
    // The REPL keeps reading while a `(` is open, whatever the next line is.
    assert!(needs_more_input("x = (1\nz = 2"));
    assert!(needs_more_input("(1\n:grad"));
    assert!(needs_more_input("a = (1\nf(x) = x\n"));
}

#[test]
fn splitting_handles_many_lines_and_one_long_bracket() {
    // Sizes where a quadratic splitter would not finish (no timing asserted).
    let many_lines = "x = x + 1\n".repeat(300_000);
    assert_eq!(statement_spans(&many_lines).len(), 300_000);
    assert!(!needs_more_input(&many_lines));
    let one_bracket = format!("({}", "1 +\n".repeat(500_000));
    assert_eq!(statement_spans(&one_bracket).len(), 1);
    assert!(needs_more_input(&one_bracket));
}

// ---------------------------------------------------------------------------
// Depth safety

fn too_deep(source: &str) -> bool {
    matches!(
        parse(source),
        Err(SyntaxError::TooDeep {
            limit: MAX_NESTING,
            ..
        })
    )
}

#[test]
fn hostile_nesting_is_refused() {
    let n = 100_000;
    assert!(too_deep(&format!("{}1{}", "(".repeat(n), ")".repeat(n))));
    assert!(too_deep(&format!("{}1", "(".repeat(n))));
    assert!(too_deep(&format!("{}2", "-".repeat(n))));
    assert!(too_deep(&format!("{}2", "2^".repeat(n))));
    assert!(too_deep(&format!("{}2", "2**".repeat(n))));
    assert!(too_deep(&format!("{}2", "2^-".repeat(n))));
    assert!(too_deep(&format!("{}1{}", "f(".repeat(n), ")".repeat(n))));
    assert!(too_deep(&format!("x = {}1", "(-".repeat(n))));
    let err = error(&format!("{}1", "(".repeat(n)));
    assert_eq!(err.span(), Span::new(MAX_NESTING, MAX_NESTING + 1));
    assert!(err.to_string().contains(&MAX_NESTING.to_string()));
}

#[test]
fn nesting_just_past_the_limit_is_refused() {
    let n = MAX_NESTING + 1;
    assert!(too_deep(&format!("{}1{}", "(".repeat(n), ")".repeat(n))));
    assert!(too_deep(&format!("{}1", "-".repeat(n))));
    assert!(too_deep(&format!("{}1", "1^".repeat(n))));
}

/// Runs `f` on a thread with a 2 MB stack (the default for `cargo test` threads
/// and spawned threads).
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no stack overflow")
}

#[test]
fn nesting_at_the_limit_parses_on_a_2mb_stack() {
    let n = MAX_NESTING;
    let cases = [
        format!("{}1{}", "(".repeat(n), ")".repeat(n)),
        format!("{}1{}", "f(".repeat(n), ")".repeat(n)),
        format!("{}2", "-".repeat(n)),
        format!("{}1", "1^".repeat(n)),
        format!("{}1", "1^-".repeat(n / 2)),
        format!("{}1{}", "(-".repeat(n / 2), ")".repeat(n / 2)),
        format!("{}1{}", "(2x^".repeat(n / 3), ")".repeat(n / 3)),
    ];
    let results = on_small_stack(move || cases.map(|c| parse(&c).map(|l| l.statement)));
    let values: Vec<Option<f64>> = results
        .iter()
        .map(|r| match r {
            Ok(Statement::Expr(tree)) if !has_names(tree) => Some(eval_with(tree, &[])),
            Ok(_) => None,
            Err(e) => panic!("{e}"),
        })
        .collect();
    assert_eq!(values[0], Some(1.0));
    assert_eq!(values[2], Some(2.0)); // an even number of minus signs
    assert_eq!(values[3], Some(1.0));
    assert_eq!(values[5], Some(1.0));
}

fn has_names(tree: &ExprTree) -> bool {
    tree.nodes
        .iter()
        .any(|n| matches!(n.kind, ExprKind::Name(_) | ExprKind::Call(_)))
}

#[test]
fn a_long_sum_parses_on_a_small_stack() {
    // 200 000 terms: a left-associative chain far deeper than any recursion could
    // go on a 2 MB stack (the million-term line is a binary test in tests/).
    let n = 200_000;
    let source = format!("1{}", "+1".repeat(n - 1));
    let tree = on_small_stack(move || expr(&source));
    assert_eq!(tree.nodes.len(), 2 * n - 1);
    assert_eq!(eval_with(&tree, &[]), n as f64);

    // Left-associative: ((1-1)-1)-…
    let source = format!("0{}", "-1".repeat(100_000));
    assert_eq!(eval(&source), -100_000.0);
}

#[test]
fn long_flat_signs_and_powers_reset_at_binary_operators() {
    // Each term is shallow, so the whole line is fine however long.
    let source = format!("1{}", " + -2^-2".repeat(50_000));
    assert_close(&source, eval(&source), 1.0 - 0.25 * 50_000.0);
    let source = format!("f({})", "-1, ".repeat(10_000) + "1");
    assert!(parse(&source).is_ok());
}

#[test]
fn command_errors() {
    let err = error(":");
    assert_eq!(
        err.to_string(),
        "expected a command name after `:`, found end of input"
    );
    let err = error(":grad x,");
    assert_eq!(
        err.to_string(),
        "expected a word after `,`, found end of input"
    );
    assert_eq!(err.span(), Span::new(8, 8));
}

#[test]
fn other_bases_are_refused_with_the_decimal_value() {
    for (source, decimal) in [
        ("0x10", "16"),
        ("0b101", "5"),
        ("0o17", "15"),
        ("0xff_ff", "65535"),
    ] {
        let err = error(source);
        assert!(
            matches!(err, SyntaxError::MalformedNumber { .. }),
            "{source}"
        );
        assert_eq!(
            err.help(),
            Some(format!("write it in decimal: `{decimal}`"))
        );
    }
    // `0x` alone and `0xy` are still 0 times a name.
    assert!(parse("0x").is_ok());
    assert!(parse("0xy").is_ok());
}

#[test]
fn mathematical_symbols_keep_spans_on_the_original_text() {
    // `×` `·` `÷` `−` are the ASCII operators.
    assert_eq!(eval_with(&expr("6×2·3÷4−1"), &[]), 8.0);
    assert_eq!(eval_with(&expr("−2^2"), &[]), -4.0);
    // A superscript is the exponent's number node (a negative one negated, as
    // `θ^-1` parses), spanning its bytes.
    let tree = expr("θ⁻¹");
    assert_eq!(tree.nodes[1].kind, ExprKind::Number(1.0));
    assert_eq!(tree.nodes[1].span(), Span::new(2, 7));
    assert!(matches!(
        tree.nodes[2].kind,
        ExprKind::Unary {
            op: crate::syntax::UnaryOp::Neg,
            ..
        }
    ));
    assert_eq!(tree.nodes[2].span(), Span::new(2, 7));
    assert_eq!(tree.span(), Span::new(0, 7));
    // `√u` is `sqrt(u)`; the call's name is the `√`.
    let tree = expr("2√(x+1)");
    let call = tree.nodes.iter().find_map(|n| match &n.kind {
        ExprKind::Call(call) => Some((call.name.to_string(), call.name_span, n.span())),
        _ => None,
    });
    assert_eq!(
        call,
        Some(("sqrt".to_string(), Span::new(1, 4), Span::new(1, 9)))
    );
    // An error after multi-byte symbols points at the right bytes.
    let err = error("x₁×√(2 + )");
    assert_eq!(err.span(), Span::new(14, 15));
}

#[test]
fn names_take_subscript_digits_and_are_normalized() {
    let tree = expr("w₂₁");
    assert_eq!(tree.nodes[0].kind, ExprKind::Name("w₂₁".into()));
    // `e` + U+0301 (decomposed, as macOS writes it) is the name `é` (U+00E9).
    let tree = expr("caf\u{65}\u{301}");
    assert_eq!(tree.nodes[0].kind, ExprKind::Name("caf\u{e9}".into()));
    assert_eq!(tree.nodes[0].span(), Span::new(0, 6));
    let Ok(Located {
        statement: Statement::Assign { target, .. },
        ..
    }) = parse("\u{65}\u{301}t\u{65}\u{301} = 1")
    else {
        panic!("not an assignment")
    };
    assert_eq!(target.name, "\u{e9}t\u{e9}");
}

#[test]
fn bracket_products() {
    let env = [("x", 3.0)];
    assert_eq!(eval_with(&expr("(x+1)(x-1)"), &env), 8.0);
    assert_eq!(eval_with(&expr("(x+1) x"), &env), 12.0);
    assert_eq!(eval_with(&expr("(x+1)²(x-1)"), &env), 32.0);
    // Tighter than `/`, as `1/2x` is.
    assert_eq!(eval_with(&expr("1/(x+1)(x-1)"), &env), 0.125);
    // A number after a bracket, and anything after a name, is no product.
    assert!(parse("(x+1)2").is_err());
    assert!(parse("x (x+1)").is_ok_and(|l| matches!(
        l.statement,
        Statement::Expr(ref t) if matches!(t.nodes.last().map(|n| &n.kind), Some(ExprKind::Call(_)))
    )));
}

#[test]
fn statements_parsed_together_equal_statements_parsed_alone() {
    // Each kind of statement, errors, a deep one, multi-line ones, comments, and
    // lines that would run together without their separator (`2⏎y` is not `2y`,
    // `1⏎-2` is not `1-2`).
    let deep = format!("{}1{}", "(".repeat(100), ")".repeat(100));
    let long = format!("s = 1{}", "+1".repeat(3000));
    let source = format!(
        "x = 0.5\ny = 2\ny\n1\n-2\nf(t) = t^2 + 1 # comment\n:grad x, y\n\
         z = (1 +\n 2) * x; w = 3 -\n 4\nbad = 1 +* 2\n{deep}\n{long}\nq = 1__0\n\
         :save \"my file.calc\"\nsin x\n(1; 2)\nf'(2)\n:repeat 3 x := x - 0.1\nend = 1e3x"
    );
    let alone: Vec<_> = statement_spans(&source)
        .into_iter()
        .map(|span| (span, parse_statement(&source, span)))
        .collect();
    let together: Vec<_> = Statements::new(&source).collect();
    assert_eq!(together.len(), alone.len());
    assert!(alone.len() >= 18, "{}", alone.len());
    for (t, a) in together.iter().zip(&alone) {
        assert_eq!(t, a, "{}", &source[a.0.start..a.0.end]);
    }
    // More statements than one joined parse takes.
    let many: String = (0..1000).map(|i| format!("v{i} = {i}*x + 1\n")).collect();
    let together: Vec<_> = Statements::new(&many).collect();
    assert_eq!(together.len(), 1000);
    for (i, (span, parsed)) in together.into_iter().enumerate() {
        assert_eq!(parsed, parse_statement(&many, span), "statement {i}");
    }
}

#[test]
fn an_expression_node_is_at_most_24_bytes() {
    // A long line's tree is one node per token or operator: 1+1+…+1 with 10⁶
    // terms is 2·10⁶ − 1 nodes, 48 MB at 24 bytes.
    assert!(
        std::mem::size_of::<Expr>() <= 24,
        "{}",
        std::mem::size_of::<Expr>()
    );
    assert!(std::mem::size_of::<ExprKind>() <= 16);
}

#[test]
fn names_are_interned_by_text() {
    let a = Name::new("x_1");
    let b = Name::new(&String::from("x_1"));
    assert_eq!(a, b);
    assert_eq!(a.as_str(), "x_1");
    assert_ne!(a, Name::new("x_2"));
    assert!(a == "x_1");
    assert!("x_1" == a);
}

/// Terms for the pieces test: every kind of operand, prefix, power and
/// product the grammar has, with `+`/`-` inside brackets and exponents.
const TERMS: &[&str] = &[
    "1",
    "x",
    // A product never right after a `^` join (`a^2x` is refused).
    "1*2x",
    "-3",
    "(a - b)",
    "f(1, x+2)",
    "2^(-2x)",
    "x²",
    "x⁻¹",
    "√y",
    "−4",
    "1e3",
    "+z",
    "a*b/c",
    "2^3^2",
    "-2^2",
    "g'(x - 1)",
    "z*2(x+1)y",
    "(1)",
    "- -u",
    "3 # note\n",
];

/// Operators between terms (binary, sometimes followed by prefix signs).
const JOINS: &[&str] = &[
    " + ", "-", " - ", "*", "/", "+ -", "- +", " − ", "^", "\n+ ",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
    /// A statement parsed in pieces (cut at top-level `+`/`-`) is the same
    /// statement, spans included, as the whole text parsed at once.
    #[test]
    fn statements_parsed_in_pieces_equal_statements_parsed_whole(
        head in 0usize..3,
        terms in proptest::collection::vec((0..TERMS.len(), 0..JOINS.len()), 1..40),
        piece in 1usize..30,
    ) {
        let mut text = String::from(["", "y = ", "f(x, y) = "][head]);
        for (i, &(term, join)) in terms.iter().enumerate() {
            if i > 0 {
                text.push_str(JOINS[join]);
            }
            text.push_str(TERMS[term]);
        }
        let text = text.trim_end();
        let whole = parse_statement(text, Span::new(0, text.len())).expect("valid");
        // At an offset, as in a script.
        let source = format!("z = 1\n{text}");
        let pieces = super::parser::parse_pieces(&source[6..], 6, piece, false);
        // `None`: no top-level `+`/`-` past the first piece (nothing to cut).
        if let Some(located) = pieces {
            let again = parse_statement(&source, Span::new(6, source.len())).expect("valid");
            proptest::prop_assert_eq!(&located, &again);
            proptest::prop_assert_eq!(located.statement.to_string(), whole.statement.to_string());
            // Streamed: the first piece's statement, then the later pieces one
            // at a time, each tree on its own (a placeholder for the sum so
            // far, then its terms), appended in turn: the same tree again.
            let mut first = super::parser::parse_pieces(&source[6..], 6, piece, true)
                .expect("the same cuts");
            if let Some(rest) = first.rest.take() {
                proptest::prop_assert!(head < 2, "a definition is joined at once");
                let (Statement::Expr(tree) | Statement::Assign { value: tree, .. }) =
                    &mut first.statement
                else {
                    panic!("an expression or an assignment: {first:?}")
                };
                let mut seed = tree.span();
                for i in 0..rest.len() {
                    let piece = rest.parse(&source, i, seed).expect("a piece parses");
                    proptest::prop_assert_eq!(piece.nodes[0].span(), seed);
                    seed = piece.span();
                    super::parser::append_piece(tree, piece);
                }
                first.span = Span::new(first.span.start, seed.end);
            } else {
                proptest::prop_assert_eq!(head, 2, "an expression or an assignment is streamed");
            }
            proptest::prop_assert_eq!(&first, &again);
        }
    }
}

#[test]
fn a_long_sum_is_parsed_in_pieces_as_one_tree() {
    // 1 + 2 + … + 20000 (over the length at which a statement is cut): the
    // tree is a left spine of 19 999 additions, the value 20000·20001/2.
    let text: String = (1..=20_000).map(|i| format!("{i}+")).collect::<String>() + "0";
    assert!(text.len() > 64 * 1024);
    let tree = expr(&text);
    // It is cut: the pieces give the same tree as one parse.
    let source = format!("z = 1\n{text}");
    let pieces = super::parser::parse_pieces(&source[6..], 6, 16 * 1024, false).expect("cut");
    let Statement::Expr(from_pieces) = pieces.statement else {
        panic!("an expression")
    };
    assert_eq!(from_pieces.nodes.len(), tree.nodes.len());
    assert_eq!(from_pieces.to_string(), tree.to_string());
    // `1 + 1 + 1` with one-byte pieces: cut before each `+`.
    let small = super::parser::parse_pieces("1 + 1 + 1", 0, 1, false).expect("cut");
    assert_eq!(small.statement.to_string(), "1 + 1 + 1");
    assert_eq!(small.span, Span::new(0, 9));
    let adds = tree
        .nodes
        .iter()
        .filter(|n| {
            matches!(
                n.kind,
                ExprKind::Binary {
                    op: BinaryOp::Add,
                    ..
                }
            )
        })
        .count();
    assert_eq!(adds, 20_000);
    assert_eq!(tree.nodes.len(), 40_001);
    let mut values: Vec<f64> = Vec::new();
    for node in &tree.nodes {
        let v = match &node.kind {
            ExprKind::Number(x) => *x,
            ExprKind::Binary { lhs, rhs, .. } => values[lhs.0 as usize] + values[rhs.0 as usize],
            _ => unreachable!(),
        };
        values.push(v);
    }
    assert_eq!(values.last(), Some(&(20_000.0 * 20_001.0 / 2.0)));
    assert_eq!(tree.span(), Span::new(0, text.len()));
}

/// Pieces of lines for the continuation property: brackets, operators,
/// commands, `:repeat`, comments, `;`.
const LINE_PARTS: &[&str] = &[
    "x = (1",
    "+",
    " 2)",
    "*",
    "f(x,",
    " y)",
    ":grad",
    ":repeat 3 x := x + 1;",
    "# (",
    "z ^",
    ";",
    "w :=",
    " 3",
    ")",
    "(",
    "]",
    "a = 1",
    ",",
    "\r",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
    /// Told a line at a time, [`Continuation`] says what `needs_more_input`
    /// of all the lines so far says, while scanning each line once.
    #[test]
    fn continuation_a_line_at_a_time_agrees_with_the_whole_text(
        lines in proptest::collection::vec(
            proptest::collection::vec(0..LINE_PARTS.len(), 0..5), 1..8),
        last_ends in proptest::bool::ANY,
    ) {
        let mut continuation = Continuation::new();
        let mut text = String::new();
        for (i, parts) in lines.iter().enumerate() {
            let mut line: String = parts.iter().map(|&p| LINE_PARTS[p]).collect();
            if i + 1 < lines.len() || last_ends {
                line.push('\n');
            }
            text.push_str(&line);
            let unfinished = continuation.push(&line);
            proptest::prop_assert_eq!(unfinished, needs_more_input(&text), "{:?}", text);
            if !unfinished {
                // A finished statement is run, and the reading starts again.
                continuation.reset();
                text.clear();
            }
        }
    }
}
