//! Calls in a tensor expression, by what the function table
//! ([`super::builtins`]) says a name builds: an elementwise op, `max`/`min`,
//! a tensor op, a reduction along an axis (`mean(X, 1)`, `max(P, axis=1)`,
//! negative axes counted from the last as in numpy), an op along the last
//! axis (`softmax`, `log_softmax`, `logsumexp`), `onehot`, a literal made
//! whole (`zeros`, `randn`, `rand`, `uniform`, …), `log(x, b)`, `grad`;
//! and the calls the parser makes of the syntax: literals, indices, `@`,
//! slices (`X[0:4]`, `X[:, 0]`), comparisons (`argmax(Z, 1) == y`) and
//! `axis=`. The ambiguous `max(P, 1)` is refused with both readings.

use crate::engine::Op;
use crate::engine::tensor::{Comparison, Rule, Select, Shape, Tensor, TensorOp};
use crate::syntax::{
    COMPARISONS, Call, ExprKind, ExprTree, INDEX, LIST, MATMUL, SLICE, SLICE_ALL, SLICE_FROM,
    SLICE_TO, Span, keyword_of,
};

use super::super::error::ErrorCode;
use super::super::{Session, SessionError};
use super::builtins::{Builds, Builtin, builtin, builtins};
use super::literals::literal;
use super::{TValue, tensor_error};

/// The word that keeps the summed axis: `sum(X, 1, keepdims)` (numpy's
/// `keepdims=True`).
pub(in crate::session) const KEEPDIMS: &str = "keepdims";

/// Whether `callee` is one the parser makes of the tensor syntax: a literal
/// `[…]`, an index, `@`, a slice, a comparison or a keyword argument.
pub(in crate::session) fn is_syntax_callee(callee: &str) -> bool {
    [LIST, INDEX, MATMUL, SLICE, SLICE_FROM, SLICE_TO, SLICE_ALL].contains(&callee)
        || COMPARISONS.contains(&callee)
        || keyword_of(callee).is_some()
}

/// Whether node `k` of `tree` is the third argument of a call of a
/// reduction that keeps its axis (`sum(X, 1, keepdims)`) and names `keepdims`.
pub(in crate::session) fn keeps_dims(tree: &ExprTree, k: usize) -> bool {
    let is_word = matches!(&tree.nodes[k].kind, ExprKind::Name(name) if name.as_str() == KEEPDIMS);
    let keeps = |name: &str| {
        builtin(name).is_some_and(|row| {
            matches!(
                row.builds,
                Builds::Reduction {
                    keepdims: Some(_),
                    ..
                }
            )
        })
    };
    is_word
        && tree.nodes.iter().any(|e| {
            matches!(&e.kind, ExprKind::Call(call)
                if keeps(call.name.as_str()) && call.args.get(2).is_some_and(|a| a.0 as usize == k))
        })
}

/// The keyword of argument `at` of a call, when it is one (`axis` of `axis=1`).
fn keyword_at(tree: &ExprTree, at: crate::syntax::ExprId) -> Option<&str> {
    match &tree.get(at).kind {
        ExprKind::Call(call) => keyword_of(call.name.as_str()),
        _ => None,
    }
}

/// Whether argument `at` of a call is a slice (`1:3`, `:`).
fn is_slice(tree: &ExprTree, at: crate::syntax::ExprId) -> bool {
    matches!(&tree.get(at).kind, ExprKind::Call(call)
        if [SLICE, SLICE_FROM, SLICE_TO, SLICE_ALL].contains(&call.name.as_str()))
}

impl Session {
    /// The shape of a value being evaluated.
    fn shape_of(&self, value: &TValue) -> Shape {
        match value {
            TValue::Number(_) => Shape::scalar(),
            TValue::Literal(t) => t.shape(),
            TValue::Node { id, .. } => self.tensors.graph.shape(*id),
        }
    }

