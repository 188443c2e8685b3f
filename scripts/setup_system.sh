#!/usr/bin/env bash
# System packages the tests need that pip cannot install. Idempotent; quiet when present.
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing system packages: ${need[*]} (install them with apt-get as root)" >&2
    exit 1
  fi
fi
