#!/usr/bin/env bash
# Checks that flint's build is reproducible to the byte: builds the current commit
# (`cargo build --release --locked`) in two fresh clones, in two different folders,
# with two different target directories and cargo homes (the second one's registry
# reached through another path, as another user's would be), then compares the
# sha256 of the two `flint` binaries. Prints both; exits 1 when they differ, and then
# keeps the folders for a look with diffoscope. Not in CI: it takes two release builds.
#
#   scripts/reproducible.sh            # the commit checked out (uncommitted changes are not built)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
commit=$(git -C "$repo" rev-parse HEAD)
home=${CARGO_HOME:-$HOME/.cargo}
work=$(mktemp -d "${TMPDIR:-/tmp}/flint-reproducible.XXXXXX")

# Side a: a plain clone with its own target/ and the usual cargo home.
# Side b: a deeper folder, CARGO_TARGET_DIR elsewhere, and a cargo home whose
# registry is the same crates under another path.
mkdir -p "$work/b/cargo-home" "$work/b/some/deeper/folder"
ln -s "$home/registry" "$work/b/cargo-home/registry"
build() {
  local dir=$1
  shift
  git clone --quiet "$repo" "$dir"
  git -C "$dir" checkout --quiet --detach "$commit"
  echo "building $commit in $dir" >&2
  (cd "$dir" && env "$@" nice cargo build --release --locked --quiet)
}
build "$work/a/flint" CARGO_HOME="$home"
build "$work/b/some/deeper/folder/flint" CARGO_HOME="$work/b/cargo-home" \
  CARGO_TARGET_DIR="$work/b/target" CARGO_NET_OFFLINE=true
a=$(sha256sum "$work/a/flint/target/release/flint" | cut -d' ' -f1)
b=$(sha256sum "$work/b/target/release/flint" | cut -d' ' -f1)
echo "commit $commit ($(git -C "$repo" log -1 --format=%cs "$commit")), built $(date -u +%Y-%m-%dT%H:%MZ)"
echo "a: $a  ($work/a/flint/target/release/flint)"
echo "b: $b  ($work/b/target/release/flint)"
if [[ $a != "$b" ]]; then
  echo "DIFFERENT: the two builds are kept in $work (compare them with diffoscope)"
  exit 1
fi
echo "identical"
rm -rf "$work"
