//! [`DefaultCredentials`]: Application Default Credentials, looked up the way
//! Google's libraries do.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;

use super::authorized_user::AuthorizedUser;
use super::authorized_user::read_credentials_file;
use super::external_account::ExternalAccount;
use super::impersonated::ImpersonatedServiceAccount;
use super::metadata::MetadataServer;
use super::metadata_probe::{
    DMI_PRODUCT_NAME, METADATA_IP, METADATA_IP_ENV, NO_GCE_CHECK_ENV, PROBE_TIMEOUT,
    may_be_google_cloud, metadata_server_answers,
};
use super::quota_project::QUOTA_PROJECT_ENV;
use super::token::{AccessToken, TokenSource};
use crate::http::HttpOptions;
use crate::search_ads::auth::credential_kind::CredentialKind;
use crate::search_ads::error::Error;

/// The variable naming a credentials file (ADC's first step).
pub const CREDENTIALS_ENV: &str = "GOOGLE_APPLICATION_CREDENTIALS";

/// Where [`DefaultCredentials`] found its credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CredentialOrigin {
    /// The file named by `GOOGLE_APPLICATION_CREDENTIALS`.
    EnvironmentVariable(PathBuf),
    /// gcloud's file: `$CLOUDSDK_CONFIG/application_default_credentials.json`
    /// or `~/.config/gcloud/application_default_credentials.json`.
    GcloudFile(PathBuf),
    /// The metadata server (`HOST[:PORT]`).
    MetadataServer(String),
}

impl fmt::Display for CredentialOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CredentialOrigin::EnvironmentVariable(path) => {
                write!(f, "{} ({CREDENTIALS_ENV})", path.display())
            }
            CredentialOrigin::GcloudFile(path) => {
                write!(
                    f,
                    "{} (gcloud's application default credentials)",
                    path.display()
                )
            }
            CredentialOrigin::MetadataServer(host) => write!(f, "the metadata server at {host}"),
        }
    }
}

/// Application Default Credentials in one call, in Google's order:
///
/// 1. the file named by `GOOGLE_APPLICATION_CREDENTIALS` (an error if it
///    cannot be read: the variable says it is meant to be used);
/// 2. gcloud's file, `$CLOUDSDK_CONFIG/application_default_credentials.json`,
///    else `~/.config/gcloud/application_default_credentials.json`
///    (`%APPDATA%\gcloud\…` on Windows), written by
///    `gcloud auth application-default login`;
/// 3. the metadata server of Google's compute platforms
///    (`metadata.google.internal`, or `GCE_METADATA_HOST`), if it answers a
///    probe within 3 s, as Google's libraries check: `GET /` on
///    `169.254.169.254` (`GCE_METADATA_IP`, else `GCE_METADATA_HOST`) must
///    come back with `Metadata-Flavor: Google`. The probe runs once per
///    process and address (the verdict is cached), so an address that
///    accepts and never answers costs at most the probe's deadline, once;
///    `NO_GCE_CHECK=true` skips it. On a machine plainly not on Google Cloud
///    (its DMI product name, `/sys/class/dmi/id/product_name`, is readable and
///    does not say `Google`) nothing is probed, unless `GCE_METADATA_HOST` or
///    `GCE_METADATA_IP` names an address. When no step gives credentials,
///    [`build`](DefaultCredentialsBuilder::build) fails with
///    [`Error::NoCredentials`], naming each step.
///
/// The quota project (the `x-goog-user-project` header of API calls,
/// [`TokenSource::quota_project_id`]) is `GOOGLE_CLOUD_QUOTA_PROJECT` when
/// set, else the file's `quota_project_id`, as in Google's libraries.
///
/// Files of type `authorized_user` ([`AuthorizedUser`]), `service_account`
/// (`ServiceAccount`, cargo feature `service-account`),
/// `impersonated_service_account` ([`ImpersonatedServiceAccount`], whose
/// `source_credentials` is an `authorized_user` or `service_account`) and
/// `external_account` ([`ExternalAccount`], file- and URL-sourced) are
/// supported; any other type is refused by name.
///
/// ```no_run
/// use sa360_video_sdk::search_ads::{DefaultCredentials, SearchAdsClient};
///
/// let credentials = DefaultCredentials::new()?;
/// println!("signed in with {} from {}", credentials.kind().name(), credentials.origin());
/// let client = SearchAdsClient::new(credentials)?;
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct DefaultCredentials {
    source: Arc<dyn TokenSource>,
    origin: CredentialOrigin,
    /// `GOOGLE_CLOUD_QUOTA_PROJECT`, which wins over the file's.
    quota_project: Option<String>,
}

