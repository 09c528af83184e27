//! Streaming duplicate detection: the same (owner, conversion id, timestamp)
//! twice in one call (SA-15, its memory in SA-22).
//!
//! # Memory: one `u64` per distinct key
//!
//! The detector keeps no strings. Per distinct (owner, id, timestamp) it
//! keeps one 64-bit word in an open-addressing table (linear probing):
//!
//! - the pair (trimmed id, timestamp) is hashed to 64 bits with SipHash-1-3
//!   under keys drawn at random per call (an input cannot be crafted to
//!   collide);
//! - the hash's top [`SEGMENT_BITS`] bits pick one of [`SEGMENTS`] tables, so
//!   the word stores only the other 56 bits, shifted up, and the low
//!   [`OWNER_BITS`] bits of the word hold the owner: `0` for none (attributed
//!   from the click, SA-17: it may be any owner), `1..=254` for the first 254
//!   distinct owners of the call, kept exactly in a small map (an advertiser
//!   id or a customer id, compared by value), and `255` for any further owner.
//!   A row of a further owner also keeps a 128-bit hash of (pair, owner) in a
//!   side set: a call naming more than 254 owners costs more only for their
//!   rows.
//!
//! Each table grows on its own, by a quarter, when it is 85 % full: its load
//! stays between 68 % and 85 %, so a key costs 9.4 to 11.8 bytes (10 million
//! keys: 90 to 113 MiB), and a resize holds the old and the new copy of one
//! table only (1/256 of the whole), never of the whole set.
//!
//! # Collisions
//!
//! Owners are exact (or, past the 254th, 128-bit hashes); pairs are 64-bit
//! hashes. Two different pairs with the same 64 bits look like one pair, and
//! the later row is refused locally as a repeat ([`Outcome::Invalid`](super::Outcome::Invalid),
//! its error saying that it matched by fingerprint): never stored twice, never
//! dropped silently, and it can be sent again in another call. The chance of
//! any such collision among `n` distinct pairs is about `n² / 2⁶⁵`: 3 in a
//! million for 10 million rows, 3 in 10¹⁰ for 100 000. Confirming a match by
//! the exact key would mean keeping every key (the input is streamed and not
//! read again), which is what this detector exists to avoid (SA-15, its memory in SA-22).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher, RandomState};

use super::super::conversion::Conversion;

/// Bits of the pair's hash that pick its table (and need not be stored).
const SEGMENT_BITS: u32 = 8;
/// Tables the words are split into.
const SEGMENTS: usize = 1 << SEGMENT_BITS;
/// Low bits of a word that hold the owner; as many as [`SEGMENT_BITS`], so a
/// word and its table keep all 64 bits of the pair's hash.
const OWNER_BITS: u32 = SEGMENT_BITS;
const OWNER_MASK: u64 = (1 << OWNER_BITS) - 1;
/// The owner of a conversion that names none (SA-17).
const UNKNOWN_OWNER: u64 = 0;
/// The owner slot shared by every owner past the first [`EXACT_OWNERS`].
const FURTHER_OWNER: u64 = OWNER_MASK;
/// Owners kept exactly, as `1..=EXACT_OWNERS`.
const EXACT_OWNERS: u64 = OWNER_MASK - 1;

/// A table grows when more than `MAX_LOAD_NUM / MAX_LOAD_DEN` of its slots are used.
const MAX_LOAD_NUM: usize = 17;
const MAX_LOAD_DEN: usize = 20;
/// Slots of a table's first allocation.
const MIN_SLOTS: usize = 8;

/// A 128-bit keyed hash, used as a table key. Its table hash is its second
/// word as it is: hashing it again would cost time and win nothing (an input
/// cannot aim at words drawn under secret random keys).
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

/// One open-addressing table of words (`0` is an empty slot).
#[derive(Debug, Default)]
struct Segment {
    slots: Vec<u64>,
    len: usize,
}

/// What a table holds for one pair.
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    /// Some conversion of the pair.
    any: bool,
    /// A conversion of the pair without an owner.
    unknown: bool,
    /// A conversion of the pair with the owner asked about.
    same: bool,
}

impl Segment {
    /// The slot a word's probe starts at: its pair bits scaled to the table.
    fn home(word: u64, slots: usize) -> usize {
        ((u128::from(word & !OWNER_MASK) * slots as u128) >> 64) as usize
    }

    /// The words of `pair` (owner bits clear), and the empty slot ending its probe.
    fn scan(&self, pair: u64, owner: u64) -> (Seen, usize) {
        let mut seen = Seen::default();
        let n = self.slots.len();
        if n == 0 {
            return (seen, 0);
        }
        let mut i = Self::home(pair, n);
        loop {
            let word = self.slots[i];
            if word == 0 {
                return (seen, i);
            }
            if word & !OWNER_MASK == pair {
                seen.any = true;
                let o = word & OWNER_MASK;
                seen.unknown |= o == UNKNOWN_OWNER;
                seen.same |= o == owner;
            }
            i += 1;
            if i == n {
                i = 0;
            }
        }
    }

