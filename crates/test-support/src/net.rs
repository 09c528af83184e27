//! Loopback addresses with known behaviour.

use std::io;
use std::net::SocketAddr;

use tokio::net::TcpSocket;

/// A TCP port on 127.0.0.1 where nothing listens, for "this must be a connect error" tests.
///
/// The port stays bound (without listening) for as long as the value lives, so no other test of the
/// same run can start a server on it: a connection attempt is refused, every time. (Binding a
/// listener, dropping it and returning its port would leave the port free for the next `bind(0)`.)
#[derive(Debug)]
pub struct ClosedPort {
    _socket: TcpSocket,
    addr: SocketAddr,
}

impl ClosedPort {
    /// Reserves a free port.
    ///
    /// # Errors
    ///
    /// When the operating system gives no socket or no free port.
    pub fn reserve() -> io::Result<Self> {
        let socket = TcpSocket::new_v4()?;
        socket.bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let addr = socket.local_addr()?;
        Ok(Self {
            _socket: socket,
            addr,
        })
    }

    /// The reserved port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }
}
