#!/usr/bin/env bash
# `make bench`: drives the release server with wrk and prints, for every scenario, the project's
# figure beside its reference (the FastAPI peer, or `pgbench -S`), measured in the same run, the
# ratio, the goal and whether it is met; then one table of them all. Figures only: nothing here
# fails on a number.
#
#   BENCH_DURATION     seconds of measured load per scenario (default 15)
#   BENCH_CONNECTIONS  concurrent connections (default 64)
#   BENCH_SOAK_SECS    length of the mixed-load soak (default 600)
#   BENCH_WAITERS      concurrent waits for a code (default 10000)
#   BENCH_HALF_OPEN    idle half-open connections (default BENCH_WAITERS)
#   BENCH_STREAMS      open event streams of one agent (default 10000)
#   BENCH_PEER         the FastAPI peer's directory (default ../shared/bench/fastapi-peer)
#   BENCH_UNTIL        `sends`: stop after the sends' rows and print the table so far (the peer
#                      and pgbench -S rows come before them)
#   BENCH_ONLY         `x402`: only the x402 authorizations' rows and the sends beside them;
#                      `failover`: only the failover figures (last in a whole run)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# Ten thousand waits for a code hold ten thousand connections open at once.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
duration="${BENCH_DURATION:-15}"
connections="${BENCH_CONNECTIONS:-64}"
soak_secs="${BENCH_SOAK_SECS:-600}"
peer_dir="${BENCH_PEER:-../shared/bench/fastapi-peer}"

need_command wrk wrk "the load generator"

use_local_database DATABASE_URL agent_runtime_bench
use_local_database PGBENCH_URL agent_runtime_pgbench

# The failover test of make test on a formation of its own (scripts/ha.sh): per fault, how long
# writes failed (the first failed write to the first successful one) and the writes in doubt
# (timed out or cut, each retried with its idempotency key), as its report gives them.
failover_figures() {
  echo "bench: the failover test: a formation, two instances, six faults in a row" >&2
  scripts/ha.sh install >/dev/null
  build_debug_binaries
  ANVIL_BIN="${ANVIL_BIN:-$(scripts/chain-tools.sh)}" TEST_DATABASE_URL="$DATABASE_URL" \
    cargo nextest run --offline -p blackbox -E 'test(/^failover::/)' --no-capture \
    >/dev/null 2>&1 || echo "bench: the failover test failed; its report follows" >&2
  echo
  sed -n '/^per failover/,/^$/p' target/failover/report.txt
}

if [[ "${BENCH_ONLY:-}" == failover ]]; then
  failover_figures
  exit 0
fi

build_release
results="$(mktemp -t agent-runtime-bench-results.XXXXXX)"
keys_file="$(mktemp -t agent-runtime-bench-keys.XXXXXX)"
single_key_file="$(mktemp -t agent-runtime-bench-key.XXXXXX)"
mixed_keys_file="$(mktemp -t agent-runtime-bench-mixed.XXXXXX)"
webhooks_file="$(mktemp -t agent-runtime-bench-webhooks.XXXXXX)"
windows_keys_file="$(mktemp -t agent-runtime-bench-windows-keys.XXXXXX)"
windows_agents_file="$(mktemp -t agent-runtime-bench-windows-agents.XXXXXX)"
tier_keys_file="$(mktemp -t agent-runtime-bench-tier-keys.XXXXXX)"
tier_agents_file="$(mktemp -t agent-runtime-bench-tier-agents.XXXXXX)"
trap 'stop_servers; pkill -f "uvicorn app:app --host 127.0.0.1 --port ${peer_port:-0}" 2>/dev/null || true; rm -f "${logs[@]}" "$results" "$keys_file" "$single_key_file" "$mixed_keys_file" "$webhooks_file" "$windows_keys_file" "$windows_agents_file" "$tier_keys_file" "$tier_agents_file"' EXIT

# --- Figures ------------------------------------------------------------------------------------
# The figures of one wrk run's output: sets last_rps, last_p50_ms, last_p99_ms, last_non2xx and
# prints them on one line.
figures() {
  local name="$1" out="$2"
  last_rps="$(awk '/^Requests\/sec/ {print $2}' <<<"$out")"
  last_p50_ms="$(awk '$1 == "50%" {print $2}' <<<"$out" | python3 scripts/bench-table.py ms)"
  last_p99_ms="$(awk '$1 == "99%" {print $2}' <<<"$out" | python3 scripts/bench-table.py ms)"
  last_non2xx="$(awk '/Non-2xx/ {print $NF}' <<<"$out")"
  last_non2xx="${last_non2xx:-0}"
  printf '%-56s %10s req/s   p50 %8s ms   p99 %8s ms   non-2xx %s\n' \
    "$name" "$last_rps" "$last_p50_ms" "$last_p99_ms" "$last_non2xx"
}

# Resets the peak RSS of the process `pid`, so the next reading is the next scenario's peak.
reset_peak() { echo 5 >"/proc/$1/clear_refs" 2>/dev/null || true; }
peak_mib() { awk '/VmHWM/ {printf "%d", $2 / 1024}' "/proc/$1/status"; }

# One scenario on the server `pid`: warm up, measure, print its figures. Extra arguments go to wrk.
scenario() {
  local name="$1" pid="$2" url="$3"
  shift 3
  wrk -t2 -c"$connections" -d3s "$@" "$url" >/dev/null
  reset_peak "$pid"
  figures "$name" "$(wrk -t2 -c"$connections" -d"${duration}s" --latency "$@" "$url")"
  last_peak="$(peak_mib "$pid")"
}

# A request's own time: one connection, one request at a time, after a warm-up; sets the figures
# as `scenario` does. Extra arguments go to wrk.
one_at_a_time() {
  local name="$1" url="$2"
  shift 2
  wrk -t1 -c1 -d3s "$@" "$url" >/dev/null
  figures "$name" "$(wrk -t1 -c1 -d"${duration}s" --latency "$@" "$url")"
}

# The median of three figures.
median() { printf '%s\n' "$@" | sort -g | sed -n 2p; }

# row SCENARIO PROJECT REFERENCE GOAL_KIND GOAL [PEAK_MIB]: one line of the final table; the ratio
# is PROJECT / REFERENCE and GOAL_KIND says how it meets GOAL (min: ratio >= goal, max: ratio <=
# goal, at_least: PROJECT >= goal, none: no goal).
row() {
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "${6:--}" >>"$results"
}

create_key() {
  target/release/agentctl agents create --label bench "$@" 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["agent_key"])'
}

# seed_rejected_intents AGENT COUNT STEP BEFORE: COUNT rejected intents of AGENT's wallet, STEP
# apart, the newest BEFORE ago. Rejected intents hold nothing in any spend window, so the running
# totals' trigger has nothing to count: it is skipped (replica role), which it would slow tenfold.
seed_rejected_intents() {
  psql -q "$DATABASE_URL" -v agent="$1" -v count="$2" -v step="$3" -v before="$4" <<'SQL'
SET session_replication_role = replica;
INSERT INTO transfer_intents (id, agent_id, wallet_id, status, asset, chain, token_address,
    recipient_address, amount_atomic, failure_reason, created_at, updated_at)
SELECT gen_random_uuid(), wallet.agent_id, wallet.id, 'rejected', 'USDC', 'base', NULL,
    '0x000000000000000000000000000000000000dead', 1, 'bench', seeded.at, seeded.at
FROM wallets AS wallet,
    LATERAL (SELECT now() - :'before'::interval - n * :'step'::interval AS at
             FROM generate_series(1, :count) AS n) AS seeded
WHERE wallet.agent_id = :'agent';
ANALYZE transfer_intents;
SQL
}

