//! The plan of one advertiser's file: its rows, their fixed widths and offsets, and writing a row.

use crate::search_ads::config::{IdMappingSize, KnownAccount};
use crate::search_ads::data;
use crate::util::mix;

/// The header line.
pub(crate) const HEADER: &[u8] = b"Entity Type,Legacy IDs,New IDs\n";
/// Rows per campaign block: 1 campaign, 4 ad groups, 16 criteria.
const BLOCK: u64 = 21;
const AD_GROUPS_PER_CAMPAIGN: u64 = 4;
const CRITERIA_PER_AD_GROUP: u64 = 4;
/// Generated IDs keep their widths up to this many campaigns.
const MAX_CAMPAIGNS: u64 = 10_000_000;

/// The ID-mapping file of one advertiser: its rows and their lengths.
#[derive(Clone, Debug)]
pub(crate) struct IdMappingPlan {
    agency: String,
    advertiser: String,
    accounts: Vec<KnownAccount>,
    /// Index in the configuration's account list of each of `accounts`.
    account_index: Vec<usize>,
    /// `data::id_offset` of the seed: legacy IDs of the seeded campaigns and ad groups.
    seeded_offset: i64,
    legacy_off: u64,
    new_off: u64,
    pub(super) rows: u64,
    /// Length of the `CUSTOMER` rows, prefix sums.
    customer_prefix: Vec<u64>,
    /// Prefix sums of the lengths of one period of campaign rows (`BLOCK * accounts` rows).
    period_prefix: Vec<u64>,
}

fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

fn push_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_u64(out, n.unsigned_abs());
}

/// Writes `""name"":""` ... `""` pieces of a CSV-quoted JSON object.
struct Cell<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Cell<'a> {
    fn open(out: &'a mut Vec<u8>) -> Self {
        out.extend_from_slice(b"\"{");
        Self { out, first: true }
    }

    fn key(&mut self, name: &[u8]) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.extend_from_slice(b"\"\"");
        self.out.extend_from_slice(name);
        self.out.extend_from_slice(b"\"\":\"\"");
        self.out
    }

    fn num(&mut self, name: &[u8], n: u64) {
        push_u64(self.key(name), n);
        self.out.extend_from_slice(b"\"\"");
    }

    fn int(&mut self, name: &[u8], n: i64) {
        push_i64(self.key(name), n);
        self.out.extend_from_slice(b"\"\"");
    }

    fn text(&mut self, name: &[u8], s: &str) {
        self.key(name).extend_from_slice(s.as_bytes());
        self.out.extend_from_slice(b"\"\"");
    }

    fn close(self) {
        self.out.extend_from_slice(b"}\"");
    }
}

impl IdMappingPlan {
    /// The plan of an advertiser, or `None` when the fake does not know it.
    pub(crate) fn new(
        seed: u64,
        accounts: &[KnownAccount],
        agency: i64,
        advertiser: i64,
        size: IdMappingSize,
    ) -> Option<Self> {
        let (account_index, accounts): (Vec<usize>, Vec<KnownAccount>) = accounts
            .iter()
            .enumerate()
            .filter(|(_, a)| a.agency_id == agency && a.advertiser_id == advertiser)
            .map(|(i, a)| (i, a.clone()))
            .unzip();
        if accounts.is_empty() {
            return None;
        }
        let h = mix(seed ^ mix(advertiser as u64));
        let mut plan = Self {
            agency: agency.to_string(),
            advertiser: advertiser.to_string(),
            accounts,
            account_index,
            seeded_offset: data::id_offset(seed),
            legacy_off: h % 100_000_000,
            new_off: (h >> 32) % 1000,
            rows: 0,
            customer_prefix: Vec::new(),
            period_prefix: Vec::new(),
        };
        let mut buf = Vec::new();
        let mut sum = 0;
        plan.customer_prefix.push(0);
        for r in 0..plan.accounts.len() as u64 {
            buf.clear();
            plan.write_row(r, &mut buf);
            sum += buf.len() as u64;
            plan.customer_prefix.push(sum);
        }
        let period = BLOCK * plan.accounts.len() as u64;
        let first = plan.accounts.len() as u64;
        sum = 0;
        plan.period_prefix.push(0);
        for j in 0..period {
            buf.clear();
            plan.write_row(first + j, &mut buf);
            sum += buf.len() as u64;
            plan.period_prefix.push(sum);
        }
        plan.rows = match size {
            IdMappingSize::Rows(rows) => rows.min(plan.max_rows()),
            IdMappingSize::Bytes(bytes) => plan.rows_fitting(bytes),
        };
        Some(plan)
    }

    fn max_rows(&self) -> u64 {
        self.accounts.len() as u64 + MAX_CAMPAIGNS * BLOCK
    }

    /// Legacy campaign ID of campaign number `campaign` of the file.
    fn legacy_campaign(&self, campaign: u64) -> i64 {
        let n_acc = self.accounts.len() as u64;
        let (p, c) = (campaign % n_acc, campaign / n_acc);
        if c < data::CAMPAIGNS {
            data::campaign_id(self.seeded_offset, self.account_index[p as usize], c)
        } else {
            (71_700_000_000_000_000 + self.legacy_off * 100_000_000 + campaign) as i64
        }
    }

