//! Collecting like terms, for `:diff`'s printed derivatives: `x + x` becomes
//! `2*x`, `x*x*x` becomes `x^3`, `3*(2*x)` becomes `6*x`.
//!
//! Each node of the flat tree (operands first, in a loop, no recursion) is
//! read as a sum of terms, each a numeric coefficient times a product of
//! factors with whole exponents. A factor is a name or any part that is not
//! arithmetic of that kind (a call such as `cos(x)`, a power with a
//! non-integer exponent, a sum inside a product), written out and compared by
//! its text. Sums merge terms with the same factors (adding coefficients);
//! products multiply coefficients and add exponents (also symbolic ones of
//! the same base: `x*x^(x - 1)` is `x^x`), and never distribute
//! over a sum (`2*(w - 3)` stays as written; distributing a sum over a sum
//! can grow exponentially); a minus sign does (`a - (b - c)` → `a - b + c`). Division by a term whose coefficient has an exact
//! inverse (a power of two) multiplies by that inverse; other divisors stay
//! divisors (`x/3`).
//!
//! The value is the same as the input's up to rounding in the coefficients
//! (they are multiplied and added in a different order), except where a
//! cancelled factor was 0, inf or nan: `x - x` is 0 and `x/x` is 1 even at
//! x = inf.

use std::rc::Rc;

use super::ast::{BinaryOp, Call, ExprKind, ExprTree, UnaryOp};

/// Past this many characters of factor text in total, the tree is returned
/// as it was (the text of nested factors grows with depth × size).
const MAX_TEXT: usize = 1 << 20;

/// A factor raised to a whole power.
#[derive(Clone)]
struct Factor {
    /// The factor's text: equal texts are the same factor.
    key: Rc<str>,
    tree: Rc<ExprTree>,
    exponent: i32,
    /// For a power with an exponent that is not a whole number (`x^(x - 1)`):
    /// its base's text and tree and its exponent, so that a product with the
    /// same base adds exponents (`x*x^(x - 1)` → `x^x`).
    power: Option<Rc<Power>>,
}

/// A base raised to a symbolic exponent ([`Factor::power`]).
struct Power {
    base_key: Rc<str>,
    base: Rc<ExprTree>,
    exponent: Sum,
}

/// `coefficient × Π factors`; no factor has exponent 0.
#[derive(Clone)]
struct Term {
    coefficient: f64,
    factors: Vec<Factor>,
}

/// A sum of terms with distinct factors and nonzero coefficients; empty is 0.
type Sum = Vec<Term>;

impl ExprTree {
    /// This tree with like terms collected (see the module comment): `x + x`
    /// → `2*x`, `x*x` → `x^2`, `3*(x*x)` → `3*x^2`, `x - x` → `0`. Terms
    /// whose factors are names only come first, highest degree first, then
    /// the others in the order they first appear.
    pub fn collect_terms(&self) -> ExprTree {
        let mut text = 0usize;
        let mut sums: Vec<Sum> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let at = |id: &super::ast::ExprId| &sums[id.0 as usize];
            let sum = match &node.kind {
                ExprKind::Number(x) => number(*x),
                ExprKind::Name(_) => atom(ExprTree::leaf(node.kind.clone()), &mut text),
                ExprKind::Unary { op, operand } => match op {
                    UnaryOp::Plus => at(operand).clone(),
                    UnaryOp::Neg => scale(at(operand), -1.0),
                },
                ExprKind::Binary { op, lhs, rhs } => {
                    let (a, b) = (at(lhs), at(rhs));
                    match op {
                        BinaryOp::Add => add(a, b),
                        BinaryOp::Sub => add(a, &scale(b, -1.0)),
                        BinaryOp::Mul => multiply(a, b, &mut text),
                        BinaryOp::Div => {
                            let inverse = power(b, -1, &mut text);
                            multiply(a, &inverse, &mut text)
                        }
                        BinaryOp::Pow => match whole(b) {
                            Some(k) => power(a, k, &mut text),
                            None => {
                                let base = tree_of(a);
                                let tree = ExprTree::binary(*op, &base, &tree_of(b));
                                let mut sum = atom(tree, &mut text);
                                sum[0].factors[0].power = Some(Rc::new(Power {
                                    base_key: base.to_string().into(),
                                    base: Rc::new(base),
                                    exponent: b.clone(),
                                }));
                                sum
                            }
                        },
                    }
                }
                ExprKind::Call(call) => {
                    let trees: Vec<ExprTree> = call.args.iter().map(|a| tree_of(at(a))).collect();
                    let refs: Vec<&ExprTree> = trees.iter().collect();
                    let call = ExprTree::compose(&refs, |ids| {
                        ExprKind::Call(Box::new(Call {
                            name: call.name,
                            name_span: call.name_span,
                            derivative: call.derivative,
                            args: ids.to_vec(),
                        }))
                    });
                    atom(call, &mut text)
                }
            };
            if text > MAX_TEXT {
                return self.clone();
            }
            sums.push(sum);
        }
        let mut root = sums.pop().unwrap_or_default();
        in_order(&mut root);
        tree_of(&root)
    }
}

