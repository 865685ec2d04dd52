//! Errors of evaluation and commands, each with the span it is about.

use crate::syntax::{Span, SyntaxError};

/// Why a statement or command failed. Nothing is changed in the session when one is returned,
/// except nodes already appended to the graph (which no name reaches).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
    /// The statement did not parse.
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    /// A name that is not a variable, constant or function.
    #[error("unknown name `{name}`")]
    UnknownName {
        name: String,
        span: Span,
        suggestion: Option<String>,
        /// A help that says what was likely meant instead (`x*y` for `xy`).
        hint: Option<String>,
    },
    /// A call of a function that does not exist.
    #[error("unknown function `{name}`")]
    UnknownFunction {
        name: String,
        span: Span,
        suggestion: Option<String>,
        /// A help that says what was likely meant instead (`grad(y, x)` for `diff`).
        hint: Option<String>,
    },
    /// `x(2)` where `x` is a variable.
    #[error("`{name}` is a variable, not a function")]
    NotAFunction { name: String, span: Span },
    /// `tanh` used without arguments.
    #[error("`{name}` is a function, not a value")]
    FunctionAsValue {
        name: String,
        span: Span,
        /// The call it was likely meant as, with its power after it (`sin(x)^2`
        /// for `sin^2(x)`), when the text shows one.
        call: Option<String>,
    },
    /// A call with the wrong number of arguments.
    #[error("`{name}` takes {expected} argument{}, got {got}", if expected == "1" { "" } else { "s" })]
    WrongArity {
        name: String,
        span: Span,
        expected: String,
        got: usize,
    },
    /// `exp = 3`, `ans = 1`, `f = 2` where `f` is a user function, `x(t) = …` where `x` is a variable.
    #[error("cannot {action} `{name}`: {reason}")]
    Reserved {
        name: String,
        span: Span,
        action: &'static str,
        reason: String,
        help: Option<String>,
    },
    /// A user function that calls itself, directly or through others.
    #[error("recursion is not supported: `{name}` calls itself")]
    Recursion { name: String, span: Span },
    /// Calls of user functions nested too deeply.
    #[error("function calls nested more than {limit} deep")]
    CallsTooDeep { span: Span, limit: usize },
    /// Function calls that build too many nodes in one statement.
    #[error("this statement builds more than {limit} nodes through function calls")]
    CallsTooLarge {
        span: Span,
        limit: usize,
        /// A function on the call chain whose body calls one function more
        /// than once, the usual cause: each level then doubles the size.
        doubling: Option<RepeatedCall>,
    },
    /// `f'(…)` of a function that does not take exactly one argument.
    #[error("`{name}'` needs a function of one argument, `{name}` takes {params}")]
    DerivativeArity {
        name: String,
        span: Span,
        params: String,
    },
    /// A function definition that names a parameter twice.
    #[error("parameter `{name}` is named twice")]
    DuplicateParameter { name: String, span: Span },
    /// `:grad` (or another command that needs the output) before any expression.
    /// `wrt` is the variable named in `:grad x`, if any: a leaf that gradients
    /// could be taken for, once an expression uses it.
    #[error("{}", match wrt {
        Some(x) => format!("no output yet: `:grad {x}` differentiates the last expression"),
        None => "nothing to differentiate yet".to_string(),
    })]
    NoOutput { span: Span, wrt: Option<String> },
    /// `sin 1` or `sin x`: a function written without parentheses.
    #[error("`{name}` is a function: call it with parentheses")]
    CallWithoutParentheses {
        name: String,
        argument: String,
        span: Span,
        /// A power written after the argument (`^2` of `sin x^2`): the call
        /// then reads two ways, `sin(x^2)` and `sin(x)^2`.
        power: Option<String>,
    },
    /// An error inside a user function's body, found while calling it.
    #[error("in `{function}`: {inner}")]
    InFunction {
        function: String,
        inner: Box<SessionError>,
    },
    /// A derivative (`grad(y, x)`, `f'(a)`, `:diff`, `:hessian`) whose graph
    /// would pass its node budget (`limit`): 8 new nodes for each node from x
    /// up when the statement began, at least 10⁶ and at most 8·10⁶ in all
    /// (each order of a nested `grad(grad(…, x), x)` multiplies the size);
    /// `differentiated` is how many nodes from x up it walked.
    #[error("this derivative builds more than {limit} nodes (it differentiates {differentiated})")]
    DerivativeTooLarge {
        span: Span,
        limit: usize,
        differentiated: usize,
    },
    /// `:frob`.
    #[error("unknown command `:{name}`")]
    UnknownCommand {
        name: String,
        span: Span,
        suggestion: Option<String>,
    },
    /// Ctrl-C stopped the statement ([`crate::interrupt`]); the session was put
    /// back as it was before it.
    #[error("interrupted")]
    Interrupted { span: Span },
    /// A command with arguments it does not take.
    #[error("{message}")]
    BadArguments {
        message: String,
        span: Span,
        help: Option<String>,
    },
    /// A file the command would write cannot be written (its directory is
    /// missing, a permission, writes are off, a script writes outside its
    /// places): found before the command changes anything.
    #[error("{message}")]
    CannotWrite {
        message: String,
        span: Span,
        help: Option<String>,
    },
    /// A vector or matrix statement refused: shapes that break an op's rule
    /// (both shapes and the rule named), a ragged literal, an index out of
    /// range ([`ErrorCode::Shape`]); the memory budget
    /// ([`ErrorCode::Limit`]); what tensors do not support, with what works
    /// instead ([`ErrorCode::Unsupported`]).
    #[error("{message}")]
    Tensor {
        code: ErrorCode,
        message: String,
        span: Span,
        help: Option<String>,
    },
}

