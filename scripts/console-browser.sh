#!/usr/bin/env bash
# What the operator console's browser test needs, installed when missing: Debian's Chromium (never
# a browser download), Playwright for Python pinned with its one dependency in a project-local
# virtualenv (.data/console-browser-venv; it drives the system Chromium), and axe-core from the
# npm registry into tests/console/node_modules (pinned by its package-lock.json). Prints the path
# of that virtualenv's python; CONSOLE_AXE_JS names axe-core's script.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail
need_command chromium chromium "the operator console's browser test"
checks="$root/tests/console"
if [[ ! -f "$checks/node_modules/axe-core/axe.min.js" ]]; then
  command -v npm >/dev/null || { echo "console-browser: npm is required (Node.js)" >&2; exit 1; }
  echo "console-browser: installing axe-core from the npm registry" >&2
  (cd "$checks" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
python_venv console-browser-venv "the operator console's browser test" \
  playwright==1.65.2 greenlet==3.5.6
