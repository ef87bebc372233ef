//! Pieces the MySQL and SQL Server backends share: a control connection that reopens
//! after the server drops it, and the sampler's JSON parameters. (PostgreSQL binds
//! arrays natively and keeps its control connection in tokio-postgres's own way.)

use super::{BackendError, ErrorKind};
use crate::workload::Workload;

/// The one control connection of a backend (reset, counters, reconciliation): opened
/// on first use, checked before each reuse (a server restart, or a kill, may have ended
/// it since), and dropped after a lost-connection error so the next call opens anew.
pub(crate) struct Control<C>(tokio::sync::Mutex<Option<C>>);

impl<C> Default for Control<C> {
    fn default() -> Self {
        Control(tokio::sync::Mutex::new(None))
    }
}

impl<C> Control<C> {
    /// Drops the connection: the next use opens a new one (on another server).
    pub(crate) async fn close(&self) {
        self.0.lock().await.take();
    }

    /// Runs `f` on the connection, opening it with `open` first when there is none.
    pub(crate) async fn run<T>(
        &self,
        open: impl AsyncFnOnce() -> Result<C, BackendError>,
        alive: impl AsyncFnOnce(&mut C) -> bool,
        f: impl AsyncFnOnce(&mut C) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        let mut guard = self.0.lock().await;
        if let Some(c) = guard.as_mut()
            && !alive(c).await
        {
            *guard = None;
        }
        let conn = match guard.as_mut() {
            Some(c) => c,
            None => guard.insert(open().await?),
        };
        let r = f(conn).await;
        if matches!(&r, Err(e) if e.kind() == ErrorKind::ConnectionLost) {
            *guard = None;
        }
        r
    }
}

/// `[1,2,3]`: a JSON array of numbers, for servers without array parameters.
pub(crate) fn json_numbers<T: std::fmt::Display>(xs: impl IntoIterator<Item = T>) -> String {
    let items: Vec<String> = xs.into_iter().map(|x| x.to_string()).collect();
    format!("[{}]", items.join(","))
}

/// The names of the queues that have a max workers limit, as a JSON array of strings.
pub(crate) fn capped_queues_json(workload: &Workload) -> String {
    let names: Vec<String> = workload
        .population
        .queues
        .iter()
        .filter(|q| q.max_workers.is_some())
        .map(|q| serde_json::Value::String(q.name.clone()).to_string())
        .collect();
    format!("[{}]", names.join(","))
}

/// The workload's queue names as a JSON array when it has more than one, else `[]`: the
/// sampler's per-queue oldest-pending probe is asked only when it says something new.
pub(crate) fn queues_json(workload: &Workload) -> String {
    let q = &workload.population.queues;
    if q.len() < 2 {
        return "[]".into();
    }
    serde_json::to_string(&q.iter().map(|q| q.name.as_str()).collect::<Vec<_>>())
        .expect("strings serialize")
}

/// `12.5,-,3`: one age per queue in ms, `-` for none.
pub(crate) fn queue_oldest(ages: &str) -> Vec<Option<f64>> {
    ages.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.trim().parse::<f64>().ok())
        .collect()
}

/// Per queue of the workload, its active count from `counts` (comma-separated, one per
/// capped queue in order), or `None` for queues without a limit.
pub(crate) fn queue_active(workload: &Workload, counts: &str) -> Vec<Option<i64>> {
    let mut counts = counts
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|n| n.trim().parse::<i64>().unwrap_or(0));
    workload
        .population
        .queues
        .iter()
        .map(|q| q.max_workers.and_then(|_| counts.next()))
        .collect()
}

/// Backends that bind no arrays get a batch's arrival ages as the oldest and an even
/// step (µs): job n of the batch arrived `oldest - n * step` µs before now. Within one
/// producer tick that is at most a tick's length off each job's own arrival time.
pub(crate) fn arrival_spread(ages_us: &[i64]) -> (i64, i64) {
    match (ages_us.first(), ages_us.last()) {
        (Some(&oldest), Some(&newest)) if ages_us.len() > 1 => {
            (oldest, (oldest - newest) / (ages_us.len() as i64 - 1))
        }
        (Some(&oldest), _) => (oldest, 0),
        _ => (0, 0),
    }
}

/// A declared enqueue step's batch of `n` jobs: each one's queue and priority, drawn
/// as the workload's population mixes them.
pub(crate) fn drawn(workload: &Workload, n: usize) -> (Vec<String>, Vec<i32>) {
    let draw = workload.population.job_draw();
    (0..n)
        .map(|_| {
            let (q, level) = draw.draw(rand::random::<f64>(), rand::random::<f64>());
            (q.to_string(), level)
        })
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampler_parameters_round_trip_per_capped_queue() {
        let w = Workload::parse(
            std::path::Path::new("w.toml"),
            "name = \"t\"\n[population]\nbacklog = 1\nqueues = [{ name = \"a\", max_workers = 2 }, { name = \"b\" }, { name = \"c\\\"d\", max_workers = 1 }]\n[matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [1]\n[trial]\nduration_s = 1\n",
        )
        .unwrap();
        assert_eq!(capped_queues_json(&w), r#"["a","c\"d"]"#);
        assert_eq!(queue_active(&w, "3,0"), vec![Some(3), None, Some(0)]);
        assert_eq!(queue_active(&w, ""), vec![None, None, None]);
        assert_eq!(json_numbers([1, 22]), "[1,22]");
        assert_eq!(queues_json(&w), r#"["a","b","c\"d"]"#);
        assert_eq!(queue_oldest("12.5,-,3"), vec![Some(12.5), None, Some(3.0)]);
        assert_eq!(queue_oldest(""), vec![]);
    }

    #[test]
    fn arrival_spread_runs_evenly_from_the_oldest() {
        assert_eq!(super::arrival_spread(&[3000, 2000, 1000]), (3000, 1000));
        assert_eq!(super::arrival_spread(&[700]), (700, 0));
        assert_eq!(super::arrival_spread(&[]), (0, 0));
    }
}
