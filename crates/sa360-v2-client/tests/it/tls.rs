//! HTTPS works with the plain generated constructor: rustls + ring is
//! installed by `ClientContext::new()`, so requests fail for network reasons,
//! never for a missing TLS backend or crypto provider.

test_support::client_https_tests!(sa360_v2_client);
