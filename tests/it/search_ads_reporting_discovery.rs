//! `specs/search-ads-reporting.yaml` agrees with Google's discovery document
//! for the Search Ads 360 Reporting API v0 (revision 20260810, copied to
//! `crates/sa360-video-fakes/data/searchads360-v0-discovery.json`, where the fake reads it too).
//!
//! The spec names its schemas without discovery's long prefixes (SR-4), so
//! [`COVERED_SCHEMAS`] maps each one. For a fully covered schema every
//! discovery property must exist in the spec with the same JSON name, type and
//! format (arrays: the same item schema); for a subset schema (SR-4) every
//! property the spec has must be one of discovery's with the same shape. An
//! enum discovery closes is an open string in a response (SR-5): the spec's
//! description must then list every discovery value. For every covered method
//! the route and each discovery parameter must match. Deliberate differences
//! are listed here with their DECISIONS entry, so a new one cannot slip in
//! unreviewed.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::discovery;

use discovery::{
    assert_agree, extra_parameters, last_segment, matching_parameter, oauth_scopes, resolve,
};

const PREFIX: &str = "GoogleAdsSearchads360V0";

/// How much of a discovery schema the spec describes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Coverage {
    /// Every property.
    Full,
    /// Only some properties (SR-4); each one must still agree.
    Subset,
}

use Coverage::{Full, Subset};

