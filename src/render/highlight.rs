//! Colour for the line being typed (the REPL's highlighter calls these): numbers,
//! names (unknown ones underlined), operators, comments, `:commands`, and the
//! bracket matching the one at the cursor. Only colour codes are added: the
//! visible text, and so its display width, stays exactly the same.

use owo_colors::OwoColorize;

use crate::syntax::{TokenKind, Tokens, is_name_char};

/// `line` with ANSI colours. `pos` is the cursor's byte offset: the bracket at it
/// (or just before it) and its partner are emphasised. `known` tells whether a
/// name means something now; unknown names are underlined in yellow, except an
/// assignment's target and a definition's name and parameters.
pub fn highlight_line(line: &str, pos: usize, known: &dyn Fn(&str) -> bool) -> String {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    // The matched brackets as byte offsets.
    let pair = matching_brackets(&chars, pos).map(|i| i.map(|i| chars[i].0));
    let defined = definition_names(line);
    let mut out = String::with_capacity(line.len() * 2);
    let mut in_command = false;
    let mut statement_start = true;
    let mut done = 0;
    // The same tokens the statement splitter and the parser's checks read.
    let mut tokens = Tokens::new(line).peekable();
    while let Some(token) = tokens.next() {
        if push_gap(&mut out, &line[done..token.start]) {
            // A comment: the rest of the line (the newline token included) is dimmed.
            let rest = line[done..].find('#').map_or(done, |k| done + k);
            let end = line[rest..].find('\n').map_or(line.len(), |k| rest + k);
            out.push_str(&(&line[rest..end]).dimmed().to_string());
            done = end;
            if token.start < end {
                continue;
            }
        }
        done = token.end;
        let text = &line[token.start..token.end];
        match token.kind {
            TokenKind::Newline | TokenKind::Semicolon => {
                in_command = false;
                statement_start = true;
                out.push_str(&text.magenta().to_string());
                continue;
            }
            _ => {}
        }
        let was_start = std::mem::replace(&mut statement_start, false);
        match token.kind {
            TokenKind::Colon if was_start => {
                let name = tokens.next_if(|t| t.kind == TokenKind::Name && t.start == token.end);
                let end = name.map_or(token.end, |t| t.end);
                out.push_str(&(&line[token.start..end]).blue().bold().to_string());
                done = end;
                in_command = true;
            }
            _ if in_command => out.push_str(text),
            TokenKind::Number => out.push_str(&text.cyan().to_string()),
            TokenKind::Name => {
                let target = was_start && is_assignment_target(&line[token.end..]);
                if known(text) || target || defined.iter().any(|d| d == text) {
                    out.push_str(&text.bold().to_string());
                } else {
                    out.push_str(&text.yellow().underline().to_string());
                }
            }
            _ if pair.contains(&Some(token.start)) => {
                out.push_str(&text.blue().bold().reversed().to_string());
            }
            TokenKind::Op(_) | TokenKind::Comma | TokenKind::Prime => {
                out.push_str(&text.magenta().to_string());
            }
            _ => out.push_str(text),
        }
    }
    if push_gap(&mut out, &line[done..]) {
        let rest = line[done..].find('#').map_or(done, |k| done + k);
        out.push_str(&(&line[rest..]).dimmed().to_string());
    }
    out
}

/// Writes the text between two tokens (spaces) up to a `#`; true if a `#` starts there.
fn push_gap(out: &mut String, gap: &str) -> bool {
    match gap.find('#') {
        Some(k) => {
            out.push_str(&gap[..k]);
            true
        }
        None => {
            out.push_str(gap);
            false
        }
    }
}

/// The prompt, coloured.
pub fn prompt(text: &str) -> String {
    text.blue().bold().to_string()
}

/// The live preview after the cursor, greyed.
pub fn hint(text: &str) -> String {
    text.dimmed().to_string()
}

/// True when `rest` (the text after a name) starts with `=` (not `==`) or `+= -= *= /= :=`.
fn is_assignment_target(rest: &str) -> bool {
    let rest = rest.trim_start();
    let rest = rest
        .strip_prefix(['+', '-', '*', '/', ':'])
        .filter(|r| r.starts_with('='))
        .unwrap_or(rest);
    rest.starts_with('=') && !rest.starts_with("==")
}

/// The function name and parameters of a definition line `f(a, b) = …`.
fn definition_names(line: &str) -> Vec<String> {
    let Some((head, _)) = line.split_once('=') else {
        return Vec::new();
    };
    let head = head.trim();
    let Some(inside) = head.strip_suffix(')') else {
        return Vec::new();
    };
    let Some((name, params)) = inside.split_once('(') else {
        return Vec::new();
    };
    std::iter::once(name)
        .chain(params.split(','))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s.chars().all(is_name_char))
        .collect()
}

/// The indices (into `chars`) of the bracket at or just before the cursor and its partner.
fn matching_brackets(chars: &[(usize, char)], pos: usize) -> [Option<usize>; 2] {
    let at = chars.iter().position(|&(b, _)| b == pos);
    let before = match at {
        Some(i) => i.checked_sub(1),
        None if pos > 0 => chars.len().checked_sub(1),
        None => None,
    };
    let Some(i) = [at, before]
        .into_iter()
        .flatten()
        .find(|&i| matches!(chars[i].1, '(' | ')'))
    else {
        return [None, None];
    };
    let forward = chars[i].1 == '(';
    let mut depth = 0usize;
    let mut j = i;
    loop {
        match chars[j].1 {
            '(' if forward => depth += 1,
            ')' if !forward => depth += 1,
            '(' | ')' => {
                depth -= 1;
                if depth == 0 {
                    return [Some(i), Some(j)];
                }
            }
            _ => {}
        }
        if forward {
            j += 1;
            if j == chars.len() {
                return [Some(i), None];
            }
        } else if j == 0 {
            return [Some(i), None];
        } else {
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::highlight_line;

    /// Removes ANSI escape sequences.
    fn strip(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn highlighting_keeps_the_text() {
        let known = |name: &str| ["x", "tanh"].contains(&name);
        for line in [
            "z = tanh(x*2.5e-3) + w # note",
            ":grad x, y",
            "f(a, θ) = a*θ; f'(1)",
            "((1 + 2)",
            "1e+3 - .5",
            "w := 2 # a (comment)\n:grad w; 3",
            "x = 1 #",
            "",
        ] {
            for pos in 0..=line.len() {
                if line.is_char_boundary(pos) {
                    let shown = highlight_line(line, pos, &known);
                    assert_eq!(strip(&shown), line, "{shown:?}");
                }
            }
        }
    }

    #[test]
    fn unknown_names_and_matching_brackets_are_marked() {
        let known = |name: &str| name == "x";
        let shown = highlight_line("y = x + w", 0, &known);
        assert_eq!(shown.matches("[4m").count(), 1, "{shown:?}");
        let shown = highlight_line("y = x + x", 0, &known);
        assert!(
            !shown.contains("[4m"),
            "an assignment target is not unknown: {shown:?}"
        );
        let shown = highlight_line("(x)", 3, &known);
        assert_eq!(shown.matches("\u{1b}[7m").count(), 2, "{shown:?}");
    }
}
