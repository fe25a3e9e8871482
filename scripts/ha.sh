#!/usr/bin/env bash
# A local pg_auto_failover formation on loopback: a monitor and two data nodes with synchronous
# replication, for development and for failover tests (`make ha-up`, `make ha-down`).
#
#   scripts/ha.sh up        create the formation under .data/ha/ (or HA_DIR) or start the one there, wait until
#                           it has a primary and a secondary, both healthy, and replication is
#                           synchronous; print its URL on stdout. A formation already running is
#                           reused (a node that is down is started again and waited for).
#   scripts/ha.sh install   install pg_auto_failover when missing (as root), and nothing else
#   scripts/ha.sh down      stop the monitor and both nodes; the data stays for the next `up`
#   scripts/ha.sh destroy   kill them and remove .data/ha (and the /var/tmp directory it links to)
#   scripts/ha.sh url       the URL of the running formation:
#                           postgres://postgres@127.0.0.1:P1,127.0.0.1:P2/agent_runtime?sslmode=disable&target_session_attrs=read-write
#   scripts/ha.sh status    the monitor's view (pg_autoctl show state)
#   scripts/ha.sh failover  a planned failover (pg_autoctl perform failover): says when the other
#                           node takes writes through the URL, and returns once the old primary
#                           follows it (so the formation can fail over again)
#   scripts/ha.sh primary   the current primary as "PORT DATA_DIR POSTMASTER_PID" (PID "-" while
#                           its Postgres is not running)
#   scripts/ha.sh standby   the same for the other data node
#   scripts/ha.sh crash primary|standby
#                           kill -9 that node's pg_autoctl and Postgres, as if its machine were
#                           lost (killing only the postmaster is not enough: pg_autoctl restarts it
#                           in place); `up` brings the node back as a standby
#   scripts/ha.sh kill primary|standby
#                           kill -9 of that node's postmaster alone (its backends and pg_autoctl
#                           live on): pg_autoctl restarts it in place, or the monitor fails over
#                           when it takes too long; prints the node's name
#   scripts/ha.sh pause primary|standby
#                           SIGSTOP to that node's pg_autoctl, Postgres and every backend, as a
#                           frozen machine (it accepts TCP and never answers); prints the node's
#                           name. The monitor fails a paused primary over; `resume` lets it go on
#   scripts/ha.sh resume [node1|node2]
#                           SIGCONT to that node, or to every one; `down` resumes first
#
# HA_DIR, when set, is the formation's directory instead of .data/ha (a test's own formation beside
# a developer's); its lock is HA_DIR.lock.
#
# Uses Debian's postgresql-15-auto-failover (pg_autoctl), installed when missing as root.
# pg_autoctl and Postgres refuse to run as root: as root they run as `postgres`, and when that user
# cannot reach .data/ (a checkout under /root), the formation lives in /var/tmp and .data/ha links
# to it. Everything listens on 127.0.0.1 only, on ports chosen free at creation, with trust
# authentication and no TLS: it is for development and tests only. Progress goes to stderr, each
# server's log to .data/ha/NAME.log.
#
# Failover takes seconds instead of pg_auto_failover's default of over 50: the monitor checks
# nodes every 2 s and acts on a node silent for 6 s (settings below, docs/operations.md explains).
set -euo pipefail
# shellcheck source=common.sh source-path=SCRIPTDIR disable=SC1091
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

