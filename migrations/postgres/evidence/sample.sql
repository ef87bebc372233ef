-- One sampler reading, on the sampler's own connection. Kept to one round trip.
-- $6 the hot table's name: claimbench's jobs_hot, or the table a workload declares.
-- $1 application_name of this run's worker connections, $2 queues that have a max
-- workers limit (their active counts come back in the same order), $3 the workload's
-- priority values (every job has one of them), $4 the workload's queues when it has
-- more than one (each one's oldest due pending age comes back in the same order; empty:
-- not asked), $5 whether to read the horizon, autovacuum runs and WAL (the last three
-- columns). Then the hot table's health: dead tuples, heap and index bytes, updates
-- and HOT updates so far (statistics, flushed by each backend about once a second);
-- then the standbys' replay lag and backlog where the server streams to any; last, the
-- advisory locks held, the horizon's age, the hot table's autovacuum and autoanalyze
-- runs, who holds the horizon, the workers' waits, the WAL and the WAL replication
-- slots keep.
SELECT
    -- Oldest due pending job: per priority, the first row in due order, then the oldest of
    -- those. One index probe per priority with the fetch-order or pending-partial layout
    -- (a min() over all pending rows would scan the backlog on every sample).
    (SELECT extract(epoch FROM now() - min(o.due)) * 1000
       FROM unnest($3::int[]) AS p(priority)
       CROSS JOIN LATERAL (
            SELECT COALESCE(h.scheduled_at, h.created_at) AS due
              FROM jobs_hot h
              LEFT JOIN queues q ON q.name = h.queue
             WHERE h.status = 0
               AND h.priority = p.priority
               AND COALESCE(h.scheduled_at, h.created_at) <= now()
               AND q.is_paused IS NOT TRUE
               AND q.is_active IS NOT FALSE
             ORDER BY COALESCE(h.scheduled_at, h.created_at)
             LIMIT 1) o)::float8 AS oldest_pending_ms,
    (SELECT count(*) FROM pg_stat_activity
      WHERE application_name = $1 AND wait_event_type = 'Lock')::int AS lock_waiting,
    (SELECT count(*) FROM pg_stat_activity
      WHERE application_name = $1 AND state = 'active')::int AS active,
    EXISTS (SELECT 1 FROM jobs_hot h
              LEFT JOIN queues q ON q.name = h.queue
             WHERE h.status IN (0, 1, 2)
               AND q.is_paused IS NOT TRUE
               AND q.is_active IS NOT FALSE) AS work_left,
    ARRAY(SELECT count(h.id)
            FROM unnest($2::text[]) WITH ORDINALITY AS u(name, ord)
            LEFT JOIN jobs_hot h ON h.queue = u.name AND h.status IN (1, 2)
           GROUP BY u.ord
           ORDER BY u.ord) AS queue_active,
    -- The same oldest-pending probe per queue: one index probe per priority and queue
    -- with the fetch-order layout when the queue's rows are near the head of each
    -- priority, a longer walk when another queue's rows come first.
    ARRAY(SELECT CASE WHEN q.is_paused OR NOT q.is_active THEN NULL ELSE
                 (SELECT extract(epoch FROM now() - min(o.due)) * 1000
                    FROM unnest($3::int[]) AS p(priority)
                    CROSS JOIN LATERAL (
                         SELECT COALESCE(h.scheduled_at, h.created_at) AS due
                           FROM jobs_hot h
                          WHERE h.status = 0
                            AND h.priority = p.priority
                            AND h.queue = u.name
                            AND COALESCE(h.scheduled_at, h.created_at) <= now()
                          ORDER BY COALESCE(h.scheduled_at, h.created_at)
                          LIMIT 1) o)::float8 END
            FROM unnest($4::text[]) WITH ORDINALITY AS u(name, ord)
            LEFT JOIN queues q ON q.name = u.name
           ORDER BY u.ord) AS queue_oldest_ms,
    -- The hot table's figures are its partitions' sums under storage = "partitioned"
    -- (pg_partition_tree lists a plain table's partitions: none). The statistics come
    -- from the functions behind pg_stat_user_tables, called per relation: the view
    -- filtered by a list of relations scans every relation of the database (7 ms each
    -- time on a test server with 800, against 0.03 ms for the functions).
    (SELECT sum(pg_stat_get_dead_tuples(relid))::bigint
       FROM (SELECT relid FROM pg_partition_tree($6::text::regclass)
             UNION SELECT $6::text::regclass) t) AS dead_tuples,
    (SELECT sum(pg_table_size(relid))::bigint
       FROM (SELECT relid FROM pg_partition_tree($6::text::regclass)
             UNION SELECT $6::text::regclass) t) AS table_bytes,
    (SELECT sum(pg_indexes_size(relid))::bigint
       FROM (SELECT relid FROM pg_partition_tree($6::text::regclass)
             UNION SELECT $6::text::regclass) t) AS index_bytes,
    (SELECT sum(pg_stat_get_tuples_updated(relid))::bigint
       FROM (SELECT relid FROM pg_partition_tree($6::text::regclass)
             UNION SELECT $6::text::regclass) t) AS updates,
    (SELECT sum(pg_stat_get_tuples_hot_updated(relid))::bigint
       FROM (SELECT relid FROM pg_partition_tree($6::text::regclass)
             UNION SELECT $6::text::regclass) t) AS hot_updates,
    -- The standbys' replay, the slowest one's: how long recent WAL took to be replayed
    -- there, and the WAL written here and not yet replayed there (NULL without one).
    (SELECT max(extract(epoch FROM replay_lag) * 1000)
       FROM pg_stat_replication)::float8 AS replay_lag_ms,
    (SELECT max(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn))
       FROM pg_stat_replication)::bigint AS replay_behind_bytes,
    -- Advisory locks held in this database now (a claim that owns jobs by them).
    (SELECT count(*) FROM pg_locks
      WHERE locktype = 'advisory'
        AND database = (SELECT oid FROM pg_database
                         WHERE datname = current_database())) AS advisory_locks,
    -- Read only where the trial is read over time ($5: a horizon pin, or a trial of a
    -- minute or more), so a short trial's readings cost no more than they did.
    -- The hot table's horizon: how many transactions old the oldest xmin or xid is that
    -- another session of this database (this reading's own snapshot left out), a
    -- walsender for a standby's feedback, or a replication slot of this database or of
    -- none holds (a session in another database does not hold this table's back; a
    -- logical slot's catalog_xmin holds only the catalogs'). While it grows, vacuum can
    -- remove no row version that died after it. 0: nothing held.
    CASE WHEN $5 THEN COALESCE(GREATEST(
        (SELECT max(GREATEST(age(backend_xid), age(backend_xmin)))
           FROM pg_stat_activity
          WHERE pid <> pg_backend_pid()
            AND (datname = current_database() OR backend_type = 'walsender')),
        (SELECT max(age(xmin))
           FROM pg_replication_slots
          WHERE database IS NULL OR database = current_database())), 0)::bigint
    END AS horizon_age,
    CASE WHEN $5 THEN (SELECT sum(pg_stat_get_autovacuum_count(relid))::bigint
       FROM (SELECT relid FROM pg_partition_tree($6::text::regclass)
             UNION SELECT $6::text::regclass) t) END AS autovacuums,
    CASE WHEN $5 THEN (SELECT sum(pg_stat_get_autoanalyze_count(relid))::bigint
       FROM (SELECT relid FROM pg_partition_tree($6::text::regclass)
             UNION SELECT $6::text::regclass) t) END AS autoanalyzes,
    -- Who holds the horizon_age above: the session (its application_name, else its
    -- kind, and its state: `idle in transaction`) or the slot (`slot <name>`). Every
    -- snapshot taken while a transaction id is open has that xid as its xmin, so many
    -- sessions tie: the one whose own xid it is comes first, then one not running a
    -- statement (a running one's snapshot only reflects the horizon).
    CASE WHEN $5 THEN (
        SELECT who FROM (
            SELECT GREATEST(age(backend_xid), age(backend_xmin)) AS held,
                   COALESCE(age(backend_xid) >= age(backend_xmin), backend_xid IS NOT NULL)
                       AS own_xid,
                   state IS DISTINCT FROM 'active' AS waiting,
                   COALESCE(NULLIF(application_name, ''), backend_type)
                       || ' (' || COALESCE(state, 'no state') || ')' AS who
              FROM pg_stat_activity
             WHERE pid <> pg_backend_pid()
               AND (datname = current_database() OR backend_type = 'walsender')
            UNION ALL
            SELECT age(xmin), false, true, 'slot ' || slot_name
              FROM pg_replication_slots
             WHERE database IS NULL OR database = current_database()) h
         WHERE held IS NOT NULL
         ORDER BY held DESC, own_xid DESC, waiting DESC
         LIMIT 1)
    END AS horizon_holder,
    -- What this run's active worker connections wait on now, each distinct wait with
    -- how many wait on it (`CPU`: running, no wait event).
    CASE WHEN $5 THEN ARRAY(
        SELECT w.event || '=' || w.n
          FROM (SELECT COALESCE(wait_event_type || ':' || wait_event, 'CPU') AS event,
                       count(*) AS n
                  FROM pg_stat_activity
                 WHERE application_name = $1 AND state = 'active'
                 GROUP BY 1) w)
    END AS waits,
    -- WAL written so far (NULL on a standby, which writes none of its own).
    CASE WHEN $5 AND NOT pg_is_in_recovery()
         THEN pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint END AS wal_bytes,
    -- WAL kept for the replication slots of this database or of none, past the oldest
    -- one's restart point: an inactive slot's grows with every write (NULL: no slot).
    CASE WHEN $5 AND NOT pg_is_in_recovery()
         THEN (SELECT max(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn))
                 FROM pg_replication_slots
                WHERE database IS NULL OR database = current_database())::bigint
    END AS slot_wal_bytes
