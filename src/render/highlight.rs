//! Colour for the line being typed (the REPL's highlighter calls these): numbers,
//! names (unknown ones underlined), operators, comments, `:commands`, and the
//! bracket matching the one at the cursor. Only colour codes are added: the
//! visible text, and so its display width, stays exactly the same.

use owo_colors::OwoColorize;

/// `line` with ANSI colours. `pos` is the cursor's byte offset: the bracket at it
/// (or just before it) and its partner are emphasised. `known` tells whether a
/// name means something now; unknown names are underlined in yellow, except an
/// assignment's target and a definition's name and parameters.
pub fn highlight_line(line: &str, pos: usize, known: &dyn Fn(&str) -> bool) -> String {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    let pair = matching_brackets(&chars, pos);
    let defined = definition_names(line);
    let mut out = String::with_capacity(line.len() * 2);
    let mut i = 0;
    let mut in_command = false;
    let mut statement_start = true;
    while i < chars.len() {
        let (at, c) = chars[i];
        let end = |j: usize| chars.get(j).map_or(line.len(), |&(b, _)| b);
        if c == '#' {
            out.push_str(&(&line[at..]).dimmed().to_string());
            break;
        }
        if c == ';' || c == '\n' {
            in_command = false;
            statement_start = true;
            out.push_str(&c.to_string().magenta().to_string());
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            out.push(c);
            i += 1;
            continue;
        }
        let was_start = std::mem::replace(&mut statement_start, false);
        if c == ':' && was_start {
            let mut j = i + 1;
            while j < chars.len() && is_name_char(chars[j].1) {
                j += 1;
            }
            out.push_str(&(&line[at..end(j)]).blue().bold().to_string());
            in_command = true;
            i = j;
            continue;
        }
        if in_command {
            let mut j = i;
            while j < chars.len() && !matches!(chars[j].1, ';' | '#' | '\n') {
                j += 1;
            }
            out.push_str(&line[at..end(j)]);
            i = j;
            continue;
        }
        if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(|d| d.1.is_ascii_digit()))
        {
            let mut j = i;
            while j < chars.len() {
                let d = chars[j].1;
                let exponent_sign =
                    matches!(d, '+' | '-') && j > i && matches!(chars[j - 1].1, 'e' | 'E');
                if d.is_ascii_digit() || matches!(d, '.' | '_' | 'e' | 'E') || exponent_sign {
                    j += 1;
                } else {
                    break;
                }
            }
            out.push_str(&(&line[at..end(j)]).cyan().to_string());
            i = j;
            continue;
        }
        if is_name_char(c) {
            let mut j = i;
            while j < chars.len() && is_name_char(chars[j].1) {
                j += 1;
            }
            let name = &line[at..end(j)];
            let target = is_assignment_target(&line[end(j)..]) && was_start;
            if known(name) || target || defined.iter().any(|d| d == name) {
                out.push_str(&name.bold().to_string());
            } else {
                out.push_str(&name.yellow().underline().to_string());
            }
            i = j;
            continue;
        }
        let text = c.to_string();
        if pair.contains(&Some(i)) {
            out.push_str(&text.blue().bold().reversed().to_string());
        } else if matches!(c, '(' | ')') {
            out.push_str(&text);
        } else if matches!(c, '+' | '-' | '*' | '/' | '^' | '=' | ',' | '\'') {
            out.push_str(&text.magenta().to_string());
        } else {
            out.push_str(&text);
        }
        i += 1;
    }
    out
}

/// The prompt, coloured.
pub fn prompt(text: &str) -> String {
    text.blue().bold().to_string()
}

/// The live preview after the cursor, greyed.
pub fn hint(text: &str) -> String {
    text.dimmed().to_string()
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// True when `rest` (the text after a name) starts with `=` (not `==`) or `+= -= *= /=`.
fn is_assignment_target(rest: &str) -> bool {
    let rest = rest.trim_start();
    let rest = rest
        .strip_prefix(['+', '-', '*', '/'])
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
