//! Opening the ID-mapping download, and resuming it with `Range` +
//! `If-Range` after it broke off.

use std::path::Path;

use futures::stream::{BoxStream, StreamExt};
use reqwest::header::{self, HeaderMap};
use sa360_v2_client::{ClientInfo as _, types};

use super::rows::ProgressFn;
use super::save::{Download, Resume, check_content_type, resumable};
use crate::search_ads::call;
use crate::search_ads::client::SearchAdsClient;
use crate::search_ads::error::Error;
use crate::search_ads::values::{AdvertiserId, AgencyId};
use crate::search_ads::wire::send;
use crate::search_ads::wire::{OP_ID_MAPPING, from_reqwest};

/// An answer whose body is (part of) the file.
pub(crate) struct Opened {
    pub body: BoxStream<'static, Result<bytes::Bytes, reqwest::Error>>,
    /// The whole file's size, when known.
    pub expected: Option<u64>,
    /// How a later request may resume it.
    pub resume: Resume,
    /// The offset of the body's first byte in the file (0 for a whole file).
    pub start: u64,
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

/// `bytes FIRST-LAST/TOTAL` of a 206: the first byte and the total size.
fn content_range(headers: &HeaderMap) -> Option<(u64, Option<u64>)> {
    let text = headers.get(header::CONTENT_RANGE)?.to_str().ok()?;
    let (unit, rest) = text.trim().split_once(' ')?;
    if !unit.eq_ignore_ascii_case("bytes") {
        return None;
    }
    let (span, total) = rest.split_once('/')?;
    let (first, _) = span.split_once('-')?;
    Some((first.trim().parse().ok()?, total.trim().parse().ok()))
}

impl SearchAdsClient {
    /// The whole file, through the generated client (retried until the
    /// headers arrive).
    pub(crate) async fn open_id_mapping(
        &self,
        agency_id: AgencyId,
        advertiser_id: AdvertiserId,
    ) -> Result<Opened, Error> {
        let download = &self.inner.download;
        let response = self
            .inner
            .download_calls
            .run(OP_ID_MAPPING, |_| async move {
                let call = download
                    .reports_get_id_mapping_file()
                    .agency_id(agency_id.wire())
                    .advertiser_id(advertiser_id.wire())
                    .alt(types::AltMedia::Media)
                    .send();
                send(OP_ID_MAPPING, call).await
            })
            .await?;
        check_content_type(response.headers())?;
        let expected = content_length(response.headers());
        let resume = Resume::from_headers(response.headers());
        Ok(Opened {
            body: response.into_inner().into_inner().boxed(),
            expected,
            resume,
            start: 0,
        })
    }

    /// The file from byte `from` on, if it is still the one `etag` names;
    /// else (a 200, or a 416) the whole file again.
    async fn reopen_id_mapping(
        &self,
        agency_id: AgencyId,
        advertiser_id: AdvertiserId,
        from: u64,
        etag: &str,
    ) -> Result<Opened, Error> {
        let inner = &self.inner;
        let url = format!(
            "{}/agency/{}/advertiser/{}/idmapping",
            inner.base.as_str(),
            agency_id.get(),
            advertiser_id.get()
        );
        let response = inner
            .download_calls
            .run(OP_ID_MAPPING, |_| {
                let url = url.clone();
                async move {
                    let mut request = inner
                        .download
                        .client()
                        .get(url)
                        .query(&[("alt", "media")])
                        .header(header::RANGE, format!("bytes={from}-"))
                        .header(header::IF_RANGE, etag)
                        .build()
                        .map_err(|e| from_reqwest(OP_ID_MAPPING, e))?;
                    let token = inner.tokens.token().await?;
                    call::record_token(&token);
                    sa360_v2_client::set_bearer_token(&mut request, token.expose_secret())
                        .map_err(|e| Error::auth(inner.tokens.kind(), e.message().to_owned()))?;
                    crate::search_ads::auth::quota_project::apply(
                        &mut request,
                        inner.tokens.quota_project_id(),
                    );
                    let response = sa360_video_client_support::trace_exec(
                        inner.download.client(),
                        request,
                        "search_ads",
                        "reports_get_id_mapping_file",
                        inner.download.inner().body_limits(),
                    )
                    .await
                    .map_err(|e| from_reqwest(OP_ID_MAPPING, e))?;
                    tracing::Span::current().record("status", response.status().as_u16());
                    match response.status().as_u16() {
                        200 | 206 | 416 => Ok(response),
                        status => Err(error_answer(status, response).await),
                    }
                }
            })
            .await?;
        match response.status().as_u16() {
            206 => {
                let Some((first, total)) = content_range(response.headers()) else {
                    return Err(Error::unexpected(
                        OP_ID_MAPPING,
                        Some(206),
                        "a partial answer without a readable Content-Range",
                    ));
                };
                if first != from {
                    return Err(Error::unexpected(
                        OP_ID_MAPPING,
                        Some(206),
                        format!("asked for the file from byte {from}, got it from byte {first}"),
                    ));
                }
                check_content_type(response.headers())?;
                Ok(Opened {
                    resume: Resume::from_headers(response.headers()),
                    body: response.bytes_stream().boxed(),
                    expected: total,
                    start: first,
                })
            }
            200 => {
                check_content_type(response.headers())?;
                Ok(Opened {
                    expected: content_length(response.headers()),
                    resume: Resume::from_headers(response.headers()),
                    body: response.bytes_stream().boxed(),
                    start: 0,
                })
            }
            // The range no longer fits the file: start over.
            _ => self.open_id_mapping(agency_id, advertiser_id).await,
        }
    }

