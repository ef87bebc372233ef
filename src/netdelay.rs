//! A network between two points on one host: a TCP proxy on loopback that holds every
//! chunk of bytes, in each direction, for half a round trip (plus jitter) before it
//! passes it on. claimbench puts one between an embedded standby and its primary (a
//! cross-zone standby), and one between the workers and the server (an application in
//! another zone), so both run where a round trip costs what it does in production.
//!
//! Why a proxy rather than `tc netem`: netem needs root and a network namespace, and on
//! loopback it would delay the control connections too; the proxy needs neither and
//! delays only what connects through it. Its cost: the timer's resolution (tokio's is
//! 1 ms, so a delay is rounded up to the next millisecond tick) and a copy per chunk.
//! That is why every user measures the delay it actually added rather than trusting
//! the configured figure.
//!
//! Bandwidth is not limited and order is kept: a chunk never overtakes the one before
//! it, as TCP's would not, so jitter stretches a burst instead of reordering it. Bytes
//! in flight when one side closes are still delivered, as a wire would.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// An added round trip: `rtt` on average, each one-way half spread uniformly by up to
/// ±`jitter`/2 (so a round trip by up to ±`jitter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Delay {
    pub rtt: Duration,
    pub jitter: Duration,
}

impl Delay {
    /// The delay of one direction, sampled.
    fn one_way(&self, rng: &mut SmallRng) -> Duration {
        let half = self.rtt / 2;
        if self.jitter.is_zero() {
            return half;
        }
        let spread = self.jitter.as_secs_f64() / 2.0;
        let s = half.as_secs_f64() + rng.gen_range(-spread..=spread);
        Duration::from_secs_f64(s.max(0.0))
    }
}

