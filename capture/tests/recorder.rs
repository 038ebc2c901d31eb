//! One interval's stack counts become a valid pprof with symbolized, labelled samples.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

use capture::recorder::{CapturedStack, Interval, ProcessInfo, build_profile};
use capture::symbols::Symbolizer;
use capture::symbols::kallsyms::Kallsyms;
use profile_model::codec::{decode, encode};

#[inline(never)]
fn leaf_function_of_the_test(x: u64) -> u64 {
    std::hint::black_box(x.wrapping_add(1))
}

/// Names of the frames of sample `i`, leaf first (inlined frames innermost first).
fn stack_names(p: &profile_model::Profile, i: usize) -> Vec<String> {
    p.samples
        .stack(i)
        .iter()
        .flat_map(|&l| p.locations[l as usize].lines.iter())
        .map(|line| p.str(p.functions[line.function as usize].name).to_string())
        .collect()
}

#[test]
fn stacks_become_a_labelled_symbolized_profile() {
    assert_eq!(leaf_function_of_the_test(1), 2);
    let pid = std::process::id();
    let leaf = leaf_function_of_the_test as *const () as u64;
    let kernel = Kallsyms::read().unwrap();
    // A kernel address when this user may see them; the test checks user frames
    // either way.
    let kernel_addr = (!kernel.is_empty())
        .then(|| {
            std::fs::read_to_string("/proc/kallsyms")
                .unwrap()
                .lines()
                .find(|l| l.ends_with(" T ksys_write") || l.ends_with(" T do_syscall_64"))
                .and_then(|l| u64::from_str_radix(l.split(' ').next().unwrap(), 16).ok())
        })
        .flatten();
    let stacks = vec![
        CapturedStack {
            pid,
            tid: pid,
            user: vec![leaf],
            kernel: Vec::new(),
            count: 3,
        },
        CapturedStack {
            pid,
            tid: pid,
            // An address in no mapping: kept, named after its address.
            user: vec![0x10, leaf + 1],
            kernel: kernel_addr.map(|a| vec![a + 4]).unwrap_or_default(),
            count: 1,
        },
    ];
    let interval = Interval {
        start_nanos: 1_796_042_360_000_000_000,
        duration_nanos: 10_000_000_000,
        frequency_hz: 19,
    };
    let mut sym = Symbolizer::new();
    let mut procs = ProcessInfo::new();
    let (profile, report) = build_profile(&stacks, interval, &mut sym, &mut procs);
    // Valid: it survives encoding and decoding with every id checked.
    let p = decode(&encode(&profile)).unwrap();
    assert_eq!(p.sample_type_names(), ["samples/count", "cpu/nanoseconds"]);
    assert_eq!(p.period, 1_000_000_000 / 19);
    assert_eq!(
        (p.time_nanos, p.duration_nanos),
        (interval.start_nanos, interval.duration_nanos)
    );
    assert_eq!(p.total(0), 4);
    assert_eq!(p.total(1), 4 * (1_000_000_000 / 19));
    assert_eq!(report.samples, 4);
    let first = stack_names(&p, 0);
    // The leaf location is the test's function, with what an optimized build inlined
    // into it (`wrapping_add`) as its inner lines.
    let leaf_lines = &p.locations[p.samples.stack(0)[0] as usize].lines;
    let outer = leaf_lines
        .last()
        .map(|l| p.str(p.functions[l.function as usize].name));
    assert!(
        outer.is_some_and(|n| n.ends_with("leaf_function_of_the_test")),
        "{first:?}"
    );
    let second = stack_names(&p, 1);
    if kernel_addr.is_some() {
        assert!(
            second[0] == "ksys_write" || second[0] == "do_syscall_64",
            "kernel frame first: {second:?}"
        );
    }
    let unknown = second
        .iter()
        .find(|n| n.starts_with("[unknown]+0x"))
        .unwrap();
    assert_eq!(unknown, "[unknown]+0x10");
    // Labels of the process and thread, and the machine.
    let labels: Vec<(String, String)> = p
        .sample_labels(0)
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let get = |k: &str| {
        labels
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(get("pid"), Some(pid.to_string()));
    assert_eq!(get("tid"), Some(pid.to_string()));
    assert!(get("comm").is_some_and(|c| !c.is_empty()));
    assert!(get("executable").is_some_and(|e| e.starts_with('/')));
    assert!(get("node").is_some());
    // The mapping keeps the binary and its build id for later symbolization.
    let loc = &p.locations[p.samples.stack(0)[0] as usize];
    let mapping = &p.mappings[loc.mapping.unwrap() as usize];
    assert_eq!(loc.address, leaf);
    assert!(mapping.memory_start <= leaf && leaf < mapping.memory_limit);
    assert!(p.str(mapping.filename).starts_with('/'));
    // A one-frame user stack does not reach a thread's entry point.
    assert!(
        report
            .warning()
            .unwrap()
            .starts_with("stack may be incomplete: no frame pointers in ")
    );
}

#[test]
fn a_walk_that_went_astray_is_blamed_on_the_binary_it_left_and_a_gone_process_on_its_exit() {
    assert_eq!(leaf_function_of_the_test(1), 2);
    let pid = std::process::id();
    let leaf = leaf_function_of_the_test as *const () as u64;
    // Above Linux's largest pid (2^22): no such process, no maps.
    let gone = 5_000_000;
    let stacks = vec![
        CapturedStack {
            pid,
            tid: pid,
            // What a frame pointer used for data gives: a "return address" in no mapping.
            user: vec![leaf, 0xe9b5_dba5_b5c0_fbcf],
            kernel: Vec::new(),
            count: 2,
        },
        CapturedStack {
            pid: gone,
            tid: gone,
            user: vec![0x40_1000, 0x40_2000],
            kernel: Vec::new(),
            count: 5,
        },
    ];
    let interval = Interval {
        start_nanos: 1_796_042_360_000_000_000,
        duration_nanos: 10_000_000_000,
        frequency_hz: 19,
    };
    let (_, report) = build_profile(
        &stacks,
        interval,
        &mut Symbolizer::new(),
        &mut ProcessInfo::new(),
    );
    let exe = std::env::current_exe().unwrap();
    let exe = exe.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        report.incomplete.into_iter().collect::<Vec<_>>(),
        [(exe.to_string(), 2)]
    );
    assert_eq!(report.exited, 5);
}

