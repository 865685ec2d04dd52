//! The browser's side of gradcalc: the page every web surface shows (the
//! `:html` file, `:serve`'s live view, the playground's view), made from the
//! session's step model ([`crate::session::StepModel`]) as typed data
//! (`page.rs`), and the live server of `:serve` (`serve.rs`, with the `cli`
//! feature).

pub mod page;
#[cfg(feature = "cli")]
pub mod serve;
