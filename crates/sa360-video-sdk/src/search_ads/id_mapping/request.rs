//! `SearchAdsClient::id_mapping`: the request builder of the ID-mapping download, streamed
//! or saved to a file.

use std::path::Path;
use std::sync::Arc;

use super::rows::ProgressFn;
use super::stream::IdMappingStream;
use crate::search_ads::client::SearchAdsClient;
use crate::search_ads::error::Error;
use crate::search_ads::values::{AdvertiserId, AgencyId};

/// The ID-mapping download.
impl SearchAdsClient {
    /// The advertiser's ID-mapping file: an [`IdMappingRequest`] whose
    /// [`stream`](IdMappingRequest::stream) yields its rows as they download, in constant
    /// memory, or whose [`save`](IdMappingRequest::save) writes it to a file.
    pub fn id_mapping(
        &self,
        agency_id: impl Into<AgencyId>,
        advertiser_id: impl Into<AdvertiserId>,
    ) -> IdMappingRequest {
        IdMappingRequest {
            client: self.clone(),
            agency_id: agency_id.into(),
            advertiser_id: advertiser_id.into(),
            progress: None,
        }
    }
}

/// The ID-mapping download, not started yet. Made by [`SearchAdsClient::id_mapping`].
///
/// ```no_run
/// use futures::TryStreamExt;
/// use sa360_video_sdk::search_ads::{AdvertiserId, AgencyId, SearchAdsClient};
/// # async fn run(client: SearchAdsClient) -> Result<(), sa360_video_sdk::search_ads::Error> {
/// let (agency, advertiser) = (AgencyId::new(20100000000000895), AdvertiserId::new(21700000000011523));
/// // As typed rows, in constant memory:
/// let mut rows = client
///     .id_mapping(agency, advertiser)
///     .progress(|bytes, total| eprintln!("{bytes} of {total:?} bytes"))
///     .stream();
/// while let Some(row) = rows.try_next().await? {
///     println!("{:?} {:?} -> {:?}", row.entity_type, row.legacy.campaign_id, row.new.campaign_id);
/// }
/// // Or saved to a file, resuming after a break:
/// let bytes = client.id_mapping(agency, advertiser).save("idmapping.csv").await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
#[must_use = "a download does nothing until .stream() is polled or .save() awaited"]
pub struct IdMappingRequest {
    client: SearchAdsClient,
    agency_id: AgencyId,
    advertiser_id: AdvertiserId,
    progress: Option<ProgressFn>,
}

impl std::fmt::Debug for IdMappingRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdMappingRequest")
            .field("agency_id", &self.agency_id)
            .field("advertiser_id", &self.advertiser_id)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl IdMappingRequest {
    /// Calls `progress` with the bytes received so far and the total when the server
    /// announced it (`Content-Length`), after each chunk; keep it cheap.
    pub fn progress(mut self, progress: impl Fn(u64, Option<u64>) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// Like [`progress`](Self::progress), with a shared callback.
    pub fn progress_shared(mut self, progress: ProgressFn) -> Self {
        self.progress = Some(progress);
        self
    }

    /// The file's rows as a stream, parsed in constant memory. Nothing is sent before the
    /// stream is first polled; opening the download is retried until the answer's headers
    /// arrive, and a failure there is the stream's first and only item. A download that ends
    /// early ends the stream with [`Error::TruncatedDownload`]. Poll the stream steadily:
    /// back-pressure reaches the connection, and a consumer that stalls longer than
    /// [`HttpOptions::read_timeout`](crate::http::HttpOptions::read_timeout) ends the download
    /// that way too. Must be polled inside a Tokio runtime.
    pub fn stream(self) -> IdMappingStream {
        let Self {
            client,
            agency_id,
            advertiser_id,
            progress,
        } = self;
        let open = async move {
            let opened = client.open_id_mapping(agency_id, advertiser_id).await?;
            Ok((opened.body, opened.expected))
        };
        IdMappingStream::opening(Box::pin(open), progress)
    }

    /// Downloads the file to `path` (through `<path>.part`, renamed only once the whole file
    /// arrived, so `path` is never half a file) and returns its size in bytes.
    ///
    /// A download that breaks off, stalls or loses its connection resumes where it stopped
    /// (`Range` with `If-Range` set to the answer's `ETag`) when the server announced
    /// `Accept-Ranges: bytes` and a strong `ETag`; otherwise, or when the file changed
    /// meanwhile (the server answers the whole file), it starts over. At most
    /// [`RetryPolicy::max_attempts`](crate::search_ads::RetryPolicy::max_attempts) − 1 resumes;
    /// a failure removes the `.part` file.
    pub async fn save(self, path: impl AsRef<Path>) -> Result<u64, Error> {
        self.client
            .download_id_mapping(
                self.agency_id,
                self.advertiser_id,
                path.as_ref(),
                self.progress,
            )
            .await
    }
}
