//! `:check`: each gradient against a central difference on the graph itself,
//! with the tolerance of `torch.autograd.gradcheck`.

use super::command::Command;
use super::error::ErrorCode;
use super::params::Param;
use super::tensors::{element_name, tensor_error};
use super::{
    CHECK_TOLERANCE, Event, GRADCHECK_TOLERANCE, GradNote, Notice, Output, Session, SessionError,
    Tolerance, Verdict,
};
use crate::engine::tensor::{Shape, Tensor, TensorId, TensorOp};
use crate::engine::{Graph, NodeId, Op};
use crate::session::Number;
use crate::syntax::{Ident, Span};

/// `:check` without names checks at most this many leaves.
pub(super) const CHECK_LEAVES: usize = 1000;
/// `:check`'s step is this fraction of the value (at least of 1); where the cap
/// below makes it smaller, this fraction of |x| is tried too (see [`wide_step`])
const CHECK_STEP: f64 = 1e-5;
/// and at most this much,
const CHECK_STEP_MAX: f64 = 1e-3;
/// and at most this fraction of |x| (for x ≠ 0).
const CHECK_STEP_OF_X: f64 = 1e-3;

impl Session {
    /// `:check [NAMES]`: each gradient by reverse mode against a central difference
    /// on the graph itself (the output's subgraph evaluated again with one node
    /// moved by ±h; nothing is parsed again and the graph is not changed). With
    /// no names: the leaves the output depends on, the first [`CHECK_LEAVES`].
    ///
    /// Each move re-evaluates only the moved node's descendants ([`Downstream`]),
    /// so a variable that feeds few nodes costs little however large the graph.
    ///
    /// [`Downstream`]: crate::engine::Downstream
    pub(super) fn check(
        &mut self,
        command: &Command,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let (span, args) = (command.name.span, &command.names());
        let output = match self.shaped_output() {
            Some(tensor) => {
                return self.check_tensors(tensor.node, &tensor.label, span, args, events);
            }
            None => self.require_output(span)?,
        };
        let (gradients, reached) = self.backprop(&output, span)?;
        let (targets, left_out) = self.check_targets(&output, args, &reached, events)?;
        let order = self.order_for(output.node);
        let mut downstream = self.graph.downstream(&order);
        let base: Vec<f64> = (0..self.graph.len())
            .map(|i| self.graph.value(NodeId(i as u32)))
            .collect();
        let mut probe = Probe {
            graph: &self.graph,
            out: output.node.index(),
            minus: base.clone(),
            plus: base.clone(),
            base,
        };
        for (name, node) in targets.iter().cloned() {
            self.check_interrupt()?;
            let x = self.graph.value(node);
            // Only the nodes that depend on this one change; the moved node is first.
            let moved = downstream.descendants(node);
            // The rounding error of the quotient at step h: each node moved
            // (but x itself, whose rounding the quotient divides out) is
            // rounded to ε of its value, and that reaches the output times
            // its gradient; divided by the step.
            let scale: f64 = moved[1..]
                .iter()
                .map(|&id| (probe.base[id.index()] * gradients[id]).abs())
                .filter(|v| v.is_finite())
                .sum::<f64>()
                * f64::EPSILON;
            let (h, numeric, kink) = probe.step_and_quotient(&moved, x, scale);
            let analytic = gradients[node];
            // Before a warning or a failure: the quotient at half the step
            // must agree with this one to 1e-3 of itself (gradcheck's rtol),
            // or the difference says nothing about the gradient.
            let steady = |numeric: f64| {
                let (half, _) = probe.central(&moved, h / 2.0);
                (half - numeric).abs() <= 1e-3 * numeric.abs()
            };
            let (verdict, tolerance) = judge(analytic, numeric, kink, steady);
            let note = self.check_note(&output, &name, &reached, verdict, &moved);
            let compared = Compared {
                at: x,
                h,
                analytic,
                numeric,
            };
            let of = output.label.clone();
            events.push(compared.event((of, name), (verdict, tolerance), note));
        }
        if left_out > 0 {
            events.push(Event::Notice(Notice::PartlyChecked {
                checked: targets.len(),
                total: targets.len() + left_out,
            }));
        }
        Ok(())
    }

