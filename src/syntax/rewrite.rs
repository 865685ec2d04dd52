//! Building and rewriting expression trees: composing trees into bigger ones,
//! replacing names by trees, and folding constant arithmetic.
//!
//! Every function here walks the flat [`ExprTree`] in a loop (operands come
//! before their users), never recursively, and returns a tree that keeps the
//! invariant: operands before users, root last. Spans of built and rewritten
//! nodes are empty (`Span::default()`): the trees are printed, not reported on.

use std::borrow::Cow;

use super::ast::{
    BinaryOp, Call, Expr, ExprId, ExprKind, ExprTree, Name, Span, Statement, UnaryOp,
};
use super::error::SyntaxError;

impl ExprTree {
    /// A tree of one node.
    pub fn leaf(kind: ExprKind) -> ExprTree {
        ExprTree {
            nodes: vec![Expr::new(kind, Span::default())],
        }
    }

    /// A number literal.
    pub fn number(value: f64) -> ExprTree {
        ExprTree::leaf(ExprKind::Number(value))
    }

    /// A name.
    pub fn name(name: &str) -> ExprTree {
        ExprTree::leaf(ExprKind::Name(Name::new(name)))
    }

    /// A new root over copies of `parts`: `make` receives the ids of the parts'
    /// roots in the new tree, in order, and returns the root's kind.
    /// `ExprTree::compose(&[&a, &b], |ids| ExprKind::Binary { op: BinaryOp::Mul,
    /// lhs: ids[0], rhs: ids[1] })` is `a*b`.
    pub fn compose(parts: &[&ExprTree], make: impl FnOnce(&[ExprId]) -> ExprKind) -> ExprTree {
        let mut nodes = Vec::with_capacity(parts.iter().map(|p| p.nodes.len()).sum::<usize>() + 1);
        let mut roots = Vec::with_capacity(parts.len());
        for part in parts {
            let offset = nodes.len() as u32;
            nodes.extend(
                part.nodes.iter().map(|node| {
                    Expr::new(shift(&node.kind, |id| ExprId(id.0 + offset)), node.span())
                }),
            );
            roots.push(ExprId(nodes.len() as u32 - 1));
        }
        nodes.push(Expr::new(make(&roots), Span::default()));
        ExprTree { nodes }
    }

    /// `op(args…)` as a call of a function by name.
    pub fn call(name: &str, args: &[&ExprTree]) -> ExprTree {
        ExprTree::compose(args, |ids| {
            ExprKind::call(Name::new(name), Span::default(), ids.to_vec())
        })
    }

    /// `lhs op rhs`.
    pub fn binary(op: BinaryOp, lhs: &ExprTree, rhs: &ExprTree) -> ExprTree {
        ExprTree::compose(&[lhs, rhs], |ids| ExprKind::Binary {
            op,
            lhs: ids[0],
            rhs: ids[1],
        })
    }

    /// `-operand`.
    pub fn negate(operand: &ExprTree) -> ExprTree {
        ExprTree::compose(&[operand], |ids| ExprKind::Unary {
            op: UnaryOp::Neg,
            operand: ids[0],
        })
    }

    /// This tree with every [`ExprKind::Name`] that `bindings` lists replaced by
    /// a copy of its tree (`bindings` pairs a name with its replacement). Names
    /// not listed, and call names, are left alone; replacements are not
    /// searched again, so `a → b`, `b → a` swaps.
    pub fn substitute(&self, bindings: &[(&str, &ExprTree)]) -> ExprTree {
        self.replace_leaves(|kind| match kind {
            ExprKind::Name(name) => bindings
                .iter()
                .find(|(n, _)| n == name)
                .map(|&(_, tree)| Cow::Borrowed(tree)),
            _ => None,
        })
    }

    /// This tree with every number literal for which `name` gives a tree
    /// replaced by a copy of that tree (`6.283185307179586` by `2*pi`), the
    /// other nodes as they were.
    pub fn replace_numbers(&self, name: impl Fn(f64) -> Option<ExprTree>) -> ExprTree {
        self.replace_leaves(|kind| match kind {
            ExprKind::Number(x) => name(*x).map(Cow::Owned),
            _ => None,
        })
    }

