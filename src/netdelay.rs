//! A network between two points on one host: a TCP proxy on loopback that holds every
//! chunk of bytes, in each direction, for half a round trip (plus jitter) before it
//! passes it on. claimbench puts one between an embedded standby and its primary (a
//! cross-zone standby), and one between the workers and the server (an application in
//! another zone), so both run where a round trip costs what it does in production.
//!
//! Why a proxy rather than `tc netem`: netem needs root and a network namespace, and on
//! loopback it would delay the control connections too; the proxy needs neither and
//! delays only what connects through it. Each direction of a connection is a reader
//! thread and a writer thread that sleeps until a chunk is due: an OS thread's sleep
//! overshoots by tens of microseconds, where an async runtime's 1 ms timer wheel
//! rounds every delay up to the next millisecond (a 5 ms round trip measured 8 ms that
//! way). Four threads per connection are cheap beside what they stand for, and every
//! user still measures the delay it actually added rather than trusting the figure.
//!
//! Bandwidth is not limited and order is kept: a chunk never overtakes the one before
//! it, as TCP's would not, so jitter stretches a burst instead of reordering it. Bytes
//! in flight when one side closes are still delivered, as a wire would; [`DelayProxy::cut`]
//! drops them instead, as a network that goes dark does.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

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

/// One proxied connection's sockets, to cut it from outside its threads.
struct Link {
    /// Set by a cut; a writer checks it, under this lock, before each write.
    cut: Mutex<bool>,
    client: TcpStream,
    server: TcpStream,
}

impl Link {
    fn cut(&self) {
        let mut cut = self.cut.lock().unwrap_or_else(|p| p.into_inner());
        *cut = true;
        let _ = self.client.shutdown(Shutdown::Both);
        let _ = self.server.shutdown(Shutdown::Both);
    }
}

/// What the accept thread and the proxy's owner share.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    links: Mutex<Vec<Arc<Link>>>,
}

/// A running proxy: connections to [`DelayProxy::addr`] reach `upstream` through the
/// delay. Dropping it closes the listener and every connection through it.
pub struct DelayProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<std::thread::JoinHandle<()>>,
}

/// How often the accept thread looks for a new connection or a stop.
const ACCEPT_POLL: Duration = Duration::from_millis(2);

impl DelayProxy {
    /// Listens on a free loopback port and forwards each connection to `upstream`.
    pub fn start(upstream: SocketAddr, delay: Delay) -> std::io::Result<DelayProxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let accept = std::thread::Builder::new()
            .name("claimbench-netdelay".into())
            .spawn(move || {
                let mut seed = 0u64;
                while !s.stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((client, _)) => {
                            seed += 1;
                            if let Ok(link) = forward(client, upstream, delay, seed) {
                                let mut links = s.links.lock().unwrap_or_else(|p| p.into_inner());
                                // Forget links both of whose sides are gone.
                                links.retain(|l| Arc::strong_count(l) > 1);
                                links.push(link);
                            }
                        }
                        Err(_) => std::thread::sleep(ACCEPT_POLL),
                    }
                }
            })?;
        Ok(DelayProxy {
            addr,
            shared,
            accept: Some(accept),
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
    /// once none will write again. New connections are accepted as before.
    pub fn cut(&self) {
        let links =
            std::mem::take(&mut *self.shared.links.lock().unwrap_or_else(|p| p.into_inner()));
        for l in links {
            l.cut();
        }
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.cut();
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// Connects to `upstream` and starts both directions of `client`'s connection.
fn forward(
    client: TcpStream,
    upstream: SocketAddr,
    delay: Delay,
    seed: u64,
) -> std::io::Result<Arc<Link>> {
    client.set_nonblocking(false)?;
    let server = TcpStream::connect(upstream)?;
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let link = Arc::new(Link {
        cut: Mutex::new(false),
        client: client.try_clone()?,
        server: server.try_clone()?,
    });
    pipe(
        client.try_clone()?,
        server.try_clone()?,
        delay,
        seed,
        link.clone(),
    )?;
    pipe(server, client, delay, !seed, link.clone())?;
    Ok(link)
}

/// One direction: a reader thread stamping each chunk with when it is due (no earlier
/// than the one before it) and a writer thread passing it on then.
fn pipe(
    mut from: TcpStream,
    mut to: TcpStream,
    delay: Delay,
    seed: u64,
    link: Arc<Link>,
) -> std::io::Result<()> {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::Builder::new()
        .name("claimbench-netdelay-read".into())
        .spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            let mut rng = SmallRng::seed_from_u64(seed);
            let mut last = Instant::now();
            while let Ok(n @ 1..) = from.read(&mut buf) {
                let due = (Instant::now() + delay.one_way(&mut rng)).max(last);
                last = due;
                if tx.send((due, buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        })?;
    std::thread::Builder::new()
        .name("claimbench-netdelay-write".into())
        .spawn(move || {
            while let Ok((due, bytes)) = rx.recv() {
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
                let cut = link.cut.lock().unwrap_or_else(|p| p.into_inner());
                if *cut || to.write_all(&bytes).is_err() {
                    return;
                }
            }
            // The other side closed: pass the close on, as TCP would.
            let _ = to.shutdown(Shutdown::Write);
        })?;
    Ok(())
}

/// CPU time, ms, the proxy threads now running in this process have used (all their
/// names start with `claimbench-netd`, as the kernel keeps them): what the network
/// costs, which is not the load generator's. Read from `/proc/self/task`; 0 where
/// there is none. A proxy thread that has ended is no longer counted.
pub fn thread_cpu_ms() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    let ticks = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .filter(|t| *t > 0)
        .unwrap_or(100) as u64;
    let mut total = 0;
    for task in tasks.flatten() {
        let dir = task.path();
        let is_proxy = std::fs::read_to_string(dir.join("comm"))
            .is_ok_and(|c| c.starts_with("claimbench-netd"));
        if !is_proxy {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else {
            continue;
        };
        // After the name's closing parenthesis: state is field 3, utime 14, stime 15.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let used: u64 = [11, 12]
            .iter()
            .filter_map(|&i| f.get(i)?.parse::<u64>().ok())
            .sum();
        total += used * 1000 / ticks;
    }
    total
}

/// A delay as a workload writes it: `"local"` (none), `"5ms"`, `"0.5ms"` or `"5ms±1ms"`
/// (also `"5ms+-1ms"`), the figures being the round trip and its spread.
pub fn parse(s: &str) -> Result<Delay, crate::invalid::Invalid> {
    let s = s.trim();
    if s == "local" {
        return Ok(Delay::default());
    }
    let (rtt, jitter) = match s.split_once('±').or_else(|| s.split_once("+-")) {
        Some((r, j)) => (ms(r)?, ms(j)?),
        None => (ms(s)?, Duration::ZERO),
    };
    if jitter > rtt {
        return Err(crate::invalid!(
            "the spread ({jitter:?}) is larger than the round trip ({rtt:?})"
        ));
    }
    Ok(Delay { rtt, jitter })
}

fn ms(s: &str) -> Result<Duration, crate::invalid::Invalid> {
    let s = s.trim();
    let n = s
        .strip_suffix("ms")
        .ok_or_else(|| format!("`{s}` is not a round trip in milliseconds (e.g. \"5ms\")"))?;
    match n.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=10_000.0).contains(&v) => {
            Ok(Duration::from_secs_f64(v / 1e3))
        }
        _ => Err(crate::invalid!(
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
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

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
    #[tokio::test]
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
        proxy.cut();
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
