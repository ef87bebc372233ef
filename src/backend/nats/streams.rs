//! The names claimbench gives its JetStream objects under one schema: a work-queue
//! stream of jobs, three streams of what the ledger needs besides (completions, dead
//! letters, effects), and the durable consumer the workers share.

use async_nats::Subject;

/// The durable consumer every worker fetches from.
pub(super) const CONSUMER: &str = "workers";

/// A stream claimbench made carries this description; any other is not touched.
pub(super) const MARKER: &str = "claimbench";

/// The names of claimbench's streams and subjects under one schema.
#[derive(Debug, Clone)]
pub(super) struct Names {
    pub jobs: String,
    pub done: String,
    pub dead: String,
    pub effects: String,
    /// The same names as the subjects a worker publishes to, made once: a subject
    /// clones without copying, where one built from a name per message would allocate.
    pub to_jobs: Subject,
    pub to_done: Subject,
    pub to_dead: Subject,
    pub to_effects: Subject,
}

impl Names {
    pub(super) fn new(schema: &str) -> Names {
        let name = |of: &str| format!("{schema}_{of}");
        Names {
            jobs: name("jobs"),
            done: name("done"),
            dead: name("dead"),
            effects: name("effects"),
            to_jobs: Subject::from(name("jobs")),
            to_done: Subject::from(name("done")),
            to_dead: Subject::from(name("dead")),
            to_effects: Subject::from(name("effects")),
        }
    }

    /// Where the server says a message ran out of deliveries (the consumer's
    /// `max_deliver`): the dead stream captures it, JetStream's dead-letter subject.
    pub(super) fn max_deliveries(&self) -> String {
        format!(
            "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{}.{CONSUMER}",
            self.jobs
        )
    }

    /// Each stream's name is also its subject (`claimbench_jobs`).
    pub(super) fn all(&self) -> [&str; 4] {
        [&self.jobs, &self.done, &self.dead, &self.effects]
    }
}
