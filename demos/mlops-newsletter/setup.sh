#!/bin/sh
# MLOps Weekly: an editor, a researcher and a journalist hired from roles/,
# and the email stream the issue goes out on. Run while `helix-org serve`
# runs, after `config set transport.postmark` (see README.md).
set -eu
hx=${HELIX_ORG:-bin/helix-org}
dir=$(dirname "$0")

. "$dir/../hire.sh"

for s in editorial research writing review; do
	"$hx" call --exists-ok create_stream id="s-$s" name="$s"
done
"$hx" call --exists-ok create_stream id=s-newsletter name=newsletter transport='{"kind":"email","config":{"alias":"newsletter"}}'
hire editor "Editor" "" s-editorial s-review
hire researcher "Researcher" p-editor s-research
hire journalist "Journalist" p-editor s-writing
"$hx" call --exists-ok invite_workers stream=s-newsletter workers='["w-owner"]'
