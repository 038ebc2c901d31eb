//! Names in the window: an addresses-only profile of a stripped program, opened with
//! the program given, shows its functions once the names arrive; a binary found
//! nowhere is named in the status bar.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use capture::symbolize::SymbolSources;
use egui_kittest::kittest::Queryable as _;
use flint_fixture_gen::Scratch;
use flint_fixture_gen::symbol_parts::{addresses_only_profile, function_symbol, programs_or_skip};
use profile_model::profile::{Location, Mapping};

use crate::gui::symbols::Symbols;
use crate::gui::tests::fixtures::window;

#[test]
fn an_addresses_only_profile_is_named_from_the_binary_given() {
    let dir = Scratch::new("gui-symbols");
    let Some((c, _)) = programs_or_skip(&dir) else {
        return;
    };
    let (leaf, size) = function_symbol(&c.full, "other_work").unwrap();
    let (outer, _) = function_symbol(&c.full, "outer_loop").unwrap();
    let stacks = [(vec![leaf + size / 2, outer + 8], 30)];
    let mut profile = addresses_only_profile(&c, "/opt/app/c", true, &stacks).unwrap();
    // One more sample, in a library found nowhere.
    profile.strings.push("/usr/lib/libpq.so.5".into());
    profile.mappings.push(Mapping {
        memory_start: 0x7f00_0000_0000,
        memory_limit: 0x7f00_0010_0000,
        filename: (profile.strings.len() - 1) as u32,
        ..Mapping::default()
    });
    profile.locations.push(Location {
        mapping: Some(1),
        address: 0x7f00_0000_1234,
        ..Location::default()
    });
    let libpq = (profile.locations.len() - 1) as u32;
    profile.samples.stack_locations.push(libpq);
    let end = profile.samples.stack_locations.len() as u32;
    profile.samples.stack_offsets.push(end);
    profile.samples.values[0].push(10);
    profile.samples.label_set.push(0);
    let path = dir.join("agent.pb.gz");
    std::fs::write(&path, profile_model::codec::encode_gzip(&profile)).unwrap();

    // As it came: no names.
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_path(&ctx, path.clone());
    h.run_steps(4);
    assert!(h.query_by_label("other_work").is_none());

    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().symbols = Symbols::new(SymbolSources {
        binaries: vec![c.stripped.clone(), c.full.clone()],
        ..SymbolSources::default()
    });
    h.state_mut().open_path(&ctx, path);
    h.run_steps(6);
    h.get_by_label("other_work");
    h.get_by_label("outer_loop");
    h.get_by_label("1 address unnamed: libpq.so.5 (1): no symbols on this machine");
    assert!(h.state().symbols.job().is_none());
}
