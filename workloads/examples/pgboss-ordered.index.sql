-- An index in the fetch's own order beside pg-boss's (a layout of this example, not
-- pg-boss's): its job_fetch index finds a queue's waiting jobs but not in priority and
-- age order, so every fetch reads and sorts all of them (`Sort Method: external merge`
-- over 60,000 rows, 27 ms each); walking this one, a fetch reads its batch and stops
-- (0.2 ms). Not led by `name`: the fetch's `name LIKE $1` cannot bound a btree on a
-- parameter, so a name-led index would give no order. With many queues a fetch walks
-- past other queues' rows (pg-boss 10 gives each queue a partition of its own).
CREATE INDEX job_fetch_ordered ON job (priority DESC, created_on, id)
    WHERE state < 'active'
