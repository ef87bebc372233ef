-- Settings that decide whether two runs may be compared, in their display units.
SELECT name, current_setting(name)
FROM pg_settings
WHERE name IN ('shared_buffers', 'work_mem', 'max_connections', 'synchronous_commit', 'fsync',
               'full_page_writes', 'wal_level', 'default_transaction_isolation',
               'deadlock_timeout', 'lock_timeout', 'jit', 'autovacuum', 'max_wal_size',
               'random_page_cost', 'effective_io_concurrency', 'synchronous_standby_names')
ORDER BY name
