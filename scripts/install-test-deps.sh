#!/usr/bin/env bash
# Installs what the test suite needs beyond Rust:
# - Fairy-Stockfish, the independent engine the move generator is cross-checked against,
#   and GPSShogi: the external USI engines the arena plays (Debian packages);
# - cshogi (PyPI, into .venv-test/): reads our KIF and CSA records back, and drives our
#   USI engine as a third-party client;
# - chromium (Debian): the headless browser the viewer's pages are tested in
#   (viewer/tests/browser.rs), and a CJK font (fonts-wqy-zenhei) for its kanji;
# - Garage (crates.io): the S3-compatible server the fleet tests run against
#   (cli/tests/fleet.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-engines.sh
command -v bc >/dev/null || { [ "$(id -u)" -eq 0 ] && apt-get install -y -qq bc >/dev/null || true; }
bash scripts/install-cshogi.sh >/dev/null
bash scripts/install-garage.sh
# A CJK font, so that the pages' kanji draw as kanji in the screenshots under docs/.
if ! fc-list 2>/dev/null | grep -qi wqy; then
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-wqy-zenhei >/dev/null
fi
if [ ! -x /usr/bin/chromium ]; then
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
