//! The generated client's request hooks: authorization before each request
//! ([`ClientContext::authorize`]) and a `tracing` span around each request
//! ([`client_support::trace_exec`], service [`SERVICE`]).

use progenitor_client::{ClientHooks, ClientInfo, OperationInfo};

use crate::{Client, ClientContext, Error};

/// The `service` field of this client's request spans.
pub const SERVICE: &str = "search_ads_reporting";

impl ClientHooks<ClientContext> for Client {
    async fn pre<E>(
        &self,
        request: &mut reqwest::Request,
        info: &OperationInfo,
    ) -> Result<(), Error<E>> {
        self.inner().authorize(request, info.operation_id).await
    }

    async fn exec(
        &self,
        request: reqwest::Request,
        info: &OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        client_support::trace_exec(
            self.client(),
            request,
            SERVICE,
            info.operation_id,
            self.inner().body_limits(),
        )
        .await
    }
}
