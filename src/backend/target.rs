//! Which database a run talks to: parsed from `--db`/`DATABASE_URL`, shown only with
//! the password removed.

use super::BackendKind;
use crate::redact::{ambiguous_userinfo, redact};
use std::str::FromStr;

/// A parsed connection target. `Display` never shows a password: it is what goes into
/// logs, errors and result files.
#[derive(Clone)]
#[allow(clippy::large_enum_variant)] // one or two per run
pub enum DbTarget {
    Postgres(tokio_postgres::Config),
    Mysql(mysql_async::Opts),
    /// The nodes of one multi-primary cluster (Galera), written as one URL with a
    /// host list: `mysql://user@h1:3306,h2:3306,h3:3306/db`.
    MysqlCluster(Vec<mysql_async::Opts>),
    Mssql(super::mssql_target::MssqlTarget),
    Redis(super::redis::RedisTarget),
    Nats(super::nats::NatsTarget),
    Rabbitmq(super::rabbitmq::RabbitTarget),
}

impl DbTarget {
    /// Parses a URL (or an ADO.NET connection string, for SQL Server) and picks the
    /// backend from its scheme.
    pub fn parse(url: &str) -> Result<DbTarget, TargetError> {
        if super::mssql_target::is_ado(url) {
            return super::mssql_target::parse_ado(url)
                .map(DbTarget::Mssql)
                .map_err(|e| TargetError::SqlServer(e.into()));
        }
        if is_libpq_key_value(url) {
            // `host=h user=u password='p w' dbname=q`, as libpq and psql take it.
            return tokio_postgres::Config::from_str(url)
                .map(DbTarget::Postgres)
                .map_err(|e| TargetError::Invalid {
                    backend: BackendKind::Postgres,
                    shown: redact(url),
                    reason: redact(&e.to_string().replace(url, "<connection string>")),
                });
        }
        let scheme = url.split_once("://").map(|(s, _)| s).unwrap_or("");
        if ambiguous_userinfo(url) {
            return Err(TargetError::Ambiguous { shown: redact(url) });
        }
        // A parser's message can echo the URL: keep only its kind, never the text.
        let invalid = |backend, e: &dyn std::fmt::Display, raw: &str| TargetError::Invalid {
            backend,
            shown: redact(url),
            reason: e.to_string().replace(raw, "<url>"),
        };
        match BackendKind::from_url_scheme(scheme) {
            Some(BackendKind::Redis) => super::redis::RedisTarget::parse(url)
                .map(DbTarget::Redis)
                .map_err(|e| invalid(BackendKind::Redis, &e, url)),
            Some(BackendKind::Nats) => super::nats::NatsTarget::parse(url)
                .map(DbTarget::Nats)
                .map_err(|e| invalid(BackendKind::Nats, &e, url)),
            Some(BackendKind::Rabbitmq) => super::rabbitmq::RabbitTarget::parse(url)
                .map(DbTarget::Rabbitmq)
                .map_err(|e| invalid(BackendKind::Rabbitmq, &e, url)),
            Some(BackendKind::Mssql) => super::mssql_target::parse_url(url)
                .map(DbTarget::Mssql)
                .map_err(|e| TargetError::SqlServer(e.into())),
            // tokio-postgres splits the userinfo at the first `@`; the `url` crate, like
            // every other driver, at the last, and re-encodes a password's `@`, `/` and
            // `:` so tokio-postgres reads them back whole.
            // An empty entry in a host list (`h1:5432,/db`) would be tried as localhost
            // after the rest: refused here, before anything connects.
            Some(BackendKind::Postgres) if matches!(node_urls(url), Some(Err(_))) => {
                Err(TargetError::Invalid {
                    backend: BackendKind::Postgres,
                    shown: redact(url),
                    reason: EMPTY_HOST.into(),
                })
            }
            Some(BackendKind::Postgres) => tokio_postgres::Config::from_str(
                url::Url::parse(url).as_ref().map_or(url, url::Url::as_str),
            )
            .map(DbTarget::Postgres)
            .map_err(|e| invalid(BackendKind::Postgres, &e, url)),
            Some(BackendKind::Mysql) => {
                // mysql_async knows only the mysql scheme; MariaDB speaks the same protocol.
                let url = format!("mysql{}", &url[scheme.len()..]);
                let parse = |one: &str| {
                    mysql_async::Opts::from_url(one)
                        .map_err(|e| invalid(BackendKind::Mysql, &e, one))
                };
                match node_urls(&url) {
                    None => parse(&url).map(DbTarget::Mysql),
                    Some(Err(reason)) => Err(TargetError::Invalid {
                        backend: BackendKind::Mysql,
                        shown: redact(&url),
                        reason: reason.into(),
                    }),
                    Some(Ok(nodes)) => nodes
                        .iter()
                        .map(|u| parse(u))
                        .collect::<Result<Vec<_>, _>>()
                        .map(DbTarget::MysqlCluster),
                }
            }
            None => Err(TargetError::UnknownScheme { shown: redact(url) }),
        }
    }

