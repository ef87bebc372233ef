//! Which database a run talks to: parsed from `--db`/`DATABASE_URL`, shown only with
//! the password removed.

use super::BackendKind;
use std::str::FromStr;

/// A parsed connection target. `Display` never shows a password: it is what goes into
/// logs, errors and result files.
#[derive(Clone)]
#[allow(clippy::large_enum_variant)] // one or two per run
pub enum DbTarget {
    Postgres(tokio_postgres::Config),
    Mysql(mysql_async::Opts),
    Mssql(super::mssql_target::MssqlTarget),
}

impl DbTarget {
    /// Parses a URL (or an ADO.NET connection string, for SQL Server) and picks the
    /// backend from its scheme.
    pub fn parse(url: &str) -> Result<DbTarget, String> {
        if super::mssql_target::is_ado(url) {
            return super::mssql_target::parse_ado(url).map(DbTarget::Mssql);
        }
        let scheme = url.split_once("://").map(|(s, _)| s).unwrap_or("");
        match scheme {
            "mssql" | "sqlserver" => super::mssql_target::parse_url(url).map(DbTarget::Mssql),
            "postgres" | "postgresql" => tokio_postgres::Config::from_str(url)
                .map(DbTarget::Postgres)
                // The parser's message can echo the URL; keep only its kind.
                .map_err(|e| {
                    format!(
                        "invalid PostgreSQL URL `{}`: {}",
                        redact_url(url),
                        e.to_string().replace(url, "<url>")
                    )
                }),
            "mysql" | "mariadb" => {
                // mysql_async knows only the mysql scheme; MariaDB speaks the same protocol.
                let url = if scheme == "mariadb" {
                    format!("mysql{}", &url["mariadb".len()..])
                } else {
                    url.to_string()
                };
                mysql_async::Opts::from_url(&url)
                    .map(DbTarget::Mysql)
                    .map_err(|e| {
                        format!(
                            "invalid MySQL URL `{}`: {}",
                            redact_url(&url),
                            e.to_string().replace(&url, "<url>")
                        )
                    })
            }
            _ => Err(format!(
                "cannot tell the backend of `{}`; use a postgres://, mysql:// or mssql:// URL (or an ADO.NET connection string for SQL Server)",
                redact_url(url)
            )),
        }
    }

    pub fn kind(&self) -> BackendKind {
        match self {
            DbTarget::Postgres(_) => BackendKind::Postgres,
            DbTarget::Mysql(_) => BackendKind::Mysql,
            DbTarget::Mssql(_) => BackendKind::Mssql,
        }
    }
}

/// Debug shows the redacted form too, so a `{:?}` in a log cannot leak a password.
impl std::fmt::Debug for DbTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DbTarget({self})")
    }
}

impl std::fmt::Display for DbTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbTarget::Postgres(c) => {
                let host = c
                    .get_hosts()
                    .first()
                    .map(|h| match h {
                        tokio_postgres::config::Host::Tcp(s) => s.clone(),
                        tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
                    })
                    .unwrap_or_else(|| "localhost".into());
                let port = c.get_ports().first().copied().unwrap_or(5432);
                let user = c.get_user().unwrap_or("");
                let db = c.get_dbname().unwrap_or(user);
                write!(f, "postgres://{user}@{host}:{port}/{db}")
            }
            DbTarget::Mysql(o) => write!(
                f,
                "mysql://{}@{}:{}/{}",
                o.user().unwrap_or(""),
                o.ip_or_hostname(),
                o.tcp_port(),
                o.db_name().unwrap_or("")
            ),
            DbTarget::Mssql(t) => f.write_str(&t.display),
        }
    }
}

/// Removes the password from `scheme://user:password@host/...`, for messages about a
/// URL that did not parse.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth_end, _) = match rest.find('@') {
        Some(at) if rest[..at].find('/').is_none() => (at, ()),
        _ => return url.to_string(),
    };
    let auth = &rest[..auth_end];
    let user = auth.split_once(':').map(|(u, _)| u).unwrap_or(auth);
    let masked = if auth.contains(':') {
        format!("{user}:***")
    } else {
        user.to_string()
    };
    format!("{scheme}://{masked}{}", &rest[auth_end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_never_shows_the_password() {
        let t = DbTarget::parse("postgres://alice:s3cret@db.example:6543/queue").unwrap();
        let shown = t.to_string();
        assert_eq!(shown, "postgres://alice@db.example:6543/queue");
        assert!(!shown.contains("s3cret"));
    }

    #[test]
    fn mysql_and_mariadb_urls_pick_the_mysql_backend_without_the_password() {
        for url in [
            "mysql://bob:hunter2@10.0.0.5:3307/queue",
            "mariadb://bob:hunter2@10.0.0.5:3307/queue",
        ] {
            let t = DbTarget::parse(url).unwrap();
            assert_eq!(t.kind(), BackendKind::Mysql);
            assert_eq!(t.to_string(), "mysql://bob@10.0.0.5:3307/queue");
            assert!(!format!("{t:?}").contains("hunter2"));
        }
        let e = DbTarget::parse("mysql://bob:hunter2@h:notaport/db").unwrap_err();
        assert!(
            e.contains("invalid MySQL URL") && !e.contains("hunter2"),
            "{e}"
        );
    }

    #[test]
    fn redact_masks_password_only() {
        assert_eq!(redact_url("mysql://u:pw@h/db"), "mysql://u:***@h/db");
        assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact_url("nonsense"), "nonsense");
    }

    #[test]
    fn unknown_scheme_is_a_clear_error_without_secret() {
        let e = DbTarget::parse("redis://u:pw@h:1/0").unwrap_err();
        assert!(
            e.contains("use a postgres://, mysql:// or mssql:// URL"),
            "{e}"
        );
        assert!(!e.contains("pw@"), "{e}");
    }
}
