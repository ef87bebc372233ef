//! The connections a broker's backend opened, by role: the faults' connection kill ends
//! the workers' from claimbench's side where the server would end another client's only
//! with rights claimbench does not ask for (a NATS server's system account, RabbitMQ's
//! management API). Each backend says what ending one means for its client library.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub(crate) struct Connections<C> {
    next: AtomicU64,
    open: Mutex<Vec<(u64, String, C)>>,
}

impl<C> Default for Connections<C> {
    fn default() -> Self {
        Connections {
            next: AtomicU64::new(0),
            open: Mutex::new(Vec::new()),
        }
    }
}

/// A session's entry: removed when the session is dropped, so that a closed session's
/// connection is not kept open by the list.
pub(crate) struct Registered<C> {
    id: u64,
    pub(crate) connections: Arc<Connections<C>>,
}

impl<C: Clone> Connections<C> {
    pub(crate) fn add(self: &Arc<Self>, role: &str, connection: C) -> Registered<C> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().push((id, role.to_string(), connection));
        Registered {
            id,
            connections: self.clone(),
        }
    }

    /// Every open connection opened as `role`.
    pub(crate) fn of_role(&self, role: &str) -> Vec<C> {
        self.lock()
            .iter()
            .filter(|(_, r, _)| r == role)
            .map(|(_, _, c)| c.clone())
            .collect()
    }
}

impl<C> Connections<C> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u64, String, C)>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<C> Drop for Registered<C> {
    fn drop(&mut self) {
        self.connections.lock().retain(|(id, _, _)| *id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_session_leaves_the_list_and_roles_stay_apart() {
        let all: Arc<Connections<&str>> = Arc::default();
        let a = all.add("worker", "a");
        let _b = all.add("worker", "b");
        let _s = all.add("sampler", "s");
        assert_eq!(all.of_role("worker"), ["a", "b"]);
        drop(a);
        assert_eq!(all.of_role("worker"), ["b"]);
        assert_eq!(all.of_role("sampler"), ["s"]);
    }
}
