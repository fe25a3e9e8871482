#!/usr/bin/env bash
# The client libraries of sdks/ (decision 0093): their generated code, its staleness check, the
# hand-written layer's linters, and the packages.
#
#   scripts/sdks.sh [generate]   `make sdks`: regenerate sdks/python/agent_runtime/_generated and
#                                sdks/typescript/src/generated from docs/openapi.json, then build
#   scripts/sdks.sh check [DOC]  generate from DOC (docs/openapi.json by default) into a temporary
#                                folder and fail, naming the files, when it differs from what is
#                                committed (`make lint-static`)
#   scripts/sdks.sh lint         ruff over the Python layer and its tests, tsc over the TypeScript
#   scripts/sdks.sh build        the wheel and the npm tarball under target/sdks/, offline once the
#                                tools are installed; prints their paths
#
# The tools come from scripts/sdk-tools.sh (SDK_TOOLS when already set), pinned. The Python
# generator renders with sdks/python/templates/ over its own: dataclass models and a date-time
# parser of their own, so that the package needs httpx alone.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail
tools="${SDK_TOOLS:-$(scripts/sdk-tools.sh)}"
python="$tools/venv/bin/python"
export PATH="$tools/venv/bin:$PATH"
typescript="$root/sdks/typescript"
node22="$typescript/node_modules/.bin/node"
tsc="$typescript/node_modules/typescript/bin/tsc"
generated_python=sdks/python/agent_runtime/_generated
generated_typescript=sdks/typescript/src/generated

# generate_into DOC PYTHON_OUT TYPESCRIPT_OUT: both generators over DOC.
generate_into() {
  local doc="$1" python_out="$2" typescript_out="$3"
  rm -rf "$python_out" "$typescript_out"
  (cd "$root/sdks/python" &&
    "$tools/venv/bin/openapi-python-client" generate --path "$doc" --meta none \
      --config openapi-python-client.yaml --custom-template-path templates \
      --output-path "$python_out" >&2)
  OPENAPI_DOC="$doc" OPENAPI_TS_OUTPUT="$typescript_out" NO_COLOR=1 \
    "$node22" "$typescript/node_modules/@hey-api/openapi-ts/bin/run.js" \
    --file "$typescript/openapi-ts.config.mjs" >/dev/null
}

build() {
  mkdir -p target/sdks
  rm -f target/sdks/agent_runtime-*.whl target/sdks/agent-runtime-*.tgz
  "$python" -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
    --no-index --wheel-dir target/sdks sdks/python >&2
  rm -rf "$typescript/dist"
  (cd "$typescript" && "$node22" "$tsc" -p tsconfig.json)
  (cd "$typescript" && npm pack --offline --silent --pack-destination "$root/target/sdks" >/dev/null)
  ls "$root"/target/sdks/agent_runtime-*.whl "$root"/target/sdks/agent-runtime-*.tgz
}

case "${1:-generate}" in
  generate)
    generate_into "$root/docs/openapi.json" "$root/$generated_python" "$root/$generated_typescript"
    echo "sdks: generated $generated_python and $generated_typescript" >&2
    build
    ;;
  check)
    doc="$(realpath "${2:-docs/openapi.json}")"
    scratch="$(mktemp -d)"
    trap 'rm -rf "$scratch"' EXIT
    generate_into "$doc" "$scratch/python" "$scratch/typescript"
    stale=0
    diff -rq -x __pycache__ "$root/$generated_python" "$scratch/python" >&2 || stale=1
    diff -rq "$root/$generated_typescript" "$scratch/typescript" >&2 || stale=1
    if ((stale)); then
      echo "sdks: the generated code is stale against ${2:-docs/openapi.json}: run make sdks" >&2
      exit 1
    fi
    echo "sdks: the generated code matches ${2:-docs/openapi.json}" >&2
    ;;
  lint)
    (cd sdks/python && ruff check --quiet . && ruff format --check --quiet .)
    (cd "$typescript" && "$node22" "$tsc" -p tsconfig.json --noEmit)
    echo "sdks: the hand-written layers pass ruff and tsc" >&2
    ;;
  build) build ;;
  *)
    echo "usage: $0 [generate | check [DOC] | lint | build]" >&2
    exit 2
    ;;
esac
