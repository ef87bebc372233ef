//! One way to show a connection string without its password, for every form claimbench
//! accepts or prints: URLs (`postgres://u:pw@h/db`, `?password=` in the query), libpq
//! key/value strings (`host=h user=u password='p w'`) and ADO.NET strings
//! (`Server=h;User Id=u;Password={p;w}`). Messages and result files show only what
//! [`redact`] returns; parsed targets show a form built from their fields, which never
//! holds a password.
//!
//! When the end of a password cannot be told (an unterminated quote, a form it does not
//! know), everything after `password=` is masked: showing too little is the safe error.

/// What replaces a password.
pub const MASK: &str = "***";

/// `s` with every password masked.
pub fn redact(s: &str) -> String {
    let s = if s.contains("://") {
        redact_userinfo(s)
    } else {
        redact_bare_userinfo(s)
    };
    redact_keys(&s)
}

/// `user:password@host:port` without a scheme (an address where a URL's userinfo was
/// pasted): everything between the first `:` and the last `@` is masked. A string
/// with a space before the `@` is text, not an address, and stays.
fn redact_bare_userinfo(s: &str) -> String {
    let Some(at) = s.rfind('@') else {
        return s.to_string();
    };
    let userinfo = &s[..at];
    match userinfo.split_once(':') {
        Some((user, _)) if !userinfo.contains(char::is_whitespace) => {
            format!("{user}:{MASK}{}", &s[at..])
        }
        _ => s.to_string(),
    }
}

/// Removes the password from `scheme://user:password@host/...`. The `url` crate splits
/// the userinfo at the last `@` of the authority, as every driver does, so a password
/// holding `@`, `/` or `:` is masked whole; a string it cannot parse is masked from the
/// scheme to that last `@` (user kept).
fn redact_userinfo(url: &str) -> String {
    if !ambiguous_userinfo(url)
        && let Ok(mut u) = url::Url::parse(url)
        && u.password().is_some()
        && u.set_password(Some(MASK)).is_ok()
    {
        return u.to_string();
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some(at) = rest.rfind('@') else {
        return url.to_string();
    };
    let user = rest[..at].split(':').next().unwrap_or("");
    if !rest[..at].contains(':') {
        return url.to_string();
    }
    format!("{scheme}://{user}:{MASK}{}", &rest[at..])
}

/// Keys whose value is a secret, in any of the forms: libpq's `sslpassword` (the
/// client key's passphrase) is one too.
const SECRET_KEYS: [&str; 6] = [
    "password",
    "pwd",
    "pass",
    "sslpassword",
    "passphrase",
    "secret",
];

/// Masks the value of every `password=`/`pwd=` key: quoted values (`'…'` with `\'` or
/// `''` inside, `"…"`, `{…}`) to their closing quote, others to the next `;`, `&` or
/// `#`, or to the next ` key=`; an unterminated quote to the end.
fn redact_keys(s: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let Some((_, value_at)) = next_secret(&lower, i) else {
            break;
        };
        out.push_str(&s[i..value_at]);
        out.push_str(MASK);
        i = value_end(s, value_at);
    }
    out.push_str(&s[i..]);
    out
}

