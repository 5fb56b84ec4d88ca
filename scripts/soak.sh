#!/usr/bin/env bash
# make soak: helix-org serve in a process of its own, on a fresh SQLite
# database in a temporary directory, under a steady load — each tick a
# publish, an inbound webhook and a read_events — for SOAK_DURATION,
# printing the server's resident memory, Go heap, goroutines and open
# files each minute (cmd/helix-org-load -soak). Knobs: SOAK_DURATION
# (default 20m), SOAK_RATE ticks a second (20), SOAK_CLIENTS connections
# (4), SOAK_ADDR (127.0.0.1:18080), SOAK_BIN a helix-org binary to soak
# instead of this tree's (to compare with another commit). Not run by CI.
set -euo pipefail

duration=${SOAK_DURATION:-20m}
rate=${SOAK_RATE:-20}
clients=${SOAK_CLIENTS:-4}
addr=${SOAK_ADDR:-127.0.0.1:18080}
dir=$(mktemp -d "${TMPDIR:-/tmp}/helix-org-soak.XXXXXX")
pid=

cleanup() {
	if [[ -n $pid ]]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT

bin=${SOAK_BIN:-}
if [[ -z $bin ]]; then
	go build -o "$dir/helix-org" ./cmd/helix-org
	bin=$dir/helix-org
fi
go build -o "$dir/helix-org-load" ./cmd/helix-org-load

token=$("$bin" bootstrap --init --db "$dir/org.db" | awk '$1 == "Token:" {print $2}')
if [[ $token != hxo_* ]]; then
	echo "soak: bootstrap printed no owner token" >&2
	exit 1
fi
"$bin" serve --db "$dir/org.db" --addr "$addr" --envs-dir "$dir/envs" --log-level warn >"$dir/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
	curl -fsS "http://$addr/healthz" >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { cat "$dir/serve.log" >&2; exit 1; }
	sleep 0.2
done
echo "soak: server pid $pid on $addr ($bin), database $dir/org.db"
"$dir/helix-org-load" -soak "$duration" -rate "$rate" -clients "$clients" -url "http://$addr/workers/w-owner/mcp" -token "$token"
