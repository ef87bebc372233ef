-- Least privilege for the SQL a workload brings (declared layouts and claims, session
-- settings), both ways: on a server claimbench started, that SQL runs on connections
-- logged in as claimbench_workload, a role that is no superuser and has none of
-- pg_execute_server_program, pg_read_server_files or pg_write_server_files, and owns
-- only claimbench's schema; and every statement claimbench itself runs on that schema
-- (reset, seed, reconciliation, shard moves, model states) runs as that role too, so a
-- trigger, view or function the workload made there never runs with more. Only the
-- server connection is the superuser, and it reads nothing inside the schema. On a
-- user's server, the role the user gave is checked instead (step check-role).
-- src/names.rs names the role (WORKLOAD_ROLE).

-- step: ensure-role
-- On the control connection (a superuser of the embedded server), before each reset.
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'claimbench_workload') THEN
    CREATE ROLE claimbench_workload LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
  END IF;
END $$

-- step: allow-slots
-- On the control connection of the embedded server only, for a workload whose pin is a
-- logical slot (faults.hold_kind = "logical-slot"): claimbench's holder connection logs
-- in as the workload's role, and a replication slot needs REPLICATION. It reaches no
-- file or program of the host; the server is claimbench's own and thrown away.
ALTER ROLE claimbench_workload REPLICATION

-- step: server-search-path
-- On the server connection (the login of the target: the embedded server's superuser),
-- right after it logs in: names resolve in the catalogs and this session's own
-- temporary schema only, never in the run's schema, so no function, operator, view or
-- table the workload's role made can be reached from it by name.
SET search_path TO pg_catalog, pg_temp

-- step: check-role
-- The connected role's rights that reach the server's host: a superuser, or a member of
-- a role that runs programs or reads or writes the server's files.
SELECT current_user::text,
       r.rolsuper,
       pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER'),
       pg_has_role(current_user, 'pg_read_server_files', 'MEMBER'),
       pg_has_role(current_user, 'pg_write_server_files', 'MEMBER')
  FROM pg_roles r WHERE r.rolname = current_user

-- step: pooled-search-path
-- {schema} the run's schema, quoted. When the workers reach the embedded server through
-- a transaction-mode pooler, a session's SET search_path would stay on whichever server
-- connection ran it: the role's default gives every server connection the schema.
ALTER ROLE claimbench_workload SET search_path TO {schema}
