#!/usr/bin/env bash
# `make profile`: flame graphs of the server under each load scenario, to see where the time goes
# before changing anything. The release code with line tables and frame pointers (the `profiling`
# cargo profile, built into target/profiling/) is driven by wrk while perf samples it; for each
# scenario target/profile/ gets
#   <scenario>.svg        the flame graph (open it in a browser; it is searchable)
#   <scenario>.folded     the collapsed stacks the graph is drawn from, one stack a line
#   <scenario>.perf.data  the samples themselves, for `perf report -i`
# and the requests/s and the ten frames with the most self time are printed.
#
#   PROFILE_DURATION     seconds of measured load, sampled, per scenario (default 10)
#   PROFILE_CONNECTIONS  concurrent connections (default 64)
#   PROFILE_CALL_GRAPH   how perf walks the stacks: dwarf (default; through glibc's frames too, whose
#                        lack of frame pointers cuts fp's stacks at send, recv and malloc) or fp
#   PROFILE_INLINE       1: name inlined functions as frames of their own, from the line tables
#                        (perf runs addr2line: about a minute of a core more per scenario)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
duration="${PROFILE_DURATION:-10}"
connections="${PROFILE_CONNECTIONS:-64}"
call_graph="${PROFILE_CALL_GRAPH:-dwarf}"
inline=--no-inline
[[ "${PROFILE_INLINE:-0}" == 0 ]] || inline=--inline
out="$root/target/profile"
inferno_version=0.12.8
tools="$root/.data/tools"

need_command perf linux-perf "the sampling profiler"
need_command wrk wrk "the load generator"
need_command curl curl "the readiness check"

# inferno draws the flame graphs: from PATH, or installed from crates.io into .data/tools (a pinned
# version, built once per checkout).
collapse="$(command -v inferno-collapse-perf || true)"
flamegraph="$(command -v inferno-flamegraph || true)"
if [[ -z "$collapse" || -z "$flamegraph" ]]; then
  collapse="$tools/bin/inferno-collapse-perf"
  flamegraph="$tools/bin/inferno-flamegraph"
  if [[ ! -x "$collapse" || ! -x "$flamegraph" ]] \
    || ! grep -q "\"inferno $inferno_version " "$tools/.crates.toml" 2>/dev/null; then
    echo "profile: installing inferno $inferno_version from crates.io (first run only, about a minute)" >&2
    cargo install inferno --version "$inferno_version" --locked --root "$tools" --quiet
  fi
fi

use_local_database DATABASE_URL agent_runtime_profile

# Frame pointers let perf walk the stacks cheaply (-g); the standard library has them already.
echo "profile: building the profiling binaries (target/profiling/; the first build takes minutes)" >&2
RUSTFLAGS="${RUSTFLAGS:-} -C force-frame-pointers=yes" cargo build --profile profiling --bins --locked
server_bin=target/profiling/agent-runtime
agentctl=target/profiling/agentctl

echo "profile: applying migrations to agent_runtime_profile" >&2
"$server_bin" migrate >/dev/null

server=""
perf_pid=""
wrk_pid=""
log="$(mktemp -t agent-runtime-profile.XXXXXX.log)"
keys_file="$(mktemp -t agent-runtime-profile-keys.XXXXXX)"
webhooks_file="$(mktemp -t agent-runtime-profile-webhooks.XXXXXX)"
wrk_log="$(mktemp -t agent-runtime-profile-wrk.XXXXXX)"
perf_log="$(mktemp -t agent-runtime-profile-perf.XXXXXX)"
stop() {
  for pid in "$wrk_pid" "$perf_pid" "$server"; do
    [[ -n "$pid" ]] || continue
    kill -INT "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -f "$log" "$keys_file" "$webhooks_file" "$wrk_log" "$perf_log"
}
trap stop EXIT

# The server with the send limits out of the way (as `make bench` measures throughput), on a free
# port; not in a command substitution, which would lose the process to a subshell.
port="$(free_port)"
url="http://127.0.0.1:$port"
webhook_secret="whsec_$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(24)).decode())')"
echo "profile: starting $server_bin on $url" >&2
env SEND_RATE_PER_MINUTE=100000000 SEND_BURST=100000 SEND_CONCURRENCY_PER_AGENT=1000 \
  EMAIL_WEBHOOK_SECRETS="$webhook_secret" BIND_ADDR="127.0.0.1:$port" "$server_bin" --no-migrate >"$log" 2>&1 &
server=$!
for attempt in $(seq 1 300); do
  curl -fsS "$url/healthz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
  [[ "$attempt" != 300 ]] || { echo "profile: the server did not answer" >&2; exit 1; }
  sleep 0.1
done

create_agent() { "$agentctl" --no-migrate agents create --label profile "$@" 2>/dev/null; }
echo "profile: creating agents (one with email and a wallet, 100 with both and a spend policy)" >&2
created="$(create_agent --email --wallet)"
key="$(json_field '["agent_key"]' <<<"$created")"
inbox_address="$(json_field '["agent"]["email_inbox"]["address"]' <<<"$created")"
create_spending_agents profile 100 "$keys_file"
intents_key="$(head -n 1 "$keys_file")"
# More distinct mails than the inbound scenario takes in, so none of its mails is a redelivery.
python3 scripts/bench-email.py webhooks "$inbox_address" "$webhook_secret" 60000 "$webhooks_file"
echo "profile: delivering 5 mails to $inbox_address" >&2
for n in 1 2 3 4 5; do
  "$agentctl" --no-migrate sandbox email --to "$inbox_address" --from "sender$n@profile.example" \
    --subject "Message $n" --text "Body of message $n" >/dev/null 2>&1
