"""Google's own Python client as the judge of the search ads fakes (issue 26).

google-api-python-client builds both services from Google's discovery documents
(tests/fixtures/reference/sa360-v2-discovery.json and
crates/sa360-video-fakes/data/searchads360-v0-discovery.json, rootUrl and baseUrl pointed at the fake)
and calls them the way a user following Google's pages would. Every check compares what the client
received with what Google's pages say it means; any difference, and any HTTP error the client
raises, is a mismatch. Exit status 0 only with 0 mismatches.

Rows are checked against discovery's `SearchAds360Row` schema; the queries of Google's pages on
other resources (campaign, ad_group, customer, and in the guides' style every other resource the fake
serves: budgets, bidding strategies, conversion actions, labels and their links, ads, keywords, keyword
views, visits) are checked for their row counts, paging and the consistency of their metrics with the
conversion report and with each other (ads and keywords split their ad group, budgets and strategies sum
their campaigns, linked resource names are rows, visits are the conversions' clicks); a refusal corpus
checks Google's error codes (issue 35).

Environment: the lines `sa360-video-fakes` prints (SEARCH_ADS_URL, SEARCH_ADS_REPORTING_URL,
SEARCH_ADS_TOKEN, SEARCH_ADS_AGENCY_ID, SEARCH_ADS_ADVERTISER_ID, SEARCH_ADS_ENGINE_ACCOUNT_ID,
SEARCH_ADS_CUSTOMER_ID). The fake runs on the real clock, UTC (its customers' time zone).
"""

import csv
import datetime
import io
import json
import os
import sys
import time
from urllib.parse import urlsplit

import google.oauth2.credentials
from googleapiclient.discovery import build_from_document
from googleapiclient.errors import HttpError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

checks = 0
mismatches = []


def check(name, ok, detail=""):
    global checks
    checks += 1
    status = "ok  " if ok else "FAIL"
    print(f"{status} {name}" + (f": {detail}" if detail and not ok else ""), flush=True)
    if not ok:
        mismatches.append(name)


def service(document, url):
    """A client built from a discovery document (its path from the repository root), pointed at
    `url`'s origin."""
    with open(os.path.join(ROOT, document), encoding="utf-8") as f:
        doc = json.load(f)
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}/"
    doc["rootUrl"] = origin
    doc["baseUrl"] = origin + doc.get("servicePath", "")
    creds = google.oauth2.credentials.Credentials(token=os.environ["SEARCH_ADS_TOKEN"])
    return build_from_document(doc, credentials=creds)


def call(name, request):
    """Executes a request; an HttpError is a mismatch and yields None."""
    try:
        return request.execute(num_retries=0)
    except HttpError as e:
        check(name, False, f"HTTP {e.resp.status}: {e.content[:300]!r}")
        return None


def rows_of(v0, customer, query, page_size):
    """Every row of `query`, paged by the client's own search_next."""
    search = v0.customers().searchAds360()
    request = search.search(customerId=customer, body={"query": query, "pageSize": page_size})
    rows, pages = [], 0
    while request is not None:
        response = call(f"search page {pages + 1} (pageSize {page_size})", request)
        if response is None:
            return None, pages
        rows.extend(response.get("results", []))
        pages += 1
        request = search.search_next(request, response)
    return rows, pages


V0_DISCOVERY = "crates/sa360-video-fakes/data/searchads360-v0-discovery.json"


def load_reference(document):
    with open(os.path.join(ROOT, document), encoding="utf-8") as f:
        return json.load(f)


def schema_problems(schemas, name, value, path):
    """Where `value` departs from discovery schema `name` (JSON mapping: int64 as a decimal string,
    int32 and double as numbers, enums as one of their names, messages as objects of known members)."""
    problems = []
    props = schemas[name].get("properties", {})
    if not isinstance(value, dict):
        return [f"{path}: not an object"]
    for key, v in value.items():
        p = props.get(key)
        if p is None:
            problems.append(f"{path}.{key}: not a member of {name}")
            continue
        problems += member_problems(schemas, p, v, f"{path}.{key}")
    return problems


