#!/usr/bin/env bash
# Installs Garage (https://garagehq.deuxfleurs.fr), the S3-compatible server the fleet
# tests run on 127.0.0.1 (cli/tests/fleet.rs), into .tools/bin/garage. Built from crates.io
# (about 10-15 minutes on two cores, once; the binary is kept after). Only the SQLite
# metadata engine is built: the tests need nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."
version=2.5.0
bin=.tools/bin/garage
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "$version"; then
  exit 0
fi
echo "building garage $version into .tools/ (once)"
CARGO_TARGET_DIR=.tools/garage-target cargo install garage --version "$version" --locked \
  --no-default-features --features bundled-libs,sqlite --root .tools --quiet
rm -rf .tools/garage-target
"$bin" --version
