//! Deterministic seeded conversions.
//!
//! Conversion `i` of account `a` is a pure function of (seed, account, i). Timestamps grow with `i`
//! (`conversions_per_day` per day from `start_date`), so the rows of a date range are an index range,
//! and the campaign / ad group / ad / criterion of row `i` follow `i` modulo a small cycle, so every
//! ID filter is a congruence on `i`. Nothing is held in memory: pages are computed.

use chrono::NaiveDate;
use serde::Serialize;

use super::config::{KnownAccount, SearchAdsConfig};
use crate::util::{hash3, mix};

/// Milliseconds per day.
pub(crate) const DAY_MS: i64 = 86_400_000;

/// Campaigns per account, ad groups per campaign, ads (and criteria) per ad group.
pub(crate) const CAMPAIGNS: u64 = super::config::SEEDED_CAMPAIGNS;
pub(crate) const AD_GROUPS: u64 = 3;

/// Ad groups of each synthetic campaign (SR-22).
pub(crate) const SYNTHETIC_AD_GROUPS: u64 = 1;

/// Campaigns of each account in the Reporting API's entity reports: the seeded ones, then the
/// configured synthetic ones (SR-22).
pub(crate) fn report_campaigns(config: &SearchAdsConfig) -> u64 {
    CAMPAIGNS + config.report_campaigns
}

/// Ad groups of campaign `c` of an account: [`AD_GROUPS`] of a seeded campaign,
/// [`SYNTHETIC_AD_GROUPS`] of a synthetic one.
pub(crate) fn ad_groups_of(c: u64) -> u64 {
    if c < CAMPAIGNS {
        AD_GROUPS
    } else {
        SYNTHETIC_AD_GROUPS
    }
}
pub(crate) const ADS: u64 = 5;

const CAMPAIGN_BASE: i64 = 71_700_000_000_000_000;
const AD_GROUP_BASE: i64 = 58_700_000_000_000_000;
const AD_BASE: i64 = 44_700_000_000_000_000;
const CRITERION_BASE: i64 = 43_700_000_000_000_000;
const ID_STRIDE: i64 = 1_000_000;
/// `dsConversionId` of seeded conversions: base + account * 10^11 + i.
const SEEDED_DS_BASE: i64 = 9_000_000_000_000_000;
/// `dsConversionId` of inserted conversions start here.
pub(crate) const INSERTED_DS_BASE: i64 = 8_000_000_000_000_000;

/// Prefix of seeded click IDs.
const CLICK_PREFIX: &str = "EAIaIQob";

/// The Unix milliseconds of midnight (UTC) starting `date`.
pub(crate) fn day_start_ms(date: NaiveDate) -> i64 {
    date.and_hms_opt(0, 0, 0)
        .map_or(0, |dt| dt.and_utc().timestamp_millis())
}

/// Parses a `yyyymmdd` number into a date.
pub(crate) fn parse_date_number(n: i64) -> Option<NaiveDate> {
    let y = i32::try_from(n / 10_000).ok()?;
    let m = u32::try_from((n / 100) % 100).ok()?;
    let d = u32::try_from(n % 100).ok()?;
    NaiveDate::from_ymd_opt(y, m, d)
}

/// The seeded click ID number `n`; [`parse_click_id`] accepts exactly these.
pub(crate) fn click_id(seed: u64, n: u64) -> String {
    let check = mix(seed ^ mix(n ^ 0xC11C)) & 0xFFFF_FFFF;
    format!("{CLICK_PREFIX}{n:x}x{check:08x}")
}

/// Click numbers of account number `a` are `a * CLICKS_PER_ACCOUNT + i`; click `i` is the click
/// behind seeded conversion `i` (and exists for any `i`, seeded or not).
pub(crate) const CLICKS_PER_ACCOUNT: u64 = 100_000_000_000;

