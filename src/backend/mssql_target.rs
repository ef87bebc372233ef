//! SQL Server connection targets: an `mssql://user:password@host:port/database` URL or an
//! ADO.NET connection string (`Server=tcp:host,1433;Database=...;User Id=...;...`), both
//! turned into a tiberius `Config`, and a password-free form to show.

use percent_encoding::percent_decode_str;
use tiberius::{AuthMethod, Config, EncryptionLevel};

/// A parsed SQL Server target. `display` never holds a password.
#[derive(Clone)]
pub struct MssqlTarget {
    pub config: Config,
    pub display: String,
}

/// Shows the password-free form only: tiberius's own Debug would print the credentials.
impl std::fmt::Debug for MssqlTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MssqlTarget({})", self.display)
    }
}

/// Whether `s` looks like an ADO.NET connection string rather than a URL.
pub fn is_ado(s: &str) -> bool {
    !s.contains("://") && ado_pairs(s).any(|(k, _)| SERVER_KEYS.contains(&k.as_str()))
}

const SERVER_KEYS: [&str; 4] = ["server", "data source", "address", "addr"];
const DATABASE_KEYS: [&str; 2] = ["database", "initial catalog"];
const USER_KEYS: [&str; 3] = ["user id", "uid", "user"];

/// `key=value` pairs of a connection string, keys lower-cased (values as written; only
/// used to name the target, tiberius parses the real thing).
fn ado_pairs(s: &str) -> impl Iterator<Item = (String, String)> + '_ {
    s.split(';').filter_map(|part| {
        let (k, v) = part.split_once('=')?;
        Some((k.trim().to_ascii_lowercase(), v.trim().to_string()))
    })
}

pub fn parse_ado(s: &str) -> Result<MssqlTarget, crate::invalid::Invalid> {
    let config = Config::from_ado_string(s).map_err(|e| {
        format!(
            "invalid SQL Server connection string: {}",
            e.to_string().replace(s, "<connection string>")
        )
    })?;
    let get = |keys: &[&str]| {
        ado_pairs(s)
            .find(|(k, _)| keys.contains(&k.as_str()))
            .map(|(_, v)| v)
            .unwrap_or_default()
    };
    let server = get(&SERVER_KEYS);
    let server = server.trim_start_matches("tcp:").replace(',', ":");
    Ok(MssqlTarget {
        display: format!(
            "mssql://{}@{server}/{}",
            get(&USER_KEYS),
            get(&DATABASE_KEYS)
        ),
        config,
    })
}

/// `mssql://` (or `sqlserver://`) URL. Query parameters: `encrypt` (`true`, the default;
/// `false` encrypts the login only; `off` not at all) and `trust_server_certificate`
/// (`true` accepts a self-signed certificate, as a local container has).
pub fn parse_url(s: &str) -> Result<MssqlTarget, crate::invalid::Invalid> {
    let redacted = crate::redact::redact(s);
    let url =
        url::Url::parse(s).map_err(|e| format!("invalid SQL Server URL `{redacted}`: {e}"))?;
    let host = url
        .host_str()
        .ok_or_else(|| format!("invalid SQL Server URL `{redacted}`: no host"))?
        .to_string();
    let port = url.port().unwrap_or(1433);
    let decode = |x: &str| percent_decode_str(x).decode_utf8_lossy().into_owned();
    let user = decode(url.username());
    let database = decode(url.path().trim_start_matches('/'));
    let mut config = Config::new();
    config.host(&host);
    config.port(port);
    if !database.is_empty() {
        config.database(&database);
    }
    if !user.is_empty() {
        config.authentication(AuthMethod::sql_server(
            &user,
            decode(url.password().unwrap_or("")),
        ));
    }
    config.encryption(EncryptionLevel::Required);
    for (k, v) in url.query_pairs() {
        match (
            k.to_ascii_lowercase().as_str(),
            v.to_ascii_lowercase().as_str(),
        ) {
            ("encrypt", "true" | "yes" | "required" | "strict") => {
                config.encryption(EncryptionLevel::Required)
            }
            ("encrypt", "false" | "no") => config.encryption(EncryptionLevel::Off),
            ("encrypt", "off" | "not_supported") => {
                config.encryption(EncryptionLevel::NotSupported)
            }
            ("trust_server_certificate" | "trustservercertificate", "true" | "yes") => {
                config.trust_cert()
            }
            ("trust_server_certificate" | "trustservercertificate", "false" | "no") => {}
            (k, _) => {
                return Err(crate::invalid!(
                    "invalid SQL Server URL `{redacted}`: unknown or invalid parameter `{k}`; known: encrypt=true|false|off, trust_server_certificate=true|false"
                ));
            }
        }
    }
    Ok(MssqlTarget {
        config,
        display: format!("mssql://{user}@{host}:{port}/{database}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_ado_strings_name_the_server_without_the_password() {
        let t =
            parse_url("mssql://sa:p%40ss;w0rd@db.local:14330/queue?trust_server_certificate=true")
                .unwrap();
        assert_eq!(t.display, "mssql://sa@db.local:14330/queue");
        assert_eq!(t.config.get_addr(), "db.local:14330");
        let ado = "Server=tcp:db.local,1433;Database=queue;User Id=sa;Password=s3cret;TrustServerCertificate=true";
        assert!(is_ado(ado));
        let t = parse_ado(ado).unwrap();
        assert_eq!(t.display, "mssql://sa@db.local:1433/queue");
        assert!(!t.display.contains("s3cret"));
        assert!(!is_ado("postgres://u@h/db"));
    }

    #[test]
    fn bad_parameters_are_named_and_the_password_is_not() {
        let e = parse_url("mssql://sa:s3cret@h/db?encrypt=maybe").unwrap_err();
        assert!(e.contains("`encrypt`") && !e.contains("s3cret"), "{e}");
        let e = parse_url("mssql://sa:s3cret@/db").unwrap_err();
        assert!(!e.contains("s3cret"), "{e}");
    }
}