    /// A number argument's value: a number, or a scalar of shape `()`.
    pub(super) fn number_of(&self, value: &TValue) -> Option<f64> {
        match value {
            TValue::Number(x) => Some(*x),
            TValue::Node { id, .. } if self.tensors.graph.shape(*id) == Shape::scalar() => {
                Some(self.tensors.graph.value(*id).data()[0])
            }
            TValue::Literal(t) if t.shape() == Shape::scalar() => Some(t.data()[0]),
            _ => None,
        }
    }

    /// An axis of a tensor of `rank` axes: a whole number from `-rank` to
    /// `rank − 1`, a negative one counted from the last (numpy's
    /// `axis=-1`).
    fn axis(
        &self,
        value: &TValue,
        rank: usize,
        op: &str,
        tree: &ExprTree,
        at: crate::syntax::ExprId,
    ) -> Result<usize, SessionError> {
        let span = tree.get(at).span();
        let x = self.number_of(value).filter(|x| x.fract() == 0.0);
        let rank_i = rank as f64;
        match x {
            Some(x) if x >= -rank_i && x < rank_i => Ok(if x < 0.0 {
                (x + rank_i) as usize
            } else {
                x as usize
            }),
            _ => Err(tensor_error(
                ErrorCode::Shape,
                span,
                match (x, rank) {
                    (Some(x), 0) => format!("{op} over axis {x}: a number (shape ()) has no axes"),
                    (Some(x), 1) => format!(
                        "{op} over axis {x}: a vector has one axis, 0 (or -1, counted from the last)"
                    ),
                    (Some(x), _) => format!(
                        "{op} over axis {x}: a tensor of {rank} axes has axes 0 to {} (or -{rank} to -1, counted from the last)",
                        rank - 1
                    ),
                    (None, _) => "an axis is a whole number (0, 1, or -1 for the last)".to_string(),
                },
                None,
            )),
        }
    }

    /// A built-in call in a tensor expression: one the parser makes of the
    /// syntax, or a function of the table ([`super::builtins`]); `None`
    /// when `call` is neither (a user function's is taken before, by
    /// `eval.rs`, as an unknown one after).
    ///
    /// # Errors
    /// The wrong count of arguments, a keyword other than `axis=` or where
    /// it does not apply, an axis a tensor does not have, the ambiguous
    /// `max(P, 1)`, a softmax along another axis than the last, the
    /// engine's shape, budget and label errors.
    pub(in crate::session) fn tensor_builtin(
        &mut self,
        call: &Call,
        mut args: Vec<TValue>,
        tree: &ExprTree,
        span: Span,
    ) -> Result<Option<TValue>, SessionError> {
        let name = call.name.as_str();
        if let Some(value) = self.syntax_call(call, &mut args, tree, span)? {
            return Ok(Some(value));
        }
        let Some(row) = builtin(name) else {
            return Ok(None);
        };
        if !row.accepts(args.len()) {
            return Err(SessionError::wrong_arity(
                name,
                call.name_span,
                row.expected(),
                args.len(),
            ));
        }
        let rank = args.first().map_or(0, |a| self.shape_of(a).rank());
        let axis = |session: &Session, args: &[TValue]| {
            session.axis(&args[1], rank, name, tree, call.args[1])
        };
        let op = match row.builds {
            Builds::Elementwise(op) => return self.elementwise(op, args, span).map(Some),
            Builds::Extremum { op, whole, along } => {
                return self.extremum(row, (op, whole, along), args, call, tree, span);
            }
            Builds::Tensor(op) => return self.apply_tensor(op, args, span).map(Some),
            Builds::Reduction {
                whole,
                along,
                keepdims,
            } => match (args.len(), keepdims) {
                (1, _) => whole,
                (2, _) => along(axis(self, &args)?),
                (_, Some(keepdims)) if keeps_dims(tree, call.args[2].0 as usize) => {
                    keepdims(axis(self, &args)?)
                }
                _ => {
                    return Err(tensor_error(
                        ErrorCode::BadArguments,
                        tree.get(call.args[2]).span(),
                        format!(
                            "the third argument of `{name}(X, axis, keepdims)` is the word `keepdims`"
                        ),
                        Some(format!(
                            "write `{name}(X, 1, keepdims)` to keep the summed axis with size 1, `{name}(X, 1)` to drop it"
                        )),
                    ));
                }
            },
            Builds::LastAxis(op) => {
                if args.len() == 2 {
                    self.check_last_axis(op, axis(self, &args)?, rank, name, tree, call)?;
                }
                op
            }
            Builds::OneHot => TensorOp::OneHot(self.whole(&args[1], tree, call.args[1])?),
            Builds::Made(made) => return self.make(made, &args, call, tree, span).map(Some),
            Builds::Log => {
                // `log(x, b)` = ln(x)/ln(b) elementwise, as for numbers.
                let mut args = args.into_iter();
                let ln_x = self.elementwise(Op::Ln, args.next().into_iter().collect(), span)?;
                let Some(b) = args.next() else {
                    return Ok(Some(ln_x));
                };
                let ln_b = self.elementwise(Op::Ln, vec![b], span)?;
                return self.elementwise(Op::Div, vec![ln_x, ln_b], span).map(Some);
            }
            Builds::Grad => return self.grad_call(args, call, tree, span).map(Some),
        };
        let first = args.drain(..).take(1).collect();
        self.apply_tensor(op, first, span).map(Some)
    }

