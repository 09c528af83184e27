//! Is there a metadata server? Asked once per process and address, with a
//! short deadline, the way Google's libraries detect Google Cloud: `GET /` with
//! `Metadata-Flavor: Google` must come back with that header
//! (<https://cloud.google.com/compute/docs/metadata/overview>). The variables,
//! the DMI check and the cached verdict are described on
//! [`DefaultCredentials`](crate::search_ads::DefaultCredentials) (DECISIONS SA-32, SA-38).

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::net::{TcpStream, ToSocketAddrs as _};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long the probe may take in all (Google's Python library waits 3 s).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The address Google's libraries probe when nothing overrides it.
pub const METADATA_IP: &str = "169.254.169.254";

/// The environment variable that overrides [`METADATA_IP`] for the probe.
pub const METADATA_IP_ENV: &str = "GCE_METADATA_IP";

/// The environment variable that, set to `true` (or `1`), skips the probe
/// and the metadata server.
pub const NO_GCE_CHECK_ENV: &str = "NO_GCE_CHECK";

/// The file in which Linux names the machine's product (DMI): Google's compute
/// platforms write a name with `Google` in it (Compute Engine:
/// `Google Compute Engine`). Google's libraries read it before they probe.
pub(crate) const DMI_PRODUCT_NAME: &str = "/sys/class/dmi/id/product_name";

/// The longest DMI product name read.
const MAX_PRODUCT_NAME: u64 = 256;

/// False only when the machine is plainly not on Google Cloud: the DMI
/// product name at `path` could be read and does not say `Google`. A file
/// that cannot be read (another OS, a container without `/sys`) tells
/// nothing, so the metadata server is probed.
pub(crate) fn may_be_google_cloud(path: &std::path::Path) -> bool {
    let mut name = String::new();
    match std::fs::File::open(path).and_then(|f| f.take(MAX_PRODUCT_NAME).read_to_string(&mut name))
    {
        Ok(_) => name.contains("Google"),
        Err(_) => true,
    }
}

/// The largest answer head read.
const MAX_HEAD: usize = 8 * 1024;

/// The verdict per `HOST[:PORT]`, each computed once (concurrent lookups of
/// the same address wait for the one probe).
fn verdicts() -> &'static Mutex<HashMap<String, Arc<OnceLock<bool>>>> {
    static VERDICTS: OnceLock<Mutex<HashMap<String, Arc<OnceLock<bool>>>>> = OnceLock::new();
    VERDICTS.get_or_init(Default::default)
}

/// True when a metadata server answers at `address` (`HOST[:PORT]`, port 80
/// by default) within `timeout`; cached for the process.
pub(crate) fn metadata_server_answers(address: &str, timeout: Duration) -> bool {
    let cell = verdicts()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(address.to_owned())
        .or_default()
        .clone();
    *cell.get_or_init(|| probe(address, timeout))
}

/// One probe on a thread of its own, so that a name lookup that hangs is cut
/// off by the deadline too (the thread then ends on its own).
fn probe(address: &str, timeout: Duration) -> bool {
    let (tx, rx) = std::sync::mpsc::channel();
    let target = address.to_owned();
    let spawned = std::thread::Builder::new()
        .name("metadata-probe".into())
        .spawn(move || {
            let _ = tx.send(probe_now(&target, timeout));
        });
    if spawned.is_err() {
        return false;
    }
    let answered = rx.recv_timeout(timeout).unwrap_or(false);
    tracing::debug!(address, answered, "metadata server probe");
    answered
}

fn probe_now(address: &str, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
    };
    let with_port = if address
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
        && !address.ends_with(']')
    {
        address.to_owned()
    } else {
        format!("{address}:80")
    };
    let Ok(addrs) = with_port.to_socket_addrs() else {
        return false;
    };
    for addr in addrs {
        let Some(wait) = left() else { return false };
        let Ok(mut stream) = TcpStream::connect_timeout(&addr, wait) else {
            continue;
        };
        let host = address;
        let request = format!(
            "GET / HTTP/1.1\r\nHost: {host}\r\nMetadata-Flavor: Google\r\nConnection: close\r\n\r\n"
        );
        if stream.set_write_timeout(left()).is_err()
            || stream.write_all(request.as_bytes()).is_err()
        {
            return false;
        }
        let mut head = Vec::new();
        let mut buf = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
            let Some(wait) = left() else { return false };
            if stream.set_read_timeout(Some(wait)).is_err() {
                return false;
            }
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        return is_metadata_answer(&head);
    }
    false
}

/// An HTTP answer head carrying `Metadata-Flavor: Google`.
fn is_metadata_answer(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    if !lines.next().is_some_and(|l| l.starts_with("HTTP/1.")) {
        return false;
    }
    lines.take_while(|l| !l.is_empty()).any(|l| {
        l.split_once(':').is_some_and(|(name, value)| {
            name.trim().eq_ignore_ascii_case("metadata-flavor") && value.trim() == "Google"
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_answer_with_the_metadata_flavor_counts() {
        assert!(is_metadata_answer(
            b"HTTP/1.1 200 OK\r\nmetadata-flavor: Google\r\n\r\ncomputeMetadata/"
        ));
        assert!(!is_metadata_answer(b"HTTP/1.1 200 OK\r\nserver: x\r\n\r\n"));
        assert!(!is_metadata_answer(b"SSH-2.0-OpenSSH\r\n"));
        assert!(!is_metadata_answer(b""));
    }

    #[test]
    fn only_a_product_name_without_google_rules_google_cloud_out() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("product_name");
        std::fs::write(&file, "Google Compute Engine\n").unwrap();
        assert!(may_be_google_cloud(&file));
        std::fs::write(&file, "Standard PC (Q35 + ICH9, 2009)\n").unwrap();
        assert!(!may_be_google_cloud(&file));
        assert!(may_be_google_cloud(&dir.path().join("missing")));
    }

    #[test]
    fn a_listener_that_never_answers_costs_the_deadline_once() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        // Accepts (the kernel's backlog) and never answers.
        let started = Instant::now();
        assert!(!metadata_server_answers(
            &address,
            Duration::from_millis(300)
        ));
        let first = started.elapsed();
        assert!(first >= Duration::from_millis(250), "{first:?}");
        assert!(first < Duration::from_secs(2), "{first:?}");
        let started = Instant::now();
        assert!(!metadata_server_answers(
            &address,
            Duration::from_millis(300)
        ));
        assert!(started.elapsed() < Duration::from_millis(50), "cached");
        drop(listener);
    }
}
