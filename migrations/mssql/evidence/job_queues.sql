-- After a trial: the queue of every job of the capped queues, wherever the job ended, for
-- the ledger's exact max-workers figures. @P1 the capped queues' names as a JSON array.
SET NOCOUNT ON;
SELECT [Id], [Queue] FROM [{SCHEMA}].[JobsHot] WHERE [Queue] IN (SELECT [value] FROM OPENJSON(@P1))
UNION ALL
SELECT [Id], [Queue] FROM [{SCHEMA}].[JobsArchive] WHERE [Queue] IN (SELECT [value] FROM OPENJSON(@P1))
UNION ALL
SELECT [Id], [Queue] FROM [{SCHEMA}].[JobsDLQ] WHERE [Queue] IN (SELECT [value] FROM OPENJSON(@P1));