/// A node's files as a kubelet lays them out, under a temporary root: processes in
/// three pods (systemd and cgroupfs cgroups, v2 and v1), one outside any pod, and one
/// whose cgroup file is garbage.
mod faked_node {
    use std::path::Path;

    use capture::recorder::{CapturedStack, HostPaths, Interval, ProcessInfo, build_profile};
    use capture::symbols::Symbolizer;
    use flint_fixture_gen::Scratch;

    const WEB_ID: &str = "3f1c6b8a9d2e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c";
    const API_ID: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
    const DB_ID: &str = "0000111122223333444455556666777788889999aaaabbbbccccddddeeeeffff";
    const WEB_UID: &str = "8d4f2a10-5b3c-4e7f-9a1b-2c3d4e5f6a7b";
    const API_UID: &str = "11112222-3333-4444-5555-666677778888";
    const DB_UID: &str = "99998888-7777-6666-5555-444433332222";
    /// Above Linux's largest pid (2^22): no real process answers for them.
    const WEB: u32 = 5_000_001;
    const API: u32 = 5_000_002;
    const DB: u32 = 5_000_003;
    const HOST: u32 = 5_000_004;
    const GARBLED: u32 = 5_000_005;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn process(root: &Path, pid: u32, comm: &str, cgroup: &str) {
        write(&root.join(format!("proc/{pid}/comm")), &format!("{comm}\n"));
        write(
            &root.join(format!("proc/{pid}/task/{pid}/comm")),
            &format!("{comm}\n"),
        );
        write(&root.join(format!("proc/{pid}/cgroup")), cgroup);
    }

