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
