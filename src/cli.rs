//! The command line as the user typed it: clap derive structs holding raw values only.
//! `main` turns them into domain types.

use claimbench::backend::BackendKind;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Exit codes, the same for every command.
pub const EXIT_CODES: &str = "Exit codes:
  0    success
  1    correctness failure (lost jobs, unexpected duplicates, ledger and effects disagree;
       compare: duplicates or lost jobs where the baseline had none; prove: a strategy
       does not behave as expected on the server)
  2    usage or input error (bad workload or flag, unreadable file, unreachable server)
  3    objectives not met (a [[gate]] failed; recommend: no cell meets the SLOs)
  4    performance regression beyond its threshold and outside the noise (compare,
       history; run: a paired block's B against A)
  5    incomparable runs (environments differ without --force, or no cell matches)
  130  interrupted (partial results written, embedded cluster removed)";

/// Load-test and benchmark queue tables with competing consumers.
#[derive(Debug, Parser)]
#[command(name = "claimbench", version, about, long_about = None, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a workload's matrix and write results/<run-id>/ (run.json, summary.md).
    Run(RunArgs),
    /// From a run.json (or its folder): per strategy and layout, the smallest worker
    /// count and batch size that meet every SLO, the knee and the best throughput.
    /// Exits 3 when no cell meets the SLOs.
    Recommend(RecommendArgs),
    /// Compare two runs cell by cell (each a run.json or its results folder): per metric
    /// the change, its 95% interval and a verdict. Exit codes: 0 no regression, 1
    /// duplicates or lost jobs where the baseline had none, 4 a regression beyond its
    /// threshold and outside the noise, 5 incomparable (environments differ, or no cell
    /// matches), 3 a gate of the current run failed, 2 bad input.
    Compare(CompareArgs),
    /// Read a folder of nightly runs (each a results folder with its run.json) in the
    /// order they started, and find where a lasting shift began in each cell's compared
    /// metrics (E-divisive change points, a permutation test at 1 %), with a plot per
    /// metric. Exit codes as compare's: 0 no regression still there, 4 a regression that
    /// is the series' current level, 2 bad input.
    History(HistoryArgs),
    /// Reset and seed the schema as a trial would, then exit: for running pgbench or
    /// EXPLAIN against exactly what claimbench measures.
    Prepare(PrepareArgs),
    /// Check on a server that each strategy locks as the benchmark assumes, before
    /// trusting its numbers: session A holds a claim open while session B claims
    /// (production must skip A's rows at once, waiting must wait for A, naive must take
    /// A's rows again, conditional must change none of them), then A rolls back or
    /// commits and B must see its rows pending again or claimed. Works in a scratch
    /// schema. Exits 1 when a strategy does not behave as expected, naming the server
    /// settings likely to blame.
    Prove(ProveArgs),
    /// Print the exact statements a strategy sends, with their parameters.
    Sql(SqlArgs),
    /// Check a workload file without running it.
    Validate(ValidateArgs),
    /// Re-render summary.md and the report from a run.json (or its folder).
    Report(ReportArgs),
    /// Read a live queue table, read-only, into a workload that reproduces it on a
    /// server claimbench starts: DIR/workload.toml, table.sql (its DDL and indexes, a
    /// seed in its shape, a lifecycle for its state column), claim.sql and capture.md
    /// (rows by state, sizes, arrivals, what could not be read, and the statements that
    /// name the table). PostgreSQL, and MySQL and MariaDB (table.mysql.sql and
    /// claim.mysql.sql).
    Capture(CaptureArgs),
}

/// `--allow-outside-files`, for the commands that read a workload.
#[derive(Debug, Args)]
pub struct FilesArgs {
    /// Let a workload name statement and layout files outside its own folder (by
    /// default such a path is refused: a workload from someone else must not make
    /// claimbench read, and record, a file elsewhere on this machine).
    #[arg(long)]
    pub allow_outside_files: bool,
}

impl FilesArgs {
    pub fn files(&self) -> claimbench::workload::Files {
        match self.allow_outside_files {
            true => claimbench::workload::Files::Anywhere,
            false => claimbench::workload::Files::BesideOnly,
        }
    }
}

