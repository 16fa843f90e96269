#!/usr/bin/env bash
# Partner Tags on raw REST, with curl and jq: merchant -> preverified and custom tags -> DNS
# verification -> events through the collector -> filtered, paginated event list.
#
#   PARTNER_API_KEY=mp_test_... pnpm example:rest   # the test key the first `pnpm start` printed
#
# Environment:
#   PARTNER_BASE_URL         the API (default http://localhost:3000)
#   PARTNER_API_KEY          a key: a test key (mp_test_...) works on test mode, where DNS is
#                            simulated; a live key verifies through DNS (CUSTOM_DOMAIN below), or
#   PARTNER_ONBOARDING_FILE  a file holding the output of `pnpm partner onboard ... --json`
#   PARTNER_DOMAIN           the partner's onboarded domain (default demo-partner.example, the demo
#                            partner of the first `pnpm start`); tags under it are preverified
#   CUSTOM_DOMAIN            a real domain of yours to verify through real DNS. Unset: a made-up
#                            domain verified against a loopback DNS server this script starts on
#                            127.0.0.1:$EXAMPLE_DNS_PORT (default 15353); the API server must then run
#                            with DNS_SERVERS=127.0.0.1:$EXAMPLE_DNS_PORT
# Exits non-zero on any unexpected answer: CI runs it as a smoke test of the REST API.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

for tool in curl jq; do
  command -v "$tool" >/dev/null 2>&1 || { echo "This example needs $tool (apt-get install -y $tool)." >&2; exit 2; }
done

API="${PARTNER_BASE_URL:-http://localhost:3000}"
API="${API%/}"
KEY="${PARTNER_API_KEY:-}"
if [[ -z "$KEY" && -n "${PARTNER_ONBOARDING_FILE:-}" ]]; then
  KEY="$(jq -r '.apiKey // empty' "$PARTNER_ONBOARDING_FILE")"
fi
if [[ -z "$KEY" ]]; then
  echo 'No API key: set PARTNER_API_KEY (the test key mp_test_... the first `pnpm start` printed), or' >&2
  echo 'PARTNER_ONBOARDING_FILE to the output of `pnpm partner onboard --name "Acme" --domain acme.com --json`.' >&2
  exit 2
fi
PARTNER_DOMAIN="${PARTNER_DOMAIN:-demo-partner.example}"
DNS_PORT="${EXAMPLE_DNS_PORT:-15353}"
run_id="$(date -u +%s)-$RANDOM"

