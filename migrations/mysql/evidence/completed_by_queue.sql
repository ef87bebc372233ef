-- Jobs completed per queue within the trial's steady window (? to ?, µs since the epoch
-- on the server's clock): per-queue throughput. The cleanup job's removed rows
-- (jobs_cleaned) count as the archive's, and so do the hot table's finished rows under
-- storage = "update-in-place"; under storage = "delete", a job whose row is
-- gone counts at the finish of its last successful run, in the queue its effects kept.
-- On a declared table (docs/strategies.md, Your own table), whose rows claimbench does
-- not read, a job counts at the finish of its first successful run, in the queue its
-- worker's claim asked for (effects.queue, NULL where the claim binds no :queue), on the
-- worker's clock (declared_table.sql, step effect).
SELECT queue, COUNT(*)
FROM (SELECT queue, finished_at FROM jobs_archive
      UNION ALL
      SELECT queue, finished_at FROM jobs_cleaned
      UNION ALL
      SELECT queue, last_updated_at FROM jobs_hot WHERE status = 3
      UNION ALL
      SELECT MAX(e.queue), MAX(e.finished_at) FROM effects e
       WHERE (SELECT storage FROM claimbench_schema LIMIT 1) = 'delete'
         AND e.outcome = 0
         AND NOT EXISTS (SELECT 1 FROM jobs_hot h WHERE h.id = e.job_id)
         AND NOT EXISTS (SELECT 1 FROM jobs_dead_letter d WHERE d.id = e.job_id)
       GROUP BY e.job_id
      UNION ALL
      SELECT MAX(e.queue), MIN(e.finished_at) FROM effects e
       WHERE (SELECT storage FROM claimbench_schema LIMIT 1) = 'declared-table'
         AND e.outcome = 0 AND e.queue IS NOT NULL
       GROUP BY e.job_id) done
WHERE finished_at >= TIMESTAMPADD(MICROSECOND, ?, '1970-01-01')
  AND finished_at < TIMESTAMPADD(MICROSECOND, ?, '1970-01-01')
GROUP BY queue