    /// The variables `:check` checks, with their nodes, and how many it leaves
    /// out: those named in `args`, or without names the first [`CHECK_LEAVES`]
    /// leaves `output` depends on (`reached`), with a notice in `events` for the
    /// variables it was built from an earlier version of, and for an output
    /// that depends on no variable.
    ///
    /// Errors: a name that is no variable.
    fn check_targets(
        &self,
        output: &Output<NodeId>,
        args: &[Ident],
        reached: &[bool],
        events: &mut Vec<Event>,
    ) -> Result<(Vec<(String, NodeId)>, usize), SessionError> {
        let mut targets = self.named_variables(args)?;
        let mut left_out = 0;
        if !args.is_empty() {
            return Ok((targets, left_out));
        }
        let leaves = self
            .scalar_vars()
            .map(|(name, node)| (name.clone(), node))
            .filter(|(name, node)| {
                reached[node.index()]
                    && self.graph.op(*node) == Op::Variable
                    && *name != output.label
            });
        for leaf in leaves {
            if targets.len() < CHECK_LEAVES {
                targets.push(leaf);
            } else {
                left_out += 1;
            }
        }
        let stale: Vec<String> = self
            .vars
            .keys()
            .filter(|name| self.stale_note(output, name, reached).is_some())
            .cloned()
            .collect();
        if !stale.is_empty() {
            events.push(Event::Notice(Notice::NotChecked {
                of: output.label.clone(),
                names: stale.clone(),
            }));
        }
        // Variables left out for an earlier binding are named above; say
        // "nothing to check" only when no such note explains it.
        if targets.is_empty() && stale.is_empty() {
            events.push(Event::Notice(Notice::NoVariable {
                of: output.label.clone(),
                checking: true,
            }));
        }
        Ok((targets, left_out))
    }

    /// The note beside the check of the variable `name` whose `moved` nodes
    /// reach `output`: that the output was built from an earlier `name`, or —
    /// beside a warning or a failure `verdict` — that a path goes through
    /// `detach`; `None` otherwise.
    fn check_note(
        &self,
        output: &Output<NodeId>,
        name: &str,
        reached: &[bool],
        verdict: Verdict,
        moved: &[NodeId],
    ) -> Option<GradNote> {
        // A gradient stopped by `detach` on purpose differs from the
        // central difference, which moves through it: say so beside a
        // failing verdict, so that the FAIL is not read as a wrong rule.
        let detached = matches!(verdict, Verdict::Warn | Verdict::Fail)
            && moved[1..].iter().any(|&id| self.graph.op(id) == Op::Detach);
        self.stale_note(output, name, reached).or_else(|| {
            detached.then(|| GradNote::ThroughDetach {
                of: output.label.clone(),
                wrt: name.to_string(),
            })
        })
    }
}

/// One gradient beside its central difference: at `at`, step `h`, reverse
/// mode's `analytic` and the quotient's `numeric`.
struct Compared {
    at: f64,
    h: f64,
    analytic: f64,
    numeric: f64,
}

impl Compared {
    /// `:check`'s event of ∂of/∂wrt (`names`), judged `verdict` within
    /// `tolerance`, with `note`: the difference |analytic − numeric| and the
    /// relative error, that over the larger magnitude (0 where they are
    /// equal, also both 0 or both infinite). For a number and for each
    /// element of a tensor.
    fn event(
        &self,
        (of, wrt): (String, String),
        (verdict, tolerance): (Verdict, Tolerance),
        note: Option<GradNote>,
    ) -> Event {
        let Compared {
            at,
            h,
            analytic,
            numeric,
        } = *self;
        let difference = (analytic - numeric).abs();
        let relative_error = if analytic == numeric {
            0.0
        } else {
            difference / analytic.abs().max(numeric.abs())
        };
        Event::Check {
            of,
            wrt,
            at: Number(at),
            h: Number(h),
            analytic: Number(analytic),
            numeric: Number(numeric),
            relative_error: Number(relative_error),
            difference: Number(difference),
            tolerance,
            verdict,
            note,
        }
    }
}

