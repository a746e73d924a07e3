#!/bin/bash
# Runs the network-size arms once both 16,000-step distills are done.
cd /work/main
while pgrep -f distill16k.sh > /dev/null; do sleep 60; done
data/exp/arm-net.sh > data/exp/arm-net.out 2>&1
