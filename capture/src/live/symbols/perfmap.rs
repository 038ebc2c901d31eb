//! Perf maps (`/tmp/perf-PID.map`): names of code compiled at run time, written by
//! JITs (the Erlang VM with `+JPperf map`, Node with `--perf-basic-prof`, the JVM with
//! an agent). Read tolerantly: `0x` prefixes are accepted (the Erlang VM writes them),
//! bad lines are skipped, and for an address covered twice the later entry wins.

use std::collections::BTreeMap;

/// The entries of one perf map.
#[derive(Debug, Clone, Default)]
pub struct PerfMap {
    /// (start, end, index into `names`), sorted by start, without overlaps.
    ranges: Vec<(u64, u64, usize)>,
    names: Vec<String>,
    /// Bytes of the file read so far; the file is read again when it grows.
    pub size_bytes: u64,
}

impl PerfMap {
    /// Parses the text of a perf map: `START SIZE NAME` per line, hexadecimal numbers
    /// with or without `0x`.
    pub fn parse(text: &str) -> Self {
        let mut entries: Vec<(u64, u64, String)> = Vec::new();
        for line in text.lines() {
            let mut f = line.trim_start().splitn(3, char::is_whitespace);
            let (Some(start), Some(size), Some(name)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            let (Some(start), Some(size)) = (hex(start), hex(size)) else {
                continue;
            };
            let name = name.trim();
            if size == 0 || name.is_empty() {
                continue;
            }
            entries.push((start, start.saturating_add(size), name.to_string()));
        }
        // Later lines win: lay entries down in file order, each cutting what it covers
        // out of the earlier ones. start → (end, name)
        let mut laid: BTreeMap<u64, (u64, usize)> = BTreeMap::new();
        let mut names = Vec::with_capacity(entries.len());
        for (start, end, name) in entries {
            names.push(name);
            let id = names.len() - 1;
            // A range starting before `start` that reaches into the new one.
            if let Some((&s, &(e, n))) = laid.range(..start).next_back()
                && e > start
            {
                laid.insert(s, (start, n));
                if e > end {
                    laid.insert(end, (e, n));
                }
            }
            // Ranges starting inside the new one.
            let inside: Vec<u64> = laid.range(start..end).map(|(&s, _)| s).collect();
            for s in inside {
                if let Some((e, n)) = laid.remove(&s)
                    && e > end
                {
                    laid.insert(end, (e, n));
                }
            }
            laid.insert(start, (end, id));
        }
        let mut map = Self {
            ranges: laid.into_iter().map(|(s, (e, n))| (s, e, n)).collect(),
            names,
            size_bytes: 0,
        };
        map.size_bytes = text.len() as u64;
        map
    }

    /// The name of the code at `addr`.
    pub fn find(&self, addr: u64) -> Option<&str> {
        let i = self.ranges.partition_point(|r| r.0 <= addr);
        let &(_, end, name) = self.ranges.get(i.checked_sub(1)?)?;
        (addr < end).then(|| self.names[name].as_str())
    }

    /// Number of distinct code ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether the map names nothing.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

fn hex(s: &str) -> Option<u64> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    u64::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::PerfMap;

    #[test]
    fn reads_erlang_and_node_style_lines_and_skips_bad_ones() {
        let map = PerfMap::parse(
            "0x7f0000001000 0x40 $erlang:apply/2\n\
             7f0000002000 80 LazyCompile:*sort /app/sort.js:12\n\
             garbage\n\
             7f00000030zz 10 bad_hex\n\
             7f0000004000 0 empty_size\n\
             7f0000005000 10\n",
        );
        assert_eq!(map.find(0x7f0000001000), Some("$erlang:apply/2"));
        assert_eq!(map.find(0x7f000000103f), Some("$erlang:apply/2"));
        assert_eq!(map.find(0x7f0000001040), None, "end is exclusive");
        assert_eq!(
            map.find(0x7f0000002010),
            Some("LazyCompile:*sort /app/sort.js:12"),
            "names keep their spaces"
        );
        assert_eq!(map.len(), 2);
        assert_eq!(map.find(0x7f0000004000), None);
    }

    #[test]
    fn the_last_entry_for_an_address_wins() {
        let map = PerfMap::parse(
            "1000 100 old\n\
             1040 10 newer\n\
             1080 100 newest\n",
        );
        assert_eq!(map.find(0x1000), Some("old"));
        assert_eq!(map.find(0x1045), Some("newer"));
        assert_eq!(map.find(0x1050), Some("old"), "the rest of old stays");
        assert_eq!(map.find(0x1090), Some("newest"));
        assert_eq!(map.find(0x1170), Some("newest"));
    }
}