/// Spec schema → (discovery schema without [`PREFIX`], coverage).
const COVERED_SCHEMAS: &[(&str, &str, Coverage)] = &[
    ("SearchAds360Row", "Services__SearchAds360Row", Subset),
    ("AdGroup", "Resources__AdGroup", Full),
    ("AdGroupAd", "Resources__AdGroupAd", Full),
    ("AdGroupAdLabel", "Resources__AdGroupAdLabel", Full),
    ("AdGroupCriterion", "Resources__AdGroupCriterion", Full),
    (
        "AdGroupCriterionLabel",
        "Resources__AdGroupCriterionLabel",
        Full,
    ),
    ("AdGroupLabel", "Resources__AdGroupLabel", Full),
    ("BiddingStrategy", "Resources__BiddingStrategy", Full),
    ("Campaign", "Resources__Campaign", Full),
    ("CampaignBudget", "Resources__CampaignBudget", Full),
    ("CampaignLabel", "Resources__CampaignLabel", Full),
    ("Conversion", "Resources__Conversion", Full),
    ("ConversionAction", "Resources__ConversionAction", Full),
    ("Customer", "Resources__Customer", Full),
    ("KeywordView", "Resources__KeywordView", Full),
    ("Label", "Resources__Label", Full),
    ("Metrics", "Common__Metrics", Full),
    ("Segments", "Common__Segments", Full),
    ("Visit", "Resources__Visit", Full),
    ("Value", "Common__Value", Full),
    ("TargetingSetting", "Common__TargetingSetting", Full),
    ("Ad", "Resources__Ad", Full),
    ("SyntheticContentInfo", "Common__SyntheticContentInfo", Full),
    (
        "SyntheticContentAttestation",
        "Common__SyntheticContentAttestation",
        Full,
    ),
    ("AgeRangeInfo", "Common__AgeRangeInfo", Full),
    ("GenderInfo", "Common__GenderInfo", Full),
    ("KeywordInfo", "Common__KeywordInfo", Full),
    ("ListingGroupInfo", "Common__ListingGroupInfo", Full),
    ("LocationInfo", "Common__LocationInfo", Full),
    (
        "AdGroupCriterionPositionEstimates",
        "Resources_AdGroupCriterion_PositionEstimates",
        Full,
    ),
    (
        "AdGroupCriterionQualityInfo",
        "Resources_AdGroupCriterion_QualityInfo",
        Full,
    ),
    ("CustomParameter", "Common__CustomParameter", Full),
    ("UserListInfo", "Common__UserListInfo", Full),
    ("WebpageInfo", "Common__WebpageInfo", Full),
    ("EnhancedCpc", "Common__EnhancedCpc", Full),
    (
        "MaximizeConversionValue",
        "Common__MaximizeConversionValue",
        Full,
    ),
    ("MaximizeConversions", "Common__MaximizeConversions", Full),
    ("TargetCpa", "Common__TargetCpa", Full),
    (
        "TargetImpressionShare",
        "Common__TargetImpressionShare",
        Full,
    ),
    ("TargetOutrankShare", "Common__TargetOutrankShare", Full),
    ("TargetRoas", "Common__TargetRoas", Full),
    ("TargetSpend", "Common__TargetSpend", Full),
    (
        "CampaignDynamicSearchAdsSetting",
        "Resources_Campaign_DynamicSearchAdsSetting",
        Full,
    ),
    ("FrequencyCapEntry", "Common__FrequencyCapEntry", Full),
    (
        "CampaignGeoTargetTypeSetting",
        "Resources_Campaign_GeoTargetTypeSetting",
        Full,
    ),
    ("ManualCpa", "Common__ManualCpa", Full),
    ("ManualCpc", "Common__ManualCpc", Full),
    ("ManualCpm", "Common__ManualCpm", Full),
    (
        "CampaignNetworkSettings",
        "Resources_Campaign_NetworkSettings",
        Full,
    ),
    (
        "CampaignOptimizationGoalSetting",
        "Resources_Campaign_OptimizationGoalSetting",
        Full,
    ),
    ("PercentCpc", "Common__PercentCpc", Full),
    (
        "RealTimeBiddingSetting",
        "Common__RealTimeBiddingSetting",
        Full,
    ),
    (
        "CampaignSelectiveOptimization",
        "Resources_Campaign_SelectiveOptimization",
        Full,
    ),
    (
        "CampaignShoppingSetting",
        "Resources_Campaign_ShoppingSetting",
        Full,
    ),
    ("TargetCpm", "Common__TargetCpm", Full),
    (
        "CampaignTrackingSetting",
        "Resources_Campaign_TrackingSetting",
        Full,
    ),
    (
        "ConversionActionAttributionModelSettings",
        "Resources_ConversionAction_AttributionModelSettings",
        Full,
    ),
    (
        "ConversionActionFloodlightSettings",
        "Resources_ConversionAction_FloodlightSettings",
        Full,
    ),
    (
        "ConversionActionValueSettings",
        "Resources_ConversionAction_ValueSettings",
        Full,
    ),
    (
        "ConversionTrackingSetting",
        "Resources__ConversionTrackingSetting",
        Full,
    ),
    (
        "DoubleClickCampaignManagerSetting",
        "Resources__DoubleClickCampaignManagerSetting",
        Full,
    ),
    ("TextLabel", "Common__TextLabel", Full),
    (
        "AssetInteractionTarget",
        "Common__AssetInteractionTarget",
        Full,
    ),
    ("Keyword", "Common__Keyword", Full),
    ("TargetRestriction", "Common__TargetRestriction", Full),
    (
        "SearchAds360ExpandedDynamicSearchAdInfo",
        "Common__SearchAds360ExpandedDynamicSearchAdInfo",
        Full,
    ),
    (
        "SearchAds360ExpandedTextAdInfo",
        "Common__SearchAds360ExpandedTextAdInfo",
        Full,
    ),
    ("FinalAppUrl", "Common__FinalAppUrl", Full),
    (
        "SearchAds360ProductAdInfo",
        "Common__SearchAds360ProductAdInfo",
        Full,
    ),
    (
        "SearchAds360ResponsiveSearchAdInfo",
        "Common__SearchAds360ResponsiveSearchAdInfo",
        Full,
    ),
    (
        "SearchAds360TextAdInfo",
        "Common__SearchAds360TextAdInfo",
        Full,
    ),
    ("WebpageConditionInfo", "Common__WebpageConditionInfo", Full),
    ("AdTextAsset", "Common__AdTextAsset", Full),
    (
        "SearchSearchAds360Request",
        "Services__SearchSearchAds360Request",
        Full,
    ),
    (
        "SearchSearchAds360Response",
        "Services__SearchSearchAds360Response",
        Full,
    ),
    // SR-33: searchStream is not in discovery; its request and batch are held to the search
    // request's and response's members (after those, so discovery's names map to search's).
    (
        "SearchSearchAds360StreamRequest",
        "Services__SearchSearchAds360Request",
        Subset,
    ),
    (
        "SearchSearchAds360StreamResponse",
        "Services__SearchSearchAds360Response",
        Subset,
    ),
    ("CustomColumnHeader", "Services__CustomColumnHeader", Full),
    (
        "ConversionCustomMetricHeader",
        "Services__ConversionCustomMetricHeader",
        Full,
    ),
    (
        "ConversionCustomDimensionHeader",
        "Services__ConversionCustomDimensionHeader",
        Full,
    ),
    (
        "RawEventConversionMetricHeader",
        "Services__RawEventConversionMetricHeader",
        Full,
    ),
    (
        "RawEventConversionDimensionHeader",
        "Services__RawEventConversionDimensionHeader",
        Full,
    ),
    (
        "ListAccessibleCustomersResponse",
        "Services__ListAccessibleCustomersResponse",
        Full,
    ),
    (
        "ListCustomColumnsResponse",
        "Services__ListCustomColumnsResponse",
        Full,
    ),
    ("CustomColumn", "Resources__CustomColumn", Full),
    ("SearchAds360Field", "Resources__SearchAds360Field", Full),
    (
        "SearchSearchAds360FieldsRequest",
        "Services__SearchSearchAds360FieldsRequest",
        Full,
    ),
    (
        "SearchSearchAds360FieldsResponse",
        "Services__SearchSearchAds360FieldsResponse",
        Full,
    ),
    ("SearchAds360Failure", "Errors__SearchAds360Failure", Full),
    ("SearchAds360Error", "Errors__SearchAds360Error", Full),
    ("ErrorCode", "Errors__ErrorCode", Full),
    ("ErrorLocation", "Errors__ErrorLocation", Full),
    (
        "FieldPathElement",
        "Errors_ErrorLocation_FieldPathElement",
        Full,
    ),
    ("ErrorDetails", "Errors__ErrorDetails", Full),
    ("QuotaErrorDetails", "Errors__QuotaErrorDetails", Full),
];

