//! The abstract syntax tree: statements and flat expression trees with spans.
//!
//! Expressions are stored flat ([`ExprTree`]): every node's operands come before it
//! in the vector and the root is the last node. Evaluating, printing and dropping a
//! tree are therefore loops, never recursion, however deep the expression is.

use super::Pieces;

/// A byte range `start..end` into the whole source text (not just one statement).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// First byte of the range.
    pub start: usize,
    /// One past the last byte of the range.
    pub end: usize,
}

impl Span {
    /// Makes the span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// Index of a node inside one [`ExprTree`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u32);

/// Prefix operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-u`
    Neg,
    /// `+u` (the value unchanged)
    Plus,
}

/// Infix operators. Implicit multiplication (`2x`) is [`BinaryOp::Mul`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a * b`, and implicit multiplication `2x`
    Mul,
    /// `a / b`
    Div,
    /// `a ^ b` and `a ** b`
    Pow,
}

impl BinaryOp {
    /// Every infix operator.
    pub const ALL: [BinaryOp; 5] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Pow,
    ];

    /// The operator's symbol as printed: `+`, `-`, `*`, `/`, `^` (the op
    /// table's name for the same operation).
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Pow => "^",
        }
    }

    /// The operator whose [`symbol`](BinaryOp::symbol) is `symbol`; `None`
    /// for any other text.
    pub fn from_symbol(symbol: &str) -> Option<BinaryOp> {
        BinaryOp::ALL.into_iter().find(|op| op.symbol() == symbol)
    }
}

/// What an expression node is.
///
/// Kept to 16 bytes (an [`Expr`] to 24) so that a long line's tree stays small:
/// names are interned ([`Name`], one pointer) and a call's parts are boxed
/// ([`Call`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A number literal, already converted (`1_000` is 1000.0).
    Number(f64),
    /// A name: a variable, a constant (`pi`), `ans` or `_`.
    Name(Name),
    /// `-operand` or `+operand`.
    Unary { op: UnaryOp, operand: ExprId },
    /// `lhs op rhs`.
    Binary {
        op: BinaryOp,
        lhs: ExprId,
        rhs: ExprId,
    },
    /// `name(args…)`, or `name'(arg)`, … (see [`Call`]).
    Call(Box<Call>),
}

/// The callee of a vector or matrix literal: `[1, 2]` is the call `[](1, 2)`,
/// `[[1, 2], [3, 4]]` a literal of two literals (its rows). No name can be
/// written so: only the parser makes these calls.
pub const LIST: &str = "[]";

/// The callee of an index: `W[i, j]` is the call `[i](W, i, j)`, `x[i]` the
/// call `[i](x, i)`.
pub const INDEX: &str = "[i]";

/// The callee of a matrix product: `A @ B` is the call `@(A, B)`.
pub const MATMUL: &str = "@";

/// The callees of slices inside an index: `X[1:3]` is the call
/// `[i](X, i:j(1, 3))`; `X[1:]` has `i:(1)`, `X[:2]` has `:j(2)` and
/// `X[:, 0]` has `:()`. No name can be written so.
pub const SLICE: &str = "i:j";
/// A slice with its start only (`X[1:]`), see [`SLICE`].
pub const SLICE_FROM: &str = "i:";
/// A slice with its end only (`X[:2]`), see [`SLICE`].
pub const SLICE_TO: &str = ":j";
/// A slice of everything (`X[:, 0]`), see [`SLICE`].
pub const SLICE_ALL: &str = ":";

/// The callees of comparisons: `a == b` is the call `==(a, b)`.
pub const COMPARISONS: [&str; 6] = ["==", "!=", "<", "<=", ">", ">="];

/// The keyword of a keyword argument's call (`axis=1` is the call
/// `axis=(1)`, its callee the keyword and `=`), `None` for any other callee.
pub fn keyword_of(callee: &str) -> Option<&str> {
    callee
        .strip_suffix('=')
        .filter(|k| k.starts_with(|c: char| c.is_alphabetic() || c == '_'))
}

