-- One sampler reading, on the sampler's own connection. Kept to one round trip.
-- ? the workload's priority values as a JSON array (every job has one of them),
-- ? this run's worker connection ids as a JSON array (twice), ? queues that have a max
-- workers limit as a JSON array (their active counts come back comma-separated, in the
-- same order), ? the workload's queues as a JSON array when it has more than one (each
-- one's oldest due pending age in ms comes back comma-separated in the same order, `-`
-- for none; `[]`: not asked).
SELECT
    -- Oldest due pending job: per priority, the first row in due order, then the oldest of
    -- those. One index probe per priority with the fetch-order layout.
    (SELECT TIMESTAMPDIFF(MICROSECOND, MIN(o.due), NOW(6)) / 1000.0
       FROM (SELECT (SELECT h.due_at
                       FROM jobs_hot h
                      WHERE h.status = 0
                        AND h.priority = pr.p
                        AND h.due_at <= NOW(6)
                        AND NOT EXISTS (SELECT 1 FROM queues q
                                        WHERE q.name = h.queue
                                          AND (q.is_paused OR NOT q.is_active))
                      ORDER BY h.due_at
                      LIMIT 1) AS due
               FROM JSON_TABLE(?, '$[*]' COLUMNS (p INT PATH '$')) pr) o) AS oldest_pending_ms,
    (SELECT COUNT(*)
       FROM information_schema.INNODB_TRX t
       JOIN JSON_TABLE(?, '$[*]' COLUMNS (id BIGINT PATH '$')) w
         ON w.id = t.trx_mysql_thread_id
      WHERE t.trx_state = 'LOCK WAIT') AS lock_waiting,
    (SELECT COUNT(*)
       FROM information_schema.PROCESSLIST p
       JOIN JSON_TABLE(?, '$[*]' COLUMNS (id BIGINT PATH '$')) w
         ON w.id = p.ID
      WHERE p.COMMAND <> 'Sleep') AS active,
    EXISTS (SELECT 1 FROM jobs_hot h
             WHERE h.status IN (0, 1, 2)
               AND NOT EXISTS (SELECT 1 FROM queues q
                               WHERE q.name = h.queue
                                 AND (q.is_paused OR NOT q.is_active))) AS work_left,
    (SELECT GROUP_CONCAT(c.n ORDER BY c.ord SEPARATOR ',')
       FROM (SELECT u.ord, COUNT(h.id) AS n
               FROM JSON_TABLE(?, '$[*]' COLUMNS (ord FOR ORDINALITY,
                                                 name VARCHAR(200) PATH '$')) u
               LEFT JOIN jobs_hot h ON h.queue = u.name AND h.status IN (1, 2)
              GROUP BY u.ord) c) AS queue_active,
    -- Per queue, the same probe (a derived table may not refer to the outer queue in
    -- MariaDB, so the per-priority probe is a scalar subquery inside MIN()).
    (SELECT GROUP_CONCAT(COALESCE(CAST(a.ms AS CHAR), '-') ORDER BY a.ord SEPARATOR ',')
       FROM (SELECT u.ord,
                    CASE WHEN EXISTS (SELECT 1 FROM queues q
                                       WHERE q.name = u.name
                                         AND (q.is_paused OR NOT q.is_active))
                         THEN NULL
                         ELSE (SELECT TIMESTAMPDIFF(MICROSECOND,
                                        MIN((SELECT h.due_at
                                               FROM jobs_hot h
                                              WHERE h.status = 0
                                                AND h.priority = pr.p
                                                AND h.queue = u.name
                                                AND h.due_at <= NOW(6)
                                              ORDER BY h.due_at
                                              LIMIT 1)),
                                        NOW(6)) / 1000.0
                                 FROM JSON_TABLE(?, '$[*]' COLUMNS (p INT PATH '$')) pr)
                    END AS ms
               FROM JSON_TABLE(?, '$[*]' COLUMNS (ord FOR ORDINALITY,
                                                 name VARCHAR(200) PATH '$')) u) a) AS queue_oldest_ms,
    -- InnoDB's history list length: undo logs of committed transactions purge has not
    -- removed yet; an old read view (a long transaction) stops purge and it grows.
    (SELECT `COUNT` FROM information_schema.INNODB_METRICS
      WHERE NAME = 'trx_rseg_history_len') AS history_length
