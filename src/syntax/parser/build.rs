//! Tree building: pest's pairs → [`Located`], each flat `expr` folded by a Pratt
//! parser into an [`ExprTree`] (operands pushed before the nodes that use them).

use std::cell::RefCell;
use std::iter::Peekable;

use pest::iterators::Pair;

use super::super::ast::{
    AssignOp, BinaryOp, Call, Expr, ExprId, ExprKind, ExprTree, INDEX, Ident, LIST, Located,
    MATMUL, Name, Repeat, SLICE, SLICE_ALL, SLICE_FROM, SLICE_TO, Span, Statement, UnaryOp,
};
use super::super::lexer::{is_name, normalize_name, superscript_value};
use super::Rule;
use super::prescan::number_value;

/// Precedence, lowest first:
///
/// | level | operators | associativity |
/// |---|---|---|
/// | 1 | `+` `-` | left |
/// | 2 | `*` `/` | left |
/// | 3 | a sign `-x` `+x` | prefix: binds up to the next `+ - * /` (`-2x` = −(2x), `-2^2` = −4) |
/// | 4 | implicit product `2x`, `2 x`, `2(x+1)` | left |
/// | 4½ | a sign right after `^` (`exp_neg`, `exp_plus`), and `√` | prefix: binds only what an unsigned exponent would |
/// | 5 | `^` `**` | right |
/// | 6 | a superscript power `x²`, `x⁻¹` | postfix |
///
/// A sign in an exponent binds only the power's operand (with any `^` chain
/// after it), never an implicit product: `2^-2^3` = 2^(−(2^3)). An implicit
/// product right after an exponent (`2^-2x`, `2^2x`) would fold as (2^−2)·x,
/// but the pre-scan refuses it first (`exponent.rs`): handwriting means either.
/// The grammar gives such signs their own rules so that the Pratt parser can
/// rank them between level 4 and level 5.
/// The binding power of an operator pair, `None` for an operand.
///
/// Levels are the table above, 10 apart as in pest's `PrattParser` (which this
/// loop replaced: its map lookups cost 4 % of a script's time). Infix
/// operators bind their right side above their own level (left associative)
/// or just below it (right associative, `^`); a prefix operator binds its
/// operand just below its level.
fn binding(rule: Rule) -> Option<Binding> {
    Some(match rule {
        Rule::add | Rule::sub => Binding::Infix {
            level: 10,
            right: 10,
        },
        Rule::mul | Rule::div | Rule::matmul => Binding::Infix {
            level: 20,
            right: 20,
        },
        Rule::neg | Rule::plus => Binding::Prefix { operand: 29 },
        Rule::implicit_mul => Binding::Infix {
            level: 40,
            right: 40,
        },
        Rule::exp_neg | Rule::exp_plus | Rule::root => Binding::Prefix { operand: 49 },
        Rule::pow => Binding::Infix {
            level: 60,
            right: 59,
        },
        Rule::sup => Binding::Postfix { level: 70 },
        Rule::index | Rule::transpose => Binding::Postfix { level: 80 },
        _ => return None,
    })
}

/// How an operator pair binds (see [`binding`]).
#[derive(Clone, Copy)]
enum Binding {
    /// `a op b`: binds when the caller's floor is below `level`; its right
    /// side takes operators above `right`.
    Infix { level: u8, right: u8 },
    /// `op a`: its operand takes operators above `operand`.
    Prefix { operand: u8 },
    /// `a op`: binds when the caller's floor is below `level`.
    Postfix { level: u8 },
}

/// Collects the nodes of one [`ExprTree`] while the Pratt parser folds an `expr`.
struct Builder {
    nodes: RefCell<Vec<Expr>>,
    offset: usize,
}

impl Builder {
    fn new(offset: usize) -> Self {
        Builder {
            nodes: RefCell::new(Vec::with_capacity(8)),
            offset,
        }
    }

