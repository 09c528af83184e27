//! The generated client's request hooks: the headers of [`SENSITIVE_HEADERS`] are marked
//! sensitive before each request, and each request runs in a `tracing` span
//! ([`sa360_video_client_support::trace_exec`], service [`SERVICE`]).

use progenitor_client::{ClientHooks, ClientInfo, OperationInfo};
use reqwest::header::Entry;

use crate::context::ClientContext;
use crate::generated::Client;
use progenitor_client::Error;

/// The `service` field of this client's request spans.
pub const SERVICE: &str = "video_session";

/// Request headers whose values are marked sensitive before sending
/// (hidden from `Debug` output of the request and its headers).
pub const SENSITIVE_HEADERS: &[&str] = &["usertoken", "authorization"];

impl ClientHooks<ClientContext> for Client {
    async fn pre<E>(
        &self,
        request: &mut reqwest::Request,
        _info: &OperationInfo,
    ) -> Result<(), Error<E>> {
        for name in SENSITIVE_HEADERS {
            if let Entry::Occupied(mut entry) = request.headers_mut().entry(*name) {
                for value in entry.iter_mut() {
                    value.set_sensitive(true);
                }
            }
        }
        Ok(())
    }

    async fn exec(
        &self,
        request: reqwest::Request,
        info: &OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        sa360_video_client_support::trace_exec(
            self.client(),
            request,
            SERVICE,
            info.operation_id,
            self.inner().body_limits(),
        )
        .await
    }
}
