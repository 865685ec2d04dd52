//! The output as typed pieces for the page: the text the terminal shows, cut
//! where its look changes, each piece with the classes of its look (`bold`,
//! `dim`, `underline`, `reverse`, and a colour: `red`, `green`, …) prefixed
//! `gc-`, so that the page builds its spans from data and parses no escape
//! codes. The printer colours the terminal's text with SGR sequences; they
//! are read here by `anstyle-parse` (the terminal parser `clap` uses) and
//! every other escape sequence is dropped.

use anstyle_parse::{Params, Parser, Perform};
use serde::Serialize;

/// A run of output text drawn one way.
#[derive(Serialize, Debug, PartialEq)]
pub struct Piece {
    /// The characters, newlines included.
    pub text: String,
    /// Space-separated classes (`gc-bold gc-red`), empty for plain text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub class: String,
    /// A picture shown in place of the text (a plot); `text` then says what
    /// it shows, for a screen reader and for copying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub svg: Option<String>,
}

/// A plot drawn as SVG where the terminal draws braille.
pub struct Plot {
    /// Where it goes: the output's length in bytes when it was shown.
    pub at: usize,
    /// Its charts' titles, a line each (`y for x from -2 to 2 (x = 1 now)`).
    pub titles: String,
    /// The picture.
    pub svg: String,
}

/// The look set by the SGR sequences so far.
#[derive(Default, Clone, PartialEq)]
struct Look {
    bold: bool,
    dim: bool,
    underline: bool,
    reverse: bool,
    colour: Option<&'static str>,
}

impl Look {
    fn class(&self) -> String {
        let flags = [
            (self.bold, "gc-bold"),
            (self.dim, "gc-dim"),
            (self.underline, "gc-underline"),
            (self.reverse, "gc-reverse"),
        ];
        let mut classes: Vec<String> = flags
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, name)| name.to_string())
            .collect();
        if let Some(colour) = self.colour {
            classes.push(format!("gc-{colour}"));
        }
        classes.join(" ")
    }

    /// Applies one SGR parameter (`ESC [ n m`).
    fn apply(&mut self, code: u16) {
        const COLOURS: [&str; 8] = [
            "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
        ];
        match code {
            0 => *self = Look::default(),
            1 => self.bold = true,
            2 => self.dim = true,
            4 => self.underline = true,
            7 => self.reverse = true,
            22 => (self.bold, self.dim) = (false, false),
            24 => self.underline = false,
            27 => self.reverse = false,
            30..=37 => self.colour = Some(COLOURS[usize::from(code - 30)]),
            90 => self.colour = Some("grey"),
            91..=97 => self.colour = Some(COLOURS[usize::from(code - 90)]),
            39 => self.colour = None,
            _ => {}
        }
    }
}

/// Collects the pieces while the parser reads the bytes.
#[derive(Default)]
struct Collector {
    pieces: Vec<Piece>,
    look: Look,
    /// The look of the last piece, whose text grows while the look stays.
    last: Option<Look>,
}

impl Collector {
    fn push(&mut self, c: char) {
        if self.last.as_ref() != Some(&self.look) || self.pieces.is_empty() {
            self.pieces.push(Piece {
                text: String::new(),
                class: self.look.class(),
                svg: None,
            });
            self.last = Some(self.look.clone());
        }
        if let Some(piece) = self.pieces.last_mut() {
            piece.text.push(c);
        }
    }
}

impl Perform for Collector {
    fn print(&mut self, c: char) {
        self.push(c);
    }

    fn execute(&mut self, byte: u8) {
        if matches!(byte, b'\n' | b'\t') {
            self.push(char::from(byte));
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: u8) {
        if action != b'm' || ignore || !intermediates.is_empty() {
            return;
        }
        if params.is_empty() {
            self.look.apply(0);
        }
        for param in params.iter() {
            self.look.apply(param.first().copied().unwrap_or(0));
        }
    }
}

/// The output `bytes` (UTF-8 with SGR colour sequences) as pieces, with the
/// `plots` (in the order shown) where they were shown.
pub fn pieces(bytes: &[u8], plots: Vec<Plot>) -> Vec<Piece> {
    let mut parser = Parser::<anstyle_parse::DefaultCharAccumulator>::new();
    let mut collector = Collector::default();
    let mut from = 0;
    for plot in plots {
        let at = plot.at.clamp(from, bytes.len());
        for &byte in &bytes[from..at] {
            parser.advance(&mut collector, byte);
        }
        from = at;
        collector.pieces.push(Piece {
            text: format!("{}\n", plot.titles),
            class: String::new(),
            svg: Some(plot.svg),
        });
        collector.last = None;
    }
    for &byte in &bytes[from..] {
        parser.advance(&mut collector, byte);
    }
    collector.pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_become_classes_and_other_escapes_go() {
        let text =
            "\u{1b}[1mx\u{1b}[0m = \u{1b}[32m2\u{1b}[39m\n\u{1b}[2J∂\u{1b}[1;31mbad\u{1b}[0m";
        let got: Vec<(String, String)> = pieces(text.as_bytes(), Vec::new())
            .into_iter()
            .map(|p| (p.text, p.class))
            .collect();
        let want = [
            ("x", "gc-bold"),
            (" = ", ""),
            ("2", "gc-green"),
            ("\n∂", ""),
            ("bad", "gc-bold gc-red"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(t, c)| (t.to_string(), c.to_string()))
            .collect();
        assert_eq!(got, want);
    }
}
