-- A Galera node's own counters and settings, read on each node of a cluster target
-- before and after every trial (src/backend/mysql/cluster.rs). Counters are cumulative
-- since the node started; the trial reports the difference.

-- step: status
-- wsrep_local_cert_failures: this node's transactions that failed certification at
-- commit (another node's write set on the same rows was ordered first).
-- wsrep_local_bf_aborts: this node's open transactions aborted by a replicated write set
-- that needed their row locks (brute force abort).
-- wsrep_flow_control_paused_ns: time replication was paused because a node's apply queue
-- was full; wsrep_local_recv_queue / _send_queue: write sets waiting now.
-- Innodb_deadlocks: the node's own InnoDB deadlocks, apart from both.
SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS
 WHERE VARIABLE_NAME IN ('WSREP_LOCAL_CERT_FAILURES', 'WSREP_LOCAL_BF_ABORTS',
                         'WSREP_FLOW_CONTROL_PAUSED_NS', 'WSREP_LOCAL_RECV_QUEUE',
                         'WSREP_LOCAL_SEND_QUEUE', 'WSREP_LOCAL_RECV_QUEUE_MAX',
                         'WSREP_REPLICATED', 'WSREP_RECEIVED', 'INNODB_DEADLOCKS',
                         'WSREP_CLUSTER_STATE_UUID', 'WSREP_CLUSTER_SIZE', 'WSREP_READY',
                         'WSREP_LOCAL_STATE_COMMENT', 'WSREP_PROVIDER_VERSION')

-- step: settings
-- What decides how the cluster treats a queue: causal reads (wsrep_sync_wait), how often
-- the server itself retries an aborted autocommit statement (wsrep_retry_autocommit),
-- the replication format Galera needs (ROW), and the applier threads per node.
SELECT LOWER(VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES
 WHERE VARIABLE_NAME IN ('WSREP_ON', 'WSREP_SYNC_WAIT', 'WSREP_RETRY_AUTOCOMMIT',
                         'BINLOG_FORMAT', 'WSREP_SLAVE_THREADS', 'WSREP_CLUSTER_NAME',
                         'INNODB_AUTOINC_LOCK_MODE')
