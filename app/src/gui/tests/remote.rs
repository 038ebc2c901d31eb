//! The window connected to a running `flint serve` (its store behind the gRPC server,
//! on a loopback port): series plotted, a range merged into a flame graph, and the
//! view kept while the server is away.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::sync::Arc;

use capture::grpc::{ServerOptions, bind, serve};
use capture::{Labels, ProfileSink, ProfileSource, QueryTime, RemoteOptions, Store, StoreOptions};
use egui_kittest::kittest::Queryable as _;
use profile_model::codec;

use crate::gui::tests::fixtures::{FILES, fixture, window};
use crate::gui::time::timeline::Origin;

/// A `flint serve` of a fresh store holding the three Go CPU profiles, placed in the
/// last minutes; stops when the returned sender is dropped.
struct Served {
    url: String,
    total: i64,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    dir: std::path::PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn serve_fixtures(tag: &str) -> Served {
    serve_fixtures_ago(tag, 0)
}

/// As [`serve_fixtures`], the profiles placed `ago` nanoseconds further back.
fn serve_fixtures_ago(tag: &str, ago: i64) -> Served {
    let dir = std::env::temp_dir().join(format!("flint-gui-serve-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Arc::new(Store::open(&dir, StoreOptions::default()).unwrap());
    let now = capture::time::now_nanos() - ago;
    let mut total = 0;
    for (i, f) in FILES.iter().enumerate() {
        let mut p = codec::decode(&std::fs::read(fixture(f)).unwrap()).unwrap();
        p.time_nanos = now - (300 - 60 * i as i64) * 1_000_000_000;
        total += p.total(p.default_sample_index());
        let labels = Labels::from([("__name__".to_string(), "process_cpu".to_string())]);
        store.write(labels, &codec::encode_gzip(&p)).unwrap();
    }
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = bind("127.0.0.1:0").await.unwrap();
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            let source: Arc<dyn ProfileSource> = store.clone();
            let sink: Arc<dyn ProfileSink> = store;
            let shutdown = async {
                let _ = rx.await;
            };
            serve(
                listener,
                source,
                Some(sink),
                ServerOptions::default(),
                shutdown,
            )
            .await
            .unwrap();
        });
    });
    let addr = addr_rx.recv().unwrap();
    Served {
        url: format!("grpc://{addr}"),
        total,
        stop: Some(tx),
        thread: Some(thread),
        dir,
    }
}

/// A window connected to the server at `url`, its first answers in.
fn connected(url: &str) -> egui_kittest::Harness<'static, crate::gui::app::FlintApp> {
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut()
        .connect_to(&ctx, url, RemoteOptions::default());
    h.run_steps(6);
    h
}

#[test]
fn the_window_plots_a_servers_series_and_merges_a_range_into_a_flame_graph() {
    let server = serve_fixtures("plot");
    let mut h = connected(&server.url);
    let ctx = h.ctx.clone();
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert_eq!(tl.origin, Origin::Server(server.url.clone()));
    assert!(tl.notice.is_none(), "{:?}", tl.notice);
    assert!(!tl.series.is_empty(), "series plotted");
    assert_eq!(tl.series.iter().map(|s| s.total).sum::<i64>(), server.total);
    assert_eq!(
        h.state().shell.connect.recent.first(),
        Some(&server.url),
        "remembered"
    );
    h.get_by_label(&server.url);
    // Merge the whole range: the server's merged profile becomes the flame graph.
    let span = tl.span;
    h.state_mut().select_time(&ctx, QueryTime::Merge(span));
    h.run_steps(6);
    let cur = h.state().view.current().expect("a profile shown");
    assert_eq!(cur.totals[0], server.total);
    h.get_by_label("flame graph");
}

#[test]
fn a_server_with_profiles_older_than_a_week_shows_them_for_a_range_asked() {
    const DAY: i64 = 86_400_000_000_000;
    let server = serve_fixtures_ago("old", 30 * DAY);
    let mut h = connected(&server.url);
    let ctx = h.ctx.clone();
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert!(tl.types.is_empty());
    let notice = tl.notice.clone().unwrap_or_default();
    assert!(
        notice.contains("no profiles") && notice.contains("range…"),
        "{notice}"
    );
    // The month before: its types, then its series.
    let now = capture::time::now_nanos();
    let tl = h.state_mut().timeline.as_mut().unwrap();
    assert!(tl.show_range(now - 40 * DAY, now - 20 * DAY));
    h.state_mut().load_series(&ctx);
    h.run_steps(8);
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.types.len(), 2, "{:?}", tl.types);
    assert!(tl.notice.is_none(), "{:?}", tl.notice);
    assert_eq!(tl.series.iter().map(|s| s.total).sum::<i64>(), server.total);
}

