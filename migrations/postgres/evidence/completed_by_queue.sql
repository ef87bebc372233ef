-- Jobs completed per queue within the trial's steady window ($1 to $2, µs since the
-- epoch on the server's clock): per-queue throughput.
SELECT queue, count(*)
FROM jobs_archive
WHERE finished_at >= 'epoch'::timestamptz + $1::bigint * interval '1 microsecond'
  AND finished_at < 'epoch'::timestamptz + $2::bigint * interval '1 microsecond'
GROUP BY queue
