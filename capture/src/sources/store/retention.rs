//! What retention drops: pure decisions over profile times and segment sizes.

use std::collections::{BTreeMap, BTreeSet};

/// The time before which profiles are dropped: `retention_nanos` before the newest
/// profile. `None` when there is no age limit or nothing is that old.
pub fn age_cutoff(
    retention_nanos: Option<i64>,
    oldest_nanos: Option<i64>,
    newest_nanos: Option<i64>,
) -> Option<i64> {
    let cutoff = newest_nanos?.saturating_sub(retention_nanos?);
    (oldest_nanos? < cutoff).then_some(cutoff)
}

/// The oldest segments to drop so that the rest fit in `max_size_bytes`; the newest
/// segment is always kept. `sizes` maps segment ids (in write order) to bytes.
pub fn segments_over_size(
    max_size_bytes: Option<u64>,
    sizes: &BTreeMap<u64, u64>,
) -> BTreeSet<u64> {
    let mut dropped = BTreeSet::new();
    let Some(max) = max_size_bytes else {
        return dropped;
    };
    let mut total: u64 = sizes.values().sum();
    let newest = sizes.keys().next_back().copied();
    for (&id, &size) in sizes {
        if total <= max || Some(id) == newest {
            break;
        }
        dropped.insert(id);
        total -= size;
    }
    dropped
}

/// The segment size to use: `segment_bytes`, but at most an eighth of the size limit, so
/// that dropping a whole segment never drops much more than needed.
pub fn segment_bytes(segment_bytes: u64, max_size_bytes: Option<u64>) -> u64 {
    match max_size_bytes {
        Some(max) => segment_bytes.min(max / 8).max(1),
        None => segment_bytes.max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn age_is_measured_from_the_newest_profile() {
        assert_eq!(age_cutoff(Some(10), Some(0), Some(25)), Some(15));
        assert_eq!(age_cutoff(Some(10), Some(15), Some(25)), None);
        assert_eq!(age_cutoff(None, Some(0), Some(25)), None);
        assert_eq!(age_cutoff(Some(10), None, None), None);
    }

    #[test]
    fn size_drops_the_oldest_segments_and_keeps_the_newest() {
        let sizes: BTreeMap<u64, u64> = [(1, 10), (2, 10), (3, 10)].into();
        assert!(segments_over_size(Some(30), &sizes).is_empty());
        assert_eq!(segments_over_size(Some(25), &sizes), [1].into());
        assert_eq!(segments_over_size(Some(5), &sizes), [1, 2].into());
        assert!(segments_over_size(None, &sizes).is_empty());
        assert_eq!(segment_bytes(64, Some(80)), 10);
        assert_eq!(segment_bytes(64, None), 64);
    }
}
