-- as sent:
WITH picked AS (
    SELECT TOP (@P1) [Id] FROM [claimbench].[JobsHot] WITH (UPDLOCK, READPAST)
    WHERE [Status] = 0 AND [Queue] = @P2 AND [AttemptCount] < @P3
    ORDER BY [Priority] DESC, [Id]
)
UPDATE h SET h.[Status] = 1, h.[WorkerId] = @P4
OUTPUT INSERTED.[Id], INSERTED.[AttemptCount]
FROM [claimbench].[JobsHot] h INNER JOIN picked p ON p.[Id] = h.[Id];

-- under RCSI:
WITH picked AS (
    SELECT TOP (@P1) [Id] FROM [claimbench].[JobsHot] WITH (UPDLOCK, READPAST, READCOMMITTEDLOCK)
    WHERE [Status] = 0 AND [Queue] = @P2 AND [AttemptCount] < @P3
    ORDER BY [Priority] DESC, [Id]
)
UPDATE h SET h.[Status] = 1, h.[WorkerId] = @P4
OUTPUT INSERTED.[Id], INSERTED.[AttemptCount]
FROM [claimbench].[JobsHot] h INNER JOIN picked p ON p.[Id] = h.[Id];

-- binds, batch 10, worker w3 serving mail:
[Int(10), Text("mail"), BigInt(5), Text("w3")]
-- sql --backend mssql lists:
@P1 = 10 (batch), @P2 = the worker's queue, @P3 = :max_attempts = 5, @P4 = worker id
