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
