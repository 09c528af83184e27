//! Connecting a `RedisStore` to its deployment: one server (a connection
//! manager that reconnects), the primary Sentinel names (asked again after a
//! failover), or a Cluster (redirections followed); TLS with the system's roots
//! or a private CA.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use redis::{AsyncConnectionConfig, RedisError, TlsCertificates};

use super::redis_url::{RedisUrl, Topology};

/// The largest PEM file accepted as a CA bundle.
const MAX_CA_FILE: u64 = 1 << 20;

/// The connection of each kind of deployment.
pub(super) enum Backend {
    Standalone(ConnectionManager),
    Sentinel(Box<SentinelBackend>),
    Cluster(ClusterConnection),
}

/// The primary Sentinel names, connected on demand and asked for again after
/// an error (a failover).
pub(super) struct SentinelBackend {
    client: tokio::sync::Mutex<SentinelClient>,
    pub(super) current: tokio::sync::Mutex<Option<MultiplexedConnection>>,
    config: AsyncConnectionConfig,
}

/// Reads a PEM bundle of at most 1 MiB.
pub(super) fn read_ca(path: &std::path::Path) -> Result<TlsCertificates, String> {
    use std::io::Read as _;
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut pem = Vec::new();
    file.take(MAX_CA_FILE + 1)
        .read_to_end(&mut pem)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if pem.len() as u64 > MAX_CA_FILE {
        return Err(format!("{} is larger than 1 MiB", path.display()));
    }
    if !pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    Ok(TlsCertificates {
        client_tls: None,
        root_cert: Some(pem),
    })
}

pub(super) async fn connect_backend(
    url: &RedisUrl,
    timeout: Duration,
    certificates: Option<TlsCertificates>,
    sentinel_credentials: Option<&(String, secrecy::SecretString)>,
) -> Result<Backend, RedisError> {
    match url.topology {
        Topology::Standalone => {
            let (host, port) = &url.hosts[0];
            let node = url.node_url(host, *port, true);
            let client = match certificates {
                Some(c) => redis::Client::build_with_tls(node, c)?,
                None => redis::Client::open(node)?,
            };
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(timeout))
                .set_response_timeout(Some(timeout))
                .set_number_of_retries(1)
                .set_max_delay(timeout);
            Ok(Backend::Standalone(
                ConnectionManager::new_with_config(client, config).await?,
            ))
        }
        Topology::Sentinel => {
            let sentinels = url.hosts.iter().map(|(host, port)| {
                let host = host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned();
                if url.tls {
                    redis::ConnectionAddr::TcpTls {
                        host,
                        port: *port,
                        insecure: false,
                        tls_params: None,
                    }
                } else {
                    redis::ConnectionAddr::Tcp(host, *port)
                }
            });
            let name = url.master_name.clone().unwrap_or_default();
            let mut builder =
                SentinelClientBuilder::new(sentinels, name, SentinelServerType::Master)?
                    .set_client_to_redis_db(url.db);
            if url.tls {
                builder = builder
                    .set_client_to_redis_tls_mode(redis::TlsMode::Secure)
                    .set_client_to_sentinel_tls_mode(redis::TlsMode::Secure);
                if let Some(c) = &certificates {
                    builder = builder
                        .set_client_to_redis_certificates(c.clone())
                        .set_client_to_sentinel_certificates(c.clone());
                }
            }
            if let Some(user) = &url.username {
                builder = builder.set_client_to_redis_username(user);
            }
            if let Some(password) = &url.password {
                builder = builder.set_client_to_redis_password(password);
            }
            if let Some((user, password)) = sentinel_credentials {
                use secrecy::ExposeSecret as _;
                if !user.is_empty() {
                    builder = builder.set_client_to_sentinel_username(user);
                }
                builder = builder.set_client_to_sentinel_password(password.expose_secret());
            }
            let config = AsyncConnectionConfig::new()
                .set_connection_timeout(Some(timeout))
                .set_response_timeout(Some(timeout));
            let mut client = builder.build()?;
            let connection = client.get_async_connection_with_config(&config).await?;
            Ok(Backend::Sentinel(Box::new(SentinelBackend {
                client: tokio::sync::Mutex::new(client),
                current: tokio::sync::Mutex::new(Some(connection)),
                config,
            })))
        }
        Topology::Cluster => {
            let nodes = url
                .hosts
                .iter()
                .map(|(host, port)| url.node_url(host, *port, false));
            let mut builder = redis::cluster::ClusterClientBuilder::new(nodes)
                .connection_timeout(timeout)
                .response_timeout(timeout)
                // Redirections (MOVED, ASK) are followed at once; a node that is down is tried
                // again soon and then reported, so a step fails closed well within its bound
                // instead of sleeping through the failover.
                .retries(2)
                .min_retry_wait(10)
                .max_retry_wait(100);
            if let Some(c) = certificates {
                builder = builder.certs(c);
            }
            let client = builder.build()?;
            Ok(Backend::Cluster(client.get_async_connection().await?))
        }
    }
}

impl SentinelBackend {
    /// The current primary's connection, asking the sentinels when there is none.
    pub(super) async fn connection(&self) -> Result<MultiplexedConnection, RedisError> {
        let mut current = self.current.lock().await;
        if let Some(c) = &*current {
            return Ok(c.clone());
        }
        let connection = self
            .client
            .lock()
            .await
            .get_async_connection_with_config(&self.config)
            .await?;
        *current = Some(connection.clone());
        Ok(connection)
    }

    /// After an error that may mean a failover (the connection dropped, the
    /// server became a replica: `READONLY`), the next step asks the sentinels.
    pub(super) async fn forget_after(&self, e: &RedisError) {
        let failover = e.is_io_error()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || e.is_timeout()
            || matches!(e.code(), Some("READONLY" | "MASTERDOWN" | "LOADING"));
        if failover {
            self.current.lock().await.take();
        }
    }
}
