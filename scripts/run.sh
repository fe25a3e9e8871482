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
target/debug/agent-runtime &
server=$!
trap 'kill -TERM "$server" 2>/dev/null || true; wait "$server"' INT TERM
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
From another shell in this folder, create an agent (its key is printed once) and call the API:
  $agentctl agents create --label first --email --phone --wallet
  curl -H "Authorization: Bearer <agent_key>" http://$bind/v1/agents/me
The README's walkthrough goes on to a first transfer. API description: http://$bind/docs
Stop with Ctrl-C.

TXT
wait "$server"