    /// `max`/`min` (the row `row`, its scalar op, its extremum of a whole
    /// tensor and along an axis): of numbers the scalar op, of one tensor
    /// its extremum, with `axis=` along that axis, of two operands
    /// elementwise; `max(P, 1)` is refused as ambiguous and three or more
    /// operands with a tensor among them are refused.
    fn extremum(
        &mut self,
        row: Builtin,
        (op, whole, along): (Op, TensorOp, fn(usize) -> TensorOp),
        args: Vec<TValue>,
        call: &Call,
        tree: &ExprTree,
        span: Span,
    ) -> Result<Option<TValue>, SessionError> {
        let name = row.name;
        let all_numbers = args.iter().all(|a| matches!(a, TValue::Number(_)));
        let rank = self.shape_of(&args[0]).rank();
        let keyword = call.args.iter().any(|&a| keyword_at(tree, a).is_some());
        let value = match args.len() {
            2 if keyword => {
                let axis = self.axis(&args[1], rank, name, tree, call.args[1])?;
                let first = args.into_iter().take(1).collect();
                self.apply_tensor(along(axis), first, span)
            }
            _ if all_numbers => self.elementwise(op, args, span),
            1 => self.apply_tensor(whole, args, span),
            2 => {
                self.refuse_ambiguous((name, op), &args[1], rank, call, tree)?;
                self.elementwise(op, args, span)
            }
            count => Err(tensor_error(
                ErrorCode::Unsupported,
                span,
                format!(
                    "`{name}` of tensors takes one tensor (`{name}(x)`), an axis (`{name}(W, axis=1)`) or two operands elementwise (`{name}imum(W, 0)`); got {count}"
                ),
                Some(format!("nest them: `{name}imum({name}imum(a, b), c)`")),
            )),
        };
        value.map(Some)
    }

