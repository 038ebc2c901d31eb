//! What pprof calls a function and a frame: demangled, simplified names (its
//! symbolizer's default `Demangle`), and the printable name of a graph node
//! (`NodeInfo.NameComponents`), so every view names frames as `go tool pprof` does.

use std::borrow::Cow;

/// A function's name as pprof shows it by default. Where `name` is empty or equals
/// `system_name`, the system name is demangled (Itanium C++, Rust legacy and v0)
/// without parameters or template arguments; a system name that is not mangled but
/// reads as demangled C++ loses its `(…)` and `<…>`. Any other name is kept.
pub fn function_name<'s>(name: &'s str, system_name: &'s str) -> Cow<'s, str> {
    if !name.is_empty() && name != system_name {
        return Cow::Borrowed(name);
    }
    if is_plain(system_name) {
        return Cow::Borrowed(system_name);
    }
    if let Some(demangled) = demangle(system_name, false) {
        return Cow::Owned(demangled);
    }
    if looks_like_demangled_cpp(system_name) {
        let plain = remove_matching(&remove_matching(system_name, b'(', b')'), b'<', b'>');
        if plain != system_name {
            return Cow::Owned(plain);
        }
    }
    Cow::Borrowed(system_name)
}

/// Whether pprof shows `symbol` as it is: not mangled, and without the brackets or
/// `::` of a demangled C++ name (most names, found in one pass).
fn is_plain(symbol: &str) -> bool {
    !symbol.starts_with("_Z")
        && !symbol.starts_with("_R")
        && !symbol
            .bytes()
            .any(|b| matches!(b, b'<' | b'>' | b'[' | b']' | b':'))
}

/// A function's full name, for a tooltip beside the short [`function_name`]: the
/// system name demangled with parameters and template arguments, or the name.
pub fn full_function_name<'s>(name: &'s str, system_name: &'s str) -> Cow<'s, str> {
    if !name.is_empty() && name != system_name {
        return Cow::Borrowed(name);
    }
    demangle(system_name, true).map_or(Cow::Borrowed(system_name), Cow::Owned)
}

/// `symbol` demangled, or `None` when it is not a C++ or Rust mangled name. Short
/// leaves out parameters, template arguments and Rust's hashes.
fn demangle(symbol: &str, full: bool) -> Option<String> {
    if symbol.starts_with("_R") || is_legacy_rust(symbol) {
        let d = rustc_demangle::try_demangle(symbol).ok()?;
        return Some(if full {
            format!("{d}")
        } else {
            format!("{d:#}")
        });
    }
    if !symbol.starts_with("_Z") {
        return None;
    }
    let parsed = cpp_demangle::Symbol::new(symbol).ok()?;
    let options = if full {
        cpp_demangle::DemangleOptions::new()
    } else {
        cpp_demangle::DemangleOptions::new()
            .no_params()
            .no_return_type()
    };
    let text = parsed.demangle_with_options(&options).ok()?;
    Some(if full { text } else { remove_templates(&text) })
}

/// Whether `symbol` is a Rust legacy name: `_ZN…17h<16 hex digits>E`, optionally
/// followed by a `.suffix`, as pprof's demangler tells them from C++.
fn is_legacy_rust(symbol: &str) -> bool {
    if !symbol.starts_with("_ZN") {
        return false;
    }
    let name = symbol.rfind("E.").map_or(symbol, |dot| &symbol[..=dot]);
    let bytes = name.as_bytes();
    name.len() > 23 && name.ends_with('E') && &bytes[bytes.len() - 20..bytes.len() - 17] == b"17h"
}

/// `text` without its template arguments, keeping `operator<`, `operator<<` and
/// `operator<=>`.
fn remove_templates(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if depth == 0 && rest.starts_with("operator") {
            let op = rest["operator".len()..]
                .chars()
                .take_while(|c| "<>=".contains(*c))
                .count();
            out.push_str(&rest[.."operator".len() + op]);
            rest = &rest["operator".len() + op..];
            continue;
        }
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// pprof's `looksLikeDemangledCPlusPlus`: not a Java `class.<init>` nor a Go
/// `pkg.(*T[…]).M`, and holding `<`, `>`, `[`, `]` or `::`.
fn looks_like_demangled_cpp(name: &str) -> bool {
    !name.contains(".<")
        && !name.contains("]).")
        && (name.contains(['<', '>', '[', ']']) || name.contains("::"))
}

/// pprof's `removeMatching`: `name` without each outermost `start…end` span, from
/// left to right; at a closing bracket that opens nothing it stops, keeping what it
/// removed so far.
fn remove_matching(name: &str, start: u8, end: u8) -> String {
    let mut name = name.as_bytes().to_vec();
    let (mut depth, mut first, mut current) = (0i32, 0usize, 0usize);
    while let Some(index) = name[current..].iter().position(|&b| b == start || b == end) {
        current += index;
        if name[current] == start {
            depth += 1;
            if depth == 1 {
                first = current;
            }
        } else {
            depth -= 1;
            if depth < 0 {
                break;
            }
            if depth == 0 {
                name.drain(first..=current);
                current = first;
                continue;
            }
        }
        current += 1;
    }
    String::from_utf8_lossy(&name).into_owned()
}

/// What a graph node is made of, as pprof's `NodeInfo`: the parts a granularity
/// keeps (the others empty or zero).
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeParts<'a> {
    /// The instruction address, at address granularity.
    pub address: u64,
    /// The function's name, empty for a location without lines or a nameless function.
    pub name: &'a str,
    /// The source file (cleaned), at line and address granularity.
    pub file: &'a str,
    /// The source line, at line and address granularity.
    pub line: i64,
    /// The binary's path, where nothing names the frame otherwise.
    pub binary: &'a str,
}

