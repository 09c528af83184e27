//! Connection settings of `apictl ads`: flags and environment first, then the
//! config file; the client they build.

use std::str::FromStr;

use sa360_video_sdk::http::HttpOptions;
use sa360_video_sdk::search_ads::{
    AdvertiserId, AgencyId, CustomerId, EngineAccountId, SearchAdsClient, WriteOptions,
};

use crate::cli::AdsConnArgs;
use crate::config::{IdValue, SearchAdsSection};
use crate::error::{AppError, AppResult};
use crate::limits;

/// Connection settings: flags and environment first, then the config file.
pub(super) struct Conn<'a> {
    pub(super) args: &'a AdsConnArgs,
    pub(super) file: &'a SearchAdsSection,
    /// The file of `apictl auth login` (when there is a state directory).
    pub(super) login_file: Option<std::path::PathBuf>,
}

/// Parses the id of `--FLAG`.
pub(super) fn parse_id<T: FromStr>(flag: &str, text: &str) -> AppResult<T> {
    text.trim().parse().map_err(|_| {
        AppError::refused(format!("--{flag} {text:?} is not an id"))
            .hint("ids are decimal digits, e.g. 20700000000000125")
    })
}

impl Conn<'_> {
    fn id<T: FromStr>(
        &self,
        flag: &str,
        cli: &Option<String>,
        file: &Option<IdValue>,
    ) -> AppResult<Option<T>> {
        match (cli, file) {
            (Some(text), _) => parse_id(flag, text).map(Some),
            (None, Some(v)) => parse_id(flag, &v.to_string()).map(Some),
            (None, None) => Ok(None),
        }
    }

    pub(super) fn agency(&self) -> AppResult<Option<AgencyId>> {
        self.id("agency-id", &self.args.agency_id, &self.file.agency_id)
    }

    pub(super) fn advertiser(&self) -> AppResult<Option<AdvertiserId>> {
        self.id(
            "advertiser-id",
            &self.args.advertiser_id,
            &self.file.advertiser_id,
        )
    }

    pub(super) fn engine_account(&self) -> AppResult<Option<EngineAccountId>> {
        self.id(
            "engine-account-id",
            &self.args.engine_account_id,
            &self.file.engine_account_id,
        )
    }

    pub(super) fn customer(&self) -> AppResult<Option<CustomerId>> {
        let text = match (&self.args.customer_id, &self.file.customer_id) {
            (Some(t), _) => t.clone(),
            (None, Some(v)) => v.to_string(),
            (None, None) => return Ok(None),
        };
        // The rule is the SDK's (`CustomerId::new`); its message states it.
        CustomerId::new(text.trim())
            .map(Some)
            .map_err(|e| AppError::refused(format!("--customer-id: {e}")))
    }

    pub(super) fn login_customer(&self) -> AppResult<Option<CustomerId>> {
        let text = match (&self.args.login_customer_id, &self.file.login_customer_id) {
            (Some(t), _) => t.clone(),
            (None, Some(v)) => v.to_string(),
            (None, None) => return Ok(None),
        };
        CustomerId::new(text.trim())
            .map(Some)
            .map_err(|e| AppError::refused(format!("--login-customer-id: {e}")))
    }

    /// The agency and advertiser every advertiser-level command needs.
    pub(super) fn advertiser_scope(&self) -> AppResult<(AgencyId, AdvertiserId)> {
        match (self.agency()?, self.advertiser()?) {
            (Some(a), Some(b)) => Ok((a, b)),
            _ => Err(AppError::refused("no agency and advertiser given").hint(
                "pass --agency-id and --advertiser-id, set SEARCH_ADS_AGENCY_ID and SEARCH_ADS_ADVERTISER_ID, or add agency_id and advertiser_id to [search_ads] in the config file",
            )),
        }
    }

    /// A client with the configured URL and credentials.
    pub(super) fn client(&self, write: WriteOptions) -> AppResult<SearchAdsClient> {
        let url = self.args.url.clone().or_else(|| self.file.url.clone());
        // The order of credentials is crate::auth::credentials' (`apictl auth status` shows it).
        let chosen = crate::auth::credentials::choose(
            self.args,
            self.file,
            self.login_file.as_deref(),
            self.http_options()?,
        )?;
        let builder = SearchAdsClient::builder_shared(chosen.source);
        let builder = match url {
            Some(url) => builder.base_url(&url),
            None => builder,
        };
        let reporting_url = self
            .args
            .reporting_url
            .clone()
            .or_else(|| self.file.reporting_url.clone());
        let builder = match reporting_url {
            Some(url) => builder.reporting_base_url(&url),
            None => builder,
        };
        let builder = match self.login_customer()? {
            Some(manager) => builder.login_customer_id(manager),
            None => builder,
        };
        Ok(builder
            .write_options(write)
            .http_options(self.http_options()?)
            .build()?)
    }

    /// The transport limits of `--timeout`, `--deadline`, `--stall-timeout`,
    /// `--max-body` and `--max-download` over the SDK's defaults.
    pub(super) fn http_options(&self) -> AppResult<HttpOptions> {
        let mut options = limits::common_http_options(
            self.args.timeout,
            self.args.stall_timeout,
            self.args.max_body,
        )?;
        if let Some(v) = self.args.deadline {
            options.deadline = Some(limits::seconds("--deadline", v)?);
        }
        if let Some(v) = self.args.max_download {
            options.max_download_bytes = limits::bytes("--max-download", v)?;
        }
        Ok(options)
    }
}