/// A function whose body calls another (user) function more than once.
#[derive(Debug, Clone, PartialEq)]
pub struct RepeatedCall {
    /// The function whose body has the calls (`d3`).
    pub outer: String,
    /// The function called more than once (`d2`).
    pub inner: String,
    /// The arguments, when two calls pass the same names (`t` in
    /// `d2(t) + d2(t)`): then one call times two is the same value.
    pub same_args: Option<String>,
}

impl SessionError {
    /// [`SessionError::WrongArity`]: `name` called at `span` with `got`
    /// arguments where it takes `expected` (`2`, `1 or 2`).
    pub(super) fn wrong_arity(
        name: impl Into<String>,
        span: Span,
        expected: impl ToString,
        got: usize,
    ) -> SessionError {
        SessionError::WrongArity {
            name: name.into(),
            span,
            expected: expected.to_string(),
            got,
        }
    }

    /// True for [`SessionError::Interrupted`], also inside a function's body.
    pub fn is_interrupted(&self) -> bool {
        match self {
            SessionError::Interrupted { .. } => true,
            SessionError::InFunction { inner, .. } => inner.is_interrupted(),
            _ => false,
        }
    }

    /// Where the error is, as a byte range into the source the statement came from.
    pub fn span(&self) -> Span {
        match self {
            SessionError::Syntax(e) => e.span(),
            SessionError::InFunction { inner, .. } => inner.span(),
            SessionError::UnknownName { span, .. }
            | SessionError::UnknownFunction { span, .. }
            | SessionError::NotAFunction { span, .. }
            | SessionError::FunctionAsValue { span, .. }
            | SessionError::WrongArity { span, .. }
            | SessionError::Reserved { span, .. }
            | SessionError::Recursion { span, .. }
            | SessionError::CallsTooDeep { span, .. }
            | SessionError::CallsTooLarge { span, .. }
            | SessionError::DerivativeArity { span, .. }
            | SessionError::DuplicateParameter { span, .. }
            | SessionError::NoOutput { span, .. }
            | SessionError::CallWithoutParentheses { span, .. }
            | SessionError::DerivativeTooLarge { span, .. }
            | SessionError::UnknownCommand { span, .. }
            | SessionError::Interrupted { span }
            | SessionError::BadArguments { span, .. }
            | SessionError::CannotWrite { span, .. }
            | SessionError::Tensor { span, .. } => *span,
        }
    }