done

# The ten frames with the most self time in a folded file (the last frame of each stack, summed);
# then again with the kernel's frames charged to the user-space frame that called into the kernel
# (`__send`, `epoll_wait`, ...), whose own callers the flame graph shows.
top_frames() {
  python3 - "$1" <<'PY'
import collections, sys
own, user, total, kernel = collections.Counter(), collections.Counter(), 0, 0
with open(sys.argv[1]) as folded:
    for line in folded:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        frames, count = stack.split(";"), int(count)
        total += count
        own[frames[-1]] += count
        if frames[-1].endswith("_[k]"):
            kernel += count
        while len(frames) > 1 and frames[-1].endswith("_[k]"):
            frames.pop()
        user[frames[-1] if len(frames) > 1 else "[kernel only]"] += count
total = max(total, 1)
for title, frames in (("self time", own),
                      (f"self time, the kernel's ({100 * kernel / total:.0f}% of all) charged to its caller", user)):
    print(f"  {title}:")
    for frame, count in frames.most_common(10):
        print(f"  {100 * count / total:5.1f}%  {frame[:160]}")
PY
}

# CPU time the server has used, user and system, in clock ticks.
server_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }

summary=()
# One scenario: warm up, then wrk for `duration` seconds with perf sampling the server meanwhile;
# then the flame graph. Extra arguments go to wrk; `wrk_threads` (2 when unset) its threads.
scenario() {
  local name="$1" title="$2" target="$3"
  shift 3
  local data="$out/$name.perf.data" rps non2xx ticks started cpu
  echo >&2
  local threads="${wrk_threads:-2}"
  echo "profile: [$name] $title: 2s warm-up, then ${duration}s of wrk ($threads threads, $connections connections) under perf" >&2
  wrk -t"$threads" -c"$connections" -d2s "$@" "$target" >/dev/null
  # perf starts once the load is on and stops before it ends, so it samples only the measured run.
  wrk -t"$threads" -c"$connections" -d"$((duration + 1))s" "$@" "$target" >"$wrk_log" &
  wrk_pid=$!
  sleep 0.5
  rm -f "$data"
  ticks="$(server_ticks)"
  started="$(date +%s%N)"
  perf record -F 499 --call-graph "$call_graph" -p "$server" -o "$data" -- sleep "$duration" >"$perf_log" 2>&1 &
  perf_pid=$!
  wait "$perf_pid" || { cat "$perf_log" >&2; exit 1; }
  perf_pid=""
  cpu="$(python3 -c "print(f'{100 * ($(server_ticks) - $ticks) / $(getconf CLK_TCK) / (($(date +%s%N) - $started) / 1e9):.0f}')")"
  wait "$wrk_pid"
  wrk_pid=""
  rps="$(awk '/^Requests\/sec/ {print $2}' "$wrk_log")"
  non2xx="$(awk '/Non-2xx/ {print $NF}' "$wrk_log")"
  echo "profile: [$name] $rps requests/s (non-2xx: ${non2xx:-0}); drawing the flame graph" >&2
  perf script "$inline" -i "$data" 2>/dev/null | "$collapse" --kernel >"$out/$name.folded"
  "$flamegraph" --title "agent-runtime: $title ($rps req/s)" "$out/$name.folded" >"$out/$name.svg"
  echo "$title: $rps requests/s, the server busy ${cpu}% of one core; $out/$name.svg"
  top_frames "$out/$name.folded"
  summary+=("$(printf '%-44s %10s req/s   server %4s%% of a core   target/profile/%s.svg' "$title" "$rps" "$cpu" "$name")")
}

mkdir -p "$out"
echo
echo "agent-runtime profile: perf at 499 Hz, call graphs by $call_graph, wrk 2 threads (1 for inbound mail), $connections connections, ${duration}s per scenario, $(nproc) cores"
scenario agents-me "GET /v1/agents/me" "$url/v1/agents/me" -H "Authorization: Bearer $key"
BENCH_KEYS="$keys_file" scenario wallet-send "POST /v1/wallet/send, 100 wallets" "$url/v1/wallet/send" \
  -s scripts/bench-send.lua
scenario wallet-policy "GET /v1/wallet/policy" "$url/v1/wallet/policy" -H "Authorization: Bearer $key"
# An agent the send scenario gave intents to, so the first page is full.
scenario wallet-intents "GET /v1/wallet/intents?limit=20, first page" "$url/v1/wallet/intents?limit=20" \
  -H "Authorization: Bearer $intents_key"
scenario email-inbox "GET /v1/email/inbox?limit=20, first page" "$url/v1/email/inbox?limit=20" \
  -H "Authorization: Bearer $key"
# One wrk thread: every thread would send the file's mails from its start, the second as redeliveries.
wrk_threads=1 BENCH_WEBHOOKS="$webhooks_file" scenario email-inbound "POST /webhooks/email/inbound, new mail" \
  "$url/webhooks/email/inbound" -s scripts/bench-webhook.lua
BENCH_KEYS="$keys_file" scenario mixed "the mixed load of make bench" "$url/" -s scripts/bench-mixed.lua

echo
echo "profile: flame graphs in target/profile/ (perf report -i target/profile/<scenario>.perf.data for more)"
printf '%s\n' "${summary[@]}"
