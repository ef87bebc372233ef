//! Bad input, systematically: every workload under `tests/bad-workloads/` is refused
//! with exit code 2 and one line naming the file and what is wrong (its first line,
//! `# expect: …`, says what that line must contain); and random text fed to the workload
//! parser and to the `--db` parsers gives a value or an error, never a panic.

#[path = "common/files.rs"]
mod files;

use claimbench::backend::mssql_target;
use claimbench::backend::target::DbTarget;
use claimbench::workload::Workload;
use files::walk;
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

/// What the refusal's line must contain: each of the file's leading `# expect: …` lines
/// (a field on one, the statement file and its line on the next, say).
fn expectation(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let expected: Vec<String> = text
        .lines()
        .map_while(|l| l.strip_prefix("# expect: "))
        .map(str::to_string)
        .collect();
    assert!(
        !expected.is_empty(),
        "{} starts with `# expect: …`",
        file.display()
    );
    expected
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
        let expectations = expectation(file);
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
            let name_only = [name.to_string()];
            let expected = if args[0] == "validate" {
                &expectations[..]
            } else {
                &name_only[..]
            };
            for e in expected {
                assert_refused(&format!("{name} ({})", args[0]), &out, e, &wire);
            }
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

/// Every flag that takes a server's address or URL, in every command that has it (read
/// from the generated CLI reference), has a refused invocation above whose value carries
/// a password: a new flag or command cannot print one unseen.
#[test]
fn every_flag_that_takes_a_url_has_a_refusal_that_hides_its_password() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let reference = std::fs::read_to_string(root.join("docs/cli-reference.md")).unwrap();
    let tsv = std::fs::read_to_string(root.join("tests/bad-invocations.tsv")).unwrap();
    let mut command = String::new();
    let mut pairs = Vec::new();
    for line in reference.lines() {
        if let Some(rest) = line.strip_prefix("## `claimbench") {
            command = rest.trim_end_matches('`').trim().to_string();
        } else if let Some(rest) = line.strip_prefix("* `--") {
            let flag = rest.split([' ', '`']).next().unwrap_or("");
            let about = line.to_lowercase();
            let takes_url = ["db", "pooler", "pooler-admin"].contains(&flag)
                || about.contains("url")
                || about.contains("address");
            if takes_url && line.contains('<') && !command.is_empty() {
                pairs.push((command.clone(), format!("--{flag}")));
            }
        }
    }
    assert!(pairs.len() >= 5, "{pairs:?}");
    for (command, flag) in &pairs {
        let covered = tsv.lines().any(|l| {
            let args: Vec<&str> = l.split('\t').skip(1).collect();
            args.first() == Some(&command.as_str())
                && args
                    .windows(2)
                    .any(|w| w[0] == flag && w[1].contains("secret"))
        });
        assert!(
            covered,
            "`claimbench {command} {flag}` takes a URL: add a refused invocation to \
             tests/bad-invocations.tsv whose {flag} value has the password `secret`"
        );
    }
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

/// Runs claimbench with `args` in `dir`, killing it if it has not ended within 30 s: a
/// hang is a failure, not a stuck test run.
fn run_bounded(dir: &Path, args: &[&str]) -> std::process::Output {
    // Output to files, not pipes: a full pipe would stall the child and look like a hang.
    let (out, err) = (tempfile::tempfile().unwrap(), tempfile::tempfile().unwrap());
    let mut child = Command::new(env!("CARGO_BIN_EXE_claimbench"))
        .current_dir(dir)
        .args(args)
        .env_remove("DATABASE_URL")
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(err.try_clone().unwrap())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("{args:?} hung for 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let read = |mut f: std::fs::File| {
        use std::io::{Read, Seek};
        let mut v = Vec::new();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut v).unwrap();
        v
    };
    std::process::Output {
        status,
        stdout: read(out),
        stderr: read(err),
    }
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {p:?}"
    );
}

