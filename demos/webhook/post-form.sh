#!/usr/bin/env bash
# Posts a form body to a helix-org webhook stream, signed the Standard
# Webhooks way — what a form backend in front of your website would do.
#
#   WEBHOOK_SECRET=whsec_… ./post-form.sh 'name=Ada+Lovelace&email=ada%40example.com&message=Hello'
#
# The body must already be URL-encoded. Env: HELIX_ORG_URL (default
# http://127.0.0.1:8080), STREAM (default s-enquiries). Needs curl, openssl.
set -euo pipefail

body=${1:?usage: post-form.sh <url-encoded form body>}
secret=${WEBHOOK_SECRET:?set WEBHOOK_SECRET to the stream secret (whsec_…)}
url=${HELIX_ORG_URL:-http://127.0.0.1:8080}/webhooks/${STREAM:-s-enquiries}

id="msg_$(date +%s)_$RANDOM$RANDOM"
ts=$(date +%s)
key=$(printf '%s' "${secret#whsec_}" | base64 -d | od -An -v -tx1 | tr -d ' \n')
sig=$(printf '%s.%s.%s' "$id" "$ts" "$body" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key" -binary | base64)

curl -sS -X POST "$url" \
  -H 'Content-Type: application/x-www-form-urlencoded' \
  -H "webhook-id: $id" \
  -H "webhook-timestamp: $ts" \
  -H "webhook-signature: v1,$sig" \
  --data-binary "$body"
echo
