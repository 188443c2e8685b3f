#!/usr/bin/env bash
# System packages the tests need that pip cannot install: git (publish tests) and Debian's
# Chromium with a font (browser tests; Playwright drives it through executable_path, since
# 'playwright install' cannot download a browser here). Idempotent; quiet when all is present.
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
command -v chromium >/dev/null || need+=(chromium)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || need+=(fonts-dejavu-core)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing ${need[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing system packages: ${need[*]} (install them with apt-get as root)" >&2
    exit 1
  fi
fi
