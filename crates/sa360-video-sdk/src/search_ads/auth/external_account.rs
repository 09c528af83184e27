//! [`ExternalAccount`]: workload identity federation. A token from another
//! identity provider (an OIDC token a Kubernetes cluster or a CI system
//! writes to a file or serves at a URL) is exchanged at Google's Security
//! Token Service for a Google access token, optionally then used to
//! impersonate a service account. This is what an `external_account` file
//! describes.
//!
//! As Google documents it
//! (<https://cloud.google.com/iam/docs/workload-identity-federation-with-other-providers>,
//! the STS call <https://cloud.google.com/iam/docs/reference/sts/rest/v1/TopLevel/token>):
//!
//! 1. the subject token: `credential_source.file` (read, at most 64 KiB) or
//!    `credential_source.url` (GET, with `credential_source.headers`), as text
//!    or, with `format.type = "json"`, the field
//!    `format.subject_token_field_name` of a JSON object;
//! 2. `POST token_url` (form): `grant_type=urn:ietf:params:oauth:grant-type:token-exchange`,
//!    `audience`, `scope`, `requested_token_type=urn:ietf:params:oauth:token-type:access_token`,
//!    `subject_token`, `subject_token_type`;
//! 3. with `service_account_impersonation_url`: IAM Credentials'
//!    `generateAccessToken` with the STS token (lifetime
//!    `service_account_impersonation.token_lifetime_seconds`, default 3600).
//!
//! Every request goes through the bounded token-exchange path
//! (`auth/endpoint.rs`). The file decides where the subject token goes, so
//! `token_url` must be `sts.googleapis.com` and the impersonation URL
//! `iamcredentials.googleapis.com` (loopback once the application opens it,
//! any host only with `DefaultCredentialsBuilder::allow_non_google_token_hosts`).
//! A subject token file is read like an answer: a regular file only, at most
//! 64 KiB, within [`HttpOptions::timeout`]. AWS-sourced (`credential_source.environment_id`)
//! and executable-sourced files are refused by name (DECISIONS SA-35).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::authorized_user::read_credentials_file;
use super::cache::TokenCache;
use super::endpoint::{FileUrl, TokenEndpoint, error_message};
use super::impersonated::{MAX_IMPERSONATION_LIFETIME, generate_access_token};
use super::token::{AccessToken, SCOPE};
use crate::http::HttpOptions;
use crate::search_ads::auth::credential_kind::CredentialKind;
use crate::search_ads::error::Error;

const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";
/// The scope of the STS token when it is only used to impersonate (IAM
/// Credentials needs it; Google's libraries ask for it).
const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// The largest subject token read.
const MAX_SUBJECT_TOKEN: u64 = 64 * 1024;

fn auth_error(message: String) -> Error {
    Error::auth(CredentialKind::ExternalAccount, message)
}

/// Where the subject token comes from.
enum Subject {
    /// The file and the deadline of its read.
    File(PathBuf, Duration),
    Url {
        endpoint: Box<TokenEndpoint>,
        headers: Vec<(String, String)>,
    },
}

/// How the subject token is written.
enum Format {
    Text,
    Json(String),
}

/// Workload identity federation credentials (an `external_account` file).
///
/// ```
/// use sa360_video_sdk::search_ads::{ExternalAccount, TokenSource};
///
/// let json = r#"{
///   "type": "external_account",
///   "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/k8s",
///   "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
///   "token_url": "https://sts.googleapis.com/v1/token",
///   "credential_source": {"file": "/var/run/secrets/tokens/gcp-ksa/token"}
/// }"#;
/// let credentials = ExternalAccount::from_json(json)?;
/// assert_eq!(credentials.kind().name(), "external_account");
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
pub struct ExternalAccount {
    audience: String,
    subject_token_type: String,
    sts: TokenEndpoint,
    subject: Subject,
    format: Format,
    impersonation: Option<(TokenEndpoint, Duration)>,
    quota_project_id: Option<String>,
    cache: TokenCache,
}

