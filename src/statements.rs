//! The one way statements reach the backends: files under `migrations/<engine>/`,
//! compiled in with [`migration!`], split into named steps, and filled with the
//! identifiers a statement cannot bind.
//!
//! Nothing here knows an engine. Rust code keeps only transaction control (`BEGIN`,
//! `COMMIT`, `ROLLBACK`) inline; every other statement is in a file, so a reader of
//! `migrations/` sees all the SQL claimbench sends.

/// The text of `migrations/<engine>/<path>`, compiled in: a missing file is a build
/// error, not a run-time one.
macro_rules! migration {
    ($engine:literal, $($path:tt)+) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/migrations/",
            $engine,
            "/",
            $($path)+
        ))
    };
}
pub(crate) use migration;

/// Splits a statement file into its statements. A file holds one statement, or several
/// each introduced by a `-- step: <name>` line; comments before the first step document
/// the file and are not sent.
pub fn sql_steps(file: &str) -> Vec<(&str, &str)> {
    let mut steps = Vec::new();
    let mut rest = file;
    if !file.contains("-- step: ") {
        return vec![("claim", file.trim())];
    }
    while let Some(start) = rest.find("-- step: ") {
        let after = &rest[start + "-- step: ".len()..];
        let name_end = after.find('\n').unwrap_or(after.len());
        let name = after[..name_end].trim();
        let body = &after[name_end..];
        let end = body.find("-- step: ").unwrap_or(body.len());
        steps.push((name, body[..end].trim()));
        rest = &body[end..];
    }
    steps
}

/// One named step of a shipped statement file. Shipped files are fixed at build time
/// and each engine's tests ask for every step it sends ([`missing_steps`]), so a missing
/// step is a bug in claimbench, never in the user's input.
pub fn step<'a>(file: &'a str, name: &str) -> &'a str {
    sql_steps(file)
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, sql)| sql)
        .unwrap_or_else(|| panic!("statement file lacks step `{name}`"))
}

/// The step names of `wanted` that `file` lacks: each engine's unit tests call it on the
/// files it reads by step, so [`step`] cannot panic at run time.
pub fn missing_steps(file: &str, wanted: &[&str]) -> Vec<String> {
    let have: Vec<&str> = sql_steps(file).into_iter().map(|(n, _)| n).collect();
    wanted
        .iter()
        .filter(|w| !have.contains(w))
        .map(|w| w.to_string())
        .collect()
}

/// `sql` with each `{name}` replaced by its value, on statement lines only: a comment
/// line that names a placeholder (to document it) keeps it, so a value of several lines
/// cannot turn its tail into statement text. Values are identifiers the caller has
/// already quoted for its engine (or numbers claimbench chose): a statement binds every
/// value that can be bound, and only names it cannot bind come through here.
pub fn fill(sql: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(sql.len());
    for (i, line) in sql.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.trim_start().starts_with("--") {
            out.push_str(line);
            continue;
        }
        let mut line = line.to_string();
        for (name, value) in values {
            line = line.replace(&format!("{{{name}}}"), value);
        }
        out.push_str(&line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_split_on_markers_and_keep_their_comments() {
        let steps = sql_steps("-- doc\n-- step: a\nSELECT 1\n-- step: b\n-- $1 x\nSELECT 2\n");
        assert_eq!(steps, vec![("a", "SELECT 1"), ("b", "-- $1 x\nSELECT 2")]);
        assert_eq!(
            sql_steps("-- doc\nSELECT 3\n"),
            vec![("claim", "-- doc\nSELECT 3")]
        );
        assert_eq!(step("-- step: a\nSELECT 1\n", "a"), "SELECT 1");
        assert_eq!(
            missing_steps("-- step: a\nSELECT 1\n", &["a", "b"]),
            vec!["b".to_string()]
        );
    }

    #[test]
    #[should_panic(expected = "lacks step `b`")]
    fn a_missing_step_is_a_bug_that_names_the_step() {
        step("-- step: a\nSELECT 1\n", "b");
    }

    #[test]
    fn fill_replaces_every_named_placeholder() {
        assert_eq!(
            fill(
                "DROP SCHEMA {schema}; CREATE SCHEMA {schema}",
                &[("schema", "\"s\"")]
            ),
            "DROP SCHEMA \"s\"; CREATE SCHEMA \"s\""
        );
        assert_eq!(fill("SELECT {n}", &[]), "SELECT {n}");
        assert_eq!(
            fill(
                "-- {s} is a statement\nEXPLAIN {s}",
                &[("s", "SELECT 1\nFROM t")]
            ),
            "-- {s} is a statement\nEXPLAIN SELECT 1\nFROM t"
        );
    }
}