def member_problems(schemas, p, v, path):
    if "$ref" in p:
        return schema_problems(schemas, p["$ref"], v, path)
    kind, fmt = p.get("type"), p.get("format")
    if kind == "array":
        if not isinstance(v, list):
            return [f"{path}: not an array"]
        return [q for i, item in enumerate(v) for q in member_problems(schemas, p["items"], item, f"{path}[{i}]")]
    if kind == "string" and fmt in ("int64", "uint64"):
        ok = isinstance(v, str) and v.lstrip("-").isdigit()
    elif kind == "string":
        ok = isinstance(v, str) and ("enum" not in p or v in p["enum"])
    elif kind == "integer":
        ok = isinstance(v, int) and not isinstance(v, bool)
    elif kind == "number":
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    elif kind == "boolean":
        ok = isinstance(v, bool)
    else:
        ok = True
    return [] if ok else [f"{path}: {v!r} is not a {kind}/{fmt}" + (" enum" if "enum" in p else "")]


ROW = "GoogleAdsSearchads360V0Services__SearchAds360Row"


def check_rows(schemas, name, rows):
    problems = [q for i, r in enumerate(rows) for q in schema_problems(schemas, ROW, r, f"results[{i}]")]
    check(f"{name}: every row is a SearchAds360Row of discovery", not problems, "; ".join(problems[:5]))


def refused(v0, customer, query, kind, code):
    """Whether Google's error `kind: code` comes back, with HTTP 400."""
    try:
        v0.customers().searchAds360().search(customerId=customer, body={"query": query}).execute(num_retries=0)
        check(f"refused {code}: {query}", False, "accepted")
    except HttpError as e:
        body = json.loads(e.content)
        codes = [err.get("errorCode") for d in body["error"].get("details", []) for err in d.get("errors", [])]
        check(f"refused {code}: {query}", e.resp.status == 400 and {kind: code} in codes, str(body)[:300])