impl Command {
    /// `--pg-bindir`, for a command that may start a PostgreSQL of its own: chosen before
    /// the command runs, for every server it starts.
    pub fn pg_bindir(&self) -> Option<&std::path::Path> {
        match self {
            Command::Run(a) => a.server.bindir.pg_bindir.as_deref(),
            Command::Prove(a) => a.server.bindir.pg_bindir.as_deref(),
            _ => None,
        }
    }
}

/// `--allow-privileged-sql`, for the commands that run a workload's SQL on a server.
#[derive(Debug, Args)]
pub struct PrivilegeArgs {
    /// Run a workload's own SQL (declared layouts and claims) on a `--db` server even
    /// though the role it connects as could reach the server's host (a superuser, a
    /// MySQL user with FILE or SUPER, a SQL Server login with sysadmin or CONTROL
    /// SERVER). By default that is refused, before the first
    /// trial: a statement file from someone else must not run commands or read files
    /// there. The embedded servers never need it: their workload SQL runs as a role
    /// (an account, on MariaDB) claimbench creates without those rights.
    #[arg(long)]
    pub allow_privileged_sql: bool,
}

/// `--pooler`, `--pool-mode` and `--pooler-admin`: a pooler in front of the server, for
/// `run` and `prove`.
#[derive(Debug, Args)]
pub struct PoolerArgs {
    /// Your pooler (PgBouncer or another) in front of the --db PostgreSQL server, as
    /// host:port: the workers connect through it with --db's user and database;
    /// the producer, sampler and control connection go to --db directly.
    /// claimbench reads nothing from it but its answers and changes nothing in it.
    #[arg(long, requires = "pool_mode")]
    pub pooler: Option<String>,
    /// Your pooler's mode; without --pooler, --db is the pooler. transaction: the
    /// workers send every statement unnamed and need their role's default
    /// search_path to reach --schema (claimbench says which ALTER ROLE to run; it
    /// runs none), and with --db as the pooler claimbench's own connections go to
    /// the server behind it, found with --pooler-admin; session: as a direct
    /// connection. For `prove` without --db: a PgBouncer claimbench starts in front of
    /// its throw-away PostgreSQL, in this mode.
    #[arg(long, value_parser = ["transaction", "session"])]
    pub pool_mode: Option<String>,
    /// Your pooler's admin console, e.g. postgres://pgbouncer@host:6432/pgbouncer:
    /// claimbench reads its pool size and mode before the first trial and SHOW
    /// STATS and SHOW POOLS during each (the time workers waited for a server
    /// connection). Read only; not recorded in results.
    #[arg(long, requires = "pool_mode", hide_env_values = true)]
    pub pooler_admin: Option<String>,
}

/// What `run` and `prove` share: a workload's files and SQL, the PostgreSQL they may
/// start, and a pooler in front of the server.
#[derive(Debug, Args)]
pub struct ServerArgs {
    #[command(flatten)]
    pub files: FilesArgs,
    #[command(flatten)]
    pub privilege: PrivilegeArgs,
    #[command(flatten)]
    pub bindir: BindirArgs,
    #[command(flatten)]
    pub pooler: PoolerArgs,
}

/// `--pg-bindir`, for the commands that may start a PostgreSQL of their own.
#[derive(Debug, Args)]
pub struct BindirArgs {
    /// PostgreSQL's programs for the servers claimbench starts (a directory holding
    /// initdb and postgres), instead of the first on PATH or the newest under
    /// /usr/lib/postgresql: another version's, to run the same workload on it. Given
    /// here or in the environment, never by a workload (a workload names no program).
    #[arg(long, env = "CLAIMBENCH_PG_BINDIR")]
    pub pg_bindir: Option<PathBuf>,
}

