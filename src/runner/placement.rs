//! Where a trial's connections go on a target with several nodes (a multi-primary
//! cluster): the workers by the block's placement, everything else to the first node;
//! and each node's share of the trial afterwards.

use crate::backend::cluster::{NodeReading, node_trial};
use crate::backend::{Backend, Endpoint};
use crate::results::ClusterTrial;
use crate::workload::Placement;

/// The node the sampler, producer, rescuer, killer and control connection use (0-based).
pub(crate) const SERVICE_NODE: usize = 0;

/// Worker i goes to its node by the block's placement, through the trial's network
/// when there is one; the tasks beside the workers go to [`SERVICE_NODE`], directly.
#[derive(Debug, Clone, Copy)]
pub(super) struct Routes {
    pub via: Option<std::net::SocketAddr>,
    pub placement: Placement,
    pub nodes: usize,
}

impl Routes {
    pub fn worker(&self, i: usize) -> Endpoint {
        Endpoint {
            // Standalone: the backend sends every connection to that server.
            node: self.placement.node(i, self.nodes).unwrap_or(0),
            via: self.via,
        }
    }

    /// How many of `workers` each node had.
    fn workers_per_node(&self, workers: u32) -> Vec<u32> {
        let mut n = vec![0; self.nodes.max(1)];
        for i in 0..workers as usize {
            if let Some(node) = self.placement.node(i, self.nodes) {
                n[node] += 1;
            }
        }
        n
    }

    /// Each node's share of a trial; `None` on a single server (no readings).
    pub fn cluster_trial(
        &self,
        workers: u32,
        before: &[NodeReading],
        after: &[NodeReading],
    ) -> Option<ClusterTrial> {
        if after.is_empty() || before.len() != after.len() {
            return None;
        }
        let per_node = self.workers_per_node(workers);
        Some(ClusterTrial {
            placement: self.placement.label().to_string(),
            service_node: SERVICE_NODE + 1,
            nodes: before
                .iter()
                .zip(after)
                .enumerate()
                .map(|(i, (b, a))| node_trial(i, per_node.get(i).copied().unwrap_or(0), b, a))
                .collect(),
        })
    }
}

/// How long a cluster claimbench started may take, after its nodes said they were
/// ready, to report all of them as members, each ready.
const CLUSTER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Waits until every node of `backend`'s cluster reports `wsrep_cluster_size` = `nodes`
/// and `wsrep_ready`, and fails naming what it last saw.
pub async fn wait_for_cluster<B: Backend>(
    backend: &B,
    nodes: usize,
) -> Result<(), crate::backend::BackendError> {
    let deadline = std::time::Instant::now() + CLUSTER_TIMEOUT;
    loop {
        let readings = backend.cluster_readings(false).await?;
        let seen: Vec<String> = readings
            .iter()
            .map(|r| {
                let get = |k: &str| r.status.get(k).map(String::as_str).unwrap_or("?");
                format!(
                    "{}: size {}, ready {}",
                    r.address,
                    get("wsrep_cluster_size"),
                    get("wsrep_ready")
                )
            })
            .collect();
        let joined = readings.len() == nodes
            && readings.iter().all(|r| {
                r.status.get("wsrep_cluster_size") == Some(&nodes.to_string())
                    && r.status.get("wsrep_ready").map(String::as_str) == Some("ON")
            });
        if joined {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(crate::backend::BackendError::other(
                "wait for the Galera cluster",
                format!(
                    "not all {nodes} nodes joined within {} s ({})",
                    CLUSTER_TIMEOUT.as_secs(),
                    seen.join("; ")
                ),
            ));
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_deals_workers_round_robin_and_single_writer_keeps_them_on_one_node() {
        let r = |placement| Routes {
            via: None,
            placement,
            nodes: 3,
        };
        assert_eq!(r(Placement::Spread).workers_per_node(8), [3, 3, 2]);
        assert_eq!(r(Placement::SingleWriter).workers_per_node(8), [8, 0, 0]);
        assert_eq!(r(Placement::Standalone).workers_per_node(8), [0, 0, 0]);
        assert_eq!(r(Placement::Spread).worker(4).node, 1);
        assert_eq!(r(Placement::SingleWriter).worker(4).node, 0);
        // A single server: everything on its one node.
        let one = Routes {
            nodes: 1,
            ..r(Placement::Spread)
        };
        assert_eq!(one.worker(5).node, 0);
        assert!(one.cluster_trial(4, &[], &[]).is_none());
    }
}
