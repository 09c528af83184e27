//! The attributes of the entities a row stands for (DECISIONS SR-22 c): every resource name one
//! row links to is the `resource_name` of a row of the linked resource (`campaign.campaign_budget`
//! is the budget's, `campaign.bidding_strategy` the portfolio strategy's,
//! `ad_group_criterion.ad_group` the ad group's, a label link's `label` the label's). Resource
//! names follow Google Ads' forms (`customers/{customer}/adGroupAds/{ad group}~{ad}`), the ids are
//! the seeded ones (campaigns and ad groups with their new IDs, SR-12; ads and keywords with the
//! `adId` / `criterionId` the seeded conversions carry). A field the fake does not fill has no
//! value (SR-16 c).

use super::links::{self, LABELS};
use super::model::{Account, Entity, STRATEGIES, V};
use crate::search_ads::data::CAMPAIGNS;
use crate::search_ads::data::{self, AD_GROUPS, ADS};

/// The keywords of an ad group, by keyword number (with the ad group's numbers in the text).
const KEYWORDS: [&str; ADS as usize] = [
    "video streaming",
    "watch live sports",
    "online tv",
    "stream movies",
    "live tv app",
];

/// `ad_group_criterion.keyword.match_type` by keyword number.
const MATCH_TYPES: [&str; 3] = ["EXACT", "PHRASE", "BROAD"];

/// `bidding_strategy.type` of each portfolio strategy.
const STRATEGY_TYPES: [&str; STRATEGIES as usize] = ["TARGET_SPEND", "TARGET_CPA"];

