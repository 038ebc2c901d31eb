//! `/proc/kallsyms`: names of kernel functions by address.

/// The kernel's text symbols, sorted by address.
#[derive(Debug, Clone, Default)]
pub struct Kallsyms {
    /// (address, name with `[module]` when not in the core kernel).
    symbols: Vec<(u64, String)>,
}

impl Kallsyms {
    /// Parses the text of `/proc/kallsyms`, keeping text symbols (`t`, `T`, `w`, `W`).
    /// Addresses hidden by `kptr_restrict` (all zero) leave the table empty.
    pub fn parse(text: &str) -> Self {
        let mut symbols: Vec<(u64, String)> = text
            .lines()
            .filter_map(|line| {
                let mut f = line.split_whitespace();
                let addr = u64::from_str_radix(f.next()?, 16).ok()?;
                let kind = f.next()?;
                let name = f.next()?;
                if addr == 0 || !matches!(kind, "t" | "T" | "w" | "W") {
                    return None;
                }
                Some(match f.next() {
                    Some(module) => (addr, format!("{name} {module}")),
                    None => (addr, name.to_string()),
                })
            })
            .collect();
        symbols.sort_by_key(|s| s.0);
        Self { symbols }
    }

    /// Reads `/proc/kallsyms`.
    pub fn read() -> std::io::Result<Self> {
        std::fs::read_to_string("/proc/kallsyms").map(|t| Self::parse(&t))
    }

    /// Whether no symbol is known (e.g. addresses hidden from this user).
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The function holding `addr`: the nearest symbol at or below it.
    pub fn find(&self, addr: u64) -> Option<&str> {
        let i = self.symbols.partition_point(|s| s.0 <= addr);
        self.symbols.get(i.checked_sub(1)?).map(|s| s.1.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Kallsyms;

    #[test]
    fn finds_the_nearest_text_symbol_below() {
        let k = Kallsyms::parse(
            "ffffffff81000000 T _stext\n\
             ffffffff81001000 t do_syscall_64\n\
             ffffffff81002000 D some_data\n\
             ffffffff81003000 T ksys_write\n\
             ffffffffc0001000 t ext4_file_write_iter\t[ext4]\n\
             not a line\n",
        );
        assert_eq!(k.find(0xffffffff81001010), Some("do_syscall_64"));
        assert_eq!(
            k.find(0xffffffff81002010),
            Some("do_syscall_64"),
            "data skipped"
        );
        assert_eq!(k.find(0xffffffff81003000), Some("ksys_write"));
        assert_eq!(
            k.find(0xffffffffc0001004),
            Some("ext4_file_write_iter [ext4]")
        );
        assert_eq!(k.find(0x1000), None);
        assert!(Kallsyms::parse("0000000000000000 T _stext\n").is_empty());
    }
}
