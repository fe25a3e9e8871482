#!/usr/bin/env bash
# Installs aiosmtpd (a real SMTP server, pinned with its dependencies) from PyPI into a
# project-local virtualenv, .data/smtp-venv, when it is missing, and prints the path of that
# virtualenv's python. The email crate's tests run it as their SMTP server (SMTP_PYTHON).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
set -euo pipefail
venv="$root/.data/smtp-venv"
python="$venv/bin/python"
packages=(aiosmtpd==1.4.6 atpublic==9.0.0 attrs==26.1.0)
if ! "$python" -c 'import aiosmtpd, sys; sys.exit(aiosmtpd.__version__ != "1.4.6")' 2>/dev/null; then
  need_command python3 python3 "the SMTP server of the email tests"
  echo "smtp-tools: installing ${packages[*]} from PyPI into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || {
    echo "smtp-tools: python3 -m venv failed (on Debian: apt-get install python3-venv)" >&2
    exit 1
  }
  "$python" -m pip install --quiet --disable-pip-version-check --no-input "${packages[@]}" >&2
fi
echo "$python"
