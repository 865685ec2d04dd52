//! The integration tests, one test binary: each former `tests/NAME.rs` is the
//! module `NAME` here (run one with `cargo test --test it NAME::`); `util`
//! holds the helpers they share.
//!
//! Rendered text and error reports are compared whole with expect-test's
//! `expect![[…]]` snapshots, each checked by hand when it was written (a
//! comment beside it says how). When an output changes on purpose,
//! `UPDATE_EXPECT=1 cargo test --test it` rewrites the snapshots in place;
//! review every changed line before committing it.

mod accuracy;
mod architecture;
mod batch;
mod bounds;
mod browser;
mod call_steps;
mod call_views;
mod calls;
mod cases;
mod classroom;
mod cli;
mod completions;
mod derivatives;
mod descent;
mod engine_chain;
mod examples;
mod fuzz_regressions;
mod hints;
mod homework;
mod hostile;
mod interrupts;
mod kernel;
mod library;
mod listings;
mod long_lines;
mod memory;
mod new_user;
mod notebook_frame;
mod one_value;
mod orders;
mod pictures;
mod playground;
mod playground_homework;
mod playground_quiz;
mod playground_width;
mod playground_work;
mod plot_leaves;
mod properties;
mod pty;
mod quiz;
mod readme;
mod refusals;
mod repl;
mod rules;
mod serve;
mod sessions;
mod silence;
mod slides;
mod step_keys;
mod step_pages;
mod steps;
mod teaching;
mod tensor_handouts;
mod tensor_help;
mod tensor_hessian;
mod tensor_rules;
mod tensor_steps;
mod tensors;
mod typed_back;
mod util;
mod view_step;
mod web;
mod wide_values;