    pub fn kind(&self) -> BackendKind {
        match self {
            DbTarget::Postgres(_) => BackendKind::Postgres,
            DbTarget::Mysql(_) | DbTarget::MysqlCluster(_) => BackendKind::Mysql,
            DbTarget::Mssql(_) => BackendKind::Mssql,
            DbTarget::Redis(_) => BackendKind::Redis,
            DbTarget::Nats(_) => BackendKind::Nats,
            DbTarget::Rabbitmq(_) => BackendKind::Rabbitmq,
        }
    }
}

/// Why a `--db` value is not a target. Every variant shows the value with its password
/// masked, and none keeps the parser's error as a source: its text can hold the URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error(
        "cannot tell the backend of `{shown}`; use a postgres://, mysql://, mssql://, redis://, nats:// or amqp:// URL (or a libpq key/value string for PostgreSQL, an ADO.NET connection string for SQL Server)"
    )]
    UnknownScheme { shown: String },
    #[error(
        "cannot read `{shown}`: an `@` comes after the first `/`, `?` or `#`, so the password (or user) holds one of those; percent-encode it (`/` as %2F, `?` as %3F, `#` as %23)"
    )]
    Ambiguous { shown: String },
    #[error("invalid {backend} URL `{shown}`: {reason}")]
    Invalid {
        backend: BackendKind,
        shown: String,
        reason: String,
    },
    /// SQL Server URLs and ADO.NET strings: the message names the bad key.
    #[error("{0}")]
    SqlServer(String),
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
            // Every host of a multi-host target (a primary and its standbys, tried in
            // turn for one that takes writes with target_session_attrs=read-write).
            DbTarget::Postgres(c) => {
                let ports = c.get_ports();
                let port = |i: usize| ports.get(i).or(ports.first()).copied().unwrap_or(5432);
                let mut hosts: Vec<String> = c
                    .get_hosts()
                    .iter()
                    .enumerate()
                    .map(|(i, h)| match h {
                        tokio_postgres::config::Host::Tcp(s) => format!("{s}:{}", port(i)),
                        tokio_postgres::config::Host::Unix(p) => {
                            format!("{}:{}", p.display(), port(i))
                        }
                    })
                    .collect();
                if hosts.is_empty() {
                    hosts.push(format!("localhost:{}", port(0)));
                }
                let user = c.get_user().unwrap_or("");
                let db = c.get_dbname().unwrap_or(user);
                write!(f, "postgres://{user}@{}/{db}", hosts.join(","))?;
                if c.get_target_session_attrs()
                    == tokio_postgres::config::TargetSessionAttrs::ReadWrite
                {
                    f.write_str("?target_session_attrs=read-write")?;
                }
                Ok(())
            }
            DbTarget::Mysql(o) => write!(
                f,
                "mysql://{}@{}:{}/{}",
                o.user().unwrap_or(""),
                o.ip_or_hostname(),
                o.tcp_port(),
                o.db_name().unwrap_or("")
            ),
            DbTarget::MysqlCluster(nodes) => {
                let hosts: Vec<String> = nodes
                    .iter()
                    .map(|o| format!("{}:{}", o.ip_or_hostname(), o.tcp_port()))
                    .collect();
                let o = &nodes[0];
                write!(
                    f,
                    "mysql://{}@{}/{}",
                    o.user().unwrap_or(""),
                    hosts.join(","),
                    o.db_name().unwrap_or("")
                )
            }
            DbTarget::Mssql(t) => f.write_str(&t.display),
            DbTarget::Redis(t) => f.write_str(t.display()),
            DbTarget::Nats(t) => f.write_str(t.display()),
            DbTarget::Rabbitmq(t) => f.write_str(t.display()),
        }
    }
}