# seed_inbound_mail AGENT COUNT STEP: COUNT inbound messages in AGENT's inbox, STEP apart. The
# count of the inbox's changes is left alone (replica role): one trigger call a row would lock its
# one row a million times.
seed_inbound_mail() {
  psql -q "$DATABASE_URL" -v agent="$1" -v count="$2" -v step="$3" <<'SQL'
SET session_replication_role = replica;
INSERT INTO email_messages (id, agent_id, inbox_id, direction, status, thread_id,
    provider_message_id, internet_message_id, subject, from_address, to_addresses, body_text,
    created_at, received_at)
SELECT seeded.id, inbox.agent_id, inbox.id, 'inbound', 'received', seeded.id, 'bench-' || n,
    '<bench-' || n || '@bench.example>', 'Message ' || n, 'sender@bench.example',
    ARRAY[inbox.address], 'Body of message ' || n, seeded.at, seeded.at
FROM email_inboxes AS inbox,
    LATERAL (SELECT n, gen_random_uuid() AS id, now() - n * :'step'::interval AS at
             FROM generate_series(1, :count) AS n) AS seeded
WHERE inbox.agent_id = :'agent';
ANALYZE email_messages;
SQL
}

# seed_searchable_mail AGENT COUNT: COUNT inbound messages in AGENT's inbox, a second apart, whose
# words a search finds in every message, most, some, hundreds, a few or one (scripts/
# bench-search.lua asks for them): a subject of one of 16 kinds, one of 10 names and the order's
# number; a sender of 500 on 5 domains; a text of 12 words of a vocabulary of 1,024 made-up words,
# the first far more common than the last (as in a language), each picked from the message's
# number, and two words every text has. Past the triggers, as seed_inbound_mail.
seed_searchable_mail() {
  psql -q -v ON_ERROR_STOP=1 "$DATABASE_URL" -v agent="$1" -v count="$2" <<'SQL'
SET session_replication_role = replica;
INSERT INTO email_messages (id, agent_id, inbox_id, direction, status, thread_id,
    provider_message_id, internet_message_id, subject, from_address, to_addresses, body_text,
    created_at, received_at)
SELECT seeded.id, inbox.agent_id, inbox.id, 'inbound', 'received', seeded.id,
    'bench-search-' || n, '<bench-search-' || n || '@bench.example>',
    (ARRAY['Invoice', 'Receipt', 'Shipping', 'Meeting', 'Password', 'Welcome', 'Report',
        'Reminder', 'Offer', 'Question', 'Update', 'Booking', 'Refund', 'Payment', 'Survey',
        'Newsletter'])[1 + n % 16]
    || ' for ' || (ARRAY['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel',
        'india', 'juliet'])[1 + n / 7 % 10] || ' order ' || n,
    'sender' || n % 500 || '@' || (ARRAY['shop', 'bank', 'travel', 'news', 'work'])[1 + n % 5]
        || '.example',
    ARRAY[inbox.address],
    'Hello, ' || (
        SELECT string_agg(syllables[1 + k % 16] || syllables[1 + k / 16 % 16]
            || (ARRAY['n', 'r', 's', 't'])[1 + k / 256 % 4], ' ')
        FROM (SELECT ARRAY['ka', 'lo', 'mi', 'nu', 'pe', 'ra', 'si', 'to', 'va', 'ze', 'bo', 'du',
                    'fe', 'gi', 'ho', 'ju'] AS syllables) AS vocabulary,
            -- the word's rank: a uniform draw from (n, slot), cubed
            LATERAL (SELECT (1024 * power(
                        (n::bigint * 7919 + slot * 104729) % 10007 / 10007.0, 3))::int AS k
                     FROM generate_series(1, 12) AS slot) AS word)
    || '. Best regards.',
    seeded.at, seeded.at
FROM email_inboxes AS inbox,
    LATERAL (SELECT n, gen_random_uuid() AS id, now() - n * interval '1 second' AS at
             FROM generate_series(1, :count) AS n) AS seeded
WHERE inbox.agent_id = :'agent';
ANALYZE email_messages;
SQL
}

# seed_executed_intents AGENT COUNT STEP: COUNT executed intents of AGENT's wallet, STEP apart, the
# newest STEP ago, written past the triggers (replica role: one trigger call a row would lock the
# wallet's one totals row COUNT times); the wallet's running totals then count them as the trigger
# would have, from one scan.
seed_executed_intents() {
  psql -q -v ON_ERROR_STOP=1 "$DATABASE_URL" -v agent="$1" -v count="$2" -v step="$3" <<'SQL'
BEGIN;
SET LOCAL session_replication_role = replica;
INSERT INTO transfer_intents (id, agent_id, wallet_id, status, asset, chain, token_address,
    recipient_address, amount_atomic, tx_hash, nonce, confirmed_at, confirmed_by,
    approvals_received, executed_at, created_at, updated_at)
SELECT gen_random_uuid(), wallet.agent_id, wallet.id, 'executed', 'USDC', 'base', NULL,
    '0x000000000000000000000000000000000000dead', 1, '0x' || lpad(to_hex(n), 64, '0'),
    1000000 + n, seeded.at, 'operator', 1, seeded.at, seeded.at, seeded.at
FROM wallets AS wallet,
    LATERAL (SELECT n, now() - n * :'step'::interval AS at
             FROM generate_series(1, :count) AS n) AS seeded
WHERE wallet.agent_id = :'agent';
SET LOCAL session_replication_role = origin;
UPDATE wallet_spend_totals AS totals
SET daily_executed_atomic = (SELECT coalesce(sum(amount_atomic), 0) FROM transfer_intents
        WHERE wallet_id = totals.wallet_id AND status = 'executed'
          AND executed_at > totals.daily_expired_through),
    weekly_executed_atomic = (SELECT coalesce(sum(amount_atomic), 0) FROM transfer_intents
        WHERE wallet_id = totals.wallet_id AND status = 'executed'
          AND executed_at > totals.weekly_expired_through),
    monthly_executed_atomic = (SELECT coalesce(sum(amount_atomic), 0) FROM transfer_intents
        WHERE wallet_id = totals.wallet_id AND status = 'executed'
          AND executed_at > totals.monthly_expired_through),
    auto_daily_executed_atomic = (SELECT coalesce(sum(amount_atomic), 0) FROM transfer_intents
        WHERE wallet_id = totals.wallet_id AND status = 'executed' AND confirmed_by = 'policy'
          AND executed_at > totals.auto_daily_expired_through)
FROM wallets AS wallet
WHERE wallet.agent_id = :'agent' AND totals.wallet_id = wallet.id;
UPDATE recipient_spend_totals AS totals
SET daily_executed_atomic = (
    SELECT coalesce(sum(amount_atomic), 0) FROM transfer_intents
    WHERE wallet_id = totals.wallet_id AND recipient_address = totals.recipient_address
      AND status = 'executed' AND executed_at > totals.daily_expired_through)
FROM wallets AS wallet
WHERE wallet.agent_id = :'agent' AND totals.wallet_id = wallet.id;
COMMIT;
ANALYZE transfer_intents;
SQL
}

