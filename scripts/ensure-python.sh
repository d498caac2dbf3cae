#!/usr/bin/env bash
# The Python that `make` builds .venv with: 3.11 or newer, with its venv module and ensurepip
# (Debian and Ubuntu ship them apart, in python3-venv). Installs what is missing with apt-get.
#   usage: scripts/ensure-python.sh [PYTHON]   (default python3)
set -euo pipefail
. "$(dirname "$0")/as-root.sh"
python=${1:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
  apt_install python3 python3-venv
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "ensure-python: benchyard needs Python 3.11 or newer; $python is $("$python" --version 2>&1) (make PYTHON=python3.12 ...)" >&2
  exit 1
fi
if ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  version=$("$python" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  apt_install "python$version-venv" || apt_install python3-venv
fi