    /// This tree with every node for which `replacement` gives a tree replaced
    /// by a copy of that tree (its operands dropped), the other nodes as they
    /// were, re-pointed at the replaced ones.
    fn replace_leaves<'t>(
        &self,
        replacement: impl Fn(&ExprKind) -> Option<Cow<'t, ExprTree>>,
    ) -> ExprTree {
        let mut nodes = Vec::with_capacity(self.nodes.len());
        let mut new_id = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            if let Some(tree) = replacement(&node.kind) {
                let offset = nodes.len() as u32;
                nodes.extend(
                    tree.nodes
                        .iter()
                        .map(|n| Expr::new(shift(&n.kind, |id| ExprId(id.0 + offset)), n.span())),
                );
            } else {
                nodes.push(Expr::new(
                    shift(&node.kind, |id| new_id[id.0 as usize]),
                    node.span(),
                ));
            }
            new_id.push(ExprId(nodes.len() as u32 - 1));
        }
        ExprTree { nodes }
    }

    /// This tree with its constant arithmetic done, so that it reads as one
    /// would write it: `2*x^(2-1)` becomes `2*x`, `-(1)` becomes `-1`.
    ///
    /// Folds an operator `+ - * / ^` or a sign whose operands are all number
    /// literals when the result is exact (`2 - 1`, `1/2`, `3^2`; not `1/3`,
    /// which stays as written), and drops the identities `x^1`, `1*x`, `x*1`,
    /// `x/1`, `x + 0`, `0 + x`, `x - 0`, `+x`; `ln(2.718281828459045)` (ln of
    /// e's digits) is 1. The value the tree evaluates to
    /// never changes: a folded literal is the IEEE result of the operation it
    /// replaces, and the dropped identities return their operand unchanged
    /// (but `x + 0` and `0 + x`, which turn a `-0` into `0`: equal values).
    pub fn fold_constants(&self) -> ExprTree {
        let mut nodes: Vec<Expr> = Vec::with_capacity(self.nodes.len());
        let mut new_id: Vec<ExprId> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let kind = shift(&node.kind, |id| new_id[id.0 as usize]);
            let folded = fold_kind(&kind, |id| literal(&nodes, id));
            match folded {
                Fold::To(id) => new_id.push(id),
                Fold::Number(x) => {
                    nodes.push(Expr::new(ExprKind::Number(x), node.span()));
                    new_id.push(ExprId(nodes.len() as u32 - 1));
                }
                Fold::Keep => {
                    nodes.push(Expr::new(kind, node.span()));
                    new_id.push(ExprId(nodes.len() as u32 - 1));
                }
            }
        }
        let root = new_id[new_id.len() - 1];
        retain_reachable(nodes, root)
    }
}

/// Parses `text` as one expression (the whole text).
///
/// # Errors
/// A [`SyntaxError`] if the text is not a single expression: a syntax error, or
/// an assignment, definition or command ([`SyntaxError::Unexpected`]).
pub fn parse_expression(text: &str) -> Result<ExprTree, SyntaxError> {
    let located = super::parse_statement(text, Span::new(0, text.len()))?;
    match located.statement {
        Statement::Expr(tree) => Ok(tree),
        _ => Err(SyntaxError::Unexpected {
            span: located.span,
            expected: "an expression".to_string(),
            found: "a statement".to_string(),
            help: None,
        }),
    }
}

/// What one node folds to.
enum Fold {
    /// Nothing to fold.
    Keep,
    /// The node is this literal.
    Number(f64),
    /// The node is this (already built) node.
    To(ExprId),
}

/// The value of node `id` of `nodes` when it is a number literal.
fn literal(nodes: &[Expr], id: ExprId) -> Option<f64> {
    match nodes[id.0 as usize].kind {
        ExprKind::Number(x) => Some(x),
        _ => None,
    }
}

