#!/usr/bin/env bash
# Download, here, the wheels that `collect` needs on the GPU machine and that its image lacks
# (it has no package registry). The image's Python is 3.12; see the device tool's KINDS.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
  platforms+=(--platform "$p")
done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" -d .whl \
  rfc8785 "orjson>=3.11.7" "jsonschema-rs>=0.61"
ls .whl