# Google's pages' queries of other resources (query-structure, query-language, field-service), with
# the rows the fake's seeded account holds: 4 campaigns of 3 ad groups, the last campaign and the
# last ad group of each campaign paused (DECISIONS SR-22).
GUIDE_QUERIES = [
    ("SELECT campaign.id, campaign.name FROM campaign", 4),
    ("SELECT campaign.id FROM ad_group WHERE ad_group.status = PAUSED", 4),
    ("SELECT campaign.id, campaign.name, segments.device, segments.date, metrics.impressions, metrics.clicks "
     "FROM campaign WHERE segments.date DURING LAST_30_DAYS", 4 * 30 * 3),
    ("SELECT campaign.id, campaign.name, bidding_strategy.id, bidding_strategy.name, segments.device, "
     "segments.date, metrics.impressions, metrics.clicks FROM campaign WHERE segments.date DURING LAST_30_DAYS",
     4 * 30 * 3),
    ("SELECT campaign.id, campaign.name, campaign.status FROM campaign ORDER BY campaign.id", 4),
    ("SELECT campaign.id, campaign.name, campaign.status, metrics.impressions FROM campaign "
     "WHERE campaign.status = 'PAUSED'", 1),
    ("SELECT ad_group.id, ad_group.name, ad_group.status, campaign.id, customer.id, segments.date, "
     "metrics.clicks, metrics.cost_micros FROM ad_group WHERE segments.date DURING LAST_7_DAYS", 12 * 7),
    ("SELECT customer.id, customer.descriptive_name, metrics.impressions, metrics.clicks, metrics.ctr, "
     "metrics.average_cpc, metrics.conversions FROM customer WHERE segments.date DURING LAST_30_DAYS", 1),
    # The other resources of SR-22, in the guides' style: one budget per campaign, two portfolio
    # strategies, three conversion actions (the Floodlight activities), three labels and their links,
    # five ads and five keywords per ad group, the visits of the conversions (count not fixed: None).
    ("SELECT campaign_budget.resource_name, campaign_budget.amount_micros, campaign_budget.period, "
     "metrics.cost_micros FROM campaign_budget WHERE segments.date DURING LAST_7_DAYS", 4),
    ("SELECT bidding_strategy.id, bidding_strategy.name, bidding_strategy.type, metrics.clicks "
     "FROM bidding_strategy WHERE segments.date DURING LAST_7_DAYS", 2),
    ("SELECT conversion_action.id, conversion_action.name, conversion_action.status, metrics.conversions "
     "FROM conversion_action WHERE segments.date DURING LAST_30_DAYS", 3),
    ("SELECT label.id, label.name, label.status, label.text_label.background_color FROM label", 3),
    ("SELECT campaign.id, label.name, campaign_label.label, campaign_label.campaign FROM campaign_label", 3),
    ("SELECT ad_group.id, label.name, ad_group_label.ad_group FROM ad_group_label", 4),
    ("SELECT ad_group_ad.ad.id, label.name, ad_group_ad_label.ad_group_ad FROM ad_group_ad_label", 12),
    ("SELECT ad_group_criterion.criterion_id, label.name, ad_group_criterion_label.ad_group_criterion "
     "FROM ad_group_criterion_label", 24),
    ("SELECT ad_group_ad.ad.id, ad_group_ad.ad.name, ad_group_ad.ad.type, ad_group_ad.status, ad_group.id, "
     "metrics.impressions, metrics.clicks FROM ad_group_ad WHERE segments.date DURING LAST_7_DAYS", 60),
    ("SELECT ad_group_criterion.keyword.text, ad_group_criterion.status FROM ad_group_criterion "
     "WHERE ad_group_criterion.type = 'KEYWORD' AND ad_group_criterion.status = 'ENABLED'", 60),
    ("SELECT ad_group_criterion.keyword.text, ad_group.name, campaign.name, metrics.impressions, metrics.clicks, "
     "metrics.ctr, metrics.average_cpc FROM keyword_view WHERE segments.date DURING LAST_30_DAYS", 60),
    # A segment discovery revision 20260810 added (issue 51): one postal code per campaign.
    ("SELECT campaign.id, segments.geo_target_postal_code, metrics.clicks FROM campaign "
     "WHERE segments.date DURING LAST_7_DAYS", 4),
    ("SELECT visit.id, visit.click_id, visit.visit_date_time, visit.ad_id, visit.criterion_id, ad_group.id, "
     "segments.date, segments.device FROM visit WHERE segments.date DURING LAST_7_DAYS", None),
]

# Queries Google refuses, each with its documented code (discovery's queryError values).
REFUSALS = [
    ("SELECT campaign.idd FROM campaign", "UNRECOGNIZED_FIELD"),
    ("SELECT campaign.id FROM campaigns", "BAD_RESOURCE_TYPE_IN_FROM_CLAUSE"),
    ("SELECT ad_group.id, bidding_strategy.id FROM ad_group", "PROHIBITED_RESOURCE_TYPE_IN_SELECT_CLAUSE"),
    ("SELECT ad_group.id FROM ad_group WHERE bidding_strategy.id = 1", "PROHIBITED_RESOURCE_TYPE_IN_WHERE_CLAUSE"),
    ("SELECT campaign.id, metrics.clicks FROM campaign WHERE segments.device = MOBILE",
     "EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE"),
    ("SELECT campaign.id FROM campaign ORDER BY campaign.name", "EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE"),
    ("SELECT campaign.id, segments.date, metrics.clicks FROM campaign", "EXPECTED_FILTERS_ON_DATE_RANGE"),
    ("SELECT campaign.id FROM campaign WHERE campaign.status = PAUSD", "BAD_ENUM_CONSTANT"),
    ("SELECT campaign.id, metrics.ctr FROM campaign WHERE metrics.ctr LIKE '1%'", "OPERATOR_FIELD_MISMATCH"),
    ("SELECT conversion.id, metrics.clicks FROM conversion", "PROHIBITED_METRIC_IN_SELECT_OR_WHERE_CLAUSE"),
    ("SELECT conversion.id, segments.device FROM conversion", "PROHIBITED_SEGMENT_IN_SELECT_OR_WHERE_CLAUSE"),
    ("SELECT campaign.id FROM campaign WHERE segments.date DURING LAST_90_DAYS", "INVALID_VALUE_WITH_DURING_OPERATOR"),
    ("SELECT campaign.id FROM campaign WHERE campaign.id = 1 OR campaign.id = 2", "UNEXPECTED_INPUT"),
    ("SELECT label.id, metrics.clicks FROM label", "PROHIBITED_METRIC_IN_SELECT_OR_WHERE_CLAUSE"),
    ("SELECT visit.id, metrics.clicks FROM visit", "PROHIBITED_METRIC_IN_SELECT_OR_WHERE_CLAUSE"),
    ("SELECT campaign_budget.amount_micros, campaign.id FROM campaign_budget",
     "PROHIBITED_RESOURCE_TYPE_IN_SELECT_CLAUSE"),
    ("SELECT ad_group_criterion.keyword.txt FROM ad_group_criterion", "UNRECOGNIZED_FIELD"),
]


