//! The public API's shape, from outside the crate: both clients are `Clone` and
//! `Debug` without secrets, every setter of the `#[non_exhaustive]` option structs
//! sets its own field and nothing else, and the search ads client's input errors
//! convert into its one error.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use sa360_video_sdk::http::{BaseUrl, HttpOptions};
use sa360_video_sdk::search_ads::{
    AdGroupId, AdId, AdvertiserId, AgencyId, CampaignId, CriterionId, CustomerId, EngineAccountId,
    ListOptions, RetryPolicy, SearchAdsClient, SearchAdsClientBuilder, StaticToken, WriteOptions,
    reporting::{ConversionStatus, ReportFilters, ReportOptions},
};
use sa360_video_sdk::video_session::{
    LockoutPolicy, MemoryStore, VideoSessionClient, VideoSessionClientBuilder,
};

const TOKEN: &str = "ya29.SECRET-token-5e1f";

fn both_traits<T: Clone + Debug + Send + Sync + 'static>() {}
fn debug_only<T: Debug>() {}

fn search_ads_builder() -> SearchAdsClientBuilder {
    SearchAdsClient::builder(StaticToken::new(TOKEN))
        .base_url("http://127.0.0.1:9/doubleclicksearch/v2")
}

#[test]
fn both_clients_are_clone_and_debug_and_so_are_their_builders() {
    both_traits::<SearchAdsClient>();
    both_traits::<VideoSessionClient>();
    debug_only::<SearchAdsClientBuilder>();
    debug_only::<VideoSessionClientBuilder>();
}

#[test]
fn the_search_ads_client_and_its_builder_never_show_the_token() {
    let builder = search_ads_builder();
    let shown = format!("{builder:?}\n{builder:#?}");
    assert!(!shown.contains(TOKEN), "{shown}");
    let client = builder.build().expect("builds");
    let clone = client.clone();
    let shown = format!("{client:?}\n{clone:#?}");
    assert!(!shown.contains(TOKEN), "{shown}");
    assert!(shown.contains("SearchAdsClient"), "{shown}");
    assert_eq!(clone.base_url(), client.base_url());
}

#[test]
fn a_clone_of_the_video_client_shares_its_lockout_guard() {
    let video = VideoSessionClient::builder(BaseUrl::parse("http://127.0.0.1:9").expect("URL"))
        .lockout_store(Arc::new(MemoryStore::new()))
        .build()
        .expect("builds");
    // A clone shares the guard, never a budget of its own.
    assert!(Arc::ptr_eq(
        video.clone().lockout_guard(),
        video.lockout_guard()
    ));
}

/// Asserts that `set(default)` equals `default` with `change` applied by hand:
/// the setter writes its own field and no other.
fn sets_only<T: PartialEq + Debug + Clone>(
    default: &T,
    set: impl Fn(T) -> T,
    change: impl Fn(&mut T),
) {
    let mut expected = default.clone();
    change(&mut expected);
    assert_ne!(
        &expected, default,
        "the test's value must differ from the default"
    );
    assert_eq!(set(default.clone()), expected);
}

#[test]
fn each_http_options_setter_sets_its_own_field() {
    let d = HttpOptions::default();
    let s = Duration::from_millis(1234);
    sets_only(&d, |o| o.connect_timeout(s), |o| o.connect_timeout = s);
    sets_only(&d, |o| o.timeout(s), |o| o.timeout = s);
    sets_only(&d, |o| o.read_timeout(s), |o| o.read_timeout = s);
    sets_only(&d, |o| o.deadline(None), |o| o.deadline = None);
    sets_only(&d, |o| o.max_body_bytes(77), |o| o.max_body_bytes = 77);
    sets_only(
        &d,
        |o| o.max_download_bytes(78),
        |o| o.max_download_bytes = 78,
    );
    sets_only(
        &d,
        |o| o.user_agent("ua/1"),
        |o| o.user_agent = "ua/1".to_owned(),
    );
}

