#!/bin/sh
# Support by email: Sam answers on s-support and escalates refunds to Lee,
# the billing lead above Sam, who answers the customer on their thread.
# Run while `helix-org serve` runs, after `config set transport.postmark`.
set -eu
hx=${HELIX_ORG:-bin/helix-org}
dir=$(dirname "$0")

"$hx" call --exists-ok create_stream id=s-support name=support transport='{"kind":"email","config":{"alias":"sam"}}'
"$hx" call --exists-ok create_stream id=s-escalations name=escalations
"$hx" call --exists-ok create_role id=r-billing title="Billing lead" content="$(cat "$dir/roles/lee.md")"
"$hx" call --exists-ok create_role id=r-support title=Support content="$(cat "$dir/roles/sam.md")"
"$hx" call --exists-ok create_position id=p-billing role=r-billing title="Billing lead"
"$hx" call --exists-ok create_position id=p-support role=r-support title=Support reportsTo=p-billing
"$hx" call --exists-ok hire_worker id=w-lee position=p-billing kind=ai name=Lee grants='["publish","read_events"]'
"$hx" call --exists-ok hire_worker id=w-sam position=p-support kind=ai name=Sam grants='["publish","read_events","get_attachment"]'
"$hx" call --exists-ok invite_workers stream=s-support workers='["w-sam","w-owner"]'
"$hx" call --exists-ok invite_workers stream=s-escalations workers='["w-lee","w-owner"]'
