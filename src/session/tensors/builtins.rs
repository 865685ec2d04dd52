//! The function table: what a called name means, one row per built-in
//! function. The scalar op table's functions ([`Op::from_function_name`])
//! are rows too, made from their op: each applies elementwise to tensors.
//! The rows written here are the names whose call is more than one scalar
//! op (`max`, `log`, `grad`) or that only tensors have (`sum`, `softmax`,
//! `zeros`, …).
//!
//! A row holds the name, how many arguments a call takes (an `axis=`
//! counted as the second), its family (whether numbers take it too, and
//! where `:help` lists it), what a call builds ([`Builds`]: a scalar op
//! elementwise or a [`TensorOp`]) and its help. Name resolution (`eval.rs`),
//! the tensor calls ([`Session::tensor_builtin`](super::super::Session)),
//! which statements touch a tensor, the "did you mean" of an unknown
//! function and `:help` read it; nothing else matches a function's name.

use crate::engine::tensor::TensorOp;
use crate::engine::{Arity, Op};

/// One row of the function table.
#[derive(Debug, Clone, Copy)]
pub(in crate::session) struct Builtin {
    /// The name as typed.
    pub name: &'static str,
    /// Fewest and most arguments, and what they are when the count alone
    /// does not say (`"(the sizes)"`).
    pub args: (usize, usize, &'static str),
    /// Which values it takes, and where `:help` lists it.
    pub family: Family,
    /// What a call builds.
    pub builds: Builds,
    /// `:help NAME`.
    pub help: Help,
}

/// Which values a function takes, and where `:help`'s overview lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::session) enum Family {
    /// Numbers and tensors alike (a scalar op elementwise, `max`, `log`,
    /// `grad`): listed with the functions of numbers.
    Numbers,
    /// Vectors and matrices only (a call makes its statement a tensor
    /// statement): the first line of tensor functions.
    Vectors,
    /// Vectors and matrices only, the batch classifier's (axes, classes,
    /// samplers): the second line.
    Batch,
}

/// What a call of a built-in function builds.
#[derive(Debug, Clone, Copy)]
pub(in crate::session) enum Builds {
    /// A scalar op of the table applied to its arguments, elementwise to
    /// tensors with numpy's broadcasting.
    Elementwise(Op),
    /// `max`/`min`: of numbers the scalar op; of one tensor its extremum
    /// `whole`; with `axis=` the op `along` an axis; of two operands
    /// elementwise (`max(P, 1)` refused as ambiguous).
    Extremum {
        op: Op,
        whole: TensorOp,
        along: fn(usize) -> TensorOp,
    },
    /// One tensor op of all its arguments.
    Tensor(TensorOp),
    /// A reduction: `whole` of one tensor, the op `along` the axis given
    /// second, `keepdims` the axis kept with size 1 when the third
    /// argument is the word `keepdims`.
    Reduction {
        whole: TensorOp,
        along: fn(usize) -> TensorOp,
        keepdims: Option<fn(usize) -> TensorOp>,
    },
    /// An op along the last axis, which a second argument may name.
    LastAxis(TensorOp),
    /// `onehot(y, k)`.
    OneHot,
    /// A tensor made whole from sizes (a literal).
    Made(Made),
    /// `log(x)`, and `log(x, b)` built as `ln(x)/ln(b)`.
    Log,
    /// `grad(L, W)`: ∂L/∂W as a value.
    Grad,
}

/// The tensors made whole from their sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::session) enum Made {
    Zeros,
    Ones,
    Eye,
    Randn,
    Rand,
    Uniform,
}