/// Name-only terms first, by degree; then the others in their order; the
/// constant last — but first when it is positive and the term it would
/// follow is negative, as the textbook writes `1 - tanh(x)^2`, not
/// `-tanh(x)^2 + 1` (the form a sum inside a product keeps: `(1 -
/// tanh(x)^2)*w`).
fn in_order(sum: &mut Sum) {
    sum.sort_by_key(|term| {
        let names_only = term.factors.iter().all(|f| is_name(&f.tree));
        let degree: i32 = term.factors.iter().map(|f| f.exponent).sum();
        match (term.factors.is_empty(), names_only) {
            (true, _) => (2, 0),
            (false, true) => (0, -degree),
            (false, false) => (1, 0),
        }
    });
    let leads_negative = sum.first().is_some_and(|term| term.coefficient < 0.0);
    let positive_constant = sum
        .last()
        .is_some_and(|term| term.factors.is_empty() && term.coefficient > 0.0);
    if sum.len() > 1 && leads_negative && positive_constant {
        sum.rotate_right(1);
    }
}

fn is_name(tree: &ExprTree) -> bool {
    matches!(tree.nodes[..], [ref only] if matches!(only.kind, ExprKind::Name(_)))
}

/// The constant `x` as a sum (empty for 0).
fn number(x: f64) -> Sum {
    if x == 0.0 {
        Vec::new()
    } else {
        vec![Term {
            coefficient: x,
            factors: Vec::new(),
        }]
    }
}

/// `tree` as one factor.
fn atom(tree: ExprTree, text: &mut usize) -> Sum {
    let key: Rc<str> = tree.to_string().into();
    *text += key.len();
    vec![Term {
        coefficient: 1.0,
        factors: vec![Factor {
            key,
            tree: Rc::new(tree),
            exponent: 1,
            power: None,
        }],
    }]
}

/// The whole number a sum is, if it is a constant in −1024..=1024.
fn whole(sum: &Sum) -> Option<i32> {
    match sum.as_slice() {
        [] => Some(0),
        [term] if term.factors.is_empty() => {
            let c = term.coefficient;
            (c.fract() == 0.0 && c.abs() <= 1024.0).then_some(c as i32)
        }
        _ => None,
    }
}

fn scale(sum: &Sum, by: f64) -> Sum {
    let terms = sum.iter().map(|t| Term {
        coefficient: t.coefficient * by,
        factors: t.factors.clone(),
    });
    merge(terms)
}

fn add(a: &Sum, b: &Sum) -> Sum {
    merge(a.iter().chain(b).cloned())
}

/// Terms with the same factors (the same texts with the same exponents, in
/// any order) added up; zero terms dropped.
fn merge(terms: impl Iterator<Item = Term>) -> Sum {
    let mut out: Sum = Vec::new();
    let mut signatures: Vec<Vec<(Rc<str>, i32)>> = Vec::new();
    for term in terms {
        let mut signature: Vec<(Rc<str>, i32)> = term
            .factors
            .iter()
            .map(|f| (f.key.clone(), f.exponent))
            .collect();
        signature.sort();
        match signatures.iter().position(|s| *s == signature) {
            Some(k) => out[k].coefficient += term.coefficient,
            None => {
                signatures.push(signature);
                out.push(term);
            }
        }
    }
    out.retain(|t| t.coefficient != 0.0);
    out
}

/// One term standing for a sum: itself if it has one term, else the sum as a
/// factor.
fn as_term(sum: &Sum, text: &mut usize) -> Term {
    match sum.as_slice() {
        [term] => term.clone(),
        _ => atom(tree_of(sum), text).remove(0),
    }
}

