#!/usr/bin/env bash
# Installs what the client libraries of sdks/ are generated, built and tested with, pinned, when it
# is missing, and prints the folder that holds it (SDK_TOOLS, .data/sdk-tools):
#   venv/        PyPI's openapi-python-client (the Python generator; its ruff formats its output and
#                lints the hand-written layer), hatchling (builds the wheel) and pytest;
#   wheelhouse/  the wheels a clean virtualenv installs the built SDK with, offline: its one runtime
#                dependency (httpx) and pytest, with theirs, in the newest versions and in the last
#                ones for Python 3.9 (pip picks by each wheel's Requires-Python);
#   oldest-python  the path of the oldest Python 3.9+ found (3.9 is the package's floor), which
#                tests/it/sdks.rs makes its clean virtualenvs with.
# The TypeScript generator (npm's @hey-api/openapi-ts), the compiler and the Node 22 the generator
# needs go into sdks/typescript/node_modules from its package-lock.json (npm ci). After the first
# run nothing here reaches the network. scripts/sdks.sh uses all of it; see decision 0093.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail
tools="$root/.data/sdk-tools"
python="$(python_venv sdk-tools/venv "the client libraries' generator and tests" \
  openapi-python-client==0.26.2 ruff==0.13.3 hatchling==1.33.0 pytest==9.2.0 \
  annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0 certifi==2026.10.19.post1 click==8.5.1 \
  h11==0.16.0 httpcore==1.0.9 httpx==0.28.1 idna==3.20 iniconfig==2.3.1 Jinja2==3.1.6 \
  markdown-it-py==4.3.0 MarkupSafe==3.0.4 mdurl==0.1.2 packaging==26.4 pathspec==1.1.1 \
  pluggy==1.7.0 pydantic==2.14.4 pydantic_core==2.50.5 Pygments==2.21.0 \
  python-dateutil==2.9.0.post0 rich==15.0.0 ruamel.yaml==0.18.17 ruamel.yaml.clib==0.2.15 \
  shellingham==1.5.4 six==1.17.0 tomlkit==0.15.2 trove-classifiers==2026.9.21.13 typer==0.19.2 \
  typing-inspection==0.4.5 typing_extensions==4.16.0)"

# The wheels of a clean install: the SDK's runtime dependency, httpx, and the test runner, with
# theirs, nothing else; pure-Python ones, so that any interpreter installs them. Those that dropped
# Python 3.9 come again in their last versions for it (a second download: pip takes one version of
# a name per command).
wheels=(httpx==0.28.1 anyio==4.16.0 certifi==2026.10.19.post1 h11==0.16.0 httpcore==1.0.9
  idna==3.20 typing_extensions==4.16.0 pytest==9.2.0 iniconfig==2.3.1 packaging==26.4
  pluggy==1.7.0 Pygments==2.21.0)
wheels_for_3_9=(anyio==4.12.1 exceptiongroup==1.3.2 pytest==8.4.2 iniconfig==2.1.0
  packaging==26.3 pluggy==1.6.0 tomli==2.5.0)
wheelhouse="$tools/wheelhouse"
if [[ "$(cat "$wheelhouse/pins.txt" 2>/dev/null)" != "${wheels[*]} ${wheels_for_3_9[*]}" ]]; then
  echo "sdk-tools: downloading ${wheels[*]} ${wheels_for_3_9[*]} from PyPI into $wheelhouse" >&2
  rm -rf "$wheelhouse"
  mkdir -p "$wheelhouse"
  download() {
    "$python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
      --only-binary=:all: --implementation py --abi none --platform any \
      --dest "$wheelhouse" "$@" >&2
  }
  download "${wheels[@]}"
  download --python-version 3.9 "${wheels_for_3_9[@]}"
  echo "${wheels[*]} ${wheels_for_3_9[*]}" >"$wheelhouse/pins.txt"
fi

# The oldest Python 3.9+ here, so that the clean installs test the package's floor where it can:
# python3.N on the PATH, else one pyenv installed (its shims answer only for the version selected),
# else python3.
oldest_python() {
  local minor candidate
  for minor in 9 10 11 12 13 14; do
    for candidate in "$(command -v "python3.$minor")" \
      "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3."$minor".*/bin/python3."$minor"; do
      [[ -x "$candidate" ]] &&
        "$candidate" -c 'import ensurepip, sys, venv; print(sys.executable)' 2>/dev/null &&
        return
    done
  done
  command -v python3
}
oldest_python >"$tools/oldest-python"

# npm ci installs exactly the lock; it runs again only when the lock changed since.
typescript="$root/sdks/typescript"
if [[ ! -f "$typescript/node_modules/.package-lock.json" ||
  "$typescript/package-lock.json" -nt "$typescript/node_modules/.package-lock.json" ]]; then
  command -v npm >/dev/null || { echo "sdk-tools: npm is required (Node.js)" >&2; exit 1; }
  echo "sdk-tools: installing @hey-api/openapi-ts, typescript and Node 22 from the npm registry" >&2
  (cd "$typescript" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
echo "$tools"
