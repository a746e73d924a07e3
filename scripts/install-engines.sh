#!/usr/bin/env bash
# Installs the external USI engines the arena's tests play against (Debian packages):
#   fairy-stockfish  /usr/games/fairy-stockfish — speaks USI when its first command is `usi`
#   gpsshogi         /usr/games/gpsusi — GPSShogi's USI binary (its data: gpsshogi-data)
# Prints nothing when both are already installed.
set -euo pipefail
missing=()
[ -x /usr/games/fairy-stockfish ] || missing+=(fairy-stockfish)
[ -x /usr/games/gpsusi ] || missing+=(gpsshogi)
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
