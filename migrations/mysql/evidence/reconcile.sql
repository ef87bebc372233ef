-- Where every job ended up, and the effects table's count of duplicate executions:
-- rows beyond one per (job, attempt).
SELECT
    (SELECT COUNT(*) FROM jobs_hot WHERE status = 0) AS pending,
    (SELECT COUNT(*) FROM jobs_hot WHERE status = 1) AS fetched,
    (SELECT COUNT(*) FROM jobs_hot WHERE status = 2) AS processing,
    (SELECT COUNT(*) FROM jobs_archive) AS completed,
    (SELECT COUNT(*) FROM jobs_dead_letter) AS dead_lettered,
    (SELECT COUNT(*) FROM effects) AS effect_rows,
    (SELECT CAST(COALESCE(SUM(n - 1), 0) AS SIGNED)
       FROM (SELECT COUNT(*) AS n FROM effects GROUP BY job_id, attempt) runs) AS duplicate_executions,
    (SELECT COUNT(DISTINCT job_id) FROM effects) AS distinct_executed
