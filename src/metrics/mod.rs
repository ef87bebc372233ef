//! Per-worker recording: HdrHistograms and per-second counters that one worker owns
//! alone, merged once at the end of a trial. Nothing here is shared on the hot path.

pub mod hlog;

use base64::Engine;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Highest value a latency histogram tracks: 10 minutes in µs. Larger values saturate.
const MAX_US: u64 = 600_000_000;
/// Significant digits, as the metric definitions (docs/metrics.md) fix them.
const SIGFIG: u8 = 3;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_US, SIGFIG).expect("static bounds are valid")
}

/// What one worker measured in one trial.
#[derive(Debug, Clone)]
pub struct WorkerMetrics {
    /// Wall time of claims that returned at least one job, µs (after warm-up).
    pub claim_latency: Histogram<u64>,
    /// Wall time of claims that returned nothing, µs (after warm-up).
    pub empty_claim_latency: Histogram<u64>,
    /// Per job: eligible → claimed, µs, computed by the server (after warm-up).
    pub queue_wait: Histogram<u64>,
    /// Jobs claimed and completed per second since the trial started (warm-up included).
    pub claimed_per_s: Vec<u32>,
    pub completed_per_s: Vec<u32>,
    /// `claim_latency` split by second since the trial started, for the `.hlog`.
    pub claim_seconds: crate::metrics::hlog::PerSecond,
    pub counts: Counts,
}

/// Event counts over the whole trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counts {
    pub claim_calls: u64,
    /// Claim calls started after warm-up (the claims/s numerator).
    pub claim_calls_steady: u64,
    pub empty_claims: u64,
    pub jobs_claimed: u64,
    /// Jobs claimed after warm-up (the steady-state numerator).
    pub jobs_claimed_steady: u64,
    pub jobs_completed: u64,
    pub jobs_completed_steady: u64,
    pub jobs_failed: u64,
    pub jobs_dead_lettered: u64,
    /// Candidates a claim read and did not get: a conditional update or a
    /// compare-and-set that changed 0 rows, a lease the lock service refused.
    pub lost_races: u64,
    /// Starts refused by the ownership gate.
    pub start_refused: u64,
    /// Completions or failures that found the job no longer owned.
    pub finish_refused: u64,
    /// Heartbeats that found the job no longer owned (rescued while its handler ran).
    #[serde(default)]
    pub heartbeats_refused: u64,
    /// Time slept between a retryable claim error and the next try, µs: not part of
    /// claim latency, which is the claim calls' own time.
    #[serde(default)]
    pub retry_backoff_us: u64,
    /// Claimed jobs dropped by the injected abandon fault.
    pub abandoned: u64,
    /// Unstarted jobs handed back when the trial stopped.
    pub released_at_stop: u64,
    pub deadlocks: u64,
    pub serialization_failures: u64,
    pub lock_timeouts: u64,
    /// Statements sent again after a retryable error.
    pub retries: u64,
    /// Of those, claims: a claim call that failed with a retryable error (on a Galera
    /// cluster, mostly a certification failure or a brute-force abort) and was made
    /// again. A claim's attempts are `claim_calls + claim_retries`.
    #[serde(default)]
    pub claim_retries: u64,
    /// Of those, claims the server refused a lock (`NOWAIT` on a locked row, or a lock
    /// timeout): counted apart, since such a claim's refusals are what it costs.
    #[serde(default)]
    pub claim_lock_refusals: u64,
    /// Times a worker lost its connection and opened a new one (injected kills).
    pub reconnects: u64,
    /// Worker time spent without a connection, summed over workers, µs: from the
    /// failed call to the new connection.
    pub downtime_us: u64,
    /// The longest one worker went without a connection, µs.
    pub max_outage_us: u64,
    /// Claimed jobs a worker held when its connection died: left to the rescuer.
    pub stranded_by_loss: u64,
    /// Effects whose write failed with the connection: committed or not, nobody can
    /// say, so the ledger does not count the run and the effects table may.
    pub executions_in_doubt: u64,
    /// Claims that failed with the connection: their rows may be claimed in the
    /// database without the worker knowing (the rescuer returns them).
    pub claims_in_doubt: u64,
    /// Runs whose worker crashed after starting them (injected).
    pub crashed_after_start: u64,
    /// Runs whose handler hung past the lease (injected).
    pub hangs: u64,
    /// Jobs a hang held up: the hung run and the rest of its batch.
    pub hung_batch: u64,
    /// Runs of poison jobs, each a failure.
    pub poisoned_runs: u64,
    /// Claims that returned more rows than their batch asked for, and the most rows one
    /// returned.
    pub over_claims: u64,
    pub most_claimed: u64,
    /// Idle waits of a listening strategy (`notify`) that a NOTIFY ended, rather than
    /// its longest back-off.
    #[serde(default)]
    pub wakeups: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.claim_calls += o.claim_calls;
        self.claim_calls_steady += o.claim_calls_steady;
        self.empty_claims += o.empty_claims;
        self.jobs_claimed += o.jobs_claimed;
        self.jobs_claimed_steady += o.jobs_claimed_steady;
        self.jobs_completed += o.jobs_completed;
        self.jobs_completed_steady += o.jobs_completed_steady;
        self.jobs_failed += o.jobs_failed;
        self.jobs_dead_lettered += o.jobs_dead_lettered;
        self.lost_races += o.lost_races;
        self.start_refused += o.start_refused;
        self.finish_refused += o.finish_refused;
        self.heartbeats_refused += o.heartbeats_refused;
        self.retry_backoff_us += o.retry_backoff_us;
        self.abandoned += o.abandoned;
        self.released_at_stop += o.released_at_stop;
        self.deadlocks += o.deadlocks;
        self.serialization_failures += o.serialization_failures;
        self.lock_timeouts += o.lock_timeouts;
        self.retries += o.retries;
        self.claim_retries += o.claim_retries;
        self.claim_lock_refusals += o.claim_lock_refusals;
        self.reconnects += o.reconnects;
        self.downtime_us += o.downtime_us;
        self.max_outage_us = self.max_outage_us.max(o.max_outage_us);
        self.stranded_by_loss += o.stranded_by_loss;
        self.executions_in_doubt += o.executions_in_doubt;
        self.claims_in_doubt += o.claims_in_doubt;
        self.crashed_after_start += o.crashed_after_start;
        self.hangs += o.hangs;
        self.hung_batch += o.hung_batch;
        self.poisoned_runs += o.poisoned_runs;
        self.over_claims += o.over_claims;
        self.most_claimed = self.most_claimed.max(o.most_claimed);
        self.wakeups += o.wakeups;
    }
}

