#!/bin/bash
# Every 20 s: the CPU seconds (user + system, children included once they end) of each
# running `train` of an arm, so that each generation's CPU cost is known from the models'
# mtimes. Columns: unix time, run dir, CPU seconds.
CLK=$(getconf CLK_TCK)
while true; do
  for pid in $(pgrep -f "copper-(b3|i8|psw) train"); do
    cfg=$(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | grep -o "data/exp/[a-z0-9]*/" | head -1)
    s=$(awk -v c=$CLK '{print ($14+$15+$16+$17)/c}' /proc/$pid/stat 2>/dev/null)
    [ -n "$s" ] && echo "$(date +%s) $cfg $s"
  done
  sleep 20
done
