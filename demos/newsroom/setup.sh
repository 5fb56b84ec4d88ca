#!/bin/sh
# The newsroom: five AI workers hired from roles/, a stream between each
# pair of hands. Run from anywhere while `helix-org serve` runs; it calls
# the owner's tools through `helix-org call` (HELIX_ORG: the binary).
set -eu
hx=${HELIX_ORG:-bin/helix-org}
dir=$(dirname "$0")

. "$dir/../hire.sh"

for s in wire pitches assignments research drafts checked published; do
	"$hx" call --exists-ok create_stream id="s-$s" name="$s"
done
hire editor-in-chief "Editor-in-chief" "" s-pitches s-checked
hire scout "News scout" p-editor-in-chief s-wire
hire researcher "Researcher" p-editor-in-chief s-assignments
hire journalist "Journalist" p-editor-in-chief s-research
hire fact-checker "Fact-checker" p-editor-in-chief s-drafts
"$hx" call --exists-ok invite_workers stream=s-published workers='["w-owner"]'