/// `run`'s flags.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workload file.
    #[arg(default_value = "workloads/quickstart.toml")]
    pub workload: PathBuf,
    /// Database URL: postgres://user[:password]@host:port/db,
    /// mysql://user[:password]@host:port/db, mssql://user:password@host:port/db (or
    /// an ADO.NET connection string), redis://[user:password@]host:port[/db],
    /// nats://[user:password@]host:port (JetStream enabled),
    /// amqp://user:password@host:port/vhost (RabbitMQ; %2f is the default vhost). Repeat
    /// it to run each cell on several backends side by side. Without a postgres URL,
    /// claimbench starts a throw-away PostgreSQL cluster when the run needs one, without
    /// a mysql URL a throw-away MariaDB, without a redis URL a throw-away redis-server,
    /// without a nats URL a throw-away nats-server, and removes them afterwards; it
    /// starts no RabbitMQ (a block on rabbitmq needs its URL). A redis URL is also where
    /// a `lock-service` claim takes its leases.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub db: Vec<String>,
    /// Schema (PostgreSQL), database (MySQL), key prefix (Redis, and a lock service's
    /// leases), stream-name prefix (NATS) or queue-name prefix (RabbitMQ) claimbench
    /// creates, fills and drops.
    #[arg(long, default_value = "claimbench")]
    pub schema: String,
    /// Directory that receives one folder per run.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Override the workload's trial.repetitions.
    // `-1` is a bad value, not an unknown flag `-1` (so for every number below).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repetitions: Option<u32>,
    /// No progress bar or per-trial lines; the summary is still printed.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run each trial once, even one the host or the harness disturbed (by default
    /// such a trial runs again once and the second run is reported): for a job with a
    /// fixed time budget, such as a test suite, where its warnings suffice.
    #[arg(long, env = "CLAIMBENCH_NO_RERUN", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_rerun: bool,
    /// At the end print all of summary.md (every section) instead of the screen of
    /// verdict, one line per cell and the first warnings.
    #[arg(long, short)]
    pub verbose: bool,
    /// A service-level objective, e.g. 'claim_p99<=20ms', 'queue_wait_p99<=1s',
    /// 'oldest_pending_max<=2s', 'duplicates==0', 'lost==0', 'completed_per_s>=500'.
    /// Repeatable; replaces the workload's [slo] entry on the same metric.
    #[arg(long)]
    pub slo: Vec<String>,
    /// Threads the workers run on, each a single-threaded runtime that keeps a
    /// worker's queries and its connection on one thread (as pgbench's -j).
    /// Default: one per core.
    #[arg(long, env = "CLAIMBENCH_WORKER_THREADS", allow_negative_numbers = true, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub worker_threads: Option<u16>,
    /// How to restart a --db server for the workload's faults.restart_db_at_s: a
    /// shell command (yours, never the workload file's) that returns once the
    /// server is back, e.g. 'docker restart pg'. The embedded server restarts
    /// itself. Not recorded in results.
    #[arg(long, env = "CLAIMBENCH_RESTART_COMMAND", hide_env_values = true)]
    pub restart_command: Option<String>,
    /// How to fail a --db cluster's primary over for the workload's
    /// faults.failover_at_s: a shell command (yours, never the workload file's) that
    /// returns once a standby has been promoted and takes writes, e.g.
    /// 'patronictl failover --force'. claimbench never moves a primary of a cluster
    /// it did not start on its own. Not recorded in results.
    #[arg(long, env = "CLAIMBENCH_FAILOVER_COMMAND", hide_env_values = true)]
    pub failover_command: Option<String>,
    /// A second embedded PostgreSQL from these programs (another version's bin
    /// directory): every cell runs on both, interleaved as paired rounds (A on the
    /// first server, from --pg-bindir or the machine's; B on this one), and B is
    /// judged against A by the rounds' ratios (exit 4 when it regressed). The
    /// workload runs on postgres alone, on one server per side.
    #[arg(long)]
    pub versus_pg_bindir: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `recommend`'s flags.
#[derive(Debug, Args)]
pub struct RecommendArgs {
    pub run_json: PathBuf,
    /// As for `run`; replaces the run's own objective on the same metric. Without
    /// any: duplicates==0 and lost==0.
    #[arg(long)]
    pub slo: Vec<String>,
}

