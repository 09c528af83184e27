"""schemathesis hooks for the contract tests of `.ci/contract/run` (SA-21).

One check, `reference_aware_positive_data_acceptance`, replaces schemathesis's
`positive_data_acceptance` for the search ads spec. Like it, it fails when a
request the spec allows is refused. Unlike it, it accepts a 400
`requestValidation` answer whose every detail carries one of the codes Google
documents for a *reference* that does not resolve (an unknown click, Floodlight
activity, custom dimension or metric, advertiser without permission) or for an
identity clash (conversion ID already used, not found, repeated in the request).
Those are the batch methods' way of saying what 403, 404 and 409 say elsewhere,
which the built-in check accepts: the request was well formed, the data it names
does not exist. A detail with any other code (`0x00000100`, a missing or invalid
field: the spec allowed what the service refuses), a batch-wide detail, or any
other 4xx still fails. It also accepts the one rule between two parameters that
OpenAPI 3.0 cannot state and the spec states in prose (SA-12): a read whose
`endDate` is before its `startDate` is 400 on `endDate`, and a `startDate` or
`endDate` in range that is not a calendar date (20230230) is 400 on it.
"""

import re

import schemathesis
from schemathesis.specs.openapi.checks import positive_data_acceptance

# SA-9: codes about references and identity, never about a request's shape.
REFERENCE_CODES = {
    0x101,  # click ID not found
    0x10E,  # Floodlight activity not found
    0x115,  # custom dimension not found
    0x116,  # custom metric not found
    0x11A,  # (conversion ID, timestamp) already used
    0x11B,  # conversion ID not found (update)
    0x11D,  # no permission for the advertiser
    0x11F,  # conversion ID repeated within the request
}

DETAIL = re.compile(r"^0x([0-9A-F]{8}): .* for (conversion|availability) index=\d+$", re.S)


# SA-12: the one rule between parameters that OpenAPI 3.0 cannot state.
DATE_ORDER = "Invalid date range: endDate is before startDate"


def _only_documented_cross_parameter_rule(response) -> bool:
    if response.status_code != 400:
        return False
    try:
        items = response.json()["error"]["errors"]
    except Exception:
        return False
    if not (isinstance(items, list) and len(items) == 1 and isinstance(items[0], dict)):
        return False
    item = items[0]
    if item.get("location") == "endDate" and item.get("message") == DATE_ORDER:
        return True
    # An int32 in 20091101..99991231 that is not a calendar date (20230230): OpenAPI
    # cannot say "a date" of an integer.
    return item.get("location") in ("startDate", "endDate") and str(
        item.get("message", "")
    ).endswith("not a calendar date yyyymmdd")


def _only_reference_details(response) -> bool:
    if response.status_code != 400:
        return False
    try:
        body = response.json()
    except Exception:
        return False
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return False
    items = error.get("errors")
    if not isinstance(items, list) or not items:
        return False
    for item in items:
        if not isinstance(item, dict) or item.get("reason") != "requestValidation":
            return False
        match = DETAIL.match(str(item.get("message", "")))
        if match is None or int(match.group(1), 16) not in REFERENCE_CODES:
            return False
    return True


# SR-15: Reporting API answers about text or state the spec cannot describe.
# `queryError`: the `query` member is text in the Search Ads 360 query language,
# whose grammar OpenAPI cannot state. These `requestError`s are about a page
# token (opaque server state: a made-up token names nothing, like the reference
# codes above) or the one rule between two members (a validate-only request
# carries no page token).
REPORTING_REQUEST_ERRORS = {
    "INVALID_PAGE_TOKEN",
    "EXPIRED_PAGE_TOKEN",
    "VALIDATE_ONLY_REQUEST_HAS_PAGE_TOKEN",
}


def _reporting_error_beyond_the_spec(error) -> bool:
    code = error.get("errorCode") if isinstance(error, dict) else None
    if not isinstance(code, dict) or len(code) != 1:
        return False
    ((kind, value),) = code.items()
    return kind == "queryError" or (
        kind == "requestError" and value in REPORTING_REQUEST_ERRORS
    )


def _only_reporting_errors_beyond_the_spec(response) -> bool:
    """A Reporting API 400 whose every failure is one of the above."""
    if response.status_code != 400:
        return False
    try:
        details = response.json()["error"]["details"]
    except Exception:
        return False
    if not isinstance(details, list):
        return False
    errors = [
        e
        for d in details
        if isinstance(d, dict)
        for e in (d.get("errors") or [])
    ]
    return bool(errors) and all(_reporting_error_beyond_the_spec(e) for e in errors)


@schemathesis.check
def reference_aware_positive_data_acceptance(ctx, response, case):
    if (
        _only_reference_details(response)
        or _only_documented_cross_parameter_rule(response)
        or _only_reporting_errors_beyond_the_spec(response)
    ):
        return None
    return positive_data_acceptance(ctx, response, case)