    fn span(&self, span: pest::Span<'_>) -> Span {
        Span::new(self.offset + span.start(), self.offset + span.end())
    }

    fn push(&self, kind: ExprKind, span: Span) -> ExprId {
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(Expr::new(kind, span));
        ExprId((nodes.len() - 1) as u32)
    }

    fn node_span(&self, id: ExprId) -> Span {
        self.nodes.borrow()[id.0 as usize].span()
    }

    /// Folds an `expr` pair into nodes, returning the id of its root.
    fn expr(&self, pair: Pair<'_, Rule>) -> ExprId {
        self.fold(pair.into_inner())
    }

    /// Folds the `expr` pair `pair` as the rest of a sum: with `acc` = (`a`,
    /// `op`), the tree of `a op pair`, `a` standing for everything before it.
    ///
    /// Folds term by term (a term: the pairs between two top-level `+`/`-`,
    /// the lowest, left-associative level), so the result is node for node
    /// the tree that one Pratt parse of the whole text would give.
    fn expr_after(&self, pair: Pair<'_, Rule>, mut acc: Option<(ExprId, BinaryOp)>) -> ExprId {
        let mut term = Vec::new();
        let mut pairs = pair.into_inner();
        loop {
            let next = pairs.next();
            let op = match next.as_ref().map(Pair::as_rule) {
                Some(Rule::add) => Some(BinaryOp::Add),
                Some(Rule::sub) => Some(BinaryOp::Sub),
                None => None,
                Some(_) => {
                    term.extend(next);
                    continue;
                }
            };
            let mut root = self.fold(term.drain(..));
            if let Some((lhs, op)) = acc {
                let span = self.node_span(lhs).to(self.node_span(root));
                root = self.push(ExprKind::Binary { op, lhs, rhs: root }, span);
            }
            match op {
                Some(op) => acc = Some((root, op)),
                None => return root,
            }
        }
    }

