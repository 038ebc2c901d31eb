//! Word lists and name generators that make synthetic functions, files and
//! binaries look like real Go, Rust, C++ and C code.

use super::SplitMix64;

/// Source language of a binary; decides how its functions are named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    /// Go: `github.com/acme/svc/pkg.(*Type).Method`.
    Go,
    /// Rust: `crate::module::Type::method`.
    Rust,
    /// C++: `Ns::Class::method(args)`.
    Cpp,
    /// C: `prefix_verb_noun`.
    C,
}

/// A template for one mapping: path, language, executable or shared library,
/// and a few well-known function names that come first.
pub struct BinaryTemplate {
    /// File name of the mapping.
    pub path: &'static str,
    /// Language used for generated function names.
    pub lang: Lang,
    /// True for a main executable (owns stack roots), false for a library.
    pub exe: bool,
    /// Names used before any generated one; for executables the first is the root.
    pub known: &'static [&'static str],
}

/// The binaries of the synthetic fleet, cycled when more are requested.
pub const BINARIES: &[BinaryTemplate] = &[
    BinaryTemplate {
        path: "/usr/bin/api-server",
        lang: Lang::Go,
        exe: true,
        known: &[
            "runtime.goexit",
            "main.main",
            "runtime.main",
            "net/http.(*conn).serve",
            "net/http.serverHandler.ServeHTTP",
            "github.com/acme/api-server/handler.(*Server).ServeHTTP",
            "runtime.mallocgc",
            "runtime.memmove",
            "runtime.gcBgMarkWorker",
            "runtime.scanobject",
            "runtime.newobject",
            "runtime.growslice",
            "runtime.mapassign_faststr",
            "sync.(*Mutex).Lock",
            "encoding/json.Marshal",
            "syscall.Syscall",
        ],
    },
    BinaryTemplate {
        path: "/usr/lib/x86_64-linux-gnu/libc.so.6",
        lang: Lang::C,
        exe: false,
        known: &[
            "__memcpy_avx_unaligned_erms",
            "malloc",
            "free",
            "__memset_avx2_unaligned_erms",
            "__strlen_avx2",
            "pthread_mutex_lock",
            "pthread_cond_wait",
            "epoll_wait",
            "__GI___clock_gettime",
            "read",
            "write",
        ],
    },
    BinaryTemplate {
        path: "/usr/local/bin/search-indexer",
        lang: Lang::Rust,
        exe: true,
        known: &[
            "_start",
            "__libc_start_main",
            "main",
            "std::rt::lang_start_internal",
            "search_indexer::main",
            "tokio::runtime::scheduler::multi_thread::worker::run",
            "std::collections::hash::map::HashMap<K,V,S>::insert",
            "hashbrown::raw::RawTable<T,A>::reserve_rehash",
            "alloc::raw_vec::RawVec<T,A>::grow_one",
            "core::ptr::drop_in_place<alloc::vec::Vec<u8>>",
            "<alloc::string::String as core::fmt::Write>::write_str",
            "core::slice::sort::stable::drift::sort",
            "serde_json::ser::to_writer",
        ],
    },
    BinaryTemplate {
        path: "/usr/bin/ingest-worker",
        lang: Lang::Go,
        exe: true,
        known: &[
            "runtime.goexit",
            "main.main",
            "runtime.main",
            "github.com/acme/ingest-worker/queue.(*Consumer).Run",
            "runtime.mallocgc",
            "runtime.memmove",
            "runtime.gcBgMarkWorker",
            "compress/gzip.(*Reader).Read",
            "github.com/golang/protobuf/proto.Unmarshal",
        ],
    },
    BinaryTemplate {
        path: "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
        lang: Lang::Cpp,
        exe: false,
        known: &[
            "operator new(unsigned long)",
            "operator delete(void*)",
            "std::string::_M_append(char const*, unsigned long)",
            "std::_Hash_bytes(void const*, unsigned long, unsigned long)",
            "std::locale::locale()",
        ],
    },
    BinaryTemplate {
        path: "/usr/sbin/envoy",
        lang: Lang::Cpp,
        exe: true,
        known: &[
            "_start",
            "__libc_start_main",
            "main",
            "Envoy::MainCommon::run()",
            "Envoy::Server::InstanceImpl::run()",
            "Envoy::Event::DispatcherImpl::run(Envoy::Event::Dispatcher::RunType)",
            "event_base_loop",
            "Envoy::Http::ConnectionManagerImpl::onData(Envoy::Buffer::Instance&, bool)",
        ],
    },
    BinaryTemplate {
        path: "/usr/lib/x86_64-linux-gnu/libssl.so.3",
        lang: Lang::C,
        exe: false,
        known: &[
            "SSL_read",
            "SSL_write",
            "ssl3_read_bytes",
            "EVP_EncryptUpdate",
            "aesni_ctr32_encrypt_blocks",
            "sha256_block_data_order_avx2",
        ],
    },
    BinaryTemplate {
        path: "/usr/lib/x86_64-linux-gnu/libz.so.1",
        lang: Lang::C,
        exe: false,
        known: &[
            "deflate",
            "inflate",
            "longest_match",
            "crc32_z",
            "adler32_z",
            "deflate_slow",
        ],
    },
    BinaryTemplate {
        path: "/usr/bin/cache-proxy",
        lang: Lang::Rust,
        exe: true,
        known: &[
            "_start",
            "__libc_start_main",
            "main",
            "cache_proxy::main",
            "hyper::proto::h1::dispatch::Dispatcher<D,Bs,I,T>::poll_loop",
            "bytes::bytes_mut::BytesMut::reserve_inner",
        ],
    },
    BinaryTemplate {
        path: "[vdso]",
        lang: Lang::C,
        exe: false,
        known: &["__vdso_clock_gettime", "__vdso_gettimeofday"],
    },
];

