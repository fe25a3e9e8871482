#!/usr/bin/env bash
# `make fuzz`: schemathesis generates requests from the API description the server serves
# (/openapi.json) and checks every answer against it: no 500, and every status, content type,
# header and body documented. It runs as an agent with an inbox, a number and a wallet with a
# spend policy, on a fresh database of its own, and fails on any finding.
#
#   scripts/fuzz.sh           every operation, at least FUZZ_MIN_CASES cases (make fuzz)
#   scripts/fuzz.sh --quick   a short stateful run, part of make test
#   scripts/fuzz.sh [--quick] -- ARGS...   with more of schemathesis's options, e.g. to replay one
#                                          operation: -- --include-path /v1/wallet/send
#
#   FUZZ_SEED        the seed of a run to replay (default: a new one, printed; --quick: 1)
#   FUZZ_EXAMPLES    cases per operation of the fuzzing phase (default 250; --quick: 20)
#   FUZZ_MIN_CASES   fewest cases a full run must make (default 5000)
#   FUZZ_ADMIN_URL   a database of the PostgreSQL server where the run's own database is made and
#                    dropped (default: the project-local cluster's `postgres`)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

quick=false
[[ "${1:-}" == --quick ]] && { quick=true; shift; }
[[ "${1:-}" == -- ]] && shift
if $quick; then
  seed="${FUZZ_SEED:-1}"
  examples="${FUZZ_EXAMPLES:-30}"
  min_cases=0
  # The stateful phase chains operations by the links schemathesis infers from the answers.
  phases=fuzzing,stateful
else
  seed="${FUZZ_SEED:-$(python3 -c 'import random; print(random.randrange(2**31))')}"
  examples="${FUZZ_EXAMPLES:-250}"
  min_cases="${FUZZ_MIN_CASES:-5000}"
  phases=examples,coverage,fuzzing,stateful
fi

schemathesis="$(dirname "$(python_venv fuzz-venv "make fuzz" \
  schemathesis==4.32.5 anyio==4.16.0 certifi==2026.10.18 charset-normalizer==3.5.2 click==8.5.1 \
  graphql-core==3.3.2 harfile==0.6.0 hypothesis==6.170.15 hypothesis-graphql==0.13.5 idna==3.20 \
  iniconfig==2.3.1 jsonschema_rs==0.60.3 markdown-it-py==4.3.0 MarkupSafe==3.0.4 mdurl==0.1.2 \
  packaging==26.3 pluggy==1.7.0 Pygments==2.21.0 pyrate-limiter==4.5.1 pytest==9.2.0 \
  PyYAML==6.0.3 requests==2.34.2 rich==15.0.0 sortedcontainers==2.4.0 typing_extensions==4.16.0 \
  urllib3==2.8.0 Werkzeug==3.1.9)")/schemathesis"
need_command psql postgresql-client "the fuzz run's database"
need_command curl curl "the readiness check"

# A database of its own, so every run starts from the same state and runs may overlap.
use_local_database FUZZ_ADMIN_URL postgres
admin_base="${FUZZ_ADMIN_URL%%\?*}"
admin_options="${FUZZ_ADMIN_URL#"$admin_base"}"
database="agent_runtime_fuzz_$$"
export DATABASE_URL="${admin_base%/*}/$database$admin_options"
psql -q "$FUZZ_ADMIN_URL" -c "CREATE DATABASE $database"

workdir="$root/target/fuzz/$($quick && echo quick || echo full)"
mkdir -p "$workdir"
log="$workdir/server.log"
server=""
finish() {
  if [[ -n "$server" ]]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  psql -q "$FUZZ_ADMIN_URL" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" || true
}
trap finish EXIT

build_debug_binaries
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
# Send limits far above what the run asks, so their 429s do not crowd out the other answers (they
# are still documented and checked where they can happen). Event streams end after two seconds,
# as their clients reconnect: schemathesis reads a stream to its end.
BIND_ADDR="127.0.0.1:$port" RUST_LOG=warn EVENT_STREAM_MAX_SECS=2 \
  SEND_RATE_PER_MINUTE=100000000 SEND_BURST=100000 SEND_CONCURRENCY_PER_AGENT=1000 \
  EMAIL_SEND_RATE_PER_MINUTE=100000000 EMAIL_SEND_BURST=100000 \
  EMAIL_AGENT_SEND_RATE_PER_MINUTE=100000000 EMAIL_AGENT_SEND_BURST=100000 \
  target/debug/agent-runtime >"$log" 2>&1 &
server=$!
url="http://127.0.0.1:$port"
until curl -fsS "$url/healthz" >/dev/null 2>&1; do
  kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done

# The agent, and something in each of its resources for the reads to return.
json_field() { python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }
created="$(target/debug/agentctl agents create --label fuzz --email --phone --wallet)"
agent_key="$(json_field '["agent_key"]' <<<"$created")"
agent_id="$(json_field '["agent"]["id"]' <<<"$created")"
target/debug/agentctl policy set "$agent_id" --max-per-tx 25000000 --max-daily 50000000 >/dev/null
target/debug/agentctl sandbox fund "$(json_field '["agent"]["wallet"]["address"]' <<<"$created")" 100000000 >/dev/null
target/debug/agentctl sandbox email --to "$(json_field '["agent"]["email_inbox"]["address"]' <<<"$created")" \
  --from alice@example.org --subject "Your code" --text "Your verification code is 385920" >/dev/null
target/debug/agentctl sandbox sms --to "$(json_field '["agent"]["phone_number"]["number"]' <<<"$created")" \
  --from +15550001111 --body "Your code is 385920" >/dev/null

echo "fuzz: schemathesis against $url/openapi.json, phases $phases, seed $seed (replay: FUZZ_SEED=$seed)" >&2
output="$workdir/schemathesis.txt"
status=0
# The key reaches schemathesis through its environment (the configuration reads it), never argv.
FUZZ_AGENT_KEY="$agent_key" "$schemathesis" --config-file scripts/fuzz/schemathesis.toml run "$url/openapi.json" \
  --phases "$phases" --max-examples "$examples" --seed "$seed" \
  --no-color "$@" \
  | tee "$output" || status=$?
# The summary's count of the cases generated over every phase: "Test cases:" then "  N generated, ...".
cases="$(awk '/^Test cases:/ {getline; print $1}' "$output")"
cases="${cases:-0}"
echo "fuzz: $cases cases, seed $seed; server log: $log" >&2
if [[ "$status" != 0 ]]; then
  echo "fuzz: schemathesis found failures (replay: FUZZ_SEED=$seed)" >&2
  exit "$status"
fi
if (( cases < min_cases )); then
  echo "fuzz: $cases cases, fewer than $min_cases: raise FUZZ_EXAMPLES" >&2
  exit 1
fi