    /// Folds a flat sequence of an `expr`'s pairs (operands and operators).
    fn fold<'i>(&self, pairs: impl Iterator<Item = Pair<'i, Rule>>) -> ExprId {
        self.fold_above(&mut pairs.peekable(), 0)
    }

    /// Precedence climbing: folds an operand and every operator after it that
    /// binds above `floor`. Recursion (a prefix's operand, an infix's right
    /// side) is as deep as the nesting the pre-scan bounds (`MAX_NESTING`).
    fn fold_above<'i, I>(&self, pairs: &mut Peekable<I>, floor: u8) -> ExprId
    where
        I: Iterator<Item = Pair<'i, Rule>>,
    {
        let first = pairs.next().unwrap_or_else(|| grammar_bug("expr"));
        let mut lhs = match binding(first.as_rule()) {
            Some(Binding::Prefix { operand }) => {
                let operand = self.fold_above(pairs, operand);
                self.prefix(first, operand)
            }
            _ => self.primary(first),
        };
        while let Some(op) = pairs.peek() {
            match binding(op.as_rule()) {
                Some(Binding::Infix { level, right }) if level > floor => {
                    let op = pairs.next().unwrap_or_else(|| grammar_bug("expr"));
                    let rhs = self.fold_above(pairs, right);
                    lhs = self.infix(lhs, op.as_rule(), rhs);
                }
                Some(Binding::Postfix { level }) if level > floor => {
                    let post = pairs.next().unwrap_or_else(|| grammar_bug("expr"));
                    lhs = self.postfix(lhs, post);
                }
                _ => break,
            }
        }
        lhs
    }

    /// `op operand` for a prefix pair: a sign, or `√u` (the call `sqrt(u)`).
    fn prefix(&self, op: Pair<'_, Rule>, operand: ExprId) -> ExprId {
        let op_kind = match op.as_rule() {
            Rule::neg | Rule::exp_neg => UnaryOp::Neg,
            Rule::root => {
                // `√u` is the call `sqrt(u)` (built-in names cannot be redefined).
                let name_span = self.span(op.as_span());
                let call = ExprKind::call(Name::new("sqrt"), name_span, vec![operand]);
                return self.push(call, name_span.to(self.node_span(operand)));
            }
            _ => UnaryOp::Plus,
        };
        let span = self.span(op.as_span()).to(self.node_span(operand));
        self.push(
            ExprKind::Unary {
                op: op_kind,
                operand,
            },
            span,
        )
    }

    /// `base²`: a superscript power is `base^2`, the superscript the exponent's
    /// number node. A negative one (`x⁻¹`) is a negation of the number, as
    /// `x^-1` parses, so that the two spellings give the same tree.
    fn superscript(&self, base: ExprId, sup: Pair<'_, Rule>) -> ExprId {
        let sup_span = self.span(sup.as_span());
        let value = superscript_value(sup.as_str());
        let magnitude = self.push(ExprKind::Number(value.abs()), sup_span);
        let exponent = if value.is_sign_negative() {
            self.push(
                ExprKind::Unary {
                    op: UnaryOp::Neg,
                    operand: magnitude,
                },
                sup_span,
            )
        } else {
            magnitude
        };
        let span = self.node_span(base).to(sup_span);
        self.push(
            ExprKind::Binary {
                op: BinaryOp::Pow,
                lhs: base,
                rhs: exponent,
            },
            span,
        )
    }

    /// A postfix pair after `base`: a superscript power `x²`, an index
    /// `x[i]`, `W[i, j]` (the call [`INDEX`]`(W, i, j)`) or a transpose `Wᵀ`
    /// (the call `transpose(W)`).
    fn postfix(&self, base: ExprId, post: Pair<'_, Rule>) -> ExprId {
        let span = self.node_span(base).to(self.span(post.as_span()));
        let name_span = self.span(post.as_span());
        match post.as_rule() {
            Rule::index => {
                let mut args = vec![base];
                args.extend(post.into_inner().map(|index| match index.as_rule() {
                    Rule::slice => self.slice(index),
                    _ => self.expr(index),
                }));
                self.push(ExprKind::call(Name::new(INDEX), name_span, args), span)
            }
            Rule::transpose => self.push(
                ExprKind::call(Name::new("transpose"), name_span, vec![base]),
                span,
            ),
            _ => self.superscript(base, post),
        }
    }

    /// A slice `start:end` inside an index: the call [`SLICE`]`(start, end)`,
    /// or [`SLICE_FROM`], [`SLICE_TO`], [`SLICE_ALL`] with the bounds given.
    fn slice(&self, pair: Pair<'_, Rule>) -> ExprId {
        let span = self.span(pair.as_span());
        let mut start = None;
        let mut end = None;
        let mut after = false;
        for part in pair.into_inner() {
            match part.as_rule() {
                Rule::slice_colon => after = true,
                _ if after => end = Some(self.expr(part)),
                _ => start = Some(self.expr(part)),
            }
        }
        let name = match (start, end) {
            (Some(_), Some(_)) => SLICE,
            (Some(_), None) => SLICE_FROM,
            (None, Some(_)) => SLICE_TO,
            (None, None) => SLICE_ALL,
        };
        let args = start.into_iter().chain(end).collect();
        self.push(ExprKind::call(Name::new(name), span, args), span)
    }

    /// `lhs op rhs` for an infix operator's rule (an implicit product is `*`;
    /// `@` is the call [`MATMUL`]`(lhs, rhs)`).
    fn infix(&self, lhs: ExprId, op: Rule, rhs: ExprId) -> ExprId {
        if op == Rule::matmul {
            let span = self.node_span(lhs).to(self.node_span(rhs));
            let call = ExprKind::call(Name::new(MATMUL), span, vec![lhs, rhs]);
            return self.push(call, span);
        }
        let op = match op {
            Rule::add => BinaryOp::Add,
            Rule::sub => BinaryOp::Sub,
            Rule::div => BinaryOp::Div,
            Rule::pow => BinaryOp::Pow,
            _ => BinaryOp::Mul,
        };
        let span = self.node_span(lhs).to(self.node_span(rhs));
        self.push(ExprKind::Binary { op, lhs, rhs }, span)
    }

    fn primary(&self, pair: Pair<'_, Rule>) -> ExprId {
        let span = self.span(pair.as_span());
        match pair.as_rule() {
            Rule::number => self.push(ExprKind::Number(number_value(pair.as_str())), span),
            Rule::paren => {
                let id = self.arguments(pair.into_inner()).pop();
                let id = id.unwrap_or_else(|| grammar_bug("paren"));
                // The node for `(a+b)` covers the brackets too.
                self.nodes.borrow_mut()[id.0 as usize].set_span(span);
                id
            }
            Rule::list => {
                let elements = pair.into_inner().map(|e| self.expr(e)).collect();
                self.push(ExprKind::call(Name::new(LIST), span, elements), span)
            }
            Rule::call => {
                let mut inner = pair.into_inner();
                let Some(callee) = inner.next() else {
                    grammar_bug("call")
                };
                let mut parts = callee.into_inner();
                let name = parts.next().unwrap_or_else(|| grammar_bug("callee"));
                let derivative = parts
                    .next()
                    .map_or(0, |p| u8::try_from(p.as_str().len()).unwrap_or(u8::MAX));
                let args = self.arguments(inner);
                let call = ExprKind::Call(Box::new(Call {
                    name: name_of(name.as_str()),
                    name_span: self.span(name.as_span()),
                    derivative,
                    args,
                }));
                self.push(call, span)
            }
            _ => self.push(ExprKind::Name(name_of(pair.as_str())), span),
        }
    }

    /// The `expr` pairs of a bracket or a call's arguments as nodes, an
    /// `expr compare expr` run folded into one comparison ([`Self::compare`]).
    fn arguments<'i>(&self, pairs: impl Iterator<Item = Pair<'i, Rule>>) -> Vec<ExprId> {
        let mut args: Vec<ExprId> = Vec::new();
        let mut pairs = pairs.peekable();
        while let Some(pair) = pairs.next() {
            if pair.as_rule() == Rule::compare {
                let (Some(lhs), Some(rhs)) = (args.pop(), pairs.next()) else {
                    grammar_bug("compare")
                };
                let rhs = self.expr(rhs);
                args.push(self.compare(lhs, pair.as_str(), rhs));
            } else if pair.as_rule() == Rule::keyword_arg {
                args.push(self.keyword_arg(pair));
            } else {
                args.push(self.expr(pair));
            }
        }
        args
    }

    /// The comparison `lhs op rhs` as 0/1 arithmetic of the op table, so
    /// every evaluator, scalar or tensor, reads it and it passes no gradient
    /// (`sign` passes nothing, as numpy's and PyTorch's comparisons):
    /// `a > b` is `relu(sign(a - b))`, `a < b` is `relu(sign(b - a))`,
    /// `a == b` is `1 - abs(sign(a - b))`; `>=`, `<=` and `!=` are one minus
    /// `<`, `>` and `==`.
    fn compare(&self, lhs: ExprId, op: &str, rhs: ExprId) -> ExprId {
        let span = self.node_span(lhs).to(self.node_span(rhs));
        let call = |name: &str, arg: ExprId| {
            self.push(ExprKind::call(Name::new(name), span, vec![arg]), span)
        };
        let flip = matches!(op, "<" | ">=" | "≥");
        let (a, b) = if flip { (rhs, lhs) } else { (lhs, rhs) };
        let difference = self.push(
            ExprKind::Binary {
                op: BinaryOp::Sub,
                lhs: a,
                rhs: b,
            },
            span,
        );
        let sign = call("sign", difference);
        let (test, negated) = match op {
            "==" => (call("abs", sign), true),
            "!=" | "≠" => (call("abs", sign), false),
            ">" | "<" => (call("relu", sign), false),
            _ => (call("relu", sign), true),
        };
        if !negated {
            return test;
        }
        let one = self.push(ExprKind::Number(1.0), span);
        self.push(
            ExprKind::Binary {
                op: BinaryOp::Sub,
                lhs: one,
                rhs: test,
            },
            span,
        )
    }

    /// `axis=1` in a call: the call `axis=(1)` (`keyword_of` reads it).
    fn keyword_arg(&self, pair: Pair<'_, Rule>) -> ExprId {
        let span = self.span(pair.as_span());
        let mut inner = pair.into_inner();
        let name = inner.next().unwrap_or_else(|| grammar_bug("keyword_arg"));
        let value = inner
            .next()
            .map_or_else(|| grammar_bug("keyword_arg"), |e| self.expr(e));
        let callee = Name::new(&format!("{}=", name.as_str()));
        self.push(
            ExprKind::call(callee, self.span(name.as_span()), vec![value]),
            span,
        )
    }

    fn finish(self) -> ExprTree {
        ExprTree {
            nodes: self.nodes.into_inner(),
        }
    }
}

