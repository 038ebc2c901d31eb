# Sourced by scripts/rustc-remap and scripts/cc-remap: sets `prefixes`, the
# `FROM=TO` pairs that map every path differing between checkouts, users and target
# directories to a fixed name. Later pairs win where several match, so the most
# specific comes last: the checkout (/flint), the cargo home (/cargo) as given and as
# the file system resolves it (a compiler's working folder is the resolved path), and
# a build script's OUT_DIR (/out).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
home=${CARGO_HOME:-$HOME/.cargo}
prefixes=("$root=/flint" "$home=/cargo")
for part in "" /registry /git; do
  if resolved=$(cd "$home$part" 2>/dev/null && pwd -P) && [[ $resolved != "$home$part" ]]; then
    prefixes+=("$resolved=/cargo$part")
  fi
done
if [[ -n ${OUT_DIR:-} ]]; then
  prefixes+=("$OUT_DIR=/out")
fi
