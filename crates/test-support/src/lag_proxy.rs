//! A TCP proxy on a free loopback port that forwards to a target port late: every chunk it reads
//! is queued with its arrival time and written on when `arrival + delay` has come, in order, in
//! each direction. Put it between a replica and its primary to model replication lag.
//!
//! [`LagProxy::cut`] models the loss of the far host: every byte still queued (in transit) is
//! dropped, both sides of every connection are closed, and new connections are closed as soon as
//! they are accepted until [`LagProxy::resume`].
//!
//! Threads, not async: one accepting, and per connection one reader and one writer per direction.
//!
//! ```no_run
//! # use std::time::Duration;
//! let proxy = test_support::LagProxy::start(6379, Duration::from_millis(200)).unwrap();
//! let replica_of = proxy.port(); // connect here instead of 6379
//! ```

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The largest chunk read at once.
const CHUNK: usize = 16 * 1024;

/// A delaying, cuttable TCP proxy (see the module docs). Dropping it closes every connection and
/// joins its threads.
#[derive(Debug)]
pub struct LagProxy {
    port: u16,
    target_port: u16,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

/// Bytes queued in the proxy, not yet written on, per direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InTransit {
    /// From the connecting side (e.g. a replica) toward the target (its primary).
    pub toward_target: usize,
    /// From the target (a primary's replication stream) toward the connecting side.
    pub toward_client: usize,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    delay: Duration,
    cut: bool,
    closed: bool,
    next_id: u64,
    connections: HashMap<u64, Connection>,
    threads: Vec<JoinHandle<()>>,
}

#[derive(Debug)]
struct Connection {
    client: TcpStream,
    target: TcpStream,
    /// Index 0: toward the target; 1: toward the client.
    queues: [VecDeque<Item>; 2],
    /// Per direction: the end of the stream was passed on.
    ended: [bool; 2],
}

#[derive(Debug)]
enum Item {
    Data(Instant, Vec<u8>),
    /// The source closed its sending side: shut down the destination's after the data before it.
    Eof(Instant),
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl LagProxy {
    /// Listens on a free loopback port, forwarding each connection to `127.0.0.1:target_port`
    /// with `delay` each way.
    ///
    /// # Errors
    /// When no loopback port can be bound.
    pub fn start(target_port: u16, delay: Duration) -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                delay,
                ..State::default()
            }),
            changed: Condvar::new(),
        });
        let accept = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(format!("lag-proxy-{port}"))
                .spawn(move || accept_loop(&listener, target_port, &shared))?
        };
        Ok(Self {
            port,
            target_port,
            shared,
            accept: Some(accept),
        })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The port it forwards to.
    pub fn target_port(&self) -> u16 {
        self.target_port
    }

    /// The delay chunks read from now on get (chunks already queued keep their due time; order is
    /// kept, so a shorter delay waits behind earlier chunks).
    pub fn set_delay(&self, delay: Duration) {
        self.shared.lock().delay = delay;
    }

    /// The current delay.
    pub fn delay(&self) -> Duration {
        self.shared.lock().delay
    }

    /// How many bytes are queued now, per direction.
    pub fn in_transit(&self) -> InTransit {
        let state = self.shared.lock();
        let mut sum = InTransit::default();
        for connection in state.connections.values() {
            sum.toward_target += queued_bytes(&connection.queues[0]);
            sum.toward_client += queued_bytes(&connection.queues[1]);
        }
        sum
    }

    /// How many connections it holds open.
    pub fn connections(&self) -> usize {
        self.shared.lock().connections.len()
    }

    /// The far host is lost: drops every queued byte, closes both sides of every connection and
    /// closes each new connection on accept until [`LagProxy::resume`]. Returns what was dropped.
    pub fn cut(&self) -> InTransit {
        let mut state = self.shared.lock();
        state.cut = true;
        let mut dropped = InTransit::default();
        for (_, connection) in state.connections.drain() {
            dropped.toward_target += queued_bytes(&connection.queues[0]);
            dropped.toward_client += queued_bytes(&connection.queues[1]);
            let _ = connection.client.shutdown(Shutdown::Both);
            let _ = connection.target.shutdown(Shutdown::Both);
        }
        self.shared.changed.notify_all();
        dropped
    }

    /// Accepts and forwards connections again after [`LagProxy::cut`].
    pub fn resume(&self) {
        self.shared.lock().cut = false;
    }
}

impl Drop for LagProxy {
    fn drop(&mut self) {
        self.cut();
        self.shared.lock().closed = true;
        self.shared.changed.notify_all();
        // Wake the blocking accept.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        let threads = std::mem::take(&mut self.shared.lock().threads);
        for thread in threads {
            let _ = thread.join();
        }
    }
}