/// The interned name for the text `text`, in NFC (see [`normalize_name`]).
fn name_of(text: &str) -> Name {
    if text.is_ascii() {
        Name::new(text)
    } else {
        Name::new(&normalize_name(text))
    }
}

/// The grammar guarantees the shape of its pairs; this is never reached.
fn grammar_bug(rule: &str) -> ! {
    unreachable!("gradcalc.pest: a `{rule}` pair without its children")
}

/// The parts of a `repeat` pair, its `body` still empty: the parser parses
/// the statements at `body_span` (see `super::parse_repeat_body`).
fn repeat(pair: Pair<'_, Rule>, offset: usize) -> Repeat {
    let at = |pair: &Pair<'_, Rule>| {
        let span = pair.as_span();
        Span::new(offset + span.start(), offset + span.end())
    };
    // A word as typed: a file name is not normalized as a name would be.
    let word = |pair: &Pair<'_, Rule>| Ident {
        name: pair.as_str().to_string(),
        span: at(pair),
    };
    let mut repeat = Repeat {
        head: Span::default(),
        count: None,
        force: false,
        file: None,
        body: Vec::new(),
        body_span: Span::default(),
    };
    let mut body = None;
    for part in pair.into_inner() {
        match part.as_rule() {
            Rule::repeat_head => repeat.head = at(&part),
            Rule::repeat_count => repeat.count = Some(word(&part)),
            Rule::repeat_force => repeat.force = true,
            Rule::repeat_file => repeat.file = Some(word(&part)),
            _ => body = Some(at(&part)),
        }
    }
    // No statements: an empty span after the last word.
    repeat.body_span = body.unwrap_or_else(|| {
        let end = [repeat.file.as_ref(), repeat.count.as_ref()]
            .into_iter()
            .flatten()
            .next()
            .map_or(repeat.head.end, |word| word.span.end);
        Span::new(end, end)
    });
    repeat
}

