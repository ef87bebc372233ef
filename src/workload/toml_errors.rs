//! The TOML parser's errors as the rest of validation words them: the dotted field
//! (`population.queues[0].max_workers`) and what is allowed, on one line, instead of a
//! line and column with a Rust type name (`expected i64`).
//!
//! Type errors carry their field through `serde_path_to_error`; errors the parser finds
//! before any field is read (a duplicate key, a syntax error) carry only a position, from
//! which the field is read back out of the text: the key on that line, under the last
//! `[table]` header above it.

/// A refused workload text: the field when one can be named, and the message.
pub(super) struct TomlRefusal {
    pub field: Option<String>,
    pub message: String,
}

/// Deserializes `text`, naming the field of any error.
pub(super) fn parse<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, TomlRefusal> {
    let de = toml::de::Deserializer::parse(text).map_err(|e| positional(text, &e))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        TomlRefusal {
            field: (path != ".").then_some(path),
            message: allowed(inner.message()),
        }
    })
}

/// A `[matrix]` block's table (parsed on its own, after the rest).
pub(super) fn from_value<T: serde::de::DeserializeOwned>(
    v: toml::Value,
) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        (path, allowed(e.into_inner().message()))
    })
}

/// An error the parser found by position: the field from the text around it.
fn positional(text: &str, e: &toml::de::Error) -> TomlRefusal {
    let at = e.span().map(|s| s.start).unwrap_or(0).min(text.len());
    let line_no = text[..at].matches('\n').count() + 1;
    match e.message().trim() {
        "duplicate key" => match blocks_at(text, at) {
            Some(name) => TomlRefusal {
                message: format!(
                    "is given both as a table ([{name}]) and as blocks ([[{name}]]); keep one form"
                ),
                field: Some(name),
            },
            None => TomlRefusal {
                field: field_at(text, at),
                message: "is given twice; keep one".to_string(),
            },
        },
        // A syntax error has no field yet: the line is what a person can find.
        m => TomlRefusal {
            field: None,
            message: format!("TOML syntax error at line {line_no}: {}", allowed(m)),
        },
    }
}

/// The name of the `[[blocks]]` header on the line that holds byte `at`, if it is one.
fn blocks_at(text: &str, at: usize) -> Option<String> {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("").trim();
    let name = line.strip_prefix("[[")?.split("]]").next()?.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// The dotted key whose line holds byte `at`: `table.key`, with the table from the last
/// header above it.
fn field_at(text: &str, at: usize) -> Option<String> {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("").trim();
    if line.starts_with('[') && !line.starts_with("[[") {
        // A table header given twice: the table is the field.
        return Some(line.trim_matches(['[', ']']).trim().to_string());
    }
    let key = line.split_once('=')?.0.trim().trim_matches('"');
    if key.is_empty() || key.starts_with('[') {
        return None;
    }
    let table = text[..start].lines().rev().find_map(|l| {
        let l = l.trim();
        l.starts_with('[')
            .then(|| l.trim_matches(['[', ']']).trim().to_string())
    });
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    })
}

/// serde's wording with Rust's type names put as a person would read them.
fn allowed(message: &str) -> String {
    let m = message.lines().next().unwrap_or("").trim();
    if let Some(rest) = m.strip_prefix("invalid type: integer `")
        && let Some((n, _)) = rest.split_once('`')
        && m.contains("as i128")
    {
        return format!(
            "{n} is out of range; give a whole number up to {}",
            i64::MAX
        );
    }
    let mut out = m.to_string();
    for (rust, person) in [
        ("expected i64", "expected a whole number"),
        (
            "expected u32",
            "expected a whole number from 0 to 4294967295",
        ),
        (
            "expected i32",
            "expected a whole number from -2147483648 to 2147483647",
        ),
        ("expected u64", "expected a whole number >= 0"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
        ("expected a string", "expected text in quotes"),
        ("expected a sequence", "expected a list in [ ]"),
        ("expected a map", "expected a table"),
        ("invalid type: map", "invalid type: table"),
        ("invalid type: sequence", "invalid type: list"),
    ] {
        out = out.replace(rust, person);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct T {
        a: i64,
        t: Option<Inner>,
    }
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        q: Vec<Q>,
        flag: Option<bool>,
    }
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Q {
        n: Option<u32>,
    }

    fn refusal(text: &str) -> (Option<String>, String) {
        let e = parse::<T>(text).unwrap_err();
        (e.field, e.message)
    }

    #[test]
    fn type_errors_name_the_dotted_field_and_what_is_allowed() {
        let (f, m) = refusal("a = \"x\"\n");
        assert_eq!(f.as_deref(), Some("a"));
        assert!(m.contains("expected a whole number"), "{m}");
        let (f, m) = refusal("a = 1\n[t]\nq = [{ n = -1 }]\n");
        assert_eq!(f.as_deref(), Some("t.q[0].n"));
        assert!(m.contains("0 to 4294967295"), "{m}");
        let (f, m) = refusal("a = 99999999999999999999\n");
        assert_eq!(f.as_deref(), Some("a"));
        assert!(m.contains("out of range"), "{m}");
        let (f, m) = refusal("a = 1\n[t]\nq = []\nflag = 3\n");
        assert_eq!(f.as_deref(), Some("t.flag"));
        assert!(m.contains("true or false"), "{m}");
    }

    #[test]
    fn a_syntax_error_names_its_line() {
        let (f, m) = refusal("a = 1\n[t\n");
        assert_eq!(f, None);
        assert!(m.starts_with("TOML syntax error at line 2: "), "{m}");
    }

    #[test]
    fn a_duplicate_key_names_its_table() {
        let (f, m) = refusal("a = 1\n[t]\nq = []\nq = []\n");
        assert_eq!(f.as_deref(), Some("t.q"));
        assert_eq!(m, "is given twice; keep one");
        let (f, _) = refusal("a = 1\na = 2\n");
        assert_eq!(f.as_deref(), Some("a"));
        let (f, m) = refusal("a = 1\n[t]\nq = []\n[t]\nflag = true\n");
        assert_eq!(
            (f.as_deref(), m.as_str()),
            (Some("t"), "is given twice; keep one")
        );
    }
}