/// What one node of kind `kind` folds to, `literal` giving the value of an
/// operand that is a number literal ([`ExprTree::fold_constants`]' rules).
fn fold_kind(kind: &ExprKind, literal: impl Fn(ExprId) -> Option<f64>) -> Fold {
    match kind {
        ExprKind::Unary {
            op: UnaryOp::Plus,
            operand,
        } => Fold::To(*operand),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            operand,
        } => match literal(*operand) {
            Some(x) => Fold::Number(-x),
            None => Fold::Keep,
        },
        ExprKind::Binary { op, lhs, rhs } => {
            fold_binary(*op, *lhs, *rhs, literal(*lhs), literal(*rhs))
        }
        // ln(e) of e's digits is exactly 1 (a rule's `ln(a)` at a = e).
        ExprKind::Call(call)
            if call.name == "ln"
                && call.derivative == 0
                && call.args.len() == 1
                && literal(call.args[0]) == Some(std::f64::consts::E) =>
        {
            Fold::Number(1.0)
        }
        _ => Fold::Keep,
    }
}

/// Expression trees built node by node in one arena, their constant
/// arithmetic folded as each node is added (the rules of
/// [`ExprTree::fold_constants`]), then taken out one tree at a time: a text
/// of n nodes is built in time linear in n, where composing whole trees
/// ([`ExprTree::compose`]) copies its parts at every step. Each node is to
/// have one user (a tree); a leaf wanted in several places is added again.
#[derive(Debug, Default)]
pub struct Forest {
    nodes: Vec<Expr>,
    /// Per node: at least how many characters its tree prints as.
    chars: Vec<usize>,
    /// Whether `0*a` and `a*0` are written `0` (nan where `a` is inf or nan).
    drop_zero_products: bool,
}

impl Forest {
    /// An empty forest; with `drop_zero_products`, `0*a` and `a*0` fold to `0`.
    pub fn new(drop_zero_products: bool) -> Forest {
        Forest {
            drop_zero_products,
            ..Forest::default()
        }
    }

    /// Adds a node of kind `kind` over nodes already added, folded: returns
    /// the id of what it folds to (a new literal, one of its operands, or the
    /// new node).
    pub fn push(&mut self, kind: ExprKind) -> ExprId {
        let nodes = &self.nodes;
        let zero = |id: &ExprId| literal(nodes, *id) == Some(0.0);
        let folded = match fold_kind(&kind, |id| literal(nodes, id)) {
            Fold::Keep => match &kind {
                ExprKind::Binary {
                    op: BinaryOp::Mul,
                    lhs,
                    rhs,
                } if self.drop_zero_products && (zero(lhs) || zero(rhs)) => Fold::Number(0.0),
                _ => Fold::Keep,
            },
            other => other,
        };
        let kind = match folded {
            Fold::To(id) => return id,
            Fold::Number(x) => ExprKind::Number(x),
            Fold::Keep => kind,
        };
        let size = |id: &ExprId| self.chars[id.0 as usize];
        let chars = match &kind {
            ExprKind::Number(_) => 1,
            ExprKind::Name(name) => name.as_str().len(),
            ExprKind::Unary { operand, .. } => 1 + size(operand),
            ExprKind::Binary { op, lhs, rhs } => size(lhs) + op.symbol().len() + size(rhs),
            ExprKind::Call(call) => {
                call.name.as_str().len() + 1 + call.args.iter().map(|a| size(a) + 1).sum::<usize>()
            }
        };
        self.nodes.push(Expr::new(kind, Span::default()));
        self.chars.push(chars);
        ExprId(self.nodes.len() as u32 - 1)
    }

