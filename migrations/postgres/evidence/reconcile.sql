-- Where every job ended up, and the effects table's own count of duplicate executions:
-- a handler run of a job that overlaps an earlier run of that job in time, or that
-- follows an earlier run which succeeded (so nothing legitimately released the job for
-- another run), whatever attempt number each had. The ledger counts the same rule from
-- the workers' records (src/ledger.rs); the two must agree. Completed jobs are the
-- archive's (seeded history, population.history.archived, has ids below 1), those the
-- cleanup job removed (jobs_cleaned), under storage = "update-in-place" the hot
-- table's finished rows (status 3; dead ones 4), seeded history's left out, and under
-- storage = "delete" (claimbench_schema names the model) the jobs with a successful run
-- in effects whose row is in neither the hot nor the dead-letter table: the rows are
-- gone, and only the effects witness what ran. Under any other model such a job is lost,
-- and must stay uncounted.
SELECT
    (SELECT count(*) FROM jobs_hot WHERE status = 0) AS pending,
    (SELECT count(*) FROM jobs_hot WHERE status = 1) AS fetched,
    (SELECT count(*) FROM jobs_hot WHERE status = 2) AS processing,
    (SELECT count(*) FROM jobs_archive WHERE id >= 1)
      + (SELECT count(*) FROM jobs_cleaned)
      + (SELECT count(*) FROM jobs_hot
          WHERE status = 3 AND created_by IS DISTINCT FROM 'claimbench-history')
      + (SELECT count(DISTINCT e.job_id) FROM effects e
          WHERE (SELECT storage FROM claimbench_schema LIMIT 1) = 'delete'
            AND e.outcome = 0
            AND NOT EXISTS (SELECT 1 FROM jobs_hot h WHERE h.id = e.job_id)
            AND NOT EXISTS (SELECT 1 FROM jobs_dead_letter d WHERE d.id = e.job_id)) AS completed,
    (SELECT count(*) FROM jobs_dead_letter)
      + (SELECT count(*) FROM jobs_hot
          WHERE status = 4 AND created_by IS DISTINCT FROM 'claimbench-history') AS dead_lettered,
    (SELECT count(*) FROM effects) AS effect_rows,
    (SELECT count(*)
       FROM (SELECT started_at,
                    max(finished_at) OVER earlier AS earlier_end,
                    bool_or(outcome = 0) OVER earlier AS earlier_ok
               FROM effects
             WINDOW earlier AS (PARTITION BY job_id ORDER BY started_at, finished_at, id
                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) runs
      WHERE runs.earlier_end > runs.started_at OR runs.earlier_ok) AS duplicate_executions,
    (SELECT count(DISTINCT job_id) FROM effects) AS distinct_executed,
    (SELECT count(*) FROM effects WHERE NOT owned) AS unowned_executions
