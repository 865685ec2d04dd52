//! gradcalc: a calculator with gradients, and the scalar autograd engine under it.
//!
//! The pipeline is `syntax` (text → AST) → `session` (statements and commands →
//! events) → `engine` (the computation graph and backpropagation); `render`
//! turns events into text, ANSI colour or JSON, and `repl` is the terminal front end.

pub mod engine;
pub mod render;
pub mod repl;
pub mod session;
pub mod syntax;
