//! The integration tests, one test binary: each former `tests/NAME.rs` is the
//! module `NAME` here (run one with `cargo test --test it NAME::`).

mod accuracy;
mod cases;
mod classroom;
mod cli;
mod derivatives;
mod engine_chain;
mod examples;
mod fuzz_regressions;
mod hostile;
mod library;
mod memory;
mod properties;
mod repl;
mod rules;
mod sessions;
mod teaching;
mod util;
