//! The checks of one item of a write: its owner and the permission to it, click attribution
//! (SA-17), the Floodlight activity, value sets, custom dimension and metric names, and which
//! seeded conversion or account an item names.

use super::batch::Detail;
use crate::search_ads::data::{DAY_MS, Generator, click_origin, parse_seeded_conversion_id};
use crate::search_ads::ledger::Owner;
use crate::search_ads::record::Record;
use crate::search_ads::state::AppState;

/// The owner of a conversion or availability, with the permission check (`0x0000011D`, Google's
/// detail code, <https://developers.google.com/search-ads/v2/troubleshooting>; SA-16). An `engineAccountId` that belongs to another
/// advertiser than the one named is `invalid` (SA-24).
pub(super) fn owner_of(app: &AppState, map: &Record) -> Result<Owner, Detail> {
    if let Some(advertiser) = map.int("advertiserId") {
        let Some(agency) = map.int("agencyId") else {
            return Err(Detail::invalid("agencyId"));
        };
        let known = app
            .config
            .accounts
            .iter()
            .any(|a| a.advertiser_id == advertiser && a.agency_id == agency);
        if !known {
            return Err(Detail::new(
                0x11D,
                format!("The user does not have permission to view advertiser {advertiser}"),
            ));
        }
        if let Some(engine) = map.int("engineAccountId")
            && app
                .config
                .accounts
                .iter()
                .any(|a| a.engine_account_id == engine && a.advertiser_id != advertiser)
        {
            return Err(Detail::invalid("engineAccountId"));
        }
        return Ok(Owner::Advertiser(advertiser));
    }
    if let Some(customer) = map.str("customerId") {
        if !app
            .config
            .accounts
            .iter()
            .any(|a| a.customer_id == customer)
        {
            return Err(Detail::new(
                0x11D,
                format!("The user does not have permission to view customer {customer}"),
            ));
        }
        return Ok(Owner::Customer(customer.to_owned()));
    }
    Err(Detail::invalid("advertiserId"))
}

/// The Floodlight activity: `segmentationType` `FLOODLIGHT` (the reference page's only value,
/// <https://developers.google.com/search-ads/v2/reference/conversion>), and an ID and name that
/// name one known activity (`0x0000010E`, the troubleshooting page's detail code).
pub(super) fn check_segmentation(app: &AppState, map: &Record) -> Result<(), Detail> {
    match map.str("segmentationType") {
        Some("FLOODLIGHT") => {}
        _ => return Err(Detail::invalid("segmentationType")),
    }
    let activities = &app.config.floodlight_activities;
    let by_id = map
        .int("segmentationId")
        .map(|id| (id, activities.iter().find(|a| a.id == id)));
    let by_name = map
        .str("segmentationName")
        .map(|n| (n, activities.iter().find(|a| a.name == n)));
    match (by_id, by_name) {
        (Some((id, None)), _) => Err(Detail::new(
            0x10E,
            format!("Floodlight activity with ID {id} is not found"),
        )),
        (_, Some((name, None))) => Err(Detail::new(
            0x10E,
            format!("Floodlight activity '{name}' is not found"),
        )),
        (Some((_, Some(a))), Some((name, Some(b)))) if a.id != b.id => Err(Detail::new(
            0x10E,
            format!("Floodlight activity '{name}' does not have ID {}", a.id),
        )),
        _ => Ok(()),
    }
}

/// The enumerated fields (discovery's `Conversion` value sets: `type`, `state`, `channel`,
/// `adUserDataConsent`) and the currency code (ISO 4217, three letters), as the discovery
/// document describes them (`specs/SOURCES.md`).
pub(super) fn check_value_sets(map: &Record) -> Result<(), Detail> {
    let one_of = |name: &str, allowed: &[&str]| -> Result<(), Detail> {
        match map.str(name) {
            Some(v) if !allowed.contains(&v) => Err(Detail::invalid(name)),
            _ => Ok(()),
        }
    };
    one_of("type", &["ACTION", "TRANSACTION"])?;
    one_of("state", &["ACTIVE", "REMOVED", "DELETED"])?;
    one_of("channel", &["local", "online"])?;
    one_of("adUserDataConsent", &["UNKNOWN", "GRANTED", "DENIED"])?;
    if let Some(code) = map.str("currencyCode")
        && !(code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return Err(Detail::invalid("currencyCode"));
    }
    Ok(())
}

