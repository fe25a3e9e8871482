#!/usr/bin/env bash
# Installs the independent client of the MCP tests (PyPI's mcp, the official MCP Python SDK, pinned
# with its dependencies) into a project-local virtualenv, .data/mcp-clients-venv, when it is
# missing, and prints the path of that virtualenv's python. The black-box tests run
# scripts/mcp_scenario.py with it (MCP_CLIENTS_PYTHON). mcp 2.x speaks HTTP through httpx2 (not
# httpx) and pulls in its server side too (starlette, uvicorn...), all pinned here.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail
python_venv mcp-clients-venv "the independent client of the MCP tests" \
  mcp==2.3.0 \
  annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0 cffi==2.1.1 click==8.5.1 cryptography==50.0.2 \
  h11==0.16.0 httpcore2==2.16.2 httpx2==2.16.2 idna==3.20 jsonschema==4.26.0 \
  jsonschema-specifications==2025.9.1 mcp-types==2.3.0 opentelemetry-api==1.45.2 pycparser==3.12 \
  pydantic==2.14.4 pydantic_core==2.50.5 PyJWT==2.15.1 python-multipart==0.0.34 referencing==0.37.0 \
  rpds-py==2026.9.1 sse-starlette==3.7.0 starlette==1.10.0 truststore==0.10.5 \
  typing-inspection==0.4.5 typing_extensions==4.16.0 uvicorn==0.54.0
