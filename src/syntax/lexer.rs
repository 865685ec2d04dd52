//! A small hand-written tokenizer shared by the statement splitter, the REPL's
//! "needs more input" check and the checks that run before the pest grammar.
//!
//! It never fails: characters it does not know become [`TokenKind::Other`], and
//! malformed number literals carry a [`Token::problem`]. It runs in linear time.

/// Operators and assignment operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operator {
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    StarStar,
    Eq,
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    /// `:=`, the in-place update of a leaf.
    ColonEq,
    /// `√`, the square root as a prefix (`√x`, `√(x+1)`).
    Root,
    /// `@`, the matrix product.
    At,
}

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenKind {
    Number,
    Name,
    LParen,
    RParen,
    Comma,
    Semicolon,
    Newline,
    Colon,
    Prime,
    /// A superscript power written after an operand: `²`, `³`, `⁻¹` (an
    /// optional `⁺`/`⁻`, then superscript digits).
    Superscript,
    Op(Operator),
    /// `ᵀ` (U+1D40) after an operand: the transpose `Wᵀ`.
    Transpose,
    /// Any other character (one `char`).
    Other,
}

impl TokenKind {
    /// True for tokens after which an expression cannot end: a line ending in one
    /// of these continues on the next line. A `,` is not one: inside brackets
    /// the open `(` continues the line, and outside them (`x1 = 2,`) it is a
    /// mistake to report, not a reason to take the next line in.
    pub(crate) fn continues_line(self) -> bool {
        matches!(self, TokenKind::Op(_))
    }

    /// True for tokens that end an operand (`2`, `x`, `)`), so that a following
    /// `+`/`-` is binary rather than a prefix sign.
    pub(crate) fn ends_operand(self) -> bool {
        matches!(
            self,
            TokenKind::Number
                | TokenKind::Name
                | TokenKind::RParen
                | TokenKind::Prime
                | TokenKind::Superscript
                | TokenKind::Transpose
        )
    }
}

/// One token: its kind and byte range (relative to the text being lexed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: TokenKind,
    pub start: usize,
    pub end: usize,
    /// For a malformed number literal: why it is malformed.
    pub problem: Option<NumberProblem>,
}

/// Why a number literal is malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberProblem {
    /// `1e-`, `1e+`: a sign but no digits.
    EmptyExponent,
    /// `2e1.5`
    FractionalExponent,
    /// `1.2.3`
    TwoDots,
    /// `1__0`, `1_`, `1_.5`
    Underscore,
    /// `0x10`, `0b101`, `0o17`: another base.
    Radix,
}

impl NumberProblem {
    /// Why the literal is malformed, lower-case.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            NumberProblem::EmptyExponent => "the exponent has no digits",
            NumberProblem::FractionalExponent => "exponents are whole numbers",
            NumberProblem::TwoDots => "a number has at most one `.`",
            NumberProblem::Underscore => "`_` may only separate two digits",
            NumberProblem::Radix => "only decimal numbers are supported",
        }
    }
}

/// Iterates over the tokens of `text`, skipping spaces, tabs, `\r` and `#` comments.
/// Newlines and `;` are tokens.
pub(crate) struct Lexer<'s> {
    text: &'s str,
    pos: usize,
}

impl<'s> Lexer<'s> {
    /// A lexer over `text`, starting at byte 0.
    pub(crate) fn new(text: &'s str) -> Self {
        Lexer { text, pos: 0 }
    }

    /// A lexer over `text`, starting at byte `pos` (moved forward to a char boundary).
    pub(crate) fn starting_at(text: &'s str, pos: usize) -> Self {
        let mut pos = pos.min(text.len());
        while !text.is_char_boundary(pos) {
            pos += 1;
        }
        Lexer { text, pos }
    }

    fn byte(&self, i: usize) -> u8 {
        self.text.as_bytes().get(i).copied().unwrap_or(0)
    }

    /// Moves past `[0-9_]*` starting at `i`, returning the end.
    fn digits(&self, mut i: usize) -> usize {
        while matches!(self.byte(i), b'0'..=b'9' | b'_') {
            i += 1;
        }
        i
    }