impl ExternalAccount {
    /// Reads an `external_account` file's JSON (file- and URL-sourced
    /// subject tokens; see the module docs).
    pub fn from_json(json: &str) -> Result<Self, Error> {
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
            auth_error(format!(
                "the credentials file is not JSON (line {}, column {})",
                e.line(),
                e.column()
            ))
        })?;
        Self::from_value(&value, HttpOptions::default(), false)
    }

    /// An `external_account` file's JSON; `any_host` accepts token and
    /// impersonation URLs on any host (the application's named opt-out).
    pub(crate) fn from_value(
        value: &serde_json::Value,
        options: HttpOptions,
        any_host: bool,
    ) -> Result<Self, Error> {
        let text = |v: &serde_json::Value, name: &str| {
            v.get(name)
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let required = |name: &str| {
            text(value, name).ok_or_else(|| {
                auth_error(format!(
                    "the external_account file has no `{name}` (it needs audience, \
                     subject_token_type, token_url and credential_source)"
                ))
            })
        };
        let audience = required("audience")?;
        let subject_token_type = required("subject_token_type")?;
        let token_url = required("token_url")?;
        let sts = TokenEndpoint::named_in_file(
            &token_url,
            FileUrl::StsTokenUrl,
            any_host,
            options.clone(),
            CredentialKind::ExternalAccount,
        )?;
        let source = value
            .get("credential_source")
            .filter(|v| v.is_object())
            .ok_or_else(|| {
                auth_error("the external_account file has no `credential_source`".into())
            })?;
        if source.get("environment_id").is_some() {
            return Err(auth_error(
                "AWS-sourced external_account credentials (credential_source.environment_id) are \
                 not supported; use a file- or URL-sourced subject token"
                    .into(),
            ));
        }
        if source.get("executable").is_some() {
            return Err(auth_error(
                "executable-sourced external_account credentials are not supported; use a file- \
                 or URL-sourced subject token"
                    .into(),
            ));
        }
        let subject = match (text(source, "file"), text(source, "url")) {
            (Some(file), None) => Subject::File(PathBuf::from(file), options.timeout),
            (None, Some(url)) => {
                let headers = match source.get("headers") {
                    None => Vec::new(),
                    Some(h) => h
                        .as_object()
                        .ok_or_else(|| {
                            auth_error("credential_source.headers must be an object".into())
                        })?
                        .iter()
                        .map(|(k, v)| {
                            v.as_str()
                                .map(|v| (k.clone(), v.to_owned()))
                                .ok_or_else(|| {
                                    auth_error(format!(
                                        "credential_source.headers.{k} must be a string"
                                    ))
                                })
                        })
                        .collect::<Result<_, _>>()?,
                };
                Subject::Url {
                    endpoint: Box::new(TokenEndpoint::subject_token_source(
                        &url,
                        options.clone(),
                        CredentialKind::ExternalAccount,
                    )?),
                    headers,
                }
            }
            _ => {
                return Err(auth_error(
                    "credential_source needs exactly one of `file` and `url`".into(),
                ));
            }
        };
        let format = match source.get("format") {
            None => Format::Text,
            Some(f) => match f.get("type").and_then(|t| t.as_str()) {
                None | Some("text") => Format::Text,
                Some("json") => {
                    Format::Json(text(f, "subject_token_field_name").ok_or_else(|| {
                        auth_error(
                            "credential_source.format of type json needs subject_token_field_name"
                                .into(),
                        )
                    })?)
                }
                Some(other) => {
                    return Err(auth_error(format!(
                        "credential_source.format.type {other:?} is not \"text\" or \"json\""
                    )));
                }
            },
        };
        let impersonation = match text(value, "service_account_impersonation_url") {
            None => None,
            Some(url) => {
                let seconds = value
                    .get("service_account_impersonation")
                    .and_then(|v| v.get("token_lifetime_seconds"))
                    .map(|v| {
                        v.as_u64()
                            .filter(|s| (1..=3600).contains(s))
                            .ok_or_else(|| {
                                Error::invalid(
                                    "service_account_impersonation.token_lifetime_seconds",
                                    "must be a whole number of seconds from 1 to 3600",
                                )
                            })
                    })
                    .transpose()?;
                let lifetime = seconds.map_or(MAX_IMPERSONATION_LIFETIME, Duration::from_secs);
                let endpoint = TokenEndpoint::named_in_file(
                    &url,
                    FileUrl::ImpersonationUrl,
                    any_host,
                    options.clone(),
                    CredentialKind::ExternalAccount,
                )?;
                Some((endpoint, lifetime))
            }
        };
        let quota_project_id = text(value, "quota_project_id")
            .map(|id| super::quota_project::checked("quota_project_id", &id))
            .transpose()?;
        Ok(Self {
            audience,
            subject_token_type,
            sts,
            subject,
            format,
            impersonation,
            quota_project_id,
            cache: TokenCache::default(),
        })
    }

    /// The workload identity pool provider the tokens are exchanged for.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    async fn subject_token(&self) -> Result<String, Error> {
        let raw = match &self.subject {
            Subject::File(path, deadline) => {
                let (path, deadline) = (path.clone(), *deadline);
                // The read blocks (within its deadline): off the async workers.
                tokio::task::spawn_blocking(move || {
                    read_credentials_file(&path, CredentialKind::ExternalAccount, deadline)
                })
                .await
                .map_err(|e| auth_error(format!("the subject token file could not be read: {e}")))?
                .map_err(|e| auth_error(format!("the subject token: {}", error_message(&e))))?
            }
            Subject::Url { endpoint, headers } => {
                let answer = endpoint.get(headers).await?;
                endpoint.check(&answer, "the subject token request")?;
                if answer.body.len() as u64 > MAX_SUBJECT_TOKEN {
                    return Err(auth_error(format!(
                        "the subject token at {} is larger than {MAX_SUBJECT_TOKEN} bytes",
                        endpoint.shown()
                    )));
                }
                String::from_utf8_lossy(&answer.body).into_owned()
            }
        };
        let token = match &self.format {
            Format::Text => raw.trim().to_owned(),
            Format::Json(field) => serde_json::from_str::<serde_json::Value>(&raw)
                .ok()
                .and_then(|v| v.get(field).and_then(|t| t.as_str()).map(str::to_owned))
                .ok_or_else(|| {
                    auth_error(format!(
                        "the subject token source gave no JSON field {field:?} \
                         (credential_source.format.subject_token_field_name)"
                    ))
                })?,
        };
        if token.is_empty() {
            return Err(auth_error("the subject token is empty".into()));
        }
        Ok(token)
    }

    async fn fetch(&self) -> Result<AccessToken, Error> {
        let subject = self.subject_token().await?;
        let scope = if self.impersonation.is_some() {
            CLOUD_PLATFORM_SCOPE
        } else {
            SCOPE
        };
        let answer = self
            .sts
            .post_form(&[
                ("grant_type", TOKEN_EXCHANGE_GRANT),
                ("audience", &self.audience),
                ("scope", scope),
                ("requested_token_type", ACCESS_TOKEN_TYPE),
                ("subject_token", &subject),
                ("subject_token_type", &self.subject_token_type),
            ])
            .await?;
        let federated = self.sts.token(&answer, "the subject token")?;
        match &self.impersonation {
            None => Ok(federated),
            Some((endpoint, lifetime)) => {
                generate_access_token(endpoint, federated.expose_secret(), &[], *lifetime).await
            }
        }
    }
}

