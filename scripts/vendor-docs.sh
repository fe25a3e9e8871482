#!/usr/bin/env bash
# Vendors the renderer of the `/docs` page: Redoc's standalone bundle, a pinned version taken from
# the npm registry, into crates/http/assets/redoc/, where the server embeds it. Run it only to
# change the version (then set REDOC_VERSION, REDOC_INTEGRITY and BUNDLE_SHA256 below to the new
# release's, review, and commit); the build itself needs no network.
#
#   scripts/vendor-docs.sh           fetch, verify and write the bundle, its licences and VERSION
#   scripts/vendor-docs.sh --check   verify the committed bundle against the pinned digest
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail

REDOC_VERSION=2.5.4
# The npm registry's `dist.integrity` of the package tarball (`npm view redoc@VERSION dist`).
REDOC_INTEGRITY="sha512-M6jWhG1qoBnH6TFmzJnstyCZ87HmOY/UzDm78mHiYihEdlV/YcS9ogOo1NlElnJMeLsyxHFe2yFc4sNjHTrABQ=="
# The bundle as committed, so a hand-edited or truncated copy is noticed by --check.
BUNDLE_SHA256=dcaf76612bc4a3fbcc923a8966dee2f6146a5f32e5ce1b6f02dd60cbbf89500b

assets="$root/crates/http/assets/redoc"

say() { echo "vendor-docs: $*" >&2; }

check_bundle() {
  local actual
  actual="$(sha256sum "$1" | cut -d' ' -f1)"
  if [[ "$actual" != "$BUNDLE_SHA256" ]]; then
    say "$1 has sha256 $actual, expected $BUNDLE_SHA256"
    exit 1
  fi
}

if [[ "${1:-}" == --check ]]; then
  check_bundle "$assets/redoc.standalone.js"
  [[ "$(cat "$assets/VERSION")" == "$REDOC_VERSION" ]] || { say "VERSION is not $REDOC_VERSION"; exit 1; }
  say "redoc $REDOC_VERSION as pinned"
  exit 0
fi

command -v npm >/dev/null || { say "npm is required (Node.js)"; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
say "fetching redoc@$REDOC_VERSION from the npm registry"
tarball="$work/$(npm pack "redoc@$REDOC_VERSION" --pack-destination "$work" --loglevel=error --silent)"
integrity="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [[ "$integrity" != "$REDOC_INTEGRITY" ]]; then
  say "the tarball's integrity is $integrity, expected $REDOC_INTEGRITY"
  exit 1
fi
tar -xzf "$tarball" -C "$work" package/LICENSE package/bundles/redoc.standalone.js \
  package/bundles/redoc.standalone.js.LICENSE.txt
check_bundle "$work/package/bundles/redoc.standalone.js"
mkdir -p "$assets"
cp "$work/package/bundles/redoc.standalone.js" "$assets/redoc.standalone.js"
cp "$work/package/bundles/redoc.standalone.js.LICENSE.txt" "$assets/redoc.standalone.js.LICENSE.txt"
cp "$work/package/LICENSE" "$assets/LICENSE"
# No newline: the server builds the renderer's path from this file.
printf '%s' "$REDOC_VERSION" > "$assets/VERSION"
say "wrote redoc $REDOC_VERSION into ${assets#"$root"/}"