/// A call node's parts: `name(args…)`, or `name'(arg)`, `name''(arg)`, … when
/// `derivative` (the number of primes: the order of the derivative) is above 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The function's name.
    pub name: Name,
    /// Where the name was written.
    pub name_span: Span,
    /// The number of primes after the name.
    pub derivative: u8,
    /// The arguments' nodes, in order.
    pub args: Vec<ExprId>,
}

impl ExprKind {
    /// `name(args…)` (no primes).
    pub fn call(name: Name, name_span: Span, args: Vec<ExprId>) -> ExprKind {
        ExprKind::Call(Box::new(Call {
            name,
            name_span,
            derivative: 0,
            args,
        }))
    }
}

/// One expression node with the span of the text it came from.
///
/// The span is stored as two `u32` byte offsets; offsets past `u32::MAX`
/// (sources over 4 GiB) are stored as `u32::MAX`.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    start: u32,
    end: u32,
}

impl Expr {
    /// A node of `kind` written at `span`.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        let narrow = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        Expr {
            kind,
            start: narrow(span.start),
            end: narrow(span.end),
        }
    }

    /// The span of the text the node came from.
    pub fn span(&self) -> Span {
        Span::new(self.start as usize, self.end as usize)
    }

    /// Sets the node's span.
    pub fn set_span(&mut self, span: Span) {
        *self = Expr::new(
            std::mem::replace(&mut self.kind, ExprKind::Number(0.0)),
            span,
        );
    }
}

/// An interned name: one pointer, compared by address, read as a `&str`.
///
/// Equal texts give the same `Name` (a global table keeps one copy of each
/// distinct text for the life of the process: the names a user typed).
#[derive(Clone, Copy)]
pub struct Name(&'static &'static str);

impl Name {
    /// The interned name with text `text`.
    pub fn new(text: &str) -> Name {
        use std::sync::{LazyLock, Mutex};
        // Fx hashing: the keys are short names typed by the user, looked up
        // several times a statement (SipHash was 2 % of a script's time).
        static TABLE: LazyLock<Mutex<rustc_hash::FxHashMap<&'static str, &'static &'static str>>> =
            LazyLock::new(Default::default);
        let mut table = TABLE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(&name) = table.get(text) {
            return Name(name);
        }
        let text: &'static str = Box::leak(text.to_owned().into_boxed_str());
        let name: &'static &'static str = Box::leak(Box::new(text));
        table.insert(text, name);
        Name(name)
    }

    /// The name's text.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl From<&str> for Name {
    fn from(text: &str) -> Name {
        Name::new(text)
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        self.0
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Name) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for Name {}

impl std::hash::Hash for Name {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        *self.0 == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        *self.0 == other.as_str()
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *self == *other.0
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        self.as_str() == *other.0
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.0, f)
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// A whole expression stored flat: operands before the nodes that use them, root last.
///
/// Invariant: every [`ExprId`] inside a node is smaller than that node's own index,
/// and the tree is never empty.
#[derive(Debug, Clone, PartialEq)]
pub struct ExprTree {
    pub nodes: Vec<Expr>,
}

impl ExprTree {
    /// The root node's id (the last node).
    pub fn root(&self) -> ExprId {
        ExprId(self.nodes.len() as u32 - 1)
    }

    /// The node with id `id`. Panics if `id` is not from this tree.
    pub fn get(&self, id: ExprId) -> &Expr {
        &self.nodes[id.0 as usize]
    }

    /// The span of the whole expression (the root's span).
    pub fn span(&self) -> Span {
        self.nodes[self.nodes.len() - 1].span()
    }

