//! A multi-primary cluster seen one node at a time: each node's own counters, read
//! before and after a trial, and what the difference says (certification failures,
//! brute-force aborts, the node's own deadlocks, flow control). Engine-neutral: the
//! MySQL backend reads the values (`migrations/mysql/evidence/galera.sql`), the runner
//! turns two readings into a [`NodeTrial`].

use crate::results::{ClusterRecord, NodeTrial};
use std::collections::BTreeMap;

/// One node's status (and, once per run, settings) as lower-case name → value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeReading {
    pub address: String,
    pub status: BTreeMap<String, String>,
    pub settings: BTreeMap<String, String>,
}

impl NodeReading {
    fn int(&self, name: &str) -> i64 {
        self.status
            .get(name)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    }

    fn text(&self, name: &str) -> &str {
        self.status.get(name).map(String::as_str).unwrap_or("")
    }
}

/// Why a multi-host target is not one working Galera cluster.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    #[error(
        "{address} is not a Galera node (wsrep_on = {on}); a target with several hosts must be the nodes of one Galera cluster"
    )]
    NotGalera { address: String, on: String },
    #[error(
        "{address} is not ready (wsrep_ready = {ready}, state {state}); wait until every node is Synced"
    )]
    NotReady {
        address: String,
        ready: String,
        state: String,
    },
    #[error(
        "the nodes are not one cluster: {first} has state UUID {uuid_first}, {other} has {uuid_other}; list the nodes of one cluster"
    )]
    TwoClusters {
        first: String,
        uuid_first: String,
        other: String,
        uuid_other: String,
    },
}

/// The cluster the nodes form, checked: every node runs Galera, is ready, and reports
/// the same state UUID.
pub fn record(nodes: &[NodeReading]) -> Result<ClusterRecord, ClusterError> {
    let first = &nodes[0];
    for n in nodes {
        let on = n.settings.get("wsrep_on").cloned().unwrap_or_default();
        if !on.eq_ignore_ascii_case("on") {
            return Err(ClusterError::NotGalera {
                address: n.address.clone(),
                on: if on.is_empty() { "absent".into() } else { on },
            });
        }
        if !n.text("wsrep_ready").eq_ignore_ascii_case("on") {
            return Err(ClusterError::NotReady {
                address: n.address.clone(),
                ready: n.text("wsrep_ready").to_string(),
                state: n.text("wsrep_local_state_comment").to_string(),
            });
        }
        if n.text("wsrep_cluster_state_uuid") != first.text("wsrep_cluster_state_uuid") {
            return Err(ClusterError::TwoClusters {
                first: first.address.clone(),
                uuid_first: first.text("wsrep_cluster_state_uuid").to_string(),
                other: n.address.clone(),
                uuid_other: n.text("wsrep_cluster_state_uuid").to_string(),
            });
        }
    }
    Ok(ClusterRecord {
        state_uuid: first.text("wsrep_cluster_state_uuid").to_string(),
        size: first.int("wsrep_cluster_size").max(0) as u32,
        nodes: nodes.iter().map(|n| n.address.clone()).collect(),
        settings: first
            .settings
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        provider_version: first.text("wsrep_provider_version").to_string(),
    })
}

/// Node `index` (0-based)'s share of a trial, from its readings before and after.
pub fn node_trial(
    index: usize,
    workers: u32,
    before: &NodeReading,
    after: &NodeReading,
) -> NodeTrial {
    let d = |name: &str| (after.int(name) - before.int(name)).max(0);
    NodeTrial {
        node: index + 1,
        address: after.address.clone(),
        workers,
        cert_failures: d("wsrep_local_cert_failures"),
        bf_aborts: d("wsrep_local_bf_aborts"),
        innodb_deadlocks: d("innodb_deadlocks"),
        flow_control_paused_ms: d("wsrep_flow_control_paused_ns") as f64 / 1e6,
        replicated: d("wsrep_replicated"),
        received: d("wsrep_received"),
        recv_queue_max: after.int("wsrep_local_recv_queue_max"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(address: &str, pairs: &[(&str, &str)], on: &str) -> NodeReading {
        NodeReading {
            address: address.into(),
            status: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            settings: [("wsrep_on".to_string(), on.to_string())].into(),
        }
    }

    const READY: [(&str, &str); 3] = [
        ("wsrep_ready", "ON"),
        ("wsrep_cluster_state_uuid", "u1"),
        ("wsrep_cluster_size", "2"),
    ];

    #[test]
    fn a_cluster_is_one_state_uuid_on_ready_galera_nodes() {
        let a = node("a:1", &READY, "ON");
        let b = node("b:2", &READY, "ON");
        let r = record(&[a.clone(), b.clone()]).unwrap();
        assert_eq!((r.size, r.nodes.len()), (2, 2));
        assert_eq!(r.state_uuid, "u1");

        let plain = node("b:2", &READY, "OFF");
        assert!(matches!(
            record(&[a.clone(), plain]),
            Err(ClusterError::NotGalera { address, .. }) if address == "b:2"
        ));
        let other = node(
            "b:2",
            &[("wsrep_ready", "ON"), ("wsrep_cluster_state_uuid", "u2")],
            "ON",
        );
        let e = record(&[a.clone(), other]).unwrap_err();
        assert!(
            e.to_string().contains("u1") && e.to_string().contains("u2"),
            "{e}"
        );
        let joining = node("b:2", &[("wsrep_ready", "OFF")], "ON");
        assert!(matches!(
            record(&[a, joining]),
            Err(ClusterError::NotReady { .. })
        ));
    }

    #[test]
    fn a_trial_is_the_difference_of_two_readings() {
        let before = node(
            "a:1",
            &[
                ("wsrep_local_cert_failures", "5"),
                ("wsrep_local_bf_aborts", "1"),
                ("wsrep_flow_control_paused_ns", "1000000"),
                ("innodb_deadlocks", "2"),
            ],
            "ON",
        );
        let after = node(
            "a:1",
            &[
                ("wsrep_local_cert_failures", "12"),
                ("wsrep_local_bf_aborts", "4"),
                ("wsrep_flow_control_paused_ns", "3500000"),
                ("innodb_deadlocks", "2"),
                ("wsrep_local_recv_queue_max", "9"),
            ],
            "ON",
        );
        let t = node_trial(1, 3, &before, &after);
        assert_eq!((t.node, t.workers), (2, 3));
        assert_eq!(
            (t.cert_failures, t.bf_aborts, t.innodb_deadlocks),
            (7, 3, 0)
        );
        assert_eq!(t.flow_control_paused_ms, 2.5);
        assert_eq!(t.recv_queue_max, 9);
    }
}
