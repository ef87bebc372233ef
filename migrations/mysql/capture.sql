-- `claimbench capture` on MySQL/MariaDB (docs/cli.md): what it reads of one table, in a
-- READ ONLY transaction on the person's connection. No row's contents are read: sizes,
-- counts, the catalog, and (for the columns a queue's roles are named by) the values a
-- state, queue or priority column takes, as the statistics give them on PostgreSQL.
-- step: read-only
SET SESSION TRANSACTION READ ONLY
-- step: begin
START TRANSACTION READ ONLY
-- step: timeout-mariadb
-- Each statement stopped after 60 s (MariaDB's name, in seconds).
SET SESSION max_statement_time = 60
-- step: timeout-mysql
SET SESSION max_execution_time = 60000
-- step: table
-- ? schema, ? table: its kind, the statistics' row estimate, data and index bytes.
SELECT TABLE_TYPE, CAST(TABLE_ROWS AS SIGNED), CAST(DATA_LENGTH AS SIGNED),
       CAST(INDEX_LENGTH AS SIGNED)
FROM information_schema.TABLES
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
-- step: columns
-- Name, type (DATA_TYPE, then the whole COLUMN_TYPE), nullability, default, and extra
-- (auto_increment, generated), in the table's order.
SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE = 'NO', COLUMN_DEFAULT, EXTRA
FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
ORDER BY ORDINAL_POSITION
-- step: indexes
-- Each index's name, uniqueness, and its columns in order, a descending one marked.
SELECT INDEX_NAME, MIN(NON_UNIQUE),
       GROUP_CONCAT(CONCAT(COLUMN_NAME, IF(COLLATION = 'D', ' DESC', ''))
                    ORDER BY SEQ_IN_INDEX SEPARATOR ', ')
FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
GROUP BY INDEX_NAME
ORDER BY INDEX_NAME = 'PRIMARY' DESC, INDEX_NAME
-- step: foreign-keys
SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = ? AND TABLE_NAME = ?
-- step: create
-- The server's own DDL of {table} (`schema`.`name`, quoted).
SHOW CREATE TABLE {table}
-- step: common
-- The values {column} takes in up to 100,000 rows of {table}, most frequent first, and
-- how many rows were read.
SELECT CAST(v AS CHAR), n, SUM(n) OVER ()
FROM (SELECT {column} AS v, COUNT(*) AS n
      FROM (SELECT {column} FROM {table} LIMIT 100000) s
      GROUP BY {column}) c
ORDER BY n DESC
LIMIT 16
-- step: widths
-- The average size in bytes of {columns} (LENGTH of each), over up to 1,000 rows.
SELECT {widths} FROM (SELECT {columns} FROM {table} LIMIT 1000) s
-- step: max-id
-- The largest id ({id}), for the arrival rate: ids handed out over the sample.
SELECT MAX({id}) FROM {table}
-- step: count-states
SELECT CAST({column} AS CHAR), COUNT(*) FROM {table} GROUP BY {column} ORDER BY 2 DESC
-- step: statements
-- The statements (their digests: literals replaced by ?) that name the table, most
-- called first, where performance_schema keeps them and this account may read them.
-- ? schema, ? the table's name as a pattern.
SELECT DIGEST_TEXT, CAST(COUNT_STAR AS SIGNED), AVG_TIMER_WAIT / 1e9
FROM performance_schema.events_statements_summary_by_digest
WHERE SCHEMA_NAME = ? AND DIGEST_TEXT LIKE ?
ORDER BY COUNT_STAR DESC
LIMIT 10