/// What `:help NAME` says of a function.
#[derive(Debug, Clone, Copy)]
pub(in crate::session) enum Help {
    /// The scalar op's rules, as its row says (for `grad`, the command's
    /// help, which `:help` finds first).
    OfOp,
    /// The scalar op's rules, then this line.
    Note(&'static str),
    /// The usage, then the tensor op's shape rule, backward rule and source.
    Rule(&'static str, TensorOp),
    /// This text.
    Text(&'static str),
}

/// The help of a function that makes a literal: what it makes, then that it
/// is a literal.
macro_rules! literal_help {
    ($what:literal) => {
        Help::Text(concat!(
            $what,
            "\n  a literal: assigned, it is a leaf (docs/language.md §9)"
        ))
    };
}

/// `rand`'s and `uniform`'s help.
const UNIFORM_HELP: Help = Help::Text(
    "rand(m, n), rand(n): uniform numbers of [0, 1); uniform(m, n, lo, hi), uniform(n, lo, hi): of [lo, hi), lo + (hi − lo)·u\n  from the generator randn draws from (xoshiro256**): `:seed N` starts it again; a literal: assigned, it is a leaf (docs/language.md §9)",
);

/// The rows written here, in the order `:help` lists them.
const BUILTINS: [Builtin; 22] = [
    Builtin {
        name: "transpose",
        args: (1, 1, ""),
        family: Family::Vectors,
        builds: Builds::Tensor(TensorOp::Transpose),
        help: Help::Rule("transpose(W), also Wᵀ", TensorOp::Transpose),
    },
    Builtin {
        name: "outer",
        args: (2, 2, ""),
        family: Family::Vectors,
        builds: Builds::Tensor(TensorOp::Outer),
        help: Help::Rule("outer(u, x)", TensorOp::Outer),
    },
    Builtin {
        name: "zeros",
        args: (1, 2, ""),
        family: Family::Vectors,
        builds: Builds::Made(Made::Zeros),
        help: literal_help!("zeros(m, n), zeros(n): a matrix or vector of zeros"),
    },
    Builtin {
        name: "ones",
        args: (1, 2, ""),
        family: Family::Vectors,
        builds: Builds::Made(Made::Ones),
        help: literal_help!("ones(m, n), ones(n): a matrix or vector of ones"),
    },
    Builtin {
        name: "eye",
        args: (1, 1, ""),
        family: Family::Vectors,
        builds: Builds::Made(Made::Eye),
        help: literal_help!("eye(n): the n×n identity matrix"),
    },
    Builtin {
        name: "randn",
        args: (1, 2, ""),
        family: Family::Vectors,
        builds: Builds::Made(Made::Randn),
        help: literal_help!(
            "randn(m, n), randn(n): standard normal numbers from xoshiro256** seeded by SplitMix64 (Box–Muller), the same on every machine; `:seed N` starts it again"
        ),
    },
    Builtin {
        name: "sum",
        args: (1, 3, ""),
        family: Family::Vectors,
        builds: Builds::Reduction {
            whole: TensorOp::Sum,
            along: TensorOp::SumAxis,
            keepdims: Some(TensorOp::SumKeepDims),
        },
        help: Help::Rule(
            "sum(x), sum(W, axis), sum(W, axis, keepdims)",
            TensorOp::Sum,
        ),
    },
    Builtin {
        name: "mean",
        args: (1, 2, ""),
        family: Family::Vectors,
        builds: Builds::Reduction {
            whole: TensorOp::Mean,
            along: TensorOp::MeanAxis,
            keepdims: None,
        },
        help: Help::Rule("mean", TensorOp::Mean),
    },
    Builtin {
        name: "softmax",
        args: (1, 2, ""),
        family: Family::Vectors,
        builds: Builds::LastAxis(TensorOp::Softmax),
        help: Help::Rule("softmax", TensorOp::Softmax),
    },
    Builtin {
        name: "logsumexp",
        args: (1, 2, ""),
        family: Family::Vectors,
        builds: Builds::LastAxis(TensorOp::LogSumExp),
        help: Help::Rule("logsumexp", TensorOp::LogSumExp),
    },
    Builtin {
        name: "argmax",
        args: (1, 2, ""),
        family: Family::Batch,
        builds: Builds::Reduction {
            whole: TensorOp::ArgMax(None),
            along: |axis| TensorOp::ArgMax(Some(axis)),
            keepdims: None,
        },
        help: Help::Rule("argmax(x), argmax(Z, axis)", TensorOp::ArgMax(Some(1))),
    },
    Builtin {
        name: "log_softmax",
        args: (1, 2, ""),
        family: Family::Batch,
        builds: Builds::LastAxis(TensorOp::LogSoftmax),
        help: Help::Rule("log_softmax(z), log_softmax(Z, -1)", TensorOp::LogSoftmax),
    },
    Builtin {
        name: "cross_entropy",
        args: (2, 2, ""),
        family: Family::Batch,
        builds: Builds::Tensor(TensorOp::CrossEntropy),
        help: Help::Rule(
            "cross_entropy(Z, y): n×k scores, n integer labels",
            TensorOp::CrossEntropy,
        ),
    },
    Builtin {
        name: "onehot",
        args: (2, 2, ""),
        family: Family::Batch,
        builds: Builds::OneHot,
        help: Help::Rule("onehot(y, k)", TensorOp::OneHot(2)),
    },
    Builtin {
        name: "maximum",
        args: (2, 2, ""),
        family: Family::Batch,
        builds: Builds::Elementwise(Op::Max),
        help: Help::Text(
            "maximum(a, b): the elementwise max with numpy's broadcasting (`maximum(W, 0)` is a relu); at a tie the gradient is split as the scalar `max` does (docs/language.md §7)",
        ),
    },
    Builtin {
        name: "minimum",
        args: (2, 2, ""),
        family: Family::Batch,
        builds: Builds::Elementwise(Op::Min),
        help: Help::Text(
            "minimum(a, b): the elementwise min with numpy's broadcasting (`maximum(W, 0)` is a relu); at a tie the gradient is split as the scalar `min` does (docs/language.md §7)",
        ),
    },
    Builtin {
        name: "rand",
        args: (1, 2, " (the sizes)"),
        family: Family::Batch,
        builds: Builds::Made(Made::Rand),
        help: UNIFORM_HELP,
    },
    Builtin {
        name: "uniform",
        args: (3, 4, " (the sizes, then lo and hi)"),
        family: Family::Batch,
        builds: Builds::Made(Made::Uniform),
        help: UNIFORM_HELP,
    },
    Builtin {
        name: "max",
        args: (1, usize::MAX, ""),
        family: Family::Numbers,
        builds: Builds::Extremum {
            op: Op::Max,
            whole: TensorOp::Max,
            along: TensorOp::MaxAxis,
        },
        help: Help::Note(
            "max(x) of one vector or matrix: its largest element, the gradient split evenly among ties; max(W, axis=1) along an axis; maximum(a, b) elementwise (docs/language.md §9)",
        ),
    },
    Builtin {
        name: "min",
        args: (1, usize::MAX, ""),
        family: Family::Numbers,
        builds: Builds::Extremum {
            op: Op::Min,
            whole: TensorOp::Min,
            along: TensorOp::MinAxis,
        },
        help: Help::Note(
            "min(x) of one vector or matrix: its smallest element, the gradient split evenly among ties; min(W, axis=1) along an axis; minimum(a, b) elementwise (docs/language.md §9)",
        ),
    },
    Builtin {
        name: "log",
        args: (1, 2, ""),
        family: Family::Numbers,
        builds: Builds::Log,
        help: Help::Note(
            "log(x, b): the logarithm of x in base b, built as ln(x)/ln(b), so both x and b get gradients: ∂/∂x = 1/(x·ln b), ∂/∂b = −ln(x)/(b·ln(b)²)",
        ),
    },
    Builtin {
        name: crate::session::GRAD_FUNCTION,
        args: (2, 2, ""),
        family: Family::Numbers,
        builds: Builds::Grad,
        help: Help::OfOp,
    },
];

/// The row of the function `name`: one written here, or one made from the
/// scalar op table's function of that name; `None` for any other name.
pub(in crate::session) fn builtin(name: &str) -> Option<Builtin> {
    if let Some(row) = BUILTINS.iter().find(|row| row.name == name) {
        return Some(*row);
    }
    let op = Op::from_function_name(name)?;
    let count = match op.info().arity {
        Arity::Leaf => 0,
        Arity::Unary => 1,
        Arity::Binary | Arity::Variadic => 2,
    };
    Some(Builtin {
        name: op.info().name,
        args: (count, count, ""),
        family: Family::Numbers,
        builds: Builds::Elementwise(op),
        help: Help::OfOp,
    })
}

/// Every name of the function table: the scalar op table's functions, then
/// the rows written here that are not among them (`grad`, then the
/// functions of tensors), for "did you mean", `:help` and tests.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    Op::function_names().chain(
        BUILTINS
            .iter()
            .filter(|row| Op::from_function_name(row.name).is_none())
            .map(|row| row.name),
    )
}

/// The rows written here, in the table's order.
pub(in crate::session) fn builtins() -> impl Iterator<Item = &'static Builtin> {
    BUILTINS.iter()
}