    /// Legacy ad group ID of ad group `k` (0..4) of campaign number `campaign`.
    fn legacy_ad_group(&self, campaign: u64, k: u64) -> i64 {
        let n_acc = self.accounts.len() as u64;
        let (p, c) = (campaign % n_acc, campaign / n_acc);
        if c < data::CAMPAIGNS && k < data::AD_GROUPS {
            data::ad_group_id(self.seeded_offset, self.account_index[p as usize], c, k)
        } else {
            (58_700_000_000_000_000
                + self.legacy_off * 100_000_000
                + campaign * AD_GROUPS_PER_CAMPAIGN
                + k) as i64
        }
    }

    /// New campaign ID of campaign number `campaign` of the file.
    fn new_campaign(&self, campaign: u64) -> i64 {
        (10_000_000_000 + self.new_off * 10_000_000 + campaign) as i64
    }

    /// New ad group ID of ad group `k` of campaign number `campaign`.
    fn new_ad_group(&self, campaign: u64, k: u64) -> i64 {
        (100_000_000_000 + self.new_off * 100_000_000 + campaign * AD_GROUPS_PER_CAMPAIGN + k)
            as i64
    }

    /// The campaign number in the file of seeded campaign `c` of configured account `a`.
    fn seeded_campaign_number(&self, a: usize, c: u64) -> Option<u64> {
        let p = self.account_index.iter().position(|&i| i == a)? as u64;
        (c < data::CAMPAIGNS).then(|| c * self.accounts.len() as u64 + p)
    }

    /// The new (campaign, ad group) IDs of campaign `c` (seeded, or a synthetic campaign of the
    /// Reporting API's reports beyond them, DECISIONS SR-22), ad group `g`, of configured account
    /// `a`: those of the file's campaign number `c × accounts + a's place`, whether or not the file
    /// is long enough to hold it.
    pub(crate) fn new_ids(&self, a: usize, c: u64, g: u64) -> Option<(i64, i64)> {
        let p = self.account_index.iter().position(|&i| i == a)? as u64;
        let campaign = c.checked_mul(self.accounts.len() as u64)?.checked_add(p)?;
        (campaign < MAX_CAMPAIGNS && g < AD_GROUPS_PER_CAMPAIGN)
            .then(|| (self.new_campaign(campaign), self.new_ad_group(campaign, g)))
    }

    /// The new (campaign, ad group) IDs of seeded campaign `c`, ad group `g` of configured account
    /// `a`, as the file's rows give them (whether or not the file is long enough to hold them).
    pub(crate) fn seeded_new_ids(&self, a: usize, c: u64, g: u64) -> Option<(i64, i64)> {
        let campaign = self.seeded_campaign_number(a, c)?;
        (g < data::AD_GROUPS).then(|| (self.new_campaign(campaign), self.new_ad_group(campaign, g)))
    }

    /// The seeded (campaign `c`) that new campaign ID `id` names for configured account `a`.
    pub(crate) fn seeded_campaign_of_new(&self, a: usize, id: i64) -> Option<u64> {
        (0..data::CAMPAIGNS).find(|&c| {
            self.seeded_campaign_number(a, c)
                .is_some_and(|n| self.new_campaign(n) == id)
        })
    }

    /// The seeded (campaign `c`, ad group `g`) that new ad group ID `id` names for account `a`.
    pub(crate) fn seeded_ad_group_of_new(&self, a: usize, id: i64) -> Option<(u64, u64)> {
        (0..data::CAMPAIGNS)
            .flat_map(|c| (0..data::AD_GROUPS).map(move |g| (c, g)))
            .find(|&(c, g)| {
                self.seeded_campaign_number(a, c)
                    .is_some_and(|n| self.new_ad_group(n, g) == id)
            })
    }

    /// Data rows of the file.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// The byte offset where data row `r` starts (the header included before it).
    pub(crate) fn offset_of_row(&self, r: u64) -> u64 {
        let n_acc = self.accounts.len() as u64;
        let head = HEADER.len() as u64;
        if r <= n_acc {
            return head + self.customer_prefix[r as usize];
        }
        let j = r - n_acc;
        let period = BLOCK * n_acc;
        let full = j / period;
        let rest = j % period;
        let period_len = *self.period_prefix.last().unwrap_or(&0);
        head + self.customer_prefix[n_acc as usize]
            + full * period_len
            + self.period_prefix[rest as usize]
    }

    /// The exact length of the file in bytes.
    pub(crate) fn total_len(&self) -> u64 {
        self.offset_of_row(self.rows)
    }

