-- The index the two-step claim reads in its own order (status, then fetch order):
-- without one its locking read sorts every pending row.
CREATE INDEX ix_example_claim ON jobs_hot (status, priority DESC, due_at, id)
