//! One Reporting API call: its operation names, and its failures mapped to [`Error`].

use std::future::Future;

use sa360_reporting_client::{ResponseValue, types};

use super::super::error::{Error, ReportingFailure};
use super::super::wire;

pub(crate) const OP_SEARCH: &str = "customers.searchAds360.search";
pub(crate) const OP_LIST_CUSTOMERS: &str = "customers.listAccessibleCustomers";

/// Awaits one generated call and maps a failure to [`Error`].
pub(crate) async fn send<T>(
    operation: &'static str,
    call: impl Future<
        Output = Result<ResponseValue<T>, sa360_reporting_client::Error<types::ErrorResponse>>,
    >,
) -> Result<T, Error> {
    match call.await {
        Ok(answer) => {
            tracing::Span::current().record("status", answer.status().as_u16());
            Ok(answer.into_inner())
        }
        Err(e) => Err(map_error(operation, e)),
    }
}

/// Maps a generated-client error: the Status body to [`Error::Reporting`], the rest as for v2.
pub(crate) fn map_error(
    operation: &'static str,
    error: sa360_reporting_client::Error<types::ErrorResponse>,
) -> Error {
    use sa360_reporting_client::Error as E;
    let v2 = |e: wire::ClientError| wire::map_error(operation, e);
    match error {
        E::ErrorResponse(value) => Error::Reporting {
            operation,
            status: value.status().as_u16(),
            failure: ReportingFailure::from_wire(&value.into_inner()),
        },
        E::CommunicationError(e) => v2(E::CommunicationError(e)),
        E::ResponseBodyError(e) => v2(E::ResponseBodyError(e)),
        E::InvalidUpgrade(e) => v2(E::InvalidUpgrade(e)),
        E::InvalidResponsePayload(b, e) => v2(E::InvalidResponsePayload(b, e)),
        E::UnexpectedResponse(r) => v2(E::UnexpectedResponse(r)),
        E::InvalidRequest(m) => v2(E::InvalidRequest(m)),
        E::Custom(m) => v2(E::Custom(m)),
    }
}
