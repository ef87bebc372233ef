-- After a failover: which of the writes the workers saw acknowledged the new primary
-- does not have. Each list is a JSON array of [job id, start µs] pairs, a run named by
-- its start time (the start statement's clock_timestamp(), which the effects and
-- archive rows keep):
-- $1 the handler effects the workers saw written, $2 the completions they saw
-- acknowledged (in the archive, removed by the cleanup job, or finished in place). Returns one
-- row per missing write: ('effect' | 'completion', job id, start µs).
-- A completed job whose archive row carries another run's start ran again after its
-- acknowledged completion was lost: that completion is missing too. Under storage =
-- "delete" a completion is there when the job's row is gone from the hot table (a lost
-- one brings the row back) and the effects keep a successful run with that start.
SELECT 'effect' AS kind, (a ->> 0)::bigint AS job, (a ->> 1)::bigint AS started_us
  FROM json_array_elements($1::text::json) AS a
 WHERE NOT EXISTS (SELECT 1 FROM effects e
                    WHERE e.job_id = (a ->> 0)::bigint
                      AND (extract(epoch FROM e.started_at) * 1000000)::bigint = (a ->> 1)::bigint)
UNION ALL
SELECT 'completion', (a ->> 0)::bigint, (a ->> 1)::bigint
  FROM json_array_elements($2::text::json) AS a
 WHERE NOT EXISTS (SELECT 1 FROM (SELECT id, started_at FROM jobs_archive
                                  UNION ALL
                                  SELECT id, started_at FROM jobs_cleaned
                                  UNION ALL
                                  SELECT id, started_at FROM jobs_hot WHERE status = 3
                                  UNION ALL
                                  SELECT e.job_id, e.started_at FROM effects e
                                   WHERE (SELECT storage FROM claimbench_schema LIMIT 1) = 'delete'
                                     AND e.outcome = 0
                                     AND NOT EXISTS (SELECT 1 FROM jobs_hot h
                                                      WHERE h.id = e.job_id)) j
                    WHERE j.id = (a ->> 0)::bigint
                      AND (extract(epoch FROM j.started_at) * 1000000)::bigint = (a ->> 1)::bigint)
