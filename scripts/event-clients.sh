#!/usr/bin/env bash
# Installs the independent clients of the events tests (PyPI's httpx-sse, an SSE client, and
# standardwebhooks, the Standard Webhooks reference library, pinned with their dependencies) into
# a project-local virtualenv, .data/event-clients-venv, when it is missing, and prints the path of
# that virtualenv's python. The black-box tests run scripts/event_follower.py and
# scripts/webhook_receiver.py with it (EVENT_CLIENTS_PYTHON).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail
python_venv event-clients-venv "the independent clients of the events tests" \
  httpx==0.28.1 httpx-sse==0.4.3 standardwebhooks==1.1.0 \
  anyio==4.16.0 certifi==2026.10.19.post1 h11==0.16.0 httpcore==1.0.9 idna==3.20 \
  typing_extensions==4.16.0
