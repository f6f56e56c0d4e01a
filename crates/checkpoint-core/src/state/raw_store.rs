//! A store's (key, value) pairs in one block of bytes ([`RawStore`]), and the builder that replays an HDFS
//! chain's records into it ([`StoreBuilder`]): no allocation and no hashing per row, the rows sorted by key once.

/// A store's content handed from a provider to decoding: key bytes → value bytes exactly as the provider stores
/// them. Decoding skips the first `key_prefix_len` / `value_prefix_len` bytes (HDFS: 0; RocksDB: the version byte
/// and, with virtual column families, the 2-byte family id) and reads the rest as an UnsafeRow.
///
/// The pairs are held back to back in one buffer (a store of a million rows is two allocations, not two million).
#[derive(Debug, Clone, Default)]
pub struct RawStore {
    /// Key and value bytes of every pair.
    bytes: Vec<u8>,
    /// Where each pair is in `bytes`, in the store's order.
    spans: Vec<Span>,
    /// Bytes before the key's UnsafeRow.
    pub key_prefix_len: usize,
    /// Bytes before the value's UnsafeRow.
    pub value_prefix_len: usize,
}

/// One pair: the key at `at`, its value right after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    at: usize,
    key_len: usize,
    value_len: usize,
}

impl PartialEq for RawStore {
    /// Same pairs in the same order, same prefixes (however the bytes are laid out).
    fn eq(&self, other: &Self) -> bool {
        self.key_prefix_len == other.key_prefix_len
            && self.value_prefix_len == other.value_prefix_len
            && self.len() == other.len()
            && self.iter().eq(other.iter())
    }
}

impl Eq for RawStore {}

impl RawStore {
    /// The store of `pairs` (in that order), no prefixes.
    pub fn from_pairs<K: AsRef<[u8]>, V: AsRef<[u8]>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let mut s = RawStore::default();
        for (k, v) in pairs {
            s.push(k.as_ref(), v.as_ref());
        }
        s
    }

    /// Appends a pair.
    pub fn push(&mut self, key: &[u8], value: &[u8]) {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
        self.spans.push(Span { at, key_len: key.len(), value_len: value.len() });
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when the store holds no pair.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The `i`-th pair (key, value), `None` past the end.
    pub fn pair(&self, i: usize) -> Option<(&[u8], &[u8])> {
        self.spans.get(i).map(|s| self.split(s))
    }

    /// Every pair (key, value) in the store's order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.spans.iter().map(|s| self.split(s))
    }

    /// The pairs as owned vectors (for tests and small stores).
    pub fn to_pairs(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
    }

    fn split(&self, s: &Span) -> (&[u8], &[u8]) {
        let k = self.bytes.get(s.at..s.at + s.key_len).unwrap_or(&[]);
        let v = self.bytes.get(s.at + s.key_len..s.at + s.key_len + s.value_len).unwrap_or(&[]);
        (k, v)
    }
}

/// `value_len` of a removal record.
const REMOVED: usize = usize::MAX;

/// Records beyond twice the live rows that trigger a compaction in the middle of a file.
const IN_FILE_COMPACT: usize = 1 << 20;

/// Replays puts and removals (an HDFS snapshot, then its deltas in order) into a store, as Spark's provider does
/// with its key → value map: the last record of a key wins, a removal deletes. Records are appended to one
/// buffer; [`StoreBuilder::finish`] sorts them by key (stable, so record order decides among equal keys) and keeps
/// the last of each key. Between files ([`StoreBuilder::end_file`]) the buffer is compacted whenever it holds more
/// than twice the rows left at the last compaction, so memory stays within a small multiple of the store's size
/// however long the chain.
#[derive(Debug, Default)]
pub(crate) struct StoreBuilder {
    bytes: Vec<u8>,
    recs: Vec<Span>,
    /// Rows after the last compaction (0 before the first).
    live: usize,
}

impl StoreBuilder {
    /// Room for `bytes` more bytes of records.
    pub(crate) fn reserve(&mut self, bytes: usize) {
        self.bytes.reserve(bytes);
    }

    /// A put: `key` now maps to `value`.
    pub(crate) fn put(&mut self, key: &[u8], value: &[u8]) {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
        self.recs.push(Span { at, key_len: key.len(), value_len: value.len() });
        self.bound();
    }

    /// A removal: `key` maps to nothing.
    pub(crate) fn remove(&mut self, key: &[u8]) {
        let at = self.bytes.len();
        self.bytes.extend_from_slice(key);
        self.recs.push(Span { at, key_len: key.len(), value_len: REMOVED });
        self.bound();
    }

