//! The names claimbench gives its RabbitMQ queues under one schema, the headers a job's
//! message carries, and the one way the control connection reads a queue back: every
//! message delivered and none acknowledged, so that closing the channel puts them all
//! back (AMQP has no peek).

use super::errors::error;
use crate::backend::BackendError;
use futures_util::StreamExt;
use lapin::options::{BasicConsumeOptions, BasicQosOptions, QueueDeclareOptions};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::{Channel, Connection};
use std::time::Duration;

/// A job's id (`j`), queue (`q`), due time (`d`, µs on this host's clock) and attempt
/// (`a`, counted from 0) travel as headers of its message.
pub(super) const ID: &str = "j";
pub(super) const QUEUE: &str = "q";
pub(super) const DUE: &str = "d";
pub(super) const ATTEMPT: &str = "a";

/// The names of claimbench's queues under one schema.
#[derive(Debug, Clone)]
pub(super) struct Names {
    pub jobs: String,
    pub done: String,
    pub dead: String,
    pub effects: String,
    /// An empty queue whose existence says the others are claimbench's: AMQP cannot
    /// read a queue's arguments back, so a description as NATS has is not available.
    pub marker: String,
}

impl Names {
    pub(super) fn new(schema: &str) -> Names {
        let name = |of: &str| format!("{schema}_{of}");
        Names {
            jobs: name("jobs"),
            done: name("done"),
            dead: name("dead"),
            effects: name("effects"),
            marker: name("claimbench"),
        }
    }

    /// The queues that hold data, in the order they are made.
    pub(super) fn data(&self) -> [&str; 4] {
        [&self.jobs, &self.done, &self.dead, &self.effects]
    }
}

/// A header's integer, whichever width the sender gave it.
pub(super) fn int(headers: Option<&FieldTable>, name: &str) -> Option<i64> {
    match headers?.inner().get(name)? {
        AMQPValue::LongLongInt(v) => Some(*v),
        AMQPValue::LongInt(v) => Some(i64::from(*v)),
        AMQPValue::LongUInt(v) => Some(i64::from(*v)),
        AMQPValue::ShortInt(v) => Some(i64::from(*v)),
        AMQPValue::ShortShortInt(v) => Some(i64::from(*v)),
        AMQPValue::ShortShortUInt(v) => Some(i64::from(*v)),
        _ => None,
    }
}

/// A header's text.
pub(super) fn text<'a>(headers: Option<&'a FieldTable>, name: &str) -> Option<&'a [u8]> {
    match headers?.inner().get(name)? {
        AMQPValue::LongString(s) => Some(s.as_bytes()),
        _ => None,
    }
}

pub(super) fn put(h: &mut FieldTable, name: &str, v: AMQPValue) {
    h.insert(ShortString::from(name), v);
}

/// A queue's ready messages and consumers, or `None` when it does not exist. A passive
/// declaration of a missing queue closes its channel, so each look has its own.
pub(super) async fn look(
    conn: &Connection,
    queue: &str,
) -> Result<Option<(u32, u32)>, BackendError> {
    let what = "look up a queue";
    let ch = conn.create_channel().await.map_err(|e| error(what, e))?;
    let passive = QueueDeclareOptions {
        passive: true,
        ..Default::default()
    };
    match ch
        .queue_declare(queue, passive, FieldTable::default())
        .await
    {
        Ok(q) => {
            let _ = ch.close(200, "looked").await;
            Ok(Some((q.message_count(), q.consumer_count())))
        }
        Err(lapin::Error::ProtocolError(e)) if e.get_id() == 404 => Ok(None),
        Err(e) => Err(error(what, e)),
    }
}

/// How long reading a queue back may go without a message before it is given up.
const STALL: Duration = Duration::from_secs(5);

/// Hands the headers of every message of `queue` to `each`, then closes the channel so
/// that the server puts them all back, in order, undelivered.
pub(super) async fn read_all(
    conn: &Connection,
    queue: &str,
    what: &'static str,
    mut each: impl FnMut(Option<&FieldTable>),
) -> Result<(), BackendError> {
    let Some((total, _)) = look(conn, queue).await? else {
        return Err(BackendError::other(
            what,
            format!("the queue {queue} is gone"),
        ));
    };
    if total == 0 {
        return Ok(());
    }
    let ch: Channel = conn.create_channel().await.map_err(|e| error(what, e))?;
    ch.basic_qos(0, BasicQosOptions::default())
        .await
        .map_err(|e| error(what, e))?;
    let mut consumer = ch
        .basic_consume(
            queue,
            "claimbench-reader",
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .map_err(|e| error(what, e))?;
    let mut seen = 0u32;
    while seen < total {
        match tokio::time::timeout(STALL, consumer.next()).await {
            Ok(Some(Ok(d))) => {
                each(d.properties.headers().as_ref());
                seen += 1;
            }
            Ok(Some(Err(e))) => return Err(error(what, e)),
            Ok(None) | Err(_) => {
                return Err(BackendError::other(
                    what,
                    format!("read {seen} of the {total} messages of {queue}"),
                ));
            }
        }
    }
    ch.close(200, "read").await.map_err(|e| error(what, e))?;
    Ok(())
}
