#!/usr/bin/env bash
# Installs aiosmtpd (a real SMTP server, pinned with its dependencies) from PyPI into a
# project-local virtualenv, .data/smtp-venv, when it is missing, and prints the path of that
# virtualenv's python. The email crate's tests run it as their SMTP server (SMTP_PYTHON).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail
python_venv smtp-venv "the SMTP server of the email tests" \
  aiosmtpd==1.4.6 atpublic==9.0.0 attrs==26.1.0
