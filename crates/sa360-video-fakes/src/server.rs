//! The HTTP/1.1 server under both fakes.
//!
//! The fakes serve an axum [`Router`] through their own hyper accept loop instead of `axum::serve`,
//! for one reason: a handler (or the fault middleware) can put [`AbortConnection`] on its response,
//! and the connection is then closed without writing any byte of an answer, which the client sees as
//! a reset or an unexpected end of file. The loop also gives graceful shutdown: on shutdown it stops
//! accepting, lets idle connections close and aborts what is still running after a grace period.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tower::Service;

/// Put on a response's extensions to close the connection instead of answering.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AbortConnection;

/// The error a connection's service returns to make hyper drop the connection.
#[derive(Debug, thiserror::Error)]
#[error("connection dropped by an injected fault")]
struct ConnectionDropped;

/// How long running connections get to finish after shutdown began.
const GRACE: Duration = Duration::from_secs(2);

/// A running server: its address and the means to stop it.
#[derive(Debug)]
pub(crate) struct ServerHandle {
    addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl ServerHandle {
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, waits for connections to finish (aborting them after a grace period).
    pub(crate) async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
    }
}

/// Binds a loopback listener on `port` (0 picks a free port).
pub(crate) async fn bind(port: u16) -> std::io::Result<TcpListener> {
    TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port))).await
}

/// Serves `router` on `listener` until the handle is shut down or dropped.
pub(crate) fn serve(listener: TcpListener, router: Router) -> std::io::Result<ServerHandle> {
    let addr = listener.local_addr()?;
    let (shutdown, rx) = watch::channel(false);
    let task = tokio::spawn(accept_loop(listener, router, rx));
    Ok(ServerHandle {
        addr,
        shutdown,
        task: Some(task),
    })
}

async fn accept_loop(listener: TcpListener, router: Router, mut shutdown: watch::Receiver<bool>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            changed = shutdown.changed() => {
                if changed.is_err() || *shutdown.borrow() {
                    break;
                }
            }
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    connections.spawn(serve_connection(stream, peer, router.clone(), shutdown.clone()));
                }
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let drain = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(GRACE, drain).await.is_err() {
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
}

async fn serve_connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    router: Router,
    mut shutdown: watch::Receiver<bool>,
) {
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let mut router = router.clone();
        async move {
            let response: Response<Body> = match router.call(request.map(Body::new)).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            if response.extensions().get::<AbortConnection>().is_some() {
                Err(ConnectionDropped)
            } else {
                Ok::<_, ConnectionDropped>(response)
            }
        }
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let mut shutting_down = *shutdown.borrow();
    if shutting_down {
        connection.as_mut().graceful_shutdown();
    }
    loop {
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%peer, %error, "connection ended with an error");
                }
                break;
            }
            changed = shutdown.changed(), if !shutting_down => {
                if changed.is_err() || *shutdown.borrow() {
                    shutting_down = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}
