//! The generated client's request hooks: authorization before each request
//! ([`ClientContext::authorize`](crate::ClientContext::authorize)) and a `tracing` span around
//! each request ([`sa360_video_client_support::trace_exec`], service [`SERVICE`]).
//!
//! `sa360-reporting-client` shares this crate's [`ClientContext`](crate::ClientContext), so
//! the hooks and `Client::with_authorizer` of both are written by one macro,
//! [`search_ads_client_glue!`](crate::search_ads_client_glue).

/// The `service` field of this client's request spans.
pub const SERVICE: &str = "search_ads";

/// Writes, for the generated `Client` of the crate that invokes it (whose inner type is
/// [`ClientContext`](crate::ClientContext); its generated `Client` and `Error` must be in scope), `Client::with_authorizer` and the `ClientHooks`
/// impl: authorize before each request, then a traced, body-limited request whose span names
/// `$service`. Used by this crate and by `sa360-reporting-client`.
#[macro_export]
macro_rules! search_ads_client_glue {
    ($service:expr) => {
        impl Client {
            /// A client using [`http_client_builder`](crate::http_client_builder)'s
            /// HTTP client, authorizing every request with `authorizer`.
            ///
            /// # Errors
            /// When the HTTP client cannot be built (no TLS backend).
            pub fn with_authorizer(
                baseurl: &str,
                authorizer: ::std::sync::Arc<dyn $crate::AuthorizeRequest>,
            ) -> ::std::result::Result<Self, $crate::__glue::reqwest::Error> {
                let http = $crate::http_client_builder().build()?;
                Ok(Self::new_with_client(
                    baseurl,
                    http,
                    $crate::ClientContext::new().with_authorizer(authorizer),
                ))
            }
        }

        impl $crate::__glue::ClientHooks<$crate::ClientContext> for Client {
            async fn pre<E>(
                &self,
                request: &mut $crate::__glue::reqwest::Request,
                info: &$crate::__glue::OperationInfo,
            ) -> ::std::result::Result<(), Error<E>> {
                $crate::__glue::ClientInfo::inner(self)
                    .authorize(request, info.operation_id)
                    .await
            }

            async fn exec(
                &self,
                request: $crate::__glue::reqwest::Request,
                info: &$crate::__glue::OperationInfo,
            ) -> $crate::__glue::reqwest::Result<$crate::__glue::reqwest::Response> {
                $crate::__glue::trace_exec(
                    $crate::__glue::ClientInfo::client(self),
                    request,
                    $service,
                    info.operation_id,
                    $crate::__glue::ClientInfo::inner(self).body_limits(),
                )
                .await
            }
        }
    };
}

use crate::generated::Client;
use progenitor_client::Error;

search_ads_client_glue!(SERVICE);