/// The row members a subset must at least describe (the issue: "the row
/// objects a conversion report selects").
const REQUIRED_ROW_MEMBERS: &[&str] = &[
    "customer",
    "campaign",
    "campaignBudget",
    "adGroup",
    "adGroupAd",
    "adGroupCriterion",
    "keywordView",
    "biddingStrategy",
    "conversionAction",
    "conversion",
    "visit",
    "label",
    "metrics",
    "segments",
    "customColumns",
];

/// Discovery method id (without `searchads360.`) → the spec's operationId.
const COVERED_METHODS: &[(&str, &str)] = &[
    (
        "customers.searchAds360.search",
        "customersSearchAds360Search",
    ),
    (
        "customers.listAccessibleCustomers",
        "customersListAccessibleCustomers",
    ),
    ("searchAds360Fields.get", "searchAds360FieldsGet"),
    ("searchAds360Fields.search", "searchAds360FieldsSearch"),
    ("customers.customColumns.list", "customersCustomColumnsList"),
    ("customers.customColumns.get", "customersCustomColumnsGet"),
];

/// Spec operations discovery lacks, each with its DECISIONS entry; they must
/// take the parameters of the discovery method named beside them.
const SPEC_ONLY_METHODS: &[(&str, &str)] = &[
    // SR-33: documented on its REST reference page, absent from discovery.
    (
        "customersSearchAds360SearchStream",
        "customersSearchAds360Search",
    ),
];