    /// Refuses `A @ B` whose inner sizes differ when a transpose of one
    /// factor would agree: the shape error, with the product that fits
    /// (`W @ gu` with (2×3)·(2): "`Wᵀ @ gu` is (3×2)·(2)"). Nothing when
    /// the shapes agree or no transpose helps (the engine's error then).
    fn hint_transpose(
        &self,
        call: &Call,
        args: &[TValue],
        tree: &ExprTree,
        span: Span,
    ) -> Result<(), SessionError> {
        let (a, b) = (self.shape_of(&args[0]), self.shape_of(&args[1]));
        let inner = |a: Shape, b: Shape| match (a.dims(), b.dims()) {
            (&[.., k], &[l]) | (&[.., k], &[l, _]) => k == l,
            _ => false,
        };
        if a.rank() == 0 || b.rank() == 0 || inner(a, b) {
            return Ok(());
        }
        let label = |at: usize| match &tree.get(call.args[at]).kind {
            ExprKind::Name(name) => name.to_string(),
            _ => ["A", "B"][at].to_string(),
        };
        let (left, right) = (label(0), label(1));
        let fix = if a.rank() == 2 && inner(a.transposed(), b) {
            format!("{left}ᵀ @ {right}` is ({})·({b})", a.transposed())
        } else if b.rank() == 2 && inner(a, b.transposed()) {
            format!("{left} @ {right}ᵀ` is ({a})·({})", b.transposed())
        } else {
            return Ok(());
        };
        Err(tensor_error(
            ErrorCode::Shape,
            span,
            crate::engine::tensor::ShapeError::Inner { left: a, right: b }.to_string(),
            Some(format!(
                "a forgotten transpose? `{fix}: the inner sizes agree"
            )),
        ))
    }
    /// The calls the parser makes of the syntax: a literal, an index (with
    /// a slice or not), `@` (with the forgotten transpose's hint), a
    /// keyword argument (its value), a slice (its bounds, read by the
    /// index), a comparison; `None` for any other call, after refusing an
    /// `axis=` where the function takes none.
    fn syntax_call(
        &mut self,
        call: &Call,
        args: &mut Vec<TValue>,
        tree: &ExprTree,
        span: Span,
    ) -> Result<Option<TValue>, SessionError> {
        let name = call.name.as_str();
        if let Some(keyword) = keyword_of(name) {
            if keyword != "axis" {
                return Err(tensor_error(
                    ErrorCode::BadArguments,
                    call.name_span,
                    format!("`{keyword}=` is not a keyword: the one keyword is `axis=`"),
                    Some("e.g. `max(P, axis=1)`, the largest of each row".into()),
                ));
            }
            return Ok(Some(args.pop().unwrap_or(TValue::Number(f64::NAN))));
        }
        let keyword = call
            .args
            .iter()
            .position(|&a| keyword_at(tree, a).is_some());
        if let Some(k) = keyword
            && (!builtin(name).is_some_and(|row| row.takes_axis()) || k != 1 || args.len() != 2)
        {
            let takes: Vec<&str> = builtins()
                .filter(|row| row.takes_axis())
                .map(|row| row.name)
                .collect();
            return Err(tensor_error(
                ErrorCode::BadArguments,
                tree.get(call.args[k]).span(),
                format!("`{name}` takes no `axis=` here"),
                Some(format!(
                    "`axis=` is the second argument of {}: `max(P, axis=1)`",
                    takes.join(", ")
                )),
            ));
        }
        if !is_syntax_callee(name) {
            return Ok(None);
        }
        let args = std::mem::take(args);
        let value = match name {
            LIST => literal(args, call, tree),
            INDEX if call.args[1..].iter().any(|&a| is_slice(tree, a)) => {
                self.slice(call, args, tree, span)
            }
            INDEX => self.index(args, call, tree, span),
            MATMUL => {
                if args.len() == 2 {
                    self.hint_transpose(call, &args, tree, span)?;
                }
                self.apply_tensor(TensorOp::MatMul, args, span)
            }
            SLICE | SLICE_FROM | SLICE_TO | SLICE_ALL => {
                // The bounds as a vector, nan where left out; `index` reads it.
                let mut bounds = [f64::NAN; 2];
                let given: &[usize] = match name {
                    SLICE => &[0, 1],
                    SLICE_FROM => &[0],
                    SLICE_TO => &[1],
                    _ => &[],
                };
                for ((&slot, value), at) in given.iter().zip(&args).zip(&call.args) {
                    bounds[slot] = self.whole(value, tree, *at)? as f64;
                }
                Ok(TValue::Literal(Tensor::vector(bounds.to_vec())))
            }
            // A comparison (the one syntax callee left).
            _ => match Comparison::from_symbol(name) {
                Some(c) => match (number_literal(&args[0]), number_literal(&args[1])) {
                    (Some(a), Some(b)) => Ok(TValue::Number(c.apply(a, b))),
                    _ => self.apply_tensor(TensorOp::Compare(c), args, span),
                },
                None => return Ok(None),
            },
        };
        value.map(Some)
    }

