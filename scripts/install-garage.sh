#!/usr/bin/env bash
# Installs Garage (https://garagehq.deuxfleurs.fr), the S3-compatible server the fleet
# tests run on 127.0.0.1 (cli/tests/fleet*.rs). Built from crates.io (about 10-15 minutes
# on two cores) into a per-user cache outside the checkout, so every clone on the machine
# reuses it and a new version builds beside the old:
#   ${COPPER_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/copper-tools}/garage-VERSION/bin/garage
# Only the SQLite metadata engine is built: the tests need nothing else.
# `install-garage.sh --path` prints where the binary is (or would be) and builds nothing.
set -euo pipefail
version=2.5.0
root="${COPPER_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/copper-tools}/garage-$version"
bin="$root/bin/garage"
if [ "${1:-}" = "--path" ]; then
  echo "$bin"
  exit 0
fi
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "$version"; then
  exit 0
fi
echo "building garage $version into $root (once per machine)"
mkdir -p "$root"
# A build killed half-way leaves no binary behind: cargo install writes it last.
CARGO_TARGET_DIR="$root/target" cargo install garage --version "$version" --locked \
  --no-default-features --features bundled-libs,sqlite --root "$root" --quiet
rm -rf "$root/target"
"$bin" --version