    fn number(&self, start: usize) -> (usize, Option<NumberProblem>) {
        let mut problem = None;
        let mut i = self.digits(start);
        // `0x10`, `0b101`, `0o17`: read the whole literal to say what it is.
        if i == start + 1
            && self.byte(start) == b'0'
            && matches!(self.byte(i), b'x' | b'X' | b'b' | b'B' | b'o' | b'O')
            && self.byte(i + 1).is_ascii_hexdigit()
        {
            i += 1;
            while self.byte(i).is_ascii_alphanumeric() || self.byte(i) == b'_' {
                i += 1;
            }
            return (i, Some(NumberProblem::Radix));
        }
        if self.byte(i) == b'.' {
            i = self.digits(i + 1);
        }
        if matches!(self.byte(i), b'e' | b'E') {
            let after = self.byte(i + 1);
            let exponent_digits = if after.is_ascii_digit() {
                Some(i + 1)
            } else if matches!(after, b'+' | b'-') {
                if self.byte(i + 2).is_ascii_digit() {
                    Some(i + 2)
                } else {
                    i += 2;
                    problem = Some(NumberProblem::EmptyExponent);
                    None
                }
            } else {
                // `2e`, `2exp(1)`: the number ends here and a name follows.
                None
            };
            if let Some(d) = exponent_digits {
                i = self.digits(d);
                if self.byte(i) == b'.' {
                    i = self.digits(i + 1);
                    problem = Some(NumberProblem::FractionalExponent);
                }
            }
        } else if self.byte(i) == b'.' {
            i = self.digits(i + 1);
            problem = Some(NumberProblem::TwoDots);
        }
        if problem.is_none() {
            let bytes = &self.text.as_bytes()[start..i];
            let bad_underscore = bytes.iter().enumerate().any(|(k, &b)| {
                b == b'_'
                    && !(k > 0
                        && bytes[k - 1].is_ascii_digit()
                        && bytes.get(k + 1).is_some_and(u8::is_ascii_digit))
            });
            if bad_underscore {
                problem = Some(NumberProblem::Underscore);
            }
        }
        (i, problem)
    }

    /// The end of a superscript power at `start` (`²`, `⁻¹`), if one starts there.
    fn superscript_end(&self, start: usize) -> Option<usize> {
        let rest = &self.text[start..];
        let signed = rest.starts_with(['⁻', '⁺']);
        let digits_from = if signed { '⁻'.len_utf8() } else { 0 };
        let digits: usize = rest[digits_from..]
            .chars()
            .take_while(|&c| superscript_digit(c).is_some())
            .map(char::len_utf8)
            .sum();
        (digits > 0).then_some(start + digits_from + digits)
    }

    fn name_end(&self, start: usize) -> usize {
        let mut i = start;
        let bytes = self.text.as_bytes();
        while i < bytes.len() {
            let b = bytes[i];
            if b.is_ascii() {
                let dot_then_name =
                    b == b'.' && self.text[i + 1..].chars().next().is_some_and(is_name_start);
                if b.is_ascii_alphanumeric() || b == b'_' || dot_then_name {
                    i += 1;
                } else {
                    break;
                }
            } else {
                match self.text[i..].chars().next() {
                    Some(c) if is_name_char(c) => i += c.len_utf8(),
                    _ => break,
                }
            }
        }
        i
    }
}

/// True if `c` can start a name: a letter (Unicode Alphabetic) or `_`. The one
/// definition of a name's characters (with [`is_name_char`]); the grammar's
/// `name` rule spells the same sets.
pub(crate) fn is_name_start(c: char) -> bool {
    c == '_' || c.is_alphabetic() && c != TRANSPOSE
}

/// `ᵀ` (U+1D40, a modifier letter): the postfix transpose `Wᵀ`, never part of
/// a name.
pub(crate) const TRANSPOSE: char = 'ᵀ';

/// True if `word` is one name: parts of a name-start character and name
/// characters, joined by `.` (`x`, `w₂₁`, the call label `h3.relu`).
pub(crate) fn is_name(word: &str) -> bool {
    word.split('.').all(|part| {
        let mut chars = part.chars();
        chars.next().is_some_and(is_name_start) && chars.all(is_name_char)
    })
}

/// True if `c` can continue a name: a letter, an ASCII digit, `_`, a subscript
/// digit (`x₁`, `w₂₁`) or a combining mark (the accent of a decomposed `é`,
/// as macOS writes it: [`normalize_name`] composes it).
pub(crate) fn is_name_char(c: char) -> bool {
    is_name_start(c)
        || c.is_ascii_digit()
        || ('₀'..='₉').contains(&c)
        || unicode_normalization::char::is_combining_mark(c)
}

/// A name in Unicode normal form C, so that a decomposed `é` (`e` and a
/// combining accent, as pasted from macOS) and the precomposed `é` are the
/// same name. ASCII and names already in NFC are copied as they are.
pub(crate) fn normalize_name(name: &str) -> String {
    use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc_quick};
    if name.is_ascii() || is_nfc_quick(name.chars()) == IsNormalized::Yes {
        name.to_string()
    } else {
        name.nfc().collect()
    }
}

