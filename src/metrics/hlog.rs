//! Claim latency one histogram per second, written as an HdrHistogram interval log
//! (`.hlog`) beside run.json: the format HistogramLogAnalyzer and every HdrHistogram
//! library read, so a latency spike can be placed in time with someone else's tools.
//!
//! A worker cannot keep a histogram per second (about 170 KB each at these bounds: a
//! 16-worker, 10-minute trial would hold 1.6 GB), so [`PerSecond`] keeps the current
//! second's values and, when the second changes, only their (value, count) pairs as the
//! histogram would count them. The trial's log is built at the end, one second at a
//! time across all workers.

use crate::metrics::new_histogram;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// The tag of claim-latency intervals in the log.
pub const CLAIM_TAG: &str = "claim";

/// One worker's recording split by second since the trial started.
#[derive(Debug, Clone, Default)]
pub struct PerSecond {
    sec: usize,
    /// The current second's values as recorded, encoded when the second ends. Not a
    /// histogram: ending a second walked and zeroed all of one (170 KB), which was the
    /// largest of claimbench's own costs per claim on a worker (benches/
    /// claim_instructions.sh), and each record touched a line of it beside the
    /// trial's own histogram.
    current: Vec<u32>,
    /// Finished seconds, in order: (second, its recorded values and counts as LEB128
    /// varints, each value as its distance from the one before: about 3 bytes a
    /// distinct value, where (value, count) pairs took 16 and a decoded histogram takes
    /// 170 KB. An hour of a busy worker's seconds is a few hundred KB.) A busy second
    /// may be in more than one part.
    done: Vec<(usize, Vec<u8>)>,
}

/// The most values a second keeps before they are encoded (256 KB): a worker claiming
/// faster than this per second has its second in several parts.
const SECOND_VALUES: usize = 1 << 16;

/// The bounds' shape, to read each value as the histogram would count it.
fn template() -> &'static Histogram<u64> {
    static TEMPLATE: std::sync::OnceLock<Histogram<u64>> = std::sync::OnceLock::new();
    TEMPLATE.get_or_init(new_histogram)
}

impl PerSecond {
    /// Records `value_us` in second `sec`; seconds only move forward for one worker.
    /// A value above the bounds counts as their highest, as the histogram's
    /// saturating record does.
    pub fn record(&mut self, sec: usize, value_us: u64) {
        if sec != self.sec || self.current.len() >= SECOND_VALUES {
            self.flush();
            self.sec = sec;
        }
        // Above the bounds is clamped when the second is encoded: nothing but a push
        // per claim here.
        self.current.push(value_us.min(u64::from(u32::MAX)) as u32);
    }

    /// The current second, encoded as the histogram's recorded values (each value at
    /// the highest of its bucket) would be; empty when nothing was recorded in it.
    fn current_encoded(&self) -> Vec<u8> {
        let h = template();
        let mut values: Vec<u64> = self
            .current
            .iter()
            .map(|&v| h.highest_equivalent(u64::from(v).min(h.high())))
            .collect();
        values.sort_unstable();
        let mut out = Vec::new();
        let mut last = 0;
        for run in values.chunk_by(|a, b| a == b) {
            leb128(&mut out, run[0] - last);
            leb128(&mut out, run.len() as u64);
            last = run[0];
        }
        out
    }

    fn flush(&mut self) {
        if !self.current.is_empty() {
            self.done.push((self.sec, self.current_encoded()));
            self.current.clear();
        }
    }

    /// Folds another worker's seconds into this one (end of trial only).
    pub fn merge(&mut self, other: &PerSecond) {
        self.flush();
        self.done.extend(other.done.iter().cloned());
        if !other.current.is_empty() {
            self.done.push((other.sec, other.current_encoded()));
        }
    }

    /// Every part (a worker's second, encoded) with the current second's, by second.
    fn parts(&self) -> Vec<(usize, Vec<u8>)> {
        let mut parts = self.done.clone();
        parts.push((self.sec, self.current_encoded()));
        parts.retain(|(_, bytes)| !bytes.is_empty());
        parts.sort_by_key(|(sec, _)| *sec);
        parts
    }

    /// Every second that saw a recording, in order, with its histogram (all workers
    /// summed), one at a time: a histogram at these bounds is about 170 KB, so an hour's
    /// seconds built at once would hold 600 MB where one reused holds one.
    pub fn each_second(&self, mut f: impl FnMut(usize, &Histogram<u64>)) {
        let parts = self.parts();
        let mut h = new_histogram();
        for group in parts.chunk_by(|a, b| a.0 == b.0) {
            h.reset();
            group
                .iter()
                .for_each(|(_, bytes)| add_encoded(&mut h, bytes));
            f(group[0].0, &h);
        }
    }

    /// The seconds `from..to` summed into one histogram.
    pub fn between(&self, from: usize, to: usize) -> Histogram<u64> {
        let mut h = new_histogram();
        for (_, bytes) in self
            .parts()
            .iter()
            .filter(|(sec, _)| (from..to).contains(sec))
        {
            add_encoded(&mut h, bytes);
        }
        h
    }

