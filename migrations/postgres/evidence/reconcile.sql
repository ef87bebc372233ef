-- Where every job ended up, and the effects table's count of duplicate executions:
-- rows beyond one per (job, attempt).
SELECT
    (SELECT count(*) FROM jobs_hot WHERE status = 0) AS pending,
    (SELECT count(*) FROM jobs_hot WHERE status = 1) AS fetched,
    (SELECT count(*) FROM jobs_hot WHERE status = 2) AS processing,
    (SELECT count(*) FROM jobs_archive) AS completed,
    (SELECT count(*) FROM jobs_dead_letter) AS dead_lettered,
    (SELECT count(*) FROM effects) AS effect_rows,
    (SELECT COALESCE(sum(n - 1), 0)::bigint
       FROM (SELECT count(*) AS n FROM effects GROUP BY job_id, attempt) runs) AS duplicate_executions,
    (SELECT count(DISTINCT job_id) FROM effects) AS distinct_executed