#[test]
fn each_retry_policy_setter_sets_its_own_field() {
    let d = RetryPolicy::default();
    let s = Duration::from_millis(1234);
    sets_only(&d, |o| o.max_attempts(9), |o| o.max_attempts = 9);
    sets_only(&d, |o| o.base_delay(s), |o| o.base_delay = s);
    sets_only(&d, |o| o.max_delay(s), |o| o.max_delay = s);
    sets_only(&d, |o| o.max_retry_after(s), |o| o.max_retry_after = s);
}

#[test]
fn each_list_options_setter_sets_its_own_field() {
    let d = ListOptions::default();
    sets_only(&d, |o| o.page_size(7), |o| o.paging.page_size = 7);
    sets_only(&d, |o| o.look_ahead(3), |o| o.paging.look_ahead = 3);
    let campaign = CampaignId::new(11);
    sets_only(
        &d,
        |o| o.campaign_id(campaign),
        |o| o.campaign_id = Some(campaign),
    );
    let ad_group = AdGroupId::new(12);
    sets_only(
        &d,
        |o| o.ad_group_id(ad_group),
        |o| o.ad_group_id = Some(ad_group),
    );
    let ad = AdId::new(13);
    sets_only(&d, |o| o.ad_id(ad), |o| o.ad_id = Some(ad));
    let criterion = CriterionId::new(14);
    sets_only(
        &d,
        |o| o.criterion_id(criterion),
        |o| o.criterion_id = Some(criterion),
    );
    let customer = CustomerId::new("2000012350").expect("an id");
    sets_only(
        &d,
        |o| o.customer_id(customer),
        |o| o.customer_id = Some(customer),
    );
    let agency = AgencyId::new(15);
    sets_only(&d, |o| o.agency_id(agency), |o| o.agency_id = Some(agency));
    let advertiser = AdvertiserId::new(16);
    sets_only(
        &d,
        |o| o.advertiser_id(advertiser),
        |o| o.advertiser_id = Some(advertiser),
    );
    let engine = EngineAccountId::new(17);
    sets_only(
        &d,
        |o| o.engine_account_id(engine),
        |o| o.engine_account_id = Some(engine),
    );
}

#[test]
fn each_write_options_setter_sets_its_own_field() {
    let d = WriteOptions::default();
    sets_only(&d, |o| o.batch_size(7), |o| o.batch_size = 7);
    sets_only(&d, |o| o.concurrency(3), |o| o.concurrency = 3);
}

#[test]
fn each_search_options_setter_sets_its_own_field() {
    let d = sa360_video_sdk::search_ads::reporting::SearchOptions::default();
    sets_only(&d, |o| o.page_size(7), |o| o.paging.page_size = 7);
    sets_only(&d, |o| o.look_ahead(5), |o| o.paging.look_ahead = 5);
    sets_only(&d, |o| o.max_rows(9), |o| o.max_rows = 9);
}

#[test]
fn each_report_options_and_filters_setter_sets_its_own_field() {
    let d = ReportOptions::default();
    sets_only(&d, |o| o.page_size(7), |o| o.paging.page_size = 7);
    sets_only(&d, |o| o.shard_days(3), |o| o.shard_days = 3);
    sets_only(&d, |o| o.look_ahead(2), |o| o.paging.look_ahead = 2);
    let filters = ReportFilters::default().ad_ids([AdId::new(1)]);
    sets_only(
        &d,
        |o| o.filters(filters.clone()),
        |o| o.filters = filters.clone(),
    );

    let d = ReportFilters::default();
    let two = [CampaignId::new(1), CampaignId::new(2)];
    sets_only(
        &d,
        |o| o.campaign_ids(two),
        |o| o.campaign_ids = two.to_vec(),
    );
    sets_only(
        &d,
        |o| o.ad_group_ids([AdGroupId::new(3)]),
        |o| o.ad_group_ids = vec![AdGroupId::new(3)],
    );
    sets_only(
        &d,
        |o| o.ad_ids([AdId::new(4)]),
        |o| o.ad_ids = vec![AdId::new(4)],
    );
    sets_only(
        &d,
        |o| o.criterion_ids([CriterionId::new(5)]),
        |o| o.criterion_ids = vec![CriterionId::new(5)],
    );
    sets_only(
        &d,
        |o| o.statuses([ConversionStatus::Removed]),
        |o| o.statuses = vec![ConversionStatus::Removed],
    );
    sets_only(
        &d,
        |o| o.advertiser_conversion_ids(["order-1".to_owned()]),
        |o| o.advertiser_conversion_ids = vec!["order-1".to_owned()],
    );
    // A list setter replaces the list, it does not append.
    let replaced = ReportFilters::default()
        .ad_ids([AdId::new(1), AdId::new(2)])
        .ad_ids([AdId::new(3)]);
    assert_eq!(replaced.ad_ids, vec![AdId::new(3)]);
}

