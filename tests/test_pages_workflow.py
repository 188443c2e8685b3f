"""The workflow init-pages writes works as written (issue 16 item 14): its ``run:`` steps,
run in order in a fresh virtual environment inside a repository, install the ikreport that
wrote it and build the site.

No network: the wheel init-pages put in the repository is the one thing installed, with pip's
index turned off (PIP_NO_INDEX); ikreport's dependencies, which GitHub would download, are
found already installed through a .pth line naming this test run's site-packages (a .pth line
adds a folder, it does not run the .pth files in it, so this run's own ikreport stays out)."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import zipfile

import yaml
from click.testing import CliRunner

from conftest import ROOT, git
from ikreport import __version__
from ikreport.cli.main import cli

WHEEL = f".github/ikreport/ikreport-{__version__}-py3-none-any.whl"


def test_the_workflow_run_steps_install_this_ikreport_and_build_the_site(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "sample_evidence", repo / "evidence")
    git("init", "-q", cwd=repo)
    written = CliRunner().invoke(cli, ["init-pages", "--repo", str(repo), "--archive", "evidence"])
    assert written.exit_code == 0, written.output
    assert written.stdout == (f"{repo / '.github/workflows/ikreport-pages.yml'}: written; commit it and {WHEEL}; "
                              "in the repository's Settings > Pages, set Source to 'GitHub Actions'\n")
    assert "ikreport/templates/record.html" in zipfile.ZipFile(repo / WHEEL).namelist()
    workflow = yaml.safe_load((repo / ".github/workflows/ikreport-pages.yml").read_text("utf-8"))
    steps = [s for s in workflow["jobs"]["build"]["steps"] if "run" in s]
    assert [s["run"] for s in steps] == ['python -m pip install "$IKREPORT_INSTALL"',
                                         'ikreport build "$IKREPORT_ARCHIVE" -o _site --strict']
    assert steps[0]["env"] == {"IKREPORT_INSTALL": f"./{WHEEL}"}

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    fresh = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                           capture_output=True, text=True).stdout.strip()
    with open(os.path.join(fresh, "dependencies.pth"), "w", encoding="utf-8") as pth:
        pth.write("\n".join(site.getsitepackages()) + "\n")
    base = {"HOME": str(tmp_path), "PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin",
            "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for step in steps:  # as GitHub runs a run: step, in the repository's root
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=repo,
                              env={**base, **step.get("env", {})}, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (step["run"], done.stdout, done.stderr)
    where = subprocess.run([str(python), "-c", "import ikreport; print(ikreport.__file__)"], cwd=tmp_path,
                           env=base, check=True, capture_output=True, text=True).stdout
    assert where.startswith(fresh)  # the wheel's ikreport, not this run's
    assert (repo / "_site" / "index.html").read_bytes() == (ROOT / "site" / "index.html").read_bytes()


def test_init_pages_with_a_wheel_copies_it_and_refuses_what_is_not_one(tmp_path):
    runner = CliRunner()
    other = tmp_path / "ikreport-9.9-py3-none-any.whl"
    other.write_bytes(b"PK")
    for repo in ("r", "s"):
        (tmp_path / repo).mkdir()
        git("init", "-q", cwd=tmp_path / repo)
    assert runner.invoke(cli, ["init-pages", "--repo", str(tmp_path / "r"), "--wheel", str(other)]).exit_code == 0
    assert (tmp_path / "r/.github/ikreport/ikreport-9.9-py3-none-any.whl").read_bytes() == b"PK"
    text = (tmp_path / "r/.github/workflows/ikreport-pages.yml").read_text("utf-8")
    assert 'IKREPORT_INSTALL: "./.github/ikreport/ikreport-9.9-py3-none-any.whl"' in text
    bad = runner.invoke(cli, ["init-pages", "--repo", str(tmp_path / "s"), "--wheel", str(tmp_path / "x.zip")])
    assert (bad.exit_code, bad.stderr) == (
        1, f"Error: {tmp_path / 'x.zip'}: not an ikreport wheel file (ikreport-VERSION-py3-none-any.whl)\n")
    both = runner.invoke(cli, ["init-pages", "--repo", str(tmp_path / "s"), "--wheel", str(other), "--install", "x"])
    assert both.exit_code == 2 and not (tmp_path / "s" / ".github").exists()
