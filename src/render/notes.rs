//! The words of the typed remarks events carry: a [`Notice`] (the text after
//! `note:`, and JSON's `message`), a [`GradNote`] (beside a gradient) and where an op passes nothing
//! ([`nothing_where`]: a trace's "passes nothing here (x ≤ 0)", `:help`'s
//! rules). Events hold the data; this is the one place that writes it out.

use std::fmt;

use crate::session::{GradNote, Notice};

impl fmt::Display for GradNote {
    /// The note as a sentence: what a `grad` or `check` line shows in
    /// parentheses, and JSON's `note`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GradNote::NotReached { of, wrt } => write!(f, "{of} does not depend on {wrt}"),
            GradNote::BuiltFromEarlier { of, wrt } => {
                write!(f, "{of} was built from an earlier {wrt}")
            }
            GradNote::ThroughDetach { of, wrt } => write!(
                f,
                "{wrt} reaches {of} through detach(…), whose gradient is 0 by definition while its value moves with {wrt}: reverse mode leaves that path out, the central difference does not"
            ),
        }
    }
}

impl fmt::Display for Notice {
    /// The notice as a sentence, as `note:` lines and JSON's `message` write it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::NoVariable { of, checking } => {
                write!(f, "{of} depends on no variable")?;
                if *checking {
                    write!(f, ": nothing to check")?;
                }
                Ok(())
            }
            Notice::BuiltFromEarlier { of, earlier } => write!(
                f,
                "{of} was built from an earlier {}: no variable as it is now feeds it",
                earlier.join(", ")
            ),
            Notice::DerivativeNodes {
                count,
                first,
                last,
                label,
            } => write!(
                f,
                "{count} of these nodes (_{}–_{}) are {label}: the backward pass recorded as nodes",
                first.0, last.0
            ),
            Notice::ThroughKinks { kinks } => write!(
                f,
                "this derivative passes through {kinks} kink(s) (relu, max, min) and is printed without its pieces: it holds on the side of each kink taken at this point"
            ),
            Notice::ConstantRebound { name, value } => write!(
                f,
                "`{name}` was the constant {value}; from now on it names your variable (`:reset` restores it)"
            ),
            Notice::PartlyChecked { checked, total } => write!(
                f,
                "checked {checked} of {total} variables; `:check NAMES` checks others"
            ),
            Notice::NotChecked { of, names } => {
                write!(f, "not checked: ")?;
                for (k, name) in names.iter().enumerate() {
                    let sep = if k == 0 { "" } else { "; " };
                    write!(
                        f,
                        "{sep}∂{of}/∂{name} = 0 ({of} was built from an earlier {name})"
                    )?;
                }
                Ok(())
            }
            Notice::RebindsEachStep { name } => write!(
                f,
                "`{name} = …` rebinds {name} at every step, and values built from the old {name} keep it; `{name} := …` changes {name} in place"
            ),
            Notice::StdinNotRead => write!(
                f,
                "standard input is not read when -e or a FILE is given; \
                 add `-` among the FILEs to run it (after the FILEs, before -e)"
            ),
            Notice::SeededWithOnes { of, shape } => write!(
                f,
                "{of} has shape ({shape}), not (): the backward pass starts from ones of its shape, so these are the gradients of sum({of})"
            ),
        }
    }
}

/// Where an op passes nothing (the words live with the rules, in the session).
pub use crate::session::nothing_where;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{NodeId, Passing};
    use crate::session::NoticeCode;

    /// One notice of each kind, in the order of [`NoticeCode::ALL`]: a new
    /// variant has a new code (`Notice::code` names every variant), which
    /// the test below finds missing here until it has a sample.
    fn samples() -> Vec<Notice> {
        let of = || "z".to_string();
        vec![
            Notice::NoVariable {
                of: of(),
                checking: false,
            },
            Notice::BuiltFromEarlier {
                of: of(),
                earlier: vec!["x".into()],
            },
            Notice::DerivativeNodes {
                count: 2,
                first: NodeId(5),
                last: NodeId(9),
                label: "grad(y, x)".into(),
            },
            Notice::ThroughKinks { kinks: 1 },
            Notice::ConstantRebound {
                name: "e".into(),
                value: std::f64::consts::E,
            },
            Notice::PartlyChecked {
                checked: 1000,
                total: 1001,
            },
            Notice::NotChecked {
                of: of(),
                names: vec!["x".into(), "y".into()],
            },
            Notice::RebindsEachStep { name: "w".into() },
            Notice::StdinNotRead,
            Notice::SeededWithOnes {
                of: "h".into(),
                shape: "2".into(),
            },
        ]
    }

    /// Each kind of notice has its own code, and every code is some kind's.
    #[test]
    fn every_notice_kind_has_its_own_code() {
        let codes: Vec<NoticeCode> = samples().iter().map(Notice::code).collect();
        assert_eq!(codes, NoticeCode::ALL);
        let mut words: Vec<&str> = codes.iter().map(|c| c.as_str()).collect();
        for word in &words {
            assert!(
                !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{word}"
            );
        }
        words.sort_unstable();
        words.dedup();
        assert_eq!(words.len(), codes.len(), "{words:?}");
    }

    #[test]
    fn notices_read_as_before() {
        let texts: Vec<String> = samples().iter().map(ToString::to_string).collect();
        assert_eq!(texts[0], "z depends on no variable");
        assert_eq!(
            texts[2],
            "2 of these nodes (_5–_9) are grad(y, x): the backward pass recorded as nodes"
        );
        assert_eq!(
            texts[6],
            "not checked: ∂z/∂x = 0 (z was built from an earlier x); ∂z/∂y = 0 (z was built from an earlier y)"
        );
        assert_eq!(
            Notice::NoVariable {
                of: "z".into(),
                checking: true
            }
            .to_string(),
            "z depends on no variable: nothing to check"
        );
    }

    #[test]
    fn nothing_where_writes_the_operands_or_the_placeholders() {
        let ops = |a: &str, b: &str| vec![a.to_string(), b.to_string()];
        assert_eq!(
            nothing_where(Passing::WherePositive, &ops("x*y", "")),
            "x*y ≤ 0"
        );
        assert_eq!(nothing_where(Passing::WherePositive, &[]), "u ≤ 0");
        assert_eq!(
            nothing_where(Passing::UnlessZeroBase, &ops("x", "n + 1")),
            "x = 0, n + 1 ≥ 0"
        );
        assert_eq!(nothing_where(Passing::UnlessZeroBase, &[]), "a = 0, b ≥ 0");
        assert_eq!(
            nothing_where(Passing::WhereExponentNonzero, &ops("x", "n")),
            "n = 0"
        );
        assert_eq!(nothing_where(Passing::Detached, &ops("x", "y")), "detached");
        assert_eq!(nothing_where(Passing::Always, &[]), "");
    }
}
