//! The connections a backend opened, by role: the faults' connection kill ends the
//! workers' (a NATS server closes another client's connection only from its system
//! account, so claimbench, which opened them, drops their sockets itself; the client
//! library reconnects, as it does when a server ends a connection).

use super::errors::error;
use crate::backend::BackendError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub(super) struct Clients {
    next: AtomicU64,
    open: Mutex<Vec<(u64, String, async_nats::Client)>>,
}

/// A session's entry: removed when the session is dropped, so that a closed session's
/// connection is not kept open by the list.
pub(super) struct Registered {
    id: u64,
    pub(super) clients: Arc<Clients>,
}

impl Clients {
    pub(super) fn add(self: &Arc<Self>, role: &str, client: async_nats::Client) -> Registered {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((id, role.to_string(), client));
        Registered {
            id,
            clients: self.clone(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, String, async_nats::Client)>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Drops the socket of every connection opened as `role`; returns how many.
    pub(super) async fn cut(&self, role: &str) -> Result<u64, BackendError> {
        let of_role: Vec<async_nats::Client> = self
            .lock()
            .iter()
            .filter(|(_, r, _)| r == role)
            .map(|(_, _, c)| c.clone())
            .collect();
        for c in &of_role {
            c.force_reconnect()
                .await
                .map_err(|e| error("kill worker connections", e))?;
        }
        Ok(of_role.len() as u64)
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.clients.lock().retain(|(id, _, _)| *id != self.id);
    }
}
