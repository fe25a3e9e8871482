#!/usr/bin/env bash
# `make bench`: drives the release server with wrk and prints requests/s, p50, p99 and the
# server's peak RSS. Figures only: nothing here passes or fails on a number.
#
#   BENCH_DURATION   seconds of measured load per scenario (default 15)
#   BENCH_CONNECTIONS  concurrent connections (default 64)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# Ten thousand waits for a code hold ten thousand connections open at once.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
duration="${BENCH_DURATION:-15}"
connections="${BENCH_CONNECTIONS:-64}"

need_command wrk wrk "the load generator"

use_local_database DATABASE_URL agent_runtime_bench

echo "bench: building release binaries" >&2
cargo build --release --bins --locked

logs=()
servers=()
trap 'for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; rm -f "${logs[@]}" "$keys_file" "$single_key_file" "$webhooks_file"' EXIT
keys_file="$(mktemp -t agent-runtime-bench-keys.XXXXXX)"
single_key_file="$(mktemp -t agent-runtime-bench-key.XXXXXX)"
webhooks_file="$(mktemp -t agent-runtime-bench-webhooks.XXXXXX)"

# Starts a release server with the given settings on a free port and sets `started_url` once it
# answers (not printed: a command substitution would lose the process to a subshell).
start_server() {
  local port log
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
  log="$(mktemp -t agent-runtime-bench.XXXXXX.log)"
  env "$@" BIND_ADDR="127.0.0.1:$port" target/release/agent-runtime >"$log" 2>&1 &
  servers+=("$!")
  logs+=("$log")
  for _ in $(seq 1 300); do
    if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
      started_url="http://127.0.0.1:$port"
      return
    fi
    kill -0 "${servers[-1]}" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
  done
  echo "bench: the server did not answer" >&2
  exit 1
}

webhook_secret="whsec_$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(24)).decode())')"
# Throughput figures with the send limits out of the way; the flood figure with the defaults.
start_server SEND_RATE_PER_MINUTE=100000000 SEND_BURST=100000 SEND_CONCURRENCY_PER_AGENT=1000 \
  EMAIL_WEBHOOK_SECRETS="$webhook_secret"
unlimited_url="$started_url"
unlimited_pid="${servers[-1]}"
start_server
defaults_url="$started_url"

create_key() {
  target/release/agentctl agents create --label bench "$@" 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["agent_key"])'
}
key="$(create_key --email --phone --wallet)"
echo "bench: creating 100 agents with wallets" >&2
for _ in $(seq 1 100); do create_key --wallet >>"$keys_file"; done
create_key --wallet >"$single_key_file"

# The figures of one wrk run's output, on one line.
figures() {
  local name="$1" out="$2"
  local rps p50 p99 non2xx
  rps="$(awk '/^Requests\/sec/ {print $2}' <<<"$out")"
  p50="$(awk '$1 == "50%" {print $2}' <<<"$out")"
  p99="$(awk '$1 == "99%" {print $2}' <<<"$out")"
  non2xx="$(awk '/Non-2xx/ {print $NF}' <<<"$out")"
  printf '%-52s %10s req/s   p50 %8s   p99 %8s   non-2xx %s\n' "$name" "$rps" "$p50" "$p99" "${non2xx:-0}"
  last_rps="$rps"
}

# One scenario: warm up, measure, print one line of figures. Extra arguments go to wrk.
scenario() {
  local name="$1" url="$2"
  shift 2
  wrk -t2 -c"$connections" -d3s "$@" "$url" >/dev/null
  figures "$name" "$(wrk -t2 -c"$connections" -d"${duration}s" --latency "$@" "$url")"
}

echo
echo "agent-runtime bench: wrk, 2 threads, $connections connections, ${duration}s per scenario, $(nproc) cores"
scenario "GET /v1/agents/me" "$unlimited_url/v1/agents/me" -H "Authorization: Bearer $key"
BENCH_KEYS="$keys_file" scenario "POST /v1/wallet/send, 100 wallets" "$unlimited_url/v1/wallet/send" -s scripts/bench-send.lua
BENCH_KEYS="$single_key_file" scenario "POST /v1/wallet/send, one wallet" "$unlimited_url/v1/wallet/send" -s scripts/bench-send.lua
# One agent floods send on a server with the default limits while another agent reads /me.
flood_log="$(mktemp -t agent-runtime-bench-flood.XXXXXX)"
logs+=("$flood_log")
BENCH_KEYS="$single_key_file" wrk -t1 -c"$connections" -d"$((duration + 3))s" --latency -s scripts/bench-send.lua "$defaults_url/v1/wallet/send" >"$flood_log" &
flood=$!
# The flood runs alone for its first seconds, so /me is measured against a flood in full swing.
sleep 2
figures "GET /v1/agents/me, another agent flooding send" \
  "$(wrk -t1 -c"$connections" -d"${duration}s" --latency -H "Authorization: Bearer $key" "$defaults_url/v1/agents/me")"