def other_resources(v0, customer, schemas, enabled_conversions):
    for query, count in GUIDE_QUERIES:
        small, _ = rows_of(v0, customer, query, 100)
        large, _ = rows_of(v0, customer, query, 10_000)
        if small is None or large is None:
            continue
        if count is None:
            check(f"{query}: rows", len(large) > 0, "none")
        else:
            check(f"{query}: {count} rows", len(large) == count, str(len(large)))
        check(f"{query}: pages of 100 and of 10 000 give the same rows", small == large)
        check_rows(schemas, query, large)

    # Consistency: impressions >= clicks >= conversions in every row, cost in whole micros, and the
    # per-day, per-device rows sum to the unsegmented ones.
    metrics = "metrics.impressions, metrics.clicks, metrics.cost_micros, metrics.conversions"
    daily, _ = rows_of(v0, customer, f"SELECT campaign.id, segments.date, segments.device, {metrics} FROM campaign "
                                     "WHERE segments.date DURING LAST_30_DAYS", 10_000)
    total, _ = rows_of(v0, customer, f"SELECT campaign.id, {metrics} FROM campaign "
                                     "WHERE segments.date DURING LAST_30_DAYS", 10_000)
    if daily is None or total is None:
        return
    check_rows(schemas, "campaign x day x device metrics", daily)
    m = lambda r, k: float(r["metrics"].get(k, 0))
    check("impressions >= clicks >= conversions in every row",
          all(m(r, "impressions") >= m(r, "clicks") >= m(r, "conversions") for r in daily + total))
    check("cost_micros is whole micros", all(r["metrics"]["costMicros"].isdigit() for r in daily + total))
    sums = {}
    for r in daily:
        s = sums.setdefault(r["campaign"]["id"], [0, 0, 0, 0.0])
        for i, k in enumerate(["impressions", "clicks", "costMicros", "conversions"]):
            s[i] += m(r, k)
    unsegmented = {r["campaign"]["id"]: [m(r, k) for k in ["impressions", "clicks", "costMicros", "conversions"]]
                   for r in total}
    check("per-day per-device rows sum to the unsegmented campaign rows", sums == unsegmented,
          f"{sums} vs {unsegmented}")
    conversions = sum(v[3] for v in unsegmented.values())
    check("campaign conversions are the ENABLED rows of the conversion report",
          conversions == enabled_conversions, f"{conversions} vs {enabled_conversions}")

    for query, code in REFUSALS:
        refused(v0, customer, query, "queryError", code)
    linked_resources(v0, customer, schemas)


