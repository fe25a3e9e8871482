#!/usr/bin/env bash
# `make bench`: drives the release server with wrk and prints requests/s, p50, p99 and the
# server's peak RSS. Figures only: nothing here passes or fails on a number.
#
#   BENCH_DURATION   seconds of measured load per scenario (default 15)
#   BENCH_CONNECTIONS  concurrent connections (default 64)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
duration="${BENCH_DURATION:-15}"
connections="${BENCH_CONNECTIONS:-64}"

need_command wrk wrk "the load generator"

use_local_database DATABASE_URL agent_runtime_bench

echo "bench: building release binaries" >&2
cargo build --release --bins --locked

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
log="$(mktemp -t agent-runtime-bench.XXXXXX.log)"
keys_file="$(mktemp -t agent-runtime-bench-keys.XXXXXX)"
single_key_file="$(mktemp -t agent-runtime-bench-key.XXXXXX)"
BIND_ADDR="127.0.0.1:$port" target/release/agent-runtime >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -f "$log" "$keys_file" "$single_key_file"' EXIT

for _ in $(seq 1 300); do
  if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then break; fi
  kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done

create_key() {
  target/release/agentctl agents create --label bench "$@" 2>/dev/null \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["agent_key"])'
}
key="$(create_key --email --phone --wallet)"
echo "bench: creating 100 agents with wallets" >&2
for _ in $(seq 1 100); do create_key --wallet >>"$keys_file"; done
create_key --wallet >"$single_key_file"

# One scenario: warm up, measure, print one line of figures. Extra arguments go to wrk.
scenario() {
  local name="$1" path="$2"
  shift 2
  wrk -t2 -c"$connections" -d3s "$@" "http://127.0.0.1:$port$path" >/dev/null
  local out
  out="$(wrk -t2 -c"$connections" -d"${duration}s" --latency "$@" "http://127.0.0.1:$port$path")"
  local rps p50 p99 non2xx
  rps="$(awk '/^Requests\/sec/ {print $2}' <<<"$out")"
  p50="$(awk '$1 == "50%" {print $2}' <<<"$out")"
  p99="$(awk '$1 == "99%" {print $2}' <<<"$out")"
  non2xx="$(awk '/Non-2xx/ {print $NF}' <<<"$out")"
  printf '%-40s %10s req/s   p50 %8s   p99 %8s   non-2xx %s\n' "$name" "$rps" "$p50" "$p99" "${non2xx:-0}"
}

echo
echo "agent-runtime bench: wrk, 2 threads, $connections connections, ${duration}s per scenario, $(nproc) cores"
scenario "GET /v1/agents/me" "/v1/agents/me" -H "Authorization: Bearer $key"
BENCH_KEYS="$keys_file" scenario "POST /v1/wallet/send, 100 wallets" "/v1/wallet/send" -s scripts/bench-send.lua
BENCH_KEYS="$single_key_file" scenario "POST /v1/wallet/send, one wallet" "/v1/wallet/send" -s scripts/bench-send.lua
rss_kib="$(awk '/VmHWM/ {print $2}' "/proc/$server/status")"
echo "server peak RSS: $((rss_kib / 1024)) MiB ($rss_kib KiB)"