    fn node(root: &Path) {
        write(&root.join("proc/sys/kernel/hostname"), "node-7\n");
        let logs = root.join("var/log");
        // web: systemd cgroup v2, named by /var/log/containers (a link into pods/).
        process(
            root,
            WEB,
            "nginx",
            &format!(
                "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{WEB_ID}.scope\n",
                WEB_UID.replace('-', "_")
            ),
        );
        write(
            &logs.join(format!("pods/shop_web-7d9f_{WEB_UID}/nginx/0.log")),
            "",
        );
        std::fs::create_dir_all(logs.join("containers")).unwrap();
        std::os::unix::fs::symlink(
            format!("/var/log/pods/shop_web-7d9f_{WEB_UID}/nginx/0.log"),
            logs.join(format!("containers/web-7d9f_shop_nginx-{WEB_ID}.log")),
        )
        .unwrap();
        // api: cgroupfs under cgroup v1 beside a root v2 line; two containers, the
        // one whose log links to its id (Docker's layout) is it.
        process(
            root,
            API,
            "api-server",
            &format!("12:pids:/kubepods/burstable/pod{API_UID}/{API_ID}\n0::/\n"),
        );
        let api = logs.join(format!("pods/billing_api-5c8_{API_UID}"));
        std::fs::create_dir_all(api.join("app")).unwrap();
        std::os::unix::fs::symlink(
            format!("/var/lib/docker/containers/{API_ID}/{API_ID}-json.log"),
            api.join("app/0.log"),
        )
        .unwrap();
        write(&api.join("istio-proxy/0.log"), "");
        // db: a single container whose logs are plain files (containerd).
        process(
            root,
            DB,
            "postgres",
            &format!("0::/kubepods/besteffort/pod{DB_UID}/{DB_ID}\n"),
        );
        write(
            &logs.join(format!("pods/data_db-0_{DB_UID}/postgres/1.log")),
            "",
        );
        // Not in a pod, and a garbled cgroup file.
        process(root, HOST, "sshd", "0::/system.slice/ssh.service\n");
        process(
            root,
            GARBLED,
            "odd",
            "\u{0}::\n:::\nkubepods\n0::/kubepods/podzz/\n",
        );
        // A malformed log folder and file names are skipped.
        std::fs::create_dir_all(logs.join("pods/no-underscores")).unwrap();
        write(&logs.join("containers/not-a-container.log"), "");
    }

    /// The profile of one sample of each of `pids`, labelled from the node at `paths`.
    fn one_sample_each(pids: &[u32], paths: HostPaths) -> profile_model::Profile {
        let stacks: Vec<CapturedStack> = (pids.iter())
            .map(|&pid| CapturedStack {
                pid,
                tid: pid,
                user: vec![0x1000],
                kernel: Vec::new(),
                count: 1,
            })
            .collect();
        let interval = Interval {
            start_nanos: 1_796_042_360_000_000_000,
            duration_nanos: 10_000_000_000,
            frequency_hz: 19,
        };
        let mut procs = ProcessInfo::with_paths(paths);
        build_profile(&stacks, interval, &mut Symbolizer::new(), &mut procs).0
    }

