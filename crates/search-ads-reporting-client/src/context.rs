//! The generated client's inner value is `search-ads-client`'s [`ClientContext`] (re-exported:
//! the two APIs share the OAuth scope and token, SR-7), and [`Client::with_authorizer`].

use std::sync::Arc;

use crate::{AuthorizeRequest, Client, ClientContext};

impl Client {
    /// A client using [`http_client_builder`](crate::http_client_builder)'s
    /// HTTP client, authorizing every request with `authorizer`.
    ///
    /// # Errors
    /// When the HTTP client cannot be built (no TLS backend).
    pub fn with_authorizer(
        baseurl: &str,
        authorizer: Arc<dyn AuthorizeRequest>,
    ) -> Result<Self, reqwest::Error> {
        let http = crate::http_client_builder().build()?;
        Ok(Self::new_with_client(
            baseurl,
            http,
            ClientContext::new().with_authorizer(authorizer),
        ))
    }
}
