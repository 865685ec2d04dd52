//! The browser's side of gradcalc: the page every web surface shows (the
//! `:html` file, `:serve`'s live view, the playground's view), made from the
//! session's step model ([`crate::session::StepModel`]) as typed data.

pub mod page;
pub mod tensor_page;
