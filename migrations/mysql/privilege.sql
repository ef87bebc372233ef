-- The embedded MariaDB's workload account, run once by each server that initialised
-- its own data directory (as its init file, as root): what the backend needs and no
-- more. On the server: its own connections and the lock and transaction tables
-- (PROCESS); on the run's database alone: everything but granting. Not FILE, SUPER or
-- SHUTDOWN, and no right on any other database, mysql's grant tables included.
-- {user} is claimbench's account name; {db} the run's database, its backticks doubled.

-- step: workload-account
CREATE USER IF NOT EXISTS '{user}'@'127.0.0.1';
GRANT PROCESS ON *.* TO '{user}'@'127.0.0.1';
GRANT ALL PRIVILEGES ON `{db}`.* TO '{user}'@'127.0.0.1';