const PKGS: &[&str] = &[
    "handler", "storage", "cache", "auth", "billing", "search", "index", "codec", "rpc", "queue",
    "metrics", "config", "session", "router", "shard", "ranking", "ingest", "blob", "schema",
    "tracing",
];
const TYPES: &[&str] = &[
    "Server", "Client", "Store", "Pool", "Encoder", "Decoder", "Tree", "Index", "Batch", "Writer",
    "Reader", "Cursor", "Planner", "Segment", "Bucket", "Limiter", "Resolver", "Shard", "Table",
    "Buffer",
];
const VERBS: &[&str] = &[
    "Get", "Put", "Scan", "Encode", "Decode", "Flush", "Merge", "Lookup", "Insert", "Compact",
    "Serve", "Handle", "Parse", "Validate", "Resolve", "Apply", "Split", "Sort", "Hash", "Load",
    "Write", "Read", "Visit", "Build", "Emit",
];
const NOUNS: &[&str] = &[
    "Entry", "Block", "Key", "Row", "Batch", "Request", "Header", "Token", "Page", "Span", "Node",
    "Chunk", "Frame", "Record", "Message", "Field",
];
const CRATES: &[&str] = &[
    "tantivy",
    "tokio",
    "hyper",
    "serde_json",
    "regex_automata",
    "hashbrown",
    "prost",
    "bytes",
    "rayon_core",
    "crossbeam_channel",
    "tracing_core",
    "memchr",
];

fn pick<'a>(rng: &mut SplitMix64, words: &[&'a str]) -> &'a str {
    words[rng.below(words.len() as u64) as usize]
}

