//! `conversion.updateAvailability`: the Floodlight availability of uploaded
//! conversions.

use sa360_v2_client::types;

use super::client::SearchAdsClient;
use super::conversion::Availability;
use super::error::Error;
use super::wire;
use super::wire::send;

const OP_AVAILABILITY: &str = "conversion.updateAvailability";

impl SearchAdsClient {
    /// Records that all conversions of each Floodlight activity have been uploaded up to its
    /// timestamp: an [`UpdateAvailabilityRequest`]; [`send`](UpdateAvailabilityRequest::send)
    /// it for the server's echo.
    pub fn update_availability(
        &self,
        availabilities: impl IntoIterator<Item = Availability>,
    ) -> UpdateAvailabilityRequest {
        UpdateAvailabilityRequest {
            client: self.clone(),
            availabilities: availabilities.into_iter().collect(),
        }
    }
}

/// `conversion.updateAvailability`, not sent yet. Made by
/// [`SearchAdsClient::update_availability`].
///
/// ```no_run
/// use chrono::Utc;
/// use sa360_video_sdk::search_ads::{AdvertiserId, AgencyId, Availability, SearchAdsClient, SegmentationId};
/// # async fn run(client: SearchAdsClient) -> Result<(), sa360_video_sdk::search_ads::Error> {
/// let uploaded_until = Availability {
///     segmentation_id: Some(SegmentationId::new(551_234)), // the Floodlight activity
///     ..Availability::new(AgencyId::new(20100000000000895), AdvertiserId::new(21700000000011523), Utc::now())
/// };
/// let echo = client.update_availability([uploaded_until]).send().await?;
/// assert_eq!(echo.len(), 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a request does nothing until .send()"]
pub struct UpdateAvailabilityRequest {
    client: SearchAdsClient,
    availabilities: Vec<Availability>,
}

impl UpdateAvailabilityRequest {
    /// Checks the input (not empty, timestamps from 1970 on: an [`Error::Validation`] before
    /// anything is sent) and sends it, retried on transient failures (the call is idempotent).
    pub async fn send(self) -> Result<Vec<Availability>, Error> {
        let Self {
            client,
            availabilities,
        } = self;
        if availabilities.is_empty() {
            return Err(Error::invalid(
                "availabilities",
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
        let api = &client.inner.api;
        let answer = client
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