data="$PWD/.data" # common.sh moved to the project root
# The formation's directory as given (a link to /var/tmp when postgres cannot reach it), and its
# lock beside it; `ha` becomes the real directory once placed.
ha_path="${HA_DIR:-$data/ha}"
[[ "$ha_path" == /* ]] || ha_path="$PWD/$ha_path"
ha="$ha_path"
lock="$ha_path.lock"
bin_dir=/usr/lib/postgresql/15/bin # the server version the extension package is built for
deadline_secs=120

say() { echo "ha: $*" >&2; }
die() { say "$*"; exit 1; }

# The monitor's settings, applied with ALTER SYSTEM and a reload on every `up`; defaults in
# brackets. A lost primary: the monitor finds it unhealthy after 6 s, waits the demote timeout,
# then promotes the standby: writes resume 12-16 s after the loss.
monitor_settings=(
  # ms between two health checks of a node (a connection attempt) [5000]
  pgautofailover.health_check_period=2000
  # ms a check's connection may take; loopback answers at once [5000]
  pgautofailover.health_check_timeout=1000
  # failed attempts beyond the first before a node's health is bad [2]
  pgautofailover.health_check_max_retries=1
  # ms between those attempts [2000]
  pgautofailover.health_check_retry_delay=1000
  # ms without a report from a node's keeper, its health being bad, before the node is unhealthy
  # and its failover starts [20000]
  pgautofailover.node_considered_unhealthy_timeout=6000
  # ms the monitor waits for an unhealthy primary to confirm it stopped before it promotes the
  # standby anyway; above the keepers' network_partition_timeout, so that a primary cut off from
  # both has stopped by then [30000]
  pgautofailover.primary_demote_timeout=6000
  # ms after the monitor starts during which a silent node is not failed over: the keepers report
  # within it when `up` restarts the formation [10000]
  pgautofailover.startup_grace_period=6000
)
# The keepers' settings (pg_autoctl config set; seconds). timeout.prepare_promotion_catchup and
# timeout.prepare_promotion_walreceiver exist but pg_autoctl 2.0 does not use them.
keeper_settings=(
  # A primary that reaches neither the monitor nor its standby for this long stops its Postgres,
  # so it takes no writes once the monitor may promote the standby (6 s + 6 s later) [20].
  timeout.network_partition_timeout=3
  # A primary's keeper restarts its Postgres when it dies; it stops hiding from the monitor that
  # Postgres is down (and so lets the standby take over) after this long or after
  # postgresql_restart_failure_max_retries restarts [20; retries 3].
  timeout.postgresql_restart_failure_timeout=5
)

# pg_autoctl runs as `postgres` when this runs as root, from a directory that user can enter, with
# its configuration, state and pid files under the formation's directory.
pg_user=()
[[ "$(id -u)" == 0 ]] && pg_user=(runuser -u postgres --)
autoctl() { (cd "$ha" && "${pg_user[@]}" env "${xdg[@]}" pg_autoctl "$@"); }

ensure_tools() {
  need_command python3 python3 "choosing free ports"
  if ! command -v pg_autoctl >/dev/null || [[ ! -x "$bin_dir/pg_ctl" ]]; then
    [[ "$(id -u)" == 0 ]] || die "pg_autoctl is required (apt-get install postgresql-15-auto-failover)"
    say "installing Debian's postgresql-15-auto-failover (first run only)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15-auto-failover >&2
  fi
}

# Sets `ha` to the formation's real directory (postgres must be handed real paths), creating it
# with the link to /var/tmp when needed.
place_formation() {
  local parent
  parent="$(dirname "$ha_path")"
  mkdir -p "$parent"
  if [[ "$(id -u)" == 0 && ! -e "$ha" ]] && ! runuser -u postgres -- test -x "$parent"; then
    local outside
    outside="/var/tmp/agent-runtime-ha-$(printf '%s' "$ha_path" | sha256sum | cut -c1-12)"
    say "postgres cannot reach $parent; keeping the formation in $outside"
    mkdir -p "$outside"
    ln -s "$outside" "$ha"
  fi
  mkdir -p "$ha"
  ha="$(readlink -f "$ha")"
  mkdir -p "$ha/run" && chmod 0700 "$ha/run" # pg_autoctl keeps its pid files here only if it exists
  [[ "$(id -u)" == 0 ]] && chown postgres:postgres "$ha" "$ha/run"
  xdg=(XDG_CONFIG_HOME="$ha/config" XDG_DATA_HOME="$ha/share" XDG_RUNTIME_DIR="$ha/run")
}

# The formation as created (without starting anything); fails when there is none.
existing_formation() {
  [[ -e "$ha" ]] || die "no formation under $ha_path; make ha-up creates one"
  place_formation
}

port_of() { autoctl config get --pgdata "$ha/$1" postgresql.port; }

url() {
  local hosts
  hosts="127.0.0.1:$(port_of node1),127.0.0.1:$(port_of node2)"
  echo "postgres://postgres@$hosts/agent_runtime?sslmode=disable&target_session_attrs=read-write"
}

monitor_sql() {
  "$bin_dir/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(port_of monitor)" -U postgres \
    -d pg_auto_failover "$@"
}

service_pid() { head -n 1 "$ha/run/pg_autoctl$ha/$1/pg_autoctl.pid" 2>/dev/null || true; }
# Whether NAME's pg_autoctl runs, whether or not its Postgres does (`pg_autoctl status` says no
# while Postgres is down, e.g. while a demoted node rewinds); a killed one left as a zombie does not.
running() {
  local pid
  pid="$(service_pid "$1")"
  [[ -n "$pid" && -r "/proc/$pid/stat" ]] || return 1
  [[ "$(cut -d' ' -f3 "/proc/$pid/stat")" != Z ]]
}

# Starts NAME's pg_autoctl (its Postgres with it) in a session of its own, so that the script can
# return and a Ctrl-C at the terminal does not reach it; fd 9 holds the lock and is not passed on.
# A pg_autoctl that runs is not started again: its Postgres is waited for.
start() {
  local name="$1" port service=""
  port="$(port_of "$name")"
  if ! running "$name"; then
    say "starting $name"
    (cd "$ha" && exec setsid "${pg_user[@]}" env "${xdg[@]}" pg_autoctl run --pgdata "$ha/$name") \
      </dev/null >>"$ha/$name.log" 2>&1 9>&- &
    service=$!
  fi
  for _ in $(seq 1 300); do
    if "$bin_dir/pg_isready" -q -t 2 -h 127.0.0.1 -p "$port"; then return; fi
    if [[ -n "$service" ]]; then
      kill -0 "$service" 2>/dev/null || break
    else
      running "$name" || break
    fi
    sleep 0.2
  done
  tail -n 20 "$ha/$name.log" >&2
  die "$name did not start; see $ha/$name.log"
}

# A creation that did not finish leaves state in the monitor and on disk that `up` does not try to
# repair: it asks for a fresh start instead.
unfinished() {
  [[ -e "$ha/$1" ]] && die "an earlier creation of $1 did not finish ($ha/$1.log); scripts/ha.sh destroy, then up"
  say "creating $1"
}

# pg_autoctl sizes shared_buffers at a quarter of the machine's memory for each of the three
# servers; PostgreSQL's default is plenty here. Written while the server is stopped; a standby
# copies it from the primary.
small_memory() {
  local conf="$1/postgresql.auto.conf"
  grep -q '^shared_buffers' "$conf" || echo "shared_buffers = '128MB'" >>"$conf"
}

ensure_monitor() {
  if [[ ! -f "$ha/monitor.created" ]]; then
    unfinished monitor
    autoctl create monitor --pgdata "$ha/monitor" --pgport "$(free_port)" --pgctl "$bin_dir/pg_ctl" \
      --hostname 127.0.0.1 --auth trust --no-ssl >>"$ha/monitor.log" 2>&1 \
      || { tail -n 20 "$ha/monitor.log" >&2; die "creating the monitor failed"; }
    # The monitor has no --listen: it would listen on every address.
    autoctl config set --pgdata "$ha/monitor" postgresql.listen_addresses 127.0.0.1 >/dev/null
    small_memory "$ha/monitor"
    touch "$ha/monitor.created"
  fi
  start monitor
  local setting statements=()
  for setting in "${monitor_settings[@]}"; do
    statements+=(-c "ALTER SYSTEM SET ${setting%%=*} = ${setting#*=}")
  done
  monitor_sql "${statements[@]}" -c "SELECT pg_reload_conf()" >/dev/null
}

ensure_node() {
  local name="$1" setting
  if [[ ! -f "$ha/$name.created" ]]; then
    unfinished "$name"
    autoctl create postgres --pgdata "$ha/$name" --pgport "$(free_port)" --pgctl "$bin_dir/pg_ctl" \
      --hostname 127.0.0.1 --listen 127.0.0.1 --name "$name" --dbname agent_runtime \
      --auth trust --no-ssl \
      --monitor "postgres://autoctl_node@127.0.0.1:$(port_of monitor)/pg_auto_failover?sslmode=disable" \
      >>"$ha/$name.log" 2>&1 || { tail -n 20 "$ha/$name.log" >&2; die "creating $name failed"; }
    small_memory "$ha/$name"
    touch "$ha/$name.created"
  fi
  for setting in "${keeper_settings[@]}"; do
    if [[ "$(autoctl config get --pgdata "$ha/$name" "${setting%%=*}")" != "${setting#*=}" ]]; then
      autoctl config set --pgdata "$ha/$name" "${setting%%=*}" "${setting#*=}" >/dev/null
    fi
  done
  start "$name"
}

# Waits until the monitor reports NAME's state (node1 is `single` before node2 joins).
wait_state() {
  local name="$1" state="$2"
  for _ in $(seq 1 $((deadline_secs * 2))); do
    [[ "$(monitor_sql -c "SELECT reportedstate FROM pgautofailover.node
      WHERE nodename = '$name' AND goalstate = reportedstate")" == "$state" ]] && return
    sleep 0.5
  done
  die "$name did not reach state $state within ${deadline_secs}s; see $ha/$name.log and scripts/ha.sh status"
}

# Waits until one node is a healthy primary and the other a healthy secondary, and the URL reaches
# the primary with synchronous replication on.
wait_whole() {
  local u whole sync
  u="$(url)"
  for _ in $(seq 1 $((deadline_secs * 2))); do
    whole="$(monitor_sql -c "SELECT count(*) FILTER (WHERE reportedstate = 'primary'),
        count(*) FILTER (WHERE reportedstate = 'secondary')
      FROM pgautofailover.node WHERE goalstate = reportedstate AND health = 1 AND reportedpgisrunning")"
    if [[ "$whole" == "1|1" ]]; then
      sync="$(PGCONNECT_TIMEOUT=2 "$bin_dir/psql" -X -At "$u" -c "SHOW synchronous_commit" \
        -c "SHOW synchronous_standby_names" 2>/dev/null | paste -sd' ' || true)"
      if [[ "$sync" == "on ANY "* || "$sync" == "on FIRST "* ]]; then return; fi
    fi
    sleep 0.5
  done
  autoctl show state --pgdata "$ha/monitor" >&2 || true
  die "no healthy primary and secondary with synchronous replication after ${deadline_secs}s; logs in $ha/"
}

up() {
  ensure_tools
  mkdir -p "$(dirname "$ha_path")"
  # Concurrent callers must not both create the formation.
  exec 9>"$lock"
  flock 9
  place_formation
  ensure_monitor
  ensure_node node1
  [[ -f "$ha/node2.created" ]] || wait_state node1 single
  ensure_node node2
  wait_whole
  url
}

down() {
  [[ -e "$ha" ]] || return 0
  exec 9>"$lock"
  flock 9
  place_formation
  # A paused node would never stop.
  resume
  # The monitor first, so that it fails nothing over while the nodes stop; then all at once.
  # `pg_autoctl status` says "not running" as soon as a service begins to stop: wait for its
  # process, which exits once its Postgres has stopped.
  local name pid pids=()
  for name in monitor node1 node2; do
    if running "$name"; then
      pid="$(service_pid "$name")"
      say "stopping $name"
      autoctl stop --pgdata "$ha/$name" >&2 || true
      [[ -z "$pid" ]] || pids+=("$name:$pid")
    fi
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 300); do
      kill -0 "${pid#*:}" 2>/dev/null || continue 2
      sleep 0.2
    done
    die "${pid%%:*} did not stop; see $ha/${pid%%:*}.log"
  done
}

# No clean stop: the data goes. Every process of the formation is killed (paused ones too), with
# its process group, and waited for.
destroy() {
  [[ -e "$ha_path" || -L "$ha_path" ]] || return 0
  exec 9>"$lock"
  flock 9
  place_formation
  local name group groups=() pid
  for name in monitor node1 node2; do
    group="$(group_of "$name" 2>/dev/null)" || group=""
    [[ -z "$group" ]] || groups+=("$group")
  done
  for group in "${groups[@]}"; do
    say "killing process group $group"
    kill -9 -- "-$group" 2>/dev/null || true
  done
  # A Postgres whose pg_autoctl is gone (killed, or stopping) is not in a group above.
  for name in monitor node1 node2; do
    pid="$(head -n 1 "$ha/$name/postmaster.pid" 2>/dev/null || true)"
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
      say "killing $name's postmaster $pid"
      groups+=("$(ps -o pgid= -p "$pid" | tr -d ' ')")
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  for group in "${groups[@]}"; do
    for _ in $(seq 1 50); do
      for pid in $(pgrep -g "$group" || true); do
        if [[ -r "/proc/$pid/stat" && "$(cut -d' ' -f3 "/proc/$pid/stat")" != Z ]]; then
          sleep 0.1
          continue 2
        fi
      done
      break
    done
  done
  say "removing $ha"
  # A backend of a killed postmaster may still write its last file.
  for _ in $(seq 1 20); do
    rm -rf "$ha" 2>/dev/null && break
    sleep 0.2
  done
  rm -rf "$ha"
  rm -f "$ha_path" "$lock"
}

# The name of the primary (node1 or node2), or of the other data node; fails while none is primary.
node_of() {
  local primary
  primary="$(monitor_sql -c "SELECT nodename FROM pgautofailover.node
    WHERE goalstate = reportedstate
      AND reportedstate IN ('single', 'wait_primary', 'primary', 'join_primary', 'apply_settings')")"
  [[ -n "$primary" ]] || die "no node is primary now; see scripts/ha.sh status"
  if [[ "$1" == primary ]]; then
    echo "$primary"
  else
    monitor_sql -c "SELECT nodename FROM pgautofailover.node WHERE nodename <> '$primary'"
  fi
}

describe() {
  local name pid
  name="$(node_of "$1")"
  pid="$(head -n 1 "$ha/$name/postmaster.pid" 2>/dev/null || true)"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || pid="-"
  echo "$(port_of "$name") $ha/$name $pid"
}

# The port of the node that takes writes through the URL, or nothing. The probe is a commit that
# writes WAL (a transactional logical message, no table needed), so it waits for a synchronous
# standby as any write does.
writable_port() {
  PGCONNECT_TIMEOUT=2 timeout 5 "$bin_dir/psql" -X -At "$(url)" \
    -c "SELECT current_setting('port') FROM pg_logical_emit_message(true, 'ha', 'probe')" 2>/dev/null || true
}

failover() {
  existing_formation
  local old new started ms waiter
  old="$(port_of "$(node_of primary)")"
  started="$(date +%s%N)"
  # pg_autoctl returns once the old primary follows the new one; writes come back before that.
  autoctl perform failover --pgdata "$ha/monitor" >&2 &
  waiter=$!
  for _ in $(seq 1 $((deadline_secs * 5))); do
    new="$(writable_port)"
    if [[ -n "$new" && "$new" != "$old" ]]; then
      ms=$((($(date +%s%N) - started) / 1000000))
      say "127.0.0.1:$new takes writes, $((ms / 1000)).$((ms % 1000 / 100)) s after the failover began"
      [[ -z "$waiter" ]] || wait "$waiter" || die "pg_autoctl perform failover failed; see scripts/ha.sh status"
      return
    fi
    if [[ -n "$waiter" ]] && ! kill -0 "$waiter" 2>/dev/null; then
      wait "$waiter" || die "pg_autoctl perform failover failed; see scripts/ha.sh status"
      waiter=""
    fi
    sleep 0.2
  done
  die "no other node took writes within ${deadline_secs}s; see scripts/ha.sh status"
}

# The process group of NAME's pg_autoctl (its Postgres and backends run in it), or nothing when
# it is not running; fails when that pg_autoctl was not started by `start`, whose group it leads.
group_of() {
  local name="$1" keeper group
  running "$name" || return 0
  keeper="$(service_pid "$name")"
  # Its Postgres runs in pg_autoctl's process group, which `start` made (setsid): a pg_autoctl
  # started otherwise may share its group with a shell.
  group="$(ps -o pgid= -p "$keeper" | tr -d ' ')"
  [[ "$(ps -o args= -p "$group")" == *"pg_autoctl run --pgdata $ha/$name" ]] \
    || die "$name's pg_autoctl was not started by scripts/ha.sh up; stop it and run up"
  echo "$group"
}

# The node named by `primary` or `standby`, whose pg_autoctl runs; its process group in `group`.
target() {
  [[ "${1:-}" == primary || "${1:-}" == standby ]] || die "usage: scripts/ha.sh $2 primary|standby"
  existing_formation
  name="$(node_of "$1")"
  group="$(group_of "$name")"
  [[ -n "$group" ]] || die "$name's pg_autoctl is not running"
}

crash() {
  local name group
  target "${1:-}" crash
  say "killing $name (port $(port_of "$name")): pg_autoctl and its Postgres (group $group)"
  kill -9 -- "-$group"
  echo "$name"
}

kill_postmaster() {
  local name group pid
  target "${1:-}" kill
  pid="$(head -n 1 "$ha/$name/postmaster.pid" 2>/dev/null || true)"
  if [[ -z "$pid" ]] || ! kill -0 "$pid" 2>/dev/null; then die "$name's Postgres is not running"; fi
  say "killing $name's postmaster $pid (port $(port_of "$name")); pg_autoctl lives on"
  kill -9 "$pid"
  echo "$name"
}

pause() {
  local name group
  target "${1:-}" pause
  say "pausing $name (port $(port_of "$name")): SIGSTOP to group $group"
  kill -STOP -- "-$group"
  echo "$name"
}

# SIGCONT to the named node, or to every node; nothing for a node that is not running. As root the
# group's leader is runuser, which stops itself when it sees its child stopped, once it runs again:
# the group is sent SIGCONT until none of it is stopped.
resume() {
  local name group names=(monitor node1 node2)
  [[ -z "${1:-}" ]] || names=("$1")
  for name in "${names[@]}"; do
    group="$(group_of "$name" 2>/dev/null)" || group=""
    [[ -n "$group" ]] || continue
    for _ in $(seq 1 50); do
      kill -CONT -- "-$group" 2>/dev/null || break
      sleep 0.1
      pgrep --runstates T -g "$group" >/dev/null || break
    done
  done
}

case "${1:-}" in
  up) up ;;
  install) ensure_tools ;;
  down) down ;;
  destroy) destroy ;;
  url) existing_formation; running node1 || running node2 || die "the formation is not running; make ha-up"; url ;;
  status) existing_formation; autoctl show state --pgdata "$ha/monitor" ;;
  failover) failover ;;
  primary | standby) existing_formation; describe "$1" ;;
  crash) crash "${2:-}" ;;
  kill) kill_postmaster "${2:-}" ;;
  pause) pause "${2:-}" ;;
  resume) existing_formation; resume "${2:-}" ;;
  *) die "usage: scripts/ha.sh up|down|destroy|url|status|failover|primary|standby|crash|kill|pause primary|standby|resume [NODE]" ;;
esac