    /// Within a file too, records never outgrow twice the live rows by more than [`IN_FILE_COMPACT`]: a file that
    /// writes a few keys over and over (a hostile one) is held as those keys, as a map would hold it.
    fn bound(&mut self) {
        if self.recs.len() > 2 * self.live + IN_FILE_COMPACT {
            self.compact();
        }
    }

    /// Called after each file of the chain: compacts when the records outgrow the live rows.
    pub(crate) fn end_file(&mut self) {
        if self.recs.len() > 2 * self.live + 4096 {
            self.compact();
        }
    }

    /// The rebuilt store, pairs in key order.
    pub(crate) fn finish(mut self) -> RawStore {
        self.compact();
        RawStore { bytes: self.bytes, spans: self.recs, key_prefix_len: 0, value_prefix_len: 0 }
    }

    /// Sorts the records by key and copies, in that order, the last record of each key (unless it is a removal)
    /// into a fresh buffer: later reads of the store go through memory in order.
    fn compact(&mut self) {
        let old = std::mem::take(&mut self.bytes);
        let mut keyed: Vec<Keyed> = self
            .recs
            .drain(..)
            .enumerate()
            .map(|(seq, s)| Keyed { head: 0, class: 0, same_as_prev: false, seq, span: s })
            .collect();
        sort_keyed(&old, &mut keyed, 0, 0);
        let mut bytes = Vec::with_capacity(old.len());
        let mut recs: Vec<Span> = Vec::with_capacity(keyed.len());
        // Whether the previous record is the last pair written.
        let mut prev_written = false;
        for Keyed { span: s, same_as_prev, .. } in keyed {
            if same_as_prev && prev_written {
                // A later record of the same key replaces the pair written for it.
                if let Some(last) = recs.pop() {
                    bytes.truncate(last.at);
                }
            }
            prev_written = s.value_len != REMOVED;
            if prev_written {
                let at = bytes.len();
                bytes.extend_from_slice(old.get(s.at..s.at + s.key_len + s.value_len).unwrap_or(&[]));
                recs.push(Span { at, ..s });
            }
        }
        bytes.shrink_to_fit();
        self.live = recs.len();
        self.bytes = bytes;
        self.recs = recs;
    }
}

/// A record with the sort digit of its key at the current depth: the 8 key bytes there (big-endian, zero
/// padded) and how many of them the key has (0..=8); once sorted, whether its key equals the previous record's.
#[derive(Debug, Clone, Copy)]
struct Keyed {
    head: u64,
    class: u8,
    same_as_prev: bool,
    /// Position in record order (orders records of equal keys).
    seq: usize,
    span: Span,
}

/// Below this many records a range is sorted by comparing whole keys.
const SMALL_SORT: usize = 24;

/// Digit levels before a range is sorted by comparing whole keys (bounds the recursion on long keys).
const MAX_LEVELS: usize = 16;