    /// The right side of `target op= value` written out: `target op
    /// (value)`, what `c += v` means (`c = c + v`), spanning from the
    /// target to the value's end. `None` for `=` and `:=`.
    pub fn compound(target: &Ident, op: AssignOp, value: &ExprTree) -> Option<ExprTree> {
        let op = match op {
            AssignOp::Add => BinaryOp::Add,
            AssignOp::Sub => BinaryOp::Sub,
            AssignOp::Mul => BinaryOp::Mul,
            AssignOp::Div => BinaryOp::Div,
            AssignOp::Set | AssignOp::Update => return None,
        };
        let mut nodes = value.nodes.clone();
        let rhs = value.root();
        let lhs = ExprId(nodes.len() as u32);
        nodes.push(Expr::new(
            ExprKind::Name(Name::new(&target.name)),
            target.span,
        ));
        let kind = ExprKind::Binary { op, lhs, rhs };
        nodes.push(Expr::new(kind, target.span.to(value.span())));
        Some(ExprTree { nodes })
    }
}

/// The operator of an assignment statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssignOp {
    /// `x = v`
    Set,
    /// `x += v`
    Add,
    /// `x -= v`
    Sub,
    /// `x *= v`
    Mul,
    /// `x /= v`
    Div,
    /// `x := v`: set the leaf x to v's value in place and rerun the forward
    /// pass of everything built from it.
    Update,
}

impl AssignOp {
    /// The operator as written: `=`, `+=`, `-=`, `*=`, `/=`, `:=`.
    pub fn text(self) -> &'static str {
        match self {
            AssignOp::Set => "=",
            AssignOp::Add => "+=",
            AssignOp::Sub => "-=",
            AssignOp::Mul => "*=",
            AssignOp::Div => "/=",
            AssignOp::Update => ":=",
        }
    }
}

/// A name with the span where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// One statement: what ends at a newline or `;`.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// An expression whose value is printed: `x*y + 1`.
    Expr(ExprTree),
    /// `name = value`, `name += value`, …
    Assign {
        target: Ident,
        op: AssignOp,
        value: ExprTree,
    },
    /// `w1, b := e1, e2`: a simultaneous update of several leaves in place;
    /// every value is computed at the current point before any leaf moves.
    /// The parser keeps what was written: the session refuses a count of
    /// values other than the count of targets.
    Updates {
        targets: Vec<Ident>,
        values: Vec<ExprTree>,
    },
    /// A user function definition `f(x, y) = body`.
    Define {
        name: Ident,
        params: Vec<Ident>,
        body: ExprTree,
    },
    /// A command `:name arg arg…`; arguments are separated by spaces or commas.
    Command { name: Ident, args: Vec<Ident> },
    /// `:repeat N [-f] [FILE.svg] STATEMENTS` (boxed: the other statements
    /// stay small).
    Repeat(Box<Repeat>),
}

/// `:repeat N [-f] [FILE.svg] STATEMENTS`: the `;`-separated statements to
/// run N times, a statement of its own (they hold `;`, `,` and `:=`, which a
/// command's words cannot). The parser keeps what was written: the session
/// checks the count and what the statements are.
#[derive(Debug, Clone, PartialEq)]
pub struct Repeat {
    /// Where `:repeat` was written (the colon included).
    pub head: Span,
    /// The first word after `:repeat`, whatever it is; `None` when there is none.
    pub count: Option<Ident>,
    /// `-f` or `--force` came before the file.
    pub force: bool,
    /// The second word, when it ends in `.svg` (double quotes aside).
    pub file: Option<Ident>,
    /// The statements, in order, each with its span.
    pub body: Vec<Located>,
    /// Where the statements were written: from the end of the last word
    /// (the whitespace before them included) to the end of the statement.
    pub body_span: Span,
}

/// A parsed statement with the span of its whole text.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub statement: Statement,
    pub span: Span,
    /// The rest of a long sum that is not parsed yet, or `None` (always `None`
    /// from [`super::parse_statement`]).
    ///
    /// [`super::Statements`] and [`super::Cursor`] parse a long expression or
    /// assignment (over 64 KiB, cut at top-level `+`/`-`) only as far as its
    /// first piece: `statement` then holds that piece's tree, and
    /// [`Pieces::parse`] gives the later ones one at a time, so that the
    /// whole line's tree is never in memory. `span` still covers the whole
    /// text.
    pub rest: Option<Pieces>,
}