tmp="$(mktemp -d)"
dns_pid=""
cleanup() {
  [[ -n "$dns_pid" ]] && kill "$dns_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# api METHOD PATH [JSON BODY]: sets STATUS and BODY. Every call has a timeout. GETs are retried by
# curl on transient failures (connection refused, timeouts, 408/429/5xx, honouring Retry-After);
# POSTs carry an Idempotency-Key made once per logical call, so retrying them is safe too.
api() {
  local method="$1" path="$2" data="${3:-}"
  local args=(-sS -X "$method" "$API$path" -o "$tmp/body" -w '%{http_code}'
    --connect-timeout 5 --max-time 30 --retry 3 --retry-delay 0 --retry-connrefused
    -H "Authorization: Bearer $KEY" -H 'Accept: application/json')
  if [[ -n "$data" ]]; then
    args+=(-H 'Content-Type: application/json' -H "Idempotency-Key: $run_id-$((++call_no))" --data "$data")
  fi
  STATUS="$(curl "${args[@]}")" || { echo "curl failed: $method $path" >&2; exit 1; }
  BODY="$(cat "$tmp/body")"
}
call_no=0

# expect STATUS...: an unexpected answer prints the API's { message, code } and stops.
expect() {
  local want
  for want in "$@"; do [[ "$STATUS" == "$want" ]] && return 0; done
  echo "Unexpected HTTP $STATUS (wanted $*): $(jq -r '"\(.code // .error): \(.message)"' <<<"$BODY" 2>/dev/null || echo "$BODY")" >&2
  exit 1
}

step() { printf '\n== %s\n' "$*"; }

step "1. Create a merchant"
api POST /v1/partners/merchant "$(jq -nc --arg n "Example Store $run_id" '{name: $n}')"
expect 201
merchant_id="$(jq -r .merchantId <<<"$BODY")"
echo "merchantId $merchant_id"

step "2. Generate a preverified tag (a domain under the partner's own domain: live at once)"
api POST /v1/partners/tag/generate "$(jq -nc --arg m "$merchant_id" --arg d "shop.$PARTNER_DOMAIN" '{merchantId: $m, domain: $d}')"
expect 200
pre_tag="$(jq -r .tagId <<<"$BODY")"
echo "tagId $pre_tag, status $(jq -r .status <<<"$BODY")"
[[ "$(jq -r .status <<<"$BODY")" == active ]] || { echo "expected a preverified tag to be active: $BODY" >&2; exit 1; }

step "3. Generate a custom-domain tag (answers the CNAME record to publish)"
if [[ -n "${CUSTOM_DOMAIN:-}" ]]; then
  custom_domain="$CUSTOM_DOMAIN"
  loopback=false
else
  custom_domain="example-store-$(date -u +%s)$RANDOM.com"
  loopback=true
fi
api POST /v1/partners/tag/generate "$(jq -nc --arg m "$merchant_id" --arg d "$custom_domain" '{merchantId: $m, domain: $d}')"
expect 200
custom_tag="$(jq -r .tagId <<<"$BODY")"
record_name="$(jq -r .record.name <<<"$BODY")"
record_value="$(jq -r .record.value <<<"$BODY")"
echo "tagId $custom_tag, status $(jq -r .status <<<"$BODY")"
echo "publish:  $record_name.$custom_domain  CNAME  $record_value"

verify() {
  api POST /v1/partners/tag/verify "$(jq -nc --arg t "$custom_tag" --arg s "$custom_domain" '{tagId: $t, subdomain: $s}')"
}

step "4. Verify the custom domain"
if [[ "$KEY" == mp_test_* ]]; then
  # Test mode answers as a zone holding the record would (docs/decisions/test-mode.md).
  echo "Test mode (mp_test_ key): DNS is simulated, so the record counts as published."
  verify
  expect 200
elif [[ "$loopback" == true ]]; then
  echo "No CUSTOM_DOMAIN given: using a LOOPBACK DNS server on 127.0.0.1:$DNS_PORT instead of real DNS"
  echo "(the API server must run with DNS_SERVERS=127.0.0.1:$DNS_PORT)."
  coproc DNS { exec node --import tsx "$here/loopback-dns.ts" --port "$DNS_PORT"; }
  dns_pid="$DNS_PID"
  read -r -t 30 ready <&"${DNS[0]}" || { echo "the loopback DNS server did not start" >&2; exit 1; }
  echo "$ready"

  # Before the record exists, verification is a 422 the partner handles by waiting, not a failure.
  verify
  expect 422
  echo "before publishing: HTTP 422 $(jq -r '"\(.code): \(.message)"' <<<"$BODY")"

  echo "cname $record_name.$custom_domain $record_value" >&"${DNS[1]}"
  read -r -t 10 ack <&"${DNS[0]}" && [[ "$ack" == ok ]] || { echo "loopback DNS: $ack" >&2; exit 1; }
  echo "published $record_name.$custom_domain CNAME $record_value on the loopback DNS server"
  verify
  [[ "$STATUS" == 422 ]] && echo "Hint: is the API server running with DNS_SERVERS=127.0.0.1:$DNS_PORT?" >&2
  expect 200
else
  # Real DNS: publish the record at your DNS provider; poll until it is visible.
  for attempt in $(seq 1 "${VERIFY_ATTEMPTS:-30}"); do
    verify
    case "$STATUS" in
      200) break ;;
      422 | 503) echo "attempt $attempt: $(jq -r '"\(.code): \(.message)"' <<<"$BODY"); retrying in 20 s" && sleep 20 ;;
      *) expect 200 ;;
    esac
  done
  expect 200
fi
echo "verified: $(jq -r .verified <<<"$BODY")"
[[ "$(jq -r .verified <<<"$BODY")" == true ]] || { echo "not verified" >&2; exit 1; }