wait "$flood"
figures "  the flood: POST /v1/wallet/send, default limits" "$(cat "$flood_log")"
rss_kib="$(awk '/VmHWM/ {print $2}' "/proc/$unlimited_pid/status")"
echo "server peak RSS: $((rss_kib / 1024)) MiB ($rss_kib KiB)"

# --- Email -------------------------------------------------------------------------------------
json_field() { python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }
created="$(target/release/agentctl agents create --label bench-inbox --email 2>/dev/null)"
inbox_address="$(json_field '["agent"]["email_inbox"]["address"]' <<<"$created")"
python3 scripts/bench-email.py webhooks "$inbox_address" "$webhook_secret" 60000 "$webhooks_file"
# No warm-up run: it would spend the first mails, and the measured run would meet them again as
# redeliveries, which cost less.
figures "POST /webhooks/email/inbound (new mail, signed)" \
  "$(BENCH_WEBHOOKS="$webhooks_file" wrk -t1 -c"$connections" -d"${duration}s" --latency -s scripts/bench-webhook.lua "$unlimited_url/webhooks/email/inbound")"

# An inbox of 1,000,000 messages, seeded once into the bench database and kept for later runs.
million_agent="$(psql -qtA "$DATABASE_URL" -c "SELECT id FROM agents WHERE label = 'bench-inbox-1m' LIMIT 1")"
if [[ -z "$million_agent" ]]; then
  echo "bench: seeding an inbox of 1,000,000 messages (once per bench database)" >&2
  million_agent="$(target/release/agentctl agents create --label bench-inbox-1m --email 2>/dev/null | json_field '["agent"]["id"]')"
  psql -q "$DATABASE_URL" -v agent="$million_agent" <<'SQL'
INSERT INTO email_messages (id, agent_id, inbox_id, direction, status, thread_id,
    provider_message_id, internet_message_id, subject, from_address, to_addresses, body_text,
    created_at, received_at)
SELECT seeded.id, inbox.agent_id, inbox.id, 'inbound', 'received', seeded.id, 'bench-' || n,
    '<bench-' || n || '@bench.example>', 'Message ' || n, 'sender@bench.example',
    ARRAY[inbox.address], 'Body of message ' || n, seeded.at, seeded.at
FROM email_inboxes AS inbox,
    LATERAL (SELECT n, gen_random_uuid() AS id, now() - n * interval '1 millisecond' AS at
             FROM generate_series(1, 1000000) AS n) AS seeded
WHERE inbox.agent_id = :'agent';
ANALYZE email_messages;
SQL
fi
million_key="$(target/release/agentctl agents rotate-key "$million_agent" 2>/dev/null | json_field '["agent_key"]')"
echo "bench: walking to page 10,000 of the 1,000,000-message inbox (100 a page)" >&2
page_10000="$(python3 scripts/bench-email.py walk "$unlimited_url" "$million_key" 10000 100)"
scenario "GET /v1/email/inbox?limit=100, page 1 of 10,000" "$unlimited_url/v1/email/inbox?limit=100" \
  -H "Authorization: Bearer $million_key"
first_page_rps="$last_rps"
scenario "GET /v1/email/inbox?limit=100, page 10,000" "$unlimited_url/v1/email/inbox?limit=100&cursor=$page_10000" \
  -H "Authorization: Bearer $million_key"
echo "inbox page 10,000 / page 1 throughput: $(python3 -c "print(f'{$last_rps / $first_page_rps:.2f}')")"
rss_kib="$(awk '/VmHWM/ {print $2}' "/proc/$unlimited_pid/status")"
echo "server peak RSS after the email scenarios: $((rss_kib / 1024)) MiB ($rss_kib KiB)"

# --- SMS: waits for a code --------------------------------------------------------------------
# Twilio's webhook with a token of the bench's own; Twilio's API is unreachable (port 9), so the
# sync before each wait fails at once and the stored state is used, as when Twilio is down.
twilio_token="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
start_server SMS_PROVIDER=twilio SMS_PUBLIC_BASE_URL=http://sms.bench.test \
  TWILIO_ACCOUNT_SID=AC0123456789abcdef0123456789abcdef TWILIO_AUTH_TOKEN="$twilio_token" \
  TWILIO_BASE_URL=http://127.0.0.1:9 TWILIO_TIMEOUT_MS=2000
waiters="${BENCH_WAITERS:-10000}"
python3 scripts/bench-waiters.py "$started_url" "$DATABASE_URL" "${servers[-1]}" "$twilio_token" \
  http://sms.bench.test "$waiters" "$((waiters / 10))"
