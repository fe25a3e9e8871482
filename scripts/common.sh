# Sourced by the other scripts: moves to the project root and offers the database helper.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# use_local_database VAR NAME: unless VAR is set, point it at database NAME of the project-local
# PostgreSQL cluster (started, and installed, as needed).
use_local_database() {
  local var="$1" name="$2" url
  if [[ -z "${!var:-}" ]]; then
    url="$(scripts/local-pg.sh "$name")"
    export "$var=$url"
  fi
}

# need_command COMMAND PACKAGE WHY: COMMAND must exist; as root, Debian's PACKAGE is installed
# when it does not.
need_command() {
  local command="$1" package="$2" why="$3"
  command -v "$command" >/dev/null && return
  if [[ "$(id -u)" != 0 ]]; then
    echo "$(basename "$0"): $command is required $why (apt-get install $package)" >&2
    exit 1
  fi
  echo "$(basename "$0"): installing Debian's $package for $why" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >&2
}

# python_venv NAME WHY PACKAGE==VERSION...: a project-local virtualenv, .data/NAME, holding exactly
# these pinned packages from PyPI (made anew when the pins change); prints the path of its python.
python_venv() {
  local name="$1" why="$2"
  shift 2
  local venv="$root/.data/$name"
  local python="$venv/bin/python" pins="$venv/pins.txt"
  if [[ -x "$python" && "$(cat "$pins" 2>/dev/null)" == "$*" ]]; then
    echo "$python"
    return
  fi
  need_command python3 python3 "$why"
  echo "$(basename "$0"): installing $* from PyPI into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || {
    echo "$(basename "$0"): python3 -m venv failed (on Debian: apt-get install python3-venv)" >&2
    exit 1
  }
  "$python" -m pip install --quiet --disable-pip-version-check --no-input "$@" >&2
  echo "$*" >"$pins"
  echo "$python"
}

# The debug binaries the black-box tests and the fuzzer spawn, built in one cargo run with the
# tests: features unify across the two (the tests' dev-dependencies turn on more of tokio and
# others), so the tests' build that follows reuses every crate instead of building half the
# graph again with other features.
build_debug_binaries() {
  echo "$(basename "$0"): building the binaries and the tests" >&2
  cargo build --workspace --bins --tests --locked
}

# --- Release servers of the load scripts (bench.sh, soak.sh) --------------------------------------
# `servers` holds their pids and `logs` files for the caller to remove at exit.
servers=()
logs=()

build_release() {
  echo "$(basename "$0"): building release binaries" >&2
  cargo build --release --bins --locked
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# start_server SETTING=VALUE...: a release server with these settings on a free port; sets
# `started_url` once it answers (not printed: a command substitution would lose the process to a
# subshell).
start_server() {
  local port log
  port="$(free_port)"
  log="$(mktemp -t agent-runtime-server.XXXXXX.log)"
  env "$@" BIND_ADDR="127.0.0.1:$port" target/release/agent-runtime >"$log" 2>&1 &
  servers+=("$!")
  logs+=("$log")
  for _ in $(seq 1 300); do
    if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
      started_url="http://127.0.0.1:$port"
      return
    fi
    kill -0 "${servers[-1]}" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
  done
  echo "$(basename "$0"): the server did not answer" >&2
  exit 1
}

stop_servers() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  servers=()
}

json_field() { python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }
# The "ID ADDRESS" line of the agent `agentctl agents create` printed on stdin, with a wallet.
agent_and_wallet() {
  python3 -c 'import json, sys; a = json.load(sys.stdin)["agent"]; print(a["id"], a["wallet"]["address"])'
}

# create_spending_agents LABEL COUNT KEYS [ADDRESSES [AGENTS]]: COUNT agents with an inbox and a
# wallet under a spend policy the sends stay under (so every send is checked against a policy that
# applies); their keys are appended to the file KEYS, their inboxes' addresses to ADDRESSES, and
# their ids with their wallets' addresses ("ID ADDRESS" lines) to AGENTS.
# Made with the CLI `agentctl` names (the release build's when unset).
create_spending_agents() {
  local label="$1" count="$2" keys="$3" addresses="${4:-/dev/null}" agents="${5:-/dev/null}"
  local cli="${agentctl:-target/release/agentctl}" created
  for _ in $(seq 1 "$count"); do
    created="$("$cli" agents create --label "$label" --email --wallet 2>/dev/null)"
    json_field '["agent_key"]' <<<"$created" >>"$keys"
    json_field '["agent"]["email_inbox"]["address"]' <<<"$created" >>"$addresses"
    agent_and_wallet <<<"$created" >>"$agents"
    "$cli" policy set "$(json_field '["agent"]["id"]' <<<"$created")" \
      --max-per-tx 1000000 --max-daily 1000000000000000 >/dev/null
  done
}
