#!/usr/bin/env bash
# System packages the tests need that pip cannot install: git (publish tests), Debian's
# Chromium with a font (browser tests; Playwright drives it through executable_path, since
# 'playwright install' cannot download a browser here), and Debian's Nsight Compute (its
# 'ncu' checks the command lines ikreport builds and exports real reports; it needs no GPU
# for that). Nsight Compute is in Debian's non-free component, which is added (for this
# release only) when no apt source names it. Idempotent; quiet when all is present.
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
command -v chromium >/dev/null || need+=(chromium)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || need+=(fonts-dejavu-core)
nonfree=()
if ! command -v ncu >/dev/null && [ -r /etc/os-release ] && . /etc/os-release && [ "${ID:-}" = debian ]; then
  need+=(nsight-compute)
  # a component is a whole word: "non-free-firmware" is another one
  if ! grep -Eqs '^[^#]*[[:space:]]non-free([[:space:]]|$)' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
       /etc/apt/sources.list.d/*.sources; then
    nonfree=(/etc/apt/sources.list.d/ikreport-non-free.sources)
  fi
fi
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing ${need[*]}" >&2
    if [ ${#nonfree[@]} -gt 0 ]; then
      printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: non-free\nSigned-By: %s\n' \
        "$VERSION_CODENAME" /usr/share/keyrings/debian-archive-keyring.gpg >"${nonfree[0]}"
    fi
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "missing system packages: ${need[*]} (install them with apt-get as root)" >&2
    exit 1
  fi
fi
