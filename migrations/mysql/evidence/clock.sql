-- The server's clock, µs since the epoch (sessions run in UTC): where a trial's steady
-- window starts, on the clock the archive's finish times use.
SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', SYSDATE(6))
