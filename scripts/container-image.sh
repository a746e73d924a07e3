#!/usr/bin/env bash
# Builds the `copper` container image from deploy/Containerfile without any registry, and
# runs it once as a fleet worker against a store on this host (docs/FLEET-K8S.md, "Built
# and run here"). Not part of the test command.
#
#   scripts/container-image.sh            # build localhost/copper:dev, then the smoke run
#   scripts/container-image.sh --build    # build only
#
# Needs podman and debootstrap (Debian packages: `apt-get install podman debootstrap`).
# The base is a Debian 12 root filesystem made by debootstrap from Debian's own packages
# (cached in ${COPPER_TOOLS:-~/.cache/copper-tools}/debian-bookworm-minbase.tar); the
# binary is this checkout's release build (Debian 12 host, same glibc), stripped. Where
# a registry is reachable, `podman build -f deploy/Containerfile .` builds from source.
#
# The smoke run: a Garage server on 127.0.0.1 (scripts/install-garage.sh), `copper
# trainer` on the host with the quick preset cut to one generation of 16 games, and one
# `copper worker` in the container (host network) that plays them; the script checks that
# the run finished and that the games in the store are the container worker's.
set -euo pipefail
cd "$(dirname "$0")/.."
build_only=false
[[ "${1:-}" == "--build" ]] && build_only=true

tools="${COPPER_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/copper-tools}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
base_tar="$tools/debian-bookworm-minbase.tar"
base_image=localhost/copper-base:bookworm
image="${COPPER_IMAGE:-localhost/copper:dev}"
for tool in podman debootstrap; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install podman debootstrap" >&2; exit 1; }
done

# podman's defaults (crun, the host's rlimits copied in) fail in some VMs and containers
# (cgroups v1/v2 hybrid, RLIMIT_NPROC not settable): fall back to runc with explicit limits.
podman=(podman)
run_flags=()
probe() { "${podman[@]}" run --rm "${run_flags[@]}" "$base_image" true >/dev/null 2>&1; }

if [[ ! -f "$base_tar" ]]; then
  echo "debootstrap: Debian 12 (minbase, ca-certificates) from $mirror"
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase --include=ca-certificates bookworm "$root/rootfs" "$mirror" > "$root/debootstrap.log" 2>&1 \
    || { tail -20 "$root/debootstrap.log" >&2; exit 1; }
  rm -rf "$root/rootfs/var/cache/apt/archives/"*.deb "$root/rootfs/var/lib/apt/lists/"*
  mkdir -p "$tools"
  tar -C "$root/rootfs" -cf "$base_tar.part" . && mv "$base_tar.part" "$base_tar"
fi
"${podman[@]}" image exists "$base_image" || "${podman[@]}" import "$base_tar" "$base_image" >/dev/null
if ! probe; then
  podman=(podman --runtime runc)
  run_flags=(--ulimit "nofile=$(ulimit -n):$(ulimit -n)" --ulimit nproc=4096:4096)
  probe || { echo "podman cannot run a container here (tried crun, then runc with explicit rlimits)" >&2; exit 1; }
  echo "podman: runc with explicit rlimits (crun failed here)"
fi

echo "cargo build --release -p cli"
cargo build --release -p cli --locked
context=$(mktemp -d)
trap 'rm -rf "$context" "${root:-}"' EXIT
mkdir -p "$context/target/release"
strip -o "$context/target/release/copper" target/release/copper
cp -r configs models "$context/"
started=$(date +%s)
"${podman[@]}" build "${run_flags[@]}" --network=host -f deploy/Containerfile \
  --build-arg RUNTIME_IMAGE="$base_image" --build-arg BINARY=prebuilt -t "$image" "$context" > "$context/build.log" 2>&1 \
  || { tail -30 "$context/build.log" >&2; exit 1; }
echo "built $image in $(( $(date +%s) - started )) s: $("${podman[@]}" image inspect "$image" --format '{{.Size}}') bytes"
"${podman[@]}" run --rm "${run_flags[@]}" "$image" --version
$build_only && exit 0

