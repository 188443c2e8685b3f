"""The wheel of the ikreport that is running, for a Pages workflow to install.

ikreport is not on PyPI, so a workflow that says ``pip install ikreport`` installs nothing (or
someone else's package). ``init-pages`` therefore puts a wheel of the very ikreport the user
ran into the repository, and the workflow installs that file: either a wheel the user names
(``--wheel``, the one they installed), or one built here with pip from the source tree this
ikreport runs from (an editable or ``make site`` install). Built without build isolation when
the build backend (hatchling) is installed, so no network is needed then.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import ikreport
from ikreport.commands.repo_files import open_folder, refuse_links, write_file
from ikreport.errors import PublishError

WHEEL_DIR = Path(".github/ikreport")  # in the repository, beside the workflow
WHEEL_NAME = re.compile(r"ikreport-[0-9A-Za-z.+_]+-py3-none-any\.whl")


def source_tree() -> Path | None:
    """The source tree this ikreport runs from (its pyproject.toml names ikreport), or None when
    it was installed from a wheel."""
    root = Path(ikreport.__file__).resolve().parent.parent
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text("utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return root if project.get("name") == "ikreport" else None


def build_wheel(folder: Path) -> Path:
    """Build the running ikreport's wheel into ``folder`` with pip; return its path."""
    root = source_tree()
    if root is None:
        raise PublishError("this ikreport was installed from a wheel, so init-pages cannot build one; give that "
                           "wheel with --wheel FILE, or --install SPEC (e.g. a git URL at a commit)")
    isolation = ["--no-build-isolation"] if importlib.util.find_spec("hatchling") else []
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *isolation,
                           "-w", str(folder), str(root)], capture_output=True, text=True, check=False)
    built = sorted(folder.glob("ikreport-*.whl"))
    if done.returncode != 0 or len(built) != 1:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise PublishError(f"{root}: pip could not build the ikreport wheel ({said[-1] if said else 'no output'}); "
                           "give a wheel with --wheel FILE or --install SPEC")
    return built[0]


def place_wheel(repo: Path, wheel: Path | None) -> str:
    """Copy ``wheel`` (or, when None, the running ikreport's, built now) into the repository's
    .github/ikreport/, replacing any ikreport wheel there; return its path in the repository,
    as the workflow's pip install names it. Never through a link (see repo_files)."""
    if wheel is not None and not (wheel.is_file() and WHEEL_NAME.fullmatch(wheel.name)):
        raise PublishError(f"{wheel}: not an ikreport wheel file (ikreport-VERSION-py3-none-any.whl)")
    with tempfile.TemporaryDirectory(prefix="ikreport-wheel-") as tmp:
        source = wheel if wheel is not None else build_wheel(Path(tmp))
        target = repo / WHEEL_DIR
        refuse_links(repo, WHEEL_DIR / source.name)
        try:
            with open_folder(repo, WHEEL_DIR) as folder:
                # Copied in before any old wheel goes: the wheel named may be the one already there.
                with open(source, "rb") as data:
                    write_file(folder, source.name, data)
                for old in os.listdir(folder):
                    if old != source.name and WHEEL_NAME.fullmatch(old):
                        os.unlink(old, dir_fd=folder)  # a link is removed, never what it points at
        except OSError as exc:
            raise PublishError(f"{target}: cannot write the wheel ({exc.strerror})") from exc
    return (WHEEL_DIR / source.name).as_posix()
