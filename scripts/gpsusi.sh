#!/bin/sh
# GPSShogi's USI engine with a private OSL_HOME: gpsusi saves every `setoption` into
# $OSL_HOME/gpsusi.conf (by default the system's /usr/share/gpsshogi-data), which would
# change its defaults for every later run. A per-user directory with a link to the real
# data keeps runs independent. Arguments are passed on (e.g. -N 1 for one thread).
set -e
home="${TMPDIR:-/tmp}/copper-gpsusi-$(id -u)"
mkdir -p "$home"
[ -e "$home/data" ] || ln -s /usr/share/gpsshogi-data/data "$home/data" 2>/dev/null || true
export OSL_HOME="$home"
exec /usr/games/gpsusi "$@"
