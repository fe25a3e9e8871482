#!/usr/bin/env bash
# `make run`: the server on 127.0.0.1:8080 (or BIND_ADDR) with sandbox providers. Once it answers,
# prints where the console is, the first command for it and the walkthrough's, all working
# against its database. AGENT_RUNTIME_BIN names a server binary to run instead of building one
# (the first-run tests run the one `make test` built).
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
server_binary="${AGENT_RUNTIME_BIN:-target/debug/agent-runtime}"
[[ -n "${AGENT_RUNTIME_BIN:-}" ]] || cargo build --bins --locked
# The sandbox delivers to receivers and pays resources served on this machine or a private
# network: webhooks and x402 fetches may target them (decision 0096). Production leaves both off.
export WEBHOOK_ALLOW_PRIVATE_TARGETS="${WEBHOOK_ALLOW_PRIVATE_TARGETS:-true}"
export X402_ALLOW_PRIVATE_TARGETS="${X402_ALLOW_PRIVATE_TARGETS:-true}"
"$server_binary" &
server=$!
# Ctrl-C reaches the server too; it finishes what it has in hand. The project-local PostgreSQL
# stays up for the next run (and for agentctl): say so on the way out. Stopping is what Ctrl-C
# asks for, so it is a success: make reports no error.
stopped() {
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" || true
  if [[ "$where" == DATABASE_URL ]]; then
    echo "run: the server stopped" >&2
  else
    echo "run: the server stopped; the project-local PostgreSQL under .data/ keeps running (make db-stop stops it)" >&2
  fi
  exit 0
}
trap stopped INT TERM
until curl -fsS "http://$bind/healthz" >/dev/null 2>&1; do
  if ! kill -0 "$server" 2>/dev/null; then
    wait "$server" || exit $?
    exit 1
  fi
  sleep 0.2
done
# agentctl finds the console's URL and the database as the server does.
agentctl="scripts/agentctl"
[[ "$where" == DATABASE_URL ]] && agentctl="DATABASE_URL=<the same URL> $agentctl"
[[ "$bind" == 127.0.0.1:8080 ]] || agentctl="BIND_ADDR=$bind $agentctl"
[[ -z "${PUBLIC_BASE_URL:-}" ]] || agentctl="PUBLIC_BASE_URL=$PUBLIC_BASE_URL $agentctl"
console="${PUBLIC_BASE_URL:-http://localhost:$port}"
cat >&2 <<TXT

agent-runtime: serving on http://$bind with sandbox providers (database: $where)
The operator console is at ${console%/}/console (passkeys are bound to that name: not 127.0.0.1).
Invite yourself from another shell in this folder, then open the enroll_url it prints there:
  $agentctl operators invite --name admin --role admin
The README's walkthrough creates an agent with an inbox, a number and a wallet (its key is printed
once) and goes through mail, SMS and a transfer:
  $agentctl agents create --label first --email --phone --wallet
API description: http://$bind/docs
Webhooks and x402 fetches may target this machine (WEBHOOK_ALLOW_PRIVATE_TARGETS, X402_ALLOW_PRIVATE_TARGETS).
Stop with Ctrl-C.

TXT
wait "$server"