    /// A suggested fix, when there is one ("did you mean `tanh`?").
    pub fn help(&self) -> Option<String> {
        match self {
            SessionError::Syntax(e) => e.help(),
            SessionError::InFunction { inner, .. } => inner.help(),
            SessionError::CallWithoutParentheses {
                name,
                argument,
                power: Some(power),
                ..
            } => Some(format!(
                "write `{name}({argument}{power})` for {name} of {argument}{power}, or `{name}({argument}){power}` for the power of {name}({argument})"
            )),
            SessionError::CallWithoutParentheses { name, argument, .. }
                if !argument.is_empty() && argument.chars().all(|c| c == '\'') =>
            {
                // `f'` alone: the derivative is a function too, called at a point.
                Some(format!(
                    "write `{name}{argument}(2)` for the derivative of {name} at 2 (any point in the brackets)"
                ))
            }
            SessionError::CallWithoutParentheses { name, argument, .. } => {
                Some(format!("write `{name}({argument})`"))
            }
            SessionError::WrongArity { name, got: 1, .. } if name == super::GRAD_FUNCTION => {
                Some("write `grad(y, x)` for ∂y/∂x: the expression, then the variable".to_string())
            }
            SessionError::UnknownName { hint: Some(h), .. }
            | SessionError::UnknownFunction { hint: Some(h), .. } => Some(h.clone()),
            SessionError::DerivativeTooLarge { limit, .. } => Some(format!(
                "a derivative may build up to {} nodes for each node from x up when the statement began, and {limit} here; `:grad` gives the numbers without building a graph; else differentiate a smaller expression, or take fewer orders of a nested `grad(grad(…, x), x)` (each order multiplies the size)",
                super::derivatives::NODES_PER_NODE
            )),
            SessionError::UnknownName {
                suggestion: Some(s),
                ..
            }
            | SessionError::UnknownFunction {
                suggestion: Some(s),
                ..
            } => Some(format!("did you mean `{s}`?")),
            SessionError::UnknownName { name, .. }
                if super::RESULT_NAMES.contains(&name.as_str()) =>
            {
                Some(format!(
                    "`{name}` is the result of the last statement; there is none yet"
                ))
            }
            SessionError::UnknownName { name, .. } => {
                Some(format!("assign it first, e.g. `{name} = 1`"))
            }
            SessionError::UnknownCommand { suggestion, .. } => match suggestion {
                Some(s) => Some(format!("did you mean `:{s}`?")),
                None => Some("`:help` lists the commands".to_string()),
            },
            SessionError::NotAFunction { name, .. } => {
                Some(format!("to multiply, write `{name}*(…)`"))
            }
            SessionError::FunctionAsValue {
                call: Some(call), ..
            } => Some(format!("the power of a call comes after it: `{call}`")),
            SessionError::FunctionAsValue { name, .. } => {
                Some(format!("call it with an argument: `{name}(x)`"))
            }
            SessionError::Reserved { help, .. }
            | SessionError::BadArguments { help, .. }
            | SessionError::CannotWrite { help, .. }
            | SessionError::Tensor { help, .. } => help.clone(),
            SessionError::Recursion { .. } => {
                Some("write the repetition out, or use a variable that you update".to_string())
            }
            SessionError::NoOutput { wrt: Some(x), .. } => {
                let y = if x == "y" { "z" } else { "y" };
                Some(format!("type one that uses {x}, e.g. `{y} = {x}^2`"))
            }
            SessionError::NoOutput { wrt: None, .. } => {
                Some("type an expression first, e.g. `x = 2` then `x^2`".to_string())
            }
            SessionError::CallsTooLarge { doubling, .. } => Some(doubling_help(doubling.as_ref())),
            SessionError::DerivativeArity { .. } => {
                Some("use `:grad NAME` for functions of several variables".to_string())
            }
            SessionError::Interrupted { .. } => Some(
                "by Ctrl-C: the statement was undone, the session is as it was before it"
                    .to_string(),
            ),
            SessionError::WrongArity { .. }
            | SessionError::UnknownFunction { .. }
            | SessionError::CallsTooDeep { .. }
            | SessionError::DuplicateParameter { .. } => None,
        }
    }
}