/// Deliberate differences, each with its DECISIONS entry.
const ALLOWED: &[(&str, &str)] = &[
    // SR-6: the `Any` wrapper's type URL of a google.rpc.Status detail.
    ("SearchAds360Failure.@type", "extra property"),
    // SR-33: members of searchStream's reference page that search's messages lack.
    (
        "SearchSearchAds360StreamRequest.batchSize",
        "extra property",
    ),
    (
        "SearchSearchAds360StreamResponse.requestId",
        "extra property",
    ),
    // SR-2: OpenAPI path parameters cannot hold `/`; the spec uses flatPath.
    (
        "searchAds360Fields.get?resourceName",
        "replaced by flatPath",
    ),
    (
        "searchAds360Fields.get?searchAds360FieldsId",
        "flatPath parameter",
    ),
    // SR-8: a header the REST reference documents and discovery does not.
    ("customers.searchAds360.search?login-customer-id", "header"),
    ("customers.customColumns.list?login-customer-id", "header"),
    ("customers.customColumns.get?login-customer-id", "header"),
    (
        "customers.customColumns.get?resourceName",
        "replaced by flatPath",
    ),
    (
        "customers.customColumns.get?customersId",
        "flatPath parameter",
    ),
    (
        "customers.customColumns.get?customColumnsId",
        "flatPath parameter",
    ),
];

fn discovery() -> Value {
    discovery::discovery("crates/sa360-video-fakes/data/searchads360-v0-discovery.json")
}

fn spec() -> Value {
    discovery::spec("search-ads-reporting.yaml")
}

fn allowed(subject: &str, what: &str) -> bool {
    discovery::allowed(ALLOWED, subject, what)
}

/// The spec schema name a discovery schema is described by, if covered.
fn spec_name_of(discovery_name: &str) -> Option<&'static str> {
    let short = discovery_name.strip_prefix(PREFIX)?;
    COVERED_SCHEMAS
        .iter()
        .find(|(_, d, _)| *d == short)
        .map(|(s, _, _)| *s)
}

fn describe(node: &Value) -> String {
    let field = |k: &str| node.get(k).map(|v| v.to_string()).unwrap_or_default();
    format!(
        "type={} format={} enum={}",
        field("type"),
        field("format"),
        field("enum")
    )
}

/// Compares one discovery property (or array item) with the spec's.
fn compare(spec: &Value, subject: &str, their: &Value, our: &Value, problems: &mut Vec<String>) {
    if let Some(their_ref) = their.get("$ref").and_then(Value::as_str) {
        let our_ref = our.get("$ref").and_then(Value::as_str).map(last_segment);
        if our_ref != spec_name_of(their_ref) {
            problems.push(format!(
                "{subject}: discovery refers to {their_ref}, the spec to {our_ref:?}"
            ));
        }
        return;
    }
    let ours = resolve(spec, our);
    for key in ["type", "format"] {
        if their.get(key) != ours.get(key) {
            problems.push(format!(
                "{subject}: discovery {} but spec {}",
                describe(their),
                describe(ours)
            ));
            return;
        }
    }
    if let Some(values) = their.get("enum").and_then(Value::as_array) {
        match ours.get("enum") {
            Some(ours_enum) if ours_enum == &Value::Array(values.clone()) => {}
            Some(_) => problems.push(format!("{subject}: enum values differ from discovery")),
            None => {
                // SR-5: an open string must document every known value.
                let text = ours
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                for value in values.iter().filter_map(Value::as_str) {
                    if !text.contains(&format!("`{value}`")) {
                        problems.push(format!(
                            "{subject}: open string does not list the discovery value {value}"
                        ));
                    }
                }
            }
        }
    }
    if let Some(their_items) = their.get("items") {
        match ours.get("items") {
            Some(our_items) => compare(
                spec,
                &format!("{subject}[]"),
                their_items,
                our_items,
                problems,
            ),
            None => problems.push(format!("{subject}: the spec's array has no items")),
        }
    }
}

