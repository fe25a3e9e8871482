#!/usr/bin/env bash
# `make test`: the whole suite against a real PostgreSQL. Without TEST_DATABASE_URL the
# project-local cluster is started (and PostgreSQL installed when missing and running as root).
# The TLS tests need TEST_DATABASE_CA, the authority of the server's certificate, beside a
# TEST_DATABASE_URL of your own; the project-local cluster's is set here.
set -euo pipefail
# The SMS tests hold a thousand waiting requests open at once: allow the open files they need.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# timed COMMAND...: runs it and says how long it took, so a slow run shows where its time went.
timed() {
  local started=$SECONDS
  "$@"
  echo "test: $* took $((SECONDS - started)) s" >&2
}
if [[ -n "${TEST_WITH_CLIPPY:-}" ]]; then
  # One build for lint and test (CI's): clippy's driver compiles the workspace's own crates, so
  # its lints run in the build the tests use, warnings denied as `make lint` denies them.
  RUSTC_WORKSPACE_WRAPPER="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)"
  export RUSTC_WORKSPACE_WRAPPER
  export RUSTFLAGS="${RUSTFLAGS:-} -D warnings"
fi
# The build keeps the cores busy for minutes; the tools below come from the network meanwhile.
timed build_debug_binaries &
build=$!
trap 'kill "$build" 2>/dev/null || true' EXIT
if [[ -z "${TEST_DATABASE_URL:-}" ]]; then
  use_local_database TEST_DATABASE_URL postgres
  export TEST_DATABASE_CA="$root/.data/pg-ca.pem"
fi
need_command jq jq "the README walkthrough's test"
need_command chromium chromium "the /docs page's test in a headless browser"
# anvil, for the tests on a real EVM chain.
ANVIL_BIN="${ANVIL_BIN:-$(scripts/chain-tools.sh)}"
export ANVIL_BIN
# aiosmtpd, the SMTP server of the email tests.
SMTP_PYTHON="${SMTP_PYTHON:-$(scripts/smtp-tools.sh)}"
export SMTP_PYTHON
# moto's server, the S3-compatible store of the attachment store's tests.
S3_PYTHON="${S3_PYTHON:-$(scripts/s3-tools.sh)}"
export S3_PYTHON
# httpx-sse and standardwebhooks, the independent clients of the events tests.
EVENT_CLIENTS_PYTHON="${EVENT_CLIENTS_PYTHON:-$(scripts/event-clients.sh)}"
export EVENT_CLIENTS_PYTHON
# The official MCP Python SDK, the independent client of the MCP tests.
MCP_CLIENTS_PYTHON="${MCP_CLIENTS_PYTHON:-$(scripts/mcp-clients.sh)}"
export MCP_CLIENTS_PYTHON
# The official x402 package, the paid server and facilitator of the x402 payment tests.
X402_PYTHON="${X402_PYTHON:-$(scripts/x402-tools.sh)}"
export X402_PYTHON
# The client libraries' generators, build tools and offline wheelhouse (pinned), and their wheel
# and npm tarball built from the committed sources, which the SDK tests install into clean
# environments.
SDK_TOOLS="${SDK_TOOLS:-$(scripts/sdk-tools.sh)}"
export SDK_TOOLS
scripts/sdks.sh build >/dev/null
# Playwright for Python and Debian's Chromium, and axe-core, for the operator console's browser
# test.
CONSOLE_BROWSER_PYTHON="${CONSOLE_BROWSER_PYTHON:-$(scripts/console-browser.sh)}"
export CONSOLE_BROWSER_PYTHON
# pg_auto_failover (pg_autoctl), for the failover test's formation of its own (scripts/ha.sh).
scripts/ha.sh install
# The MCP conformance suite and the Node 22 it runs on, installed before the tests that run it.
scripts/mcp-conformance.sh >/dev/null
echo "test: PostgreSQL at ${TEST_DATABASE_URL%%\?*}" | sed 's#//[^@]*@#//#' >&2
echo "test: the tools are ready after $SECONDS s" >&2
# The black-box tests spawn the binaries, so they must be current.
wait "$build"
# The soak's verdict (make soak itself is too long for here).
timed python3 -m unittest discover -s scripts -p 'soak_test.py'
# A short run of schemathesis against the served API description (make fuzz is the long one).
FUZZ_ADMIN_URL="$TEST_DATABASE_URL" timed scripts/fuzz.sh --quick
# The tests under cargo-nextest, many at a time (.config/nextest.toml), every failure reported;
# the machine's own, or one installed into .data/tools once.
nextest="$(command -v cargo-nextest || true)"
if [[ -z "$nextest" ]]; then
  nextest="$root/.data/tools/bin/cargo-nextest"
  if [[ ! -x "$nextest" ]]; then
    echo "test: installing cargo-nextest from crates.io (first run only, a few minutes)" >&2
    cargo install cargo-nextest --version 0.9.143 --locked --root "$root/.data/tools" --quiet
  fi
fi
timed "$nextest" nextest run --workspace --locked
# nextest runs no doctests: run them only where a doc comment opens a block of Rust (a fence
# with no language or `rust`), as rustdoc would; none does today.
doc_rust_blocks() {
  find crates bins tests -name '*.rs' -not -path '*/node_modules/*' -print0 | xargs -0 cat | awk '
    /^[[:space:]]*\/\/[\/!][[:space:]]*```/ {
      if (!open) { info = $0; sub(/.*```/, "", info); if (info == "" || info ~ /^rust/) found = 1 }
      open = !open
    }
    END { exit !found }'
}
if doc_rust_blocks; then
  cargo test --workspace --locked --doc
fi
