-- The standbys this server streams to, as it sees them at the end of a trial:
-- (name, state, sync_state, replay lag in ms, WAL written here and not yet replayed
-- there in bytes). replay_lag is PostgreSQL's own moving measure of how long recent
-- WAL took from this server's flush to the standby's replay; it is NULL once the
-- standby has caught up and no WAL is flowing.
SELECT application_name,
       state,
       sync_state,
       (EXTRACT(EPOCH FROM replay_lag) * 1000)::float8,
       COALESCE(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), 0)::bigint
FROM pg_stat_replication
ORDER BY application_name