#[test]
fn a_stopped_server_keeps_the_view_and_says_so() {
    let server = serve_fixtures("stop");
    let mut h = connected(&server.url);
    let before = h.state().timeline.as_ref().unwrap().series.len();
    assert!(before > 0);
    let url = server.url.clone();
    drop(server);
    let options = RemoteOptions {
        retries: 0,
        ..RemoteOptions::default()
    };
    // Ask again (as the presets and retries do): the answer is "unavailable".
    h.state_mut().timeline.as_mut().unwrap().source =
        Some(Arc::new(capture::RemoteSource::new(&url, options).unwrap()));
    let ctx = h.ctx.clone();
    h.state_mut()
        .set_sum_by(&ctx, crate::gui::time::selector::SumBy::Total);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    let notice = tl.notice.clone().unwrap_or_default();
    assert!(notice.contains("unavailable"), "{notice}");
    assert_eq!(tl.series.len(), before, "the last answer stays shown");
    assert!(tl.unavailable_since.is_some(), "retried later");
    // The server is back (here: another one with the same data): the next retry gets
    // the series and the notice goes away.
    let back = serve_fixtures("back");
    let tl = h.state_mut().timeline.as_mut().unwrap();
    tl.source = Some(Arc::new(
        capture::RemoteSource::new(&back.url, RemoteOptions::default()).unwrap(),
    ));
    tl.unavailable_since = Some(std::time::Instant::now() - std::time::Duration::from_secs(10));
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert!(tl.notice.is_none(), "{:?}", tl.notice);
    assert!(tl.unavailable_since.is_none());
    assert_eq!(tl.series.iter().map(|s| s.total).sum::<i64>(), back.total);
}

#[test]
fn a_store_directory_opens_as_a_store() {
    let dir = std::env::temp_dir().join(format!("flint-gui-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut total = 0;
    {
        let store = Store::open(&dir, StoreOptions::default()).unwrap();
        for f in FILES {
            let bytes = std::fs::read(fixture(f)).unwrap();
            let p = codec::decode(&bytes).unwrap();
            total += p.total(p.default_sample_index());
            let labels = Labels::from([("__name__".to_string(), "process_cpu".to_string())]);
            store.write(labels, &bytes).unwrap();
        }
    }
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir.clone());
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert!(
        h.state().shell.error.is_none(),
        "{:?}",
        h.state().shell.error
    );
    assert_eq!(tl.profiles, Some(3));
    assert!(
        tl.warnings.is_empty(),
        "segment files are not read as pprof"
    );
    assert_eq!(tl.series.iter().map(|s| s.total).sum::<i64>(), total);

    // A torn last record (a crash while writing): the store keeps the others, and the
    // status bar says what was cut away.
    let segment = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "seg"))
        .expect("a segment file");
    let len = std::fs::metadata(&segment).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&segment)
        .unwrap()
        .set_len(len - 10)
        .unwrap();
    h.state_mut().open_dir(&ctx, dir.clone());
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.profiles, Some(2));
    assert!(
        tl.warnings.iter().any(|w| w.contains("truncated")),
        "{:?}",
        tl.warnings
    );
    assert!(
        h.query_by_label_contains("truncated").is_some(),
        "the warning is on screen"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_listener_that_never_speaks_grpc_is_named_where_the_plot_goes() {
    // It accepts the connection and says nothing (a port-forward to a pod that is
    // gone). Its error is the answer: the week was asked next, after the hour, as if
    // the hour had had no profiles, and in the window that turned it into "cancelled".
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(stream);
        }
    });
    let mut h = window();
    let ctx = h.ctx.clone();
    let url = format!("grpc://127.0.0.1:{port}");
    h.state_mut()
        .connect_to(&ctx, &url, RemoteOptions::default());
    h.run_steps(3);
    let tl = h.state().timeline.as_ref().expect("time mode");
    let said = tl.empty_plot_text().unwrap_or_default();
    assert!(
        said.contains(&format!(
            "127.0.0.1:{port} accepted the connection but sent no HTTP/2 answer"
        )) && said.contains("retrying"),
        "{said}"
    );
    assert!(tl.indexing.is_none(), "not waiting");
    assert!(tl.unavailable_since.is_some(), "asked again later");
    assert_eq!(
        accepted.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "asked once, not again for another time span"
    );
    // The server is there at last (here: another address with data): the retry opens
    // it as if it had answered the first time.
    let back = serve_fixtures("silent-back");
    let tl = h.state_mut().timeline.as_mut().unwrap();
    tl.source = Some(Arc::new(
        capture::RemoteSource::new(&back.url, RemoteOptions::default()).unwrap(),
    ));
    tl.unavailable_since = Some(std::time::Instant::now() - std::time::Duration::from_secs(10));
    h.run_steps(8);
    let tl = h.state().timeline.as_ref().unwrap();
    assert!(
        tl.unavailable_since.is_none() && tl.notice.is_none(),
        "{:?}",
        tl.notice
    );
    assert!(!tl.types.is_empty(), "its types are in");
    assert_eq!(tl.series.iter().map(|s| s.total).sum::<i64>(), back.total);
}
