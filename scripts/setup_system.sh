#!/usr/bin/env bash
# System packages the tests need that pip cannot install: git (publish tests), Debian's
# Chromium with a font (browser tests; Playwright drives it through executable_path, since
# 'playwright install' cannot download a browser here), and Debian's Nsight Compute (its
# 'ncu' checks the command lines ikreport builds and exports real reports; it needs no GPU
# for that). Nsight Compute is in Debian's non-free component, which is added (for this
# release only) when no apt source names it; where it cannot be installed the tests that need
# ncu are skipped and say why. Idempotent; quiet when all is present.
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
command -v chromium >/dev/null || need+=(chromium)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || need+=(fonts-dejavu-core)
ncu=()
if ! command -v ncu >/dev/null && [ -r /etc/os-release ] && . /etc/os-release && [ "${ID:-}" = debian ]; then
  ncu=(nsight-compute)
fi
if [ ${#need[@]} -eq 0 ] && [ ${#ncu[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "missing system packages: ${need[*]} ${ncu[*]} (install them with apt-get as root)" >&2
  [ ${#need[@]} -eq 0 ] || exit 1
  exit 0
fi
if [ ${#ncu[@]} -gt 0 ] && ! grep -Eqs '^[^#]*[[:space:]]non-free([[:space:]]|$)' /etc/apt/sources.list \
     /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; then
  # a component is a whole word: "non-free-firmware" is another one
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: non-free\nSigned-By: %s\n' \
    "$VERSION_CODENAME" /usr/share/keyrings/debian-archive-keyring.gpg >/etc/apt/sources.list.d/ikreport-non-free.sources
fi
echo "installing ${need[*]} ${ncu[*]}" >&2
apt-get update -qq
if [ ${#need[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ ${#ncu[@]} -gt 0 ] && ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${ncu[@]}" >/dev/null; then
  echo "nsight-compute could not be installed: the tests that need ncu are skipped" >&2
fi
