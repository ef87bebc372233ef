-- pk-only: no secondary index; every claim scans the hot table. On InnoDB a locking
-- read then sorts every pending row and keeps each one it read locked until COMMIT.
SELECT 1