# every_window AGENT WALLET: a policy with every window of the second edition (policy.md) and a cap
# for the recipient the sends pay, all wide enough for any run, but for the auto-confirm tier: its
# first send is confirmed by the policy and executed (the wallet is funded for it), which fills the
# tier's day, so every later send judges that window too and waits for an operator.
every_window() {
  target/release/agentctl sandbox fund "$2" 1 >/dev/null
  target/release/agentctl policy set "$1" --max-per-tx 1000000 --max-daily 1000000000000000 \
    --max-weekly 1000000000000000 --max-monthly 1000000000000000 \
    --recipient-limit "0x000000000000000000000000000000000000dEaD:1000000:1000000000000000" \
    --auto-confirm-max 1 --auto-confirm-daily 1 --approvals-required 2 --approvals-above 1000000 \
    >/dev/null
}

# send_round ROUNDS KEYS NAME: one scenario of sends by the agents of the file KEYS; its req/s (0
# with any non-2xx answer) is appended to the array named ROUNDS, its peak RSS kept in
# send_peak[ROUNDS].
declare -A send_peak=()
send_round() {
  local -n rounds="$1"
  BENCH_KEYS="$2" scenario "$3" "$unlimited_pid" "$unlimited_url/v1/wallet/send" -s scripts/bench-send.lua
  [[ "$last_non2xx" == 0 ]] || last_rps=0
  rounds+=("$last_rps")
  (( last_peak <= ${send_peak[$1]:-0} )) || send_peak[$1]="$last_peak"
}
# --- x402 authorizations -------------------------------------------------------------------------
# Payments of 1 atomic unit under an auto-confirm tier wide enough for the whole run, each signed
# at once (admitted, EIP-3009 signed, recorded), against sends under the very same policy by the
# same 100 agents, alternating rounds: signing is not to be the bottleneck. The agents'
# `agent_and_wallet` lines give their ids.
x402_rows() {
  create_spending_agents bench 100 "$tier_keys_file" /dev/null "$tier_agents_file"
  while read -r agent _; do
    target/release/agentctl policy set "$agent" --auto-confirm-max 1000000 \
      --auto-confirm-daily 1000000000000000 >/dev/null
  done <"$tier_agents_file"
  tier_send_rounds=() authorize_rounds=() authorize_p99s=()
  for round in 1 2 3; do
    send_round tier_send_rounds "$tier_keys_file" "POST /v1/wallet/send, auto-confirm tier (round $round)"
    BENCH_KEYS="$tier_keys_file" BENCH_RUN="$round" scenario \
      "POST /v1/wallet/x402/authorize, auto-confirm tier (round $round)" "$unlimited_pid" \
      "$unlimited_url/v1/wallet/x402/authorize" -s scripts/bench-x402.lua
    [[ "$last_non2xx" == 0 ]] || last_rps=0
    authorize_rounds+=("$last_rps")
    authorize_p99s+=("$last_p99_ms")
  done
  row "x402 authorizations req/s / sends, same auto-confirm tier (medians)" \
    "$(median "${authorize_rounds[@]}")" "$(median "${tier_send_rounds[@]}")" min 0.9
  row "  POST /v1/wallet/x402/authorize p99 ms (median of 3)" "$(median "${authorize_p99s[@]}")" "" none ""
  # The tier's sends are confirmed and the executors take them one by one (alike in both kinds of
  # round); those left are failed here, so no later row measures the executors' backlog.
  psql -q "$DATABASE_URL" <<SQL
UPDATE transfer_intents SET status = 'failed', failure_reason = 'bench: left unexecuted'
WHERE status = 'confirmed' AND kind = 'transfer'
  AND agent_id IN ($(cut -d' ' -f1 "$tier_agents_file" | sed "s/.*/'&'/" | paste -sd, -));
SQL
}

webhook_secret="whsec_$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(24)).decode())')"
# Throughput figures with the send limits and the cap of one agent's searches at once out of the
# way (one agent searches on every connection); the flood figure with the defaults.
start_server SEND_RATE_PER_MINUTE=100000000 SEND_BURST=100000 SEND_CONCURRENCY_PER_AGENT=1000 \
  EMAIL_SEARCHES_PER_AGENT="$connections" EMAIL_WEBHOOK_SECRETS="$webhook_secret"
unlimited_url="$started_url"
unlimited_pid="${servers[-1]}"
start_server
defaults_url="$started_url"

if [[ "${BENCH_ONLY:-}" == x402 ]]; then
  x402_rows
  stop_servers
  echo
  python3 scripts/bench-table.py table <"$results"
  exit 0
fi

key="$(create_key --email --phone --wallet)"
echo "bench: creating 100 agents with wallets and a daily limit" >&2
create_spending_agents bench 100 "$keys_file"
echo "bench: creating 100 agents with wallets under every window of the second edition" >&2
create_spending_agents bench 100 "$windows_keys_file" /dev/null "$windows_agents_file"
while read -r agent wallet; do every_window "$agent" "$wallet"; done <"$windows_agents_file"
cp "$windows_keys_file" "$mixed_keys_file"

echo
echo "agent-runtime bench: wrk, 2 threads, $connections connections, ${duration}s per scenario, $(nproc) cores"

# --- GET /v1/agents/me against the FastAPI peer, alternating, three rounds ------------------------
if [[ -x "$peer_dir/run.sh" ]]; then
  peer_port="$(free_port)"
  peer_log="$(mktemp -t agent-runtime-bench-peer.XXXXXX.log)"
  logs+=("$peer_log")
  echo "bench: starting the FastAPI peer (schema peer of the bench database)" >&2
  DATABASE_URL="$DATABASE_URL" "$peer_dir/run.sh" "$peer_port" >"$peer_log" 2>&1 &
  for _ in $(seq 1 600); do
    curl -fsS -o /dev/null -H "Authorization: Bearer peer-key-7" "http://127.0.0.1:$peer_port/v1/agents/me" 2>/dev/null && break
    sleep 0.2
  done
  peer_url="http://127.0.0.1:$peer_port/v1/agents/me"
  me_rps=() me_p99=() peer_rps=() peer_p99=()
  for round in 1 2 3; do
    scenario "GET /v1/agents/me (round $round)" "$unlimited_pid" "$unlimited_url/v1/agents/me" \
      -H "Authorization: Bearer $key"
    me_rps+=("$last_rps") me_p99+=("$last_p99_ms") me_peak="$last_peak"
    wrk -t2 -c"$connections" -d3s -H "Authorization: Bearer peer-key-7" "$peer_url" >/dev/null
    figures "  FastAPI peer, same route (round $round)" \
      "$(wrk -t2 -c"$connections" -d"${duration}s" --latency -H "Authorization: Bearer peer-key-7" "$peer_url")"
    peer_rps+=("$last_rps") peer_p99+=("$last_p99_ms")
  done
  row "GET /v1/agents/me req/s (median of 3)" "$(median "${me_rps[@]}")" "$(median "${peer_rps[@]}")" min 10 "$me_peak"
  row "GET /v1/agents/me p99 ms (median of 3)" "$(median "${me_p99[@]}")" "$(median "${peer_p99[@]}")" max 0.1