/// The verdict of a check and the tolerance it rests on, from the gradient by
/// reverse mode (`analytic`), the central difference (`numeric`), whether its
/// step crosses a kink, and `steady`: whether the quotient at half the step
/// agrees with `numeric` (asked only before a warning or a failure).
pub(super) fn judge(
    analytic: f64,
    numeric: f64,
    kink: bool,
    mut steady: impl FnMut(f64) -> bool,
) -> (Verdict, Tolerance) {
    let difference = (analytic - numeric).abs();
    if !analytic.is_finite() || !numeric.is_finite() {
        (Verdict::NotFinite, CHECK_TOLERANCE)
    } else if kink {
        (Verdict::Kink, CHECK_TOLERANCE)
    } else if CHECK_TOLERANCE.admits(difference, numeric) {
        (Verdict::Pass, CHECK_TOLERANCE)
    } else if steady(numeric) && GRADCHECK_TOLERANCE.admits(difference, numeric) {
        (Verdict::Warn, GRADCHECK_TOLERANCE)
    } else if steady(numeric) {
        (Verdict::Fail, GRADCHECK_TOLERANCE)
    } else {
        (Verdict::Unsteady, GRADCHECK_TOLERANCE)
    }
}

/// The graph's values as `:check` moves them: `base` as evaluated, and `minus`
/// and `plus`, equal to `base` but while a central difference is taken, for
/// the output node at index `out`.
struct Probe<'a> {
    graph: &'a Graph,
    out: usize,
    base: Vec<f64>,
    minus: Vec<f64>,
    plus: Vec<f64>,
}

impl Probe<'_> {
    /// The step, the central difference and whether it crosses a kink for the
    /// node `moved[0]` at x (its descendants `moved[1..]`): at [`check_step`],
    /// or at the wider step where the quotient's rounding error (`scale` over
    /// the step) makes the narrow one noise and the wide one errs less.
    fn step_and_quotient(&mut self, moved: &[NodeId], x: f64, scale: f64) -> (f64, f64, bool) {
        let mut h = check_step(x);
        let (mut numeric, mut kink) = self.central(moved, h);
        // The other step worth trying where the one taken may be rounding
        // noise: 1e-5·|x| (a power of two) where the cap of 1e-3 cut it
        // (large |x|), or 1e-5 itself where the rule near 0 cut it to a
        // fraction of |x| (x + 1 at x = 1e-20: a step of 1e-25 moves no
        // digit of the output).
        let wide = if CHECK_STEP * x.abs() > CHECK_STEP_MAX {
            wide_step(x)
        } else {
            CHECK_STEP * x.abs().max(1.0)
        };
        if wide > h && scale / h > 1e-12 * numeric.abs() {
            // The step is too small for this function: the quotient is
            // rounding noise (x² at 1e12: a step of 1e-3 is 8 units in the
            // last place of x; x + 1 at 1e-20). The wider step is taken
            // instead where its estimated error is smaller: rounding
            // (scale/h) plus truncation (how much the quotient changes when
            // the step is halved), and it crosses no kink. sin(x) at 1e8
            // varies on a scale of 1, so there the small step stays.
            let (half, _) = self.central(moved, h / 2.0);
            let (wide_numeric, wide_kink) = self.central(moved, wide);
            let (wide_half, _) = self.central(moved, wide / 2.0);
            let error = |step: f64, a: f64, b: f64| {
                let spread = (a - b).abs();
                let e = scale / step + spread;
                if e.is_nan() { f64::INFINITY } else { e }
            };
            if !wide_kink && error(wide, wide_numeric, wide_half) < error(h, numeric, half) {
                (h, numeric, kink) = (wide, wide_numeric, wide_kink);
            }
        }
        (h, numeric, kink)
    }

    /// `(f(x + h) − f(x − h)) / ((x + h) − (x − h))` for the output, with the
    /// node `moved[0]` (value x in `base`) moved by ±h and its descendants
    /// `moved[1..]` evaluated again in `minus` and `plus` (both equal to `base`
    /// before and after), and whether a node on the way crosses a kink.
    fn central(&mut self, moved: &[NodeId], h: f64) -> (f64, bool) {
        let (graph, base) = (self.graph, &self.base);
        let (minus, plus) = (&mut self.minus, &mut self.plus);
        let node = moved[0];
        let x = base[node.index()];
        let (low, high) = (x - h, x + h);
        minus[node.index()] = low;
        plus[node.index()] = high;
        graph.forward_over(&moved[1..], minus);
        graph.forward_over(&moved[1..], plus);
        // Divide by the step actually taken (x ± h rounded).
        let numeric = (plus[self.out] - minus[self.out]) / (high - low);
        let kink = graph.crosses_kink(&moved[1..], [minus, base, plus]);
        for id in moved {
            minus[id.index()] = base[id.index()];
            plus[id.index()] = base[id.index()];
        }
        (numeric, kink)
    }
}

