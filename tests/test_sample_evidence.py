"""sample_evidence/ is what today's importer makes of the real exports: the project's own
script, run into an empty folder, writes exactly its records and blobs, so no record in the
sample carries what an older ikreport said."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def stored(archive: Path) -> dict[str, set[str]]:
    """The names of an archive's records and blobs, as `ab/cdef…` paths."""
    return {part: {p.relative_to(archive / part).as_posix() for p in (archive / part).rglob("*") if p.is_file()}
            for part in ("records", "blobs")}


def test_the_script_reproduces_the_sample_exactly(tmp_path):
    fresh = tmp_path / "sample"
    # IK is a command line, split by the script's shell: this checkout's ikreport, not an installed one.
    env = {**os.environ, "IK": f"{sys.executable} -m ikreport", "PYTHONPATH": str(ROOT)}
    subprocess.run(["bash", str(ROOT / "scripts" / "make_sample_evidence.sh"), str(fresh)], cwd=ROOT, env=env,
                   check=True, capture_output=True)
    assert stored(fresh) == stored(ROOT / "sample_evidence")  # a name is the sha256 of its bytes
