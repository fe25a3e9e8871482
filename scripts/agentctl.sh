#!/usr/bin/env bash
# `make agentctl ARGS=...`: agentctl on the same database as `make run`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
use_local_database DATABASE_URL agent_runtime
cargo build --bin agentctl --locked --quiet
exec target/debug/agentctl "$@"
