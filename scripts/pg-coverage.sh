#!/usr/bin/env bash
# make pg-coverage: which packages' tests reach store code on PostgreSQL
# that no other package's tests reach. make test-postgres runs the suite
# again to check the SQL, and all of it is in store; a package that
# reaches no statement of store the others miss sends the same SQL again,
# so it belongs in the Makefile's PG_OMIT. Runs every package that can
# open a store (PG_ALL) on PostgreSQL with coverage of store and prints,
# slowest first, each one's time, the store blocks it reaches and those
# only it reaches — then the blocks only the PG_OMIT packages reach,
# which running without them gives up. Not run by CI (6–10 minutes on
# two cores).
set -euo pipefail

dir=$(mktemp -d "${TMPDIR:-/tmp}/helix-org-pgcov.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cover=github.com/helixml/helix-org/store,github.com/helixml/helix-org/store/orgdir

# One package: its profile, its log and its seconds, two at a time.
one() {
	local name=${1#github.com/helixml/helix-org/} start=$SECONDS
	name=${name//\//_}
	HELIX_ORG_TEST_DB=postgres go test -count=1 -timeout 40m -skip "$PG_SKIP" -coverpkg="$cover" \
		-coverprofile="$dir/$name.cov" "$1" >"$dir/$name.log" 2>&1 || { cat "$dir/$name.log"; return 1; }
	echo "$name $((SECONDS - start))" >>"$dir/times"
}
export -f one
export dir cover PG_SKIP
# shellcheck disable=SC2086 # a list of packages
printf '%s\n' $PG_ALL | xargs -P "$(nproc)" -I{} bash -c 'one {}'
start=$SECONDS
HELIX_ORG_TEST_DB=postgres go test -count=1 -timeout 40m -run "$PG_CMD_TESTS" -coverpkg="$cover" \
	-coverprofile="$dir/cmd_helix-org.cov" ./cmd/helix-org/ >"$dir/cmd.log" 2>&1 || { cat "$dir/cmd.log"; exit 1; }
echo "cmd_helix-org $((SECONDS - start))" >>"$dir/times"

omit=" "
for pkg in $PG_OMIT; do omit+="${pkg//\//_} "; done

# A block is file:start,end; it is reached when its count is above 0.
awk -v omit="$omit" '
FILENAME ~ /times$/ { secs[$1] = $NF; next }
FNR == 1 { pkg = FILENAME; sub(/.*\//, "", pkg); sub(/\.cov$/, "", pkg); next }
{ n = $NF; $NF = ""; sub(/ [0-9]+ $/, "", $0) }
n > 0 && !((pkg, $0) in seen) { seen[pkg, $0] = 1; reach[pkg]++; by[$0]++; who[$0] = pkg
	if (index(omit, " " pkg " ")) { byOmit[$0]++ } }
END {
	for (b in by) if (by[b] == 1) only[who[b]]++
	printf "%-40s %6s %8s %6s\n", "package", "secs", "reaches", "only"
	for (p in reach) printf "%-40s %6d %8d %6d%s\n", p, secs[p], reach[p], only[p], index(omit, " " p " ") ? "  (PG_OMIT)" : "" | "sort -k2 -rn"
	close("sort -k2 -rn")
	lost = 0; all = 0
	for (b in by) { all++; if (by[b] == byOmit[b]) { print "reached only by PG_OMIT: " b; lost++ } }
	printf "blocks of store reached: %d; reached only by PG_OMIT packages: %d\n", all, lost
}' "$dir/times" "$dir"/*.cov
