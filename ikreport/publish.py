"""``ikreport publish`` and ``ikreport init-pages``: put a built site on GitHub Pages.

publish commits the site folder to a branch (gh-pages) with ghp-import, the library mkdocs
uses, and pushes it; init-pages writes a GitHub Actions workflow that builds and deploys the
site on GitHub's side instead.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

from ikreport import __version__
from ikreport.errors import IkreportError


class PublishError(IkreportError):
    """A site that cannot be published (no git repository, push refused, not a site)."""


@contextlib.contextmanager
def _in(directory: Path) -> Iterator[None]:
    # ghp-import runs git in the current directory; nothing else in ikreport changes it.
    before = Path.cwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(before)


def git_toplevel(path: Path) -> Path:
    done = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if done.returncode != 0:
        raise PublishError(f"{path}: not inside a git repository; run 'git init' there, or give --repo DIR")
    return Path(done.stdout.strip())


def publish(site: Path, *, remote: str, branch: str, no_history: bool, message: str | None,
            repo: Path | None = None, push: bool = True) -> str:
    """Commit ``site`` to ``branch`` of the repository and push it to ``remote``; return a summary."""
    import ghp_import

    site = site.resolve()
    if not (site / "index.html").is_file() or not (site / "e").is_dir():
        raise PublishError(f"{site}: not a built ikreport site (no index.html and e/); run 'ikreport build' first")
    top = git_toplevel(repo or site)
    files = sum(1 for p in site.rglob("*") if p.is_file())
    if no_history:
        # ghp-import drops the local branch only when a remote-tracking ref exists, which a
        # remote given as a path or URL never has; without this the "new" branch keeps its past.
        subprocess.run(["git", "-C", str(top), "update-ref", "-d", f"refs/heads/{branch}"], capture_output=True)
    try:
        with _in(top):
            ghp_import.ghp_import(str(site), mesg=message or f"Publish ikreport site ({files} files)", remote=remote,
                                  branch=branch, push=push, no_history=no_history, nojekyll=True, force=no_history)
    except ghp_import.GhpError as exc:
        raise PublishError(f"{site}: publishing to {remote} {branch} failed: {' '.join(str(exc).split())}") from exc
    except subprocess.CalledProcessError as exc:
        raise PublishError(f"{site}: git failed while publishing to {remote} {branch} (exit {exc.returncode}); "
                           "check the remote and your access to it") from exc
    return f"{site}: {files} files committed to {branch}" + (f" and pushed to {remote}" if push else "")


WORKFLOW = """\
# Written by `ikreport init-pages` (ikreport {version}). Builds the evidence site on every
# push to {main} and deploys it to GitHub Pages (Settings > Pages > Source: GitHub Actions).
name: ikreport pages

on:
  push:
    branches: [{main}]
  workflow_dispatch:

permissions:
  contents: read
  pages: write
  id-token: write

concurrency:
  group: pages
  cancel-in-progress: false

jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Install ikreport
        run: python -m pip install "{install}"
      - name: Build the site (fails on any citation that does not check out)
        run: ikreport build {archive} -o _site --strict
      - uses: actions/upload-pages-artifact@v3
        with:
          path: _site

  deploy:
    needs: build
    runs-on: ubuntu-latest
    environment:
      name: github-pages
      url: ${{{{ steps.deployment.outputs.page_url }}}}
    steps:
      - id: deployment
        uses: actions/deploy-pages@v4
"""

WORKFLOW_PATH = Path(".github/workflows/ikreport-pages.yml")


def init_pages(repo: Path, *, archive: str, install: str, main: str, force: bool) -> Path:
    path = repo / WORKFLOW_PATH
    if path.exists() and not force:
        raise PublishError(f"{path}: already exists; pass --force to replace it")
    text = WORKFLOW.format(version=__version__, archive=archive, install=install, main=main)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    except OSError as exc:
        raise PublishError(f"{path}: cannot write ({exc.strerror})") from exc
    return path
