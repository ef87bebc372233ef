//! Turns on the SQL Server integration tests (`cfg(claimbench_mssql)`) when
//! CLAIMBENCH_MSSQL_URL is set at build time; without it they are reported as ignored,
//! never as passed.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(claimbench_mssql)");
    println!("cargo::rerun-if-env-changed=CLAIMBENCH_MSSQL_URL");
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var_os("CLAIMBENCH_MSSQL_URL").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=claimbench_mssql");
    }
}
