#!/usr/bin/env bash
# Test setup: Debian's chromium for the HTML report's browser test (Playwright drives it through
# executable_path; nothing is downloaded by Playwright itself). Needs root and Debian's package index.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" != "0" ]; then
    echo "setup_browser: chromium is missing and this is not root; install it with: sudo apt-get install -y chromium" >&2
    exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
command -v chromium
