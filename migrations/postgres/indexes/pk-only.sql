-- pk-only: no secondary index; every claim scans the hot table. The baseline that shows
-- what an index buys.
SELECT 1;