impl Builtin {
    /// Whether a call takes `axis=` (as its second argument).
    pub fn takes_axis(&self) -> bool {
        matches!(
            self.builds,
            Builds::Extremum { .. } | Builds::Reduction { .. } | Builds::LastAxis(_)
        )
    }

    /// Whether `count` arguments are what a call takes.
    pub fn accepts(&self, count: usize) -> bool {
        (self.args.0..=self.args.1).contains(&count)
    }

    /// The counts of arguments a call takes, as an error says them: `2`,
    /// `1 or 2`, `1, 2 or 3`, `1 or more`, with what they are.
    pub fn expected(&self) -> String {
        let (fewest, most, what) = self.args;
        let counts = match most - fewest {
            0 => fewest.to_string(),
            1 => format!("{fewest} or {most}"),
            2 => format!("{fewest}, {} or {most}", fewest + 1),
            _ => format!("{fewest} or more"),
        };
        format!("{counts}{what}")
    }

    /// The line `:help NAME` adds to the scalar op's rules, if any.
    pub fn note(&self) -> Option<&'static str> {
        match self.help {
            Help::Note(note) => Some(note),
            Help::OfOp | Help::Rule(..) | Help::Text(_) => None,
        }
    }

    /// `:help NAME` of a function whose help is its own (not the scalar
    /// op's rules): the text, or the usage with the tensor op's rules.
    pub fn own_help(&self) -> Option<String> {
        match self.help {
            Help::OfOp | Help::Note(_) => None,
            Help::Text(text) => Some(text.to_string()),
            Help::Rule(usage, op) => {
                let info = op.info();
                Some(format!(
                    "{usage}\n  shape: {}\n  backward: {}\n  source: {}",
                    info.shape_rule, info.backward_rule, info.source
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use super::*;
    use crate::session::{Event, Session, SessionError, Value};

    /// The last statement's events of `source`, or the first error.
    fn run(session: &mut Session, source: &str) -> Result<Vec<Event>, SessionError> {
        let mut last = Ok(Vec::new());
        let _ = session.run_source(source, |result| {
            let failed = result.is_err();
            last = result;
            if failed {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        last
    }

    /// The numbers of the value of `source`'s last statement, row-major.
    fn value_of(session: &mut Session, source: &str) -> Vec<f64> {
        let events = run(session, source).unwrap_or_else(|e| panic!("{source}: {e}"));
        let value = events.iter().rev().find_map(|event| match event {
            Event::Value { value, .. } => Some(value.clone()),
            _ => None,
        });
        match value {
            Some(Value::Number(n)) => vec![n.0],
            Some(Value::Tensor(t)) => t.data.iter().map(|n| n.0).collect(),
            None => panic!("{source}: no value in {events:?}"),
        }
    }

    /// A session with the matrix `W = [[1, 2], [3, 4]]`, the labels
    /// `y = [0, 1]` and the number leaf `w = 3`.
    fn session() -> Session {
        let mut session = Session::new();
        run(&mut session, "W = [[1, 2], [3, 4]]; y = [0, 1]; w = 3").unwrap();
        session
    }

    /// A call of each function written in the table with its value worked
    /// out by hand (numpy's definitions; ln(e + e²) = 1 + ln(1 + e)), or
    /// `None` where it is drawn at random (then only its count of numbers).
    fn example(name: &str) -> Option<(&'static str, Option<Vec<f64>>)> {
        // ln(e¹ + e²) and ln(e³ + e⁴): 1 + ln(1 + e), 3 + ln(1 + e).
        let l = (1.0 + std::f64::consts::E).ln();
        let p = 1.0 / (1.0 + std::f64::consts::E);
        Some(match name {
            "transpose" => ("transpose(W)", Some(vec![1.0, 3.0, 2.0, 4.0])),
            "outer" => ("outer([1, 2], [3, 4])", Some(vec![3.0, 4.0, 6.0, 8.0])),
            "zeros" => ("zeros(2)", Some(vec![0.0, 0.0])),
            "ones" => ("ones(2)", Some(vec![1.0, 1.0])),
            "eye" => ("eye(2)", Some(vec![1.0, 0.0, 0.0, 1.0])),
            "randn" => ("randn(2, 3)", None),
            "sum" => ("sum(W)", Some(vec![10.0])),
            "mean" => ("mean(W)", Some(vec![2.5])),
            "softmax" => ("softmax(W)", Some(vec![p, 1.0 - p, p, 1.0 - p])),
            "logsumexp" => ("logsumexp(W)", Some(vec![1.0 + l, 3.0 + l])),
            "argmax" => ("argmax(W)", Some(vec![3.0])),
            "log_softmax" => ("log_softmax(W)", Some(vec![-l, 1.0 - l, -l, 1.0 - l])),
            // Row 0 takes class 0 (score 1): 1 + l − 1; row 1 class 1
            // (score 4): 3 + l − 4; their mean.
            "cross_entropy" => ("cross_entropy(W, y)", Some(vec![l - 0.5])),
            "onehot" => ("onehot(y, 2)", Some(vec![1.0, 0.0, 0.0, 1.0])),
            "maximum" => ("maximum(W, 2.5)", Some(vec![2.5, 2.5, 3.0, 4.0])),
            "minimum" => ("minimum(W, 2.5)", Some(vec![1.0, 2.0, 2.5, 2.5])),
            "rand" => ("rand(3)", None),
            "uniform" => ("uniform(3, 2, 5)", None),
            "max" => ("max(W)", Some(vec![4.0])),
            "min" => ("min(W)", Some(vec![1.0])),
            "log" => ("log([8, 16], 2)", Some(vec![3.0, 4.0])),
            "grad" => ("grad(sum(W*W), W)", Some(vec![2.0, 4.0, 6.0, 8.0])),
            _ => return None,
        })
    }

    /// Every name of the table is accepted in a tensor statement, with
    /// the value worked out by hand (the functions written here) or the
    /// value its scalar op gives the same numbers in a statement of numbers
    /// (a second path: the scalar graph); a call with one argument too many
    /// is refused with the row's count; a function's body called with
    /// numbers does what the body typed with the numbers does.
    #[test]
    fn every_function_of_the_table_is_accepted_where_it_says_and_refused_elsewhere() {
        let names: Vec<&str> = builtin_names().collect();
        assert!(names.len() >= BUILTINS.len() + 30, "{names:?}");
        for name in names {
            let row = builtin(name).unwrap_or_else(|| panic!("{name} has no row"));
            let mut session = session();
            let operands = ["0.5", "0.25"];
            match (example(name), row.builds) {
                (Some((call, expected)), _) => {
                    let got = value_of(&mut session, call);
                    match expected {
                        Some(expected) => {
                            assert_eq!(got.len(), expected.len(), "{call}: {got:?}");
                            for (g, e) in got.iter().zip(&expected) {
                                assert!(
                                    (g - e).abs() <= 1e-12 * e.abs().max(1.0),
                                    "{call}: {got:?}, not {expected:?}"
                                );
                            }
                        }
                        None => assert!(
                            !got.is_empty() && got.iter().all(|x| x.is_finite()),
                            "{call}: {got:?}"
                        ),
                    }
                }
                (None, Builds::Elementwise(_)) => {
                    let args = &operands[..row.args.0];
                    let bracketed: Vec<String> = args.iter().map(|a| format!("[{a}]")).collect();
                    let of_tensors = format!("{name}({})", bracketed.join(", "));
                    let tensor = value_of(&mut session, &of_tensors);
                    let number = value_of(&mut session, &format!("{name}({})", args.join(", ")));
                    assert_eq!(tensor.len(), 1, "{of_tensors}");
                    let (t, n) = (tensor[0], number[0]);
                    // `tanh`'s row kernel is within 2 ulps (docs/language.md §9).
                    assert!(
                        t == n || (t.is_nan() && n.is_nan()) || (t - n).abs() <= 1e-15 * n.abs(),
                        "{of_tensors} = {t}, {name} of numbers = {n}"
                    );
                }
                (None, builds) => panic!("{name} ({builds:?}): no example above"),
            }
            if row.args.1 < usize::MAX {
                let call = format!("{name}({})", vec!["W"; row.args.1 + 1].join(", "));
                let error = run(&mut session, &call).expect_err(&call).to_string();
                let expected = format!("`{name}` takes {} argument", row.expected());
                assert!(error.contains(&expected), "{call}: {error}");
            }
            // A function's body called with numbers does what the body
            // typed with those numbers does (a tensor function makes it a
            // tensor statement, as `sum(2)` is).
            let params = ["a", "b", "c", "d"];
            let count = row.args.0;
            let body = match row.builds {
                Builds::Grad => "grad(a*w, w)".to_string(),
                _ => format!("{name}({})", params[..count].join(", ")),
            };
            let define = format!("f({}) = {body}", params[..count].join(", "));
            run(&mut session, &define).unwrap_or_else(|e| panic!("{define}: {e}"));
            let numbers = ["2", "1", "0", "1"][..count].join(", ");
            let called = run(&mut session, &format!("f({numbers})"));
            let typed = match row.builds {
                Builds::Grad => run(&mut session, "grad(2*w, w)"),
                _ => run(&mut session, &format!("{name}({numbers})")),
            };
            // Both give a value (the same one, but for a random draw), or
            // both are refused.
            match (&called, &typed) {
                (Ok(a), Ok(b)) if !matches!(name, "randn" | "rand" | "uniform") => {
                    // The value (warnings point at what was typed).
                    assert_eq!(
                        format!("{:?}", a.last()),
                        format!("{:?}", b.last()),
                        "{define}; f({numbers})"
                    );
                }
                (Ok(_), Ok(_)) | (Err(_), Err(_)) => {}
                _ => panic!("{define}; f({numbers}): {called:?}, typed: {typed:?}"),
            }
        }
    }
}
