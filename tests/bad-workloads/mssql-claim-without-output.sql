UPDATE TOP (:batch) [{SCHEMA}].[JobsHot] SET [Status] = 1, [WorkerId] = :worker_id WHERE [Status] = 0