def linked_resources(v0, customer, schemas):
    """The invariants of DECISIONS SR-22 between the resources: ads and keywords split each ad
    group's metrics exactly; budgets and strategies sum their campaigns; every linked resource name
    is a row of the linked resource; every visit is the click of a conversion."""
    metrics = "metrics.impressions, metrics.clicks, metrics.cost_micros, metrics.conversions"
    during = "WHERE segments.date DURING LAST_7_DAYS"
    keys = ["impressions", "clicks", "costMicros", "conversions"]
    m = lambda r: [float(r["metrics"].get(k, 0)) for k in keys]
    cell = lambda r: (r["adGroup"]["id"], r["segments"]["date"], r["segments"]["device"])
    groups, _ = rows_of(v0, customer, f"SELECT ad_group.id, segments.date, segments.device, {metrics} "
                                      f"FROM ad_group {during}", 10_000)
    if groups is None:
        return
    want = {cell(r): m(r) for r in groups}
    for resource in ["ad_group_ad", "ad_group_criterion", "keyword_view"]:
        children, _ = rows_of(v0, customer, f"SELECT ad_group.id, segments.date, segments.device, {metrics} "
                                            f"FROM {resource} {during}", 10_000)
        if children is None:
            continue
        check_rows(schemas, f"{resource} x day x device metrics", children)
        check(f"{resource}: impressions >= clicks >= conversions in every row",
              all(a >= b >= c for a, b, _, c in map(m, children)))
        sums = {}
        for r in children:
            s = sums.setdefault(cell(r), [0.0] * 4)
            for i, v in enumerate(m(r)):
                s[i] += v
        check(f"{resource}: the rows of each ad group, day and device sum to the ad group's",
              sums == want and len(children) == 5 * len(groups), f"{len(children)} rows")
    campaigns, _ = rows_of(v0, customer, f"SELECT campaign.campaign_budget, campaign.bidding_strategy, {metrics} "
                                         f"FROM campaign {during}", 10_000)
    for resource, member, link in [("campaign_budget", "campaignBudget", "campaignBudget"),
                                   ("bidding_strategy", "biddingStrategy", "biddingStrategy")]:
        got, _ = rows_of(v0, customer, f"SELECT {resource}.resource_name, {metrics} FROM {resource} {during}",
                         10_000)
        if got is None or campaigns is None:
            continue
        expect = {}
        for r in campaigns:
            s = expect.setdefault(r["campaign"][link], [0.0] * 4)
            for i, v in enumerate(m(r)):
                s[i] += v
        check(f"{resource}: each row sums the campaigns using it",
              {r[member]["resourceName"]: m(r) for r in got} == expect)

    def names(resource, member):
        got, _ = rows_of(v0, customer, f"SELECT {resource}.resource_name FROM {resource}", 10_000)
        return {r[member]["resourceName"] for r in got or []}

    known = {
        "campaign": names("campaign", "campaign"),
        "campaign_budget": names("campaign_budget", "campaignBudget"),
        "bidding_strategy": names("bidding_strategy", "biddingStrategy"),
        "ad_group": names("ad_group", "adGroup"),
        "ad_group_ad": names("ad_group_ad", "adGroupAd"),
        "ad_group_criterion": names("ad_group_criterion", "adGroupCriterion"),
        "label": names("label", "label"),
    }
    links = [
        ("campaign", "campaign", [("campaign_budget", "campaignBudget"), ("bidding_strategy", "biddingStrategy")]),
        ("ad_group_criterion", "adGroupCriterion", [("ad_group", "adGroup")]),
        ("campaign_label", "campaignLabel", [("campaign", "campaign"), ("label", "label")]),
        ("ad_group_label", "adGroupLabel", [("ad_group", "adGroup"), ("label", "label")]),
        ("ad_group_ad_label", "adGroupAdLabel", [("ad_group_ad", "adGroupAd"), ("label", "label")]),
        ("ad_group_criterion_label", "adGroupCriterionLabel",
         [("ad_group_criterion", "adGroupCriterion"), ("label", "label")]),
    ]
    for resource, member, fields in links:
        select = ", ".join(f"{resource}.{f}" for f, _ in fields)
        got, _ = rows_of(v0, customer, f"SELECT {select} FROM {resource}", 10_000)
        if got is None:
            continue
        for f, camel in fields:
            missing = [r[member][camel] for r in got if r[member][camel] not in known[f]]
            check(f"{resource}.{f}: every value is a row of {f}", bool(got) and not missing, str(missing[:3]))
    visits, _ = rows_of(v0, customer, "SELECT visit.click_id, visit.ad_id FROM visit "
                                      "WHERE segments.date DURING LAST_7_DAYS", 10_000)
    # A visit of yesterday may have its conversion today (an hour later): today is included.
    today = datetime.datetime.now(datetime.timezone.utc).date()
    conversions, _ = rows_of(v0, customer, "SELECT conversion.click_id, conversion.ad_id FROM conversion "
                                           f"WHERE segments.date BETWEEN '{today - datetime.timedelta(days=7)}' "
                                           f"AND '{today}'", 10_000)
    if visits is not None and conversions is not None:
        carried = {(r["conversion"].get("clickId"), r["conversion"]["adId"]) for r in conversions}
        stray = [v for v in visits if (v["visit"]["clickId"], v["visit"]["adId"]) not in carried]
        check("every visit is the click (and ad) of a conversion", bool(visits) and not stray, str(stray[:3]))