const LAYOUT_WORKLOAD: &str = "name = \"t\"\n[population]\nbacklog = 10\nqueues = [{ name = \"q\" }]\n\
    [layouts.mine]\npostgres = \"mine.sql\"\n\
    [matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"mine\"]\nworkers = [1]\nbatch_sizes = [1]\n[trial]\nduration_s = 1\n";
const CLAIM_WORKLOAD: &str = "name = \"t\"\n[population]\nbacklog = 10\nqueues = [{ name = \"q\" }]\n\
    [strategies.team]\npostgres = \"team.sql\"\nmysql = \"team.mysql.sql\"\n\
    [matrix]\nstrategies = [\"team\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [1]\n[trial]\nduration_s = 1\n";
const GOOD_CLAIM: &str = "UPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (SELECT id FROM jobs_hot LIMIT :batch FOR UPDATE SKIP LOCKED) RETURNING id\n";
const GOOD_MYSQL_CLAIM: &str = "-- step: lock\nSELECT id FROM jobs_hot LIMIT :batch FOR UPDATE SKIP LOCKED\n-- step: claim\nUPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (:ids)\n";

/// Regression: a FIFO given as a workload, layout or run.json blocked forever, and
/// `/dev/zero` (or a link to it) was read to 2 GB before the "outside the folder" check.
/// Every special file, and every file past its cap, is refused at once with one line
/// naming it (and the field that named it), without connecting or writing anything.
#[test]
fn special_and_oversized_files_are_refused_without_blocking() {
    let wire = Tripwire::new();
    let db = format!("postgres://u:secret@127.0.0.1:{}/x", wire.port());
    let mut cases = 0;
    // (what the case is, how to set up the folder, the file given, what the line says)
    type Setup = fn(&Path);
    let workload_cases: Vec<(&str, Setup, &str)> = vec![
        (
            "workload is a FIFO",
            |d| mkfifo(&d.join("w.toml")),
            "a FIFO (named pipe), not a regular file",
        ),
        (
            "workload links to /dev/zero",
            |d| std::os::unix::fs::symlink("/dev/zero", d.join("w.toml")).unwrap(),
            "a device, not a regular file",
        ),
        (
            "workload is a directory",
            |d| std::fs::create_dir(d.join("w.toml")).unwrap(),
            "a directory, not a regular file",
        ),
        (
            "workload is a socket",
            |d| {
                std::mem::forget(std::os::unix::net::UnixListener::bind(d.join("w.toml")).unwrap());
            },
            "a socket, not a regular file",
        ),
        (
            "workload is over its cap",
            |d| std::fs::write(d.join("w.toml"), format!("# {}\n", "x".repeat(5 << 20))).unwrap(),
            "larger than 4 MiB, the most claimbench reads from a workload file",
        ),
        (
            "layout is a FIFO",
            |d| {
                std::fs::write(d.join("w.toml"), LAYOUT_WORKLOAD).unwrap();
                mkfifo(&d.join("mine.sql"));
            },
            "layouts.mine.postgres: cannot read",
        ),
        (
            "layout is a directory",
            |d| {
                std::fs::write(d.join("w.toml"), LAYOUT_WORKLOAD).unwrap();
                std::fs::create_dir(d.join("mine.sql")).unwrap();
            },
            "a directory, not a regular file",
        ),
        (
            "layout links to /dev/zero",
            |d| {
                std::fs::write(d.join("w.toml"), LAYOUT_WORKLOAD).unwrap();
                std::os::unix::fs::symlink("/dev/zero", d.join("mine.sql")).unwrap();
            },
            "layouts.mine.postgres: `mine.sql` is outside the workload's folder",
        ),
        (
            "layout is over its cap",
            |d| {
                std::fs::write(d.join("w.toml"), LAYOUT_WORKLOAD).unwrap();
                std::fs::write(d.join("mine.sql"), "-- x\n".repeat(300_000)).unwrap();
            },
            "larger than 1 MiB, the most claimbench reads from a statement file",
        ),
        (
            "layout is not UTF-8",
            |d| {
                std::fs::write(d.join("w.toml"), LAYOUT_WORKLOAD).unwrap();
                std::fs::write(d.join("mine.sql"), [0xff, 0xfe, 0x00]).unwrap();
            },
            "layouts.mine.postgres: cannot read",
        ),
        (
            "claim is a FIFO",
            |d| {
                std::fs::write(d.join("w.toml"), CLAIM_WORKLOAD).unwrap();
                mkfifo(&d.join("team.sql"));
                std::fs::write(d.join("team.mysql.sql"), GOOD_MYSQL_CLAIM).unwrap();
            },
            "strategies.team.postgres: cannot read",
        ),
        (
            "MySQL claim is a FIFO",
            |d| {
                std::fs::write(d.join("w.toml"), CLAIM_WORKLOAD).unwrap();
                std::fs::write(d.join("team.sql"), GOOD_CLAIM).unwrap();
                mkfifo(&d.join("team.mysql.sql"));
            },
            "strategies.team.mysql: cannot read",
        ),
        (
            "claim links to a device outside",
            |d| {
                std::fs::write(d.join("w.toml"), CLAIM_WORKLOAD).unwrap();
                std::os::unix::fs::symlink("/dev/urandom", d.join("team.sql")).unwrap();
            },
            "`team.sql` is outside the workload's folder",
        ),
        (
            "claim is over its cap",
            |d| {
                std::fs::write(d.join("w.toml"), CLAIM_WORKLOAD).unwrap();
                std::fs::write(
                    d.join("team.sql"),
                    format!("{GOOD_CLAIM}{}", "-- pad\n".repeat(200_000)),
                )
                .unwrap();
            },
            "larger than 1 MiB",
        ),
    ];
    for (what, setup, says) in workload_cases {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path());
        let results = tempfile::tempdir().unwrap();
        let results_arg = results.path().to_str().unwrap();
        for args in [
            vec!["validate", "w.toml"],
            vec![
                "run",
                "w.toml",
                "--db",
                &db,
                "--quiet",
                "--results",
                results_arg,
            ],
        ] {
            let out = run_bounded(dir.path(), &args);
            assert_refused(&format!("{what} ({})", args[0]), &out, says, &wire);
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("w.toml"),
                "{what}: names the workload"
            );
            cases += 1;
        }
        assert_eq!(
            std::fs::read_dir(results.path()).unwrap().count(),
            0,
            "{what}: nothing written"
        );
    }
    // With --allow-outside-files the device is still no file to read.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.toml"), LAYOUT_WORKLOAD).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("mine.sql")).unwrap();
    let out = run_bounded(dir.path(), &["validate", "w.toml", "--allow-outside-files"]);
    assert_refused(
        "a device, allowed outside",
        &out,
        "layouts.mine.postgres: cannot read",
        &wire,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("a device"));
    cases += 1;
    // A results file that is no file.
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("run.json"));
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.json")).unwrap();
    for args in [
        vec!["report", "run.json"],
        vec!["report", "."],
        vec!["recommend", "run.json"],
        vec!["compare", "run.json", "zero.json"],
        vec!["compare", "zero.json", "run.json"],
        vec!["report", "zero.json"],
    ] {
        let out = run_bounded(dir.path(), &args);
        assert_refused(&format!("{args:?}"), &out, "not a regular file", &wire);
        cases += 1;
    }
    assert!(cases >= 35, "{cases}");
}

