#!/bin/sh
# Runs the test engine named by its first argument (from this directory) with the other
# arguments as a child, not with `exec`, as a careless wrapper script does: the wrapper is
# the client's child and the engine its grandchild.
dir=$(dirname "$0")
engine=$1
shift
"$dir/$engine" "$@"
status=$?
exit $status
