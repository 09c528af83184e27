//! `customers.listAccessibleCustomers`: the customers the caller reaches directly.

use super::super::client::SearchAdsClient;
use super::super::error::Error;
use super::super::values::CustomerId;
use super::rpc::{OP_LIST_CUSTOMERS, send};

impl SearchAdsClient {
    /// The customers the caller reaches directly (`customers.listAccessibleCustomers`), as
    /// ids: an [`AccessibleCustomersRequest`]; [`send`](AccessibleCustomersRequest::send) it.
    pub fn accessible_customers(&self) -> AccessibleCustomersRequest {
        AccessibleCustomersRequest {
            client: self.clone(),
        }
    }
}

/// `customers.listAccessibleCustomers`, not sent yet. Made by
/// [`SearchAdsClient::accessible_customers`].
///
/// ```no_run
/// # async fn run(client: sa360_video_sdk::search_ads::SearchAdsClient) -> Result<(), sa360_video_sdk::search_ads::Error> {
/// for customer in client.accessible_customers().send().await? {
///     println!("{customer}");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a request does nothing until .send()"]
pub struct AccessibleCustomersRequest {
    client: SearchAdsClient,
}

impl AccessibleCustomersRequest {
    /// Sends the request (retried on transient failures).
    pub async fn send(self) -> Result<Vec<CustomerId>, Error> {
        let inner = &self.client.inner;
        let client = &inner.reporting;
        let list = inner
            .calls
            .run(OP_LIST_CUSTOMERS, |_| async move {
                send(
                    OP_LIST_CUSTOMERS,
                    client.customers_list_accessible_customers().send(),
                )
                .await
            })
            .await?;
        list.resource_names
            .iter()
            .map(|name| {
                let id = name.strip_prefix("customers/").ok_or_else(|| {
                    Error::unexpected(
                        OP_LIST_CUSTOMERS,
                        Some(200),
                        format!("resource name {name:?} is not customers/{{id}}"),
                    )
                })?;
                CustomerId::new(id)
                    .map_err(|e| Error::unexpected(OP_LIST_CUSTOMERS, Some(200), e.to_string()))
            })
            .collect()
    }
}
