//! A test certificate authority made with the `openssl` command: a CA certificate and a server
//! certificate for `localhost` and `127.0.0.1`, in a temporary directory removed when the last
//! clone of the [`TestCa`] is dropped.
//!
//! Both are X.509 v3 with P-256 keys, as strict verifiers (rustls with webpki) want them: the CA
//! has `basicConstraints=critical,CA:TRUE` and `keyUsage=keyCertSign,cRLSign`; the server
//! certificate has `basicConstraints=critical,CA:FALSE`,
//! `subjectAltName=DNS:localhost,IP:127.0.0.1` (a name only in the subject's CN is not accepted)
//! and `extendedKeyUsage=serverAuth,clientAuth`. Valid from creation for 2 days.
//!
//! ```no_run
//! let ca = test_support::TestCa::create();
//! let redis = test_support::RedisOptions::new().tls(&ca).start("tls_test");
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use crate::command::run_with_timeout;

/// A CA and a server certificate signed by it (files in a temporary directory). Cheap to clone:
/// the clones share the directory.
#[derive(Debug, Clone)]
pub struct TestCa {
    dir: Arc<tempfile::TempDir>,
}

impl TestCa {
    /// Creates the CA and the server certificate with `openssl` (about 50 ms).
    ///
    /// # Panics
    /// When `openssl` is missing or fails (the message quotes its error output).
    pub fn create() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory for the test CA");
        let path = |name: &str| {
            let path = dir.path().join(name);
            path.to_str().expect("a UTF-8 temporary path").to_owned()
        };
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
        openssl(&[
            &["req", "-x509", "-new", "-nodes", "-days", "2"],
            &ec,
            &["-keyout", &path("ca.key"), "-out", &path("ca.crt")],
            &["-subj", "/CN=test-support CA"],
            &["-addext", "basicConstraints=critical,CA:TRUE"],
            &["-addext", "keyUsage=critical,keyCertSign,cRLSign"],
        ]);
        openssl(&[
            &["req", "-new", "-nodes"],
            &ec,
            &["-keyout", &path("server.key"), "-out", &path("server.csr")],
            &["-subj", "/CN=localhost"],
        ]);
        std::fs::write(
            path("server.ext"),
            "basicConstraints=critical,CA:FALSE\n\
             subjectAltName=DNS:localhost,IP:127.0.0.1\n\
             keyUsage=critical,digitalSignature\n\
             extendedKeyUsage=serverAuth,clientAuth\n\
             subjectKeyIdentifier=hash\n\
             authorityKeyIdentifier=keyid\n",
        )
        .expect("write the extensions file");
        openssl(&[
            &["x509", "-req", "-days", "2", "-CAcreateserial"],
            &["-in", &path("server.csr"), "-extfile", &path("server.ext")],
            &["-CA", &path("ca.crt"), "-CAkey", &path("ca.key")],
            &["-out", &path("server.crt")],
        ]);
        Self { dir: Arc::new(dir) }
    }

    /// The CA's certificate (PEM): what a client trusts.
    pub fn ca_cert(&self) -> PathBuf {
        self.dir.path().join("ca.crt")
    }

    /// The server's certificate (PEM), for `localhost` and `127.0.0.1`.
    pub fn server_cert(&self) -> PathBuf {
        self.dir.path().join("server.crt")
    }

    /// The server's private key (PEM, PKCS#8, P-256).
    pub fn server_key(&self) -> PathBuf {
        self.dir.path().join("server.key")
    }

    /// The directory holding the files (`ca.crt`, `ca.key`, `server.crt`, `server.key`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

fn openssl(args: &[&[&str]]) {
    let args = args.concat();
    let mut command = Command::new("openssl");
    command.args(&args);
    run_with_timeout(command, Duration::from_secs(30)).unwrap_or_else(|e| {
        panic!(
            "openssl {} failed (is the openssl command installed?): {e}",
            args.join(" ")
        )
    });
}