step "5. Send events through the collector (POST /v1/collect: public, no partner key)"
now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
today="$(date -u +%Y-%m-%d)"
batch="$(jq -nc --arg t "$pre_tag" --arg r "$run_id" --arg now "$now" '{tagId: $t, events: [
  {id: "\($r)-1", event_name: "PageView", event_time: $now, muid: "user-1", data: {path: "/"}},
  {id: "\($r)-2", event_name: "AddToCart", event_time: $now, muid: "user-1", data: {sku: "A-1"}},
  {id: "\($r)-3", event_name: "Purchase", event_time: $now, muid: "user-1", data: {value: 42.5, currency: "EUR"}},
  {id: "\($r)-4", event_name: "PageView", event_time: $now, muid: "user-2", data: {path: "/shoes"}},
  {id: "\($r)-5", event_name: "Purchase", event_time: $now, muid: "user-2", data: {value: 19, currency: "EUR"}}
]}')"
curl_collect() {
  STATUS="$(curl -sS -X POST "$API/v1/collect" -o "$tmp/body" -w '%{http_code}' --max-time 30 \
    -H 'Content-Type: application/json' --data "$1")"
  BODY="$(cat "$tmp/body")"
}
curl_collect "$batch"
expect 202
echo "accepted $(jq -r .accepted <<<"$BODY")"
# Each event carries its own id: sending the same batch again (a retry) stores nothing twice.
curl_collect "$batch"
expect 202
echo "the same batch again (a retry): accepted $(jq -r .accepted <<<"$BODY"), stored once"
custom_batch="$(jq -nc --arg t "$custom_tag" --arg r "$run_id" --arg now "$now" \
  '{tagId: $t, events: [{id: "\($r)-c1", event_name: "PageView", event_time: $now, data: {path: "/"}}]}')"
curl_collect "$custom_batch"
expect 202
echo "the verified custom tag takes events too: accepted $(jq -r .accepted <<<"$BODY")"

step "6. Read PageView and Purchase events of today, newest first, 2 per page"
rows=()
page=1
while :; do
  api GET "/v1/partners/events?merchantId=$merchant_id&events=PageView,Purchase&startDate=$today&endDate=$today&sortBy=event_time&sortOrder=desc&page=$page&limit=2"
  expect 200
  while IFS= read -r row; do rows+=("$row"); done < <(jq -r '.events[] | [.event_time, .event_name, .muid, (.raw_data | fromjson | tostring)] | @tsv' <<<"$BODY")
  [[ "$(jq -r .pagination.hasNextPage <<<"$BODY")" == true ]] || break
  page=$((page + 1))
done
{
  printf 'EVENT_TIME\tEVENT_NAME\tMUID\tDATA\n'
  printf '%s\n' "${rows[@]}"
} | if command -v column >/dev/null 2>&1; then column -t -s $'\t'; else cat; fi
echo "${#rows[@]} events on $page pages"
[[ "${#rows[@]}" -eq 5 ]] || { echo "expected 5 events (3 PageView + 2 Purchase across both tags), got ${#rows[@]}" >&2; exit 1; }

step "7. Errors are { message, code }: branch on the code"
api GET "/v1/partners/events?merchantId=00000000-0000-4000-8000-000000000000"
case "$STATUS:$(jq -r .code <<<"$BODY")" in
  404:MERCHANT_NOT_FOUND) echo "unknown merchant -> HTTP 404 MERCHANT_NOT_FOUND: $(jq -r .message <<<"$BODY")" ;;
  *) echo "expected 404 MERCHANT_NOT_FOUND, got $STATUS $BODY" >&2; exit 1 ;;
esac
# A range that ends before it starts: well-formed parameters the server refuses with 400.
api GET "/v1/partners/events?merchantId=$merchant_id&startDate=2026-02-01&endDate=2026-01-01"
expect 400
echo "startDate after endDate -> HTTP 400 $(jq -r '"\(.code): \(.message)"' <<<"$BODY")"

printf '\nDone: the REST flow works end to end.\n'