def reporting(env):
    v0 = service(V0_DISCOVERY, env["SEARCH_ADS_REPORTING_URL"])
    schemas = load_reference(V0_DISCOVERY)["schemas"]
    customer = env["SEARCH_ADS_CUSTOMER_ID"]
    today = datetime.datetime.now(datetime.timezone.utc).date()
    day = lambda n: (today - datetime.timedelta(days=n)).isoformat()

    listed = call("customers.listAccessibleCustomers", v0.customers().listAccessibleCustomers())
    if listed is not None:
        check("listAccessibleCustomers names the customer",
              f"customers/{customer}" in listed.get("resourceNames", []), str(listed))
    columns = call("customers.customColumns.list", v0.customers().customColumns().list(customerId=customer))
    if columns is not None:
        check("customColumns.list gives columns with ids and value types",
              all("id" in c and "valueType" in c for c in columns.get("customColumns", []))
              and bool(columns.get("customColumns")), str(columns)[:200])
    field = call("searchAds360Fields.get", v0.searchAds360Fields().get(
        resourceName="searchAds360Fields/conversion.conversion_date_time"))
    if field is not None:
        check("searchAds360Fields.get names the field",
              field.get("name") == "conversion.conversion_date_time" and field.get("category") == "ATTRIBUTE",
              str(field))
    # GRAM's example field query.
    found = call("searchAds360Fields.search", v0.searchAds360Fields().search(body={
        "query": 'SELECT name, category, selectable, filterable, sortable, selectable_with, data_type, '
                 'is_repeated WHERE name = "campaign.id"'}))
    if found is not None:
        results = found.get("results", [])
        check("searchAds360Fields.search finds campaign.id",
              [r.get("name") for r in results] == ["campaign.id"] and results[0].get("dataType") == "INT64",
              str(found))

    # A 30-day conversion query written as Google's pages write it: the date filter on
    # segments.date, which is not selected. Paged by 500 and by 10 000: the same rows.
    fields = ("conversion.id, conversion.advertiser_conversion_id, conversion.conversion_date_time, "
              "conversion.conversion_revenue_micros, conversion.status, campaign.id, ad_group.id")
    query = f"SELECT {fields} FROM conversion WHERE segments.date DURING LAST_30_DAYS"
    small, small_pages = rows_of(v0, customer, query, 500)
    large, large_pages = rows_of(v0, customer, query, 10_000)
    if small is not None and large is not None:
        print(f"     30-day query: {len(small)} rows; {small_pages} pages of 500, {large_pages} of 10 000")
        check("30-day query has rows beyond one page of 10 000", len(large) > 10_000, str(len(large)))
        check("pages of 500 and of 10 000 give the same rows", small == large,
              f"{len(small)} vs {len(large)} rows")
        ids = [r["conversion"]["id"] for r in large]
        check("no row twice across pages", len(ids) == len(set(ids)))
        dates = sorted(r["conversion"]["conversionDateTime"][:10] for r in large)
        check("DURING LAST_30_DAYS is the 30 days before today, not today",
              dates[0] == day(30) and dates[-1] == day(1), f"{dates[0]}..{dates[-1]}")
        check_rows(schemas, "30-day conversion query", large)
        enabled = sum(1 for r in large if r["conversion"]["status"] == "ENABLED")
        other_resources(v0, customer, schemas, enabled)

    # The three forms of issue 26 over the same days give the same rows.
    forms = {
        "BETWEEN, date not selected":
            f"SELECT {fields} FROM conversion WHERE segments.date BETWEEN '{day(30)}' AND '{day(1)}'",
        "DURING LAST_30_DAYS": query,
        ">= AND <=":
            f"SELECT {fields} FROM conversion WHERE segments.date >= '{day(30)}' AND segments.date <= '{day(1)}'",
    }
    answers = {}
    for name, text in forms.items():
        answers[name], _ = rows_of(v0, customer, text, 10_000)
    if all(a is not None for a in answers.values()):
        first = answers["DURING LAST_30_DAYS"]
        for name, rows in answers.items():
            check(f"form '{name}' gives the DURING rows", rows == first, f"{len(rows)} vs {len(first)}")

    # DURING LAST_7_DAYS: exactly the 7 days before today.
    week, _ = rows_of(v0, customer,
                      "SELECT conversion.id, segments.date FROM conversion WHERE segments.date DURING LAST_7_DAYS",
                      10_000)
    if week is not None:
        days = sorted({r["segments"]["date"] for r in week})
        check("DURING LAST_7_DAYS is the 7 days before today",
              days == [day(n) for n in range(7, 0, -1)], str(days))

    # A query Google refuses gets Google's error shape, which the client surfaces as HttpError.
    try:
        v0.customers().searchAds360().search(customerId=customer, body={
            "query": "SELECT conversion.id, segments.date FROM conversion"}).execute(num_retries=0)
        check("a date-segmented query without a date range is refused", False, "accepted")
    except HttpError as e:
        body = json.loads(e.content)
        codes = [err.get("errorCode") for d in body["error"].get("details", []) for err in d.get("errors", [])]
        check("a date-segmented query without a date range is refused",
              e.resp.status == 400 and {"queryError": "EXPECTED_FILTERS_ON_DATE_RANGE"} in codes, str(body)[:300])