else
  echo "bench: no FastAPI peer at $peer_dir (BENCH_PEER): /v1/agents/me alone" >&2
  scenario "GET /v1/agents/me" "$unlimited_pid" "$unlimited_url/v1/agents/me" -H "Authorization: Bearer $key"
  row "GET /v1/agents/me req/s" "$last_rps" "" none "" "$last_peak"
fi

# --- get_me over MCP against GET /v1/agents/me over REST, alternating, three rounds ---------------
# The same agent and answer; MCP adds JSON-RPC, rmcp's dispatch and the tool's rendering.
mcp_answer="$(curl -fsS -X POST "$unlimited_url/mcp" -H "Authorization: Bearer $key" \
  -H "Content-Type: application/json" -H "Accept: application/json, text/event-stream" \
  -H "MCP-Protocol-Version: 2025-11-25" \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_me","arguments":{}}}')"
[[ "$mcp_answer" == *'"isError":false'* ]] || { echo "bench: get_me over MCP failed: $mcp_answer" >&2; exit 1; }
mcp_rps=() mcp_p99=() rest_rps=() rest_p99=()
for round in 1 2 3; do
  scenario "GET /v1/agents/me, REST (round $round)" "$unlimited_pid" "$unlimited_url/v1/agents/me" \
    -H "Authorization: Bearer $key"
  rest_rps+=("$last_rps") rest_p99+=("$last_p99_ms")
  scenario "  tools/call get_me, MCP (round $round)" "$unlimited_pid" "$unlimited_url/mcp" \
    -H "Authorization: Bearer $key" -s scripts/bench-mcp.lua
  mcp_rps+=("$last_rps") mcp_p99+=("$last_p99_ms") mcp_peak="$last_peak"
done
row "MCP get_me req/s / REST GET /v1/agents/me (median of 3)" "$(median "${mcp_rps[@]}")" "$(median "${rest_rps[@]}")" min 0.5 "$mcp_peak"
row "MCP get_me p99 ms / REST (median of 3)" "$(median "${mcp_p99[@]}")" "$(median "${rest_p99[@]}")" max 2

# --- Database-bound reads against pgbench -S ------------------------------------------------------
if [[ "$(psql -qtA "$PGBENCH_URL" -c "SELECT to_regclass('pgbench_accounts') IS NOT NULL")" != t ]]; then
  echo "bench: initialising pgbench (scale 10, once per pgbench database)" >&2
  pgbench -q -i -s 10 "$PGBENCH_URL" >/dev/null 2>&1
fi
read_key="$(head -1 "$keys_file")"
# The first pages read are full ones: 25 intents and 25 inbound messages of the reading agent.
read_agent="$(curl -fsS -H "Authorization: Bearer $read_key" "$unlimited_url/v1/agents/me" | json_field '["id"]')"
seed_rejected_intents "$read_agent" 25 '1 second' '0'
seed_inbound_mail "$read_agent" 25 '1 second'
read_inbox="$(psql -qtA "$DATABASE_URL" -c "SELECT id FROM email_inboxes WHERE agent_id = '$read_agent'")"
# The policy is read by an agent of its own, with every window configured and some of them used,
# so the read computes each window's usage.
policy_reader="$(target/release/agentctl agents create --label bench --wallet 2>/dev/null)"
policy_key="$(json_field '["agent_key"]' <<<"$policy_reader")"
# shellcheck disable=SC2046 # the agent's id and its wallet's address, two words
every_window $(agent_and_wallet <<<"$policy_reader")
for _ in 1 2 3; do
  curl -fsS -o /dev/null -H "Authorization: Bearer $policy_key" -H "Content-Type: application/json" \
    -d '{"to": "0x000000000000000000000000000000000000dEaD", "amount_atomic": "1"}' \
    "$unlimited_url/v1/wallet/send"
done

# pgbench_run URL ARGS...: pgbench on URL, warmed up as every wrk scenario is (a first run reads a
# cold cache); sets last_tps. ARGS say what it runs.
pgbench_run() {
  local url="$1"
  shift
  pgbench -n -c "$connections" -j 2 -T 3 "$@" "$url" >/dev/null 2>&1
  last_tps="$(pgbench -n -c "$connections" -j 2 -T "$duration" "$@" "$url" 2>/dev/null \
    | awk '/^tps/ {printf "%.0f", $3}')"
}

# Three rounds of pgbench -S and then each read, so every figure has its reference measured beside
# it (both move from minute to minute on a shared machine); the table takes the medians.
reads=("/v1/wallet/policy" "/v1/wallet/intents?limit=20" "/v1/email/inbox?limit=20")
declare -A read_rps=() read_peak=()
pgbench_rounds=()
for round in 1 2 3; do
  pgbench_run "$PGBENCH_URL" -S
  printf '%-56s %10s tps\n' "pgbench -S, $connections clients (round $round)" "$last_tps"
  pgbench_rounds+=("$last_tps")
  for read in "${reads[@]}"; do
    reader="$read_key"
    [[ "$read" != /v1/wallet/policy ]] || reader="$policy_key"
    scenario "GET $read (round $round)" "$unlimited_pid" "$unlimited_url$read" -H "Authorization: Bearer $reader"
    read_rps[$read]+=" $last_rps"
    (( last_peak <= ${read_peak[$read]:-0} )) || read_peak[$read]="$last_peak"
  done
done
pgbench_tps="$(median "${pgbench_rounds[@]}")"
row "pgbench -S tps, $connections clients (median of 3)" "$pgbench_tps" "" none ""
for read in "${reads[@]}"; do
  # shellcheck disable=SC2086 # the figures of the three rounds, one word each
  row "GET $read req/s (median of 3)" "$(median ${read_rps[$read]})" "$pgbench_tps" min 0.5 "${read_peak[$read]}"
done

# statement_alone WHAT: what PostgreSQL alone serves of the statement on stdin under pgbench, before
# the server takes any of the CPU. A first page unchanged since this server last rendered it costs
# one read of its listing's version (decision 0041); these are the statements of the pages read
# when it changed, and of every later page.
statement_alone() {
  local sql
  sql="$(mktemp -t agent-runtime-bench-statement.XXXXXX.sql)"
  logs+=("$sql")
  cat >"$sql"
  pgbench_run "$DATABASE_URL" -M prepared -f "$sql"
  printf '%-56s %10s tps\n' "pgbench, $1 statement alone" "$last_tps"
  row "  $1 statement alone in pgbench, tps" "$last_tps" "$pgbench_tps" none ""
}
# The texts mirror the page queries of crates/postgres/src/intents/ledger.rs and
# crates/postgres/src/email/mailbox.rs: change them together.
statement_alone "the intent page's" <<SQL
SELECT id, agent_id, wallet_id, status, asset, chain, token_address, recipient_address,
    amount_atomic, idempotency_key, tx_hash, failure_reason, created_at, updated_at, confirmed_at
FROM transfer_intents WHERE agent_id = '$read_agent'
ORDER BY created_at DESC, id DESC LIMIT 21;
SQL
statement_alone "the inbox page's" <<SQL
SELECT id, agent_id, inbox_id, direction, status, thread_id, provider_message_id,
    internet_message_id, in_reply_to, reference_ids, subject, from_address, to_addresses,
    cc_addresses, bcc_addresses, reply_to_addresses, attachments, headers, verification_codes,
    last_error, created_at, received_at, sent_at, left(body_text, 4096), left(body_html, 4096)