/// What kind of error an `error` event is, as a stable word programs can
/// match on (JSON's `code`, docs/json.md): the message may be reworded, the
/// code is not. Each error of a statement has one
/// ([`SessionError::code`]); the errors the printer and the driver report
/// (a file not written, a `:load` refused, Ctrl-C) and the ones before any
/// statement runs (the arguments, an unreadable source) have theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The text did not parse (a misplaced token, an unclosed `(`, a
    /// malformed number, two names side by side, …).
    Parse,
    /// A size or depth limit: brackets nested too deeply, function calls
    /// nested too deeply or building too many nodes, a derivative graph too
    /// large.
    Limit,
    /// A name that is not a variable, constant or parameter.
    UnknownName,
    /// A call of a function that does not exist.
    UnknownFunction,
    /// `:frob`: a command that does not exist.
    UnknownCommand,
    /// A variable called as a function (`x(2)`).
    NotAFunction,
    /// A function used as a value (`tanh` without arguments).
    NotAValue,
    /// A function written without parentheses (`sin x`).
    MissingParentheses,
    /// A call with the wrong number of arguments, or `f'` of a function that
    /// does not take exactly one.
    Arity,
    /// A name that cannot be assigned or defined (`pi = 3` after use as a
    /// function, `exp = 1`, `ans = 2`).
    Reserved,
    /// A user function that calls itself.
    Recursion,
    /// A function definition naming a parameter twice.
    DuplicateParameter,
    /// A command that needs the output before there is one (`:grad` first).
    NoOutput,
    /// A command given arguments it does not take.
    BadArguments,
    /// Vectors and matrices whose shapes break an op's rule (`[1, 2] @ [1,
    /// 2, 3]`), a ragged literal, an index out of range.
    Shape,
    /// What vectors and matrices do not support (yet): higher-order
    /// gradients, `:hessian`, `:diff`, `:paths`, user functions of tensors;
    /// the help says what works instead.
    Unsupported,
    /// Ctrl-C stopped the statement (or the reading of a source).
    Interrupted,
    /// A file a command asked for was not written (refused, exists, cannot
    /// be written).
    Write,
    /// A `:load` refused: the file cannot be read, a cycle, too deep.
    Load,
    /// A source that is not valid UTF-8.
    Encoding,
    /// A source named on the command line cannot be read.
    Read,
    /// Arguments gradcalc refuses (`source` `<arguments>`).
    Usage,
    /// The REPL's `:serve` could not serve the live page (the port is taken).
    Serve,
    /// gradcalc could not write an event as JSON: a bug, please report it.
    Internal,
}

impl ErrorCode {
    /// Every code, in the order docs/json.md lists them.
    pub const ALL: [ErrorCode; 24] = [
        ErrorCode::Parse,
        ErrorCode::Limit,
        ErrorCode::UnknownName,
        ErrorCode::UnknownFunction,
        ErrorCode::UnknownCommand,
        ErrorCode::NotAFunction,
        ErrorCode::NotAValue,
        ErrorCode::MissingParentheses,
        ErrorCode::Arity,
        ErrorCode::Reserved,
        ErrorCode::Recursion,
        ErrorCode::DuplicateParameter,
        ErrorCode::NoOutput,
        ErrorCode::BadArguments,
        ErrorCode::Shape,
        ErrorCode::Unsupported,
        ErrorCode::Interrupted,
        ErrorCode::Write,
        ErrorCode::Load,
        ErrorCode::Encoding,
        ErrorCode::Read,
        ErrorCode::Usage,
        ErrorCode::Serve,
        ErrorCode::Internal,
    ];

