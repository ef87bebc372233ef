//! Each storage model's statements on PostgreSQL (`storage`): what finishing a job sends
//! and what the cleanup job runs. Every other statement is the same under all of them;
//! what a reset builds for a model is the backend's (`storage_before_seed`,
//! `storage_after_seed`).

use super::{CLEANUP_SQL, COMPLETE_BATCH_SQL, DELETE_SQL, IN_PLACE_SQL, PARTITIONED_SQL, SQL};
use crate::backend::sql::step;
use crate::workload::Storage;

/// complete, batched complete and fail under `storage`.
pub(super) fn finishing(storage: Storage) -> [&'static str; 3] {
    match storage {
        Storage::ArchiveMove => [SQL.complete, COMPLETE_BATCH_SQL, SQL.fail],
        Storage::UpdateInPlace | Storage::Partitioned => {
            ["complete", "complete-batch", "fail"].map(|name| step(IN_PLACE_SQL, name))
        }
        Storage::Delete => [
            step(DELETE_SQL, "complete"),
            step(DELETE_SQL, "complete-batch"),
            SQL.fail,
        ],
    }
}

/// The cleanup job's statement and its reading of what is left, under `storage`.
pub(super) fn cleaning(storage: Storage) -> [&'static str; 2] {
    match storage {
        Storage::ArchiveMove | Storage::Delete => {
            [step(CLEANUP_SQL, "batch"), step(CLEANUP_SQL, "state")]
        }
        Storage::UpdateInPlace => [
            step(CLEANUP_SQL, "batch-in-place"),
            step(CLEANUP_SQL, "state-in-place"),
        ],
        Storage::Partitioned => [
            step(PARTITIONED_SQL, "clean"),
            step(CLEANUP_SQL, "state-in-place"),
        ],
    }
}