/// `compare`'s flags.
#[derive(Debug, Args)]
pub struct CompareArgs {
    pub baseline: PathBuf,
    pub current: PathBuf,
    /// Compare even when the environments' fingerprints differ.
    #[arg(long)]
    pub force: bool,
    #[arg(long, help = threshold_help())]
    pub threshold: Vec<String>,
    /// Also write the Markdown report here (e.g. $GITHUB_STEP_SUMMARY).
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Also write the comparison as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also write JUnit XML here (a test case per cell and metric, and per gate).
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Rewrite the current run's report.html with the comparison first and
    /// before/after plots (this run solid, the baseline dashed).
    #[arg(long)]
    pub report: bool,
}

/// `history`'s flags.
#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The folder holding one results folder per night (the runs' --results).
    pub dir: PathBuf,
    /// The smallest relative shift reported (0.05: 5 %).
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    pub min_change: f64,
    /// Where the plots go (default: DIR/history).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write the history (series and shifts) as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// `prepare`'s flags.
#[derive(Debug, Args)]
pub struct PrepareArgs {
    pub workload: PathBuf,
    /// Database URL (postgres://, mysql://, mssql://, redis://, nats:// or amqp://); required, since an embedded cluster
    /// would vanish on exit.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub db: String,
    #[arg(long, default_value = "claimbench")]
    pub schema: String,
    /// Index layout to build (default: the workload's first).
    #[arg(long)]
    pub layout: Option<String>,
    #[command(flatten)]
    pub files: FilesArgs,
    #[command(flatten)]
    pub privilege: PrivilegeArgs,
}

/// `prove`'s flags.
#[derive(Debug, Args)]
pub struct ProveArgs {
    /// Database URL, as for `run`. Without one, a throw-away PostgreSQL.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub db: Option<String>,
    /// Scratch schema (PostgreSQL, SQL Server) or database (MySQL) claimbench
    /// creates and refills for each step.
    #[arg(long, default_value = "claimbench_prove")]
    pub schema: String,
    /// A strategy to prove (repeatable; default: every built-in strategy the server
    /// has a form of, or with --workload every strategy it declares).
    #[arg(long)]
    pub strategy: Vec<String>,
    /// A workload whose [strategies.<name>] declare claims to prove, each judged by
    /// the promises it declares; its SQL runs under the same least-privilege rule as
    /// in `run` (the embedded server's workload role; on --db a role that cannot
    /// reach the host, unless --allow-privileged-sql).
    #[arg(long)]
    pub workload: Option<PathBuf>,
    /// A session setting for both sessions, NAME=VALUE (repeatable), as a
    /// workload's [session.<backend>] gives its workers: e.g. lock_timeout=200ms, or
    /// transaction_isolation=SERIALIZABLE on MySQL.
    #[arg(long)]
    pub set: Vec<String>,
    /// Without --db, the throw-away server to prove on (repeatable): postgres, or
    /// mysql (an embedded MariaDB). Default: postgres, or with --workload every
    /// backend its declared strategies have a form for.
    #[arg(long, value_enum, conflicts_with = "db")]
    pub backend: Vec<BackendArg>,
    /// Generated states a declared claim that names its `model` is held to it on
    /// (beside claims in flight), after the scripted steps; 0 skips the check.
    #[arg(long, default_value_t = 100, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub model_cases: u32,
    #[command(flatten)]
    pub server: ServerArgs,
}

/// `sql`'s flags.
#[derive(Debug, Args)]
pub struct SqlArgs {
    #[arg(long, value_enum, default_value_t = BackendArg::Postgres)]
    pub backend: BackendArg,
    /// A built-in strategy, or one the --workload declares.
    #[arg(long)]
    pub strategy: String,
    #[arg(long, default_value_t = 10, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub batch: u32,
    /// A workload whose [strategies.<name>] declare custom strategies to print.
    #[arg(long)]
    pub workload: Option<PathBuf>,
    #[command(flatten)]
    pub files: FilesArgs,
}

