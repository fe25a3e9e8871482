#!/usr/bin/env bash
# `make run`: the server on 127.0.0.1:8080 (or BIND_ADDR) with sandbox providers. Once it answers,
# prints the agentctl line that works against its database.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
where="DATABASE_URL"
[[ -n "${DATABASE_URL:-}" ]] || where="the project-local PostgreSQL under .data/"
use_local_database DATABASE_URL agent_runtime
need_command curl curl "the readiness check"
bind="${BIND_ADDR:-127.0.0.1:8080}"
host="${bind%:*}"
port="${bind##*:}"
# A port another process holds would answer the readiness poll below in this server's place.
if ! python3 -c 'import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1].strip("[]"), int(sys.argv[2])))' "$host" "$port" 2>/dev/null; then
  echo "run: BIND_ADDR $bind is already in use; stop what listens there or set BIND_ADDR, e.g. BIND_ADDR=127.0.0.1:8081 make run" >&2
  exit 1
fi
cargo build --bins --locked
# The sandbox pays resources served on this machine or a private network (x402 fetches).
export X402_ALLOW_PRIVATE_TARGETS="${X402_ALLOW_PRIVATE_TARGETS:-true}"
target/debug/agent-runtime &
server=$!
# The project-local PostgreSQL stays up for the next run (and for agentctl): say so on the way out.
stopped() {
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" || true
  if [[ "$where" != DATABASE_URL ]]; then
    echo "run: the server stopped; the project-local PostgreSQL under .data/ keeps running (make db-stop stops it)" >&2
  fi
}
trap stopped INT TERM
until curl -fsS "http://$bind/healthz" >/dev/null 2>&1; do
  if ! kill -0 "$server" 2>/dev/null; then
    wait "$server" || exit $?
    exit 1
  fi
  sleep 0.2
done
agentctl="scripts/agentctl"
[[ "$where" == DATABASE_URL ]] && agentctl="DATABASE_URL=<the same URL> scripts/agentctl"
cat >&2 <<TXT

agent-runtime: serving on http://$bind with sandbox providers (database: $where)
From another shell in this folder, follow the README's walkthrough: it creates an agent with an
inbox, a number and a wallet (its key is printed once) and goes through mail, SMS and a transfer:
  $agentctl agents create --label first --email --phone --wallet
API description: http://$bind/docs
Stop with Ctrl-C (the project-local PostgreSQL keeps running; make db-stop stops it).

TXT
wait "$server"