#[test]
fn every_covered_schema_field_has_the_discovery_name_type_and_format() {
    let discovery = discovery();
    let spec = spec();
    let mut problems = Vec::new();
    for (name, discovery_name, coverage) in COVERED_SCHEMAS {
        let full_name = format!("{PREFIX}{discovery_name}");
        // A message without members (e.g. `Common__EnhancedCpc`) has no `properties`.
        let no_members = serde_json::Map::new();
        let theirs_schema = discovery["schemas"][&full_name]
            .as_object()
            .unwrap_or_else(|| panic!("discovery has {full_name}"));
        let theirs = theirs_schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&no_members);
        let ours_schema = spec["components"]["schemas"][name]
            .as_object()
            .unwrap_or_else(|| panic!("spec lacks {name}"));
        let ours = ours_schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&no_members);
        for (field, their) in theirs {
            let subject = format!("{name}.{field}");
            match ours.get(field) {
                Some(our) => compare(&spec, &subject, their, our, &mut problems),
                None if *coverage == Full => {
                    problems.push(format!("{subject}: missing from the spec"));
                }
                None => {}
            }
        }
        for field in ours.keys() {
            let subject = format!("{name}.{field}");
            if !theirs.contains_key(field) && !allowed(&subject, "extra property") {
                problems.push(format!("{subject}: not in the discovery document"));
            }
        }
    }
    let row = spec["components"]["schemas"]["SearchAds360Row"]["properties"]
        .as_object()
        .unwrap();
    for member in REQUIRED_ROW_MEMBERS {
        if !row.contains_key(*member) {
            problems.push(format!(
                "SearchAds360Row.{member}: the reports of issue 35 need it"
            ));
        }
    }
    assert_agree(&problems);
}

#[test]
fn every_spec_schema_is_covered_or_documented_as_ours() {
    let spec = spec();
    // SR-6: the google.rpc.Status envelope. `SummaryRowSetting`: discovery's enum written inline
    // in each request, one component here, compared through the requests' members.
    let ours_only = ["ErrorResponse", "Status", "SummaryRowSetting"];
    for name in spec["components"]["schemas"].as_object().unwrap().keys() {
        assert!(
            COVERED_SCHEMAS.iter().any(|(s, _, _)| s == name) || ours_only.contains(&name.as_str()),
            "{name} is neither compared with discovery nor a documented spec-only schema"
        );
    }
}

/// One spec operation: `METHOD /path`, its resolved parameters, and its
/// request and response schema names.
type Operation = (String, Vec<Value>, Option<String>, Option<String>);

/// The spec's operations by operationId.
fn operations(spec: &Value) -> BTreeMap<String, Operation> {
    let mut found = BTreeMap::new();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(id) = op.get("operationId").and_then(Value::as_str) else {
                continue;
            };
            let params = op
                .get("parameters")
                .and_then(Value::as_array)
                .map(|ps| ps.iter().map(|p| resolve(spec, p).clone()).collect())
                .unwrap_or_default();
            let body = op
                .pointer("/requestBody/content/application~1json/schema/$ref")
                .and_then(Value::as_str)
                .map(|r| last_segment(r).to_owned());
            let response = op
                .pointer("/responses/200/content/application~1json/schema/$ref")
                .and_then(Value::as_str)
                .map(|r| last_segment(r).to_owned());
            found.insert(
                id.to_owned(),
                (
                    format!("{} {path}", method.to_uppercase()),
                    params,
                    body,
                    response,
                ),
            );
        }
    }
    found
}

fn discovery_method<'a>(discovery: &'a Value, method_id: &str) -> &'a Value {
    let mut node = discovery;
    let parts: Vec<&str> = method_id.split('.').collect();
    let (method, resources) = parts.split_last().unwrap();
    for resource in resources {
        node = &node["resources"][*resource];
    }
    &node["methods"][*method]
}

