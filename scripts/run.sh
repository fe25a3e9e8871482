#!/usr/bin/env bash
# `make run`: the server on 127.0.0.1:8080 (or BIND_ADDR) with sandbox providers.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
where="DATABASE_URL"
[[ -n "${DATABASE_URL:-}" ]] || where="the project-local PostgreSQL under .data/"
use_local_database DATABASE_URL agent_runtime
cargo build --bins --locked
bind="${BIND_ADDR:-127.0.0.1:8080}"
cat >&2 <<TXT

agent-runtime: serving on http://$bind with sandbox providers (database: $where)
Create a first agent from another shell in this folder; its key is printed once:
  make agentctl ARGS="agents create --label first --email --phone --wallet"
Then call the API with it:
  curl -H "Authorization: Bearer <agent_key>" http://$bind/v1/agents/me
API description: http://$bind/docs   Stop with Ctrl-C.

TXT
exec target/debug/agent-runtime
