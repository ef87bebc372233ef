//! A results file read as untrusted input and written whole: a run.json from someone
//! else may hold numbers no run could measure, histograms that announce gigabytes, or
//! control characters meant for a terminal, and is refused or escaped before anything
//! renders it; claimbench's own is written atomically.

use super::{ResultsError, RunResult, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

/// The largest magnitude of any number in a results file. Nothing claimbench measures
/// comes near it; a hand-edited 1e308 made every axis and loop over it useless (report
/// spun at 100% CPU drawing it).
pub const MAX_FIGURE: f64 = 1e15;

/// The first value in `v` no run of claimbench's could hold, with its dotted path and
/// why: a number beyond [`MAX_FIGURE`], or a stored histogram that does not decode
/// within what its bytes hold (its header may announce gigabytes).
fn first_problem(v: &serde_json::Value, path: &mut String) -> Option<(String, String)> {
    use serde_json::Value;
    let at = |path: &mut String, key: &str, x: &Value| {
        let len = path.len();
        path.push_str(key);
        let found = first_problem(x, path);
        path.truncate(len);
        found
    };
    match v {
        Value::Number(n) => n
            .as_f64()
            .filter(|x| !x.is_finite() || x.abs() > MAX_FIGURE)
            .map(|x| {
                (
                    path.clone(),
                    format!(
                        "{x:e} is beyond ±{MAX_FIGURE:e}, the largest figure a results file may hold (a petabyte, or a million years in µs): refused rather than plotted"
                    ),
                )
            }),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| at(path, &format!("[{i}]"), x)),
        Value::Object(map) => map.iter().find_map(|(k, x)| {
            if k == "hdr_v2_base64"
                && let Value::String(b64) = x
            {
                let decoded = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b64)
                    .map_err(|e| e.to_string())
                    .and_then(|b| crate::metrics::decode_v2(&b).map_err(|e| e.to_string()));
                if let Err(why) = decoded {
                    return Some((format!("{path}.{k}"), why));
                }
                return None;
            }
            at(path, &format!("{}{k}", if path.is_empty() { "" } else { "." }), x)
        }),
        _ => None,
    }
}

/// Writes every control character in `v`'s strings (but tab and line breaks) as its
/// `\u{..}` escape: a results file from elsewhere is shown on terminals and in Markdown,
/// where an escape sequence in a strategy's name would act instead of being read.
fn escape_controls(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) if s.chars().any(is_hostile_control) => {
            *s = s
                .chars()
                .map(|c| match is_hostile_control(c) {
                    true => c.escape_unicode().to_string(),
                    false => c.to_string(),
                })
                .collect();
        }
        Value::Array(items) => items.iter_mut().for_each(escape_controls),
        Value::Object(map) => map.values_mut().for_each(escape_controls),
        _ => {}
    }
}

fn is_hostile_control(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\n' | '\r')
}

impl RunResult {
    pub fn read(path: &Path) -> Result<RunResult, ResultsError> {
        let text =
            crate::input_file::read_text(path, crate::input_file::RESULTS_CAP, "a results file")
                .map_err(|e| ResultsError::Io {
                    path: path.to_path_buf(),
                    reason: std::io::Error::other(e.to_string()),
                })?;
        let mut value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| ResultsError::Parse {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        if let Some((field, why)) = first_problem(&value, &mut String::new()) {
            return Err(ResultsError::Parse {
                path: path.to_path_buf(),
                message: format!("{field}: {why}"),
            });
        }
        escape_controls(&mut value);
        let found = value
            .get("schema_version")
            .and_then(|v| v.as_u64())
            .unwrap_or(0) as u32;
        if found > SCHEMA_VERSION {
            return Err(ResultsError::TooNew {
                path: path.to_path_buf(),
                found,
            });
        }
        let mut r: RunResult = serde_json::from_value(value).map_err(|e| ResultsError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        r.restore_declared();
        Ok(r)
    }

    /// A declared strategy reads back as a name alone (a placeholder that promises
    /// everything); the run recorded each declaration, so its cells get back what their
    /// strategy promised (a duplicate of one that never promised none is no defect).
    pub fn restore_declared(&mut self) {
        let declared = &self.workload.custom_strategies;
        for c in &mut self.cells {
            let own = declared.iter().find(|d| d.name == c.strategy.as_str());
            if let Some(s) = own.and_then(|d| crate::strategy::custom::declare(d).ok()) {
                c.strategy = s;
            }
        }
    }

    /// Writes `run.json` whole into `dir` (see [`super::Folder`]): a reader never sees
    /// half a file, and nothing is written through a link.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, ResultsError> {
        let json = serde_json::to_string_pretty(self).expect("RunResult always serializes");
        super::Folder::open(dir)?.write("run.json", json.as_bytes())
    }
}