    /// The largest row number whose start offset is at most `bytes`.
    pub(super) fn rows_fitting(&self, bytes: u64) -> u64 {
        let (mut lo, mut hi) = (0, self.max_rows());
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.offset_of_row(mid) <= bytes {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    /// Appends data row `r` (with its newline) to `out`.
    pub(crate) fn write_row(&self, r: u64, out: &mut Vec<u8>) {
        let n_acc = self.accounts.len() as u64;
        if r < n_acc {
            let account = &self.accounts[r as usize];
            out.extend_from_slice(b"CUSTOMER,");
            let mut cell = Cell::open(out);
            cell.text(b"agencyId", &self.agency);
            cell.text(b"advertiserId", &self.advertiser);
            cell.int(b"engineAccountId", account.engine_account_id);
            cell.close();
            out.push(b',');
            let mut cell = Cell::open(out);
            cell.text(b"customerId", &account.customer_id);
            cell.close();
            out.push(b'\n');
            return;
        }
        let j = r - n_acc;
        let campaign = j / BLOCK;
        let pos = j % BLOCK;
        let account = &self.accounts[(campaign % n_acc) as usize];
        let (kind, group, criterion): (&[u8], Option<u64>, Option<u64>) = match pos {
            0 => (b"CAMPAIGN,", None, None),
            1..=4 => (b"AD_GROUP,", Some(pos - 1), None),
            _ => {
                let k = pos - 5;
                (
                    b"CRITERION,",
                    Some(k / CRITERIA_PER_AD_GROUP),
                    Some(k % CRITERIA_PER_AD_GROUP),
                )
            }
        };
        let legacy = self.legacy_off * 100_000_000;
        let new = self.new_off;
        out.extend_from_slice(kind);
        let mut cell = Cell::open(out);
        cell.text(b"agencyId", &self.agency);
        cell.text(b"advertiserId", &self.advertiser);
        cell.int(b"engineAccountId", account.engine_account_id);
        if criterion.is_none() {
            cell.int(b"campaignId", self.legacy_campaign(campaign));
        }
        if let Some(k) = group {
            cell.int(b"adGroupId", self.legacy_ad_group(campaign, k));
        }
        if let Some(k) = criterion {
            let number = (campaign * AD_GROUPS_PER_CAMPAIGN + group.unwrap_or(0))
                * CRITERIA_PER_AD_GROUP
                + k;
            cell.num(b"criterionId", 43_700_000_000_000_000 + legacy + number);
        }
        cell.close();
        out.push(b',');
        let mut cell = Cell::open(out);
        cell.text(b"customerId", &account.customer_id);
        if criterion.is_none() {
            cell.int(b"campaignId", self.new_campaign(campaign));
        }
        if let Some(k) = group {
            cell.int(b"adGroupId", self.new_ad_group(campaign, k));
        }
        if let Some(k) = criterion {
            let number = (campaign * AD_GROUPS_PER_CAMPAIGN + group.unwrap_or(0))
                * CRITERIA_PER_AD_GROUP
                + k;
            cell.num(b"criterionId", 200_000_000_000 + new * 100_000_000 + number);
        }
        cell.close();
        out.push(b'\n');
    }
}

/// The plan of the default configuration's first advertiser at `size` (seed 7), for tests.
#[cfg(test)]
pub(super) fn test_plan(size: IdMappingSize) -> IdMappingPlan {
    let cfg = crate::search_ads::config::SearchAdsConfig::default();
    let a = &cfg.accounts[0];
    IdMappingPlan::new(7, &cfg.accounts, a.agency_id, a.advertiser_id, size)
        .unwrap_or_else(|| panic!("a plan for {size:?}"))
}

#[cfg(test)]
mod tests {
    use super::test_plan as plan;
    use super::*;

    #[test]
    fn computed_lengths_match_generated_rows() {
        let p = plan(IdMappingSize::Rows(500));
        let mut out = HEADER.to_vec();
        for r in 0..p.rows() {
            assert_eq!(p.offset_of_row(r), out.len() as u64, "row {r}");
            p.write_row(r, &mut out);
        }
        assert_eq!(p.total_len(), out.len() as u64);
        // Widths stay fixed for late campaigns too.
        let mut a = Vec::new();
        let mut b = Vec::new();
        p.write_row(2 + 21 * 2 + 7, &mut a);
        p.write_row(2 + 21 * 2_000_002 + 7, &mut b);
        assert_eq!(a.len(), b.len());
    }

    #[test]
    fn rows_are_valid_csv_with_json_cells() {
        let p = plan(IdMappingSize::Rows(50));
        let mut out = HEADER.to_vec();
        for r in 0..p.rows() {
            p.write_row(r, &mut out);
        }
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("Entity Type,Legacy IDs,New IDs"));
        let first = lines.next().unwrap();
        assert!(first.starts_with("CUSTOMER,\"{\"\"agencyId\"\":\"\"20700000000000125\"\""));
        let third = lines.nth(1).unwrap();
        assert!(third.starts_with("CAMPAIGN,"), "{third}");
    }

    #[test]
    fn byte_size_picks_whole_rows() {
        let p = plan(IdMappingSize::Bytes(100_000));
        assert!(p.total_len() <= 100_000);
        assert!(p.offset_of_row(p.rows() + 1) > 100_000);
    }
}