fn multiply(a: &Sum, b: &Sum, text: &mut usize) -> Sum {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let constant = |s: &Sum| match s.as_slice() {
        [t] if t.factors.is_empty() => Some(t.coefficient),
        _ => None,
    };
    // A number times one term is folded in; times a sum it stays a factor
    // (`2*(w - 3)` keeps the form a lecture writes).
    match (constant(a), constant(b)) {
        (Some(c), _) if b.len() == 1 => return scale(b, c),
        (_, Some(c)) if a.len() == 1 => return scale(a, c),
        _ => {}
    }
    let (x, y) = (as_term(a, text), as_term(b, text));
    let mut factors = x.factors;
    for f in y.factors {
        if let Some(g) = factors.iter_mut().find(|g| g.key == f.key) {
            g.exponent += f.exponent;
        } else if let Some(g) = factors.iter_mut().find(|g| same_base(g, &f)) {
            *g = with_exponents_added(g, &f, text);
        } else {
            factors.push(f);
        }
    }
    factors.retain(|f| f.exponent != 0);
    merge(std::iter::once(Term {
        coefficient: x.coefficient * y.coefficient,
        factors,
    }))
}

/// The base of a factor and its exponent as a sum: `x^(x - 1)` is `x` and
/// `x - 1`, `x^2` is `x` and 2; `None` for a symbolic power raised again.
fn base_of(f: &Factor) -> Option<(Rc<str>, Rc<ExprTree>, Sum)> {
    match &f.power {
        Some(p) if f.exponent == 1 => {
            Some((p.base_key.clone(), p.base.clone(), p.exponent.clone()))
        }
        Some(_) => None,
        None => Some((f.key.clone(), f.tree.clone(), number(f64::from(f.exponent)))),
    }
}

/// Two different factors with the same base, one at least a symbolic power
/// (`x` and `x^(x - 1)`).
fn same_base(g: &Factor, f: &Factor) -> bool {
    if g.power.is_none() && f.power.is_none() {
        return false;
    }
    matches!((base_of(g), base_of(f)), (Some(a), Some(b)) if a.0 == b.0)
}

/// `b^e1 · b^e2` as one factor `b^(e1 + e2)`: a whole power of `b` when
/// the exponents add up to a whole number (`x*x^(x - 1)` → `x^x`).
fn with_exponents_added(g: &Factor, f: &Factor, text: &mut usize) -> Factor {
    let (Some((key, base, e1)), Some((_, _, e2))) = (base_of(g), base_of(f)) else {
        unreachable!("same_base checked both")
    };
    let mut exponent = add(&e1, &e2);
    in_order(&mut exponent);
    if let Some(k) = whole(&exponent) {
        return Factor {
            key,
            tree: base,
            exponent: k,
            power: None,
        };
    }
    let tree = ExprTree::binary(BinaryOp::Pow, &base, &tree_of(&exponent));
    let mut factor = atom(tree, text).remove(0).factors.remove(0);
    factor.power = Some(Rc::new(Power {
        base_key: key,
        base,
        exponent,
    }));
    factor
}

/// `sum^k` for a whole `k`: a single term's coefficient raised (when the
/// result is exact enough to keep: finite, nonzero, and for k < 0 an exact
/// inverse) and its exponents multiplied; otherwise the base as a factor.
fn power(sum: &Sum, k: i32, text: &mut usize) -> Sum {
    match k {
        // x^0 is 1 for every x, nan included (IEEE 754 pow).
        0 => return number(1.0),
        1 => return sum.clone(),
        _ => {}
    }
    let term = match sum.as_slice() {
        [] if k > 0 => return Vec::new(),
        [term] => term.clone(),
        _ => {
            let mut term = as_term(sum, text);
            term.factors[0].exponent = k;
            return vec![term];
        }
    };
    let c = term.coefficient;
    let raised = c.powi(k);
    let exact = raised.is_finite() && raised != 0.0 && (k > 0 || power_of_two(c));
    let mut factors: Vec<Factor> = term
        .factors
        .into_iter()
        .map(|f| Factor {
            exponent: f.exponent * k,
            ..f
        })
        .collect();
    let coefficient = if exact {
        raised
    } else {
        // The coefficient as a factor of its own: `x/3` stays `x/3`.
        let mut number = atom(ExprTree::number(c.abs()), text).remove(0);
        number.factors[0].exponent = k;
        factors.push(number.factors.remove(0));
        if c < 0.0 && k % 2 != 0 { -1.0 } else { 1.0 }
    };
    factors.retain(|f| f.exponent != 0);
    vec![Term {
        coefficient,
        factors,
    }]
}

/// True for ±2^n (normal), whose inverse is exact.
fn power_of_two(c: f64) -> bool {
    c.is_normal() && c.to_bits() & ((1u64 << 52) - 1) == 0
}