    #[test]
    fn samples_in_pods_are_labelled_with_namespace_pod_and_container() {
        let root = Scratch::new("faked-node");
        node(&root);
        let p = one_sample_each(&[WEB, API, DB, HOST, GARBLED], HostPaths::under(&root));
        let labels = |pid: u32| -> Vec<(String, String)> {
            let i = (0..p.samples.len())
                .find(|&i| {
                    p.sample_labels(i)
                        .any(|(k, v)| k == "pid" && v == pid.to_string())
                })
                .unwrap();
            let mut labels: Vec<(String, String)> = p
                .sample_labels(i)
                .filter(|(k, _)| {
                    [
                        "namespace",
                        "pod",
                        "container",
                        "container_id",
                        "node",
                        "comm",
                    ]
                    .contains(k)
                })
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            labels.sort();
            labels
        };
        let pod = |comm: &str, id: &str, ns: &str, pod: &str, container: &str| {
            let mut expected: Vec<(String, String)> = [
                ("comm", comm),
                ("container", container),
                ("container_id", id),
                ("namespace", ns),
                ("node", "node-7"),
                ("pod", pod),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            expected.sort();
            expected
        };
        assert_eq!(
            labels(WEB),
            pod("nginx", WEB_ID, "shop", "web-7d9f", "nginx")
        );
        assert_eq!(
            labels(API),
            pod("api-server", API_ID, "billing", "api-5c8", "app")
        );
        assert_eq!(
            labels(DB),
            pod("postgres", DB_ID, "data", "db-0", "postgres")
        );
        let plain = |comm: &str| {
            vec![
                ("comm".to_string(), comm.to_string()),
                ("node".to_string(), "node-7".to_string()),
            ]
        };
        assert_eq!(labels(HOST), plain("sshd"));
        assert_eq!(labels(GARBLED), plain("odd"));
    }

    /// A tiny kubelet on 127.0.0.1: answers each `GET /pods` with `json`, and keeps the
    /// requests' Authorization headers.
    fn kubelet(json: String) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let heard = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                let mut auth = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                    if let Some(v) = line
                        .strip_prefix("authorization: ")
                        .or(line.strip_prefix("Authorization: "))
                    {
                        auth = v.trim().to_string();
                    }
                    line.clear();
                }
                heard.lock().unwrap().push(auth);
                let mut out = stream;
                let _ = write!(
                    out,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{json}",
                    json.len()
                );
            }
        });
        (url, seen)
    }

    /// Where the node's logs are not mounted, the kubelet's pod list names the pods,
    /// asked once an interval with the token given.
    #[test]
    fn without_logs_the_kubelet_names_the_pods() {
        let root = Scratch::new("faked-node-kubelet");
        node(&root);
        std::fs::remove_dir_all(root.join("var/log")).unwrap();
        let json = format!(
            r#"{{"kind":"PodList","items":[{{"metadata":{{"name":"web-7d9f","namespace":"shop","uid":"{WEB_UID}"}},
               "status":{{"containerStatuses":[{{"name":"nginx","containerID":"containerd://{WEB_ID}"}}]}}}}]}}"#
        );
        let (url, seen) = kubelet(json);
        let paths = HostPaths {
            kubelet: Some(capture::recorder::Kubelet {
                url,
                token: Some("t0ken\n".into()),
                insecure_tls: false,
            }),
            ..HostPaths::under(&root)
        };
        let p = one_sample_each(&[WEB, DB], paths);
        let label = |pid: u32, key: &str| {
            let i = (0..p.samples.len())
                .find(|&i| {
                    p.sample_labels(i)
                        .any(|(k, v)| k == "pid" && v == pid.to_string())
                })
                .unwrap();
            p.sample_labels(i).find(|(k, _)| *k == key).map(|(_, v)| v)
        };
        assert_eq!(label(WEB, "namespace").as_deref(), Some("shop"));
        assert_eq!(label(WEB, "pod").as_deref(), Some("web-7d9f"));
        assert_eq!(label(WEB, "container").as_deref(), Some("nginx"));
        assert_eq!(label(DB, "pod"), None, "the kubelet does not list it");
        assert_eq!(label(DB, "container_id").as_deref(), Some(DB_ID));
        assert_eq!(
            *seen.lock().unwrap(),
            ["Bearer t0ken"],
            "asked once, with the token"
        );
    }
}
