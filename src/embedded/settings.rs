//! Which `[embedded.settings]` a workload may give the throw-away PostgreSQL, decided
//! twice: by the text alone when the workload is validated (before any process starts),
//! and against the server's own list (`postgres --describe-config`) before it starts.
//!
//! A workload file may come from someone else, so it tunes the engine and nothing more:
//! claimbench owns where the server listens and who may connect, which files it reads
//! and writes, which libraries it loads, what it connects to, and every command it runs
//! (`archive_command` and the like are shell commands the server would run). Each value
//! reaches the server as one `-c name=value` argument, never through a shell.

/// Why a name or value is refused; the caller adds the file and the field.
pub fn check(name: &str, value: &str) -> Result<(), crate::invalid::Invalid> {
    if !is_parameter_name(name) {
        return Err(crate::invalid!(
            "`{}` is not a PostgreSQL setting name; use letters, digits and _ (with one . for an extension's setting)",
            name.escape_debug()
        ));
    }
    if let Some(why) = owned_by_claimbench(name, None) {
        return Err(why.into());
    }
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(crate::invalid!(
            "the value holds the control character {:?}; give printable text",
            c
        ));
    }
    Ok(())
}

/// `work_mem`, or one dotted prefix for an extension's own (`auto_explain.log_analyze`).
fn is_parameter_name(name: &str) -> bool {
    let word = |w: &str| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && w.len() <= 63
    };
    match name.split_once('.') {
        Some((prefix, rest)) => word(prefix) && word(rest),
        None => word(name),
    }
}

/// Groups of `--describe-config` whose settings are claimbench's, not the workload's.
const OWNED_GROUPS: [&str; 6] = [
    "File Locations",
    "Connections and Authentication",
    "Client Connection Defaults / Shared Library Preloading",
    "Replication / Standby Servers",
    "Reporting and Logging / Where to Log",
    "Write-Ahead Log / Archiv",
];

/// Whether claimbench keeps `name` for itself, and why. `group` is the server's own
/// category for it, where known; without it the name alone decides, by the suffixes
/// every such setting of PostgreSQL 10–17 carries.
pub fn owned_by_claimbench(name: &str, group: Option<&str>) -> Option<String> {
    let name = name.to_ascii_lowercase();
    let by_name = name.ends_with("_command")
        || name.ends_with("_file")
        || name.ends_with("_directory")
        || name.ends_with("_libraries")
        || name.ends_with("_library")
        || name.ends_with("_library_path")
        || name.ends_with("_conninfo")
        || [
            "listen_addresses",
            "port",
            "data_directory",
            "logging_collector",
        ]
        .contains(&name.as_str());
    let by_group = group.is_some_and(|g| OWNED_GROUPS.iter().any(|o| g.starts_with(o)));
    (by_name || by_group).then(|| {
        format!(
            "`{name}` is claimbench's to set: a workload tunes the engine, but where the server listens, which files, libraries and commands it uses, and what it connects to stay with claimbench"
        )
    })
}

/// The settings a server binary knows, with their groups: `postgres --describe-config`
/// prints one tab-separated line per setting (name, context, group, ...).
pub fn parse_describe_config(text: &str) -> Vec<(String, String)> {
    described(text)
        .map(|(name, group, _)| (name, group))
        .collect()
}

/// Each line of `postgres --describe-config` as (name, group, type).
fn described(text: &str) -> impl Iterator<Item = (String, String, String)> + '_ {
    text.lines().filter_map(|l| {
        let mut f = l.split('\t');
        let name = f.next()?.to_string();
        let group = f.nth(1)?.to_string();
        Some((name, group, f.next()?.to_string()))
    })
}

/// The type `--describe-config` gives `name` (`BOOLEAN`, `INTEGER`, `REAL`, `ENUM`,
/// `STRING`), where it lists it.
pub fn setting_type(text: &str, name: &str) -> Option<String> {
    described(text)
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, _, t)| t)
}

