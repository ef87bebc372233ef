-- The server's clock, µs since the epoch: where a trial's steady window starts, on the
-- clock the archive's finish times use.
SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint
