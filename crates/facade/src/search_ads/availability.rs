//! `conversion.updateAvailability`: the Floodlight availability of uploaded
//! conversions.

use search_ads_client::types;

use super::call::send;
use super::client::SearchAdsClient;
use super::conversion::Availability;
use super::error::Error;
use super::wire;

const OP_AVAILABILITY: &str = "conversion.updateAvailability";

impl SearchAdsClient {
    /// Records that all conversions of each Floodlight activity have been
    /// uploaded up to its timestamp; returns the server's echo. Retried on
    /// transient failures (the call is idempotent).
    pub async fn update_availability(
        &self,
        availabilities: &[Availability],
    ) -> Result<Vec<Availability>, Error> {
        if availabilities.is_empty() {
            return Err(Error::validation(
                "availabilities",
                None,
                "is empty: give at least one availability",
            ));
        }
        for (i, a) in availabilities.iter().enumerate() {
            if a.availability_timestamp.timestamp_millis() < 0 {
                return Err(Error::validation(
                    "availabilityTimestamp",
                    Some(i),
                    "is before 1970-01-01: the API takes epoch milliseconds >= 0",
                ));
            }
        }
        let body = types::UpdateAvailabilityRequest {
            availabilities: availabilities
                .iter()
                .map(wire::availability_to_wire)
                .collect(),
        };
        let api = &self.inner.api;
        let answer = self
            .inner
            .calls
            .run(OP_AVAILABILITY, |_| {
                let body = body.clone();
                async move {
                    let call = api.conversion_update_availability().body(body).send();
                    Ok(send(OP_AVAILABILITY, call).await?.into_inner())
                }
            })
            .await?;
        answer
            .availabilities
            .into_iter()
            .map(|a| {
                wire::availability_from_wire(a)
                    .map_err(|d| Error::unexpected(OP_AVAILABILITY, Some(200), d))
            })
            .collect()
    }
}