    /// Refuses an op along the last axis (`softmax`, `log_softmax`,
    /// `logsumexp`, the function `name`) asked along `axis` of a tensor of
    /// `rank` axes that is not the last.
    fn check_last_axis(
        &self,
        op: TensorOp,
        axis: usize,
        rank: usize,
        name: &str,
        tree: &ExprTree,
        call: &Call,
    ) -> Result<(), SessionError> {
        if axis + 1 == rank {
            return Ok(());
        }
        // A reduction along the rows has no outer transpose to undo.
        let reduces = op == TensorOp::LogSumExp;
        Err(tensor_error(
            ErrorCode::Unsupported,
            tree.get(call.args[1]).span(),
            format!("{name} goes along the last axis ({}, or -1) only", rank - 1),
            Some(format!(
                "for the columns, transpose: `{name}(Zᵀ)ᵀ`{}",
                if reduces {
                    " (without the outer ᵀ)"
                } else {
                    ""
                }
            )),
        ))
    }

    /// Refuses `max(P, 1)` where `P` has axis 1 (or 0, or a negative one):
    /// numpy's `P.max(1)` and `sum(P, 1)` read it as an axis, and the
    /// elementwise `max(P, 1)` is as common; both readings are spelled out.
    fn refuse_ambiguous(
        &self,
        (name, op): (&str, Op),
        second: &TValue,
        rank: usize,
        call: &Call,
        tree: &ExprTree,
    ) -> Result<(), SessionError> {
        let Some(n) = number_literal(second) else {
            return Ok(());
        };
        let r = rank as f64;
        if rank == 0 || n.fract() != 0.0 || n < -r || n >= r {
            return Ok(());
        }
        let text = match &tree.get(call.args[0]).kind {
            ExprKind::Name(name) => name.as_str(),
            _ => "P",
        };
        let elementwise = elementwise_name(op);
        Err(tensor_error(
            ErrorCode::BadArguments,
            call.name_span.to(tree.get(call.args[1]).span()),
            format!(
                "`{name}({text}, {n})` is ambiguous: the {} along axis {n}, or the elementwise {name} with {n}",
                if op == Op::Max { "largest" } else { "smallest" }
            ),
            Some(format!(
                "write `{name}({text}, axis={n})` for the axis (numpy's `{text}.{name}({n})`), or `{elementwise}({text}, {n})` elementwise"
            )),
        ))
    }

    /// `X[0:4]`, `X[:, 0]`, `X[1:]`, `x[2:5]`: a slice node, the ends left
    /// out filled from the shape.
    fn slice(
        &mut self,
        call: &Call,
        mut args: Vec<TValue>,
        tree: &ExprTree,
        span: Span,
    ) -> Result<TValue, SessionError> {
        let shape = self.shape_of(&args[0]);
        if call.args.len() > 3 || shape.rank() == 0 {
            return Err(tensor_error(
                ErrorCode::Shape,
                span,
                crate::engine::tensor::ShapeError::TooManyIndices {
                    shape,
                    given: call.args.len() - 1,
                }
                .to_string(),
                None,
            ));
        }
        let mut selects = Vec::new();
        for (axis, (&at, value)) in call.args[1..].iter().zip(&args[1..]).enumerate() {
            let size = shape.dims().get(axis).copied().unwrap_or(0);
            selects.push(if is_slice(tree, at) {
                let bounds = match value {
                    TValue::Literal(t) => t.data().to_vec(),
                    _ => vec![f64::NAN; 2],
                };
                let start = if bounds[0].is_nan() {
                    0
                } else {
                    bounds[0] as usize
                };
                let end = if bounds[1].is_nan() {
                    size
                } else {
                    bounds[1] as usize
                };
                Select::Range(start, end)
            } else {
                Select::At(self.whole(value, tree, at)?)
            });
        }
        let op = TensorOp::Slice(selects[0], selects.get(1).copied());
        let base = args.drain(..).take(1).collect();
        self.apply_tensor(op, base, span)
    }
}