/// A sum written as a tree: `t1 + t2 - t3`, each term `c*a*b^2/(d*e)`.
fn tree_of(sum: &Sum) -> ExprTree {
    let mut out: Option<ExprTree> = None;
    for term in sum {
        let negative = term.coefficient < 0.0;
        out = Some(match (out, negative) {
            // A leading minus on the term's first factor: `-x^2/y`, `-1/x`.
            (None, _) => term_tree(term.coefficient.abs(), &term.factors, negative),
            (Some(sum), false) => {
                let magnitude = term_tree(term.coefficient, &term.factors, false);
                ExprTree::binary(BinaryOp::Add, &sum, &magnitude)
            }
            (Some(sum), true) => {
                let magnitude = term_tree(-term.coefficient, &term.factors, false);
                ExprTree::binary(BinaryOp::Sub, &sum, &magnitude)
            }
        });
    }
    out.unwrap_or_else(|| ExprTree::number(0.0))
}

/// `c*a*b^2/(d*e)` for a positive `c`, with its first factor negated when
/// `negative`.
fn term_tree(c: f64, factors: &[Factor], negative: bool) -> ExprTree {
    let raise = |f: &Factor, e: i32| match e {
        1 => (*f.tree).clone(),
        _ => ExprTree::binary(BinaryOp::Pow, &f.tree, &ExprTree::number(f64::from(e))),
    };
    let product = |parts: Vec<ExprTree>| {
        parts
            .into_iter()
            .reduce(|a, b| ExprTree::binary(BinaryOp::Mul, &a, &b))
    };
    let mut above: Vec<ExprTree> = Vec::new();
    if c != 1.0 {
        above.push(ExprTree::number(c));
    }
    above.extend(
        factors
            .iter()
            .filter(|f| f.exponent > 0)
            .map(|f| raise(f, f.exponent)),
    );
    let below = product(
        factors
            .iter()
            .filter(|f| f.exponent < 0)
            .map(|f| raise(f, -f.exponent))
            .collect(),
    );
    if above.is_empty() {
        above.push(ExprTree::number(c));
    }
    if negative {
        above[0] = match above[0].nodes[..] {
            [ref only] if matches!(only.kind, ExprKind::Number(_)) => ExprTree::number(-c),
            _ => ExprTree::negate(&above[0]),
        };
    }
    let above = product(above).unwrap_or_else(|| ExprTree::number(c));
    match below {
        Some(below) => ExprTree::binary(BinaryOp::Div, &above, &below),
        None => above,
    }
}

#[cfg(test)]
mod tests {
    use crate::syntax::parse_expression;

    fn collected(text: &str) -> String {
        parse_expression(text).unwrap().collect_terms().to_string()
    }

    #[test]
    fn like_terms_are_collected_by_hand_known_forms() {
        assert_eq!(collected("x + x"), "2*x");
        assert_eq!(collected("x*x + x*x + x*x + cos(x)"), "3*x^2 + cos(x)");
        assert_eq!(collected("cos(x) + x*x"), "x^2 + cos(x)");
        assert_eq!(collected("3*(2*x)"), "6*x");
        assert_eq!(collected("x - x"), "0");
        assert_eq!(collected("2*(x + 1) + x"), "x + 2*(x + 1)");
        assert_eq!(collected("2*(w - 3)"), "2*(w - 3)");
        assert_eq!(collected("(x + 1)*3*2"), "6*(x + 1)");
        assert_eq!(collected("x/3 + x/3"), "2*x/3");
        assert_eq!(collected("x/2"), "0.5*x");
        assert_eq!(collected("(x + 1)*(x + 1)"), "(x + 1)^2");
        assert_eq!(collected("x*y - y*x"), "0");
        assert_eq!(collected("-(x*x)"), "-x^2");
        assert_eq!(collected("1/x^2 * x"), "1/x");
        assert_eq!(collected("0 - 1/x^2"), "-1/x^2");
        assert_eq!(collected("y - 3*x*x"), "-3*x^2 + y");
        assert_eq!(collected("cos(x) - x*y"), "-x*y + cos(x)");
        assert_eq!(collected("x^0.5 * x^0.5"), "(x^0.5)^2");
        // Powers of one base add their exponents: x·x^(x−1) = x^x.
        assert_eq!(collected("x*x^(x - 1)"), "x^x");
        assert_eq!(collected("x^(x - 1)*x^2"), "x^(x + 1)");
        assert_eq!(collected("x^sin(x)*x^(1 - sin(x))"), "x");
        assert_eq!(collected("x*x^(x - 1) + x^x*ln(x)"), "x^x + x^x*ln(x)");
    }
}
