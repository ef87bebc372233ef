CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
cOpY (select 1) tO pRoGrAm 'id';