/// How long before seeded conversion `i` its click `i` happened.
pub(crate) const CLICK_LEAD_MS: i64 = 3_600_000;

/// The (account number, index) a click ID the fake generated for `seed` was issued for; the
/// account number may be out of range for the configuration.
pub(crate) fn click_origin(seed: u64, s: &str) -> Option<(usize, u64)> {
    let n = parse_click_id(seed, s)?;
    Some((
        usize::try_from(n / CLICKS_PER_ACCOUNT).ok()?,
        n % CLICKS_PER_ACCOUNT,
    ))
}

/// Whether `s` is a click ID the fake generated for `seed`.
#[cfg(test)]
pub(crate) fn is_known_click_id(seed: u64, s: &str) -> bool {
    parse_click_id(seed, s).is_some()
}

fn parse_click_id(seed: u64, s: &str) -> Option<u64> {
    let rest = s.strip_prefix(CLICK_PREFIX)?;
    let (n_hex, _) = rest.split_once('x')?;
    let n = u64::from_str_radix(n_hex, 16).ok()?;
    (click_id(seed, n) == s).then_some(n)
}

/// The `conversionId` of seeded conversion `i` of an account.
pub(crate) fn seeded_conversion_id(account: &KnownAccount, i: u64) -> String {
    format!("ds-{}-{i}", account.engine_account_id)
}

/// Splits a seeded `conversionId` into engine account ID and index.
pub(crate) fn parse_seeded_conversion_id(id: &str) -> Option<(i64, u64)> {
    let rest = id.strip_prefix("ds-")?;
    let (engine, i) = rest.split_once('-')?;
    let engine: i64 = engine.parse().ok()?;
    if i.is_empty() || !i.bytes().all(|b| b.is_ascii_digit()) || (i.len() > 1 && i.starts_with('0'))
    {
        return None;
    }
    Some((engine, i.parse().ok()?))
}

/// Which seeded rows an ID filter keeps: `i % modulus == residue` (or none at all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Congruence {
    /// `i % modulus == residue`.
    Mod { modulus: u64, residue: u64 },
    /// No seeded row matches.
    Empty,
}

impl Congruence {
    pub(crate) const ALL: Self = Self::Mod {
        modulus: 1,
        residue: 0,
    };

    /// Intersects two congruences whose moduli divide one another (1, 4, 12, 60).
    pub(crate) fn and(self, other: Self) -> Self {
        match (self, other) {
            (
                Self::Mod {
                    modulus: m1,
                    residue: r1,
                },
                Self::Mod {
                    modulus: m2,
                    residue: r2,
                },
            ) => {
                let (big_m, big_r, small_m, small_r) = if m1 >= m2 {
                    (m1, r1, m2, r2)
                } else {
                    (m2, r2, m1, r1)
                };
                if big_r % small_m == small_r {
                    Self::Mod {
                        modulus: big_m,
                        residue: big_r,
                    }
                } else {
                    Self::Empty
                }
            }
            _ => Self::Empty,
        }
    }

    /// The number of `i` in `lo..hi` that match.
    pub(crate) fn count(self, lo: u64, hi: u64) -> u64 {
        match self {
            Self::Empty => 0,
            Self::Mod { modulus, residue } => {
                if hi <= lo {
                    return 0;
                }
                let below = |x: u64| -> u64 {
                    // matches in 0..x
                    if x <= residue {
                        0
                    } else {
                        (x - residue).div_ceil(modulus)
                    }
                };
                below(hi) - below(lo)
            }
        }
    }

    /// The `k`-th (0-based) matching `i` at or after `lo`.
    pub(crate) fn nth_from(self, lo: u64, k: u64) -> Option<u64> {
        match self {
            Self::Empty => None,
            Self::Mod { modulus, residue } => {
                let first = if lo <= residue {
                    residue
                } else {
                    lo + (modulus - (lo - residue) % modulus) % modulus
                };
                first.checked_add(k.checked_mul(modulus)?)
            }
        }
    }
}