/// A run.json someone else wrote, mutated: what it announces is held to what it holds
/// (figures beyond any measurement refused, naming the field; a histogram header that
/// lies refused), and what it names stays inside the run's folder and off the terminal
/// (names with `..`, `/` and escape sequences).
#[test]
fn crafted_results_files_are_refused_or_contained() {
    let wire = Tripwire::new();
    let fixture = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json"),
    )
    .unwrap();
    let v: serde_json::Value = serde_json::from_str(&fixture).unwrap();
    let mut cases = 0;
    let mutate = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut m = v.clone();
        f(&mut m);
        serde_json::to_string(&m).unwrap()
    };
    for (field, value) in [
        ("completed_per_s", "1e308"),
        ("claimed_per_s", "-1e300"),
        ("claims_per_s", "1e16"),
        ("measured_s", "1e200"),
    ] {
        let text = mutate(&|m| {
            m["cells"][0]["trials"][0][field] = serde_json::from_str(value).unwrap();
        });
        for cmd in ["report", "recommend"] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("run.json"), &text).unwrap();
            let out = run_bounded(dir.path(), &[cmd, "run.json"]);
            assert_refused(
                &format!("{field}={value} ({cmd})"),
                &out,
                &format!("cells[0].trials[0].{field}: "),
                &wire,
            );
            assert_eq!(
                std::fs::read_dir(dir.path()).unwrap().count(),
                1,
                "nothing written"
            );
            cases += 1;
        }
    }
    // Integers past the bound, in counts and histograms.
    for (path, value) in [
        (&["counts", "jobs_claimed"][..], "100000000000000000000"),
        (&["claim_latency", "p99_us"][..], "18446744073709551615"),
    ] {
        let text = mutate(&|m| {
            m["cells"][0]["trials"][0][path[0]][path[1]] = serde_json::from_str(value).unwrap();
        });
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("run.json"), &text).unwrap();
        let out = run_bounded(dir.path(), &["report", "run.json"]);
        assert_refused(
            &format!("{path:?}"),
            &out,
            &format!("{}.{}: ", path[0], path[1]),
            &wire,
        );
        cases += 1;
    }
    // Names from the file: path separators, `..`, NUL, escape sequences, a screenful.
    for name in [
        "../../escaped",
        "/abs/olute",
        "a\u{0}b",
        "\u{1b}[2J\u{1b}[31mred",
        &"x".repeat(3000),
    ] {
        let text = mutate(&|m| {
            for c in m["cells"].as_array_mut().unwrap() {
                c["strategy"] = serde_json::Value::String(name.to_string());
                c["index_layout"] = serde_json::Value::String(name.to_string());
            }
        });
        let outer = tempfile::tempdir().unwrap();
        let dir = outer.path().join("a").join("run");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("run.json"), &text).unwrap();
        let out = run_bounded(&dir, &["report", "run.json"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
        assert!(
            !stdout.contains('\u{1b}'),
            "{name:?}: an escape sequence reached the terminal"
        );
        // Every file the report wrote is inside the run's folder.
        let mut outside = Vec::new();
        for e in walk(outer.path()) {
            if !e.starts_with(&dir) {
                outside.push(e);
            }
        }
        assert!(
            outside.is_empty(),
            "{name:?}: wrote outside the run folder: {outside:?}"
        );
        for f in walk(&dir) {
            assert!(
                f.file_name().unwrap().len() < 255,
                "{name:?}: {f:?} has a name no filesystem takes"
            );
        }
        if let Ok(md) = std::fs::read_to_string(dir.join("summary.md")) {
            assert!(
                !md.contains('\u{1b}'),
                "{name:?}: an escape reached summary.md"
            );
        }
        cases += 1;
    }
    // A histogram whose header announces a 4 GiB payload: refused, not allocated.
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).unwrap();
    h.record(100).unwrap();
    let mut raw = Vec::new();
    hdrhistogram::serialization::Serializer::serialize(
        &mut hdrhistogram::serialization::V2Serializer::new(),
        &h,
        &mut raw,
    )
    .unwrap();
    raw[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
    let b64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &raw);
    let text = mutate(&|m| {
        for c in m["cells"].as_array_mut().unwrap() {
            for t in c["trials"].as_array_mut().unwrap() {
                t["claim_latency"]["hdr_v2_base64"] = serde_json::Value::String(b64.clone());
            }
        }
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run.json"), &text).unwrap();
    for cmd in ["report", "recommend"] {
        let out = run_bounded(dir.path(), &[cmd, "run.json"]);
        assert_refused(
            cmd,
            &out,
            "claim_latency.hdr_v2_base64: histogram refused: its header announces more counts than it holds",
            &wire,
        );
        cases += 1;
    }
    assert!(cases >= 16, "{cases}");
}

/// `--results` is checked before the workload is read or anything starts: a file there
/// (or a path through one) is refused naming the flag, and nothing is written.
#[test]
fn the_results_folder_is_checked_first() {
    let wire = Tripwire::new();
    let db = format!("postgres://u:secret@127.0.0.1:{}/x", wire.port());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), "x").unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    for results in ["file", "file/sub", "file/sub/deeper"] {
        let r = dir.path().join(results);
        let out = Command::new(env!("CARGO_BIN_EXE_claimbench"))
            .current_dir(root)
            .args(["run", "workloads/smoke.toml", "--db", &db, "--results"])
            .arg(&r)
            .env_remove("DATABASE_URL")
            .output()
            .unwrap();
        assert_refused(results, &out, "--results", &wire);
        assert!(String::from_utf8_lossy(&out.stderr).contains("is not a directory"));
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("file")).unwrap(),
        "x"
    );
}

