//! `/proc/PID/maps`: which file (and where in it) each address of a process comes from.

/// One mapping of a process's address space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapEntry {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Offset in the file of `start`.
    pub offset: u64,
    /// Whether the mapping is executable.
    pub executable: bool,
    /// Inode of the file, 0 for anonymous memory.
    pub inode: u64,
    /// Path of the file, or a pseudo name such as `[heap]`, `[vdso]`, empty when anonymous.
    pub path: String,
}

impl MapEntry {
    /// Whether the mapping is backed by a regular file (not anonymous memory or a
    /// kernel pseudo mapping such as `[vdso]`).
    pub fn is_file(&self) -> bool {
        self.inode != 0 && self.path.starts_with('/')
    }

    /// The file offset of address `addr` inside this mapping.
    pub fn file_offset(&self, addr: u64) -> u64 {
        addr - self.start + self.offset
    }

    /// The file name without its directory, e.g. `libc.so.6`.
    pub fn base_name(&self) -> &str {
        let path = self.path.strip_suffix(" (deleted)").unwrap_or(&self.path);
        path.rsplit('/').next().unwrap_or(path)
    }
}

/// The mappings of one process, sorted by address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcMaps {
    /// The mappings in address order.
    pub entries: Vec<MapEntry>,
}

impl ProcMaps {
    /// Parses the text of `/proc/PID/maps`; lines that do not parse are skipped.
    pub fn parse(text: &str) -> Self {
        let mut entries: Vec<MapEntry> = text.lines().filter_map(parse_line).collect();
        entries.sort_by_key(|e| e.start);
        Self { entries }
    }

    /// Reads `/proc/PID/maps`.
    pub fn read(pid: u32) -> std::io::Result<Self> {
        std::fs::read_to_string(format!("/proc/{pid}/maps")).map(|t| Self::parse(&t))
    }

    /// The mapping holding `addr`.
    pub fn find(&self, addr: u64) -> Option<&MapEntry> {
        let i = self.entries.partition_point(|e| e.start <= addr);
        let e = self.entries.get(i.checked_sub(1)?)?;
        (addr < e.end).then_some(e)
    }

    /// The executable's first mapping, whose path names the program.
    pub fn main_binary(&self) -> Option<&MapEntry> {
        self.entries.iter().find(|e| e.is_file())
    }
}

/// `start-end perms offset dev inode path`
fn parse_line(line: &str) -> Option<MapEntry> {
    let mut fields = line.splitn(6, ' ');
    let (range, perms, offset) = (fields.next()?, fields.next()?, fields.next()?);
    let _dev = fields.next()?;
    let inode = fields.next()?;
    let path = fields.next().unwrap_or("").trim_start();
    let (start, end) = range.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    if end <= start {
        return None;
    }
    Some(MapEntry {
        start,
        end,
        offset: u64::from_str_radix(offset, 16).ok()?,
        executable: perms.as_bytes().get(2) == Some(&b'x'),
        inode: inode.parse().ok()?,
        path: path.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::ProcMaps;

    const MAPS: &str = "\
55d0c6a00000-55d0c6a02000 r--p 00000000 fd:01 1311  /usr/bin/burner
55d0c6a02000-55d0c6a05000 r-xp 00002000 fd:01 1311  /usr/bin/burner
7f1e2c000000-7f1e2c021000 rw-p 00000000 00:00 0
7f1e2d428000-7f1e2d5bd000 r-xp 00028000 fd:01 2048                       /usr/lib/x86_64-linux-gnu/libc.so.6
7f1e2d600000-7f1e2d601000 rwxp 00000000 00:00 0 
garbage line
7ffd1b5f1000-7ffd1b5f3000 r-xp 00000000 00:00 0                          [vdso]
";

    #[test]
    fn finds_the_mapping_and_file_offset_of_an_address() {
        let maps = ProcMaps::parse(MAPS);
        assert_eq!(maps.entries.len(), 6, "the garbage line is skipped");
        let text = maps.find(0x55d0c6a03010).unwrap();
        assert_eq!(text.path, "/usr/bin/burner");
        assert!(text.executable && text.is_file());
        assert_eq!(text.file_offset(0x55d0c6a03010), 0x3010);
        let libc = maps.find(0x7f1e2d428000).unwrap();
        assert_eq!(libc.base_name(), "libc.so.6");
        let jit = maps.find(0x7f1e2d600010).unwrap();
        assert!(
            jit.executable && !jit.is_file(),
            "anonymous executable memory"
        );
        assert!(!maps.find(0x7ffd1b5f1000).unwrap().is_file(), "[vdso]");
        assert!(maps.find(0x7f1e2d5bd000).is_none(), "end is exclusive");
        assert!(maps.find(0x10).is_none());
        assert_eq!(maps.main_binary().unwrap().path, "/usr/bin/burner");
    }

    #[test]
    fn reads_this_process() {
        let maps = ProcMaps::read(std::process::id()).unwrap();
        let here = finds_the_mapping_and_file_offset_of_an_address as *const () as u64;
        assert!(maps.find(here).is_some_and(|e| e.executable && e.is_file()));
    }
}