    /// Adds a copy of `tree`, node by node (folded as [`Forest::push`] folds),
    /// with each name for which `fill` gives a node replaced by that node;
    /// returns the copy's root.
    pub fn graft(
        &mut self,
        tree: &ExprTree,
        mut fill: impl FnMut(&mut Forest, Name) -> Option<ExprId>,
    ) -> ExprId {
        let mut new_id: Vec<ExprId> = Vec::with_capacity(tree.nodes.len());
        for node in &tree.nodes {
            let filled = match &node.kind {
                ExprKind::Name(name) => fill(self, *name),
                _ => None,
            };
            let id = match filled {
                Some(id) => id,
                None => self.push(shift(&node.kind, |id| new_id[id.0 as usize])),
            };
            new_id.push(id);
        }
        new_id[new_id.len() - 1]
    }

    /// The kind of node `id`.
    pub fn kind(&self, id: ExprId) -> &ExprKind {
        &self.nodes[id.0 as usize].kind
    }

    /// At least how many characters the tree at `id` prints as.
    pub fn chars(&self, id: ExprId) -> usize {
        self.chars[id.0 as usize]
    }

    /// The tree whose root is `root`, as an [`ExprTree`] of its own: time
    /// linear in its size, whatever the forest's.
    pub fn tree(&self, root: ExprId) -> ExprTree {
        // Preorder from the root (every user before its operands), reversed:
        // operands before users, root last.
        let mut preorder = Vec::new();
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            preorder.push(id);
            match self.kind(id) {
                ExprKind::Number(_) | ExprKind::Name(_) => {}
                ExprKind::Unary { operand, .. } => stack.push(*operand),
                ExprKind::Binary { lhs, rhs, .. } => stack.extend([*lhs, *rhs]),
                ExprKind::Call(call) => stack.extend(call.args.iter().copied()),
            }
        }
        preorder.reverse();
        let mut new_id: rustc_hash::FxHashMap<ExprId, ExprId> = rustc_hash::FxHashMap::default();
        new_id.reserve(preorder.len());
        let mut nodes = Vec::with_capacity(preorder.len());
        for id in preorder {
            new_id.insert(id, ExprId(nodes.len() as u32));
            nodes.push(Expr::new(
                shift(self.kind(id), |operand| new_id[&operand]),
                Span::default(),
            ));
        }
        ExprTree { nodes }
    }
}

fn fold_binary(op: BinaryOp, lhs: ExprId, rhs: ExprId, a: Option<f64>, b: Option<f64>) -> Fold {
    if let (Some(a), Some(b)) = (a, b) {
        let (value, exact) = match op {
            BinaryOp::Add => (a + b, sum_is_exact(a, b)),
            BinaryOp::Sub => (a - b, sum_is_exact(a, -b)),
            BinaryOp::Mul => {
                let p = a * b;
                (p, a.mul_add(b, -p) == 0.0)
            }
            BinaryOp::Div => {
                let q = a / b;
                (q, b != 0.0 && q.mul_add(b, -a) == 0.0)
            }
            BinaryOp::Pow => {
                // The same function the evaluator uses for `^`.
                let p = a.powf(b);
                let small_integers = a.fract() == 0.0 && b.fract() == 0.0 && b >= 0.0;
                (p, small_integers && p.abs() < 2f64.powi(53))
            }
        };
        if exact && value.is_finite() {
            return Fold::Number(value);
        }
        return Fold::Keep;
    }
    match (op, a, b) {
        (BinaryOp::Pow, _, Some(1.0)) => Fold::To(lhs),
        (BinaryOp::Mul, Some(1.0), _) => Fold::To(rhs),
        (BinaryOp::Mul | BinaryOp::Div, _, Some(1.0)) => Fold::To(lhs),
        (BinaryOp::Add, Some(0.0), _) => Fold::To(rhs),
        (BinaryOp::Add | BinaryOp::Sub, _, Some(0.0)) => Fold::To(lhs),
        _ => Fold::Keep,
    }
}

/// Whether `a + b` is exact: Knuth's TwoSum error term is 0.
fn sum_is_exact(a: f64, b: f64) -> bool {
    let s = a + b;
    let b_virtual = s - a;
    let a_virtual = s - b_virtual;
    (a - a_virtual) + (b - b_virtual) == 0.0
}

