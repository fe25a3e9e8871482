#!/usr/bin/env bash
# Installs the official x402 Python package (PyPI's x402 with its evm and fastapi extras, pinned
# with every dependency) and uvicorn into a project-local virtualenv, .data/x402-venv, when it is
# missing, and prints the path of that virtualenv's python. The x402 black-box tests run
# tests/x402/paid_server.py (the package's FastAPI middleware as a paid resource server) and
# tests/x402/facilitator.py (the package's facilitator settling on anvil) with it; see
# tests/x402/README.md. The fastapi extra pulls in fastapi[standard], hence the long list.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail
python_venv x402-venv "the x402 package the payment tests run against" \
  'x402[evm,fastapi]==2.25.0' uvicorn==0.54.0 \
  agent-detector==2.0.0 aiohappyeyeballs==2.7.1 aiohttp==3.14.5 aiosignal==1.4.0 \
  annotated-doc==0.0.7 annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0 bitarray==3.12.3 \
  certifi==2026.10.19.post1 charset-normalizer==3.5.3 ckzg==2.1.8 click==8.5.1 cytoolz==1.2.0 \
  detect-installer==0.2.1 dnspython==2.9.2 email-validator==2.4.0 eth-account==0.14.0 \
  eth-hash==0.8.0 eth-keyfile==0.10.0 eth-keys==0.8.0 eth-rlp==3.0.0 eth-typing==6.0.0 \
  eth-utils==6.0.0 eth_abi==6.0.0 fastapi==0.165.0 fastapi-cli==0.0.34 fastapi-cloud-cli==0.28.0 \
  fastar==0.12.0 frozenlist==1.8.0 googleapis-common-protos==1.76.0 h11==0.16.0 hexbytes==2.0.0 \
  httpcore==1.0.9 httpcore2==2.16.2 httptools==0.9.0 httpx==0.28.1 httpx2==2.16.2 idna==3.20 \
  Jinja2==3.1.6 markdown-it-py==4.3.0 MarkupSafe==3.0.4 mdurl==0.1.2 multidict==7.2.1 \
  nest-asyncio==1.6.0 opentelemetry-api==1.45.2 opentelemetry-exporter-http-transport==0.66b2 \
  opentelemetry-exporter-otlp-common==0.66b2 opentelemetry-exporter-otlp-proto-common==1.45.2 \
  opentelemetry-exporter-otlp-proto-http==1.45.2 opentelemetry-proto==1.45.2 \
  opentelemetry-sdk==1.45.2 opentelemetry-semantic-conventions==0.66b2 parsimonious==0.10.0 \
  propcache==0.5.4 protobuf==7.36.2 py-ecc==8.0.0 pycryptodome==3.24.1 pydantic==2.14.4 \
  pydantic-extra-types==2.11.1 pydantic-settings==2.16.3 pydantic_core==2.50.5 Pygments==2.21.0 \
  python-dotenv==1.2.4 python-multipart==0.0.34 pyunormalize==18.0.0 PyYAML==6.0.4 \
  regex==2026.11.19 requests==2.34.2 rich==15.0.0 rich-toolkit==0.20.6 rignore==0.8.1 \
  rlp==5.0.0 sentry-sdk==2.75.0 shellingham==1.5.4 starlette==1.10.0 toolz==1.2.0 \
  truststore==0.10.5 typer==0.29.2 typing-inspection==0.4.5 typing_extensions==4.16.0 \
  urllib3==2.8.0 uvloop==0.23.0 watchfiles==1.3.0 web3==8.0.0 websockets==17.4 yarl==1.25.1