impl Account<'_> {
    /// The ID of portfolio strategy `p`: derived from the first campaign using it.
    fn strategy_id(&self, p: u64) -> Option<i64> {
        self.campaign_id(p)?.checked_mul(10)?.checked_add(1)
    }

    /// The ID of campaign `c`'s budget.
    fn budget_id(&self, c: u64) -> Option<i64> {
        self.campaign_id(c)?.checked_mul(10)?.checked_add(2)
    }

    fn ad_id(&self, c: u64, g: u64, s: u64) -> i64 {
        data::ad_id(self.offset, self.a, c, g, s)
    }

    fn criterion_id(&self, c: u64, g: u64, s: u64) -> i64 {
        data::criterion_id(self.offset, self.a, c, g, s)
    }

    /// `customers/{customer}/{collection}/{id}`.
    fn name(&self, collection: &str, id: impl std::fmt::Display) -> Option<V> {
        Some(V::Str(format!(
            "customers/{}/{collection}/{id}",
            self.customer
        )))
    }

    /// The value of an attribute of entity `e` (`None`: not filled by the fake).
    pub(super) fn attribute(&self, e: &Entity, field: &str) -> Option<V> {
        let s = |t: &str| Some(V::Str(t.to_owned()));
        let (resource, name) = field.split_once('.')?;
        let owner = || Some(V::Int(self.customer.parse().ok()?));
        match resource {
            "customer" => match name {
                "id" => owner(),
                "resource_name" => s(&format!("customers/{}", self.customer)),
                "descriptive_name" => s(&format!("Engine account {}", self.engine_id)),
                "currency_code" => s("USD"),
                "time_zone" => s("UTC"),
                "manager_id" => Some(V::Int(self.manager_id.parse().ok()?)),
                "engine_id" => s(&self.engine_id.to_string()),
                "status" => s("ENABLED"),
                _ => None,
            },
            "campaign" => self.campaign(e.c?, name),
            "campaign_budget" => {
                let c = e.c?;
                match name {
                    "resource_name" => self.name("campaignBudgets", self.budget_id(c)?),
                    "amount_micros" => Some(V::Int((50 + 25 * c as i64) * 1_000_000)),
                    "period" => s("DAILY"),
                    "delivery_method" => s("STANDARD"),
                    _ => None,
                }
            }
            "bidding_strategy" => {
                let p = e.strategy.or(e.c.map(|c| c % STRATEGIES))?;
                let id = self.strategy_id(p)?;
                let campaigns = data::report_campaigns(&self.app.config);
                let using = (0..campaigns).filter(|c| c % STRATEGIES == p).count() as i64;
                match name {
                    "id" => Some(V::Int(id)),
                    "resource_name" => self.name("biddingStrategies", id),
                    "name" => s(&format!("Portfolio strategy {}", p + 1)),
                    "status" => s("ENABLED"),
                    "type" => s(STRATEGY_TYPES[p as usize]),
                    "campaign_count" | "non_removed_campaign_count" => Some(V::Int(using)),
                    "currency_code" | "effective_currency_code" => s("USD"),
                    _ => None,
                }
            }
            "ad_group" => self.ad_group(e.c?, e.g?, name),
            "ad_group_ad" => self.ad(e.c?, e.g?, e.s?, name),
            "ad_group_criterion" => self.criterion(e.c?, e.g?, e.s?, name),
            "keyword_view" => match name {
                "resource_name" => {
                    let (c, g, k) = (e.c?, e.g?, e.s?);
                    let group = self.ad_group_id(c, g)?;
                    self.name(
                        "keywordViews",
                        format!("{group}~{}", self.criterion_id(c, g, k)),
                    )
                }
                _ => None,
            },
            "conversion_action" => {
                let k = e.action?;
                let activity = self.app.config.floodlight_activities.get(k)?;
                match name {
                    "id" | "floodlight_settings.activity_id" => Some(V::Int(activity.id)),
                    "resource_name" => self.name("conversionActions", activity.id),
                    "name" => s(&activity.name),
                    "status" => s("ENABLED"),
                    "type" => s("FLOODLIGHT_ACTION"),
                    "owner_customer" => s(&format!("customers/{}", self.customer)),
                    "include_in_conversions_metric" => Some(V::Bool(true)),
                    _ => None,
                }
            }
            "label" => {
                let l = e.label?;
                match name {
                    "id" => Some(V::Int(links::label_id(l))),
                    "resource_name" => self.name("labels", links::label_id(l)),
                    "name" => s(LABELS[l as usize]),
                    "status" => s("ENABLED"),
                    "text_label.background_color" => s(links::COLOURS[l as usize]),
                    _ => None,
                }
            }
            "campaign_label"
            | "ad_group_label"
            | "ad_group_ad_label"
            | "ad_group_criterion_label" => self.link(resource, e, name),
            _ => None,
        }
    }

    fn campaign(&self, c: u64, name: &str) -> Option<V> {
        let s = |t: &str| Some(V::Str(t.to_owned()));
        let id = self.campaign_id(c)?;
        match name {
            "id" => Some(V::Int(id)),
            "resource_name" => self.name("campaigns", id),
            "name" => s(&format!("Campaign {}", c + 1)),
            // The last seeded campaign is paused, so status filters select something; so is every
            // synthetic one whose number is a multiple of 10 (SR-22).
            "status" => s(
                if c + 1 == CAMPAIGNS || (c >= CAMPAIGNS && c.is_multiple_of(10)) {
                    "PAUSED"
                } else {
                    "ENABLED"
                },
            ),
            "advertising_channel_type" => s("SEARCH"),
            "bidding_strategy_type" => s(STRATEGY_TYPES[(c % STRATEGIES) as usize]),
            "bidding_strategy" => self.name("biddingStrategies", self.strategy_id(c % STRATEGIES)?),
            "campaign_budget" => self.name("campaignBudgets", self.budget_id(c)?),
            _ => None,
        }
    }

    fn ad_group(&self, c: u64, g: u64, name: &str) -> Option<V> {
        let s = |t: &str| Some(V::Str(t.to_owned()));
        let id = self.ad_group_id(c, g)?;
        match name {
            "id" => Some(V::Int(id)),
            "resource_name" => self.name("adGroups", id),
            "name" => s(&format!("Ad group {}.{}", c + 1, g + 1)),
            "campaign" => self.name("campaigns", self.campaign_id(c)?),
            // The last ad group of each campaign is paused (QS's `ad_group.status = PAUSED`).
            "status" => s(if g + 1 == AD_GROUPS {
                "PAUSED"
            } else {
                "ENABLED"
            }),
            "type" => s("SEARCH_STANDARD"),
            _ => None,
        }
    }

    fn ad(&self, c: u64, g: u64, k: u64, name: &str) -> Option<V> {
        let s = |t: &str| Some(V::Str(t.to_owned()));
        let group = self.ad_group_id(c, g)?;
        let id = self.ad_id(c, g, k);
        match name {
            "resource_name" => self.name("adGroupAds", format!("{group}~{id}")),
            "ad.id" => Some(V::Int(id)),
            "ad.resource_name" => self.name("ads", id),
            "ad.name" => s(&format!("Ad {}.{}.{}", c + 1, g + 1, k + 1)),
            "ad.type" => s("RESPONSIVE_SEARCH_AD"),
            "ad.display_url" => s(&format!("www.example.com/c{}", c + 1)),
            // The last ad of each ad group is paused.
            "status" => s(if k + 1 == ADS { "PAUSED" } else { "ENABLED" }),
            "engine_status" => s("AD_GROUP_AD_ELIGIBLE"),
            _ => None,
        }
    }

    fn criterion(&self, c: u64, g: u64, k: u64, name: &str) -> Option<V> {
        let s = |t: &str| Some(V::Str(t.to_owned()));
        let group = self.ad_group_id(c, g)?;
        let id = self.criterion_id(c, g, k);
        match name {
            "resource_name" => self.name("adGroupCriteria", format!("{group}~{id}")),
            "criterion_id" => Some(V::Int(id)),
            "ad_group" => self.name("adGroups", group),
            "type" => s("KEYWORD"),
            "status" => s("ENABLED"),
            "negative" => Some(V::Bool(false)),
            "keyword.text" => s(&format!("{} {}{}", KEYWORDS[k as usize], c + 1, g + 1)),
            "keyword.match_type" => s(MATCH_TYPES[k as usize % MATCH_TYPES.len()]),
            "cpc_bid_micros" | "effective_cpc_bid_micros" => {
                Some(V::Int((40 + 10 * k as i64) * 10_000))
            }
            "engine_status" => s("AD_GROUP_CRITERION_ELIGIBLE"),
            _ => None,
        }
    }

    /// A label link's fields: its own resource name, the linked entity's and the label's.
    fn link(&self, resource: &str, e: &Entity, name: &str) -> Option<V> {
        let l = e.label?;
        let label = links::label_id(l);
        match (resource, name) {
            (_, "label") => self.name("labels", label),
            (_, "owner_customer_id") => Some(V::Int(self.customer.parse().ok()?)),
            ("campaign_label", "campaign") => self.campaign(e.c?, "resource_name"),
            ("campaign_label", "resource_name") => self.name(
                "campaignLabels",
                format!("{}~{label}", self.campaign_id(e.c?)?),
            ),
            ("ad_group_label", "ad_group") => self.ad_group(e.c?, e.g?, "resource_name"),
            ("ad_group_label", "resource_name") => self.name(
                "adGroupLabels",
                format!("{}~{label}", self.ad_group_id(e.c?, e.g?)?),
            ),
            ("ad_group_ad_label", "ad_group_ad") => self.ad(e.c?, e.g?, e.s?, "resource_name"),
            ("ad_group_ad_label", "resource_name") => {
                let (c, g, k) = (e.c?, e.g?, e.s?);
                let group = self.ad_group_id(c, g)?;
                self.name(
                    "adGroupAdLabels",
                    format!("{group}~{}~{label}", self.ad_id(c, g, k)),
                )
            }
            ("ad_group_criterion_label", "ad_group_criterion") => {
                self.criterion(e.c?, e.g?, e.s?, "resource_name")
            }
            ("ad_group_criterion_label", "resource_name") => {
                let (c, g, k) = (e.c?, e.g?, e.s?);
                let group = self.ad_group_id(c, g)?;
                self.name(
                    "adGroupCriterionLabels",
                    format!("{group}~{}~{label}", self.criterion_id(c, g, k)),
                )
            }
            _ => None,
        }
    }
}
