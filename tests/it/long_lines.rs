//! Long lines in bounded memory: a statement over 64 KiB is parsed and
//! evaluated a piece at a time (cut at top-level `+`/`-`), and must build the
//! graph, the value, the errors and the `:save` log that the whole line gives.

use gradcalc::engine::{NodeId, Op};
use gradcalc::session::{Event, Number, Session, SessionError};
use gradcalc::syntax::{self, Span, Statement};

use crate::util::{gradcalc, session_events, stdout_of};

/// `head` then ` + 1 + 2 + … + n`.
fn sum_to(head: &str, n: u32) -> String {
    let mut text = head.to_string();
    for k in 1..=n {
        text.push_str(&format!(" + {k}"));
    }
    text
}

/// The one error a source gives through the library, with the session after it.
fn error_of(session: &mut Session, source: &str) -> SessionError {
    let mut errors = Vec::new();
    let _ = session.run_source(source, |result| {
        if let Err(error) = result {
            errors.push(error);
        }
        std::ops::ControlFlow::Continue(())
    });
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors.remove(0)
}

#[test]
fn a_long_sum_run_a_piece_at_a_time_builds_the_whole_graph() {
    let line = sum_to("x", 30_000);
    let source = format!("x = 0.5\n{line}\n");
    // The line is long enough to be cut: the statements of the source give
    // its first piece's tree and leave the rest to be parsed piece by piece.
    let (_, parsed) = syntax::Statements::new(&source).nth(1).expect("two");
    let parsed = parsed.expect("parses");
    let rest = parsed.rest.as_ref().expect("parsed in pieces");
    assert!(rest.len() >= 10, "{}", rest.len());
    let Statement::Expr(first) = &parsed.statement else {
        panic!("an expression")
    };
    assert!(first.nodes.len() < 8_000, "{}", first.nodes.len());
    assert_eq!(parsed.span, Span::new(8, 8 + line.len()));

    let mut session = Session::new();
    let events = session_events(&mut session, &source).unwrap();
    // 0.5 + 30000·30001/2, exactly (every partial sum is an integer + 0.5 < 2^53).
    assert_eq!(
        events.last(),
        Some(&Event::Value {
            name: None,
            value: Number(0.5 + 30_000.0 * 30_001.0 / 2.0).into()
        })
    );
    // x, then for each k the constant k and the sum so far + k: node 2k−1 is
    // the constant k, node 2k adds it to node 2k−2, as the whole line's tree
    // evaluated in order gives.
    let graph = session.graph();
    assert_eq!(graph.len(), 1 + 2 * 30_000);
    assert_eq!(graph.op(NodeId(0)), Op::Variable);
    for k in 1..=30_000u32 {
        let (constant, sum) = (NodeId(2 * k - 1), NodeId(2 * k));
        assert_eq!(
            (graph.op(constant), graph.value(constant)),
            (Op::Const, f64::from(k))
        );
        assert_eq!(graph.op(sum), Op::Add);
        assert_eq!(graph.operands(sum), [NodeId(2 * k - 2), constant]);
    }
    // The `:save` log holds the whole line.
    assert_eq!(session.statement_count(), 2);
    assert!(session.script().ends_with(&format!("\n{line}\n")));

    // A variable in the last pieces: z = 1 + … + 30000 − 4·x·x, ∂z/∂x = −8x = −4.
    let z = format!("z = {} - 4*x*x", sum_to("0", 30_000));
    let events = session_events(&mut session, &format!("{z}\n:grad x")).unwrap();
    assert_eq!(
        events[0],
        Event::Value {
            name: Some("z".into()),
            value: Number(30_000.0 * 30_001.0 / 2.0 - 1.0).into()
        }
    );
    let grads: Vec<f64> = events
        .iter()
        .filter_map(|e| match e {
            Event::Grad { wrt, value, .. } if wrt == "x" => value.number(),
            _ => None,
        })
        .collect();
    assert_eq!(grads, [-4.0]);
    // 0, the constants 1…30000, 30000 additions, 4, two products, the difference.
    assert_eq!(session.graph().len(), 1 + 2 * 30_000 + 1 + 2 * 30_000 + 4);
    assert!(session.script().ends_with(&format!("\n{z}\n")));
}

#[test]
fn a_syntax_error_in_a_late_piece_changes_nothing_and_is_reported_where_it_is() {
    let mut session = Session::new();
    session_events(&mut session, "x = 2\nw = x*3").unwrap();
    let nodes = session.graph().len();
    let before = session.script();
    // `+ *` after 40 000 terms, well past the first piece.
    let head = format!("y = x{}", "+1".repeat(40_000));
    let line = format!("{head}+*2{}", "+1".repeat(10));
    let error = error_of(&mut session, &line);
    let star = head.len() + 1;
    assert!(matches!(error, SessionError::Syntax(_)), "{error:?}");
    assert_eq!(error.span().start, star, "{error}");
    assert_eq!(
        error.to_string(),
        "expected an operand after `+`, found `*`"
    );
    // Nothing changed: no nodes, no binding, the same `ans`, the same log.
    assert_eq!(session.graph().len(), nodes);
    assert_eq!(session.variable("y"), None);
    assert_eq!(session.script(), before);
    let events = session_events(&mut session, "ans").unwrap();
    assert_eq!(
        events,
        [Event::Value {
            name: None,
            value: Number(6.0).into()
        }]
    );

    // An unknown name in the first piece and a syntax error in a late one: as
    // for the whole line, the syntax error (parsing comes before evaluating).
    let line = format!("nope{}+*2", "+1".repeat(40_000));
    let error = error_of(&mut session, &line);
    assert_eq!(error.span().start, line.len() - 2, "{error}");
    assert!(matches!(error, SessionError::Syntax(_)), "{error:?}");
    // Without the syntax error, the unknown name, at its place.
    let line = format!("x + nope{}", "+1".repeat(40_000));
    let error = error_of(&mut session, &line);
    assert!(
        matches!(error, SessionError::UnknownName { .. }),
        "{error:?}"
    );
    assert_eq!(error.span(), Span::new(4, 8));
    assert_eq!(session.graph().len(), nodes);
}

#[test]
fn a_long_piped_line_prints_its_value_and_gradient() {
    let script = format!("x = 0.5\n{}\n:grad x\n", sum_to("x", 30_000));
    let output = gradcalc().write_stdin(script).output().unwrap();
    assert!(output.status.success());
    assert_eq!(stdout_of(&output), "x = 0.5\n450015000.5\n∂ans/∂x = 1\n");
}

#[test]
fn a_long_sum_with_a_deep_late_piece_is_parsed_on_a_large_stack() {
    // 900 brackets deep (under the nesting limit of 1000) after 40 000 terms:
    // such a statement is parsed whole on the parser's own thread (a few kB
    // of stack a level in a debug build), not a piece at a time on the
    // caller's, here a thread of 256 kB.
    let deep = format!("{}2{}", "(".repeat(900), ")".repeat(900));
    let line = format!("y = 1{} + {deep}", "+1".repeat(40_000));
    // Events can hold listings (not `Send`): compare them on the thread.
    let as_expected = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let events = session_events(&mut Session::new(), &line).unwrap();
            events
                == [Event::Value {
                    name: Some("y".into()),
                    value: Number(40_003.0).into(),
                }]
        })
        .unwrap()
        .join()
        .unwrap();
    assert!(as_expected, "y = 40 003 expected");
}