/// Regression: `report` on a results folder someone else made wrote through the links it
/// held (`summary.tmp`, `plots/`, `hgrm/*.hgrm`), anywhere the user could write; so did
/// `history`'s default `DIR/history`. Each link where claimbench would write is refused,
/// naming it, and nothing lands outside the folder.
#[test]
fn a_results_folder_of_links_is_never_written_through() {
    use std::os::unix::fs::symlink;
    let wire = Tripwire::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run.json");
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    let links: [(&str, &Path); 7] = [
        ("summary.md", &victim),
        ("report.html", &victim),
        ("cells.csv", &victim),
        ("paired.json", &victim),
        ("hgrm", outside.path()),
        ("plots", outside.path()),
        ("run.json.tmp", &victim),
    ];
    for (name, to) in links {
        let run = tempfile::tempdir().unwrap();
        std::fs::copy(&fixture, run.path().join("run.json")).unwrap();
        symlink(to, run.path().join(name)).unwrap();
        let out = run_bounded(run.path(), &["report", "run.json"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if name == "run.json.tmp" || name == "paired.json" {
            // Not written for this run (no pair in it; the old temporary name): left
            // alone, and the report is made.
            assert_eq!(out.status.code(), Some(0), "{stderr}");
        } else if name == "hgrm" {
            // A folder of extras: reported as not written, the report still made.
            assert_eq!(out.status.code(), Some(0), "{stderr}");
            assert!(
                stderr.contains("hgrm") && stderr.contains("symbolic link"),
                "{stderr}"
            );
        } else {
            assert_refused(name, &out, "symbolic link", &wire);
            assert!(stderr.contains(name), "{name}: names the path: {stderr}");
        }
        assert_eq!(
            std::fs::read_dir(outside.path()).unwrap().count(),
            0,
            "{name}: something was written outside the run's folder"
        );
    }
    // compare --report renders into the current run's folder the same way.
    let base = tempfile::tempdir().unwrap();
    std::fs::copy(&fixture, base.path().join("run.json")).unwrap();
    let cur = tempfile::tempdir().unwrap();
    std::fs::copy(&fixture, cur.path().join("run.json")).unwrap();
    symlink(&victim, cur.path().join("report.html")).unwrap();
    let out = run_bounded(
        cur.path(),
        &[
            "compare",
            base.path().join("run.json").to_str().unwrap(),
            "run.json",
            "--report",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // history's default output folder.
    let nights = tempfile::tempdir().unwrap();
    symlink(outside.path(), nights.path().join("history")).unwrap();
    for i in 0..12 {
        let night = nights.path().join(format!("n{i:02}"));
        std::fs::create_dir(&night).unwrap();
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
        v["started_at"] = format!("2026-11-{:02}T00:00:00Z", i + 1).into();
        std::fs::write(night.join("run.json"), v.to_string()).unwrap();
    }
    let out = run_bounded(nights.path(), &["history", "."]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("history") && stderr.contains("symbolic link"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
}

/// `error: …` prints an error and each of its sources (`{:#}`): an error whose own text
/// shows its source's prints that text twice. Held for the error types that wrap
/// another, with a real inner error each.
#[test]
fn no_error_prints_its_source_twice() {
    use claimbench::results::{ResultsError, RunResult};
    use std::error::Error;
    fn printed_once(e: &dyn Error) -> Result<(), String> {
        let mut cur = e;
        while let Some(src) = cur.source() {
            let (outer, inner) = (cur.to_string(), src.to_string());
            if outer.contains(&inner) {
                return Err(format!("`{outer}` shows its source `{inner}`"));
            }
            cur = src;
        }
        Ok(())
    }
    let dir = tempfile::tempdir().unwrap();
    let missing = RunResult::read(&dir.path().join("run.json")).unwrap_err();
    let not_json = {
        let p = dir.path().join("bad.json");
        std::fs::write(&p, "{").unwrap();
        RunResult::read(&p).unwrap_err()
    };
    let hist = claimbench::metrics::HistogramSummary {
        hdr_v2_base64: "!".into(),
        ..Default::default()
    }
    .histogram()
    .unwrap_err();
    let errors: Vec<Box<dyn Error>> = vec![
        Box::new(claimbench::runner::RunError::Results(missing)),
        Box::new(claimbench::runner::RunError::Results(not_json)),
        Box::new(claimbench::runner::RunError::Backend(
            claimbench::backend::BackendError::other("read the clock", "no row"),
        )),
        Box::new(claimbench::report::export::ExportError::Folder(
            ResultsError::TooNew {
                path: dir.path().join("run.json"),
                found: 99,
            },
        )),
        Box::new(claimbench::report::export::ExportError::Histogram(hist)),
        Box::new(Workload::load(&dir.path().join("nothing.toml")).unwrap_err()),
        Box::new(DbTarget::parse("nonsense://x").unwrap_err()),
    ];
    for e in &errors {
        if let Err(twice) = printed_once(e.as_ref()) {
            panic!("{twice}");
        }
    }
}

/// A workload whose declared strategy has only a MySQL form validates (a run with
/// `--db mysql://…` takes it), and says that a run without `--db`, on the embedded
/// PostgreSQL, refuses it; named in `matrix.backends`, nothing is left to say.
#[test]
fn validate_says_what_a_run_without_db_would_refuse() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("team.mysql.sql"),
        "-- step: lock\nSELECT id FROM jobs_hot WHERE status = 0 LIMIT :batch FOR UPDATE SKIP LOCKED\n-- step: claim\nUPDATE jobs_hot SET status = 1, worker_id = :worker_id WHERE id IN (:ids)\n",
    )
    .unwrap();
    let text = "name = \"mysql-only\"\n[population]\nbacklog = 100\nqueues = [{ name = \"q\" }]\n\
         [strategies.team]\nmysql = \"team.mysql.sql\"\npromises = [\"prevents-duplicates\"]\n\
         [matrix]\nstrategies = [\"team\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [2]\nbatch_sizes = [5]\n\
         [trial]\nduration_s = 1\n";
    let validate = |text: &str| {
        std::fs::write(dir.path().join("w.toml"), text).unwrap();
        let out = run_bounded(dir.path(), &["validate", "w.toml"]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let said = validate(text);
    assert!(
        said.contains("note: a run without --db (the embedded PostgreSQL) refuses it: ")
            && said.contains("`team` on postgres: the workload declares it for MySQL only"),
        "{said}"
    );
    let said = validate(&text.replace("[matrix]\n", "[matrix]\nbackends = [\"mysql\"]\n"));
    assert!(!said.contains("note: a run without --db"), "{said}");
}