/// Custom dimension (`0x00000115`) and metric (`0x00000116`) names the advertiser knows (Google's
/// detail codes, <https://developers.google.com/search-ads/v2/troubleshooting>).
pub(super) fn check_references(app: &AppState, map: &Record) -> Result<(), Detail> {
    let names = |field: &str| -> Vec<String> {
        map.list(field)
            .unwrap_or_default()
            .iter()
            .filter_map(|e| e.get("name").and_then(|n| n.as_str()).map(str::to_owned))
            .collect()
    };
    for name in names("customDimension") {
        if !app.config.custom_dimensions.contains(&name) {
            return Err(Detail::new(
                0x115,
                format!("Custom dimension '{name}' is not found"),
            ));
        }
    }
    for name in names("customMetric") {
        if !app.config.custom_metrics.contains(&name) {
            return Err(Detail::new(
                0x116,
                format!("Custom metric '{name}' is not found"),
            ));
        }
    }
    Ok(())
}

/// The oldest click a conversion may be attributed to, measured at the conversion's timestamp
/// (help center answer 2411961: clicks less than 90 days old; SA-17).
pub(super) const CLICK_MAX_AGE_MS: i64 = 90 * DAY_MS;

/// The oldest click an update may name a conversion by (update how-to: "within 60 days of the
/// click"; SA-17).
pub(super) const UPDATE_CLICK_MAX_AGE_MS: i64 = 60 * DAY_MS;

/// The click a `clickId` names: (account number, click number), checked against the conversion's
/// timestamp. An ID the fake never issued, a click after the conversion and a click more than 90
/// days before it are all `0x00000101` (SA-17).
fn click_of(
    app: &AppState,
    click: &str,
    timestamp: i64,
    max_age_ms: i64,
) -> Result<(usize, u64), Detail> {
    let not_found = || Detail::new(0x101, format!("Click ID '{click}' is not found"));
    let (a, i) = click_origin(app.config.seed, click).ok_or_else(not_found)?;
    if a >= app.config.accounts.len() {
        return Err(not_found());
    }
    let clicked = Generator {
        config: &app.config,
    }
    .click_timestamp(a, i);
    if timestamp < clicked {
        return Err(Detail::new(
            0x101,
            format!("Click ID '{click}' is not found before conversion timestamp {timestamp}"),
        ));
    }
    if timestamp - clicked > max_age_ms {
        let days = max_age_ms / DAY_MS;
        return Err(Detail::new(
            0x101,
            format!(
                "Click ID '{click}' is not found: the click is more than {days} days older than conversion timestamp {timestamp}"
            ),
        ));
    }
    Ok((a, i))
}

/// The owner of a conversion (SA-17). With a `clickId`, the click decides: a conversion naming
/// no advertiser and no customer is attributed to the click's engine account (its agency,
/// advertiser, engine account, campaign, ad group, ad and criterion IDs are filled in where
/// absent); one that names them must name the click's. Without a click, [`owner_of`].
pub(super) fn attributed_owner(
    app: &AppState,
    map: &mut Record,
    timestamp: i64,
    click_max_age_ms: i64,
) -> Result<Owner, Detail> {
    let Some(click) = map.str("clickId").map(str::to_owned) else {
        return owner_of(app, map);
    };
    let (a, i) = click_of(app, &click, timestamp, click_max_age_ms)?;
    let account = &app.config.accounts[a];
    if map.contains("advertiserId") || map.contains("customerId") {
        let owner = owner_of(app, map)?;
        let same_owner = match &owner {
            Owner::Advertiser(advertiser) => *advertiser == account.advertiser_id,
            Owner::Customer(customer) => *customer == account.customer_id,
        };
        let same_engine = map
            .int("engineAccountId")
            .is_none_or(|e| e == account.engine_account_id);
        if !(same_owner && same_engine) {
            return Err(Detail::new(
                0x101,
                format!("Click ID '{click}' is not found for the conversion's account"),
            ));
        }
        return Ok(owner);
    }
    let row = Generator {
        config: &app.config,
    }
    .conversion(a, i);
    for (name, value) in [
        ("agencyId", Some(account.agency_id)),
        ("advertiserId", Some(account.advertiser_id)),
        ("engineAccountId", Some(account.engine_account_id)),
        ("campaignId", row.campaign_id.parse().ok()),
        ("adGroupId", row.ad_group_id.parse().ok()),
        ("adId", row.ad_id.parse().ok()),
        ("criterionId", row.criterion_id.parse().ok()),
    ] {
        if let Some(value) = value
            && !map.contains(name)
        {
            map.set_int(name, value);
        }
    }
    Ok(Owner::Advertiser(account.advertiser_id))
}