/// Sorts `recs` by their key bytes from byte `from` on (the keys agree before it): unsigned lexicographic, a key
/// before any longer key it is a prefix of; stable, so equal keys keep their record order. Most-significant-digit
/// radix style: the prefix all keys share is skipped, the range sorted by the next 8 bytes and their count, and
/// every run that still ties (8 equal bytes) sorted again from 8 bytes further. Keys of one store share long
/// prefixes (UnsafeRow bitsets, offsets, a window), so whole keys are rarely compared. Sets `same_as_prev` on
/// every record but the first.
fn sort_keyed(bytes: &[u8], recs: &mut [Keyed], from: usize, level: usize) {
    let key = |r: &Keyed| bytes.get(r.span.at..r.span.at + r.span.key_len).unwrap_or(&[]);
    let tail = |r: &Keyed| key(r).get(from..).unwrap_or(&[]);
    // `seq` orders records of equal keys as a stable sort would.
    if recs.len() <= SMALL_SORT || level >= MAX_LEVELS {
        recs.sort_unstable_by(|a, b| tail(a).cmp(tail(b)).then(a.seq.cmp(&b.seq)));
        for i in 1..recs.len() {
            recs[i].same_as_prev = tail(&recs[i]) == tail(&recs[i - 1]);
        }
        return;
    }
    let first = tail(&recs[0]);
    let mut lcp = first.len();
    for r in recs.iter() {
        let t = tail(r);
        // Most keys share the whole prefix found so far: one comparison, no byte walk.
        if t.get(..lcp) != first.get(..lcp) {
            lcp = lcp.min(t.iter().zip(first).take_while(|(a, b)| a == b).count());
        }
        if lcp == 0 {
            break;
        }
    }
    let at = from + lcp;
    for r in recs.iter_mut() {
        let rest = key(r).get(at..).unwrap_or(&[]);
        let (head, class) = match rest.first_chunk::<8>() {
            Some(w) => (u64::from_be_bytes(*w), 8),
            None => {
                let mut w = [0u8; 8];
                w[..rest.len()].copy_from_slice(rest);
                (u64::from_be_bytes(w), rest.len() as u8)
            }
        };
        r.head = head;
        r.class = class;
    }
    recs.sort_unstable_by_key(|r| (r.head, r.class, r.seq));
    let mut i = 0;
    while i < recs.len() {
        let (h, c) = (recs[i].head, recs[i].class);
        // Another digit than the previous run's: another key.
        recs[i].same_as_prev = false;
        let mut j = i + 1;
        while j < recs.len() && recs[j].head == h && recs[j].class == c {
            // Equal digits with fewer than 8 bytes left: equal keys (runs of 8 are settled below).
            recs[j].same_as_prev = c < 8;
            j += 1;
        }
        // Fewer than 8 bytes left: equal digits are equal keys. Otherwise sort the run on.
        if c == 8 && j - i > 1 {
            sort_keyed(bytes, &mut recs[i..j], at + 8, level + 1);
        }
        i = j;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// The builder gives what a key → value map gives for any sequence of puts and removals, in key order, with
    /// and without compactions between files.
    #[test]
    fn builder_matches_a_map() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for round in 0..120 {
            let mut b = StoreBuilder::default();
            let mut map: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
            let files = 1 + round % 5;
            for _ in 0..files {
                for _ in 0..(next() % 3000) {
                    let k = match round % 3 {
                        // Short keys with shared prefixes, some a prefix of others.
                        0 => {
                            let mut k = vec![1u8; next() % 12];
                            for _ in 0..next() % 4 {
                                k.push((next() % 3) as u8);
                            }
                            k
                        }
                        // Long keys that tie on many 8-byte digits (deep runs, the level cap).
                        1 => {
                            let mut k = vec![0u8; 160 + next() % 3];
                            for _ in 0..3 {
                                let at = next() % k.len();
                                k[at] = (next() % 2) as u8;
                            }
                            k
                        }
                        // UnsafeRow-like: a long shared prefix, then few distinct values.
                        _ => {
                            let mut k = vec![7u8; 40];
                            k.extend_from_slice(&((next() % 40) as u64).to_le_bytes());
                            k.extend_from_slice(&((next() % 5) as u64).to_be_bytes());
                            k
                        }
                    };
                    if next() % 3 == 0 {
                        b.remove(&k);
                        map.remove(&k);
                    } else {
                        let v = vec![(next() % 250) as u8; next() % 5];
                        b.put(&k, &v);
                        map.insert(k, v);
                    }
                }
                b.end_file();
            }
            let store = b.finish();
            let want: Vec<(Vec<u8>, Vec<u8>)> = map.into_iter().collect();
            assert_eq!(store.to_pairs(), want, "round {round}");
            assert_eq!(store, RawStore::from_pairs(want));
        }
    }

    /// A file that puts and removes the same few keys millions of times is held as those keys: records are
    /// compacted as they come, not kept until the end of the file.
    #[test]
    fn repeated_keys_stay_bounded() {
        let mut b = StoreBuilder::default();
        for i in 0..3 * IN_FILE_COMPACT as u64 {
            let k = (i % 3).to_le_bytes();
            if i % 7 == 0 {
                b.remove(&k);
            } else {
                b.put(&k, &i.to_le_bytes());
            }
            assert!(b.recs.len() <= IN_FILE_COMPACT + 8, "{} records held", b.recs.len());
        }
        let n = 3 * IN_FILE_COMPACT as u64;
        // The last record of each key: key 0's last (i = n - 3) is a put unless i % 7 == 0.
        let last = |key: u64| (0..n).rev().find(|i| i % 3 == key).unwrap_or(0);
        let want: Vec<(Vec<u8>, Vec<u8>)> = (0..3u64)
            .filter(|&k| last(k) % 7 != 0)
            .map(|k| (k.to_le_bytes().to_vec(), last(k).to_le_bytes().to_vec()))
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect();
        assert_eq!(b.finish().to_pairs(), want);
    }

    #[test]
    fn store_accessors() {
        let s = RawStore::from_pairs([(b"k1".as_slice(), b"v".as_slice()), (b"", b"")]);
        assert_eq!(s.len(), 2);
        assert!(!s.is_empty());
        assert_eq!(s.pair(0), Some((b"k1".as_slice(), b"v".as_slice())));
        assert_eq!(s.pair(1), Some((b"".as_slice(), b"".as_slice())));
        assert_eq!(s.pair(2), None);
        assert!(RawStore::default().is_empty());
    }
}