/// The name pprof prints for a node: `[address] [name] [file:line | file | [binary] |
/// <unknown>]`, each part there only when known.
pub fn node_name(parts: &NodeParts<'_>) -> String {
    let mut out = String::new();
    let mut part = |text: &str| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(text);
    };
    if parts.address != 0 {
        part(&format!("{:016x}", parts.address));
    }
    if !parts.name.is_empty() {
        part(parts.name);
    }
    if parts.line != 0 {
        part(&format!("{}:{}", parts.file, parts.line));
    } else if !parts.file.is_empty() {
        part(parts.file);
    } else if parts.name.is_empty() {
        match parts.binary {
            "" => part("<unknown>"),
            binary => part(&format!("[{}]", base_name(binary))),
        }
    }
    out
}

/// What tells a node apart from others, and orders nodes of one printed name
/// (`name`, as [`node_name`] printed it). A named node is its printed name. A node
/// without a function name is also told apart by its start line and binary: pprof's
/// `NodeInfo` as Go prints it (`{Name OrigName Address File StartLine Lineno
/// Objfile}`), after a NUL so that it is never a printed name.
pub fn node_key(name: &str, parts: &NodeParts<'_>, start_line: i64) -> String {
    if !parts.name.is_empty() {
        return name.to_string();
    }
    let (address, file, line, binary) = (parts.address, parts.file, parts.line, parts.binary);
    format!("\0{{  {address} {file} {start_line} {line} {binary}}}")
}

/// The last element of a path, as Go's `filepath.Base`.
fn base_name(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() { "." } else { "/" };
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed)
}

/// Whether [`clean_path`] leaves `path` as it is (most paths, found without
/// allocating): no empty, `.` or `..` element, but `..` leading a relative path.
fn is_clean(path: &str) -> bool {
    if path == "/" || path == "." {
        return true;
    }
    let rooted = path.starts_with('/');
    let mut parts = path.split('/');
    if rooted {
        parts.next();
    }
    let mut leading = !rooted;
    parts.all(|part| match part {
        "" | "." => false,
        ".." => leading,
        _ => {
            leading = false;
            true
        }
    })
}

/// `path` cleaned lexically as Go's `filepath.Clean`: no `.` elements, no `x/..`
/// pairs, no repeated or trailing slashes.
pub fn clean_path(path: &str) -> Cow<'_, str> {
    if path.is_empty() || is_clean(path) {
        return Cow::Borrowed(path);
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push(".."),
            },
            part => parts.push(part),
        }
    }
    let joined = parts.join("/");
    let clean = match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    };
    if clean == path {
        Cow::Borrowed(path)
    } else {
        Cow::Owned(clean)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mangled_system_names_are_demangled_short_as_pprof_shows_them() {
        for (system, short) in [
            ("_ZN3foo3barEi", "foo::bar"),
            ("_ZN3foo3BazIiE3quxEi", "foo::Baz::qux"),
            ("_ZN7mycrate6worker17h0123456789abcdefE", "mycrate::worker"),
            ("_RNvCs1234_7mycrate6worker", "mycrate::worker"),
            ("foo::Baz<int>::qux(int) const", "foo::Baz::qux const"),
            (
                "main.(*Map[go.shape.int]).Get",
                "main.(*Map[go.shape.int]).Get",
            ),
            ("java.util.HashMap.<init>", "java.util.HashMap.<init>"),
            // pprof's bracket matching stops at the `>` of `->`, as here.
            ("quicksort<u64, fn(&u64) -> bool>", "quicksort bool>"),
            ("main.main", "main.main"),
        ] {
            assert_eq!(function_name("", system), short, "{system}");
            assert_eq!(function_name(system, system), short, "{system}");
        }
    }

    #[test]
    fn a_name_unlike_its_system_name_is_kept() {
        assert_eq!(function_name("_ZN3foo3barEi", ""), "_ZN3foo3barEi");
        assert_eq!(function_name("mine", "_ZN3foo3barEi"), "mine");
        assert_eq!(full_function_name("", "_ZN3foo3barEi"), "foo::bar(int)");
    }

    #[test]
    fn operators_keep_their_angle_brackets() {
        assert_eq!(
            remove_templates("std::vector<int>::operator<<"),
            "std::vector::operator<<"
        );
        assert_eq!(remove_templates("a<b<c>>::f"), "a::f");
    }

    #[test]
    fn nodes_are_named_by_what_is_known() {
        let named = NodeParts {
            name: "main",
            ..NodeParts::default()
        };
        assert_eq!(node_name(&named), "main");
        let lined = NodeParts {
            file: "a/b.go",
            line: 12,
            ..named
        };
        assert_eq!(node_name(&lined), "main a/b.go:12");
        let at = NodeParts {
            address: 0x401000,
            ..lined
        };
        assert_eq!(node_name(&at), "0000000000401000 main a/b.go:12");
        let binary = NodeParts {
            binary: "/lib/libc.so.6",
            ..NodeParts::default()
        };
        assert_eq!(node_name(&binary), "[libc.so.6]");
        assert_eq!(node_name(&NodeParts::default()), "<unknown>");
    }

    #[test]
    fn paths_are_cleaned_as_go_cleans_them() {
        for (path, clean) in [
            ("a/./b/../c.go", "a/c.go"),
            ("/../x//y/", "/x/y"),
            ("../a", "../a"),
            ("./", "."),
            ("/", "/"),
            ("src/main.rs", "src/main.rs"),
            ("/usr/src/a.c", "/usr/src/a.c"),
            ("../../a/b", "../../a/b"),
            ("a/../../b", "../b"),
            ("a/", "a"),
            ("/..", "/"),
        ] {
            assert_eq!(clean_path(path), clean, "{path}");
        }
    }
}