impl Default for WorkerMetrics {
    fn default() -> Self {
        WorkerMetrics {
            claim_latency: new_histogram(),
            empty_claim_latency: new_histogram(),
            queue_wait: new_histogram(),
            claimed_per_s: Vec::new(),
            completed_per_s: Vec::new(),
            claim_seconds: crate::metrics::hlog::PerSecond::default(),
            counts: Counts::default(),
        }
    }
}

/// Adds `n` to second `sec` of a series, growing it as the trial goes on.
pub fn bump(series: &mut Vec<u32>, sec: usize, n: u32) {
    if series.len() <= sec {
        series.resize(sec + 1, 0);
    }
    series[sec] += n;
}

pub fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(MAX_US)) as u64
}

impl WorkerMetrics {
    /// Folds another worker's recording into this one (end of trial only).
    pub fn merge(&mut self, other: &WorkerMetrics) {
        self.claim_latency
            .add(&other.claim_latency)
            .expect("same bounds");
        self.empty_claim_latency
            .add(&other.empty_claim_latency)
            .expect("same bounds");
        self.queue_wait.add(&other.queue_wait).expect("same bounds");
        merge_series(&mut self.claimed_per_s, &other.claimed_per_s);
        merge_series(&mut self.completed_per_s, &other.completed_per_s);
        self.claim_seconds.merge(&other.claim_seconds);
        self.counts.add(&other.counts);
    }
}

fn merge_series(into: &mut Vec<u32>, from: &[u32]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a += b;
    }
}

/// A histogram as results store it: the percentiles a person reads, plus the whole
/// histogram in HdrHistogram's V2 format (base64) so runs can be merged and re-analysed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistogramSummary {
    pub count: u64,
    pub min_us: u64,
    pub mean_us: f64,
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
    pub hdr_v2_base64: String,
}

impl Default for HistogramSummary {
    /// The empty histogram's summary, encoded once: serde builds a default for every
    /// trial it reads (`#[serde(default)]`), and encoding an empty histogram each time
    /// was most of reading a thousand nights.
    fn default() -> Self {
        static EMPTY: std::sync::OnceLock<HistogramSummary> = std::sync::OnceLock::new();
        EMPTY
            .get_or_init(|| HistogramSummary::from_histogram(&new_histogram()))
            .clone()
    }
}