FROM email_messages WHERE inbox_id = '$read_inbox'
ORDER BY created_at DESC, id DESC LIMIT 21;
SQL

# --- Sends ----------------------------------------------------------------------------------------
# Three rounds of the sends under the daily cap only, under every window of the second edition
# with a cap for their recipient, and under the daily cap with the event log's trigger off (what
# writing each intent's event costs), alternating: each round's intents grow the table the next
# one writes, so no scenario is measured on a larger table than another. The table takes the
# medians.

events_trigger() {
  psql -q "$DATABASE_URL" -c "ALTER TABLE transfer_intents $1 TRIGGER transfer_intents_zz_evented_insert"
}
daily_rounds=() windows_rounds=() unevented_rounds=()
for round in 1 2 3; do
  send_round daily_rounds "$keys_file" "POST /v1/wallet/send, 100 wallets (round $round)"
  send_round windows_rounds "$windows_keys_file" "POST /v1/wallet/send, 100 wallets, every window (round $round)"
  events_trigger DISABLE
  send_round unevented_rounds "$keys_file" "POST /v1/wallet/send, 100 wallets, no events (round $round)"
  events_trigger ENABLE
done
send_rps="$(median "${daily_rounds[@]}")"
windows_rps="$(median "${windows_rounds[@]}")"
row "POST /v1/wallet/send, 100 wallets, req/s (all 2xx, median of 3)" "$send_rps" "" at_least 1500 "${send_peak[daily_rounds]}"
row "sends req/s, every window and a recipient cap / the daily cap only (medians)" "$windows_rps" "$send_rps" min 0.9 "${send_peak[windows_rounds]}"
row "sends req/s with events / without (medians)" "$send_rps" "$(median "${unevented_rounds[@]}")" min 0.9

x402_rows

# PostgreSQL's own simple-update transaction on the same cluster: a send is one transaction. Beside
# it, the floor under any send: the intent's insert alone, as a send under every window writes it
# (its event, its spend totals and its listing's count written by its triggers in its transaction,
# decision 0070), run by pgbench on the 100 wallets with the server idle. Its text mirrors the
# insert of crates/postgres/src/intents/admission.rs: change them together.
pgbench_run "$PGBENCH_URL" -N
pgbench_n_tps="$last_tps"
printf '%-56s %10s tps\n' "pgbench -N (simple-update), $connections clients" "$pgbench_n_tps"
row "sends req/s, every window / pgbench -N tps" "$windows_rps" "$pgbench_n_tps" min 0.5
insert_scripts=()
while read -r agent wallet; do
  insert_sql="$(mktemp -t agent-runtime-bench-insert.XXXXXX.sql)"
  logs+=("$insert_sql")
  insert_scripts+=(-f "$insert_sql")
  cat >"$insert_sql" <<SQL
INSERT INTO transfer_intents (id, agent_id, wallet_id, status, approvals_required, asset, chain,
    token_address, recipient_address, amount_atomic)
VALUES (gen_random_uuid(), '$agent', '$wallet', 'pending_confirmation', 1, 'USDC', 'base',
    '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913', '0x000000000000000000000000000000000000dead', 1);
SQL
done < <(psql -qtA -F ' ' "$DATABASE_URL" -c "SELECT agent_id, id FROM wallets WHERE agent_id IN ($(
  cut -d' ' -f1 "$windows_agents_file" | sed "s/.*/'&'/" | paste -sd, -))")
pgbench_run "$DATABASE_URL" -M prepared "${insert_scripts[@]}"
printf '%-56s %10s tps\n' "pgbench, the intent's insert alone, $connections clients" "$last_tps"
row "  the intent's insert alone in pgbench, tps / pgbench -N tps" "$last_tps" "$pgbench_n_tps" none ""

# One wallet's send latency under every window, one request at a time: empty, then with 100,000
# executed intents inside its monthly window (about 3,500 of them in its day, 24,000 in its week).
monthly_agent="$(target/release/agentctl agents create --label bench --wallet 2>/dev/null)"
monthly_key="$(json_field '["agent_key"]' <<<"$monthly_agent")"
# shellcheck disable=SC2046 # the agent's id and its wallet's address, two words
every_window $(agent_and_wallet <<<"$monthly_agent")
monthly_empty_p50="$(python3 scripts/bench-table.py latency "$unlimited_url" "$monthly_key" 300)"
seed_executed_intents "$(json_field '["agent"]["id"]' <<<"$monthly_agent")" 100000 '25 seconds'
monthly_full_p50="$(python3 scripts/bench-table.py latency "$unlimited_url" "$monthly_key" 300)"
printf '%-56s p50 %8s ms -> %8s ms\n' "POST /v1/wallet/send, every window: empty -> 100,000 executed" "$monthly_empty_p50" "$monthly_full_p50"
row "send p50 ms, every window, 100,000 intents in the month / empty" "$monthly_full_p50" "$monthly_empty_p50" max 1.5

# One wallet's send latency, one request at a time: empty, then with 10,000 intents in its window.
window_key="$(create_key --wallet)"
echo "$window_key" >"$single_key_file"
empty_p50="$(python3 scripts/bench-table.py latency "$unlimited_url" "$window_key" 300)"
window_wallet="$(psql -qtA "$DATABASE_URL" -c "SELECT wallet_id FROM transfer_intents ORDER BY created_at DESC LIMIT 1")"
psql -q "$DATABASE_URL" -v wallet="$window_wallet" <<'SQL'
INSERT INTO transfer_intents (id, agent_id, wallet_id, status, asset, chain, token_address,
    recipient_address, amount_atomic)
SELECT gen_random_uuid(), agent_id, wallet_id, 'pending_confirmation', asset, chain, token_address,
    recipient_address, 1
FROM (SELECT * FROM transfer_intents WHERE wallet_id = :'wallet' LIMIT 1) AS template,
    generate_series(1, 10000);
SQL
full_p50="$(python3 scripts/bench-table.py latency "$unlimited_url" "$window_key" 300)"
printf '%-56s p50 %8s ms -> %8s ms\n' "POST /v1/wallet/send, one wallet: empty -> 10,000 intents" "$empty_p50" "$full_p50"
row "send p50 ms, 10,000 intents in the window / empty" "$full_p50" "$empty_p50" max 1.5
if [[ "${BENCH_UNTIL:-}" == sends ]]; then
  stop_servers
  echo
  python3 scripts/bench-table.py table <"$results"
  exit 0
fi

# --- Keyset pages over a million rows -------------------------------------------------------------
# An inbox of 1,000,000 messages and a wallet of 1,000,000 intents, seeded once into the bench
# database and kept for later runs.
million_agent="$(psql -qtA "$DATABASE_URL" -c "SELECT id FROM agents WHERE label = 'bench-million' LIMIT 1")"
if [[ -z "$million_agent" ]]; then
  million_agent="$(target/release/agentctl agents create --label bench-million --email --wallet 2>/dev/null | json_field '["agent"]["id"]')"
fi
if [[ "$(psql -qtA "$DATABASE_URL" -c "SELECT count(*) FROM (SELECT 1 FROM email_messages WHERE agent_id = '$million_agent' LIMIT 1) AS seeded_rows")" == 0 ]]; then
  echo "bench: seeding an inbox of 1,000,000 messages (once per bench database)" >&2
  seed_inbound_mail "$million_agent" 1000000 '1 millisecond'