/// The value of a superscript digit (`²` → 2), `None` for other characters.
pub(crate) fn superscript_digit(c: char) -> Option<u32> {
    match c {
        '⁰' => Some(0),
        '¹' => Some(1),
        '²' => Some(2),
        '³' => Some(3),
        '⁴'..='⁹' => Some(c as u32 - '⁰' as u32),
        _ => None,
    }
}

/// The exponent a superscript token stands for: `²` → 2, `⁻¹` → −1, `¹⁰` → 10.
pub(crate) fn superscript_value(text: &str) -> f64 {
    let mut sign = 1.0;
    let mut value = 0.0;
    for c in text.chars() {
        match (c, superscript_digit(c)) {
            (_, Some(d)) => value = value * 10.0 + f64::from(d),
            ('⁻', None) => sign = -1.0,
            _ => {}
        }
    }
    sign * value
}

/// The operator a mathematical symbol stands for: `×` `·` `⋅` multiply (and
/// `⊙`, the elementwise product the tensor rules print), `÷`
/// divides, `−` (U+2212, the minus gradcalc prints) subtracts, `√` is the root.
fn math_operator(c: char) -> Option<Operator> {
    match c {
        '×' | '·' | '⋅' | '⊙' => Some(Operator::Star),
        '÷' => Some(Operator::Slash),
        '−' => Some(Operator::Minus),
        '√' => Some(Operator::Root),
        _ => None,
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let bytes = self.text.as_bytes();
        // Skip whitespace and comments.
        loop {
            match bytes.get(self.pos) {
                Some(b' ' | b'\t' | b'\r') => self.pos += 1,
                Some(b'#') => match memchr_newline(&bytes[self.pos..]) {
                    Some(k) => self.pos += k,
                    None => self.pos = bytes.len(),
                },
                _ => break,
            }
        }
        let start = self.pos;
        let b = *bytes.get(start)?;
        let mut problem = None;
        let (kind, end) = match b {
            b'\n' => (TokenKind::Newline, start + 1),
            b';' => (TokenKind::Semicolon, start + 1),
            // `[` `]` (a vector or matrix, an index) nest as `(` `)` do; the
            // pre-scan checks that each closes its own kind.
            b'(' | b'[' => (TokenKind::LParen, start + 1),
            b')' | b']' => (TokenKind::RParen, start + 1),
            b'@' => (TokenKind::Op(Operator::At), start + 1),
            b',' => (TokenKind::Comma, start + 1),
            b':' if self.byte(start + 1) == b'=' => (TokenKind::Op(Operator::ColonEq), start + 2),
            b':' => (TokenKind::Colon, start + 1),
            b'\'' => (TokenKind::Prime, start + 1),
            b'^' => (TokenKind::Op(Operator::Caret), start + 1),
            b'+' | b'-' | b'*' | b'/' | b'=' => {
                let next = self.byte(start + 1);
                let (op, len) = match (b, next) {
                    (b'*', b'*') => (Operator::StarStar, 2),
                    (b'+', b'=') => (Operator::PlusEq, 2),
                    (b'-', b'=') => (Operator::MinusEq, 2),
                    (b'*', b'=') => (Operator::StarEq, 2),
                    (b'/', b'=') => (Operator::SlashEq, 2),
                    (b'+', _) => (Operator::Plus, 1),
                    (b'-', _) => (Operator::Minus, 1),
                    (b'*', _) => (Operator::Star, 1),
                    (b'/', _) => (Operator::Slash, 1),
                    _ => (Operator::Eq, 1),
                };
                (TokenKind::Op(op), start + len)
            }
            b'0'..=b'9' => {
                let (end, p) = self.number(start);
                problem = p;
                (TokenKind::Number, end)
            }
            b'.' if self.byte(start + 1).is_ascii_digit() => {
                let (end, p) = self.number(start);
                problem = p;
                (TokenKind::Number, end)
            }
            _ => {
                let c = self.text[start..].chars().next().unwrap_or('\0');
                if c == TRANSPOSE {
                    (TokenKind::Transpose, start + c.len_utf8())
                } else if is_name_start(c) {
                    (TokenKind::Name, self.name_end(start))
                } else if let Some(op) = math_operator(c) {
                    (TokenKind::Op(op), start + c.len_utf8())
                } else if let Some(end) = self.superscript_end(start) {
                    (TokenKind::Superscript, end)
                } else {
                    (TokenKind::Other, start + c.len_utf8().max(1))
                }
            }
        };
        self.pos = end;
        Some(Token {
            kind,
            start,
            end,
            problem,
        })
    }
}

/// Index of the first `\n` in `bytes`.
fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}