/// Looks up [`DefaultCredentials`]; [`build`](Self::build) does the lookup.
#[derive(Debug, Default)]
#[must_use]
pub struct DefaultCredentialsBuilder {
    options: HttpOptions,
    overrides: HashMap<String, Option<String>>,
    probe_timeout: Option<Duration>,
    dmi_product_name: Option<PathBuf>,
    any_token_host: bool,
    /// The address probed when no variable names one ([`METADATA_IP`]); unit tests put a
    /// loopback listener there, so that a probe that should not happen stays on this machine.
    #[cfg(test)]
    default_probe_address: Option<String>,
}

impl DefaultCredentialsBuilder {
    /// Timeouts and body limits of the token exchanges (default
    /// [`HttpOptions::default`]).
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.options = options;
        self
    }

    /// Reads the environment variable `name` as `value` (`None`: as unset)
    /// instead of the process's environment, for `GOOGLE_APPLICATION_CREDENTIALS`,
    /// `CLOUDSDK_CONFIG`, `HOME`, `APPDATA`, `GCE_METADATA_HOST`,
    /// `GCE_METADATA_IP`, `NO_GCE_CHECK` and `GOOGLE_CLOUD_QUOTA_PROJECT`. For tests,
    /// and for programs that keep these settings elsewhere.
    pub fn env_var(mut self, name: impl Into<String>, value: Option<impl Into<String>>) -> Self {
        self.overrides.insert(name.into(), value.map(Into::into));
        self
    }

    /// How long the metadata server probe may take (default 3 s, as in
    /// Google's libraries). The verdict is cached for the process per
    /// address, so only the first lookup waits.
    pub fn metadata_probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = Some(timeout);
        self
    }

    /// Reads the machine's DMI product name from `path` instead of
    /// `/sys/class/dmi/id/product_name` (for tests: a file without `Google`
    /// in it says the machine is not on Google Cloud, so the metadata server
    /// is not probed; a missing file says nothing, so it is).
    pub fn dmi_product_name_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.dmi_product_name = Some(path.into());
        self
    }

    /// Accepts token, STS and impersonation URLs on any host in the
    /// credentials file, not only Google's.
    ///
    /// **The risk**: the file then decides where the refresh token, the
    /// client secret, the signed assertion or the subject token go. A file
    /// written by someone else (a download, a configuration upload, a
    /// colleague's file) can send them to any host that has a certificate.
    /// Use it only for files you wrote yourself, for an identity platform
    /// that is not Google's own hosts; never for files from outside.
    pub fn allow_non_google_token_hosts(mut self) -> Self {
        self.any_token_host = true;
        self
    }

    fn var(&self, name: &str) -> Option<String> {
        match self.overrides.get(name) {
            Some(value) => value.clone(),
            None => std::env::var(name).ok(),
        }
        .filter(|v| !v.is_empty())
    }

    /// gcloud's credentials file, where it would be.
    fn gcloud_file(&self) -> Option<PathBuf> {
        const FILE: &str = "application_default_credentials.json";
        if let Some(dir) = self.var("CLOUDSDK_CONFIG") {
            return Some(Path::new(&dir).join(FILE));
        }
        if cfg!(windows) {
            return self
                .var("APPDATA")
                .map(|d| Path::new(&d).join("gcloud").join(FILE));
        }
        self.var("HOME")
            .map(|h| Path::new(&h).join(".config").join("gcloud").join(FILE))
    }

    /// Runs the lookup: reads at most one file; when there is none, probes
    /// the metadata server (blocking for up to the probe's deadline, once
    /// per process; see the type's docs). Sends no token request.
    ///
    /// The probe blocks the calling thread: in async code on a
    /// current-thread runtime that also serves the metadata address (a
    /// test's fake), call it through `tokio::task::spawn_blocking`.
    pub fn build(self) -> Result<DefaultCredentials, Error> {
        let quota_project = self
            .var(QUOTA_PROJECT_ENV)
            .map(|id| super::quota_project::checked(QUOTA_PROJECT_ENV, &id))
            .transpose()?;
        let mut found = self.lookup()?;
        found.quota_project = quota_project;
        Ok(found)
    }

    fn lookup(&self) -> Result<DefaultCredentials, Error> {
        let named = self.var(CREDENTIALS_ENV).map(|path| {
            let path = PathBuf::from(path);
            let prefix = format!("{CREDENTIALS_ENV}={}: ", path.display());
            (
                path.clone(),
                prefix,
                CredentialOrigin::EnvironmentVariable(path),
            )
        });
        let gcloud = || {
            let path = self.gcloud_file().filter(|p| p.is_file())?;
            let prefix = format!("{}: ", path.display());
            Some((path.clone(), prefix, CredentialOrigin::GcloudFile(path)))
        };
        if let Some((path, prefix, origin)) = named.or_else(gcloud) {
            let source = self
                .source_of_file(&path)
                .map_err(|e| e.prefixed(&prefix))?;
            return Ok(DefaultCredentials {
                source,
                origin,
                quota_project: None,
            });
        }
        let host_env = self.var(super::metadata::METADATA_HOST_ENV);
        let ip_env = self.var(METADATA_IP_ENV);
        let skipped = self
            .var(NO_GCE_CHECK_ENV)
            .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
        // An address named by a variable is probed wherever the machine runs (tests, proxies).
        let named = ip_env.is_some() || host_env.is_some();
        let off_cloud = !named
            && !may_be_google_cloud(
                self.dmi_product_name
                    .as_deref()
                    .unwrap_or(Path::new(DMI_PRODUCT_NAME)),
            );
        #[cfg(test)]
        let default_address = self
            .default_probe_address
            .clone()
            .unwrap_or_else(|| METADATA_IP.to_owned());
        #[cfg(not(test))]
        let default_address = METADATA_IP.to_owned();
        let probed = ip_env
            .or_else(|| host_env.clone())
            .unwrap_or(default_address);
        let timeout = self.probe_timeout.unwrap_or(PROBE_TIMEOUT);
        let reason = if skipped {
            Some(format!("{NO_GCE_CHECK_ENV} is set"))
        } else if off_cloud {
            Some("this machine is not on Google Cloud".to_owned())
        } else if !metadata_server_answers(&probed, timeout) {
            Some(format!(
                "no metadata server answered at {probed} within {} s",
                timeout.as_secs_f64()
            ))
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(Error::NoCredentials {
                gcloud_file: self.gcloud_file(),
                reason,
            });
        }
        let mut metadata = MetadataServer::builder().http_options(self.options.clone());
        if let Some(host) = host_env {
            metadata = metadata.host(host);
        }
        let metadata = metadata.build()?;
        let host = metadata.host().to_owned();
        Ok(DefaultCredentials {
            source: Arc::new(metadata),
            origin: CredentialOrigin::MetadataServer(host),
            quota_project: None,
        })
    }
}

