#!/usr/bin/env bash
# The MCP conformance suite (npm's @modelcontextprotocol/conformance) against a running server's
# /mcp. The suite, and the Node 22 it needs (the system's may be older), are installed from the npm
# registry into tests/mcp/node_modules (pinned by its package-lock.json) when they are missing;
# a run after that is offline.
#
#   scripts/mcp-conformance.sh
#       ensure the tools; print the paths of their node and of the suite's CLI
#   scripts/mcp-conformance.sh run MCP_URL AGENT_KEY OUTPUT_DIR
#       run the required scenarios of 2025-11-25 and of 2026-07-28 against MCP_URL (http://…/mcp)
#       as the agent AGENT_KEY, each against its baseline tests/mcp/conformance-REVISION.yml;
#       results (checks.json per scenario) in OUTPUT_DIR/REVISION/, the whole output in
#       OUTPUT_DIR/REVISION.log; prints both summaries and fails when either run does.
#
# The suite cannot send an Authorization header: tests/mcp/auth-proxy.mjs, a local reverse proxy
# that adds the agent key, stands between them.
caller="$PWD" # common.sh moves to the project root; OUTPUT_DIR is the caller's
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail
tools="$root/tests/mcp"
node="$tools/node_modules/.bin/node"
cli="$tools/node_modules/@modelcontextprotocol/conformance/dist/index.js"
revisions=(2025-11-25 2026-07-28)

if [[ ! -x "$node" || ! -f "$cli" ]]; then
  command -v npm >/dev/null || { echo "mcp-conformance: npm is required (Node.js)" >&2; exit 1; }
  echo "mcp-conformance: installing the MCP conformance suite and Node 22 from the npm registry" >&2
  # ci installs exactly the lock and never rewrites it.
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
# Never the system's node: the suite needs 22.
[[ "$("$node" --version)" == v22.* ]] || { echo "mcp-conformance: $node is not Node 22" >&2; exit 1; }

if [[ "${1:-}" != run ]]; then
  [[ $# -eq 0 ]] || { echo "usage: $0 [run MCP_URL AGENT_KEY OUTPUT_DIR]" >&2; exit 2; }
  echo "$node"
  echo "$cli"
  exit 0
fi
[[ $# -eq 4 ]] || { echo "usage: $0 run MCP_URL AGENT_KEY OUTPUT_DIR" >&2; exit 2; }
url="$2" key="$3" out="$4"
[[ "$url" =~ ^http://[^/]+(/.*)?$ ]] || { echo "mcp-conformance: MCP_URL must be http://HOST:PORT/PATH" >&2; exit 2; }
path="${BASH_REMATCH[1]:-/}"
[[ "$out" == /* ]] || out="$caller/$out"
mkdir -p "$out"

# Whatever the suite starts as `node` is Node 22 too; npm, were anything to call it, stays offline.
export PATH="$tools/node_modules/.bin:$PATH" npm_config_offline=true

port_file="$out/proxy.port"
: >"$port_file"
MCP_AGENT_KEY="$key" "$node" "$tools/auth-proxy.mjs" "$url" >"$port_file" 2>"$out/proxy.log" &
proxy=$!
trap 'kill "$proxy" 2>/dev/null || true; wait "$proxy" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM
for _ in $(seq 1 100); do
  [[ -s "$port_file" ]] && break
  kill -0 "$proxy" 2>/dev/null || { cat "$out/proxy.log" >&2; exit 1; }
  sleep 0.05
done
port="$(head -n 1 "$port_file")"
[[ "$port" =~ ^[0-9]+$ ]] || { echo "mcp-conformance: the proxy did not start" >&2; cat "$out/proxy.log" >&2; exit 1; }

failed=()
for revision in "${revisions[@]}"; do
  started="${EPOCHREALTIME/./}"
  # The suite colours its output whatever it writes to: the colours are taken out.
  set +e
  "$node" "$cli" server --url "http://127.0.0.1:$port$path" --requirements "$revision" \
    --expected-failures "$tools/conformance-$revision.yml" -o "$out/$revision" 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' >"$out/$revision.log"
  status="${PIPESTATUS[0]}"
  set -e
  took=$(( (${EPOCHREALTIME/./} - started) / 1000 ))
  printf '=== MCP conformance %s: exit %s in %d.%03ds (log: %s)\n' \
    "$revision" "$status" $((took / 1000)) $((took % 1000)) "$out/$revision.log"
  sed -n '/^=== SUMMARY ===$/,$p' "$out/$revision.log"
  echo
  (( status == 0 )) || failed+=("$revision")
done
if (( ${#failed[@]} )); then
  echo "mcp-conformance: failed for ${failed[*]}" >&2
  exit 1
fi
echo "mcp-conformance: both revisions pass against their baselines"
