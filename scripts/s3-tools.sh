#!/usr/bin/env bash
# Installs moto's server (an S3-compatible server, pinned with every dependency) from PyPI into a
# project-local virtualenv, .data/s3-venv, when it is missing, and prints the path of that
# virtualenv's python. The s3-store crate's tests run it as their S3 server (S3_PYTHON).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail
python_venv s3-venv "the S3 server of the attachment store's tests" \
  "moto[server]==5.2.5" annotated-types==0.8.0 antlr4-python3-runtime==4.13.2 attrs==26.1.0 \
  aws-xray-sdk==2.15.0 blinker==1.9.0 boto3==1.44.8 botocore==1.44.8 certifi==2026.10.19.post1 \
  cffi==2.1.1 cfn-lint==1.58.0 charset-normalizer==3.5.3 click==8.5.1 cryptography==50.0.2 \
  docker==7.2.0 Flask==3.1.3 flask-cors==6.0.5 graphql-core==3.3.2 idna==3.20 itsdangerous==2.2.0 \
  Jinja2==3.1.6 jmespath==1.1.0 joserfc==1.8.0 jsonpatch==1.48 jsonpath-ng==1.16.0 \
  jsonpointer==3.12 jsonschema==4.26.0 jsonschema-path==0.5.0 jsonschema-specifications==2025.9.1 \
  lazy-object-proxy==1.13.0 MarkupSafe==3.0.4 mpmath==1.3.0 networkx==3.6.1 \
  openapi-schema-validator==0.9.0 openapi-spec-validator==0.9.0 pathable==0.6.0 \
  py-partiql-parser==0.6.3 pycparser==3.12 pydantic==2.14.4 pydantic-settings==2.16.3 \
  pydantic_core==2.50.5 pyparsing==3.3.3 python-dateutil==2.9.0.post0 python-dotenv==1.2.4 \
  PyYAML==6.0.4 referencing==0.37.0 regex==2026.11.19 requests==2.34.2 responses==0.26.3 \
  rfc3339-validator==0.1.4 rpds-py==2026.9.1 s3transfer==0.19.3 six==1.17.0 sympy==1.14.0 \
  typing-inspection==0.4.5 typing_extensions==4.16.0 urllib3==2.8.0 Werkzeug==3.1.9 wrapt==2.5.2 \
  xmltodict==1.0.4