/// An identifier, its name in NFC (see [`normalize_name`]); a command's word
/// is normalized only when it is shaped like a name (a file name stays as typed).
fn ident(pair: &Pair<'_, Rule>, offset: usize) -> Ident {
    let span = pair.as_span();
    let text = pair.as_str();
    let name_shaped = is_name(text);
    Ident {
        name: if name_shaped {
            normalize_name(text)
        } else {
            text.to_string()
        },
        span: Span::new(offset + span.start(), offset + span.end()),
    }
}

fn tree(pair: Pair<'_, Rule>, offset: usize) -> ExprTree {
    let builder = Builder::new(offset);
    builder.expr(pair);
    builder.finish()
}

/// The tree of a later piece of a long sum (a statement's value cut at
/// top-level `+`/`-`, see `super::Pieces`): `seed op pair`, where node 0 is a
/// placeholder (the number 0, at span `seed`) for the value of everything
/// before the piece, and `pair` is the piece's `expr`, starting at byte
/// `offset` of the source.
///
/// Folds as [`Builder::expr_after`] does, so that [`append_piece`] of the
/// pieces in turn onto the first one's tree gives node for node the tree of
/// one parse of the whole text.
pub(super) fn piece_tree(
    seed: Span,
    op: BinaryOp,
    pair: Pair<'_, Rule>,
    offset: usize,
) -> ExprTree {
    let builder = Builder::new(offset);
    let placeholder = builder.push(ExprKind::Number(0.0), seed);
    builder.expr_after(pair, Some((placeholder, op)));
    builder.finish()
}

