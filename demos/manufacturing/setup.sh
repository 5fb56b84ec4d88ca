#!/bin/sh
# Line 3: a quality bot hired from roles/, the line's Slack channel and the
# MES stream. Run while `helix-org serve` runs, after
# `config set transport.slack` (see README.md). SLACK_CHANNEL is the
# channel's id (default C0LINE3).
set -eu
hx=${HELIX_ORG:-bin/helix-org}
dir=$(dirname "$0")
channel=${SLACK_CHANNEL:-C0LINE3}

"$hx" call --exists-ok create_stream id=s-floor name="line 3" transport="{\"kind\":\"slack\",\"config\":{\"channel\":\"$channel\"}}"
"$hx" call --exists-ok create_stream id=s-line name="line 3 MES"
"$hx" call --exists-ok create_role id=r-quality-bot title="Quality bot" content="$(cat "$dir/roles/quality-bot.md")"
"$hx" call --exists-ok create_position id=p-quality-bot role=r-quality-bot title="Quality bot, line 3"
"$hx" call --exists-ok hire_worker id=w-quality-bot position=p-quality-bot kind=ai name="Quality bot" grants='["publish","read_events"]'
"$hx" call --exists-ok invite_workers stream=s-floor workers='["w-quality-bot","w-owner"]'
"$hx" call --exists-ok invite_workers stream=s-line workers='["w-quality-bot","w-owner"]'