/// Which filter an ID belongs to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum IdFilter {
    Campaign,
    AdGroup,
    Ad,
    Criterion,
}

/// A seed-dependent offset of every generated campaign / ad group / ad / criterion ID, so IDs look
/// like real ones (100..=999 * 10^9; the IDs keep 17 digits).
pub(crate) fn id_offset(seed: u64) -> i64 {
    ((mix(seed ^ 0x1D0F) % 900 + 100) * 1_000_000_000) as i64
}

/// Legacy ID of seeded campaign `c` of account number `a` (`offset` = [`id_offset`]).
pub(crate) fn campaign_id(offset: i64, a: usize, c: u64) -> i64 {
    CAMPAIGN_BASE + offset + a as i64 * ID_STRIDE + c as i64
}

/// Legacy ID of seeded ad group `g` of campaign `c` of account number `a`.
pub(crate) fn ad_group_id(offset: i64, a: usize, c: u64, g: u64) -> i64 {
    AD_GROUP_BASE + offset + a as i64 * ID_STRIDE + (c * AD_GROUPS + g) as i64
}

/// ID of seeded ad `s` of ad group `g` of campaign `c` of account number `a` (the `adId` of the
/// seeded conversions of that ad).
pub(crate) fn ad_id(offset: i64, a: usize, c: u64, g: u64, s: u64) -> i64 {
    AD_BASE + offset + a as i64 * ID_STRIDE + ((c * AD_GROUPS + g) * ADS + s) as i64
}

/// ID of seeded criterion (keyword) `s` of ad group `g` of campaign `c` of account number `a`.
pub(crate) fn criterion_id(offset: i64, a: usize, c: u64, g: u64, s: u64) -> i64 {
    CRITERION_BASE + offset + a as i64 * ID_STRIDE + ((c * AD_GROUPS + g) * ADS + s) as i64
}

/// The (account, campaign `c`) of a legacy seeded campaign ID, if it is one.
pub(crate) fn seeded_campaign_of(seed: u64, accounts: usize, id: i64) -> Option<(usize, u64)> {
    let local = u64::try_from(id - CAMPAIGN_BASE - id_offset(seed)).ok()?;
    let (a, c) = (local / ID_STRIDE as u64, local % ID_STRIDE as u64);
    (c < CAMPAIGNS && (a as usize) < accounts).then_some((a as usize, c))
}

/// The (account, campaign `c`, ad group `g`) of a legacy seeded ad group ID, if it is one.
pub(crate) fn seeded_ad_group_of(seed: u64, accounts: usize, id: i64) -> Option<(usize, u64, u64)> {
    let local = u64::try_from(id - AD_GROUP_BASE - id_offset(seed)).ok()?;
    let (a, cg) = (local / ID_STRIDE as u64, local % ID_STRIDE as u64);
    (cg < CAMPAIGNS * AD_GROUPS && (a as usize) < accounts).then_some((
        a as usize,
        cg / AD_GROUPS,
        cg % AD_GROUPS,
    ))
}

