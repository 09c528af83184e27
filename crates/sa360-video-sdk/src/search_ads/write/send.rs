//! One attempt of a batch as one HTTP request: `conversion.insert` (`POST
//! /conversion`) or `conversion.update` (`PUT /conversion`), made as the
//! generated client makes it (the spec's request body type, serialized as the
//! batch was read, `body.rs`; its headers, its
//! `pre` hook that authorizes and its `exec` hook that traces and bounds the
//! answer), except that a 200 answer's echo is checked rather than decoded.
//!
//! The echo repeats every conversion as stored, 35 members each, and a write
//! needs none of them: a 200 says the whole batch was stored (SA-9). Decoding
//! it into the generated `ConversionList` cost the SDK as much as building
//! and sending the request (issue 28). So the body is read as a JSON object
//! whose `conversion` member, when present, is an array of JSON values, each
//! scanned but not decoded, and whose `kind`, when present, is a string; other
//! members are ignored, as the generated type ignores them. A body that is not
//! such JSON fails as the generated decoder fails
//! (`Error::InvalidResponsePayload`), so the SDK's error, and what a batch
//! does after it, stay as they were. Where the two differ on purpose: an echoed
//! conversion whose members have the wrong JSON types is not refused (the
//! batch was stored all the same). Error answers (4xx, 5xx) go through the
//! generated `GoogleErrorResponse` decoder.

use sa360_v2_client::__glue::{ClientHooks, ClientInfo, OperationInfo};
use sa360_v2_client::{Client, ResponseValue, types};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::super::error::Error;
use super::super::wire::{ClientError, map_error};
use super::body::Body;
use super::kind::WriteKind;

/// A 200 answer of insert or update, checked but not decoded.
#[derive(Deserialize)]
struct Echo<'a> {
    #[serde(borrow, default)]
    #[allow(dead_code)] // read to check it is an array of JSON values
    conversion: Vec<&'a RawValue>,
    #[serde(default)]
    #[allow(dead_code)] // read to check it is a string
    kind: Option<String>,
}

/// Sends `body` once; `Ok` when the API answered 200 (the whole batch was
/// stored or applied).
pub(crate) async fn send_body(
    api: &Client,
    operation: &'static str,
    body: &Body,
) -> Result<(), Error> {
    request(api, body)
        .await
        .map_err(|e| map_error(operation, e))
}

async fn request(api: &Client, body: &Body) -> Result<(), ClientError> {
    let url = format!("{}/conversion", api.baseurl());
    // In the generated builder's order: accept, the JSON body (its bytes
    // written as the batch was read, `body.rs`), then the spec's headers.
    let (builder, operation_id) = match body.kind() {
        WriteKind::Insert => (api.client().post(url), "conversion_insert"),
        WriteKind::Update => (api.client().put(url), "conversion_update"),
    };
    let builder = builder
        .header(reqwest::header::ACCEPT, "application/json")
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.bytes());
    let mut request = builder
        .header("api-version", Client::api_version())
        .build()?;
    let info = OperationInfo { operation_id };
    api.pre::<types::GoogleErrorResponse>(&mut request, &info)
        .await?;
    let result = api.exec(request, &info).await;
    api.post::<types::GoogleErrorResponse>(&result, &info)
        .await?;
    let response = result?;
    tracing::Span::current().record("status", response.status().as_u16());
    match response.status().as_u16() {
        200 => {
            let bytes = response
                .bytes()
                .await
                .map_err(ClientError::ResponseBodyError)?;
            match serde_json::from_slice::<Echo<'_>>(&bytes) {
                Ok(_) => Ok(()),
                Err(e) => Err(ClientError::InvalidResponsePayload(bytes, e)),
            }
        }
        400..=599 => Err(ClientError::ErrorResponse(
            ResponseValue::from_response(response).await?,
        )),
        _ => Err(ClientError::UnexpectedResponse(response)),
    }
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;
    use crate::search_ads::conversion::Conversion;
    use crate::search_ads::test_support::recording_client;

    /// The request of an insert or update is the one the generated builder makes: method, URL,
    /// headers and body.
    #[tokio::test]
    async fn the_request_is_the_generated_builders() {
        let (client, recorder) = recording_client();
        for kind in [WriteKind::Insert, WriteKind::Update] {
            let mut body = Body::new(kind);
            for i in 0..3 {
                let mut c = Conversion::new(
                    format!("c-{i}"),
                    DateTime::from_timestamp_millis(1_700_000_000_000 + i).unwrap(),
                );
                c.click_id = Some("gclid-\"é".into());
                body.push(c).unwrap();
            }
            let list: serde_json::Value = serde_json::from_slice(&body.bytes()).unwrap();
            let generated = match kind {
                WriteKind::Insert => {
                    let list: types::ConversionInsertList = serde_json::from_value(list).unwrap();
                    client.conversion_insert().body(list).send().await
                }
                WriteKind::Update => {
                    let list: types::ConversionUpdateList = serde_json::from_value(list).unwrap();
                    client.conversion_update().body(list).send().await
                }
            };
            assert!(generated.is_err(), "nothing is sent");
            assert!(request(&client, &body).await.is_err());
            let requests = recorder.take();
            assert_eq!(requests.len(), 2, "{requests:?}");
            assert!(requests[0].3.is_some(), "the body is recorded");
            assert_eq!(requests[1], requests[0], "{kind:?}");
        }
    }
}
