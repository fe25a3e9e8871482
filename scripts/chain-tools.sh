#!/usr/bin/env bash
# Installs anvil and solc from the npm registry into tests/chain/node_modules (pinned by its
# package-lock.json) when they are missing, and prints the path of the anvil binary.
#
#   scripts/chain-tools.sh             ensure the tools; print anvil's path
#   scripts/chain-tools.sh contracts   also recompile tests/chain/TestToken.sol into build/
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail
tools="$root/tests/chain"
if [[ ! -x "$tools/node_modules/.bin/anvil" || ! -x "$tools/node_modules/.bin/solcjs" ]]; then
  command -v npm >/dev/null || { echo "chain-tools: npm is required (Node.js)" >&2; exit 1; }
  echo "chain-tools: installing anvil and solc from the npm registry" >&2
  # ci installs exactly the lock and never rewrites it.
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
if [[ "${1:-}" == contracts ]]; then
  (cd "$tools" && node_modules/.bin/solcjs --bin --abi --optimize -o build TestToken.sol >&2)
fi
echo "$tools/node_modules/.bin/anvil"