impl DefaultCredentialsBuilder {
    /// The token source of a credentials file, by its `type`.
    fn source_of_file(&self, path: &Path) -> Result<Arc<dyn TokenSource>, Error> {
        let text = read_credentials_file(path, CredentialKind::Other, self.options.timeout)?;
        let value = serde_json::from_str::<serde_json::Value>(&text).map_err(|e| {
            Error::auth(
                CredentialKind::Other,
                format!(
                    "the credentials file is not JSON (line {}, column {})",
                    e.line(),
                    e.column()
                ),
            )
        })?;
        self.source_of_value(&value, Some(path))
    }

    /// The token source of a credentials JSON object (a file, or the
    /// `source_credentials` of an `impersonated_service_account` file).
    fn source_of_value(
        &self,
        value: &serde_json::Value,
        path: Option<&Path>,
    ) -> Result<Arc<dyn TokenSource>, Error> {
        let options = &self.options;
        let kind = value.get("type").and_then(|t| t.as_str());
        match kind {
            Some("authorized_user") => {
                let mut user = AuthorizedUser::parse(&value.to_string(), self.any_token_host)?;
                if let Some(path) = path {
                    user = user.named_file(path);
                }
                Ok(Arc::new(user.http_options(options.clone())))
            }
            #[cfg(feature = "service-account")]
            Some("service_account") => Ok(Arc::new(
                super::service_account::ServiceAccount::parse(
                    &value.to_string(),
                    self.any_token_host,
                )?
                .http_options(options.clone()),
            )),
            #[cfg(not(feature = "service-account"))]
            Some("service_account") => Err(Error::auth(
                CredentialKind::ServiceAccount,
                "a service_account file needs the cargo feature `service-account` of sa360-video-sdk",
            )),
            Some("impersonated_service_account") => {
                let url = value
                    .get("service_account_impersonation_url")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default();
                let source = value
                    .get("source_credentials")
                    .filter(|s| s.is_object())
                    .ok_or_else(|| {
                        Error::auth(
                            CredentialKind::ImpersonatedServiceAccount,
                            "the impersonated_service_account file has no `source_credentials`",
                        )
                    })?;
                if source.get("type").and_then(|t| t.as_str())
                    == Some("impersonated_service_account")
                {
                    return Err(Error::auth(
                        CredentialKind::ImpersonatedServiceAccount,
                        "source_credentials of type \"impersonated_service_account\" are \
                              not supported: name the chain in `delegates`",
                    ));
                }
                let source = self.source_of_value(source, None)?;
                let delegates: Vec<String> = value
                    .get("delegates")
                    .and_then(|d| d.as_array())
                    .map(|d| {
                        d.iter()
                            .filter_map(|d| d.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default();
                let mut target =
                    ImpersonatedServiceAccount::from_file_url(source, url, self.any_token_host)?
                        .delegates(delegates)
                        .http_options(options.clone());
                if let Some(id) = value.get("quota_project_id").and_then(|v| v.as_str()) {
                    target = target.with_quota_project_id(Some(id))?;
                }
                Ok(Arc::new(target))
            }
            Some("external_account") => Ok(Arc::new(ExternalAccount::from_value(
                value,
                options.clone(),
                self.any_token_host,
            )?)),
            Some(other) => Err(Error::auth(
                CredentialKind::Other,
                format!(
                    "credentials of type {other:?} are not supported (supported: \"authorized_user\", \
                 \"service_account\", \"impersonated_service_account\", \"external_account\")"
                ),
            )),
            None => Err(Error::auth(
                CredentialKind::Other,
                "not a credentials file: JSON with a \"type\" (\"authorized_user\", \
                      \"service_account\", \"impersonated_service_account\" or \
                      \"external_account\") is expected",
            )),
        }
    }
}

impl DefaultCredentials {
    /// Looks up the credentials with default options (see the type's docs).
    pub fn new() -> Result<Self, Error> {
        Self::builder().build()
    }

    /// A builder, to set HTTP options or override environment variables.
    pub fn builder() -> DefaultCredentialsBuilder {
        DefaultCredentialsBuilder::default()
    }

    /// The kind of credentials found.
    pub fn kind(&self) -> CredentialKind {
        self.source.kind()
    }

    /// Where the credentials were found.
    pub fn origin(&self) -> &CredentialOrigin {
        &self.origin
    }

    /// The token source, to share with other clients.
    pub fn source(&self) -> Arc<dyn TokenSource> {
        self.source.clone()
    }
}

impl TokenSource for DefaultCredentials {
    fn token(&self) -> BoxFuture<'_, Result<AccessToken, Error>> {
        self.source.token()
    }

    fn invalidate(&self, rejected: &AccessToken) -> bool {
        self.source.invalidate(rejected)
    }

    fn kind(&self) -> CredentialKind {
        self.source.kind()
    }

    fn quota_project_id(&self) -> Option<&str> {
        self.quota_project
            .as_deref()
            .or_else(|| self.source.quota_project_id())
    }

    fn allow_loopback(&self) {
        self.source.allow_loopback();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn isolated() -> DefaultCredentialsBuilder {
        DefaultCredentials::builder()
            .env_var(CREDENTIALS_ENV, None::<String>)
            .env_var("CLOUDSDK_CONFIG", None::<String>)
            .env_var("HOME", None::<String>)
            .env_var("APPDATA", None::<String>)
            .env_var("GCE_METADATA_HOST", None::<String>)
            .env_var("GCE_METADATA_IP", None::<String>)
            .env_var("NO_GCE_CHECK", None::<String>)
    }

    #[test]
    fn the_chain_goes_env_then_gcloud_then_metadata() {
        let dir = tempfile::tempdir().unwrap();
        let user =
            r#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r"}"#;
        let gcloud = dir.path().join("gcloud");
        std::fs::create_dir_all(&gcloud).unwrap();
        std::fs::write(gcloud.join("application_default_credentials.json"), user).unwrap();
        let explicit = dir.path().join("explicit.json");
        std::fs::write(&explicit, user).unwrap();

        let found = isolated()
            .env_var("CLOUDSDK_CONFIG", Some(gcloud.to_str().unwrap()))
            .env_var(CREDENTIALS_ENV, Some(explicit.to_str().unwrap()))
            .build()
            .unwrap();
        assert_eq!(
            found.origin(),
            &CredentialOrigin::EnvironmentVariable(explicit.clone())
        );
        assert_eq!(found.kind(), CredentialKind::AuthorizedUser);

        let found = isolated()
            .env_var("CLOUDSDK_CONFIG", Some(gcloud.to_str().unwrap()))
            .build()
            .unwrap();
        assert!(
            matches!(found.origin(), CredentialOrigin::GcloudFile(_)),
            "{found:?}"
        );

        // Nothing listens at the metadata address: no source, said at once.
        let e = isolated()
            .env_var("HOME", Some(dir.path().to_str().unwrap()))
            .env_var("GCE_METADATA_HOST", Some("127.0.0.1:1"))
            .build()
            .unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, Error::NoCredentials { .. }), "{e:?}");
        assert!(text.contains("no credentials found"), "{text}");
        assert!(text.contains(CREDENTIALS_ENV), "{text}");
        assert!(text.contains("127.0.0.1:1"), "{text}");
        let e = isolated()
            .env_var("GCE_METADATA_HOST", Some("127.0.0.1:1"))
            .env_var("NO_GCE_CHECK", Some("true"))
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("NO_GCE_CHECK"), "{e}");
    }