#[test]
fn each_lockout_policy_setter_sets_its_own_field() {
    let d = LockoutPolicy::SEED;
    assert_eq!(LockoutPolicy::default(), d);
    let s = Duration::from_secs(1234);
    sets_only(&d, |o| o.max_failures(3), |o| o.max_failures = 3);
    sets_only(&d, |o| o.window(s), |o| o.window = s);
    sets_only(&d, |o| o.block(s), |o| o.block = s);
    sets_only(&d, |o| o.margin(s), |o| o.margin = s);
}

#[test]
fn search_ads_input_errors_convert_into_its_one_error_naming_the_field() {
    fn read(
        id: &str,
        url: &str,
    ) -> Result<(AgencyId, BaseUrl), sa360_video_sdk::search_ads::Error> {
        Ok((id.parse()?, BaseUrl::parse(url)?))
    }
    assert!(read("123", "http://127.0.0.1:9/v2").is_ok());
    let field = |e: sa360_video_sdk::search_ads::Error| match e {
        sa360_video_sdk::search_ads::Error::Validation { field, .. } => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        field(read("12a", "http://127.0.0.1:9/v2").unwrap_err()),
        "agencyId"
    );
    assert_eq!(
        field(read("123", "http://example.com/v2").unwrap_err()),
        "base_url"
    );
    // The client builder's setters never fail; build() names the setting at fault.
    let refused = SearchAdsClient::builder(StaticToken::new(TOKEN))
        .reporting_base_url("ftp://127.0.0.1:9")
        .build()
        .unwrap_err();
    assert_eq!(field(refused), "reporting_base_url");
}

/// Every constructor of a video session value returns the service's one error, so `?`
/// works in a function that returns `video_session::Error` (issue 38), and an application
/// error of two variants (one per service) covers everything the SDK returns.
#[test]
fn video_session_constructors_return_the_services_error() {
    use sa360_video_sdk::video_session::{
        AccountKey, AttemptId, CountryCode, Credentials, EmailAddress, Error, Message,
        MobileNumber, SessionId,
    };
    fn build(email: &str) -> Result<(), Error> {
        Credentials::new("key", "user", "pass")?;
        EmailAddress::new(email)?;
        Message::new("hello")?;
        SessionId::new("s-1")?;
        MobileNumber::new(CountryCode::new("US")?, "2025550123")?;
        let _: EmailAddress = email.parse()?;
        let _: SessionId = "s-2".parse()?;
        let _: Result<AccountKey, Error> = "0".repeat(64).parse();
        let _: Result<AttemptId, Error> = "00".parse();
        LockoutPolicy::SEED.validate()?;
        Ok(())
    }
    assert!(build("a@example.com").is_ok());
    let e = build("not an address").unwrap_err();
    assert_eq!(
        e.as_validation().map(|v| v.field),
        Some("EmailAddress"),
        "{e}"
    );

    #[derive(Debug)]
    enum App {
        #[allow(dead_code)]
        SearchAds(sa360_video_sdk::search_ads::Error),
        Video(Error),
    }
    impl From<Error> for App {
        fn from(e: Error) -> Self {
            App::Video(e)
        }
    }
    impl From<sa360_video_sdk::search_ads::Error> for App {
        fn from(e: sa360_video_sdk::search_ads::Error) -> Self {
            App::SearchAds(e)
        }
    }
    fn app() -> Result<(CustomerId, SessionId), App> {
        Ok((CustomerId::new("123-456-7890")?, SessionId::new("")?))
    }
    assert!(matches!(app(), Err(App::Video(Error::Validation(_)))));
}