/// A number typed in the expression (not a tensor, not a variable).
fn number_literal(value: &TValue) -> Option<f64> {
    match value {
        TValue::Number(x) => Some(*x),
        _ => None,
    }
}

/// The rule text of the batch ops' backward rules, in the language (typed
/// back at its step with `upstream` bound, it gives the step's numbers),
/// over the node's operands' labels (`operands`), `input` the operand's
/// shape: the extrema with their masks (`upstream ⊙ (W == max(W)) / 2`,
/// `outer(upstream, ones(3)) ⊙ onehot(argmax(W, 1), 3)`), the axis mean,
/// `log_softmax`'s and `cross_entropy`'s rules.
pub(in crate::session) fn batch_rule_text(rule: &Rule, operands: &[&str], input: Shape) -> String {
    let b = |text: &str| {
        if text.contains(' ') {
            format!("({text})")
        } else {
            text.to_string()
        }
    };
    let a = b(operands.first().copied().unwrap_or("z"));
    let (m, n) = input.as_matrix();
    match rule {
        Rule::Extremum { max, ties, .. } => {
            let f = if *max { "max" } else { "min" };
            let split = if *ties == 1 {
                String::new()
            } else {
                format!(" / {ties}")
            };
            format!("upstream ⊙ ({a} == {f}({a})){split}")
        }
        Rule::ExtremumAlong { max, axis } => {
            // The first extremum of each lane: argmax's, of −W for the minimum.
            let of = if *max { a.clone() } else { format!("-{a}") };
            match (input.rank(), axis) {
                (1, _) => format!("upstream ⊙ onehot(argmax({of}), {n})"),
                (_, 1) => format!("outer(upstream, ones({n})) ⊙ onehot(argmax({of}, 1), {n})"),
                _ => format!("outer(ones({m}), upstream) ⊙ onehot(argmax({of}, 0), {m})ᵀ"),
            }
        }
        Rule::MeanAlong { axis, count } => match (input.rank(), axis) {
            (1, _) => format!("upstream ⊙ ones({n}) / {count}"),
            (_, 1) => format!("outer(upstream, ones({n})) / {count}"),
            _ => format!("outer(ones({m}), upstream) / {count}"),
        },
        Rule::LogSoftmax if input.rank() == 2 => {
            format!("upstream − softmax({a}) ⊙ sum(upstream, 1, keepdims)")
        }
        Rule::LogSoftmax => format!("upstream − softmax({a}) ⊙ sum(upstream)"),
        Rule::CrossEntropy { count, classes } => format!(
            "upstream ⊙ (softmax({a}) − onehot({}, {classes})) / {count}",
            b(operands.get(1).copied().unwrap_or("y"))
        ),
        _ => "0 (class labels and comparisons pass no gradient)".to_string(),
    }
}

/// The rule of a slice `X[first, second]` of an operand of shape `input`,
/// in the language: the upstream put back at the positions taken with
/// slices of the identity (`eye(3)[:, 0:2] @ upstream`, `outer(eye(3)[1],
/// upstream)`).
pub(in crate::session) fn slice_rule(
    first: Select,
    second: Option<Select>,
    input: Shape,
) -> String {
    let (m, n) = input.as_matrix();
    // `text` put back along an axis of `size` at the positions a..b: the
    // identity's columns a..b times it; itself when a..b is the whole axis.
    let place = |size: usize, a: usize, b: usize, text: &str| {
        if (a, b) == (0, size) {
            text.to_string()
        } else {
            format!("eye({size})[:, {a}:{b}] @ {text}")
        }
    };
    match (input.rank(), first, second) {
        (1, Select::Range(a, b), _) => place(n, a, b, "upstream"),
        (1, Select::At(i), _) => format!("upstream ⊙ eye({n})[{i}]"),
        (_, Select::At(i), None) => format!("outer(eye({m})[{i}], upstream)"),
        (_, Select::At(i), Some(Select::At(j))) => {
            format!("upstream ⊙ outer(eye({m})[{i}], eye({n})[{j}])")
        }
        (_, Select::At(i), Some(Select::Range(c, d))) => {
            format!("outer(eye({m})[{i}], {})", place(n, c, d, "upstream"))
        }
        (_, Select::Range(a, b), Some(Select::At(j))) => {
            format!("outer({}, eye({n})[{j}])", place(m, a, b, "upstream"))
        }
        (_, Select::Range(a, b), cols) => {
            let rows = place(m, a, b, "upstream");
            match cols {
                Some(Select::Range(c, d)) if (c, d) != (0, n) => {
                    format!("{rows} @ eye({n})[:, {c}:{d}]ᵀ")
                }
                _ => rows,
            }
        }
    }
}

