#!/usr/bin/env bash
# Installs what the test suite needs beyond Rust: Fairy-Stockfish, the independent
# engine the move generator is cross-checked against (Debian package fairy-stockfish).
set -euo pipefail
if [ ! -x /usr/games/fairy-stockfish ]; then
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq fairy-stockfish bc >/dev/null
fi
command -v bc >/dev/null || { [ "$(id -u)" -eq 0 ] && apt-get install -y -qq bc >/dev/null || true; }
