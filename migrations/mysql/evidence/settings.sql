-- Settings that decide whether two runs may be compared.
SHOW GLOBAL VARIABLES WHERE Variable_name IN
    ('innodb_buffer_pool_size', 'innodb_flush_log_at_trx_commit', 'sync_binlog', 'log_bin',
     'innodb_lock_wait_timeout', 'innodb_deadlock_detect', 'innodb_rollback_on_timeout',
     'max_connections', 'tx_isolation', 'transaction_isolation', 'performance_schema',
     'innodb_autoinc_lock_mode', 'innodb_doublewrite', 'version_comment')