    /// Adds `word` (not present; `empty` is the slot [`scan`](Self::scan) ended at).
    fn insert(&mut self, word: u64, empty: usize) {
        if (self.len + 1) * MAX_LOAD_DEN > self.slots.len() * MAX_LOAD_NUM {
            self.grow();
            self.place(word);
        } else {
            self.slots[empty] = word;
        }
        self.len += 1;
    }

    /// Puts `word` in the first empty slot of its probe.
    fn place(&mut self, word: u64) {
        let n = self.slots.len();
        let mut i = Self::home(word, n);
        while self.slots[i] != 0 {
            i += 1;
            if i == n {
                i = 0;
            }
        }
        self.slots[i] = word;
    }

    /// A quarter more slots: only this table's old and new slots are held at once.
    fn grow(&mut self) {
        let n = self.slots.len();
        let bigger = (n + n / 4).max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![0; bigger]);
        for word in old.into_iter().filter(|&w| w != 0) {
            self.place(word);
        }
    }
}

/// Remembers the (owner, conversion id, timestamp) of every conversion it
/// was shown, one `u64` each, and says whether a conversion repeats one.
#[derive(Debug)]
pub(crate) struct DuplicateDetector {
    segments: Vec<Segment>,
    /// Advertisers and customers seen, each with its owner bits (`1..=254`).
    advertisers: HashMap<i64, u64>,
    customers: HashMap<String, u64>,
    /// `hash(pair, owner)` of the rows of owners past the 254th.
    further: HashSet<Hashed, PassThroughState>,
    keys: [RandomState; 2],
}

impl Default for DuplicateDetector {
    fn default() -> Self {
        Self {
            segments: (0..SEGMENTS).map(|_| Segment::default()).collect(),
            advertisers: HashMap::new(),
            customers: HashMap::new(),
            further: HashSet::default(),
            keys: [RandomState::new(), RandomState::new()],
        }
    }
}

impl DuplicateDetector {
    /// The owner bits of `c`: exact for the first 254 owners of the call.
    fn owner(&mut self, c: &Conversion) -> u64 {
        let next = (self.advertisers.len() + self.customers.len()) as u64 + 1;
        match (&c.advertiser_id, &c.customer_id) {
            (Some(advertiser), _) => match self.advertisers.get(&advertiser.get()) {
                Some(&o) => o,
                None if next <= EXACT_OWNERS => {
                    self.advertisers.insert(advertiser.get(), next);
                    next
                }
                None => FURTHER_OWNER,
            },
            (None, Some(customer)) => match self.customers.get(customer.as_str()) {
                Some(&o) => o,
                None if next <= EXACT_OWNERS => {
                    self.customers.insert(customer.as_str().to_owned(), next);
                    next
                }
                None => FURTHER_OWNER,
            },
            (None, None) => UNKNOWN_OWNER,
        }
    }

    /// Records conversion `c` (which passed validation: it has an id and a
    /// timestamp) and returns true when it repeats an earlier one.
    pub(crate) fn repeats(&mut self, c: &Conversion) -> bool {
        let id = c.conversion_id.as_deref().map_or("", str::trim);
        let timestamp = c.conversion_timestamp.map_or(0, |t| t.timestamp_millis());
        let hash = self.keys[0].hash_one((id, timestamp));
        let owner = self.owner(c);
        let segment = &mut self.segments[(hash >> (64 - SEGMENT_BITS)) as usize];
        // The hash's other bits, never all zero (a zero word is an empty slot).
        let pair = match hash << OWNER_BITS {
            0 => 1 << OWNER_BITS,
            bits => bits,
        };
        let (seen, empty) = segment.scan(pair, owner);
        // An unknown owner may be any owner: it repeats every conversion of
        // the pair, and every conversion of the pair repeats it.
        if (owner == UNKNOWN_OWNER && seen.any) || seen.unknown {
            return true;
        }
        if owner == FURTHER_OWNER {
            let key = match (&c.advertiser_id, &c.customer_id) {
                (Some(a), _) => self.keys[1].hash_one((hash, "advertiser", a.get())),
                (None, Some(cu)) => self.keys[1].hash_one((hash, "customer", cu.as_str())),
                (None, None) => 0,
            };
            // The pair's 64 bits and 64 more of (pair, owner): 128 bits.
            let key = Hashed([hash, key]);
            if !self.further.insert(key) {
                return true;
            }
            if !seen.same {
                segment.insert(pair | owner, empty);
            }
            return false;
        }
        if seen.same {
            return true;
        }
        segment.insert(pair | owner, empty);
        false
    }
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;
    use proptest::prelude::*;

    use super::*;

    impl DuplicateDetector {
        /// Keys remembered (words in the tables).
        pub(crate) fn len(&self) -> usize {
            self.segments.iter().map(|s| s.len).sum::<usize>()
        }

