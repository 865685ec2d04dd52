//! gradcalc: a calculator with gradients, and the scalar autograd engine under it.
//!
//! The pipeline is [`syntax`] (text → AST) → [`session`] (statements and commands →
//! events) → [`engine`] (the computation graph and backpropagation); [`render`]
//! turns events into text, ANSI colour or JSON, and [`repl`] is the terminal front end.
//!
//! The engine on its own:
//!
//! ```
//! use gradcalc::engine::{Graph, Op};
//!
//! let mut g = Graph::new();
//! let x = g.leaf(2.0);
//! let y = g.leaf(3.0);
//! let xy = g.apply(Op::Mul, &[x, y]).unwrap();
//! let z = g.apply(Op::Add, &[xy, x]).unwrap(); // z = x*y + x
//! let order = g.topo_order(z); // reverse topological order: output first
//! let grads = g.backward(&order);
//! assert_eq!((grads[x], grads[y]), (4.0, 2.0));
//! ```
//!
//! A whole session, as the calculator runs it:
//!
//! ```
//! use gradcalc::session::{Event, Session};
//!
//! let mut session = Session::new();
//! let mut grads = Vec::new();
//! let _ = session.run_source("x = 2; y = 3; z = x*y + x; :grad x", |result| {
//!     for event in result.expect("no error") {
//!         if let Event::Grad { wrt, value, .. } = event {
//!             grads.push((wrt, value.number()));
//!         }
//!     }
//!     std::ops::ControlFlow::Continue(())
//! });
//! assert_eq!(grads, [("x".to_string(), Some(4.0))]);
//! ```

pub mod driver;
pub mod engine;
pub mod files;
pub mod homework;
#[cfg(all(feature = "os", target_os = "linux"))]
pub mod hugepages;
pub mod interrupt;
pub mod notebook;
pub mod render;
#[cfg(feature = "cli")]
pub mod repl;
pub mod session;
pub mod syntax;
pub mod transcript;
pub mod web;
