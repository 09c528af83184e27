//! The generated client's request hooks and `Client::with_authorizer`: the same as
//! `sa360-v2-client`'s (whose [`ClientContext`](crate::ClientContext) this crate shares,
//! SR-7), written by its [`search_ads_client_glue!`](sa360_v2_client::search_ads_client_glue),
//! with spans naming [`SERVICE`].

/// The `service` field of this client's request spans.
pub const SERVICE: &str = "search_ads_reporting";

use crate::generated::Client;
use progenitor_client::Error;

sa360_v2_client::search_ads_client_glue!(SERVICE);