/// The seeded conversion a conversion ID names for this owner: (account number, index).
pub(super) fn seeded_target(
    app: &AppState,
    owner: &Owner,
    conversion_id: &str,
) -> Option<(usize, u64)> {
    let (engine, i) = parse_seeded_conversion_id(conversion_id)?;
    let a = app
        .config
        .accounts
        .iter()
        .position(|acc| acc.engine_account_id == engine)?;
    let account = &app.config.accounts[a];
    let owned = match owner {
        Owner::Advertiser(adv) => *adv == account.advertiser_id,
        Owner::Customer(c) => *c == account.customer_id,
    };
    (owned && i < app.config.conversions_per_account).then_some((a, i))
}

/// The account whose reads show an inserted conversion.
pub(super) fn view_of(app: &AppState, map: &Record) -> Option<usize> {
    if let Some(engine) = map.int("engineAccountId") {
        return app
            .config
            .accounts
            .iter()
            .position(|a| a.engine_account_id == engine);
    }
    let customer = map.str("customerId")?;
    app.config
        .accounts
        .iter()
        .position(|a| a.customer_id == customer)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{
        CLICK_MAX_AGE_MS, attributed_owner, check_references, check_segmentation, check_value_sets,
        owner_of,
    };
    use crate::search_ads::conversions::batch::Detail;
    use crate::search_ads::conversions::parse::record_from_value;
    use crate::search_ads::conversions::tests::app;
    use crate::search_ads::data::{DAY_MS, Generator, click_id};
    use crate::search_ads::ledger::Owner;
    use crate::search_ads::record::{Record, Schema};

    fn map(value: Value) -> Record {
        record_from_value(Schema::Conversion, value).unwrap_or_else(|d| panic!("{}", d.text))
    }

    fn refused<T: std::fmt::Debug>(result: Result<T, Detail>) -> (u32, String) {
        match result {
            Ok(v) => panic!("accepted: {v:?}"),
            Err(d) => (d.code, d.text),
        }
    }

    #[test]
    fn the_owner_is_the_advertiser_or_else_the_customer_and_must_be_visible() {
        let app = app();
        let account = app.config.accounts[0].clone();
        let agency = account.agency_id.to_string();
        let advertiser = account.advertiser_id.to_string();
        let ok = owner_of(
            &app,
            &map(json!({ "agencyId": agency, "advertiserId": advertiser })),
        );
        assert_eq!(ok.ok(), Some(Owner::Advertiser(account.advertiser_id)));
        let customer = owner_of(&app, &map(json!({ "customerId": account.customer_id })));
        assert_eq!(
            customer.ok(),
            Some(Owner::Customer(account.customer_id.clone()))
        );

        let (code, _) = refused(owner_of(
            &app,
            &map(json!({ "agencyId": agency, "advertiserId": "5" })),
        ));
        assert_eq!(code, 0x11D);
        let (code, _) = refused(owner_of(
            &app,
            &map(json!({ "agencyId": "5", "advertiserId": advertiser })),
        ));
        assert_eq!(code, 0x11D, "the advertiser must be in the named agency");
        let (code, _) = refused(owner_of(&app, &map(json!({ "customerId": "77" }))));
        assert_eq!(code, 0x11D);
        let (_, text) = refused(owner_of(&app, &map(json!({ "advertiserId": advertiser }))));
        assert!(text.ends_with(": agencyId"), "{text}");
        let (_, text) = refused(owner_of(&app, &map(json!({}))));
        assert!(text.ends_with(": advertiserId"), "{text}");
    }

    #[test]
    fn the_floodlight_activity_must_be_known_by_id_and_name_alike() {
        let app = app();
        let check = |v: Value| check_segmentation(&app, &map(v));
        assert!(check(json!({ "segmentationType": "FLOODLIGHT", "segmentationId": "551235", "segmentationName": "Sign-up" })).is_ok());
        assert_eq!(
            refused(check(
                json!({ "segmentationType": "FLOODLIGHT", "segmentationId": "9" })
            ))
            .0,
            0x10E
        );
        assert_eq!(
            refused(check(
                json!({ "segmentationType": "FLOODLIGHT", "segmentationName": "purchase" })
            ))
            .0,
            0x10E
        );
        let (code, text) = refused(check(
            json!({ "segmentationType": "FLOODLIGHT", "segmentationId": "551235", "segmentationName": "Purchase" }),
        ));
        assert_eq!(
            (code, text.as_str()),
            (
                0x10E,
                "Floodlight activity 'Purchase' does not have ID 551235"
            )
        );
        assert!(
            refused(check(json!({ "segmentationType": "OTHER" })))
                .1
                .ends_with(": segmentationType")
        );
    }

    #[test]
    fn value_sets_currency_codes_and_custom_names_are_checked() {
        let app = app();
        assert!(
            check_value_sets(&map(
                json!({ "type": "ACTION", "state": "REMOVED", "currencyCode": "EUR" })
            ))
            .is_ok()
        );
        for (field, value) in [
            ("type", "SALE"),
            ("state", "active"),
            ("channel", "tv"),
            ("adUserDataConsent", "YES"),
            ("currencyCode", "eur"),
            ("currencyCode", "EURO"),
        ] {
            let (_, text) = refused(check_value_sets(&map(json!({ field: value }))));
            assert!(
                text.ends_with(&format!(": {field}")),
                "{field}={value}: {text}"
            );
        }
        let dims = |name: &str| map(json!({ "customDimension": [{ "name": name, "value": "v" }] }));
        assert!(check_references(&app, &dims("Store Region")).is_ok());
        assert_eq!(refused(check_references(&app, &dims("Region"))).0, 0x115);
        let metric = map(json!({ "customMetric": [{ "name": "Opens", "value": 1 }] }));
        assert_eq!(refused(check_references(&app, &metric)).0, 0x116);
    }

    #[test]
    fn a_click_decides_the_owner_within_its_age_limit() {
        let app = app();
        let clicked = Generator {
            config: &app.config,
        }
        .click_timestamp(0, 9);
        let click = click_id(app.config.seed, 9);
        let item =
            |ts: i64| map(json!({ "clickId": click, "conversionTimestamp": ts.to_string() }));

        let mut filled = item(clicked + 5);
        let owner = attributed_owner(&app, &mut filled, clicked + 5, CLICK_MAX_AGE_MS);
        let account = &app.config.accounts[0];
        assert_eq!(owner.ok(), Some(Owner::Advertiser(account.advertiser_id)));
        assert_eq!(
            filled.int("engineAccountId"),
            Some(account.engine_account_id)
        );
        assert!(filled.int("campaignId").is_some() && filled.int("criterionId").is_some());

        let late = clicked + CLICK_MAX_AGE_MS + 1;
        assert!(
            refused(attributed_owner(
                &app,
                &mut item(late),
                late,
                CLICK_MAX_AGE_MS
            ))
            .1
            .contains("more than 90 days")
        );
        let shorter = 60 * DAY_MS;
        let past_60 = clicked + shorter + 1;
        assert_eq!(
            refused(attributed_owner(&app, &mut item(past_60), past_60, shorter)).0,
            0x101
        );
        let early = clicked - 1;
        assert!(
            refused(attributed_owner(
                &app,
                &mut item(early),
                early,
                CLICK_MAX_AGE_MS
            ))
            .1
            .contains("not found before")
        );
        let mut unknown = map(json!({ "clickId": "not-a-click" }));
        assert_eq!(
            refused(attributed_owner(
                &app,
                &mut unknown,
                clicked,
                CLICK_MAX_AGE_MS
            ))
            .0,
            0x101
        );

        let other = &app.config.accounts[1];
        let mut mismatch = item(clicked + 5);
        mismatch.set_int("agencyId", other.agency_id);
        mismatch.set_int("advertiserId", other.advertiser_id);
        mismatch.set_int("engineAccountId", other.engine_account_id);
        let (code, text) = refused(attributed_owner(
            &app,
            &mut mismatch,
            clicked + 5,
            CLICK_MAX_AGE_MS,
        ));
        assert_eq!(code, 0x101, "{text}");
    }
}