impl HistogramSummary {
    pub fn from_histogram(h: &Histogram<u64>) -> HistogramSummary {
        // The compressed V2 encoding (cookie 0x1c849314): what HdrHistogram's own
        // libraries and HistogramLogAnalyzer read. Runs written before it used the
        // uncompressed one (0x1c849313); the deserializer reads both.
        let mut buf = Vec::new();
        V2DeflateSerializer::new()
            .serialize(h, &mut buf)
            .expect("serializing into a Vec cannot fail");
        let (count, q) = (h.len(), |p: f64| h.value_at_quantile(p));
        HistogramSummary {
            count,
            min_us: if count == 0 { 0 } else { h.min() },
            mean_us: h.mean(),
            p50_us: q(0.5),
            p90_us: q(0.9),
            p99_us: q(0.99),
            p999_us: q(0.999),
            max_us: h.max(),
            hdr_v2_base64: base64::engine::general_purpose::STANDARD.encode(buf),
        }
    }

    /// Decodes the stored histogram (for merging repetitions and re-analysis).
    pub fn histogram(&self) -> Result<Histogram<u64>, HistogramError> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(&self.hdr_v2_base64)?;
        decode_v2(&bytes)
    }
}

/// Why a stored histogram cannot be read back or merged (a hand-edited or foreign
/// run.json, or one written with other histogram bounds).
#[derive(Debug, thiserror::Error)]
pub enum HistogramError {
    #[error("histogram is not base64")]
    NotBase64(#[from] base64::DecodeError),
    #[error("histogram is not HdrHistogram V2")]
    NotV2(#[from] hdrhistogram::serialization::DeserializeError),
    #[error("histogram refused: {0}")]
    Bounds(&'static str),
    #[error("histograms cannot be merged")]
    Merge(#[from] hdrhistogram::AdditionError),
}

/// The most a stored histogram may inflate to: hours of µs at 3 significant digits
/// encode to a few hundred KiB.
pub const MAX_HISTOGRAM_BYTES: usize = 16 << 20;

// HdrHistogram's cookies, with the word size (0x10) it ORs in.
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;
/// An uncompressed V2 header: cookie, payload length, offset, digits, low, high, ratio.
const V2_HEADER: usize = 40;

/// Decodes a V2 histogram (compressed or not) from a file claimbench did not write
/// itself, so the lengths its header announces are held to what the bytes hold: the
/// decoder would otherwise allocate whatever a hand-edited header says (4 GiB for
/// `0xffffffff`), and a compressed one could inflate without end.
pub fn decode_v2(bytes: &[u8]) -> Result<Histogram<u64>, HistogramError> {
    let word = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
    };
    let inflated;
    let plain: &[u8] = match word(bytes, 0) {
        Some(V2_COMPRESSED_COOKIE) => {
            let len = word(bytes, 4).ok_or(HistogramError::Bounds("no length"))? as usize;
            let body = bytes.get(8..8 + len).ok_or(HistogramError::Bounds(
                "its compressed length runs past its end",
            ))?;
            let mut out = Vec::new();
            use std::io::Read;
            flate2::read::ZlibDecoder::new(body)
                .take(MAX_HISTOGRAM_BYTES as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|_| HistogramError::Bounds("it does not inflate"))?;
            if out.len() > MAX_HISTOGRAM_BYTES {
                return Err(HistogramError::Bounds("it inflates past 16 MiB"));
            }
            inflated = out;
            &inflated
        }
        _ => bytes,
    };
    if word(plain, 0) == Some(V2_COOKIE) {
        let payload = word(plain, 4).unwrap_or(u32::MAX) as usize;
        if plain.len() < V2_HEADER || payload > plain.len() - V2_HEADER {
            return Err(HistogramError::Bounds(
                "its header announces more counts than it holds",
            ));
        }
        if word(plain, 12).is_none_or(|digits| digits > 5) {
            return Err(HistogramError::Bounds("more than 5 significant digits"));
        }
    }
    Ok(Deserializer::new().deserialize(&mut &plain[..])?)
}

/// Merges stored histograms (e.g. all repetitions of a cell) into one summary.
pub fn merge_summaries<'a>(
    parts: impl IntoIterator<Item = &'a HistogramSummary>,
) -> Result<HistogramSummary, HistogramError> {
    Ok(HistogramSummary::from_histogram(&merge_histograms(parts)?))
}

/// The stored histograms of `parts` merged, not encoded again: for a reader that wants
/// only its percentiles (encoding a merge costs more than reading it).
pub fn merge_histograms<'a>(
    parts: impl IntoIterator<Item = &'a HistogramSummary>,
) -> Result<Histogram<u64>, HistogramError> {
    let mut h = new_histogram();
    for p in parts {
        h.add(p.histogram()?)?;
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a run.json whose histogram header announced a 4 GiB payload made
    /// the decoder allocate it; a compressed one could inflate without bound.
    #[test]
    fn a_stored_histogram_is_held_to_what_its_bytes_hold() {
        use hdrhistogram::serialization::V2Serializer;
        let mut h = new_histogram();
        h.record(1234).unwrap();
        let mut plain = Vec::new();
        V2Serializer::new().serialize(&h, &mut plain).unwrap();
        assert_eq!(decode_v2(&plain).unwrap().len(), 1);
        let mut lying = plain.clone();
        lying[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        let e = decode_v2(&lying).unwrap_err().to_string();
        assert!(e.contains("announces more counts"), "{e}");
        // A compressed histogram whose inner header lies the same way.
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&lying).unwrap();
        let body = z.finish().unwrap();
        let mut packed = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        packed.extend((body.len() as u32).to_be_bytes());
        packed.extend(&body);
        assert!(decode_v2(&packed).is_err());
        // And one that inflates past the cap.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&vec![0u8; MAX_HISTOGRAM_BYTES + 10]).unwrap();
        let body = z.finish().unwrap();
        let mut bomb = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        bomb.extend((body.len() as u32).to_be_bytes());
        bomb.extend(&body);
        let e = decode_v2(&bomb).unwrap_err().to_string();
        assert!(e.contains("16 MiB"), "{e}");
        // What claimbench writes itself reads back.
        let s = HistogramSummary::from_histogram(&h);
        assert_eq!(s.histogram().unwrap().len(), 1);
    }

    #[test]
    fn merge_adds_histograms_series_and_counts() {
        let mut a = WorkerMetrics::default();
        let mut b = WorkerMetrics::default();
        a.claim_latency.record(100).unwrap();
        b.claim_latency.record(300).unwrap();
        bump(&mut a.claimed_per_s, 0, 5);
        bump(&mut b.claimed_per_s, 2, 7);
        a.counts.jobs_claimed = 5;
        b.counts.jobs_claimed = 7;
        a.merge(&b);
        assert_eq!(a.claim_latency.len(), 2);
        assert_eq!(a.claimed_per_s, vec![5, 0, 7]);
        assert_eq!(a.counts.jobs_claimed, 12);
    }

    #[test]
    fn v2_round_trip_keeps_every_value() {
        let mut h = new_histogram();
        for v in [1, 10, 100, 1000, 123_456] {
            h.record(v).unwrap();
        }
        let s = HistogramSummary::from_histogram(&h);
        let back = s.histogram().unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        let merged = merge_summaries([&s, &s]).unwrap();
        assert_eq!(merged.count, 10);
        assert_eq!(merged.p50_us, s.p50_us);
    }

    #[test]
    fn histograms_are_stored_in_the_compressed_v2_encoding_and_old_ones_still_read() {
        use base64::Engine;
        use hdrhistogram::serialization::V2Serializer;
        let mut h = new_histogram();
        h.record(1234).unwrap();
        let s = HistogramSummary::from_histogram(&h);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&s.hdr_v2_base64)
            .unwrap();
        assert_eq!(
            bytes[..4],
            0x1c84_9314u32.to_be_bytes(),
            "compressed V2 cookie"
        );
        // A run.json written before used the uncompressed encoding.
        let mut old = Vec::new();
        V2Serializer::new().serialize(&h, &mut old).unwrap();
        assert_eq!(old[..4], 0x1c84_9313u32.to_be_bytes());
        let legacy = HistogramSummary {
            hdr_v2_base64: base64::engine::general_purpose::STANDARD.encode(old),
            ..s.clone()
        };
        assert_eq!(legacy.histogram().unwrap().max(), h.max());
    }

    #[test]
    fn empty_histogram_summary_is_all_zero() {
        let s = HistogramSummary::from_histogram(&new_histogram());
        assert_eq!((s.count, s.min_us, s.p99_us, s.max_us), (0, 0, 0, 0));
    }
}
