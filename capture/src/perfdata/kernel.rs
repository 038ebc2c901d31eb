//! Kernel frames' names: the running kernel's `/proc/kallsyms`, used only when the
//! file was recorded on this kernel (its build id, from `/sys/kernel/notes`, is the
//! file's), or when the file names no kernel build id.

use crate::symbols::kallsyms::Kallsyms;

/// `NT_GNU_BUILD_ID`, the type of a build-id note.
const NT_GNU_BUILD_ID: u32 = 3;

/// The kernel names a file's frames get, and why not when they get none.
#[derive(Debug, Default)]
pub(super) struct KernelNames {
    /// The running kernel's symbols, when they fit the file.
    pub kallsyms: Option<Kallsyms>,
    /// Why kernel frames stay addresses.
    pub warning: Option<String>,
}

impl KernelNames {
    /// The names for a file whose kernel has build id `file_build_id` (lowercase
    /// hexadecimal; `None` when it names none).
    pub(super) fn for_file(file_build_id: Option<&str>) -> Self {
        let running = std::fs::read("/sys/kernel/notes")
            .ok()
            .and_then(|notes| notes_build_id(&notes));
        match (file_build_id, running.as_deref()) {
            (Some(file), Some(running)) if file != running => Self {
                kallsyms: None,
                warning: Some(format!(
                    "kernel frames left as addresses: the file's kernel (build id {file}) is not the running one ({running})"
                )),
            },
            _ => match Kallsyms::read() {
                Ok(k) if !k.is_empty() => Self {
                    kallsyms: Some(k),
                    warning: None,
                },
                Ok(_) => Self {
                    kallsyms: None,
                    warning: Some(
                        "kernel frames left as addresses: /proc/kallsyms hides its addresses (kptr_restrict)".into(),
                    ),
                },
                Err(e) => Self {
                    kallsyms: None,
                    warning: Some(format!(
                        "kernel frames left as addresses: /proc/kallsyms: {e}"
                    )),
                },
            },
        }
    }
}

/// The GNU build id among ELF notes (`/sys/kernel/notes`), in lowercase hexadecimal.
pub(super) fn notes_build_id(notes: &[u8]) -> Option<String> {
    let u32_at = |at: usize| -> Option<u32> {
        let raw: [u8; 4] = notes.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(u32::from_ne_bytes(raw))
    };
    let padded = |n: usize| n.checked_add(3).map(|n| n & !3);
    let mut at = 0;
    while at + 12 <= notes.len() {
        let name_size = u32_at(at)? as usize;
        let desc_size = u32_at(at + 4)? as usize;
        let kind = u32_at(at + 8)?;
        let name_at = at + 12;
        let desc_at = name_at.checked_add(padded(name_size)?)?;
        let next = desc_at.checked_add(padded(desc_size)?)?;
        let name = notes.get(name_at..name_at.checked_add(name_size)?)?;
        if kind == NT_GNU_BUILD_ID && name == b"GNU\0" {
            let desc = notes.get(desc_at..desc_at.checked_add(desc_size)?)?;
            return Some(hex(desc));
        }
        at = next;
    }
    None
}

/// `bytes` in lowercase hexadecimal.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gnu_build_id_note_is_found_among_others() {
        let mut notes = Vec::new();
        for (name, kind, desc) in [
            (&b"Xen\0"[..], 1u32, &[9u8, 9, 9][..]),
            (b"GNU\0", NT_GNU_BUILD_ID, &[0xab, 0xcd, 0x01]),
        ] {
            notes.extend((name.len() as u32).to_ne_bytes());
            notes.extend((desc.len() as u32).to_ne_bytes());
            notes.extend(kind.to_ne_bytes());
            notes.extend(name);
            notes.extend(desc);
            notes.resize(notes.len().next_multiple_of(4), 0);
        }
        assert_eq!(notes_build_id(&notes).as_deref(), Some("abcd01"));
        assert_eq!(notes_build_id(&notes[..20]), None);
    }
}