def v2(env):
    ds = service("tests/fixtures/reference/sa360-v2-discovery.json", env["SEARCH_ADS_URL"])
    agency, advertiser = env["SEARCH_ADS_AGENCY_ID"], env["SEARCH_ADS_ADVERTISER_ID"]
    engine = env["SEARCH_ADS_ENGINE_ACCOUNT_ID"]
    today = datetime.datetime.now(datetime.timezone.utc).date()
    ymd = lambda d: int(d.strftime("%Y%m%d"))

    # conversion.get as the "list" how-to writes it (startRow 0, rowCount 10).
    listed = call("conversion.get", ds.conversion().get(
        agencyId=agency, advertiserId=advertiser, engineAccountId=engine,
        startDate=ymd(today - datetime.timedelta(days=3)), endDate=ymd(today), startRow=0, rowCount=10))
    if listed is None:
        return
    seeded = listed.get("conversion", [])
    check("conversion.get answers a ConversionList of at most rowCount",
          listed.get("kind") == "doubleclicksearch#conversionList" and 0 < len(seeded) <= 10, str(listed)[:300])
    if not seeded:
        return
    click = seeded[0]["clickId"]
    stamp = str(int(seeded[0]["conversionTimestamp"]) + 1_000)

    # conversion.insert with the insert how-to's click-ID sample (its values replaced by the fake's
    # own click, "replace with data from your site").
    sample = {
        "clickId": click,
        "conversionId": f"test_{int(time.time() * 1000)}",
        "conversionTimestamp": stamp,
        "segmentationType": "FLOODLIGHT",
        "segmentationName": "Purchase",
        "type": "TRANSACTION",
        "revenueMicros": "10000000",
        "currencyCode": "USD",
    }
    inserted = call("conversion.insert", ds.conversion().insert(body={
        "kind": "doubleclicksearch#conversionList", "conversion": [sample]}))
    if inserted is not None:
        echo = inserted.get("conversion", [{}])[0]
        check("conversion.insert echoes the conversion with its owner",
              echo.get("conversionId") == sample["conversionId"] and echo.get("agencyId") == agency
              and echo.get("advertiserId") == advertiser, str(echo))
    # conversion.update with the update how-to's sample (the owner ids, new revenue).
    updated_sample = dict(sample, agencyId=agency, advertiserId=advertiser, engineAccountId=engine,
                          revenueMicros="20000000")
    updated = call("conversion.update", ds.conversion().update(body={
        "kind": "doubleclicksearch#conversionList", "conversion": [updated_sample]}))
    if updated is not None:
        echo = updated.get("conversion", [{}])[0]
        check("conversion.update echoes the new revenue", echo.get("revenueMicros") == "20000000", str(echo))
    day = datetime.datetime.fromtimestamp(int(stamp) / 1000, datetime.timezone.utc).date()
    again = call("conversion.get after update", ds.conversion().get(
        agencyId=agency, advertiserId=advertiser, engineAccountId=engine,
        startDate=ymd(day), endDate=ymd(day), startRow=0, rowCount=1000))
    if again is not None:
        mine = [c for c in again.get("conversion", []) if c.get("conversionId") == sample["conversionId"]]
        check("conversion.get reads the stored conversion once, updated",
              len(mine) == 1 and mine[0].get("revenueMicros") == "20000000", str(mine))
    by_customer = call("conversion.getByCustomerId", ds.conversion().getByCustomerId(
        customerId=env["SEARCH_ADS_CUSTOMER_ID"], startDate=ymd(day), endDate=ymd(day), startRow=0,
        rowCount=10))
    if by_customer is not None:
        check("conversion.getByCustomerId answers a ConversionList",
              by_customer.get("kind") == "doubleclicksearch#conversionList", str(by_customer)[:200])

    # updateAvailability with the shape Google's sample code sends.
    availability = {
        "agencyId": agency,
        "advertiserId": advertiser,
        "segmentationType": "FLOODLIGHT",
        "segmentationName": "Purchase",
        "availabilityTimestamp": str(int(time.time() * 1000)),
    }
    answer = call("conversion.updateAvailability", ds.conversion().updateAvailability(
        body={"availabilities": [availability]}))
    if answer is not None:
        check("updateAvailability echoes the availability",
              answer.get("availabilities", [{}])[0].get("segmentationName") == "Purchase", str(answer))

    columns = call("savedColumns.list", ds.savedColumns().list(agencyId=agency, advertiserId=advertiser))
    if columns is not None:
        check("savedColumns.list answers a SavedColumnList",
              columns.get("kind") == "doubleclicksearch#savedColumnList", str(columns)[:200])

    # reports.getIdMappingFile, downloaded the way the client does media (alt=media).
    try:
        data = ds.reports().getIdMappingFile_media(agencyId=agency, advertiserId=advertiser).execute(num_retries=0)
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
        check("getIdMappingFile is the CSV of Entity Type, Legacy IDs, New IDs",
              rows[0][:3] == ["Entity Type", "Legacy IDs", "New IDs"] and len(rows) > 1, str(rows[:2]))
    except HttpError as e:
        check("reports.getIdMappingFile", False, f"HTTP {e.resp.status}")


def main():
    env = os.environ
    started = time.monotonic()
    reporting(env)
    v2(env)
    print(f"\n{checks} checks, {len(mismatches)} mismatches, {time.monotonic() - started:.1f} s")
    if mismatches:
        print("mismatches: " + "; ".join(mismatches))
        sys.exit(1)


if __name__ == "__main__":
    main()