#[test]
fn every_covered_method_has_the_discovery_route_parameters_and_bodies() {
    let discovery = discovery();
    let spec = spec();
    let ours = operations(&spec);
    let mut problems = Vec::new();
    for (method_id, operation_id) in COVERED_METHODS {
        let their = discovery_method(&discovery, method_id);
        assert!(their.is_object(), "discovery has {method_id}");
        assert_eq!(their["id"], format!("searchads360.{method_id}"));
        let Some((route, params, body, response)) = ours.get(*operation_id) else {
            problems.push(format!(
                "{method_id}: no operation {operation_id} in the spec"
            ));
            continue;
        };
        // `{+name}` is a reserved expansion; flatPath names the segments.
        let uses_flat = their["path"].as_str().unwrap().starts_with("v0/{+");
        let their_path = if uses_flat {
            their["flatPath"].as_str().unwrap().to_owned()
        } else {
            their["path"].as_str().unwrap().replace("{+", "{")
        };
        let their_route = format!("{} /{their_path}", their["httpMethod"].as_str().unwrap());
        if *route != their_route {
            problems.push(format!(
                "{method_id}: discovery {their_route}, spec {route}"
            ));
        }
        let schema_name = |key: &str| {
            their
                .get(key)
                .and_then(|r| r["$ref"].as_str())
                .and_then(spec_name_of)
                .map(str::to_owned)
        };
        if *body != schema_name("request") {
            problems.push(format!("{method_id}: request body {body:?}"));
        }
        if *response != schema_name("response") {
            problems.push(format!("{method_id}: response {response:?}"));
        }
        let their_params = their["parameters"].as_object().cloned().unwrap_or_default();
        for (name, their_param) in &their_params {
            let subject = format!("{method_id}?{name}");
            if allowed(&subject, "replaced by flatPath") {
                continue;
            }
            let Some(our) = matching_parameter(params, name, their_param, &subject, &mut problems)
            else {
                continue;
            };
            let schema = resolve(&spec, &our["schema"]);
            if describe(their_param) != describe(schema) {
                problems.push(format!(
                    "{subject}: discovery {} but spec {}",
                    describe(their_param),
                    describe(schema)
                ));
            }
        }
        let documented = |name: &str| {
            let subject = format!("{method_id}?{name}");
            allowed(&subject, "header") || allowed(&subject, "flatPath parameter")
        };
        extra_parameters(params, &their_params, method_id, documented, &mut problems);
    }
    assert_agree(&problems);
}

#[test]
fn the_oauth_scope_is_the_discovery_scope() {
    let discovery = discovery();
    let spec = spec();
    let (theirs, ours) = oauth_scopes(&discovery, &spec);
    assert_eq!(ours, theirs);
    let global: Vec<&str> = spec["security"][0]["oauth2"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(global, theirs);
}

#[test]
fn the_server_is_the_discovery_root() {
    let discovery = discovery();
    let spec = spec();
    let root = discovery["rootUrl"].as_str().unwrap().trim_end_matches('/');
    assert_eq!(discovery["servicePath"], "");
    assert_eq!(spec["servers"][0]["url"], root);
    assert_eq!(discovery["revision"], "20260810");
}

#[test]
fn every_spec_operation_is_a_covered_method_or_documented_as_ours() {
    let ours = operations(&spec());
    for (id, (route, params, ..)) in &ours {
        if COVERED_METHODS.iter().any(|(_, o)| o == id) {
            continue;
        }
        let Some((_, like)) = SPEC_ONLY_METHODS.iter().find(|(o, _)| o == id) else {
            panic!("{id} ({route}) is neither a discovery method nor a documented spec-only one");
        };
        assert_eq!(
            params, &ours[*like].1,
            "{id}: the parameters of {like} (SR-33)"
        );
    }
}
