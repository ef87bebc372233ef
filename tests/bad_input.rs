//! Bad input, systematically: every workload under `tests/bad-workloads/` is refused
//! with exit code 2 and one line naming the file and what is wrong (its first line,
//! `# expect: …`, says what that line must contain); and random text fed to the workload
//! parser and to the `--db` parsers gives a value or an error, never a panic.

use claimbench::backend::mssql_target;
use claimbench::backend::target::DbTarget;
use claimbench::workload::Workload;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad-workloads");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

fn expectation(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix("# expect: "))
        .unwrap_or_else(|| panic!("{} starts with `# expect: …`", file.display()))
        .to_string()
}

/// A loopback port that nothing but this test listens on: every connection claimbench
/// attempts is counted (and closed at once, so the attempt fails fast instead of
/// waiting for a server), so "refused before connecting" is checked, not assumed.
struct Tripwire {
    port: u16,
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Tripwire {
    fn new() -> Tripwire {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = connections.clone();
        std::thread::spawn(move || {
            for c in l.incoming() {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                drop(c);
            }
        });
        Tripwire { port, connections }
    }

    fn port(&self) -> u16 {
        self.port
    }

    fn untouched(&self) -> bool {
        self.connections.load(std::sync::atomic::Ordering::SeqCst) == 0
    }
}

/// What every refusal must look like: exit 2, one stderr line with `expected` in it, no
/// panic, no password, nothing written, no connection attempted.
fn assert_refused(what: &str, out: &std::process::Output, expected: &str, wire: &Tripwire) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr.trim();
    assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
    assert_eq!(line.lines().count(), 1, "{what}: one line, got: {stderr}");
    assert!(!line.contains("panicked"), "{what}: {line}");
    assert!(
        line.contains(expected),
        "{what}: expected `{expected}` in: {line}"
    );
    assert!(!line.contains("secret"), "{what}: no password: {line}");
    assert!(wire.untouched(), "{what}: a connection was attempted");
}

#[test]
fn every_malformed_workload_is_refused_with_one_line_naming_file_and_field() {
    let files = corpus();
    assert!(files.len() >= 100, "the corpus has {} files", files.len());
    let wire = Tripwire::new();
    let db = format!("postgres://u:secret@127.0.0.1:{}/x", wire.port());
    for file in &files {
        let expected = expectation(file);
        let name = file.file_name().unwrap().to_str().unwrap();
        // `validate`, and `run` (which must refuse before it connects anywhere).
        for args in [vec!["validate"], vec!["run", "--db", &db, "--quiet"]] {
            let results = tempfile::tempdir().unwrap();
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_claimbench"));
            cmd.arg(args[0]).arg(file).args(&args[1..]);
            if args[0] == "run" {
                cmd.arg("--results").arg(results.path());
            }
            let out = cmd.env_remove("DATABASE_URL").output().unwrap();
            // `run` checks the --db URLs against the workload's backends first, so one
            // file (a layout MySQL cannot build, with a postgres URL) gets that line.
            let expected = if args[0] == "validate" {
                &expected
            } else {
                name
            };
            assert_refused(&format!("{name} ({})", args[0]), &out, expected, &wire);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(name), "{name}: names the file: {stderr}");
            assert_eq!(
                std::fs::read_dir(results.path()).unwrap().count(),
                0,
                "{name}: nothing written"
            );
        }
    }
}

/// Every bad invocation of `tests/bad-invocations.tsv` is refused like a bad workload:
/// exit 2, one line naming the flag or value and what is allowed, no password, no
/// results, no connection.
#[test]
fn every_bad_invocation_is_refused_with_one_line_naming_the_flag() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("tests/bad-invocations.tsv")).unwrap();
    let wire = Tripwire::new();
    let port = wire.port().to_string();
    let mut count = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let mut fields = line.split('\t');
        let expected = fields.next().unwrap();
        let args: Vec<String> = fields.map(|a| a.replace("PORT", &port)).collect();
        let results = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_claimbench"));
        cmd.current_dir(root).args(&args);
        if args[0] == "run" {
            cmd.arg("--results").arg(results.path());
        }
        let out = cmd.env_remove("DATABASE_URL").output().unwrap();
        assert_refused(
            &args.join(" "),
            &out,
            &expected.replace("PORT", &port),
            &wire,
        );
        assert_eq!(std::fs::read_dir(results.path()).unwrap().count(), 0);
        count += 1;
    }
    assert!(count >= 40, "{count} invocations");
}

