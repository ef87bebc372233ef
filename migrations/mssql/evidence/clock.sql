-- The server's clock, µs since the epoch (UTC): where a trial's steady window starts, on
-- the clock the archive's finish times use.
SELECT DATEDIFF_BIG(microsecond, '19700101', SYSUTCDATETIME());