/// `kind` with every operand id mapped through `map`.
fn shift(kind: &ExprKind, map: impl Fn(ExprId) -> ExprId) -> ExprKind {
    match kind {
        ExprKind::Number(_) | ExprKind::Name(_) => kind.clone(),
        ExprKind::Unary { op, operand } => ExprKind::Unary {
            op: *op,
            operand: map(*operand),
        },
        ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
            op: *op,
            lhs: map(*lhs),
            rhs: map(*rhs),
        },
        ExprKind::Call(call) => ExprKind::Call(Box::new(Call {
            args: call.args.iter().map(|&id| map(id)).collect(),
            ..**call
        })),
    }
}

/// The nodes `root` reaches, in their order, with `root` last.
fn retain_reachable(nodes: Vec<Expr>, root: ExprId) -> ExprTree {
    let mut reached = vec![false; root.0 as usize + 1];
    reached[root.0 as usize] = true;
    // Operands have smaller ids than their users: one backward sweep marks all.
    for i in (0..=root.0 as usize).rev() {
        if !reached[i] {
            continue;
        }
        let mark = |id: &ExprId, reached: &mut Vec<bool>| reached[id.0 as usize] = true;
        match &nodes[i].kind {
            ExprKind::Number(_) | ExprKind::Name(_) => {}
            ExprKind::Unary { operand, .. } => mark(operand, &mut reached),
            ExprKind::Binary { lhs, rhs, .. } => {
                mark(lhs, &mut reached);
                mark(rhs, &mut reached);
            }
            ExprKind::Call(call) => call.args.iter().for_each(|a| mark(a, &mut reached)),
        }
    }
    let mut new_id = vec![ExprId(0); reached.len()];
    let mut kept = Vec::new();
    for (i, node) in nodes.into_iter().enumerate().take(reached.len()) {
        if reached[i] {
            new_id[i] = ExprId(kept.len() as u32);
            kept.push(Expr::new(
                shift(&node.kind, |id| new_id[id.0 as usize]),
                node.span(),
            ));
        }
    }
    ExprTree { nodes: kept }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A forest folds each node as it is added (`2*3` is `6`, `x*1` is `x`,
    /// `0*y` is `0` when asked, then `0 + …` drops), and takes out each tree
    /// on its own, operands before users, as the calculator prints it.
    #[test]
    fn a_forest_folds_as_it_builds_and_takes_out_each_tree() {
        let mut forest = Forest::new(true);
        let name = |forest: &mut Forest, n: &str| forest.push(ExprKind::Name(Name::new(n)));
        let number = |forest: &mut Forest, x: f64| forest.push(ExprKind::Number(x));
        let binary =
            |forest: &mut Forest, op, lhs, rhs| forest.push(ExprKind::Binary { op, lhs, rhs });
        let (two, three) = (number(&mut forest, 2.0), number(&mut forest, 3.0));
        let six = binary(&mut forest, BinaryOp::Mul, two, three);
        let (x, one) = (name(&mut forest, "x"), number(&mut forest, 1.0));
        let x_again = binary(&mut forest, BinaryOp::Mul, x, one);
        assert_eq!(x_again, x);
        let sum = binary(&mut forest, BinaryOp::Add, x, six);
        let (zero, y) = (number(&mut forest, 0.0), name(&mut forest, "y"));
        let dropped = binary(&mut forest, BinaryOp::Mul, zero, y);
        let total = binary(&mut forest, BinaryOp::Add, dropped, sum);
        assert_eq!(forest.tree(total).to_string(), "x + 6");
        assert_eq!(forest.chars(total), "x+6".len());
        // A tree grafted with a name filled by another node.
        let hole = ExprTree::binary(BinaryOp::Pow, &ExprTree::name("#0"), &ExprTree::number(2.0));
        let z = name(&mut forest, "z");
        let squared = forest.graft(&hole, |_, n| (n == "#0").then_some(z));
        assert_eq!(forest.tree(squared).to_string(), "z^2");
    }
}