/// A valid workload to mutate: every table the parser knows, one value each.
const GOOD: &str = r#"name = "t"
seed = 1
[population]
backlog = 100
payload_bytes = 32
queues = [{ name = "q", weight = 1, max_workers = 2 }]
[producers]
rate_per_s = 10
[handler]
failure_rate = 0.1
max_attempts = 3
duration = { dist = "uniform", min_ms = 1, max_ms = 2 }
[worker]
empty_backoff_ms = 2
[faults]
lease_s = 5
[[matrix]]
name = "a"
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [1, 4]
batch_sizes = [1]
[trial]
warmup_s = 0.5
duration_s = 1
repetitions = 1
[slo]
claim_p99 = "20ms"
[[gate]]
check = "lost==0"
[thresholds]
throughput = 0.3
"#;

/// Values a person (or a typo) might put anywhere.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| format!("{v:?}")),
        Just("nan".to_string()),
        Just("-inf".to_string()),
        Just("1e308".to_string()),
        Just("\"\"".to_string()),
        "\"[a-z0-9<=>. -]{0,12}\"",
        Just("[]".to_string()),
        Just("[0]".to_string()),
        Just("{}".to_string()),
        Just("true".to_string()),
        Just("[[1]]".to_string()),
    ]
}

/// Exercises what a valid workload is then used for, so a panic there counts too.
fn use_it(w: &Workload) {
    let _ = w.trial_count();
    let _ = w.index_layouts();
    for i in 0..w.matrices.len() {
        let _ = w.phase(i);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_text_never_panics_the_parser(text in "\\PC{0,300}") {
        if let Ok(w) = Workload::parse(Path::new("random.toml"), &text) {
            use_it(&w);
        }
    }

    #[test]
    fn any_value_in_any_field_is_a_workload_or_an_error(
        line in 0usize..40,
        v in value(),
    ) {
        let lines: Vec<&str> = GOOD.lines().collect();
        let mut text = String::new();
        for (i, l) in lines.iter().enumerate() {
            match l.split_once(" = ") {
                Some((key, _)) if i == line % lines.len() => {
                    text.push_str(&format!("{key} = {v}\n"));
                }
                _ => {
                    text.push_str(l);
                    text.push('\n');
                }
            }
        }
        match Workload::parse(Path::new("mutated.toml"), &text) {
            Ok(w) => use_it(&w),
            Err(e) => prop_assert!(e.to_string().contains("mutated.toml"), "{e}"),
        }
    }

    #[test]
    fn random_db_urls_never_panic(
        scheme in prop_oneof![
            Just("postgres"), Just("postgresql"), Just("mysql"), Just("mssql"),
            Just("sqlserver"), Just("http"), Just(""),
        ],
        rest in "\\PC{0,60}",
    ) {
        let url = format!("{scheme}://u:secret@{rest}");
        if let Ok(t) = DbTarget::parse(&url) {
            // What a target prints goes to logs and run.json: never a password.
            let shown = t.to_string();
            prop_assert!(!shown.contains("secret") || rest.contains("secret"), "{shown}");
        }
        let _ = DbTarget::parse(&rest);
        let _ = mssql_target::parse_ado(&rest);
        let _ = mssql_target::parse_url(&url);
    }

    #[test]
    fn ado_strings_with_any_values_never_panic(
        server in "\\PC{0,20}",
        port in any::<i64>(),
        extra in "[A-Za-z ]{0,10}=\\PC{0,10}",
    ) {
        let s = format!("Server={server},{port};User Id=sa;Password=secret;{extra}");
        // An error names what is wrong; it never echoes the password.
        if let Err(e) = mssql_target::parse_ado(&s) {
            prop_assert!(!e.contains("secret") || server.contains("secret"), "{}", e);
        }
    }
}
