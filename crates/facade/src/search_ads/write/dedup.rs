//! Streaming duplicate detection: the same (owner, conversion id, timestamp)
//! twice in one call (SA-15).
//!
//! # Memory and the collision trade-off
//!
//! The detector keeps no strings: per distinct (conversion id, timestamp) it
//! keeps a 128-bit hash of the pair (two `u64`) and a 64-bit tag of the owner:
//! 25 bytes per slot of the hash table (more only for the rare pair that
//! several owners share), whatever the length of the ids. A million distinct
//! keys take 26 to 52 MB depending on the table's load, not the rows
//! themselves. The table is split into [`SHARDS`] tables by the hash's top
//! byte, so growing one doubles only that shard: a single table would hold
//! its old and its new slots at once while it grows (74 MB at a million
//! keys). It keeps no input index either, so a repeat names the key, not
//! the line it repeats.
//!
//! The price is that two different keys whose hashes collide look like a
//! repeat, and the second is refused locally (never stored twice, never
//! lost silently: it is reported [`Outcome::Invalid`](super::Outcome::Invalid)
//! and can be sent again in a later call). With 128 bits the chance of any
//! collision among `n` keys is about `n² / 2¹²⁹`: below 10⁻²⁶ for a billion
//! rows. The hash is SipHash with keys drawn at random per call, so an input
//! cannot be crafted to collide. Owner tags are 64-bit hashes too (the
//! advertiser id itself needs none, but a customer id is a string); a tag
//! collision between two owners of the same id and timestamp is as unlikely.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher, RandomState};

use super::super::conversion::Conversion;

/// Who a conversion belongs to, as a tag: `0` when the input names no
/// advertiser or customer (attributed from its click by the server, SA-17,
/// so it may belong to any owner).
type OwnerTag = u64;
const UNKNOWN_OWNER: OwnerTag = 0;

/// Tables the first-owner map is split into (by the top byte of the pair's hash).
const SHARDS: usize = 256;

/// A table key that is already a keyed 128-bit hash. Its table hash is its
/// second word as it is: hashing it again would cost time and win nothing (an
/// input cannot aim at words drawn under secret random keys). Not the first
/// word, whose top byte picks the shard: within a shard it is the same for
/// every key, and the table's probes read the hash's top bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hashed(pub(crate) [u64; 2]);

impl Hash for Hashed {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0[1]);
    }
}

/// The [`Hasher`] of tables keyed by [`Hashed`] or by a keyed `u64` hash:
/// the `u64` it is given is the hash.
#[derive(Debug, Default)]
pub(crate) struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is expected; anything else is folded in, not lost.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Tables keyed by values that are already keyed hashes.
pub(crate) type PassThroughState = BuildHasherDefault<PassThrough>;

/// Remembers the (owner, conversion id, timestamp) of every conversion it
/// was shown, as hashes, and says whether a conversion repeats one.
#[derive(Debug)]
pub(crate) struct DuplicateDetector {
    /// `hash(id, timestamp)` → the first owner seen with it, in [`SHARDS`]
    /// tables (an empty one allocates nothing).
    first: Vec<HashMap<Hashed, OwnerTag, PassThroughState>>,
    /// `hash(owner, id, timestamp)` of the further owners of a pair (rare:
    /// one order id used by several advertisers at the same millisecond).
    more: HashSet<Hashed, PassThroughState>,
    /// `hash(id, timestamp)` of pairs some of whose conversions name no owner.
    unknown: HashSet<Hashed, PassThroughState>,
    keys: [RandomState; 2],
}

impl Default for DuplicateDetector {
    fn default() -> Self {
        Self {
            first: (0..SHARDS).map(|_| HashMap::default()).collect(),
            more: HashSet::default(),
            unknown: HashSet::default(),
            keys: [RandomState::new(), RandomState::new()],
        }
    }
}

impl DuplicateDetector {
    /// 128 bits: two SipHash-1-3 values under independent random keys.
    fn hash128(&self, value: impl Hash + Copy) -> Hashed {
        Hashed([self.keys[0].hash_one(value), self.keys[1].hash_one(value)])
    }

    /// 64 bits: one SipHash-1-3 value.
    fn hash64(&self, value: impl Hash) -> u64 {
        self.keys[0].hash_one(value)
    }

    fn owner_tag(&self, c: &Conversion) -> OwnerTag {
        let tag = match (&c.advertiser_id, &c.customer_id) {
            (Some(advertiser), _) => self.hash64(("advertiser", advertiser.get())),
            (None, Some(customer)) => self.hash64(("customer", customer.as_str())),
            (None, None) => return UNKNOWN_OWNER,
        };
        tag.max(1)
    }