/// The step h of `:check`'s central difference (f(x + h) − f(x − h)) / 2h at x.
///
/// `torch.autograd.gradcheck` moves each input by a fixed `eps = 1e-6`
/// (PyTorch's documentation of `torch.autograd.gradcheck.gradcheck`). In float64
/// a central difference errs by about h²·|f‴|/6 (truncation) plus ε·|f|/h
/// (rounding, ε ≈ 2.2e-16), smallest near h ≈ ε^(1/3)·scale ≈ 6e-6·scale; so h is
/// [`CHECK_STEP`] of |x| (of 1 when |x| < 1). The step is bounded by
/// [`CHECK_STEP_MAX`]: the scale on which f varies need not grow with x
/// (sin(x) at x = 1e8 varies on a scale of 1, and a step of 1000 would measure
/// nothing), and at least a few units in the last place of x, so that x ± h
/// differ from x (the quotient divides by the step actually taken).
pub(super) fn check_step(x: f64) -> f64 {
    let mut h = (CHECK_STEP * x.abs().max(1.0)).min(CHECK_STEP_MAX);
    if x != 0.0 {
        // Near 0 the step must stay small beside x itself: ln(x) at x = 1e-4
        // with h = 1e-5 measures a tenth of the way to its pole.
        h = h.min(x.abs() * CHECK_STEP_OF_X);
    }
    h.max(x.abs() * f64::EPSILON * 4.0)
}

/// The step [`CHECK_STEP`]·|x| without the cap, rounded to a power of two so
/// that `x ± h` is exact in most cases (the quotient divides by the step
/// actually taken in any case): the step that keeps a central difference
/// above rounding noise where |x| is large (x² at 1e12, 3x at 1e20).
fn wide_step(x: f64) -> f64 {
    let h = CHECK_STEP * x.abs().max(1.0);
    if !h.is_finite() || h == 0.0 {
        return h;
    }
    let rounded = 2f64.powi(h.log2().round() as i32);
    if rounded.is_finite() && rounded > 0.0 {
        rounded
    } else {
        h
    }
}