# --- The smoke run: Garage on the host, the trainer on the host, a worker in the image.
garage=$(bash scripts/install-garage.sh --path)
[[ -x "$garage" ]] || { echo "$garage is missing: run scripts/install-garage.sh" >&2; exit 1; }
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "${podman[@]}" rm -f copper-smoke-worker >/dev/null 2>&1 || true
  rm -rf "$work" "$context" "${root:-}"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
s3=$(free_port); rpc=$(free_port)
cat > "$work/garage.toml" <<EOF
metadata_dir = "$work/meta"
data_dir = "$work/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:$rpc"
rpc_public_addr = "127.0.0.1:$rpc"
rpc_secret = "$(printf '1%.0s' {1..64})"
[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:$s3"
EOF
"$garage" -c "$work/garage.toml" server > "$work/garage.log" 2>&1 &
pids+=($!)
for _ in $(seq 600); do node=$("$garage" -c "$work/garage.toml" node id -q 2>/dev/null) && break; sleep 0.2; done
node=${node%%@*}
key_id=GK00000000000000000000c0ff
secret=00000000000000000000000000000000000000000000000000000000000c0ffe
g() { "$garage" -c "$work/garage.toml" "$@" > /dev/null; }
g layout assign -z dc1 -c 1G "$node"
g layout apply --version 1
g bucket create copper
g key import --yes -n copper "$key_id" "$secret"
g bucket allow --read --write --owner copper --key copper
export AWS_ACCESS_KEY_ID=$key_id AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=garage AWS_ENDPOINT_URL=http://127.0.0.1:$s3
store=s3://copper/smoke

# The quick preset, one generation of 16 games, no teacher stage.
python3 - "$work/run.toml" <<'EOF'
import sys
text = open("configs/quick.toml").read()
out = []
section = ""
for line in text.splitlines():
    s = line.strip()
    if s.startswith("["):
        section = s.split("]")[0].strip("[")
    key = s.split("=")[0].strip() if "=" in s and not s.startswith("#") else None
    if section == "" and key == "generations": line = "generations = 1"
    if section == "" and key == "threads": line = "threads = 1"
    if section == "selfplay" and key == "games": line = "games = 16"
    if section == "teacher" and key == "games": line = "games = 0"
    out.append(line)
open(sys.argv[1], "w").write("\n".join(out) + "\n")
EOF
started=$(date +%s)
target/release/copper trainer --store "$store" --id host-trainer --work-dir "$work/trainer" --config "$work/run.toml" --quiet \
  > "$work/trainer.log" 2>&1 &
trainer=$!
pids+=($trainer)
"${podman[@]}" run -d --name copper-smoke-worker "${run_flags[@]}" --network=host \
  -e AWS_ACCESS_KEY_ID -e AWS_SECRET_ACCESS_KEY -e AWS_REGION -e AWS_ENDPOINT_URL \
  "$image" worker --store "$store" --id container-worker --threads 1 --quiet > /dev/null
if ! wait "$trainer"; then
  echo "the trainer failed:" >&2; tail -20 "$work/trainer.log" >&2
  "${podman[@]}" logs copper-smoke-worker 2>&1 | tail -20 >&2
  exit 1
fi
"${podman[@]}" wait copper-smoke-worker > /dev/null || true
echo "run finished in $(( $(date +%s) - started )) s; the container worker's log:"
"${podman[@]}" logs copper-smoke-worker 2>&1 | tail -5
grep -q "^gen 1" "$work/trainer.log" || { echo "the trainer did not finish generation 1" >&2; tail -20 "$work/trainer.log" >&2; exit 1; }
tail -n 3 "$work/trainer.log"
# Every game of generation 1 came from the container's worker (the trainer's copy of the run).
ours=$(find "$work/trainer" -path "*gen-0001/container-worker/*" -name "*.shard" | wc -l)
others=$(find "$work/trainer" -path "*gen-0001/*" -name "*.shard" -not -path "*container-worker*" | wc -l)
[[ "$ours" -gt 0 && "$others" -eq 0 ]] || { echo "game files: $ours from the container worker, $others from others" >&2; exit 1; }
echo "ok: the image's worker played the run's games ($ours game files) against Garage on the host"
