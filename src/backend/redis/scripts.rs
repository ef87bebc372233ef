//! The Lua scripts under `migrations/redis/`: each is the shared prelude, then its data
//! model's helpers ([`Model`]), then its own body; and the keys every script is handed.
//! A script runs atomically on the server, which is what a SQL engine's statement gives
//! the other backends: the ownership check and the change it guards cannot be split by
//! another worker. The lifecycle is written once against the models' helpers.

use crate::statements::migration;
use redis::{Script, ScriptInvocation};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, LazyLock};

const PRELUDE: &str = migration!("redis", "prelude.lua");

/// Where a run keeps its queue on Redis, chosen by the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// `stream`: one stream read by a consumer group; a claim is a delivery.
    Stream,
    /// `hash-by-due`: versioned records and a sorted set of pending jobs by due time; a
    /// claim is a compare-and-set on the version.
    HashByDue,
}

impl Model {
    pub const ALL: [Model; 2] = [Model::Stream, Model::HashByDue];

    /// The layout that chooses it.
    pub fn layout(self) -> &'static str {
        match self {
            Model::Stream => crate::backend::layouts::STREAM,
            Model::HashByDue => crate::backend::layouts::HASH_BY_DUE,
        }
    }

    pub fn of_layout(layout: &str) -> Option<Model> {
        Model::ALL.into_iter().find(|m| m.layout() == layout)
    }

    fn helpers(self) -> &'static str {
        match self {
            Model::Stream => migration!("redis", "models/stream.lua"),
            Model::HashByDue => migration!("redis", "models/hash-by-due.lua"),
        }
    }

    /// How many of [`Keys::scripted`] its scripts receive.
    fn key_count(self) -> usize {
        match self {
            Model::Stream => 8,
            Model::HashByDue => 10,
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The model the last reset built, shared by the backend and every session it opened.
#[derive(Debug, Clone, Default)]
pub struct CurrentModel(Arc<AtomicU8>);

impl CurrentModel {
    pub fn get(&self) -> Model {
        Model::ALL[usize::from(self.0.load(Ordering::Relaxed))]
    }

    pub fn set(&self, model: Model) {
        self.0.store(model as u8, Ordering::Relaxed);
    }
}

/// The model `strategy` claims on: each Redis technique has its own.
pub fn model_of(strategy: &crate::strategy::Strategy) -> Option<Model> {
    crate::names::broker_layout_of(strategy.as_str()).and_then(Model::of_layout)
}

/// A script's whole text on `model`: `prelude.lua`, the model's helpers, then `body`.
pub fn text(model: Model, body: &str) -> String {
    [PRELUDE, model.helpers(), body].concat()
}

/// The script of `body` on `model`; its SHA-1 is computed once, and the server keeps it
/// after the first EVAL (EVALSHA from then on).
pub fn script(model: Model, body: &str) -> Script {
    Script::new(&text(model, body))
}

/// The lifecycle's scripts on one model.
pub struct Lifecycle {
    pub start: Script,
    pub heartbeat: Script,
    pub effect: Script,
    pub complete: Script,
    pub fail: Script,
    pub release: Script,
    pub rescue: Script,
    pub produce: Script,
    pub sample: Script,
}

impl Lifecycle {
    fn of(model: Model) -> Lifecycle {
        let s = |body| script(model, body);
        Lifecycle {
            start: s(migration!("redis", "lifecycle/start.lua")),
            heartbeat: s(migration!("redis", "lifecycle/heartbeat.lua")),
            effect: s(migration!("redis", "lifecycle/effect.lua")),
            complete: s(migration!("redis", "lifecycle/complete.lua")),
            fail: s(migration!("redis", "lifecycle/fail.lua")),
            release: s(migration!("redis", "lifecycle/release.lua")),
            rescue: s(migration!("redis", "lifecycle/rescue.lua")),
            produce: s(migration!("redis", "lifecycle/produce.lua")),
            sample: s(migration!("redis", "evidence/sample.lua")),
        }
    }
}

static LIFECYCLES: LazyLock<[Lifecycle; 2]> = LazyLock::new(|| Model::ALL.map(Lifecycle::of));

/// The lifecycle's scripts on `model`, built once.
pub fn lifecycle(model: Model) -> &'static Lifecycle {
    &LIFECYCLES[model.index()]
}

/// The consumer group every worker reads through (`GROUP` in the prelude).
pub const GROUP: &str = "workers";

/// The run's keys, all under its prefix (the `--schema`): those the scripts receive in
/// the prelude's order, and the marker that says claimbench made them.
#[derive(Debug)]
pub struct Keys {
    pub jobs: String,
    /// The stream model's job id -> entry id; the other model's pending set.
    pub entry: String,
    pub pending: String,
    pub queue: String,
    pub exec: String,
    pub effects: String,
    pub done: String,
    pub dead: String,
    pub next_id: String,
    pub leases: String,
    pub version: String,
    pub marker: String,
}

impl Keys {
    pub fn new(prefix: &str) -> Keys {
        let k = |name: &str| format!("{prefix}:{name}");
        Keys {
            jobs: k("jobs"),
            entry: k("entry"),
            pending: k("pending"),
            queue: k("queue"),
            exec: k("exec"),
            effects: k("effects"),
            done: k("done"),
            dead: k("dead"),
            next_id: k("next_id"),
            leases: k("leases"),
            version: k("version"),
            marker: k(crate::backend::ownership::MARKER_TABLE),
        }
    }

    /// The keys a script on `model` reads, in the prelude's order (INDEX is the
    /// model's own: [`Keys::entry`] or [`Keys::pending`]).
    pub fn scripted(&self, model: Model) -> [&str; 10] {
        let index = match model {
            Model::Stream => &self.entry,
            Model::HashByDue => &self.pending,
        };
        [
            &self.jobs,
            index,
            &self.queue,
            &self.exec,
            &self.effects,
            &self.done,
            &self.dead,
            &self.next_id,
            &self.leases,
            &self.version,
        ]
    }

    /// Every key claimbench writes, on either model: what a reset deletes, and nothing
    /// else.
    pub fn all(&self) -> [&str; 12] {
        let [
            jobs,
            entry,
            queue,
            exec,
            effects,
            done,
            dead,
            next_id,
            leases,
            version,
        ] = self.scripted(Model::Stream);
        [
            jobs,
            entry,
            &self.pending,
            queue,
            exec,
            effects,
            done,
            dead,
            next_id,
            leases,
            version,
            &self.marker,
        ]
    }

    /// `script` with this run's keys on `model` bound; the caller adds its arguments.
    pub fn invoke<'a>(&self, model: Model, script: &'a Script) -> ScriptInvocation<'a> {
        let mut call = script.prepare_invoke();
        for k in &self.scripted(model)[..model.key_count()] {
            call.key(*k);
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
            "JOBS", "INDEX", "QUEUE", "EXEC", "EFFECTS", "DONE", "DEAD", "NEXT_ID", "LEASES",
            "VERSION",
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
        for model in Model::ALL {
            let suffixes: Vec<String> = keys
                .scripted(model)
                .iter()
                .map(|k| k.trim_start_matches("p:").replace('_', "").to_uppercase())
                .collect();
            let index = match model {
                Model::Stream => "ENTRY",
                Model::HashByDue => "PENDING",
            };
            let expected: Vec<String> = names
                .iter()
                .map(|n| n.replace('_', "").replace("INDEX", index))
                .collect();
            assert_eq!(suffixes, expected, "{model:?}");
        }
    }

    /// What each model's scripts use of the keys is bound: the stream model reads no
    /// key past the eighth, the records' model uses LEASES and VERSION.
    #[test]
    fn each_model_is_handed_the_keys_its_helpers_use() {
        for model in Model::ALL {
            let text = text(model, "");
            let uses_late = ["LEASES", "VERSION"]
                .iter()
                .any(|k| model.helpers().contains(k));
            assert_eq!(uses_late, model.key_count() == 10, "{model:?}");
            assert!(text.starts_with(PRELUDE));
        }
    }
}
