#!/usr/bin/env bash
# Debian's chromium, for the web UI's browser tests (tests/e2e/web): Playwright for Python drives
# /usr/bin/chromium. Playwright's own browser download is never used (no `playwright install`).
set -euo pipefail
. "$(dirname "$0")/as-root.sh"
[ -x /usr/bin/chromium ] || apt_install chromium
/usr/bin/chromium --version >/dev/null 2>&1 || { echo "ensure-browser: /usr/bin/chromium does not run" >&2; exit 1; }