const EMPTY_HOST: &str = "the host list has an empty host; write host:port,host:port";

/// A MySQL URL with a host list (`mysql://u:p@h1:1,h2:2/db?x=y`) as one URL per host,
/// each with the same user, password, database and options; `None` for one host. The
/// reason of an `Err` never holds the URL (it can hold a password).
fn node_urls(url: &str) -> Option<Result<Vec<String>, crate::invalid::Invalid>> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((u, h)) => (format!("{u}@"), h),
        None => (String::new(), authority),
    };
    if !hosts.contains(',') {
        return None;
    }
    let list: Vec<&str> = hosts.split(',').map(str::trim).collect();
    if list.iter().any(|h| h.is_empty()) {
        return Some(Err(EMPTY_HOST.into()));
    }
    Some(Ok(list
        .iter()
        .map(|h| format!("{scheme}://{userinfo}{h}{tail}"))
        .collect()))
}

/// Whether `s` is a libpq key/value connection string: no scheme, and it opens with
/// one of libpq's keys and `=` (SQL Server's ADO.NET strings are told apart first).
fn is_libpq_key_value(s: &str) -> bool {
    const KEYS: [&str; 12] = [
        "host",
        "hostaddr",
        "port",
        "user",
        "password",
        "dbname",
        "sslmode",
        "connect_timeout",
        "application_name",
        "options",
        "target_session_attrs",
        "channel_binding",
    ];
    if s.contains("://") {
        return false;
    }
    let t = s.trim_start();
    let key_len = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    KEYS.contains(&&t[..key_len]) && t[key_len..].trim_start().starts_with('=')
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

    /// A Galera cluster's nodes in one MySQL URL: one target per node with the same
    /// login and database, every host shown and never the password; an empty entry is
    /// refused without echoing the password.
    #[test]
    fn a_mysql_host_list_is_one_target_per_node() {
        let t = DbTarget::parse(
            "mariadb://root:pw%40x@10.0.0.1:3306,10.0.0.2:3307/q?prefer_socket=false",
        )
        .unwrap();
        let DbTarget::MysqlCluster(nodes) = &t else {
            panic!("{t}");
        };
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[1].tcp_port(), 3307);
        assert_eq!(nodes[1].pass(), Some("pw@x"));
        assert_eq!(nodes[1].db_name(), Some("q"));
        assert_eq!(t.to_string(), "mysql://root@10.0.0.1:3306,10.0.0.2:3307/q");
        assert_eq!(t.kind(), BackendKind::Mysql);
        let e = DbTarget::parse("mysql://root:s3cret@h1:1,,h2:2/q").unwrap_err();
        assert!(!e.to_string().contains("s3cret"), "{e}");
        assert!(e.to_string().contains("empty host"), "{e}");
        // One host stays a plain target.
        assert!(matches!(
            DbTarget::parse("mysql://root@h1:3306/q").unwrap(),
            DbTarget::Mysql(_)
        ));
    }

    /// A primary and its standbys in one target, as libpq and tokio-postgres take them:
    /// every host is shown (never the password), and read-write is kept in sight.
    #[test]
    fn a_multi_host_target_shows_every_host_and_its_session_attrs() {
        for url in [
            "postgres://alice:s3cret@db1:5432,db2:5433/queue?target_session_attrs=read-write",
            "host=db1,db2 port=5432,5433 user=alice password=s3cret dbname=queue target_session_attrs=read-write",
        ] {
            let t = DbTarget::parse(url).unwrap();
            assert_eq!(
                t.to_string(),
                "postgres://alice@db1:5432,db2:5433/queue?target_session_attrs=read-write"
            );
            assert!(!format!("{t:?}").contains("s3cret"));
        }
        let one_port = DbTarget::parse("host=db1,db2 port=6000 user=a dbname=q").unwrap();
        assert_eq!(one_port.to_string(), "postgres://a@db1:6000,db2:6000/q");
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
        let e = DbTarget::parse("mysql://bob:hunter2@h:notaport/db")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("invalid mysql URL") && !e.contains("hunter2"),
            "{e}"
        );
        assert!(!e.contains("pw"), "{e}");
    }

    #[test]
    fn a_postgres_password_may_hold_url_separators() {
        // Regression: `postgres://u:p@ss@host/db` made `ss@host` the host, which then
        // showed in every message and result file.
        let t = DbTarget::parse("postgres://alice:p@ss%2Fw:rd@db.example:6543/queue").unwrap();
        assert_eq!(t.to_string(), "postgres://alice@db.example:6543/queue");
        let DbTarget::Postgres(c) = t else {
            panic!("postgres")
        };
        assert_eq!(c.get_password(), Some(&b"p@ss/w:rd"[..]));
        // A raw `/` cannot be told from the path: refused, password masked.
        let e = DbTarget::parse("postgres://alice:p@ss/w:rd@db.example/queue")
            .unwrap_err()
            .to_string();
        assert!(e.contains("percent-encode") && !e.contains("w:rd"), "{e}");
    }

    #[test]
    fn redact_masks_password_only() {
        assert_eq!(redact("mysql://u:pw@h/db"), "mysql://u:***@h/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
    }

    #[test]
    fn a_libpq_key_value_string_is_a_postgres_target_shown_without_its_password() {
        // Regression: this form was refused with the whole string, password and all,
        // in the "cannot tell the backend" error.
        let t = DbTarget::parse("host=db.example port=6543 user=alice password='p w;@' dbname=q")
            .unwrap();
        assert_eq!(t.kind(), BackendKind::Postgres);
        assert_eq!(t.to_string(), "postgres://alice@db.example:6543/q");
        let DbTarget::Postgres(c) = &t else {
            panic!("postgres")
        };
        assert_eq!(c.get_password(), Some(&b"p w;@"[..]));
        let e = DbTarget::parse("host=db port=notaport password=hunter2")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("invalid postgres URL") && !e.contains("hunter2"),
            "{e}"
        );
        let e = DbTarget::parse("hots=db password=hunter2")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot tell the backend") && !e.contains("hunter2"),
            "{e}"
        );
    }

    #[test]
    fn redact_masks_passwords_with_separators_whole() {
        // Regression: `u:p@ss@host` was cut at the first `@` and printed `ss`.
        for (url, secret) in [
            ("postgres://u:p@ss@host/db", "ss@"),
            ("postgres://u:p/ss@host/db", "p/ss"),
            ("postgres://u:p%40ss@host/db", "p%40ss"),
            ("mysql://u:p:ss@host/db", "p:ss"),
            ("mysql://u:p;ss'@host/db", "p;ss"),
            ("redis://u:pässwörd@host/0", "ssw"),
            ("weird://u:p@ss@h@st", "ss@"),
        ] {
            let r = redact(url);
            assert!(!r.contains(secret), "{url} -> {r}");
            assert!(r.contains("u:***@"), "{url} -> {r}");
        }
        assert_eq!(redact("nonsense"), "nonsense");
    }

    #[test]
    fn unknown_scheme_is_a_clear_error_without_secret() {
        let e = DbTarget::parse("oracle://u:pw@h:1/0")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("use a postgres://, mysql://, mssql://, redis://, nats:// or amqp:// URL"),
            "{e}"
        );
        assert!(!e.contains("pw@"), "{e}");
    }
}
