//! `[cleanup]`, field by field.

use super::super::*;
use super::Validator;

/// The most rows one cleanup statement may remove: a bigger batch holds its locks and
/// its transaction's horizon for seconds, which is what batching exists to avoid.
const MAX_CLEANUP_BATCH: i64 = 100_000;

impl Validator<'_> {
    pub(super) fn cleanup(&self, c: raw::Cleanup) -> Result<Cleanup, WorkloadError> {
        let retain = self.secs("cleanup.retain_s", c.retain_s)?;
        let every = self.positive_secs("cleanup.every_s", c.every_s)?;
        if !(1..=MAX_CLEANUP_BATCH).contains(&c.batch) {
            return Err(self.err(
                "cleanup.batch",
                format!(
                    "{} is not allowed; give 1 to {MAX_CLEANUP_BATCH} rows per statement",
                    c.batch
                ),
            ));
        }
        Ok(Cleanup {
            retain,
            every,
            batch: c.batch as u32,
        })
    }
}