/// Whether `value` has the form a setting of type `kind` takes, so that a value of the
/// wrong type is refused before the server starts (the server would refuse it only
/// then, or take a prefix of it): a boolean is on/off, true/false, yes/no or 1/0; a
/// number is digits with an optional sign, fraction, exponent and unit (`64MB`, `5s`);
/// an enum is a word (`read committed`). Strings take any printable text.
pub fn check_value_type(kind: &str, value: &str) -> Result<(), crate::invalid::Invalid> {
    let v = value.trim();
    let ok = match kind {
        "BOOLEAN" => matches!(
            v.to_ascii_lowercase().as_str(),
            "on" | "off" | "true" | "false" | "yes" | "no" | "1" | "0"
        ),
        "INTEGER" | "REAL" => {
            let number_end = v
                .char_indices()
                .find(|&(i, c)| {
                    !(c.is_ascii_digit()
                        || c == '.'
                        || ((c == '-' || c == '+') && (i == 0 || v[..i].ends_with(['e', 'E'])))
                        || ((c == 'e' || c == 'E')
                            && i > 0
                            && !v[i + 1..].starts_with(char::is_alphabetic)))
                })
                .map_or(v.len(), |(i, _)| i);
            let unit = v[number_end..].trim_start();
            number_end > 0
                && v[..number_end].chars().any(|c| c.is_ascii_digit())
                && unit.chars().all(|c| c.is_ascii_alphabetic())
        }
        "ENUM" => {
            !v.is_empty()
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' '))
        }
        _ => true,
    };
    if ok {
        return Ok(());
    }
    let form = match kind {
        "BOOLEAN" => "on or off",
        "INTEGER" | "REAL" => "a number, with its unit where it has one (64MB, 5s)",
        _ => "one of its words",
    };
    Err(crate::invalid!(
        "`{}` is not a value of this {} setting; give {form}",
        value.escape_debug(),
        kind.to_ascii_lowercase()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_of_the_wrong_type_is_refused_by_its_type() {
        for (kind, value) in [
            ("INTEGER", "64MB"),
            ("INTEGER", "64 MB"),
            ("INTEGER", "-1"),
            ("REAL", "1.5e-3"),
            ("REAL", "4"),
            ("BOOLEAN", "OFF"),
            ("ENUM", "read committed"),
            ("STRING", "$(anything)"),
        ] {
            assert_eq!(check_value_type(kind, value), Ok(()), "{kind} {value}");
        }
        for (kind, value) in [
            ("INTEGER", "4MB$(touch /tmp/x)"),
            ("INTEGER", "MB"),
            ("INTEGER", "1;2"),
            ("REAL", "e5"),
            ("BOOLEAN", "maybe"),
            ("ENUM", "on; drop"),
        ] {
            let e = check_value_type(kind, value).unwrap_err();
            assert!(e.contains("is not a value of this"), "{kind} {value}: {e}");
        }
        let text = "work_mem\tuser\tResource Usage / Memory\tINTEGER\t0\t64\t2147483647\tx\n";
        assert_eq!(setting_type(text, "work_mem").as_deref(), Some("INTEGER"));
        assert_eq!(setting_type(text, "other"), None);
    }

    #[test]
    fn tuning_settings_pass_and_the_rest_is_refused_with_a_reason() {
        for (name, value) in [
            ("work_mem", "64MB"),
            ("enable_seqscan", "off"),
            ("auto_explain.log_analyze", "on"),
            ("log_min_duration_statement", "0"),
            ("search_path", "a, b"),
            ("application_name", "$(touch /tmp/x)"),
        ] {
            assert!(check(name, value).is_ok(), "{name}={value}");
        }
        for (name, value, why) in [
            ("work_mem -c port", "1", "not a PostgreSQL setting name"),
            ("a.b.c", "1", "not a PostgreSQL setting name"),
            ("", "1", "not a PostgreSQL setting name"),
            ("archive_command", "true", "claimbench's to set"),
            ("restore_command", "x", "claimbench's to set"),
            ("ssl_passphrase_command", "x", "claimbench's to set"),
            ("shared_preload_libraries", "x", "claimbench's to set"),
            ("dynamic_library_path", "/tmp", "claimbench's to set"),
            ("hba_file", "/etc/passwd", "claimbench's to set"),
            ("log_directory", "/", "claimbench's to set"),
            ("listen_addresses", "*", "claimbench's to set"),
            ("PORT", "1", "claimbench's to set"),
            ("primary_conninfo", "host=x", "claimbench's to set"),
            ("work_mem", "1\nport=2", "control character"),
            ("work_mem", "1\u{7}", "control character"),
        ] {
            let e = check(name, value).unwrap_err();
            assert!(e.contains(why), "{name}={value:?}: {e}");
        }
    }

    #[test]
    fn the_servers_own_groups_catch_what_the_name_does_not() {
        assert!(owned_by_claimbench("authentication_timeout", None).is_none());
        assert!(
            owned_by_claimbench(
                "authentication_timeout",
                Some("Connections and Authentication / Authentication")
            )
            .is_some()
        );
        assert!(owned_by_claimbench("work_mem", Some("Resource Usage / Memory")).is_none());
        let parsed = parse_describe_config(
            "work_mem\tuser\tResource Usage / Memory\tINTEGER\t4096\n\
             archive_mode\tpostmaster\tWrite-Ahead Log / Archiving\tENUM\toff\n",
        );
        assert_eq!(
            parsed[0],
            ("work_mem".into(), "Resource Usage / Memory".into())
        );
        assert!(owned_by_claimbench(&parsed[1].0, Some(&parsed[1].1)).is_some());
    }
}
