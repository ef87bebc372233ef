-- Jobs completed per queue within the trial's steady window ($1 to $2, µs since the
-- epoch on the server's clock): per-queue throughput. The cleanup job's removed rows
-- (jobs_cleaned) count as the archive's, and so do the hot table's finished rows under
-- storage = "update-in-place".
SELECT queue, count(*)
FROM (SELECT queue, finished_at FROM jobs_archive
      UNION ALL
      SELECT queue, finished_at FROM jobs_cleaned
      UNION ALL
      SELECT queue, last_updated_at FROM jobs_hot
       WHERE status = 3 AND created_by IS DISTINCT FROM 'claimbench-history') done
WHERE finished_at >= 'epoch'::timestamptz + $1::bigint * interval '1 microsecond'
  AND finished_at < 'epoch'::timestamptz + $2::bigint * interval '1 microsecond'
GROUP BY queue
