//! A job's number as the ledger counts it, in the id type of the table that holds it.
//!
//! The ledger, the effects table and the tally count jobs by a 64-bit number; numbers
//! claimbench hands out are dense (1, 2, 3, …), which is what keeps the tally's bitmaps
//! small over hours. A declared table whose ids are `uuid` or `text` holds the same
//! numbers written in its own type — a uuid whose high 64 bits are zero and whose low
//! 64 are the number (`lpad(to_hex(id), 32, '0')::uuid` in a seed step), text as the
//! number in decimal (`id::text`) — and its enqueue step inserts the ids claimbench
//! binds to `:ids`. So every id maps back exactly, with no table of ids to keep and no
//! hash that two jobs could share. An id the table made itself (`gen_random_uuid()`)
//! is not a number claimbench handed out: reading one is an error that says so, never a
//! job dropped or two jobs counted as one.

use bytes::{BufMut, BytesMut};
use std::error::Error;
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};

/// A job's number, bound and read as whichever of `bigint`, `integer`, `uuid` and
/// `text` the server typed the parameter or column (and arrays of them, through
/// postgres-types' impls for slices and vectors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobKey(pub i64);

type BoxError = Box<dyn Error + Sync + Send>;

/// What a table's ids must be for claimbench to count its jobs, said where one is not.
const HOW: &str = "a declared table's ids are the numbers claimbench hands out: the seed step writes each row's id from jobs_hot's (`lpad(to_hex(id), 32, '0')::uuid` for uuid ids, `id::text` for text ids) and the enqueue step inserts `:ids` rather than a default of its own (docs/strategies.md, Your own table)";

impl JobKey {
    /// The types a job's number is written in.
    pub fn is_id_type(ty: &Type) -> bool {
        matches!(
            *ty,
            Type::INT8 | Type::INT4 | Type::UUID | Type::TEXT | Type::VARCHAR
        )
    }

    /// The array types of [`JobKey::is_id_type`]'s (`:ids`).
    pub fn is_ids_type(ty: &Type) -> bool {
        matches!(
            *ty,
            Type::INT8_ARRAY
                | Type::INT4_ARRAY
                | Type::UUID_ARRAY
                | Type::TEXT_ARRAY
                | Type::VARCHAR_ARRAY
        )
    }
}

impl ToSql for JobKey {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        match *ty {
            Type::INT8 => self.0.to_sql(ty, out),
            Type::INT4 => i32::try_from(self.0)
                .map_err(|_| format!("job {} does not fit the table's integer id", self.0))?
                .to_sql(ty, out),
            Type::UUID => {
                out.put_u64(0);
                out.put_u64(self.0 as u64);
                Ok(IsNull::No)
            }
            _ => self.0.to_string().as_str().to_sql(ty, out),
        }
    }

    fn accepts(ty: &Type) -> bool {
        JobKey::is_id_type(ty)
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for JobKey {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<JobKey, BoxError> {
        match *ty {
            Type::INT8 => i64::from_sql(ty, raw).map(JobKey),
            Type::INT4 => i32::from_sql(ty, raw).map(|n| JobKey(n.into())),
            Type::UUID => {
                let b: [u8; 16] = raw.try_into().map_err(|_| "a uuid is 16 bytes")?;
                let (high, low) = (
                    u64::from_be_bytes(b[..8].try_into().expect("8 bytes")),
                    u64::from_be_bytes(b[8..].try_into().expect("8 bytes")),
                );
                match (high, i64::try_from(low)) {
                    (0, Ok(n)) => Ok(JobKey(n)),
                    _ => Err(format!(
                        "id {} is a uuid claimbench did not hand out: {HOW}",
                        uuid_text(&b)
                    )
                    .into()),
                }
            }
            _ => {
                let s = <&str>::from_sql(ty, raw)?;
                match s.parse::<i64>() {
                    Ok(n) if n.to_string() == s => Ok(JobKey(n)),
                    _ => Err(format!("id {s:?} is text claimbench did not hand out: {HOW}").into()),
                }
            }
        }
    }

    fn accepts(ty: &Type) -> bool {
        JobKey::is_id_type(ty)
    }
}

/// A uuid as PostgreSQL prints it, for a message.
fn uuid_text(b: &[u8; 16]) -> String {
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(k: JobKey, ty: &Type) -> BytesMut {
        let mut out = BytesMut::new();
        k.to_sql_checked(ty, &mut out).expect("binds");
        out
    }

    #[test]
    fn each_id_type_reads_back_the_number_it_was_sent() {
        for n in [1, 42, 60_000, i64::from(i32::MAX) + 1, i64::MAX] {
            for ty in [Type::INT8, Type::UUID, Type::TEXT, Type::VARCHAR] {
                let back = JobKey::from_sql(&ty, &sent(JobKey(n), &ty)).unwrap();
                assert_eq!(back, JobKey(n), "{ty}");
            }
        }
        let four = sent(JobKey(7), &Type::INT4);
        assert_eq!(JobKey::from_sql(&Type::INT4, &four).unwrap(), JobKey(7));
    }

    /// The seed step's SQL and the key agree: `lpad(to_hex(id), 32, '0')::uuid` of 42.
    #[test]
    fn a_number_as_a_uuid_is_the_seed_steps_expression() {
        let b: [u8; 16] = sent(JobKey(42), &Type::UUID)[..].try_into().unwrap();
        assert_eq!(uuid_text(&b), "00000000-0000-0000-0000-00000000002a");
    }

    #[test]
    fn an_id_claimbench_did_not_hand_out_is_an_error_that_says_how_to_write_them() {
        let random = hex::decode("3f2a9c1e7b5d4e8f9a0b1c2d3e4f5a6b").unwrap();
        let e = JobKey::from_sql(&Type::UUID, &random)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("3f2a9c1e-7b5d-4e8f-9a0b-1c2d3e4f5a6b") && e.contains("lpad(to_hex(id)"),
            "{e}"
        );
        // The low half alone a number, the high half not zero: still not one of ours.
        let mut high = [0u8; 16];
        high[0] = 1;
        high[15] = 5;
        assert!(JobKey::from_sql(&Type::UUID, &high).is_err());
        // Past i64: the top bit of the low half set.
        let mut top = [0u8; 16];
        top[8] = 0x80;
        assert!(JobKey::from_sql(&Type::UUID, &top).is_err());
        for text in ["job-7", "007", "+7", " 7", ""] {
            let e = JobKey::from_sql(&Type::TEXT, text.as_bytes()).unwrap_err();
            assert!(e.to_string().contains("id::text"), "{text:?}: {e}");
        }
    }

    #[test]
    fn an_integer_id_refuses_a_number_it_cannot_hold() {
        let mut out = BytesMut::new();
        let big = JobKey(i64::from(i32::MAX) + 1);
        assert!(big.to_sql_checked(&Type::INT4, &mut out).is_err());
    }

    #[test]
    fn arrays_of_each_id_type_are_accepted_as_ids() {
        for ty in [Type::INT8_ARRAY, Type::UUID_ARRAY, Type::TEXT_ARRAY] {
            assert!(<&[JobKey] as ToSql>::accepts(&ty), "{ty}");
            assert!(JobKey::is_ids_type(&ty), "{ty}");
        }
        assert!(!<&[JobKey] as ToSql>::accepts(&Type::FLOAT8_ARRAY));
    }
}
