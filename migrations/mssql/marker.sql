-- The marker: claimbench created {SCHEMA}, so a later run may drop its tables there
-- (src/backend/ownership.rs). Created with the schema; drop.sql leaves it in place.
IF OBJECT_ID(N'[{SCHEMA}].[claimbench_schema]', N'U') IS NULL
    CREATE TABLE [{SCHEMA}].[claimbench_schema] (
        [CreatedBy]    varchar(100) NOT NULL CONSTRAINT [DF_claimbench_schema_By] DEFAULT 'claimbench',
        [CreatedAtUtc] datetime2(7) NOT NULL CONSTRAINT [DF_claimbench_schema_At] DEFAULT SYSUTCDATETIME()
    );