/// The name a two-operand elementwise op is written with in a tensor
/// label: `maximum`/`minimum` for the scalar ops `max`/`min` (`max(P, 1)`
/// of a matrix is refused as ambiguous), the scalar op's name otherwise.
pub(in crate::session) fn elementwise_name(op: Op) -> &'static str {
    match op {
        Op::Max => "maximum",
        Op::Min => "minimum",
        op => op.info().name,
    }
}

/// The label of the batch op `op` of node `id` over its operands'
/// `labels`, as typed (`max(P, axis=1)`, `X[0:4]`, `argmax(Z, 1) == y`);
/// `None` for the other ops.
pub(in crate::session) fn batch_label(
    op: TensorOp,
    graph: &crate::engine::tensor::TensorGraph,
    labels: &[String],
    id: crate::engine::tensor::TensorId,
) -> Option<String> {
    let of: Vec<&str> = graph
        .operands(id)
        .iter()
        .map(|o| labels[o.index()].as_str())
        .collect();
    let input = graph.shape(graph.operands(id)[0]);
    let bracket = |text: &str| {
        if text.contains(' ') {
            format!("({text})")
        } else {
            text.to_string()
        }
    };
    let select = |s: Select| match s {
        Select::Range(start, end) => {
            let size = input.dims().first().copied().unwrap_or(0);
            match (start, end) {
                (0, e) if e == size => ":".to_string(),
                (s, e) if e == size => format!("{s}:"),
                (s, e) => format!("{s}:{e}"),
            }
        }
        Select::At(i) => i.to_string(),
    };
    Some(match op {
        TensorOp::Min => format!("min({})", of[0]),
        TensorOp::MeanAxis(axis) => format!("mean({}, {axis})", of[0]),
        TensorOp::MaxAxis(axis) => format!("max({}, axis={axis})", of[0]),
        TensorOp::MinAxis(axis) => format!("min({}, axis={axis})", of[0]),
        TensorOp::ArgMax(None) => format!("argmax({})", of[0]),
        TensorOp::ArgMax(Some(axis)) => format!("argmax({}, {axis})", of[0]),
        TensorOp::LogSoftmax => format!("log_softmax({})", of[0]),
        TensorOp::CrossEntropy => format!("cross_entropy({}, {})", of[0], of[1]),
        TensorOp::OneHot(k) => format!("onehot({}, {k})", of[0]),
        TensorOp::Compare(c) => format!("{} {} {}", bracket(of[0]), c.symbol(), bracket(of[1])),
        TensorOp::Slice(first, second) => {
            let cols = match (second, input.dims()) {
                (Some(Select::Range(start, end)), &[_, n]) => {
                    let all = (start, end) == (0, n);
                    Some(if all {
                        ":".to_string()
                    } else if end == n {
                        format!("{start}:")
                    } else {
                        format!("{start}:{end}")
                    })
                }
                (Some(Select::At(j)), _) => Some(j.to_string()),
                _ => None,
            };
            match cols {
                Some(cols) => format!("{}[{}, {cols}]", bracket(of[0]), select(first)),
                None => format!("{}[{}]", bracket(of[0]), select(first)),
            }
        }
        _ => return None,
    })
}
