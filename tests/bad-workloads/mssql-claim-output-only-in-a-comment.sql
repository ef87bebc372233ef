UPDATE TOP (:batch) [{SCHEMA}].[JobsHot] SET [Status] = 1, [WorkerId] = :worker_id -- OUTPUT INSERTED.[Id]
WHERE [Status] = 0