        /// Bytes of the tables' slots.
        fn table_bytes(&self) -> usize {
            self.segments
                .iter()
                .map(|s| s.slots.len() * 8)
                .sum::<usize>()
        }
    }

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

    fn customer(id: &str, millis: i64, customer: u64) -> Conversion {
        let mut c = owned(id, millis, None);
        c.customer_id = Some((2_000_000_000 + customer).to_string().parse().unwrap());
        c
    }

    /// SA-15's rule with the keys themselves: what the detector must agree with.
    #[derive(Default)]
    struct Exact {
        triples: HashSet<(String, String, i64)>,
        pairs: HashSet<(String, i64)>,
        unknown: HashSet<(String, i64)>,
    }

    impl Exact {
        fn repeats(&mut self, c: &Conversion) -> bool {
            let pair = (
                c.conversion_id.as_deref().unwrap_or("").trim().to_owned(),
                c.conversion_timestamp.map_or(0, |t| t.timestamp_millis()),
            );
            let owner = match (&c.advertiser_id, &c.customer_id) {
                (Some(a), _) => format!("a{}", a.get()),
                (None, Some(cu)) => format!("c{}", cu.as_str()),
                (None, None) => {
                    if self.pairs.contains(&pair) {
                        return true;
                    }
                    self.unknown.insert(pair.clone());
                    self.pairs.insert(pair);
                    return false;
                }
            };
            if self.unknown.contains(&pair) {
                return true;
            }
            if !self.triples.insert((owner, pair.0.clone(), pair.1)) {
                return true;
            }
            self.pairs.insert(pair);
            false
        }
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
        assert!(!d.repeats(&customer("c", 1, 50)));
        assert!(!d.repeats(&customer("c", 1, 51)));
        assert!(d.repeats(&customer("c", 1, 50)));
        // An advertiser and a customer are different owners.
        assert!(!d.repeats(&owned("c", 1, Some(50))));
    }

    #[test]
    fn owners_past_the_exact_ones_are_still_told_apart() {
        // 600 owners of one pair: the first 254 exact, the rest by 128-bit hash.
        let mut d = DuplicateDetector::default();
        for owner in 0..600 {
            assert!(!d.repeats(&owned("p", 1, Some(owner))), "owner {owner}");
        }
        for owner in 0..600 {
            assert!(d.repeats(&owned("p", 1, Some(owner))), "owner {owner}");
        }
        assert!(d.repeats(&owned("p", 1, None)));
        assert_eq!(d.advertisers.len() as u64, EXACT_OWNERS);
        assert_eq!(d.further.len(), 600 - EXACT_OWNERS as usize);
    }

    #[test]
    fn a_growing_table_forgets_nothing() {
        let mut d = DuplicateDetector::default();
        let n = 200_000;
        for i in 0..n {
            assert!(!d.repeats(&owned(&format!("k{i}"), i, Some(1))));
        }
        for i in (0..n).rev() {
            assert!(d.repeats(&owned(&format!("k{i}"), i, Some(1))), "{i}");
            assert!(!d.repeats(&owned(&format!("k{i}"), i + 1, Some(2))), "{i}");
        }
        assert_eq!(d.len(), 2 * n as usize);
    }

    #[test]
    fn memory_per_key_is_one_word_at_most_85_percent_full() {
        // A 4 KiB id costs what a short one does: the tables hold 8 bytes a
        // key, 68 % to 85 % full once past their first slots.
        let mut d = DuplicateDetector::default();
        let long = "x".repeat(4096);
        let n = 300_000;
        for i in 0..n {
            assert!(!d.repeats(&owned(&format!("{i}{long}"), 1, Some(1))));
        }
        assert_eq!(d.len(), n);
        let per_key = d.table_bytes() as f64 / n as f64;
        assert!(
            (8.0 / 0.86..=8.0 / 0.67).contains(&per_key),
            "{per_key} bytes a key"
        );
    }

    /// A row of the property test: id, timestamp, owner (none, an advertiser or a customer).
    fn row() -> impl Strategy<Value = (u8, u8, u8, u16)> {
        (0u8..12, 0u8..3, 0u8..3, 0u16..400)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn agrees_with_the_exact_rule(rows in proptest::collection::vec(row(), 0..1500)) {
            let mut d = DuplicateDetector::default();
            let mut exact = Exact::default();
            for (k, &(id, ts, kind, owner)) in rows.iter().enumerate() {
                let id = format!("{}id{id}", if id % 5 == 0 { " " } else { "" });
                let ts = i64::from(ts) * 1000;
                let c = match kind {
                    0 => owned(&id, ts, None),
                    1 => owned(&id, ts, Some(i64::from(owner))),
                    _ => customer(&id, ts, u64::from(owner)),
                };
                prop_assert_eq!(d.repeats(&c), exact.repeats(&c), "row {}: {:?}", k, c);
            }
        }
    }
}
