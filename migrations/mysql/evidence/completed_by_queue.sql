-- Jobs completed per queue within the trial's steady window (? to ?, µs since the epoch
-- on the server's clock): per-queue throughput.
SELECT queue, COUNT(*)
FROM jobs_archive
WHERE finished_at >= TIMESTAMPADD(MICROSECOND, ?, '1970-01-01')
  AND finished_at < TIMESTAMPADD(MICROSECOND, ?, '1970-01-01')
GROUP BY queue
