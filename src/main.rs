//! Entry point: parse the command line, dispatch to the subcommand's module, and map the
//! outcome to an exit code.
//!
//! Exit codes: see `cli::EXIT_CODES` (printed by `--help`, and in docs/cli.md).

use anyhow::Result;
use clap::Parser;
use std::process::ExitCode;

/// println!/eprintln! without the panic when the terminal is gone (SIGHUP): a closed
/// stdout must not cost the partial results or the embedded cluster's cleanup.
macro_rules! outln {
    ($($t:tt)*) => {{ use std::io::Write as _; let _ = writeln!(std::io::stdout(), $($t)*); }};
}
macro_rules! out {
    ($($t:tt)*) => {{ use std::io::Write as _; let _ = write!(std::io::stdout(), $($t)*); }};
}
macro_rules! errln {
    ($($t:tt)*) => {{ use std::io::Write as _; let _ = writeln!(std::io::stderr(), $($t)*); }};
}

mod cli;
mod commands;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return cli::report_parse_error(e),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            errln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(dir) = cli.command.pg_bindir()
        && let Err(e) = claimbench::embedded::use_bindir(dir)
    {
        errln!("error: --pg-bindir {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    match runtime.block_on(dispatch(cli.command)) {
        Ok(code) => code,
        Err(e) => {
            // A refusal may echo a name or value from a workload, a flag or a results
            // file: shown without the control sequences it may hold.
            errln!(
                "error: {}",
                claimbench::markdown::printable(&format!("{e:#}"))
            );
            ExitCode::from(2)
        }
    }
}

/// Each command's flags go to its module, which turns them into its options.
async fn dispatch(cmd: cli::Command) -> Result<ExitCode> {
    use cli::Command;
    use commands::{compare, inspect, parse_slos, prove, run};
    match cmd {
        Command::Run(a) => run::command(a).await,
        Command::Recommend(a) => compare::recommend(&a.run_json, &parse_slos(&a.slo)?),
        Command::Compare(a) => compare::compare(
            [&a.baseline, &a.current],
            a.force,
            &a.threshold,
            [a.markdown, a.json, a.junit],
            a.report,
        ),
        Command::History(a) => compare::history(&a.dir, a.min_change, a.out, a.json),
        Command::Prepare(a) => {
            let files = a.files.files();
            inspect::prepare(
                (&a.workload, files),
                &a.db,
                &a.schema,
                a.layout,
                a.privilege.allow_privileged_sql,
            )
            .await
        }
        Command::Prove(a) => prove::command(a).await,
        Command::Sql(a) => {
            let files = a.files.files();
            inspect::sql(
                a.backend.into(),
                &a.strategy,
                a.batch,
                a.workload.as_deref().map(|w| (w, files)),
            )
        }
        Command::Validate(a) => inspect::validate(&a.workload, a.files.files()),
        Command::Report(a) => inspect::report(&a.run_json),
        Command::Capture(a) => commands::capture::command(a).await,
    }
}
