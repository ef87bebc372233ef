//! Text from users where claimbench shows it: queue names, descriptions, connection
//! labels and file paths are free text, and summary.md, the `compare` report and CI job
//! summaries are Markdown, so such text is escaped where it enters them (report.html
//! escapes its own); on a terminal, [`printable`] keeps it from being read as control
//! sequences.
//!
//! Only what Markdown would read as markup is escaped, so a summary printed to a
//! terminal stays readable: an underscore inside a word (`claim_p99`) is never emphasis
//! in CommonMark, and is left alone.

use std::fmt::Write as _;

/// `s` with every character Markdown could read as markup backslash-escaped, and line
/// breaks as spaces (one value, one line).
pub fn escape(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        let word = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        match c {
            '\n' | '\r' => out.push(' '),
            '_' if word(i.checked_sub(1)) && word(Some(i + 1)) => out.push('_'),
            // A link or image needs `](` or `![`; brackets alone stay as they are.
            ']' if chars.get(i + 1) != Some(&'(') => out.push(']'),
            '!' if chars.get(i + 1) != Some(&'[') => out.push('!'),
            '\\' | '`' | '*' | '_' | ']' | '!' | '<' | '|' | '~' | '&' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// `s` for a terminal: control characters (an escape sequence that recolours or clears
/// the screen, a carriage return that overwrites the line, a bell) shown escaped, as
/// `\u{1b}`; line breaks and tabs stay. Every message claimbench prints that may echo a
/// name, value or path someone else wrote goes through it.
pub fn printable(s: &str) -> String {
    if !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return s.to_string();
    }
    s.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// A table cell: escaped, except that a cell claimbench made bold as a whole
/// (`**FAIL**`) stays bold around its escaped text.
pub fn cell(s: &str) -> String {
    match s.strip_prefix("**").and_then(|x| x.strip_suffix("**")) {
        Some(inner) if !inner.is_empty() => format!("**{}**", escape(inner)),
        _ => escape(s),
    }
}

/// `s` as an inline code span: fenced by one more backtick than its longest run, so a
/// name holding backticks cannot end the span early.
pub fn code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// A GitHub-flavoured Markdown table; the first `left` columns are left-aligned (names),
/// the rest right-aligned (numbers).
/// Every cell is escaped (queue names, labels and paths are free text; a `|` would break
/// the table), except claimbench's own whole-cell bold.
pub fn table(out: &mut String, header: &[&str], rows: &[Vec<String>], left: usize) {
    let line =
        |cells: &mut dyn Iterator<Item = &str>| cells.map(cell).collect::<Vec<_>>().join(" | ");
    let _ = writeln!(out, "| {} |", line(&mut header.iter().copied()));
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i < left { "---" } else { "--:" })
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for row in rows {
        let _ = writeln!(out, "| {} |", line(&mut row.iter().map(String::as_str)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_never_holds_a_control_sequence() {
        assert_eq!(printable("plain\nline\t2"), "plain\nline\t2");
        let shown = printable("a\u{1b}[31mred\rb\u{7}\u{9b}c");
        assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
        assert!(shown.contains("\\u{1b}[31mred"), "{shown}");
    }

    #[test]
    fn markup_in_a_name_is_shown_not_applied() {
        assert_eq!(escape("a|b"), "a\\|b");
        assert_eq!(escape("*bold* [x](y) <b>"), "\\*bold\\* [x\\](y) \\<b>");
        assert_eq!(
            escape("![i](u) [1 – 2] a >= b!"),
            "\\![i\\](u) [1 – 2] a >= b!"
        );
        assert_eq!(escape("claim_p99"), "claim_p99");
        assert_eq!(escape("_lead"), "\\_lead");
        assert_eq!(escape("two\nlines"), "two lines");
        assert_eq!(escape("é_ö"), "é_ö");
        assert_eq!(cell("**FAIL**"), "**FAIL**");
        assert_eq!(cell("**a|b**"), "**a\\|b**");
        assert_eq!(cell("****"), "\\*\\*\\*\\*");
    }

    #[test]
    fn a_code_span_outlasts_the_backticks_inside() {
        assert_eq!(code("q"), "`q`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
    }
}
