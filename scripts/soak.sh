#!/usr/bin/env bash
# `make soak`: the mixed load of `make bench` at a steady rate, not saturation, for half an hour on
# the release server; every minute the server's RSS and open file descriptors, the database's
# connections and that minute's p50/p99 go into target/soak/soak.csv, drawn in target/soak/soak.png.
# Fails if any of RSS, descriptors, connections or p99 trends upward, or on any error answer
# (decision 0036). Not part of `make test` or CI: it takes SOAK_MINUTES.
#
#   SOAK_MINUTES      minutes of load (default 30)
#   SOAK_RATE         requests a second (default 300)
#   SOAK_CONNECTIONS  keep-alive connections the load is spread over (default 16)
#   SOAK_AGENTS       agents with an inbox and a wallet under a spend policy (default 100)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
minutes="${SOAK_MINUTES:-30}"
rate="${SOAK_RATE:-300}"
out="$root/target/soak"

need_command curl curl "the server's health check"
need_command psql postgresql-client "counting the database's connections"
plot_python="$(python_venv soak-venv "the soak's chart" \
  matplotlib==3.11.2 contourpy==1.3.3 cycler==0.12.1 fonttools==4.68.0 kiwisolver==1.5.1 \
  numpy==2.4.6 packaging==26.3 pillow==13.0.0 pyparsing==3.3.3 python-dateutil==4.0.0 \
  tzdata==2026.6)"

# A database of its own, made anew: each run starts from the same empty state.
if [[ -z "${DATABASE_URL:-}" ]]; then
  admin_url="$(scripts/local-pg.sh postgres)"
  psql -qtA "$admin_url" -c "DROP DATABASE IF EXISTS agent_runtime_soak WITH (FORCE)" >/dev/null
  use_local_database DATABASE_URL agent_runtime_soak
fi

build_release
keys_file="$(mktemp -t agent-runtime-soak-keys.XXXXXX)"
addresses_file="$(mktemp -t agent-runtime-soak-addresses.XXXXXX)"
trap 'stop_servers; rm -f "${logs[@]}" "$keys_file" "$addresses_file"' EXIT

webhook_secret="whsec_$(python3 -c 'import base64, os; print(base64.b64encode(os.urandom(24)).decode())')"
# Send limits above the steady rate, as in `make bench`: 429s would only measure the limiter.
start_server SEND_RATE_PER_MINUTE=100000000 SEND_BURST=100000 SEND_CONCURRENCY_PER_AGENT=1000 \
  EMAIL_WEBHOOK_SECRETS="$webhook_secret"
agents="${SOAK_AGENTS:-100}"
echo "soak: creating $agents agents with inboxes, wallets and a daily limit" >&2
create_spending_agents soak "$agents" "$keys_file" "$addresses_file"

mkdir -p "$out"
echo "soak: $rate requests/s for $minutes min on $started_url (pid ${servers[-1]}), $(nproc) cores" >&2
python3 scripts/soak.py run "$started_url" "$keys_file" "$addresses_file" "$webhook_secret" \
  "${servers[-1]}" "$DATABASE_URL" "$minutes" "$rate" "$out/soak.csv"
stop_servers
echo
"$plot_python" scripts/soak.py report "$out/soak.csv" "$out/soak.png"
echo "soak: figures in $out/soak.csv, chart in $out/soak.png"
