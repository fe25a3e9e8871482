#!/usr/bin/env bash
# Starts (or reuses) a project-local PostgreSQL cluster under .data/ and prints a connection URL.
#
#   scripts/local-pg.sh [DATABASE]   ensure the cluster runs and DATABASE exists (default
#                                    agent_runtime); print postgres://.../DATABASE on stdout
#   scripts/local-pg.sh stop         stop the cluster
#
# Uses the machine's PostgreSQL binaries, installing Debian's `postgresql` package when they are
# missing and this runs as root. The cluster listens on 127.0.0.1 only, on a port of its own
# (kept in .data/pg.port), with trust authentication: it is for development and tests only.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="$root/.data"
cluster="$data/pg"
port_file="$data/pg.port"
lock="$data/pg.lock"

say() { echo "local-pg: $*" >&2; }

find_bin_dir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [[ -n "$dir" && -x "$dir/initdb" ]]; then echo "$dir"; fi
}

ensure_binaries() {
  bin_dir="$(find_bin_dir)"
  if [[ -n "$bin_dir" ]]; then return; fi
  if [[ "$(id -u)" != 0 ]]; then
    say "PostgreSQL server binaries not found; install Debian's 'postgresql' package or set DATABASE_URL"
    exit 1
  fi
  say "installing Debian's postgresql package (first run only)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
  bin_dir="$(find_bin_dir)"
  [[ -n "$bin_dir" ]] || { say "postgresql installed but initdb was not found"; exit 1; }
}

# Runs a PostgreSQL binary as an unprivileged user: initdb and postgres refuse to run as root.
as_pg() {
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# As root the cluster belongs to `postgres`, which must be able to reach it. A checkout below a
# private folder (such as /root) is out of its reach: the cluster then lives in /var/tmp, and
# .data/pg links to it.
place_cluster() {
  if [[ "$(id -u)" != 0 || -L "$cluster" || -f "$cluster/PG_VERSION" ]]; then return; fi
  if runuser -u postgres -- test -x "$data"; then return; fi
  local outside
  outside="/var/tmp/agent-runtime-pg-$(printf '%s' "$root" | sha256sum | cut -c1-12)"
  say "postgres cannot reach $data; keeping the cluster in $outside"
  mkdir -p "$outside"
  chown postgres:postgres "$outside"
  rm -rf "$cluster"
  ln -s "$outside" "$cluster"
}

ensure_cluster() {
  mkdir -p "$data"
  place_cluster
  # postgres must be handed the real path: it cannot resolve a link inside a private folder.
  [[ -L "$cluster" ]] && cluster="$(readlink -f "$cluster")"
  if [[ ! -f "$cluster/PG_VERSION" ]]; then
    say "creating cluster in $cluster"
    if [[ "$cluster" == "$data/pg" ]]; then
      rm -rf "$cluster"
      mkdir -p "$cluster"
    else
      find "$cluster/" -mindepth 1 -delete
    fi
    [[ "$(id -u)" == 0 ]] && chown postgres:postgres "$cluster/"
    as_pg "$bin_dir/initdb" -D "$cluster" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$data/initdb.log" 2>&1 \
      || { cat "$data/initdb.log" >&2; exit 1; }
  fi
  [[ -f "$port_file" ]] || free_port >"$port_file"
  port="$(cat "$port_file")"
  if ! as_pg "$bin_dir/pg_ctl" -D "$cluster" status >/dev/null 2>&1; then
    say "starting cluster on 127.0.0.1:$port"
    as_pg "$bin_dir/pg_ctl" -D "$cluster" -l "$cluster/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='' -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >/dev/null 9>&- || { tail -n 20 "$cluster/server.log" >&2; exit 1; }
  fi
  for _ in $(seq 1 100); do
    if "$bin_dir/pg_isready" -q -h 127.0.0.1 -p "$port"; then return; fi
    sleep 0.1
  done
  say "cluster did not become ready; see $cluster/server.log"
  exit 1
}

ensure_database() {
  local name="$1"
  local exists
  exists="$("$bin_dir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -Atc "SELECT 1 FROM pg_database WHERE datname = '$name'")"
  if [[ "$exists" != 1 ]]; then
    "$bin_dir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE \"$name\"" >&2 || true
  fi
}

ensure_binaries
if [[ "${1:-}" == stop ]]; then
  [[ -L "$cluster" ]] && cluster="$(readlink -f "$cluster")"
  [[ -f "$cluster/PG_VERSION" ]] && as_pg "$bin_dir/pg_ctl" -D "$cluster" -m fast stop >&2 || true
  exit 0
fi
database="${1:-agent_runtime}"
[[ "$database" =~ ^[a-z_][a-z0-9_]*$ ]] || { say "invalid database name: $database"; exit 2; }
mkdir -p "$data"
# Concurrent callers (parallel test processes) must not both run initdb.
exec 9>"$lock"
flock 9
ensure_cluster
ensure_database "$database"
echo "postgres://postgres@127.0.0.1:$port/$database"