/// `validate`'s flags.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    pub workload: PathBuf,
    #[command(flatten)]
    pub files: FilesArgs,
}

/// `capture`'s flags.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// The server the table is on (postgres://… or mysql://…). Read in one READ ONLY
    /// transaction; nothing is written there, whatever the role may do.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub db: String,
    /// The queue table, as [SCHEMA.]NAME (default: public on PostgreSQL, --db's database
    /// on MySQL and MariaDB).
    #[arg(long)]
    pub table: String,
    /// The folder to write the workload into (made if missing; the four files of its
    /// names are replaced).
    #[arg(long)]
    pub out: PathBuf,
    /// How long to watch the table's inserts for its arrival rate; 0 skips it.
    #[arg(long, default_value_t = 2.0, value_parser = parse_sample_s)]
    pub sample_s: f64,
    /// The column holding a job's state, when it is not named state or status.
    #[arg(long)]
    pub state_column: Option<String>,
    /// The state column's value for a pending job, when its values do not say.
    #[arg(long)]
    pub pending: Option<String>,
    /// The value for a job a worker holds.
    #[arg(long)]
    pub running: Option<String>,
    /// The value for a finished job.
    #[arg(long)]
    pub done: Option<String>,
}

fn parse_sample_s(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=600.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}` is not a number of seconds from 0 to 600")),
    }
}

/// `report`'s flags.
#[derive(Debug, Args)]
pub struct ReportArgs {
    pub run_json: PathBuf,
}

/// clap's error as one line that names the flag and what is allowed (clap prints a
/// block with a usage line and a tip, which for `--repetitions -1` suggested `-- -1`);
/// help and version print as clap has them. Returns the exit code.
pub fn report_parse_error(e: clap::Error) -> std::process::ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return std::process::ExitCode::SUCCESS;
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return std::process::ExitCode::from(2);
        }
        _ => {}
    }
    let rendered = e.render().to_string();
    let first: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .collect();
    let line = first.join(" ");
    let line = line.strip_prefix("error: ").unwrap_or(&line);
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "error: {line}; see --help");
    std::process::ExitCode::from(2)
}

/// A backend as `--backend` names it; `main` turns it into the domain's [`BackendKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    Postgres,
    Mysql,
    Mssql,
    Redis,
    Nats,
    Rabbitmq,
}

impl From<BackendArg> for BackendKind {
    fn from(b: BackendArg) -> BackendKind {
        match b {
            BackendArg::Postgres => BackendKind::Postgres,
            BackendArg::Mysql => BackendKind::Mysql,
            BackendArg::Mssql => BackendKind::Mssql,
            BackendArg::Redis => BackendKind::Redis,
            BackendArg::Nats => BackendKind::Nats,
            BackendArg::Rabbitmq => BackendKind::Rabbitmq,
        }
    }
}

/// `compare --threshold`'s help, its defaults read from the metric catalogue so that a
/// new compared metric is listed without anyone writing it here.
fn threshold_help() -> String {
    let defaults: Vec<String> = claimbench::metric::Metric::compared()
        .filter_map(|e| Some(format!("{} {}", e.name, e.compare_threshold?)))
        .collect();
    format!(
        "Replace a metric's threshold (relative change), e.g. --threshold claim_p99=0.5; \
         beats the current run's workload [thresholds]. Defaults: {}",
        defaults.join(", ")
    )
}

#[cfg(test)]
mod tests {
    /// docs/cli-reference.md is the CLI's own definitions as Markdown, so it cannot
    /// drift from them: `CLAIMBENCH_BLESS=1 cargo test --bin claimbench` rewrites it.
    #[test]
    fn the_cli_reference_is_generated_from_the_definitions() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli-reference.md");
        let generated = clap_markdown::help_markdown::<super::Cli>();
        if std::env::var_os("CLAIMBENCH_BLESS").is_some() {
            std::fs::write(path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == generated,
            "docs/cli-reference.md differs from the CLI's definitions; rewrite it with CLAIMBENCH_BLESS=1 cargo test --bin claimbench"
        );
    }
}
