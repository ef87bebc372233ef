-- Jobs completed per queue within the trial's steady window (? to ?, µs since the epoch
-- on the server's clock): per-queue throughput. The cleanup job's removed rows
-- (jobs_cleaned) count as the archive's.
SELECT queue, COUNT(*)
FROM (SELECT queue, finished_at FROM jobs_archive
      UNION ALL
      SELECT queue, finished_at FROM jobs_cleaned) done
WHERE finished_at >= TIMESTAMPADD(MICROSECOND, ?, '1970-01-01')
  AND finished_at < TIMESTAMPADD(MICROSECOND, ?, '1970-01-01')
GROUP BY queue
