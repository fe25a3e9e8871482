#!/usr/bin/env bash
# `make lint`'s unused-dependency check: cargo-machete, installed from crates.io into .data/tools
# (a pinned version, built once per checkout) unless one is on PATH already.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
version=0.9.2
tools="$root/.data/tools"
machete="$(command -v cargo-machete || true)"
if [[ -z "$machete" ]]; then
  machete="$tools/bin/cargo-machete"
  if [[ ! -x "$machete" ]] || ! "$machete" --version 2>/dev/null | grep -q "$version"; then
    echo "machete: installing cargo-machete $version from crates.io (first run only, about 2 minutes)" >&2
    cargo install cargo-machete --version "$version" --locked --root "$tools" --quiet
  fi
fi
"$machete"
