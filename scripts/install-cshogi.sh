#!/usr/bin/env bash
# Installs cshogi (PyPI), the independent reader the game-record tests check our CSA and
# KIF files against, into the project-local virtual environment .venv-test/, and prints
# the path of that environment's python. Idempotent: quiet when it is already there.
#
# Works on a fresh Debian machine as root with PyPI reachable: installs python3-venv
# (and python3 itself) with apt-get when the venv module is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
venv="$root/.venv-test"
py="$venv/bin/python"
# Pinned so that the behaviour the tests rely on does not move under them.
cshogi_spec="${CSHOGI_SPEC:-cshogi==1.1.0}"

log() { echo "install-cshogi: $*" >&2; }

if [ -x "$py" ] && "$py" -c 'import cshogi, cshogi.CSA, cshogi.KIF' >/dev/null 2>&1; then
  echo "$py"
  exit 0
fi

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; return 1
  fi
}

apt_install() {
  log "installing $* with apt-get"
  as_root apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >&2
}

if ! command -v python3 >/dev/null; then
  apt_install python3 python3-venv
fi

# A half-made environment (no python, or no pip) is made again.
if [ ! -x "$py" ] || ! "$py" -m pip --version >/dev/null 2>&1; then
  rm -rf "$venv"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    # Debian splits venv/ensurepip out of python3 (python3-venv, or python3.X-venv).
    ver="$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    apt_install python3-venv || apt_install "python${ver}-venv"
    python3 -m venv "$venv" >&2
  fi
fi

log "installing $cshogi_spec into $venv"
"$py" -m pip install -q --disable-pip-version-check "$cshogi_spec" >&2
"$py" -c 'import cshogi, cshogi.CSA, cshogi.KIF' >&2
echo "$py"