fi
if [[ "$(psql -qtA "$DATABASE_URL" -c "SELECT count(*) FROM (SELECT 1 FROM transfer_intents WHERE agent_id = '$million_agent' LIMIT 1) AS seeded_rows")" == 0 ]]; then
  echo "bench: seeding a wallet of 1,000,000 intents (once per bench database)" >&2
  seed_rejected_intents "$million_agent" 1000000 '1 millisecond' '30 days'
fi
million_key="$(target/release/agentctl agents rotate-key "$million_agent" 2>/dev/null | json_field '["agent_key"]')"
# Page 1 of an unchanged listing is answered from the server's rendering of it after one read of
# the listing's version, so the keyset read near the start is page 2's: the first read of the
# table through a cursor, as page 10,000's is.
for listing in /v1/email/inbox /v1/wallet/intents; do
  echo "bench: walking to page 10,000 of $listing (100 a page)" >&2
  page_2="$(python3 scripts/bench-email.py walk "$unlimited_url" "$million_key" "$listing" 2 100)"
  page_10000="$(python3 scripts/bench-email.py walk "$unlimited_url" "$million_key" "$listing" 10000 100)"
  scenario "GET $listing?limit=100, page 1 (kept rendering)" "$unlimited_pid" "$unlimited_url$listing?limit=100" \
    -H "Authorization: Bearer $million_key"
  scenario "GET $listing?limit=100, page 2 of 10,000" "$unlimited_pid" \
    "$unlimited_url$listing?limit=100&cursor=$page_2" -H "Authorization: Bearer $million_key"
  near_rps="$last_rps"
  scenario "GET $listing?limit=100, page 10,000" "$unlimited_pid" \
    "$unlimited_url$listing?limit=100&cursor=$page_10000" -H "Authorization: Bearer $million_key"
  # Throughput of page 2 over page 10,000: page 10,000 is within 1.2x of page 2's cost.
  row "$listing page 10,000 of 1,000,000: page 2 req/s / page 10,000 req/s" "$near_rps" "$last_rps" max 1.2 "$last_peak"
done

# --- Mail beyond the seed: search, threads, an attachment's download -----------------------------
# Search over the million-message inbox above: one word every message has and one only one has,
# so the index's intersection and the ranking are both paid for.
one_at_a_time "GET /v1/email/search, 2 words, inbox of 1,000,000" \
  "$unlimited_url/v1/email/search?q=message+654321" -H "Authorization: Bearer $million_key"
row "search, inbox of 1,000,000 messages, one at a time: p99 ms" "$last_p99_ms" "" at_most 50
one_at_a_time "GET /v1/email/search, from: and a word, inbox of 1,000,000" \
  "$unlimited_url/v1/email/search?q=from:sender@bench.example+654321" \
  -H "Authorization: Bearer $million_key"
row "  from: and a word: p99 ms" "$last_p99_ms" "" none ""
scenario "GET /v1/email/search, 2 words, $connections connections" "$unlimited_pid" \
  "$unlimited_url/v1/email/search?q=message+654321" -H "Authorization: Bearer $million_key"
row "  under $connections connections: req/s" "$last_rps" "" none "" "$last_peak"
# Search over inboxes of 100,000 messages each, several agents searching at once, each 4 at once
# (EMAIL_SEARCHES_PER_AGENT's default), then one search at a time: a mix of
# queries that every message, most, some, hundreds, a few and one match (scripts/
# bench-search.lua), so both the ranked matches and the newest-first ones past the ranked bound
# are paid for. Seeded once into the bench database and kept for later runs.
search_agents=4
searches_at_once=4
search_keys_file="$(mktemp -t agent-runtime-bench-search-keys.XXXXXX)"
logs+=("$search_keys_file")
mapfile -t searchers < <(psql -qtA "$DATABASE_URL" \
  -c "SELECT id FROM agents WHERE label = 'bench-search' ORDER BY created_at LIMIT $search_agents")
