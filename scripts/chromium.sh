#!/usr/bin/env bash
# Debian's chromium for the console's browser tests (test/console/, driven by playwright-core, which downloads no
# browser). Idempotent: exits at once when /usr/bin/chromium runs. Installs it with apt-get when it does not, and
# fails loudly (non-zero, one line saying what to do) when it cannot.
set -euo pipefail
CHROMIUM=${COFFER_CHROMIUM:-/usr/bin/chromium}
if "$CHROMIUM" --headless --version >/dev/null 2>&1; then
  [ "${1:-}" = "--print-path" ] && echo "$CHROMIUM"
  exit 0
fi
if [ "$CHROMIUM" != /usr/bin/chromium ]; then
  echo "chromium.sh: COFFER_CHROMIUM=$CHROMIUM does not run" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "chromium.sh: the console tests need Debian's chromium: run 'apt-get install -y chromium' as root" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends chromium >&2; then
  $SUDO apt-get update >&2 && $SUDO apt-get install -y --no-install-recommends chromium >&2 || {
    echo "chromium.sh: apt-get could not install chromium (see above); the console tests cannot run" >&2
    exit 1
  }
fi
"$CHROMIUM" --headless --version >/dev/null 2>&1 || { echo "chromium.sh: chromium installed but $CHROMIUM does not run" >&2; exit 1; }
[ "${1:-}" = "--print-path" ] && echo "$CHROMIUM"
exit 0
