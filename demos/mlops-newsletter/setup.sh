#!/bin/sh
# MLOps Weekly: an editor, a researcher and a journalist hired from roles/,
# and the email stream the issue goes out on. Run while `helix-org serve`
# runs, after `config set transport.postmark` (see README.md).
set -eu
hx=${HELIX_ORG:-bin/helix-org}
dir=$(dirname "$0")

# hire <name> <title> <reports-to position or ""> <streams it follows…>
hire() {
	name=$1 title=$2 boss=$3
	shift 3
	"$hx" call --exists-ok create_role id="r-$name" title="$title" content="$(cat "$dir/roles/$name.md")"
	"$hx" call --exists-ok create_position id="p-$name" role="r-$name" title="$title" ${boss:+reportsTo="$boss"}
	"$hx" call --exists-ok hire_worker id="w-$name" position="p-$name" kind=ai name="$title" grants='["publish","read_events"]'
	for s in "$@"; do
		"$hx" call --exists-ok invite_workers stream="$s" workers="[\"w-$name\"]"
	done
}

for s in editorial research writing review; do
	"$hx" call --exists-ok create_stream id="s-$s" name="$s"
done
"$hx" call --exists-ok create_stream id=s-newsletter name=newsletter transport='{"kind":"email","config":{"alias":"newsletter"}}'
hire editor "Editor" "" s-editorial s-review
hire researcher "Researcher" p-editor s-research
hire journalist "Journalist" p-editor s-writing
"$hx" call --exists-ok invite_workers stream=s-newsletter workers='["w-owner"]'
