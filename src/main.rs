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
    let files = if cli.allow_outside_files {
        claimbench::workload::Files::Anywhere
    } else {
        claimbench::workload::Files::BesideOnly
    };
    let privileged = cli.allow_privileged_sql;
    if let Some(dir) = &cli.pg_bindir
        && let Err(e) = claimbench::embedded::use_bindir(dir)
    {
        errln!("error: --pg-bindir {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    match runtime.block_on(dispatch(cli.command, files, privileged)) {
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

async fn dispatch(
    cmd: cli::Command,
    files: claimbench::workload::Files,
    allow_privileged_sql: bool,
) -> Result<ExitCode> {
    use cli::Command;
    use commands::{compare, inspect, parse_slos, prove, run};
    match cmd {
        Command::Run {
            workload,
            db,
            schema,
            results,
            repetitions,
            quiet,
            verbose,
            slo,
            worker_threads,
            restart_command,
            failover_command,
            pooler,
            pool_mode,
            pooler_admin,
            versus_pg_bindir,
        } => {
            let flags = run::RunFlags {
                results_dir: results,
                repetitions,
                quiet,
                verbose,
                slos: parse_slos(&slo)?,
                worker_threads: worker_threads.map(usize::from),
                restart_command,
                failover_command,
                allow_privileged_sql,
                pooler: commands::pooler::flags(pooler, pool_mode, pooler_admin)?,
                versus_pg_bindir,
            };
            run::run(&workload, files, db, &schema, flags).await
        }
        Command::Recommend { run_json, slo } => compare::recommend(&run_json, &parse_slos(&slo)?),
        Command::Compare {
            baseline,
            current,
            force,
            threshold,
            markdown,
            json,
            junit,
            report,
        } => compare::compare(
            [&baseline, &current],
            force,
            &threshold,
            [markdown, json, junit],
            report,
        ),
        Command::History {
            dir,
            min_change,
            out,
            json,
        } => compare::history(&dir, min_change, out, json),
        Command::Prepare {
            workload,
            db,
            schema,
            layout,
        } => {
            inspect::prepare(
                (&workload, files),
                &db,
                &schema,
                layout,
                allow_privileged_sql,
            )
            .await
        }
        Command::Prove {
            db,
            schema,
            strategy,
            set,
            workload,
            pool_mode,
            pooler,
            pooler_admin,
            backend,
            model_cases,
        } => {
            let pooler = commands::pooler::flags(pooler, pool_mode, pooler_admin)?;
            let backends: Vec<_> = backend
                .into_iter()
                .map(claimbench::backend_kind::BackendKind::from)
                .collect();
            let declared = match &workload {
                Some(w) => Some(claimbench::workload::Workload::load_with(w, files)?),
                None => None,
            };
            let asked = prove::Asked {
                strategies: &strategy,
                set: &set,
                declared: declared.as_ref(),
                allow_privileged_sql,
                backends: &backends,
                model_cases,
            };
            prove::prove(db.as_deref(), &schema, asked, pooler).await
        }
        Command::Sql {
            backend,
            strategy,
            batch,
            workload,
        } => inspect::sql(
            backend.into(),
            &strategy,
            batch,
            workload.as_deref().map(|w| (w, files)),
        ),
        Command::Validate { workload } => inspect::validate(&workload, files),
        Command::Report { run_json } => inspect::report(&run_json),
    }
}
