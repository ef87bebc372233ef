-- pk-only: no secondary index; every claim scans the clustered primary key.
SELECT 1;