    /// The code as JSON writes it (`unknown-name`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Parse => "parse",
            ErrorCode::Limit => "limit",
            ErrorCode::UnknownName => "unknown-name",
            ErrorCode::UnknownFunction => "unknown-function",
            ErrorCode::UnknownCommand => "unknown-command",
            ErrorCode::NotAFunction => "not-a-function",
            ErrorCode::NotAValue => "not-a-value",
            ErrorCode::MissingParentheses => "missing-parentheses",
            ErrorCode::Arity => "arity",
            ErrorCode::Reserved => "reserved",
            ErrorCode::Recursion => "recursion",
            ErrorCode::DuplicateParameter => "duplicate-parameter",
            ErrorCode::NoOutput => "no-output",
            ErrorCode::BadArguments => "bad-arguments",
            ErrorCode::Shape => "shape",
            ErrorCode::Unsupported => "unsupported",
            ErrorCode::Interrupted => "interrupted",
            ErrorCode::Write => "write",
            ErrorCode::Load => "load",
            ErrorCode::Encoding => "encoding",
            ErrorCode::Read => "read",
            ErrorCode::Usage => "usage",
            ErrorCode::Serve => "serve",
            ErrorCode::Internal => "internal",
        }
    }
}

impl SessionError {
    /// The error's [`ErrorCode`] (an error inside a function: the inner one's).
    pub fn code(&self) -> ErrorCode {
        match self {
            SessionError::Syntax(
                SyntaxError::TooDeep { .. } | SyntaxError::LiteralTooLarge { .. },
            ) => ErrorCode::Limit,
            SessionError::Syntax(_) => ErrorCode::Parse,
            SessionError::InFunction { inner, .. } => inner.code(),
            SessionError::UnknownName { .. } => ErrorCode::UnknownName,
            SessionError::UnknownFunction { .. } => ErrorCode::UnknownFunction,
            SessionError::UnknownCommand { .. } => ErrorCode::UnknownCommand,
            SessionError::NotAFunction { .. } => ErrorCode::NotAFunction,
            SessionError::FunctionAsValue { .. } => ErrorCode::NotAValue,
            SessionError::CallWithoutParentheses { .. } => ErrorCode::MissingParentheses,
            SessionError::WrongArity { .. } | SessionError::DerivativeArity { .. } => {
                ErrorCode::Arity
            }
            SessionError::Reserved { .. } => ErrorCode::Reserved,
            SessionError::Recursion { .. } => ErrorCode::Recursion,
            SessionError::CallsTooDeep { .. }
            | SessionError::CallsTooLarge { .. }
            | SessionError::DerivativeTooLarge { .. } => ErrorCode::Limit,
            SessionError::DuplicateParameter { .. } => ErrorCode::DuplicateParameter,
            SessionError::NoOutput { .. } => ErrorCode::NoOutput,
            SessionError::BadArguments { .. } => ErrorCode::BadArguments,
            SessionError::CannotWrite { .. } => ErrorCode::Write,
            SessionError::Tensor { code, .. } => *code,
            SessionError::Interrupted { .. } => ErrorCode::Interrupted,
        }
    }
}

/// The help of [`SessionError::CallsTooLarge`]: the call repeated, if any.
fn doubling_help(doubling: Option<&RepeatedCall>) -> String {
    let Some(repeated) = doubling else {
        return "split the computation into statements, or keep a result in a variable and use it again".to_string();
    };
    match &repeated.same_args {
        Some(args) => format!(
            "`{outer}` calls `{inner}({args})` twice, so the size doubles at every level: call it once, e.g. `2*{inner}({args})` for `{inner}({args}) + {inner}({args})`",
            outer = repeated.outer,
            inner = repeated.inner,
        ),
        None => format!(
            "`{}` calls `{}` more than once, so the size doubles at every level",
            repeated.outer, repeated.inner
        ),
    }
}