    /// Off Google Cloud (a DMI product name without `Google`) nothing is probed: a silent
    /// listener at the metadata IP would otherwise cost the whole deadline (issue 50).
    #[test]
    fn a_machine_plainly_off_google_cloud_is_not_probed() {
        let dir = tempfile::tempdir().unwrap();
        let product = dir.path().join("product_name");
        std::fs::write(&product, "Standard PC (i440FX + PIIX, 1996)\n").unwrap();
        // Accepts and never answers.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = silent.local_addr().unwrap().to_string();
        let lookup = |product: &Path, ip: Option<&str>| {
            let started = std::time::Instant::now();
            let mut builder = isolated().env_var("GCE_METADATA_IP", ip);
            // The default address, here the silent listener (169.254.169.254 elsewhere).
            builder.default_probe_address = Some(address.clone());
            let e = builder
                .dmi_product_name_path(product)
                .metadata_probe_timeout(Duration::from_millis(400))
                .build()
                .unwrap_err();
            (e, started.elapsed())
        };
        // The default address is never asked off Google Cloud.
        let (e, took) = lookup(&product, None);
        assert!(took < Duration::from_millis(200), "{took:?}");
        assert!(e.to_string().contains("not on Google Cloud"), "{e}");
        assert!(e.to_string().len() < 300, "one sentence: {e}");
        // An address named by GCE_METADATA_IP is still probed (a listener of its own: the
        // verdict is cached per address).
        let named = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let named_address = named.local_addr().unwrap().to_string();
        let (e, took) = lookup(&product, Some(&named_address));
        assert!(took >= Duration::from_millis(350), "{took:?}");
        assert!(e.to_string().contains(&named_address), "{e}");
        // A product name that says Google (or none at all) is probed at the default address.
        std::fs::write(&product, "Google Compute Engine\n").unwrap();
        let (e, took) = lookup(&product, None);
        assert!(took >= Duration::from_millis(350), "{took:?}");
        assert!(e.to_string().contains(&address), "{e}");
        drop(named);
        drop(silent);
    }

    #[test]
    fn other_types_are_named_and_a_missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ext.json");
        std::fs::write(&path, r#"{"type":"gdch_service_account","audience":"x"}"#).unwrap();
        let e = isolated()
            .env_var(CREDENTIALS_ENV, Some(path.to_str().unwrap()))
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("\"gdch_service_account\""), "{e}");
        assert!(e.to_string().contains(CREDENTIALS_ENV), "{e}");
        let e = isolated()
            .env_var(CREDENTIALS_ENV, Some("/no/such/file.json"))
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("/no/such/file.json"), "{e}");
    }
}
