#!/usr/bin/env bash
# `make clean-db`: drops every leftover test database on the test server (TEST_DATABASE_URL, else
# the project-local cluster): those of killed runs, those whose name records no creator, and
# templates of other migrations; prints what it dropped. Databases of runs still going are kept.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
use_local_database TEST_DATABASE_URL postgres
echo "clean-db: PostgreSQL at ${TEST_DATABASE_URL%%\?*}" | sed 's#//[^@]*@#//#' >&2
cargo run --quiet --locked -p test-support --bin clean-test-databases