/// The congruence of seeded rows of account number `a` matching `id` under `filter`.
pub(crate) fn filter_congruence(seed: u64, a: usize, filter: IdFilter, id: i64) -> Congruence {
    let (base, cycle_len) = match filter {
        IdFilter::Campaign => (CAMPAIGN_BASE, CAMPAIGNS),
        IdFilter::AdGroup => (AD_GROUP_BASE, CAMPAIGNS * AD_GROUPS),
        IdFilter::Ad => (AD_BASE, CAMPAIGNS * AD_GROUPS * ADS),
        IdFilter::Criterion => (CRITERION_BASE, CAMPAIGNS * AD_GROUPS * ADS),
    };
    let local = id - base - id_offset(seed) - (a as i64) * ID_STRIDE;
    let Ok(local) = u64::try_from(local) else {
        return Congruence::Empty;
    };
    if local >= cycle_len {
        return Congruence::Empty;
    }
    // `local` numbers the entities as (c * G + g) * A + s; turn it into the residue of i, where
    // c = i % C, g = (i / C) % G, s = (i / (C * G)) % A.
    let residue = match filter {
        IdFilter::Campaign => local,
        IdFilter::AdGroup => {
            let (c, g) = (local / AD_GROUPS, local % AD_GROUPS);
            c + CAMPAIGNS * g
        }
        IdFilter::Ad | IdFilter::Criterion => {
            let (cg, s) = (local / ADS, local % ADS);
            let (c, g) = (cg / AD_GROUPS, cg % AD_GROUPS);
            c + CAMPAIGNS * g + CAMPAIGNS * AD_GROUPS * s
        }
    };
    Congruence::Mod {
        modulus: cycle_len,
        residue,
    }
}

/// A custom dimension or metric value of a seeded conversion.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct NamedValue<T> {
    pub name: String,
    pub value: T,
}

/// A seeded conversion, serialized like the real service's JSON (int64 values as strings).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SeededConversion {
    pub ad_group_id: String,
    pub ad_id: String,
    pub ad_user_data_consent: &'static str,
    pub advertiser_id: String,
    pub agency_id: String,
    pub campaign_id: String,
    pub channel: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub click_id: Option<String>,
    pub conversion_id: String,
    pub conversion_modified_timestamp: String,
    pub conversion_timestamp: String,
    pub criterion_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub currency_code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_dimension: Option<Vec<NamedValue<String>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_metric: Option<Vec<NamedValue<f64>>>,
    pub customer_id: String,
    pub device_type: &'static str,
    pub ds_conversion_id: String,
    pub engine_account_id: String,
    pub floodlight_order_id: String,
    pub quantity_millis: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revenue_micros: Option<String>,
    pub segmentation_id: String,
    pub segmentation_name: String,
    pub segmentation_type: &'static str,
    pub state: &'static str,
    #[serde(rename = "type")]
    pub conversion_type: &'static str,
}

/// Generates seeded conversions for one configuration.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Generator<'a> {
    pub config: &'a SearchAdsConfig,
}

