#!/usr/bin/env bash
# make lean-compare: helix-org serve from two commits side by side —
# BASE (default aa9d46f, issue #35's baseline) and this tree — each
# figure measured in rounds that interleave the two, printed as medians
# with the machine's load (cmd/helix-org-load -compare). Both binaries
# are built the same way (go build, no flags). Knobs: BASE, LEAN_ROUNDS
# (5), LEAN_EVENTS (100000 events in the big database), LEAN_WORKERS
# (100 AI workers), LEAN_CALLS (200 calls per client), LEAN_LONG_IDLE
# (35s: memory read past serve's long quiet, once each after the rounds). Not run by CI.
set -euo pipefail

base=${BASE:-aa9d46f}
dir=$(mktemp -d "${TMPDIR:-/tmp}/helix-org-lean.XXXXXX")
trap 'rm -rf "$dir"' EXIT

mkdir "$dir/base-src"
git archive "$base" | tar -x -C "$dir/base-src"
(cd "$dir/base-src" && go build -o "$dir/base" ./cmd/helix-org)
go build -o "$dir/head" ./cmd/helix-org
go build -o "$dir/load" ./cmd/helix-org-load
echo "lean-compare: base = $(git rev-parse --short "$base"), head = $(git describe --always --dirty)"
"$dir/load" -compare "base=$dir/base,head=$dir/head" -rounds "${LEAN_ROUNDS:-5}" \
	-big-events "${LEAN_EVENTS:-100000}" -big-workers "${LEAN_WORKERS:-100}" -calls "${LEAN_CALLS:-200}" -long-idle "${LEAN_LONG_IDLE:-35s}"
