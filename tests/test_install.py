"""A non-editable install works from any directory: templates and schema come from the
wheel, nothing from the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

from conftest import ROOT


def test_wheel_install_builds_the_sample_site_from_elsewhere(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(wheels), str(ROOT)], check=True, capture_output=True)
    [wheel] = list(wheels.glob("ikreport-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "ikreport/templates/record.html" in names and "ikreport/schema/record-1.json" in names
    assert "ikreport/py.typed" in names
    # a kind's data part inside its package ships too: without it the schema lacks the kind
    assert "ikreport/kinds/ncu_profile/ncu_profile.schema.json" in names
    target = tmp_path / "site-packages"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    code = "import ikreport, ikreport.site.render as r; print(ikreport.__file__); print(r.default_templates_dir())"
    out = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, check=True,
                         capture_output=True, text=True).stdout.splitlines()
    assert all(line.startswith(str(target)) for line in out), out
    subprocess.run([sys.executable, "-m", "ikreport", "build", str(ROOT / "sample_evidence"), "-o", "out"],
                   cwd=elsewhere, env=env, check=True, capture_output=True)
    assert (elsewhere / "out" / "index.html").read_bytes() == (ROOT / "site" / "index.html").read_bytes()
