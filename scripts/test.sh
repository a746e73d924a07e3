#!/usr/bin/env bash
# The project's test command: installs what the tests need, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
# Formatting and lints first: cheap, and a failure says exactly where.
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release
