-- Where every job ended up, and the effects table's own count of duplicate executions:
-- a handler run of a job that overlaps an earlier run of that job in time, or that
-- follows an earlier run which succeeded (so nothing legitimately released the job for
-- another run), whatever attempt number each had. The ledger counts the same rule from
-- the workers' records (src/ledger.rs); the two must agree. Completed jobs are the
-- archive's and those the cleanup job removed (jobs_cleaned), under storage =
-- "update-in-place" the hot table's finished rows (status 3; dead ones 4), and under storage =
-- "delete" (claimbench_schema names the model) the jobs with a successful run in effects
-- whose row is in neither the hot nor the dead-letter table: the rows are gone, and
-- only the effects witness what ran. Under any other model such a job is lost, and must
-- stay uncounted.
SELECT
    (SELECT COUNT(*) FROM jobs_hot WHERE status = 0) AS pending,
    (SELECT COUNT(*) FROM jobs_hot WHERE status = 1) AS fetched,
    (SELECT COUNT(*) FROM jobs_hot WHERE status = 2) AS processing,
    (SELECT COUNT(*) FROM jobs_archive) + (SELECT COUNT(*) FROM jobs_cleaned)
      + (SELECT COUNT(*) FROM jobs_hot WHERE status = 3)
      + (SELECT COUNT(DISTINCT e.job_id) FROM effects e
          WHERE (SELECT storage FROM claimbench_schema LIMIT 1) = 'delete'
            AND e.outcome = 0
            AND NOT EXISTS (SELECT 1 FROM jobs_hot h WHERE h.id = e.job_id)
            AND NOT EXISTS (SELECT 1 FROM jobs_dead_letter d WHERE d.id = e.job_id)) AS completed,
    (SELECT COUNT(*) FROM jobs_dead_letter)
      + (SELECT COUNT(*) FROM jobs_hot WHERE status = 4) AS dead_lettered,
    (SELECT COUNT(*) FROM effects) AS effect_rows,
    (SELECT COUNT(*)
       FROM (SELECT started_at,
                    MAX(finished_at) OVER earlier AS earlier_end,
                    MAX(outcome = 0) OVER earlier AS earlier_ok
               FROM effects
             WINDOW earlier AS (PARTITION BY job_id ORDER BY started_at, finished_at, id
                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) runs
      WHERE runs.earlier_end > runs.started_at OR runs.earlier_ok = 1) AS duplicate_executions,
    (SELECT COUNT(DISTINCT job_id) FROM effects) AS distinct_executed,
    (SELECT COUNT(*) FROM effects WHERE NOT owned) AS unowned_executions