impl fmt::Debug for ExternalAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = match &self.subject {
            Subject::File(path, _) => path.display().to_string(),
            Subject::Url { endpoint, .. } => endpoint.shown().to_owned(),
        };
        f.debug_struct("ExternalAccount")
            .field("audience", &self.audience)
            .field("token_url", &self.sts.shown())
            .field("subject_token_source", &source)
            .field(
                "impersonation_url",
                &self.impersonation.as_ref().map(|(e, _)| e.shown()),
            )
            .finish_non_exhaustive()
    }
}

super::cache::cached_source!(ExternalAccount, CredentialKind::ExternalAccount, |s| {
    s.sts.allow_loopback();
    if let Some((endpoint, _)) = &s.impersonation {
        endpoint.allow_loopback();
    }
});

#[cfg(test)]
mod tests {
    use super::*;

    fn file(extra: &str) -> String {
        format!(
            r#"{{"type":"external_account","audience":"//iam.googleapis.com/x","subject_token_type":"urn:ietf:params:oauth:token-type:jwt","token_url":"https://sts.googleapis.com/v1/token"{extra}}}"#
        )
    }

    #[test]
    fn unsupported_sources_are_named_and_fields_checked() {
        let e =
            ExternalAccount::from_json(&file(r#","credential_source":{"environment_id":"aws1"}"#))
                .unwrap_err();
        assert!(e.to_string().contains("AWS"), "{e}");
        let e = ExternalAccount::from_json(&file(r#","credential_source":{"executable":{}}"#))
            .unwrap_err();
        assert!(e.to_string().contains("executable"), "{e}");
        let e = ExternalAccount::from_json(&file("")).unwrap_err();
        assert!(e.to_string().contains("credential_source"), "{e}");
        let e = ExternalAccount::from_json(&file(
            r#","credential_source":{"file":"/x","format":{"type":"json"}}"#,
        ))
        .unwrap_err();
        assert!(e.to_string().contains("subject_token_field_name"), "{e}");
        let e = ExternalAccount::from_json(&file(
            r#","credential_source":{"url":"http://example.com/token"}"#,
        ))
        .unwrap_err();
        assert!(e.to_string().contains("https"), "{e}");
        // Link-local instance identity endpoints (Azure's) are reached over plain HTTP.
        ExternalAccount::from_json(&file(
            r#","credential_source":{"url":"http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01","headers":{"Metadata":"True"},"format":{"type":"json","subject_token_field_name":"access_token"}}"#,
        ))
        .unwrap();
        ExternalAccount::from_json(&file(
            r#","credential_source":{"url":"http://[fe80::1]/token"}"#,
        ))
        .unwrap();
        // GitHub's token URL carries a query.
        ExternalAccount::from_json(&file(
            r#","credential_source":{"url":"https://pipelines.actions.githubusercontent.com/x/idtoken?api-version=2.0&audience=y"}"#,
        ))
        .unwrap();
        assert!(
            ExternalAccount::from_json(&file(
                r#","credential_source":{"url":"https://u:p@example.com/token"}"#,
            ))
            .is_err()
        );
        assert!(
            ExternalAccount::from_json(&file(
                r#","credential_source":{"url":"http://169.255.0.1/token"}"#,
            ))
            .is_err()
        );
        ExternalAccount::from_json(&file(r#","credential_source":{"file":"/x"}"#)).unwrap();
    }
}
