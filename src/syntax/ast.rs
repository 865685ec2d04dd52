//! The abstract syntax tree: statements and flat expression trees with spans.
//!
//! Expressions are stored flat ([`ExprTree`]): every node's operands come before it
//! in the vector and the root is the last node. Evaluating, printing and dropping a
//! tree are therefore loops, never recursion, however deep the expression is.

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

/// What an expression node is.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A number literal, already converted (`1_000` is 1000.0).
    Number(f64),
    /// A name: a variable, a constant (`pi`), `ans` or `_`.
    Name(String),
    /// `-operand` or `+operand`.
    Unary { op: UnaryOp, operand: ExprId },
    /// `lhs op rhs`.
    Binary {
        op: BinaryOp,
        lhs: ExprId,
        rhs: ExprId,
    },
    /// `name(args…)`, or `name'(arg)`, `name''(arg)`, … when `derivative`
    /// (the number of primes: the order of the derivative) is above 0.
    Call {
        name: String,
        name_span: Span,
        derivative: u8,
        args: Vec<ExprId>,
    },
}

/// One expression node with the span of the text it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
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
        self.nodes[self.nodes.len() - 1].span
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
    /// A user function definition `f(x, y) = body`.
    Define {
        name: Ident,
        params: Vec<Ident>,
        body: ExprTree,
    },
    /// A command `:name arg arg…`; arguments are separated by spaces or commas.
    Command { name: Ident, args: Vec<Ident> },
}

/// A parsed statement with the span of its whole text.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub statement: Statement,
    pub span: Span,
}
