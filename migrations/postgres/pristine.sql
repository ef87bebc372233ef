-- Resets by copy on a cluster claimbench started (src/backend/pristine.rs): a pristine
-- database seeded once per population and layout, copied into the trial database.
-- {name} and {template} are names claimbench made (claimbench_pristine_<n>), {trial} is
-- claimbench_trial. drop-trial-force is for PostgreSQL 13 on: it drops the trial
-- database even if a connection of the last trial is still closing. copy-file-copy is
-- for PostgreSQL 15 on, whose default WAL_LOG strategy writes every page into the WAL;
-- FILE_COPY copies the files (before 15 it was the only strategy, without a keyword).

-- step: drop
DROP DATABASE IF EXISTS {name}

-- step: create
CREATE DATABASE {name}

-- step: drop-trial
DROP DATABASE IF EXISTS {trial}

-- step: drop-trial-force
DROP DATABASE IF EXISTS {trial} WITH (FORCE)

-- step: copy
CREATE DATABASE {trial} TEMPLATE {template}

-- step: copy-file-copy
CREATE DATABASE {trial} TEMPLATE {template} STRATEGY FILE_COPY
