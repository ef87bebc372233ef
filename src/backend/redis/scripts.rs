//! The Lua scripts under `migrations/redis/`, each the shared prelude followed by its
//! own body, and the keys every script is handed. A script runs atomically on the
//! server, which is what a SQL engine's statement gives the other backends: the
//! ownership check and the change it guards cannot be split by another worker.

use crate::statements::migration;
use redis::{Script, ScriptInvocation};
use std::sync::LazyLock;

const PRELUDE: &str = migration!("redis", "prelude.lua");

/// A script's whole text: `prelude.lua`, then `body`.
pub fn text(body: &str) -> String {
    [PRELUDE, body].concat()
}

/// The script of `body`; its SHA-1 is computed once, and the server keeps it after the
/// first EVAL (EVALSHA from then on).
pub fn script(body: &str) -> Script {
    Script::new(&text(body))
}

macro_rules! lua {
    ($path:literal) => {
        LazyLock::new(|| script(migration!("redis", $path)))
    };
}

pub static START: LazyLock<Script> = lua!("lifecycle/start.lua");
pub static HEARTBEAT: LazyLock<Script> = lua!("lifecycle/heartbeat.lua");
pub static EFFECT: LazyLock<Script> = lua!("lifecycle/effect.lua");
pub static COMPLETE: LazyLock<Script> = lua!("lifecycle/complete.lua");
pub static FAIL: LazyLock<Script> = lua!("lifecycle/fail.lua");
pub static RELEASE: LazyLock<Script> = lua!("lifecycle/release.lua");
pub static RESCUE: LazyLock<Script> = lua!("lifecycle/rescue.lua");
pub static PRODUCE: LazyLock<Script> = lua!("lifecycle/produce.lua");
pub static SAMPLE: LazyLock<Script> = lua!("evidence/sample.lua");

/// The consumer group every worker reads through (`GROUP` in the prelude).
pub const GROUP: &str = "workers";

/// The run's keys, all under its prefix (the `--schema`): the eight every script
/// receives in the prelude's order, and the marker that says claimbench made them.
#[derive(Debug)]
pub struct Keys {
    pub jobs: String,
    pub entry: String,
    pub queue: String,
    pub exec: String,
    pub effects: String,
    pub done: String,
    pub dead: String,
    pub next_id: String,
    pub marker: String,
}

impl Keys {
    pub fn new(prefix: &str) -> Keys {
        let k = |name: &str| format!("{prefix}:{name}");
        Keys {
            jobs: k("jobs"),
            entry: k("entry"),
            queue: k("queue"),
            exec: k("exec"),
            effects: k("effects"),
            done: k("done"),
            dead: k("dead"),
            next_id: k("next_id"),
            marker: k(crate::backend::ownership::MARKER_TABLE),
        }
    }

    /// The keys a script reads, in the prelude's order.
    pub fn scripted(&self) -> [&str; 8] {
        [
            &self.jobs,
            &self.entry,
            &self.queue,
            &self.exec,
            &self.effects,
            &self.done,
            &self.dead,
            &self.next_id,
        ]
    }

    /// Every key claimbench writes: what a reset deletes, and nothing else.
    pub fn all(&self) -> [&str; 9] {
        let [a, b, c, d, e, f, g, h] = self.scripted();
        [a, b, c, d, e, f, g, h, &self.marker]
    }

    /// `script` with this run's keys bound; the caller adds its arguments.
    pub fn invoke<'a>(&self, script: &'a Script) -> ScriptInvocation<'a> {
        let mut call = script.prepare_invoke();
        for k in self.scripted() {
            call.key(k);
        }
        call
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prelude names its keys by position: the order here must be the order there.
    #[test]
    fn the_prelude_reads_the_keys_in_the_order_they_are_bound() {
        let names = [
            "JOBS", "ENTRY", "QUEUE", "EXEC", "EFFECTS", "DONE", "DEAD", "NEXT_ID",
        ];
        let assigned: Vec<&str> = PRELUDE
            .lines()
            .filter(|l| l.starts_with("local ") && l.contains("KEYS["))
            .flat_map(|l| {
                l.trim_start_matches("local ")
                    .split('=')
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .map(str::trim)
            })
            .collect();
        assert_eq!(assigned, names);
        let keys = Keys::new("p");
        let suffixes: Vec<String> = keys
            .scripted()
            .iter()
            .map(|k| k.trim_start_matches("p:").replace('_', "").to_uppercase())
            .collect();
        let expected: Vec<String> = names.iter().map(|n| n.replace('_', "")).collect();
        assert_eq!(suffixes, expected);
    }
}