while (( ${#searchers[@]} < search_agents )); do
  searchers+=("$(target/release/agentctl agents create --label bench-search --email 2>/dev/null \
    | json_field '["agent"]["id"]')")
done
for searcher in "${searchers[@]}"; do
  if [[ "$(psql -qtA "$DATABASE_URL" -c "SELECT count(*) FROM (SELECT 1 FROM email_messages WHERE agent_id = '$searcher' LIMIT 1) AS seeded_rows")" == 0 ]]; then
    echo "bench: seeding an inbox of 100,000 messages to search (once per bench database)" >&2
    seed_searchable_mail "$searcher" 100000
  fi
  target/release/agentctl agents rotate-key "$searcher" 2>/dev/null | json_field '["agent_key"]' \
    >>"$search_keys_file"
done
# One wrk thread per agent (bench-search.lua gives each thread its agent).
searching() {
  BENCH_KEYS="$search_keys_file" wrk -t"$search_agents" -c"$((search_agents * searches_at_once))" \
    -d"$1" "${@:2}" -s scripts/bench-search.lua "$unlimited_url"
}
searching 3s >/dev/null
reset_peak "$unlimited_pid"
figures "GET /v1/email/search, $search_agents inboxes of 100,000, $searches_at_once at once each" \
  "$(searching "${duration}s" --latency)"
[[ "$last_non2xx" == 0 ]] || echo "bench: $last_non2xx searches were answered other than 2xx" >&2
row "search, $search_agents inboxes of 100,000, $searches_at_once at once each: req/s" "$last_rps" "" none "" \
  "$(peak_mib "$unlimited_pid")"
row "  p50 ms" "$last_p50_ms" "" none ""
row "  p99 ms" "$last_p99_ms" "" none ""
BENCH_KEYS="$search_keys_file" one_at_a_time "GET /v1/email/search, inbox of 100,000, one at a time" \
  "$unlimited_url" -s scripts/bench-search.lua
row "  one at a time: p50 ms" "$last_p50_ms" "" none ""
row "  one at a time: p99 ms" "$last_p99_ms" "" none ""
# A page of an inbox of 1,000 threads of three messages each, written through the triggers that
# keep the threads' table.
threads_agent="$(target/release/agentctl agents create --label bench-threads --email 2>/dev/null)"
threads_key="$(json_field '["agent_key"]' <<<"$threads_agent")"
psql -q "$DATABASE_URL" -v agent="$(json_field '["agent"]["id"]' <<<"$threads_agent")" <<'SQL'
INSERT INTO email_messages (id, agent_id, inbox_id, direction, status, thread_id,
    provider_message_id, subject, from_address, to_addresses, body_text, created_at, received_at)
SELECT gen_random_uuid(), inbox.agent_id, inbox.id, 'inbound', 'received', thread.id,
    'bench-thread-' || thread.n || '-' || reply, 'Thread ' || thread.n,
    'sender' || reply || '@bench.example', ARRAY[inbox.address], 'Reply ' || reply,
    now() - (thread.n * 3 + reply) * interval '1 second', now()
FROM email_inboxes AS inbox,
    LATERAL (SELECT n, gen_random_uuid() AS id FROM generate_series(1, 1000) AS n) AS thread,
    generate_series(1, 3) AS reply
WHERE inbox.agent_id = :'agent';
ANALYZE email_threads;
SQL
one_at_a_time "GET /v1/email/threads, 1,000 threads" "$unlimited_url/v1/email/threads" \
  -H "Authorization: Bearer $threads_key"
row "thread page, 1,000 threads, one at a time: p99 ms" "$last_p99_ms" "" at_most 20
scenario "GET /v1/email/threads, 1,000 threads, $connections connections" "$unlimited_pid" \
  "$unlimited_url/v1/email/threads" -H "Authorization: Bearer $threads_key"
row "  under $connections connections: req/s" "$last_rps" "" none "" "$last_peak"
# A 25 MiB attachment, its pieces written as a delivery writes them; four downloads one after
# the other, and the server's peak RSS over its RSS before them.
attachment_message="$(psql -qtA "$DATABASE_URL" -v agent="$(json_field '["agent"]["id"]' <<<"$threads_agent")" <<'SQL'
WITH message AS (
    INSERT INTO email_messages (id, agent_id, inbox_id, direction, status, thread_id,
        provider_message_id, subject, from_address, attachments, received_at)
    SELECT fresh.id, inbox.agent_id, inbox.id, 'inbound', 'received', fresh.id, 'bench-attachment',
        'A large attachment', 'sender@bench.example',
        jsonb_build_array(jsonb_build_object('id', 1, 'filename', 'large.bin',
            'content_type', 'application/octet-stream', 'size', 26214400, 'stored', true,
            'sha256', repeat('ab', 32))),
        now()
    FROM email_inboxes AS inbox, (SELECT gen_random_uuid() AS id) AS fresh
    WHERE inbox.agent_id = :'agent'
    RETURNING id, agent_id
), pieces AS (
    INSERT INTO email_attachment_pieces (message_id, agent_id, attachment, piece, bytes)
    SELECT message.id, message.agent_id, 1, piece,
        decode(repeat(lpad(to_hex(piece), 2, '0'), 262144), 'hex')
    FROM message, generate_series(0, 99) AS piece
)
SELECT id FROM message;
SQL
)"
attachment_url="$unlimited_url/v1/email/messages/$attachment_message/attachments/att_1"
curl -fsS -o /dev/null -H "Authorization: Bearer $threads_key" "$attachment_url"
idle_rss="$(awk '/VmRSS/ {printf "%d", $2 / 1024}' "/proc/$unlimited_pid/status")"
reset_peak "$unlimited_pid"
speeds=()
for _ in 1 2 3 4; do
  speeds+=("$(curl -fsS -o /dev/null -w '%{speed_download}' -H "Authorization: Bearer $threads_key" "$attachment_url")")
done
download_peak="$(peak_mib "$unlimited_pid")"
download_mibs="$(printf '%s\n' "${speeds[@]}" | sort -g | sed -n 2p | awk '{printf "%.0f", $1 / 1048576}')"
printf '%-56s %10s MiB/s   peak RSS %s MiB over %s MiB idle\n' "GET a 25 MiB attachment, one at a time" \
  "$download_mibs" "$((download_peak - idle_rss))" "$idle_rss"
row "25 MiB attachment download: MiB/s" "$download_mibs" "" none ""
row "  peak server RSS over idle: MiB" "$((download_peak - idle_rss))" "" at_most 16

# --- Limits under a flood, and email --------------------------------------------------------------
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

created="$(target/release/agentctl agents create --label bench-inbox --email 2>/dev/null)"
inbox_address="$(json_field '["agent"]["email_inbox"]["address"]' <<<"$created")"
python3 scripts/bench-email.py webhooks "$inbox_address" "$webhook_secret" 60000 "$webhooks_file"
# No warm-up run: it would spend the first mails, and the measured run would meet them again as
# redeliveries, which cost less.
reset_peak "$unlimited_pid"
figures "POST /webhooks/email/inbound (new mail, signed)" \
  "$(BENCH_WEBHOOKS="$webhooks_file" wrk -t1 -c"$connections" -d"${duration}s" --latency -s scripts/bench-webhook.lua "$unlimited_url/webhooks/email/inbound")"
row "POST /webhooks/email/inbound msg/s" "$last_rps" "" none "" "$(peak_mib "$unlimited_pid")"

# --- The mixed load: one instance, two instances, and a soak ---------------------------------------
mixed() {
  local url="$1" seconds="$2" threads="$3" conns="$4"
  BENCH_KEYS="$mixed_keys_file" wrk -t"$threads" -c"$conns" -d"${seconds}s" --latency -s scripts/bench-mixed.lua "$url"
}
mixed "$unlimited_url/" 3 2 "$connections" >/dev/null
reset_peak "$unlimited_pid"
figures "mixed load, one instance" "$(mixed "$unlimited_url/" "$duration" 2 "$connections")"
one_instance_rps="$last_rps"
row "mixed load req/s, one instance" "$last_rps" "" none "" "$(peak_mib "$unlimited_pid")"
start_server SEND_RATE_PER_MINUTE=100000000 SEND_BURST=100000 SEND_CONCURRENCY_PER_AGENT=1000
second_url="$started_url"
mixed "$second_url/" 3 1 "$((connections / 2))" >/dev/null
first_log="$(mktemp -t agent-runtime-bench-mixed.XXXXXX)"
logs+=("$first_log")
mixed "$unlimited_url/" "$duration" 1 "$((connections / 2))" >"$first_log" &
first_half=$!
second_out="$(mixed "$second_url/" "$duration" 1 "$((connections / 2))")"
wait "$first_half"
figures "  mixed load, instance 1 of 2" "$(cat "$first_log")"
first_rps="$last_rps"
figures "  mixed load, instance 2 of 2" "$second_out"
two_rps="$(python3 -c "print(f'{$first_rps + $last_rps:.2f}')")"
printf '%-56s %10s req/s\n' "mixed load, two instances on one database" "$two_rps"
row "mixed load req/s, two instances / one" "$two_rps" "$one_instance_rps" none ""

echo "bench: soaking the mixed load for ${soak_secs}s, RSS sampled every 10 s" >&2
soak_samples="$(mktemp -t agent-runtime-bench-soak.XXXXXX)"
logs+=("$soak_samples")
soak_rate_log="$(mktemp -t agent-runtime-bench-soak-wrk.XXXXXX)"
logs+=("$soak_rate_log")
mixed "$unlimited_url/" "$soak_secs" 2 "$connections" >"$soak_rate_log" &
soak=$!
while kill -0 "$soak" 2>/dev/null; do
  awk '/VmRSS/ {print $2}' "/proc/$unlimited_pid/status" >>"$soak_samples"
  sleep 10
done
figures "mixed load, ${soak_secs}s soak" "$(cat "$soak_rate_log")"
soak_growth="$(python3 scripts/bench-table.py growth <"$soak_samples")"
printf '%-56s %s\n' "soak RSS, second minute -> last minute (MiB, ratio)" "$soak_growth"
row "soak RSS MiB: last minute / second minute" \
  "$(awk '{print $2}' <<<"$soak_growth")" "$(awk '{print $1}' <<<"$soak_growth")" max 1.05

# --- SMS: waits for a code ------------------------------------------------------------------------
stop_servers
# The soak's writes vacuumed before the waits: in one run autovacuum of the tables it churned ran
# during them, and their wake p99 read 690 ms (13-15 ms in runs of the waits alone).
echo "bench: vacuuming what the soak wrote" >&2
psql -q "$DATABASE_URL" -c "VACUUM (ANALYZE)"
# Twilio's webhook with a token of the bench's own; Twilio's API is unreachable (port 9), so the
# sync before each wait fails at once and the stored state is used, as when Twilio is down.
twilio_token="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
# A real provider's settings require /metrics behind a token.
export METRICS_TOKEN="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
start_server SMS_PROVIDER=twilio SMS_PUBLIC_BASE_URL=http://sms.bench.test \
  TWILIO_ACCOUNT_SID=AC0123456789abcdef0123456789abcdef TWILIO_AUTH_TOKEN="$twilio_token" \
  TWILIO_BASE_URL=http://127.0.0.1:9 TWILIO_TIMEOUT_MS=2000 METRICS_TOKEN="$METRICS_TOKEN"
waiters="${BENCH_WAITERS:-10000}"
waits_out="$(python3 scripts/bench-waiters.py "$started_url" "$DATABASE_URL" "${servers[-1]}" "$twilio_token" \
  http://sms.bench.test "$waiters" "$((waiters / 10))")"
echo "$waits_out"
waits_rss="$(sed -n 's/.*server RSS \([0-9]*\) MiB.*/\1/p' <<<"$waits_out")"
waits_busy="$(sed -n 's/.*database connections not idle \([0-9]*\).*/\1/p' <<<"$waits_out")"
waits_p99="$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$waits_out")"
# Waits are served by actix-web like every request (decision 0043): 16 KiB of its buffers each.
row "$waiters waits for a code: server RSS MiB" "$waits_rss" "" at_most 300
row "  database connections busy while they wait (+1 LISTEN)" "$waits_busy" "" at_most 1
row "  wake latency p99 ms" "$waits_p99" "" at_most 50

# --- Idle half-open connections -------------------------------------------------------------------
# Clients that send the first byte of a request and nothing more: each must be closed by the 5 s
# request-head deadline, costing no CPU while it waits.
stop_servers
start_server
half_open="${BENCH_HALF_OPEN:-$waiters}"
half_open_out="$(python3 scripts/bench-half-open.py "$started_url" "${servers[-1]}" "$half_open")"
echo "$half_open_out"
field() { sed -n "s/.*$1 \([0-9.]*\).*/\1/p" <<<"$half_open_out"; }
row "$half_open half-open connections: closed by the server" "$(field 'closed by the server')" "" at_least "$half_open"
row "  slowest closed after s (head deadline 5 s)" "$(field 'slowest closed after')" "" at_most 10
row "  server CPU % while they are open" "$(field 'server CPU while open')" "" at_most 10
row "  a health check meanwhile ms" "$(field 'health check meanwhile')" "" at_most 100
row "  server CPU % once they are gone" "$(field 'server CPU after')" "" at_most 2

# --- Events ---------------------------------------------------------------------------------------
# Webhooks to a receiver on this machine (a private address, allowed here), then streams.
stop_servers
start_server WEBHOOK_ALLOW_PRIVATE_TARGETS=true
events_agent="$(target/release/agentctl agents create --label bench --phone 2>/dev/null)"
events_key="$(json_field '["agent_key"]' <<<"$events_agent")"
events_agent_id="$(json_field '["agent"]["id"]' <<<"$events_agent")"
events_out="$(python3 scripts/bench-events.py webhooks "$started_url" "$DATABASE_URL" \
  "$events_key" "$events_agent_id" 200 20000)"
echo "$events_out"
row "commit to webhook delivery p99 ms, idle" \
  "$(sed -n 's/.*delivery, idle.*p99 \([0-9.]*\) ms.*/\1/p' <<<"$events_out")" "" at_most 100
row "webhook deliveries/s, 20,000 queued at once" \
  "$(sed -n 's/.*deliveries\/s \([0-9]*\).*/\1/p' <<<"$events_out")" "" at_least 1000
row "  delivered twice" "$(sed -n 's/.*delivered twice \([0-9]*\).*/\1/p' <<<"$events_out")" "" at_most 0
stop_servers
streams="${BENCH_STREAMS:-10000}"
start_server EVENT_STREAMS_PER_AGENT="$streams"
streams_out="$(python3 scripts/bench-events.py streams "$started_url" "$DATABASE_URL" \
  "$events_key" "$events_agent_id" "${servers[-1]}" "$streams")"
echo "$streams_out"
row "$streams event streams of one agent: server RSS MiB" \
  "$(sed -n 's/.*server RSS \([0-9]*\) MiB.*/\1/p' <<<"$streams_out")" "" at_most 256
row "  one event to every stream, p99 ms" \
  "$(sed -n 's/.*received it.*p99 \([0-9]*\) ms.*/\1/p' <<<"$streams_out")" "" at_most 250

# --- The console's pending page -------------------------------------------------------------------
# 1,000 intents awaiting a decision, 20 for each of 50 agents, in a database of their own made
# anew, and an operator's session written into it (a passkey needs a browser): GET
# /console/pending, one operator at a time, each request reviewing the oldest 100 (the page's
# most) against its policy now.
stop_servers
console_url="$(scripts/local-pg.sh agent_runtime_bench_console)"
psql -q "${console_url%/*}/postgres" \
  -c "DROP DATABASE IF EXISTS agent_runtime_bench_console WITH (FORCE)" \
  -c "CREATE DATABASE agent_runtime_bench_console"
start_server DATABASE_URL="$console_url"
echo "bench: creating 50 agents with 1,000 pending intents for the console" >&2
for _ in $(seq 1 50); do
  DATABASE_URL="$console_url" target/release/agentctl agents create --label console-bench --wallet >/dev/null 2>&1
done
console_session="$(python3 -c 'import secrets; print(secrets.token_urlsafe(32))')"
psql -q "$console_url" -v session="$console_session" <<'SQL'
INSERT INTO transfer_intents (id, agent_id, wallet_id, status, asset, chain, recipient_address,
    amount_atomic, created_at, updated_at)
SELECT gen_random_uuid(), wallet.agent_id, wallet.id, 'pending_confirmation', 'USDC', 'base',
    '0x' || lpad(to_hex(n % 7 + 1), 40, '0'), 1000000, now() - make_interval(secs => n * 3),
    now() - make_interval(secs => n * 3)
FROM wallets AS wallet, generate_series(1, 20) AS n;
INSERT INTO operators (id, name, role) VALUES (gen_random_uuid(), 'bench', 'approver');
INSERT INTO operator_sessions (token_hash, operator_id, csrf_token)
SELECT sha256(convert_to(:'session', 'UTF8')), id, 'bench' FROM operators WHERE name = 'bench';
ANALYZE;
SQL
console_cookie="Cookie: __Host-console-session=$console_session"
one_at_a_time "GET /console/pending, 1,000 pending, one operator" \
  "$started_url/console/pending" -H "$console_cookie"
if [[ "$last_non2xx" != 0 ]]; then
  echo "bench: the console's pending page answered $last_non2xx requests with other than 2xx" >&2
fi
row "console pending page, 1,000 pending: p99 ms" "$last_p99_ms" "" at_most 50
stop_servers

echo
python3 scripts/bench-table.py table <"$results"
failover_figures
