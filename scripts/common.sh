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