    /// Records conversion `c` (which passed validation: it has an id and a
    /// timestamp) and returns true when it repeats an earlier one.
    pub(crate) fn repeats(&mut self, c: &Conversion) -> bool {
        let id = c.conversion_id.as_deref().map_or("", str::trim);
        let timestamp = c.conversion_timestamp.map_or(0, |t| t.timestamp_millis());
        let pair = self.hash128((id, timestamp));
        let owner = self.owner_tag(c);
        let shard = &mut self.first[(pair.0[0] >> 56) as usize % SHARDS];
        let first_owner = match shard.entry(pair) {
            Entry::Occupied(first) => *first.get(),
            Entry::Vacant(slot) => {
                slot.insert(owner);
                if owner == UNKNOWN_OWNER {
                    self.unknown.insert(pair);
                }
                return false;
            }
        };
        // An unknown owner may be any owner: it repeats every conversion of
        // the pair, and every conversion of the pair repeats it.
        if owner == UNKNOWN_OWNER || first_owner == UNKNOWN_OWNER || owner == first_owner {
            return true;
        }
        if self.unknown.contains(&pair) {
            return true;
        }
        // `insert` is false when the (owner, pair) was already there.
        !self.more.insert(self.hash128((pair.0, owner)))
    }

    /// Keys remembered (distinct (owner, id, timestamp) seen).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.first.iter().map(HashMap::len).sum::<usize>() + self.more.len()
    }
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;

    fn owned(id: &str, millis: i64, advertiser: Option<i64>) -> Conversion {
        let mut c = Conversion::new(id, DateTime::from_timestamp_millis(millis).unwrap());
        if let Some(a) = advertiser {
            c.agency_id = Some("7".parse().unwrap());
            c.advertiser_id = Some(a.to_string().parse().unwrap());
        } else {
            c.click_id = Some("gclid".into());
        }
        c
    }

    #[test]
    fn identity_is_owner_id_and_timestamp() {
        let mut d = DuplicateDetector::default();
        assert!(!d.repeats(&owned("a", 1, Some(1))));
        // Another timestamp, another advertiser: different conversions.
        assert!(!d.repeats(&owned("a", 2, Some(1))));
        assert!(!d.repeats(&owned("a", 1, Some(2))));
        assert!(!d.repeats(&owned("a", 1, Some(3))));
        // The same triple repeats, also for a further owner of the pair.
        assert!(d.repeats(&owned("a", 1, Some(1))));
        assert!(d.repeats(&owned("a", 1, Some(3))));
        // Surrounding blanks are not part of the id.
        assert!(d.repeats(&owned(" a ", 2, Some(1))));
        // Without an owner the server attributes from the click: it may be any.
        assert!(d.repeats(&owned("a", 1, None)));
        assert_eq!(d.len(), 4);
    }

    #[test]
    fn an_unknown_owner_first_repeats_every_later_owner() {
        let mut d = DuplicateDetector::default();
        assert!(!d.repeats(&owned("b", 1, None)));
        assert!(d.repeats(&owned("b", 1, Some(9))));
        assert!(d.repeats(&owned("b", 1, None)));
        let mut d = DuplicateDetector::default();
        assert!(!d.repeats(&owned("b", 1, Some(1))));
        assert!(!d.repeats(&owned("b", 1, Some(2))));
        assert!(d.repeats(&owned("b", 1, None)));
    }

    #[test]
    fn customers_are_owners_too() {
        let mut d = DuplicateDetector::default();
        let customer = |id: &str, customer: &str| {
            let mut c = owned(id, 1, None);
            c.customer_id = Some(customer.parse().unwrap());
            c
        };
        assert!(!d.repeats(&customer("c", "2000012350")));
        assert!(!d.repeats(&customer("c", "2000012351")));
        assert!(d.repeats(&customer("c", "2000012350")));
    }

    #[test]
    fn memory_per_key_does_not_grow_with_the_id() {
        // The table holds hashes only: a 4 KiB id costs what a short one does.
        let mut d = DuplicateDetector::default();
        for i in 0..1000 {
            let id = format!("{i:04}{}", "x".repeat(4096));
            assert!(!d.repeats(&owned(&id, 1, Some(1))));
        }
        assert_eq!(d.len(), 1000);
        let per_entry = std::mem::size_of::<(Hashed, OwnerTag)>();
        assert_eq!(per_entry, 24);
    }
}
