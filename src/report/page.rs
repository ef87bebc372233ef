//! report.html's templates: figures as the page shows them, and the minijinja
//! environment that renders the document's tables and sections (report/document.rs). The markup lives
//! in `src/report/templates/`; values are escaped there, and only the SVG plots and
//! prose claimbench wrote itself are marked safe.

use super::plots::Rendered;
use minijinja::Environment;
use serde::Serialize;
use std::sync::OnceLock;

/// A plot inline, with the sentence on how to read it.
#[derive(Debug, Serialize)]
pub struct Figure {
    pub id: String,
    pub title: String,
    /// Drawn by plotters: markup, not text.
    pub svg: String,
    /// Already HTML ([`prose`]).
    pub how: String,
}

impl Figure {
    pub fn of(p: &Rendered) -> Figure {
        Figure {
            id: p.stem.replace('/', "-"),
            title: p.title.clone(),
            svg: p.svg.clone(),
            how: prose(p.how_to_read),
        }
    }
}

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A sentence written for both Markdown and HTML: escaped, with its `code` spans as
/// `<code>` (a browser would show the backticks).
pub(super) fn prose(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for (i, part) in esc(s).split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str("<code>");
            out.push_str(part);
            out.push_str("</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

/// The shipped templates, loaded once.
fn templates() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        // Text is escaped as the pages always were (& < > "): minijinja's own HTML
        // escaping also turns every "/" and "'" into entities, which reads badly in the
        // page's source and in its snapshot for no gain inside element text.
        env.set_formatter(|out, state, value| match value.as_str() {
            Some(text) if !value.is_safe() => out.write_str(&esc(text)).map_err(Into::into),
            _ => minijinja::escape_formatter(out, state, value),
        });
        for (name, text) in [
            ("macros.html", include_str!("templates/macros.html")),
            ("report.html", include_str!("templates/report.html")),
            ("comparison.html", include_str!("templates/comparison.html")),
        ] {
            env.add_template(name, text)
                .unwrap_or_else(|e| panic!("the shipped template {name} parses: {e}"));
        }
        env
    })
}

/// `name` rendered with `context`. The templates are claimbench's own and every one is
/// rendered by the snapshot tests, so an error here is a bug in claimbench, not input.
pub fn render(name: &str, context: impl Serialize) -> String {
    templates()
        .get_template(name)
        .and_then(|t| t.render(minijinja::value::Serde(context)))
        .unwrap_or_else(|e| panic!("the shipped template {name} renders: {e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::blocks::Section;

    #[test]
    fn prose_shows_code_spans_as_code_and_escapes_the_rest() {
        assert_eq!(
            prose("the cell `recommend` picks for a <b> & c"),
            "the cell <code>recommend</code> picks for a &lt;b&gt; &amp; c"
        );
        assert_eq!(prose("an odd ` tick"), "an odd <code> tick</code>");
    }

    #[test]
    fn values_are_escaped_and_only_figures_are_markup() {
        #[derive(Serialize)]
        struct View {
            baseline: &'static str,
            outcome: &'static str,
            code: u8,
            failures: Vec<()>,
            regressions: Section,
            figures: Vec<Figure>,
        }
        let view = View {
            baseline: "b<",
            outcome: "o",
            code: 0,
            failures: Vec::new(),
            regressions: Section::table("<t>", &["a"], &[vec!["<script>".into()]], 1, "1 < 2"),
            figures: vec![Figure {
                id: "f".into(),
                title: "t".into(),
                svg: "<svg></svg>".into(),
                how: "<code>x</code>".into(),
            }],
        };
        let html = render("comparison.html", &view);
        assert!(
            html.contains("&lt;script&gt;") && !html.contains("<script>"),
            "{html}"
        );
        assert!(
            html.contains("<svg></svg>") && html.contains("<code>x</code>"),
            "{html}"
        );
        assert!(
            html.contains("b&lt;") && html.contains("1 &lt; 2"),
            "{html}"
        );
    }
}