fn queued_bytes(queue: &VecDeque<Item>) -> usize {
    queue
        .iter()
        .map(|item| match item {
            Item::Data(_, bytes) => bytes.len(),
            Item::Eof(_) => 0,
        })
        .sum()
}

fn accept_loop(listener: &TcpListener, target_port: u16, shared: &Arc<Shared>) {
    for client in listener.incoming() {
        let Ok(client) = client else { continue };
        {
            let state = shared.lock();
            if state.closed {
                return;
            }
            if state.cut {
                let _ = client.shutdown(Shutdown::Both);
                continue;
            }
        }
        let Ok(target) = TcpStream::connect(("127.0.0.1", target_port)) else {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        };
        let _ = client.set_nodelay(true);
        let _ = target.set_nodelay(true);
        let streams = (|| {
            Ok::<_, io::Error>([
                (client.try_clone()?, target.try_clone()?),
                (target.try_clone()?, client.try_clone()?),
            ])
        })();
        let Ok(streams) = streams else { continue };
        let mut state = shared.lock();
        if state.closed || state.cut {
            continue;
        }
        let id = state.next_id;
        state.next_id += 1;
        state.connections.insert(
            id,
            Connection {
                client,
                target,
                queues: [VecDeque::new(), VecDeque::new()],
                ended: [false, false],
            },
        );
        for (direction, (from, to)) in streams.into_iter().enumerate() {
            let reader = {
                let shared = Arc::clone(shared);
                std::thread::spawn(move || read_loop(from, id, direction, &shared))
            };
            let writer = {
                let shared = Arc::clone(shared);
                std::thread::spawn(move || write_loop(to, id, direction, &shared))
            };
            state.threads.push(reader);
            state.threads.push(writer);
        }
        // Forget the threads that have ended.
        let (done, running): (Vec<_>, Vec<_>) = std::mem::take(&mut state.threads)
            .into_iter()
            .partition(JoinHandle::is_finished);
        state.threads = running;
        drop(state);
        for thread in done {
            let _ = thread.join();
        }
    }
}

/// Reads chunks from `from` and queues them with their due time, until EOF, an error or a cut.
fn read_loop(mut from: TcpStream, id: u64, direction: usize, shared: &Shared) {
    let mut buffer = vec![0; CHUNK];
    loop {
        let read = from.read(&mut buffer);
        let mut state = shared.lock();
        let due = Instant::now() + state.delay;
        let Some(connection) = state.connections.get_mut(&id) else {
            return;
        };
        match read {
            Ok(n) if n > 0 => {
                connection.queues[direction].push_back(Item::Data(due, buffer[..n].to_vec()))
            }
            _ => {
                connection.queues[direction].push_back(Item::Eof(due));
                shared.changed.notify_all();
                return;
            }
        }
        shared.changed.notify_all();
    }
}

/// Writes each queued chunk to `to` once due, in order; closes the connection on a write error.
fn write_loop(mut to: TcpStream, id: u64, direction: usize, shared: &Shared) {
    let mut state = shared.lock();
    loop {
        if state.closed {
            return;
        }
        let Some(connection) = state.connections.get_mut(&id) else {
            return;
        };
        let now = Instant::now();
        let due = match connection.queues[direction].front() {
            Some(Item::Data(due, _) | Item::Eof(due)) => Some(*due),
            None => None,
        };
        match due {
            Some(due) if due <= now => {
                let item = connection.queues[direction].pop_front();
                drop(state);
                match item {
                    Some(Item::Data(_, bytes)) if to.write_all(&bytes).is_err() => {
                        let mut state = shared.lock();
                        if let Some(connection) = state.connections.remove(&id) {
                            let _ = connection.client.shutdown(Shutdown::Both);
                            let _ = connection.target.shutdown(Shutdown::Both);
                        }
                        shared.changed.notify_all();
                        return;
                    }
                    Some(Item::Eof(_)) => {
                        let _ = to.shutdown(Shutdown::Write);
                        let mut state = shared.lock();
                        if let Some(connection) = state.connections.get_mut(&id) {
                            connection.ended[direction] = true;
                            // Both directions ended: forget the connection.
                            if connection.ended == [true, true] {
                                state.connections.remove(&id);
                            }
                        }
                        return;
                    }
                    Some(Item::Data(..)) | None => {}
                }
                state = shared.lock();
            }
            Some(due) => {
                state = shared
                    .changed
                    .wait_timeout(state, due - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            None => {
                state = shared
                    .changed
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
            }
        }
    }
}