    /// Saves the file to `path`, resuming after a break (see
    /// [`SearchAdsClient::save_id_mapping`]).
    pub(crate) async fn download_id_mapping(
        &self,
        agency_id: AgencyId,
        advertiser_id: AdvertiserId,
        path: &Path,
        progress: Option<ProgressFn>,
    ) -> Result<u64, Error> {
        let mut opened = self.open_id_mapping(agency_id, advertiser_id).await?;
        let mut download = Download::new(path)?;
        let mut resumes_left = self.inner.retry.max_attempts.saturating_sub(1);
        loop {
            download.set_expected(opened.expected);
            let resume = opened.resume.clone();
            let error = match download.receive(opened.body, progress.as_ref()).await {
                Ok(()) => return download.finish().await,
                Err(e) => e,
            };
            if !resumable(&error) || resumes_left == 0 {
                return Err(error);
            }
            resumes_left -= 1;
            let from = download.written();
            opened = match resume.validator() {
                Some(etag) if from > 0 => {
                    tracing::info!(from, "the ID-mapping download broke off; resuming it");
                    self.reopen_id_mapping(agency_id, advertiser_id, from, etag)
                        .await?
                }
                _ => {
                    tracing::info!(
                        from,
                        "the ID-mapping download broke off and cannot resume; starting over"
                    );
                    self.open_id_mapping(agency_id, advertiser_id).await?
                }
            };
            if opened.start != from {
                // The whole file again (the server cannot resume, or the
                // file changed): what was saved is no longer part of it.
                download.restart().await?;
            }
        }
    }
}

/// The SDK error for an error answer to a resumed download.
async fn error_answer(status: u16, response: reqwest::Response) -> Error {
    let retry_after = response
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(crate::search_ads::retry::parse_retry_after);
    let body = match sa360_video_client_support::limit_body(
        response,
        sa360_video_client_support::BodyLimits::default().with_max_bytes(64 * 1024),
    )
    .bytes()
    .await
    {
        Ok(body) => body,
        Err(e) => return from_reqwest(OP_ID_MAPPING, e),
    };
    match serde_json::from_slice::<types::GoogleErrorResponse>(&body) {
        Ok(answer) => crate::search_ads::wire::Envelope::from_wire(&answer.error).into_error(
            OP_ID_MAPPING,
            status,
            retry_after,
        ),
        Err(_) => Error::unexpected(
            OP_ID_MAPPING,
            Some(status),
            format!("the undocumented status {status} to a resumed download"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges_are_read() {
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_RANGE, "bytes 100-199/1000".parse().unwrap());
        assert_eq!(content_range(&h), Some((100, Some(1000))));
        h.insert(header::CONTENT_RANGE, "bytes 5-9/*".parse().unwrap());
        assert_eq!(content_range(&h), Some((5, None)));
        h.insert(header::CONTENT_RANGE, "items 1-2/3".parse().unwrap());
        assert_eq!(content_range(&h), None);
        let mut h = HeaderMap::new();
        h.insert(header::ETAG, "W/\"x\"".parse().unwrap());
        h.insert(header::ACCEPT_RANGES, "bytes".parse().unwrap());
        assert_eq!(Resume::from_headers(&h).validator(), None, "weak");
        h.insert(header::ETAG, "\"x\"".parse().unwrap());
        assert_eq!(Resume::from_headers(&h).validator(), Some("\"x\""));
        h.insert(header::ACCEPT_RANGES, "none".parse().unwrap());
        assert_eq!(Resume::from_headers(&h).validator(), None, "no ranges");
    }
}
