#!/bin/sh
# The docs repository's engineer: a github stream for its issues, the
# engineer hired from roles/, and its clone of the repository. Run while
# `helix-org serve` runs, with ORIGIN the repository to clone (a path or a
# URL git can push to without asking), GITHUB_REPO its owner/name on GitHub
# and HELIX_ORG_ENVS_DIR serve's --envs-dir (default ./envs).
set -eu
hx=${HELIX_ORG:-bin/helix-org}
dir=$(dirname "$0")
envs=${HELIX_ORG_ENVS_DIR:-./envs}

if [ -d "$envs/w-engineer/repo/.git" ]; then
	echo "$envs/w-engineer/repo is already cloned: left as it is" >&2
else
	git clone -q "${ORIGIN:?set ORIGIN to the repository to clone}" "$envs/w-engineer/repo"
fi
"$hx" call --exists-ok create_stream id=s-issues name="docs issues" \
	transport="{\"kind\":\"github\",\"config\":{\"repo\":\"${GITHUB_REPO:-helixml/docs}\",\"events\":[\"issues\"]}}"
"$hx" call --exists-ok create_role id=r-engineer title="Software engineer" content="$(cat "$dir/roles/engineer.md")"
"$hx" call --exists-ok create_position id=p-engineer role=r-engineer title="Software engineer, docs"
"$hx" call --exists-ok hire_worker id=w-engineer position=p-engineer kind=ai name=Engineer grants='["publish","read_events"]'
"$hx" call --exists-ok invite_workers stream=s-issues workers='["w-engineer","w-owner"]'