impl Session {
    /// `:check [NAMES]` of a tensor output of shape `()`: every element of
    /// each tensor leaf named (or every leaf the output reaches) against a
    /// central difference `(L(x + h) − L(x − h))/2h`, the leaf moved by ±h
    /// and the graph run forward again, with the verdicts of the scalar
    /// `:check`. One `check` per element, named `W[i, j]`.
    fn check_tensors(
        &mut self,
        output: TensorId,
        label: &str,
        span: Span,
        args: &[Ident],
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let shape = self.tensors.graph.shape(output);
        if shape != Shape::scalar() {
            return Err(tensor_error(
                ErrorCode::Shape,
                span,
                format!("`:check` takes an output of shape (), and `{label}` has shape ({shape})"),
                Some(format!("reduce it first, e.g. `L = sum({label})`")),
            ));
        }
        self.refuse_gradient_of_gradient(output, span)?;
        let gradients = self.tensor_backward(output, span)?;
        let order = self.tensors.graph.topo_order(output);
        let targets: Vec<(String, Param)> = if args.is_empty() {
            let mut targets: Vec<(String, Param)> = self
                .shaped_vars()
                .filter(|(name, id)| {
                    self.tensors.graph.op(*id) == TensorOp::Variable
                        && order.contains(id)
                        && name.as_str() != label
                })
                .map(|(name, id)| (name.clone(), Param::Tensor(id)))
                .collect();
            targets.extend(self.scalar_params_reached(&gradients));
            let stale: Vec<String> = self
                .vars
                .keys()
                .filter(|name| self.stale_note_tensors(label, name, &gradients).is_some())
                .cloned()
                .collect();
            if !stale.is_empty() {
                events.push(Event::Notice(Notice::NotChecked {
                    of: label.to_string(),
                    names: stale,
                }));
                if targets.is_empty() {
                    return Ok(());
                }
            }
            targets
        } else {
            args.iter()
                .map(|arg| Ok((arg.name.clone(), self.param_for(arg, "check")?)))
                .collect::<Result<_, SessionError>>()?
        };
        if targets.is_empty() {
            events.push(Event::Notice(super::Notice::NoVariable {
                of: label.to_string(),
                checking: true,
            }));
            return Ok(());
        }
        let mut checked = 0;
        let mut total = 0;
        for (name, leaf) in targets {
            let note = self.stale_note_tensors(label, &name, &gradients);
            let value = self.param_value(leaf);
            total += value.len();
            let grad = Some(self.param_gradient(&gradients, leaf));
            for k in 0..value.len() {
                if checked == CHECK_ELEMENTS {
                    break;
                }
                self.check_interrupt()?;
                checked += 1;
                let x = value.data()[k];
                let analytic = grad.as_ref().map_or(0.0, |g| g.data()[k]);
                let h = super::check::check_step(x);
                let numeric = self.central_tensors(leaf, output, &value, k, h);
                let steady = |numeric: f64| {
                    let half = self.central_tensors(leaf, output, &value, k, h / 2.0);
                    (half - numeric).abs() <= 1e-3 * numeric.abs()
                };
                let (verdict, tolerance) = super::check::judge(analytic, numeric, false, steady);
                let wrt = element_name(&name, value.shape(), k);
                let compared = Compared {
                    at: x,
                    h,
                    analytic,
                    numeric,
                };
                events.push(compared.event(
                    (label.to_string(), wrt),
                    (verdict, tolerance),
                    note.clone(),
                ));
            }
        }
        if checked < total {
            events.push(Event::Notice(super::Notice::PartlyChecked {
                checked,
                total,
            }));
        }
        Ok(())
    }

    /// `(L(x + h) − L(x − h))/2h` for element `k` of `leaf` (whose value is
    /// `value`), on copies of the graphs: the session's stay as they are.
    fn central_tensors(
        &self,
        leaf: Param,
        output: TensorId,
        value: &Tensor,
        k: usize,
        h: f64,
    ) -> f64 {
        let mut graph = self.tensors.graph.clone();
        let mut scalars = match leaf {
            Param::Tensor(_) => None,
            Param::Scalar(_) => Some(self.graph.clone()),
        };
        let mut at = |x: f64| {
            match leaf {
                Param::Scalar(node) => {
                    if let Some(scalars) = scalars.as_mut() {
                        scalars.update_leaves(&[(node, x)]);
                    }
                }
                Param::Tensor(id) => {
                    let mut moved = value.clone();
                    moved.data_mut()[k] = x;
                    let _ = graph.set_leaf_value(id, moved);
                }
            }
            graph.rerun(scalars.as_ref().unwrap_or(&self.graph));
            graph.value(output).data()[0]
        };
        let x = value.data()[k];
        let (plus, minus) = (at(x + h), at(x - h));
        (plus - minus) / ((x + h) - (x - h))
    }
}

/// The most elements `:check` of a tensor output differences (then a notice
/// says how many were left out).
const CHECK_ELEMENTS: usize = 1000;