/// The next `key=` with a secret key at or after `from`, as (key start, value start).
fn next_secret(lower: &str, from: usize) -> Option<(usize, usize)> {
    let b = lower.as_bytes();
    let mut best: Option<(usize, usize)> = None;
    for key in SECRET_KEYS {
        let mut at = from;
        while let Some(k) = lower[at..].find(key).map(|k| k + at) {
            at = k + key.len();
            // A whole key: not the tail of a longer word (`no_password`, `bypass`).
            let before_ok = k == 0 || !(b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_');
            let mut v = at;
            while v < b.len() && b[v] == b' ' {
                v += 1;
            }
            if before_ok && v < b.len() && b[v] == b'=' {
                v += 1;
                while v < b.len() && b[v] == b' ' {
                    v += 1;
                }
                if best.is_none_or(|(s, _)| k < s) {
                    best = Some((k, v));
                }
                break;
            }
        }
    }
    best
}

/// Where the value starting at `at` ends (the index of the first byte after it).
fn value_end(s: &str, at: usize) -> usize {
    let b = s.as_bytes();
    match b.get(at) {
        Some(&q @ (b'\'' | b'"')) => {
            let mut i = at + 1;
            while i < b.len() {
                if b[i] == b'\\' && q == b'\'' {
                    i += 2;
                    continue;
                }
                if b[i] == q {
                    if b.get(i + 1) == Some(&q) {
                        i += 2;
                        continue;
                    }
                    return i + 1;
                }
                i += 1;
            }
            s.len()
        }
        Some(b'{') => s[at..].find('}').map_or(s.len(), |e| at + e + 1),
        _ => {
            let mut i = at;
            while i < b.len() {
                if matches!(b[i], b';' | b'&' | b'#') || (b[i] == b' ' && starts_key(&s[i..])) {
                    return i;
                }
                i += 1;
            }
            s.len()
        }
    }
}

/// Whether `rest` (starting at a space) goes on with ` key=`: the next pair of a
/// key/value string.
fn starts_key(rest: &str) -> bool {
    let t = rest.trim_start();
    let key_len = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    key_len > 0 && t[key_len..].trim_start().starts_with('=')
}

/// Whether an `@` follows the end of the authority: `user:pa/ss@host` reads as host
/// `user`, path `/ss@host`, so the password would end up in the host or database name.
pub fn ambiguous_userinfo(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    match rest.find(['/', '?', '#']) {
        Some(end) => rest[end..].contains('@'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Passwords people have: separators of every form, quotes, spaces, unicode.
    const ODD_PASSWORDS: [&str; 14] = [
        "s3cret",
        "p@ss",
        "p/ss",
        "p%ss",
        "p#ss",
        "p?ss",
        "p;ss",
        "p=ss",
        "p'ss",
        "p\"ss",
        "p ss",
        "pässwörd",
        "p&ss",
        "p:s@s/w",
    ];

    #[test]
    fn every_form_hides_every_odd_password() {
        for pw in ODD_PASSWORDS {
            let enc = url::form_urlencoded::byte_serialize(pw.as_bytes()).collect::<String>();
            let libpq = format!("'{}'", pw.replace('\\', "\\\\").replace('\'', "\\'"));
            let ado = format!("\"{}\"", pw.replace('"', "\"\""));
            for s in [
                format!("postgres://alice:{enc}@db:5432/q"),
                format!("postgres://alice:{pw}@db:5432/q"),
                format!("mysql://alice:{enc}@db/q"),
                format!("postgres://alice@db/q?sslmode=disable&password={enc}"),
                format!("host=db user=alice password={libpq} dbname=q"),
                format!("host=db password = {libpq}"),
                format!("Server=tcp:db,1433;User Id=sa;Password={ado};Database=q"),
                format!("Server=db;PWD={{{}}};", pw.replace('}', "}}")),
            ] {
                let shown = redact(&s);
                assert!(!shown.contains(pw), "{s:?} -> {shown:?}");
                assert!(!shown.contains(&enc), "{s:?} -> {shown:?}");
                assert!(shown.contains(MASK), "{s:?} -> {shown:?}");
            }
        }
    }

    #[test]
    fn an_address_with_userinfo_and_no_scheme_is_masked() {
        assert_eq!(redact("u:Secret@host:1"), "u:***@host:1");
        assert_eq!(redact("u:Se@cr:et@host:1"), "u:***@host:1");
        assert_eq!(redact("host:6432"), "host:6432");
        assert_eq!(redact("u@host:1"), "u@host:1");
        assert_eq!(redact("see a:b @ c"), "see a:b @ c");
    }

    #[test]
    fn what_is_not_a_password_stays() {
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact("host=h user=u dbname=q password=x port=5"),
            "host=h user=u dbname=q password=*** port=5"
        );
        assert_eq!(
            redact("Server=h;Pwd=x;Database=q"),
            "Server=h;Pwd=***;Database=q"
        );
        assert_eq!(redact("bypass=1 no_password=2"), "bypass=1 no_password=2");
        // Regression: libpq's key passphrase was echoed.
        assert_eq!(
            redact("host=h sslpassword=hunter2 user=u"),
            "host=h sslpassword=*** user=u"
        );
        assert_eq!(
            redact("postgres://u@h/db?sslmode=require&sslpassword=hunter2"),
            "postgres://u@h/db?sslmode=require&sslpassword=***"
        );
        assert_eq!(redact("nonsense"), "nonsense");
        // An unterminated quote: everything after it.
        assert_eq!(redact("password='abc def"), "password=***");
    }
}
