#!/usr/bin/env bash
# Starts (or reuses) a project-local PostgreSQL cluster under .data/ and prints a connection URL.
#
#   scripts/local-pg.sh [DATABASE]   ensure the cluster runs and DATABASE exists (default
#                                    agent_runtime); print postgres://.../DATABASE?sslmode=disable
#                                    on stdout
#   scripts/local-pg.sh stop         stop the cluster
#
# Uses the machine's PostgreSQL binaries, installing Debian's `postgresql` package when they are
# missing and this runs as root. The cluster listens on 127.0.0.1 only, on a port of its own
# (kept in .data/pg.port), with trust authentication: it is for development and tests only.
#
# It also accepts TLS, with a certificate for 127.0.0.1 and localhost signed by an authority made
# for it, whose certificate is .data/pg-ca.pem (for sslmode=verify-full&sslrootcert=...). The URL
# printed asks for plain connections: without sslmode, clients would encrypt (libpq's default is
# prefer), which loopback does not need and which would change what the benchmarks measure.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="$root/.data"
cluster="$data/pg"
port_file="$data/pg.port"
lock="$data/pg.lock"
ca_file="$data/pg-ca.pem"

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

# Installs a file into the cluster for the server's user: PostgreSQL refuses a key that another
# user owns or that others may read.
install_for_pg() {
  if [[ "$(id -u)" == 0 ]]; then
    install -o postgres -g postgres "$@"
  else
    install "$@"
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

psql_admin() {
  "$bin_dir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres "$@"
}

# The certificate is made once per cluster, also for a cluster created before TLS was; TLS is
# switched on with ALTER SYSTEM and a reload, so a cluster that is already running takes it too.
ensure_tls() {
  if [[ ! -f "$cluster/server.crt" ]]; then
    if ! command -v openssl >/dev/null; then
      if [[ "$(id -u)" != 0 ]]; then
        say "openssl is needed for the cluster's TLS certificate (apt-get install openssl)"
        exit 1
      fi
      say "installing Debian's openssl package"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >&2
    fi
    say "generating the cluster's TLS certificate (127.0.0.1, localhost) and its authority"
    local work
    work="$(mktemp -d)"
    # The authority's key signs this one certificate and is deleted with $work.
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
      -subj "/CN=agent-runtime local PostgreSQL authority" \
      -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=localhost" \
      -keyout "$work/server.key" -out "$work/server.csr" 2>/dev/null
    printf '%s\n' "subjectAltName = IP:127.0.0.1, DNS:localhost" \
      "basicConstraints = critical, CA:FALSE" "keyUsage = critical, digitalSignature" \
      "extendedKeyUsage = serverAuth" >"$work/server.ext"
    openssl x509 -req -in "$work/server.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
      -set_serial "0x$(openssl rand -hex 16)" -days 3650 -extfile "$work/server.ext" \
      -out "$work/server.crt" 2>/dev/null
    install_for_pg -m 0600 "$work/server.key" "$cluster/server.key"
    install_for_pg -m 0644 "$work/ca.crt" "$cluster/ca.crt"
    install_for_pg -m 0644 "$work/server.crt" "$cluster/server.crt"
    rm -rf "$work"
  fi
  # Replaced whole, never rewritten in place: a test may be reading it.
  if ! cmp -s "$cluster/ca.crt" "$ca_file"; then
    cp "$cluster/ca.crt" "$ca_file.new"
    mv "$ca_file.new" "$ca_file"
  fi
  if [[ "$(psql_admin -Atc 'SHOW ssl')" == on ]]; then return; fi
  psql_admin -q -c "ALTER SYSTEM SET ssl = on" -c "SELECT pg_reload_conf()" >/dev/null
  for _ in $(seq 1 100); do
    if [[ "$(psql_admin -Atc 'SHOW ssl')" == on ]]; then return; fi
    sleep 0.1
  done
  say "the cluster did not take TLS on; see $cluster/server.log"
  exit 1
}

ensure_database() {
  local name="$1"
  local exists
  exists="$(psql_admin -Atc "SELECT 1 FROM pg_database WHERE datname = '$name'")"
  if [[ "$exists" != 1 ]]; then
    psql_admin -qc "CREATE DATABASE \"$name\"" >&2 || true
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
ensure_tls
ensure_database "$database"
echo "postgres://postgres@127.0.0.1:$port/$database?sslmode=disable"