/// A running proxy: connections to [`DelayProxy::addr`] reach `upstream` through the
/// delay. It runs on its own thread and runtime, so it forwards bytes while its caller
/// blocks (a `pg_basebackup` through it) and its timers never wait behind a worker's
/// task. Dropping it closes the listener and every connection through it.
pub struct DelayProxy {
    addr: SocketAddr,
    /// Asks the proxy thread to cut every connection; it answers on the sender given.
    cut: tokio::sync::mpsc::UnboundedSender<std::sync::mpsc::Sender<()>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl DelayProxy {
    /// Listens on a free loopback port and forwards each connection to `upstream`.
    pub fn start(upstream: SocketAddr, delay: Delay) -> std::io::Result<DelayProxy> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let listener = {
            let _inside = runtime.enter();
            TcpListener::from_std(listener)?
        };
        let (shutdown, mut stop) = tokio::sync::oneshot::channel::<()>();
        let (cut, mut cuts) = tokio::sync::mpsc::unbounded_channel::<std::sync::mpsc::Sender<()>>();
        let thread = std::thread::Builder::new()
            .name("claimbench-netdelay".into())
            .spawn(move || {
                runtime.block_on(async move {
                    // Dropped at the end: every connection it opened ends with the proxy.
                    let mut connections = tokio::task::JoinSet::new();
                    let mut seed = 0u64;
                    loop {
                        tokio::select! {
                            _ = &mut stop => break,
                            Some(done) = cuts.recv() => {
                                // On this one thread no connection task runs while
                                // this does: none writes another byte once aborted.
                                connections.abort_all();
                                let _ = done.send(());
                            }
                            accepted = listener.accept() => {
                                let Ok((client, _)) = accepted else { continue };
                                seed += 1;
                                connections.spawn(forward(client, upstream, delay, seed));
                            }
                            // Reap finished connections so the set does not grow.
                            Some(_) = connections.join_next(), if !connections.is_empty() => {}
                        }
                    }
                })
            })?;
        Ok(DelayProxy {
            addr,
            cut,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Cuts every connection through the proxy at once, dropping the bytes it still
    /// holds (a zone going dark: what was still on its way never arrives), and returns
    /// once none will write again. New connections are accepted as before. Blocking.
    pub fn cut(&self) {
        let (done, wait) = std::sync::mpsc::channel();
        if self.cut.send(done).is_ok() {
            let _ = wait.recv();
        }
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        if let Some(s) = self.shutdown.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One proxied connection: both directions delayed, until both sides have closed.
async fn forward(client: TcpStream, upstream: SocketAddr, delay: Delay, seed: u64) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    tokio::join!(
        pipe(client_read, server_write, delay, seed),
        pipe(server_read, client_write, delay, !seed),
    );
}

/// Copies one direction, each chunk held until its arrival time; a chunk is due no
/// earlier than the one before it.
async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Delay,
    seed: u64,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let read = async move {
        let mut buf = vec![0u8; 64 * 1024];
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut last = Instant::now();
        while let Ok(n) = from.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let due = (Instant::now() + delay.one_way(&mut rng)).max(last);
            last = due;
            if tx.send((due, buf[..n].to_vec())).is_err() {
                break;
            }
        }
    };
    let write = async move {
        while let Some((due, bytes)) = rx.recv().await {
            tokio::time::sleep_until(due).await;
            if to.write_all(&bytes).await.is_err() {
                break;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(read, write);
}

/// A delay as a workload writes it: `"local"` (none), `"5ms"`, `"0.5ms"` or `"5ms±1ms"`
/// (also `"5ms+-1ms"`), the figures being the round trip and its spread.
pub fn parse(s: &str) -> Result<Delay, String> {
    let s = s.trim();
    if s == "local" {
        return Ok(Delay::default());
    }
    let (rtt, jitter) = match s.split_once('±').or_else(|| s.split_once("+-")) {
        Some((r, j)) => (ms(r)?, ms(j)?),
        None => (ms(s)?, Duration::ZERO),
    };
    if jitter > rtt {
        return Err(format!(
            "the spread ({jitter:?}) is larger than the round trip ({rtt:?})"
        ));
    }
    Ok(Delay { rtt, jitter })
}

fn ms(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let n = s
        .strip_suffix("ms")
        .ok_or_else(|| format!("`{s}` is not a round trip in milliseconds (e.g. \"5ms\")"))?;
    match n.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=10_000.0).contains(&v) => {
            Ok(Duration::from_secs_f64(v / 1e3))
        }
        _ => Err(format!(
            "`{s}`: the milliseconds must be a number from 0 to 10000"
        )),
    }
}

/// The name a delay goes by in results and plots: `"local"`, `"5ms"`, `"5ms±1ms"`.
pub fn label(d: &Delay) -> String {
    let f = |d: Duration| {
        let ms = d.as_secs_f64() * 1e3;
        format!("{}ms", (ms * 1000.0).round() / 1000.0)
    };
    match (d.rtt.is_zero(), d.jitter.is_zero()) {
        (true, _) => "local".into(),
        (false, true) => f(d.rtt),
        (false, false) => format!("{}±{}", f(d.rtt), f(d.jitter)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_parse_as_workloads_write_them() {
        assert_eq!(parse("local"), Ok(Delay::default()));
        let five = Delay {
            rtt: Duration::from_millis(5),
            jitter: Duration::ZERO,
        };
        assert_eq!(parse("5ms"), Ok(five));
        assert_eq!(
            parse("5ms±1ms"),
            Ok(Delay {
                jitter: Duration::from_millis(1),
                ..five
            })
        );
        assert_eq!(parse("5ms+-1ms"), parse("5ms±1ms"));
        assert_eq!(parse("0.5ms").unwrap().rtt, Duration::from_micros(500));
        assert!(parse("5").unwrap_err().contains("milliseconds"));
        assert!(parse("1ms±5ms").unwrap_err().contains("larger"));
        assert!(parse("-1ms").is_err());
        for s in ["local", "5ms", "0.5ms", "5ms±1ms"] {
            assert_eq!(label(&parse(s).unwrap()), s);
        }
    }

    #[test]
    fn jitter_stays_within_its_spread() {
        let d = parse("4ms±2ms").unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        for _ in 0..1000 {
            let one = d.one_way(&mut rng);
            assert!((Duration::from_millis(1)..=Duration::from_millis(3)).contains(&one));
        }
    }

    /// Bytes come back in order, whole, and a round trip through the proxy takes at
    /// least the configured delay: an echo server behind it, on real sockets.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_echo_through_the_proxy_is_whole_in_order_and_delayed() {
        let echo = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let upstream = echo.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = echo.accept().await {
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    while let Ok(n @ 1..) = s.read(&mut buf).await {
                        if s.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        let proxy = DelayProxy::start(upstream, parse("20ms±10ms").unwrap()).unwrap();
        let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
        let sent: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
        let began = std::time::Instant::now();
        let (mut r, mut w) = c.split();
        let (_, got) = tokio::join!(
            async {
                for chunk in sent.chunks(1000) {
                    w.write_all(chunk).await.unwrap();
                }
            },
            async {
                let mut got = vec![0u8; sent.len()];
                r.read_exact(&mut got).await.unwrap();
                got
            }
        );
        assert_eq!(got, sent);
        // The first byte alone needs a round trip of at least 20 ms - 10 ms.
        assert!(began.elapsed() >= Duration::from_millis(10));
        // A cut drops what the proxy holds and ends the connection; a new one works.
        w.write_all(b"lost").await.unwrap();
        tokio::task::block_in_place(|| proxy.cut());
        let mut rest = Vec::new();
        let _ = r.read_to_end(&mut rest).await;
        assert!(rest.is_empty(), "a cut connection delivered {rest:?}");
        let mut again = TcpStream::connect(proxy.addr()).await.unwrap();
        again.write_all(b"x").await.unwrap();
        let mut one = [0u8; 1];
        again.read_exact(&mut one).await.unwrap();
        assert_eq!(&one, b"x");
    }
}