    /// The interval log's text: StartTime and BaseTime are the trial's start, each
    /// interval is one second after it, values in µs (the max column in ms).
    pub fn encode(&self, trial_start: SystemTime, title: &str) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut serializer = V2DeflateSerializer::new();
        let mut writer = IntervalLogWriterBuilder::new()
            .add_comment(&format!(
                "claimbench {}: {title}",
                env!("CARGO_PKG_VERSION")
            ))
            .add_comment("[Histogram log format version 1.3]")
            .add_comment("claim latency of non-empty claims in the steady window, µs")
            .with_start_time(trial_start)
            .with_base_time(trial_start)
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut out, &mut serializer)?;
        let tag = Tag::new(CLAIM_TAG);
        let mut failed = None;
        self.each_second(|sec, h| {
            if failed.is_none()
                && let Err(e) = writer.write_histogram(
                    h,
                    Duration::from_secs(sec as u64),
                    Duration::from_secs(1),
                    tag,
                )
            {
                failed = Some(std::io::Error::other(format!("{e:?}")));
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(out)
    }
}

fn leb128(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Records a second [`PerSecond`] encoded into `h`.
fn add_encoded(h: &mut Histogram<u64>, mut bytes: &[u8]) {
    let mut next = || {
        let (mut v, mut shift) = (0u64, 0);
        while let Some((&b, rest)) = bytes.split_first() {
            bytes = rest;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
            shift += 7;
        }
        None
    };
    let mut value = 0;
    while let (Some(delta), Some(count)) = (next(), next()) {
        value += delta;
        h.saturating_record_n(value, count);
    }
}

/// Why an interval log cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not an HdrHistogram interval log: {reason}")]
    Format { path: String, reason: String },
}

/// Reads an interval log's histograms with HdrHistogram's own parser and decoder:
/// (start offset, histogram) per interval carrying `tag`.
pub fn read(path: &Path, tag: &str) -> Result<Vec<(Duration, Histogram<u64>)>, ReadError> {
    let name = path.display().to_string();
    let bytes =
        crate::input_file::read_bytes(path, crate::input_file::RESULTS_CAP, "an interval log")
            .map_err(|e| ReadError::Io {
                path: name.clone(),
                source: std::io::Error::other(e.to_string()),
            })?;
    let bad = |reason: String| ReadError::Format {
        path: name.clone(),
        reason,
    };
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(&bytes) {
        let entry = entry.map_err(|e| bad(format!("{e:?}")))?;
        if let LogEntry::Interval(i) = entry
            && i.tag().map(|t| t.as_str()) == Some(tag)
        {
            let raw = base64::Engine::decode(
                &base64::engine::general_purpose::STANDARD,
                i.encoded_histogram(),
            )
            .map_err(|e| bad(e.to_string()))?;
            let h: Histogram<u64> = super::decode_v2(&raw).map_err(|e| bad(e.to_string()))?;
            out.push((i.start_timestamp(), h));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the histogram itself: each second read back equals one histogram that
    /// recorded the same values, whatever their spread (every bucket size, the bounds'
    /// edges, above them), for seconds split into parts by a fast worker.
    #[test]
    fn each_second_reads_back_what_a_histogram_of_its_values_counts() {
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};
        let mut rng = SmallRng::seed_from_u64(59);
        let mut kept = PerSecond::default();
        let mut want: Vec<Histogram<u64>> = (0..4).map(|_| new_histogram()).collect();
        for (sec, h) in want.iter_mut().enumerate() {
            // The second of a fast worker: more values than one part holds.
            let n = if sec == 2 {
                SECOND_VALUES * 2 + 7
            } else {
                5_000
            };
            for _ in 0..n {
                let v = match rng.gen_range(0..5) {
                    0 => rng.gen_range(0..2_048),
                    1 => rng.gen_range(0..1_000_000),
                    2 => rng.gen_range(0..template().high()),
                    3 => template().high() + rng.gen_range(0..1_000),
                    _ => 1u64 << rng.gen_range(0..40),
                };
                kept.record(sec, v);
                h.saturating_record(v);
            }
        }
        let mut seen = 0;
        kept.each_second(|sec, h| {
            assert_eq!(h, &want[sec], "second {sec}");
            seen += 1;
        });
        assert_eq!(seen, 4);
        assert!(kept.done.iter().filter(|(sec, _)| *sec == 2).count() >= 3);
    }

    #[test]
    fn seconds_sum_workers_and_round_trip_through_the_log() {
        let mut a = PerSecond::default();
        let mut b = PerSecond::default();
        for (sec, v) in [(1, 100), (1, 200), (2, 5_000), (4, 70)] {
            a.record(sec, v);
        }
        for (sec, v) in [(1, 300), (3, 900), (4, 80)] {
            b.record(sec, v);
        }
        a.merge(&b);
        let mut secs = Vec::new();
        a.each_second(|sec, h| secs.push((sec, h.len(), h.max())));
        assert_eq!(
            secs.iter().map(|s| (s.0, s.1)).collect::<Vec<_>>(),
            vec![(1, 3), (2, 1), (3, 1), (4, 2)]
        );
        assert_eq!(a.between(1, 3).len(), 4);
        assert_eq!(a.between(3, 9).max(), 900);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.hlog");
        let log = a
            .encode(
                SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
                "t",
            )
            .unwrap();
        std::fs::write(&path, log).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("#[StartTime: 1700000000.000"), "{text}");
        assert!(text.contains("Tag=claim,2.000,1.000,5.003,"), "{text}");
        let back = read(&path, CLAIM_TAG).unwrap();
        assert_eq!(back.len(), 4);
        assert_eq!(back[0].0, Duration::from_secs(1));
        assert_eq!(back[0].1.len(), 3);
        assert_eq!(back[0].1.max(), secs[0].2);
        assert!(read(&path, "other").unwrap().is_empty());
    }

    #[test]
    fn a_file_that_is_not_a_log_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.hlog");
        std::fs::write(&path, "Tag=claim,1.0,1.0,1.0,!!!notbase64\n").unwrap();
        let e = read(&path, CLAIM_TAG).unwrap_err().to_string();
        assert!(e.contains("bad.hlog"), "{e}");
    }
}