/// Appends `piece` (from [`piece_tree`]) to `tree`: the piece's placeholder
/// becomes `tree`'s root, its other nodes follow `tree`'s, renumbered.
pub(crate) fn append_piece(tree: &mut ExprTree, piece: ExprTree) {
    let root = tree.root();
    // Piece node k ≥ 1 lands at index base + k.
    let base = tree.nodes.len() as u32 - 1;
    let map = |id: &mut ExprId| {
        *id = if id.0 == 0 { root } else { ExprId(base + id.0) };
    };
    tree.nodes.reserve(piece.nodes.len() - 1);
    for mut node in piece.nodes.into_iter().skip(1) {
        match &mut node.kind {
            ExprKind::Number(_) | ExprKind::Name(_) => {}
            ExprKind::Unary { operand, .. } => map(operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                map(lhs);
                map(rhs);
            }
            ExprKind::Call(call) => call.args.iter_mut().for_each(map),
        }
        tree.nodes.push(node);
    }
}

/// Builds the statement from the child of the `statement` pair.
pub(super) fn build_statement(pair: Pair<'_, Rule>, offset: usize) -> Located {
    let pest_span = pair.as_span();
    let span = Span::new(offset + pest_span.start(), offset + pest_span.end());
    let statement = match pair.as_rule() {
        Rule::command => {
            let mut inner = pair.into_inner();
            let name = inner.next().unwrap_or_else(|| grammar_bug("command"));
            Statement::Command {
                name: ident(&name, offset),
                args: inner.map(|w| ident(&w, offset)).collect(),
            }
        }
        Rule::repeat => Statement::Repeat(Box::new(repeat(pair, offset))),
        Rule::definition => {
            let mut inner = pair.into_inner();
            let name = inner.next().unwrap_or_else(|| grammar_bug("definition"));
            let mut params = Vec::new();
            let mut body = None;
            for part in inner {
                match part.as_rule() {
                    Rule::name => params.push(ident(&part, offset)),
                    _ => body = Some(tree(part, offset)),
                }
            }
            Statement::Define {
                name: ident(&name, offset),
                params,
                body: body.unwrap_or_else(|| grammar_bug("definition")),
            }
        }
        Rule::assignment => {
            let mut inner = pair.into_inner();
            let (Some(target), Some(op), Some(value)) = (inner.next(), inner.next(), inner.next())
            else {
                grammar_bug("assignment")
            };
            let op = match op.as_str() {
                "+=" => AssignOp::Add,
                "-=" => AssignOp::Sub,
                "*=" => AssignOp::Mul,
                "/=" => AssignOp::Div,
                ":=" => AssignOp::Update,
                _ => AssignOp::Set,
            };
            Statement::Assign {
                target: ident(&target, offset),
                op,
                value: tree(value, offset),
            }
        }
        Rule::updates => {
            let mut targets = Vec::new();
            let mut values = Vec::new();
            for part in pair.into_inner() {
                match part.as_rule() {
                    Rule::name => targets.push(ident(&part, offset)),
                    _ => values.push(tree(part, offset)),
                }
            }
            Statement::Updates { targets, values }
        }
        _ => Statement::Expr(tree(pair, offset)),
    };
    Located {
        statement,
        span,
        rest: None,
    }
}