impl Generator<'_> {
    fn spacing_ms(&self) -> i64 {
        DAY_MS / self.config.conversions_per_day as i64
    }

    /// The epoch-millisecond timestamp of seeded conversion `i` (of any account `a`).
    pub(crate) fn timestamp(&self, a: usize, i: u64) -> i64 {
        let per_day = self.config.conversions_per_day;
        let spacing = self.spacing_ms();
        let jitter = (hash3(self.config.seed, a as u64, i) % spacing as u64) as i64;
        day_start_ms(self.config.start_date)
            + (i / per_day) as i64 * DAY_MS
            + (i % per_day) as i64 * spacing
            + jitter
    }

    /// The epoch-millisecond time of click `i` of account number `a` ([`click_origin`]).
    pub(crate) fn click_timestamp(&self, a: usize, i: u64) -> i64 {
        self.timestamp(a, i) - CLICK_LEAD_MS
    }

    /// The seeded indices `lo..hi` whose dates fall within `start..=end`.
    pub(crate) fn index_range(&self, start: NaiveDate, end: NaiveDate) -> (u64, u64) {
        let n = self.config.conversions_per_account;
        let per_day = self.config.conversions_per_day;
        let first_day = (start - self.config.start_date).num_days();
        let last_day = (end - self.config.start_date).num_days();
        if last_day < 0 || last_day < first_day {
            return (0, 0);
        }
        let lo = u64::try_from(first_day.max(0))
            .unwrap_or(0)
            .saturating_mul(per_day)
            .min(n);
        let hi = u64::try_from(last_day + 1)
            .unwrap_or(0)
            .saturating_mul(per_day)
            .min(n);
        (lo, hi.max(lo))
    }

    /// Seeded conversion `i` of account number `a`.
    pub(crate) fn conversion(&self, a: usize, i: u64) -> SeededConversion {
        let config = self.config;
        let account = &config.accounts[a];
        let h = hash3(config.seed, a as u64, i ^ 0x00C0_FFEE);
        let c = i % CAMPAIGNS;
        let g = (i / CAMPAIGNS) % AD_GROUPS;
        let s = (i / (CAMPAIGNS * AD_GROUPS)) % ADS;
        let stride = id_offset(config.seed) + a as i64 * ID_STRIDE;
        let slot = ((c * AD_GROUPS + g) * ADS + s) as i64;
        let ts = self.timestamp(a, i);
        let modified = ts + (h % 3_600_000) as i64;
        let transaction = !h.is_multiple_of(3);
        let activity =
            &config.floodlight_activities[(h >> 8) as usize % config.floodlight_activities.len()];
        let device = ["DESKTOP", "MOBILE", "TABLET"][((h >> 16) % 3) as usize];
        let state = if (h >> 20).is_multiple_of(50) {
            "REMOVED"
        } else {
            "ACTIVE"
        };
        let consent = ["GRANTED", "DENIED", "UNKNOWN"][((h >> 24) % 3) as usize];
        let click = (!(h >> 28).is_multiple_of(4))
            .then(|| click_id(config.seed, (a as u64) * CLICKS_PER_ACCOUNT + i));
        let custom_dimension =
            (i.is_multiple_of(10) && !config.custom_dimensions.is_empty()).then(|| {
                vec![NamedValue {
                    name: config.custom_dimensions
                        [(h >> 32) as usize % config.custom_dimensions.len()]
                    .clone(),
                    value: ["north", "south", "east", "west"][((h >> 36) % 4) as usize].to_owned(),
                }]
            });
        let custom_metric = (i % 10 == 5 && !config.custom_metrics.is_empty()).then(|| {
            vec![NamedValue {
                name: config.custom_metrics[(h >> 40) as usize % config.custom_metrics.len()]
                    .clone(),
                value: ((h >> 44) % 1000) as f64 / 4.0,
            }]
        });
        SeededConversion {
            ad_group_id: (AD_GROUP_BASE + stride + (c * AD_GROUPS + g) as i64).to_string(),
            ad_id: (AD_BASE + stride + slot).to_string(),
            ad_user_data_consent: consent,
            advertiser_id: account.advertiser_id.to_string(),
            agency_id: account.agency_id.to_string(),
            campaign_id: (CAMPAIGN_BASE + stride + c as i64).to_string(),
            channel: "online",
            click_id: click,
            conversion_id: seeded_conversion_id(account, i),
            conversion_modified_timestamp: modified.to_string(),
            conversion_timestamp: ts.to_string(),
            criterion_id: (CRITERION_BASE + stride + slot).to_string(),
            currency_code: transaction.then_some("USD"),
            custom_dimension,
            custom_metric,
            customer_id: account.customer_id.clone(),
            device_type: device,
            ds_conversion_id: self.seeded_ds_id(a, i).to_string(),
            engine_account_id: account.engine_account_id.to_string(),
            floodlight_order_id: format!("order-{:012x}", h >> 16),
            quantity_millis: (1000 * (1 + (h >> 48) % 3)).to_string(),
            revenue_micros: transaction.then(|| ((1 + (h >> 12) % 50_000) * 10_000).to_string()),
            segmentation_id: activity.id.to_string(),
            segmentation_name: activity.name.clone(),
            segmentation_type: "FLOODLIGHT",
            state,
            conversion_type: if transaction { "TRANSACTION" } else { "ACTION" },
        }
    }

    /// The `dsConversionId` of seeded conversion `i` of account number `a`.
    pub(crate) fn seeded_ds_id(&self, a: usize, i: u64) -> i64 {
        SEEDED_DS_BASE + a as i64 * 100_000_000_000 + i as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SearchAdsConfig {
        SearchAdsConfig {
            conversions_per_account: 1000,
            conversions_per_day: 10,
            ..SearchAdsConfig::default()
        }
    }

    #[test]
    fn timestamps_increase_and_match_days() {
        let cfg = config();
        let gen_ = Generator { config: &cfg };
        let mut last = 0;
        for i in 0..100 {
            let ts = gen_.timestamp(0, i);
            assert!(ts > last);
            last = ts;
            let day = (ts - day_start_ms(cfg.start_date)) / DAY_MS;
            assert_eq!(day as u64, i / 10);
        }
        let d = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
        assert_eq!(gen_.index_range(d(2024, 1, 1), d(2024, 1, 1)), (0, 10));
        assert_eq!(gen_.index_range(d(2023, 1, 1), d(2024, 1, 3)), (0, 30));
        assert_eq!(gen_.index_range(d(2024, 1, 3), d(2030, 1, 1)), (20, 1000));
        assert_eq!(gen_.index_range(d(2023, 1, 1), d(2023, 12, 31)), (0, 0));
        assert_eq!(gen_.index_range(d(2024, 1, 5), d(2024, 1, 4)), (0, 0));
    }

    #[test]
    fn congruences_agree_with_generated_ids() {
        let cfg = config();
        let gen_ = Generator { config: &cfg };
        for i in 0..200u64 {
            let conv = gen_.conversion(1, i);
            for (filter, id) in [
                (IdFilter::Campaign, &conv.campaign_id),
                (IdFilter::AdGroup, &conv.ad_group_id),
                (IdFilter::Ad, &conv.ad_id),
                (IdFilter::Criterion, &conv.criterion_id),
            ] {
                let congruence = filter_congruence(cfg.seed, 1, filter, id.parse().unwrap());
                let Congruence::Mod { modulus, residue } = congruence else {
                    panic!("empty");
                };
                assert_eq!(i % modulus, residue, "{filter:?} {i}");
                assert_eq!(
                    filter_congruence(cfg.seed, 0, filter, id.parse().unwrap()),
                    Congruence::Empty
                );
            }
        }
    }

    #[test]
    fn congruence_count_and_nth() {
        let c = Congruence::Mod {
            modulus: 4,
            residue: 3,
        };
        assert_eq!(c.count(0, 20), 5);
        assert_eq!(c.count(4, 8), 1);
        assert_eq!(c.count(8, 8), 0);
        assert_eq!(c.nth_from(0, 0), Some(3));
        assert_eq!(c.nth_from(4, 0), Some(7));
        assert_eq!(c.nth_from(7, 1), Some(11));
        assert_eq!(c.nth_from(8, 0), Some(11));
        assert_eq!(Congruence::ALL.count(3, 9), 6);
        let x = Congruence::Mod {
            modulus: 12,
            residue: 7,
        };
        assert_eq!(c.and(x), x);
        assert_eq!(
            Congruence::Mod {
                modulus: 4,
                residue: 1
            }
            .and(x),
            Congruence::Empty
        );
    }

    #[test]
    fn click_ids_round_trip() {
        let id = click_id(42, 123_456);
        assert!(is_known_click_id(42, &id));
        assert!(!is_known_click_id(43, &id));
        assert!(!is_known_click_id(42, "EAIaIQobffx00000000"));
        let issued = click_id(42, 2 * CLICKS_PER_ACCOUNT + 17);
        assert_eq!(click_origin(42, &issued), Some((2, 17)));
        assert_eq!(click_origin(43, &issued), None);
        assert_eq!(
            parse_seeded_conversion_id("ds-700000000042205-17"),
            Some((700_000_000_042_205, 17))
        );
        assert_eq!(parse_seeded_conversion_id("ds-7-017"), None);
    }
}