fn snake(word: &str) -> String {
    let mut out = String::with_capacity(word.len() + 2);
    for (i, c) in word.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Short service name of a mapping path, e.g. `api-server` or `libc`.
pub fn short_name(path: &str) -> String {
    let base = path.rsplit('/').next().unwrap_or(path);
    let base = base.trim_matches(|c| c == '[' || c == ']');
    base.split(".so").next().unwrap_or(base).to_string()
}

/// A generated function: display name, system (linker) name and source file.
pub struct FuncName {
    /// Human readable name.
    pub name: String,
    /// Linker name (mangled for C++ and Rust).
    pub system_name: String,
    /// Source file path.
    pub file: String,
}

fn mangle(parts: &[&str], hash: Option<u64>) -> String {
    let mut s = String::from("_ZN");
    for p in parts {
        s.push_str(&p.len().to_string());
        s.push_str(p);
    }
    if let Some(hash) = hash {
        s.push_str(&format!("17h{hash:016x}"));
    }
    s.push('E');
    s
}

/// Generates a plausible function for a binary written in `lang` named `svc`.
pub fn generate(rng: &mut SplitMix64, lang: Lang, svc: &str) -> FuncName {
    let verb = pick(rng, VERBS);
    let noun = pick(rng, NOUNS);
    match lang {
        Lang::Go => {
            let pkg = pick(rng, PKGS);
            let ty = pick(rng, TYPES);
            let name = match rng.below(3) {
                0 => format!("github.com/acme/{svc}/{pkg}.(*{ty}).{verb}{noun}"),
                1 => format!("github.com/acme/{svc}/{pkg}.{ty}.{verb}"),
                _ => format!("github.com/acme/{svc}/{pkg}.{}{noun}", verb.to_lowercase()),
            };
            let file = format!("/build/{svc}/{pkg}/{}.go", snake(ty));
            FuncName {
                system_name: name.clone(),
                name,
                file,
            }
        }
        Lang::Rust => {
            let krate = if rng.chance(0.5) {
                svc.replace('-', "_")
            } else {
                pick(rng, CRATES).to_string()
            };
            let module = snake(pick(rng, PKGS));
            let ty = pick(rng, TYPES);
            let method = format!("{}_{}", snake(verb), snake(noun));
            let name = if rng.chance(0.2) {
                format!("<{krate}::{module}::{ty} as core::iter::Iterator>::next")
            } else {
                format!("{krate}::{module}::{ty}::{method}")
            };
            let system_name = mangle(&[&krate, &module, ty, &method], Some(rng.next_u64()));
            let file = format!("/cargo/src/{krate}/src/{module}.rs");
            FuncName {
                name,
                system_name,
                file,
            }
        }
        Lang::Cpp => {
            let ns = if svc == "envoy" { "Envoy" } else { "acme" };
            let pkg = pick(rng, PKGS);
            let ty = pick(rng, TYPES);
            let method = format!("{}{noun}", verb.to_lowercase());
            let name = format!("{ns}::{pkg}::{ty}Impl::{method}(Envoy::Buffer::Instance&)");
            let class = format!("{ty}Impl");
            let system_name = format!(
                "{}RNS_6Buffer8InstanceE",
                mangle(&[ns, pkg, &class, &method], None)
            );
            let file = format!("source/{pkg}/{}_impl.cc", snake(ty));
            FuncName {
                name,
                system_name,
                file,
            }
        }
        Lang::C => {
            let prefix = match svc.trim_start_matches("lib") {
                "c" => "__libc",
                other => other,
            };
            let name = format!(
                "{prefix}_{}_{}_{}",
                pick(rng, PKGS),
                snake(verb),
                snake(noun)
            );
            let file = format!("{svc}/src/{}.c", snake(noun));
            FuncName {
                system_name: name.clone(),
                name,
                file,
            }
        }
    }
}

/// Source file for one of the well-known names of a template.
pub fn known_file(lang: Lang, name: &str, svc: &str) -> String {
    match lang {
        Lang::Go => {
            let pkg = name.split(['.', '(']).next().unwrap_or("main");
            if pkg == "main" {
                format!("/build/{svc}/main.go")
            } else {
                format!(
                    "/usr/lib/go/src/{pkg}/{}.go",
                    pkg.rsplit('/').next().unwrap_or(pkg)
                )
            }
        }
        Lang::Rust => format!(
            "/rustc/library/{}.rs",
            snake(name.split("::").next().unwrap_or("std"))
        ),
        Lang::Cpp => format!("source/exe/{}.cc", snake(svc)),
        Lang::C => format!("{svc}/{}.c", name.trim_start_matches('_')),
    }
}
