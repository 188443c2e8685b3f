"""``ikreport publish`` and ``ikreport init-pages``: put a built site on GitHub Pages.

publish commits the site folder to a branch (gh-pages) with ghp-import, the library mkdocs
uses, and pushes it; init-pages writes a GitHub Actions workflow that builds and deploys the
site on GitHub's side instead.

A site folder may come from someone else, so publish trusts none of it: before anything is
committed, every entry must be a regular file (or folder) that the build listed in
manifest.json. Every commit publish writes carries an ``Ikreport-Site: <sha256 of
manifest.json>`` trailer; a commit without one is somebody's work, and publish will not
overwrite a branch holding one (nor the branch checked out) unless told to with ``force``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

from ikreport import __version__, links
from ikreport.site.manifest import MANIFEST, MANIFEST_SCHEMA, MAX_MANIFEST, inside_site, read_manifest_bytes, walk_site
from ikreport.errors import BranchHoldsWorkError, PublishError, UnsafeSiteError, WorkflowValueError
from ikreport.terminal import safe_text

__all__ = ["PublishError", "check_site", "check_branch", "choose_site", "init_pages", "publish"]

TRAILER = "Ikreport-Site"
SITE_COMMIT = re.compile(r"[0-9a-f]{64}")


@contextlib.contextmanager
def _in(directory: Path) -> Iterator[None]:
    # ghp-import runs git in the current directory; nothing else in ikreport changes it.
    before = Path.cwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(before)


def _read_manifest(site: Path) -> tuple[bytes, set[str]]:
    """manifest.json's bytes and its "files" list, refused unless it is shaped as a build writes it."""
    path = site / MANIFEST
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeSiteError(f"{path}: not a regular file (a link or special file); rebuild the site")
        if info.st_size > MAX_MANIFEST:
            raise UnsafeSiteError(f"{path}: {info.st_size} bytes, too large for a manifest; rebuild the site")
        data = read_manifest_bytes(path)  # no link, no FIFO, even one swapped in since the lstat
    except FileNotFoundError as exc:
        raise UnsafeSiteError(f"{path}: missing; rebuild the site with 'ikreport build'") from exc
    except OSError as exc:
        raise UnsafeSiteError(f"{path}: cannot read it ({exc.strerror}); rebuild the site") from exc
    try:
        manifest = json.loads(data)
    except ValueError as exc:
        raise UnsafeSiteError(f"{path}: not JSON ({exc}); rebuild the site") from exc
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(manifest, dict) or manifest.get("schema") != MANIFEST_SCHEMA:
        raise UnsafeSiteError(f"{path}: not an ikreport manifest (schema {MANIFEST_SCHEMA}); rebuild the site")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise UnsafeSiteError(f"{path}: has no \"files\" list of paths (built by an older ikreport?); "
                              "rebuild the site with this one")
    bad = next((f for f in files if not inside_site(f) or f == MANIFEST), None)
    if bad is not None:
        raise UnsafeSiteError(f"{path}: lists {bad!r}, not a path the build writes; rebuild the site")
    return data, set(files)


def check_site(site: Path) -> tuple[str, int]:
    """Refuse a site holding anything but the regular files its manifest lists, all present.

    Returns (sha256 of manifest.json, number of files). Links are never followed: a link or a
    device in the site would have ghp-import commit whatever it points at.
    """
    data, listed = _read_manifest(site)
    found = {MANIFEST}

    def unreadable(exc: OSError) -> NoReturn:
        raise UnsafeSiteError(f"{safe_text(exc.filename)}: cannot read it ({exc.strerror}); check the site folder")

    for rel, path, what in walk_site(site, unreadable):  # links are listed, never entered
        shown = safe_text(path)  # a planted name may hold a line break or an escape
        if what == "link":
            raise UnsafeSiteError(f"{shown}: a symbolic link; publish pushes only files the build wrote "
                                  "(delete it, or rebuild the site)")
        if what == "folder":
            continue
        if what == "special":
            raise UnsafeSiteError(f"{shown}: not a regular file (a device, pipe or socket); delete it, "
                                  "or rebuild the site")
        if rel not in listed and rel != MANIFEST:
            domain = "; for a custom domain, publish with --cname DOMAIN" if rel == "CNAME" else ""
            raise UnsafeSiteError(f"{shown}: not written by the build (manifest.json does not list it); "
                                  f"delete it (a build leaves files it did not write alone{domain})")
        found.add(rel)
    missing = sorted(listed - found)
    if missing:
        raise UnsafeSiteError(f"{site / missing[0]}: listed in manifest.json but not in the site"
                              f"{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}; rebuild the site")
    return hashlib.sha256(data).hexdigest(), len(found)


def choose_site(named: Path | None, start: Path) -> Path:
    """The site folder named; with none, PublishError naming the site of the archive found from
    ``start`` upward. publish never guesses: in a clone, site/ is the sample's, not the user's."""
    if named is not None:
        return named
    from ikreport.store.discover import default_site, find_archive

    refused = "no SITE given, and publish does not guess; "
    archive = find_archive(start)
    if archive is None:
        raise PublishError(f"{refused}give the built site folder: 'ikreport publish FOLDER'")
    site = default_site(archive)
    if not (site / MANIFEST).is_file():
        raise PublishError(f"{refused}{archive} has no site yet: run 'ikreport build' (it writes {site}), "
                           f"then 'ikreport publish {site}'")
    raise PublishError(f"{refused}the site of {archive} is {site}: run 'ikreport publish {site}'")


def _check_hashes(site: Path) -> None:
    """Refuse a site whose records or blobs no longer hash to their names, as verify --site
    finds them: a page would cite bytes that are not the record it names."""
    from ikreport.commands.verify_site import verify_site

    problems = verify_site(str(site))[1]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UnsafeSiteError(f"{problems[0]}{more}; nothing was published ('ikreport verify --site {site}' "
                              "lists every problem)")


def git_toplevel(path: Path) -> Path:
    done = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if done.returncode != 0:
        raise PublishError(f"{path}: not inside a git repository; run 'git init' there, or give --repo DIR")
    return Path(done.stdout.strip())


def _git(top: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(top), *args], capture_output=True, text=True)


def _check_names(remote: str, branch: str) -> None:
    # Both reach git's argv (and the branch a fast-import stream): a leading '-' would be read
    # as an option (`--receive-pack=CMD` runs CMD), a line break would end the stream's line.
    if not remote or remote.startswith("-") or not remote.isprintable():
        raise PublishError(f"--remote {remote!r}: not a remote name, URL or path; give one such as origin")
    if branch.startswith("-") or subprocess.run(["git", "check-ref-format", "--branch", branch],
                                                capture_output=True).returncode != 0:
        raise PublishError(f"--branch {branch!r}: not a valid branch name; give one such as gh-pages")


def _work_commit(top: Path, rev: str) -> str | None:
    """The newest commit reachable from ``rev`` that is not a site commit, or None."""
    done = _git(top, "log", f"--format=%H %(trailers:key={TRAILER},valueonly,separator=%x2C)", rev, "--")
    if done.returncode != 0:
        raise PublishError(f"{top}: cannot read the history of {rev} ({done.stderr.strip()}); check the repository")
    for line in done.stdout.splitlines():
        commit, _, value = line.partition(" ")
        if not SITE_COMMIT.fullmatch(value.strip()):
            return commit
    return None


def _remote_tip(top: Path, remote: str, branch: str) -> str | None:
    """The commit ``branch`` points at on ``remote`` (fetched if not here), or None if it has none."""
    done = _git(top, "ls-remote", "--heads", remote, f"refs/heads/{branch}")
    if done.returncode != 0:
        raise PublishError(f"{remote}: cannot list its branches ({' '.join(done.stderr.split())}); "
                           "check the remote and your access to it")
    tips = [line.split()[0] for line in done.stdout.splitlines() if line.endswith(f"\trefs/heads/{branch}")]
    if not tips:
        return None
    if _git(top, "cat-file", "-e", f"{tips[0]}^{{commit}}").returncode != 0:
        # The objects are needed to read the history; no ref or FETCH_HEAD is written for them.
        done = _git(top, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, f"refs/heads/{branch}")
        if done.returncode != 0:
            raise PublishError(f"{remote}: cannot fetch {branch} to check it ({' '.join(done.stderr.split())}); "
                               "check the remote and your access to it")
    return tips[0]


def check_branch(top: Path, *, remote: str, branch: str, push: bool) -> str | None:
    """Refuse to publish to a checked-out branch, or to one whose history holds work; return
    the remote's tip of the branch (None when not pushing, or when the remote has none).

    ghp-import replaces the branch's whole tree (and with --no-history its history too), so a
    branch that holds anything but earlier sites would lose it. Checked: the local branch, the
    remote-tracking branch ghp-import would reset it to, and (when pushing) the remote's own.
    """
    worktrees = _git(top, "worktree", "list", "--porcelain").stdout.splitlines()
    if f"branch refs/heads/{branch}" in worktrees:
        raise BranchHoldsWorkError(f"{top}: {branch} is a checked-out branch; publishing would replace its files "
                                   "under your work tree; choose another --branch (gh-pages), or pass --force")
    where = [(f"{top} {branch}", f"refs/heads/{branch}"), (f"{top} {remote}/{branch}", f"refs/remotes/{remote}/{branch}")]
    revs = [(name, ref) for name, ref in where if _git(top, "rev-parse", "-q", "--verify", ref).returncode == 0]
    tip = _remote_tip(top, remote, branch) if push else None
    if tip is not None:
        revs.append((f"{remote} {branch}", tip))
    for name, rev in revs:
        commit = _work_commit(top, rev)
        if commit is not None:
            raise BranchHoldsWorkError(
                f"{name}: holds commit {commit[:12]}, which is not a site commit (no {TRAILER} trailer), and publishing "
                "would overwrite it; choose another --branch, or pass --force if the branch holds only a site")
    return tip


def _build_on_remote_tip(top: Path, remote: str, branch: str, tip: str) -> None:
    """Put the remote's tip under the ref ghp-import builds the new commit on, when that ref
    does not hold it: the remote-tracking branch for a remote given by name, else the local one.

    ghp-import pushes without --force, so a commit built off the remote's history is refused.
    A publish --no-history stopped between its commit and its push (or with the local branch
    just dropped, or the push done but the remote-tracking branch not moved) left such a ref,
    and every later publish failed. Site commits the remote lacks are earlier sites that this
    one replaces; a commit that is not one is work, and is refused.
    """
    tracking, local = f"refs/remotes/{remote}/{branch}", f"refs/heads/{branch}"
    base = tracking if _git(top, "rev-parse", "-q", "--verify", tracking).returncode == 0 else local
    if _git(top, "merge-base", "--is-ancestor", tip, base).returncode == 0:
        return  # the push fast-forwards
    if base == local and _git(top, "rev-parse", "-q", "--verify", local).returncode == 0:
        work = _work_commit(top, f"{tip}..{local}")
        if work is not None:
            raise BranchHoldsWorkError(
                f"{top} {branch}: has commits that {remote} {branch} does not, and one of them ({work[:12]}) is not "
                "a site commit; push or move that work, or publish with --no-history to replace the remote's branch")
    done = _git(top, "update-ref", base, tip)
    if done.returncode != 0:
        raise PublishError(f"{top}: cannot move {base} to {remote}'s {branch} ({' '.join(done.stderr.split())}); "
                           "check the repository")


def publish(site: Path, *, remote: str, branch: str, no_history: bool, message: str | None,
            repo: Path | None = None, push: bool = True, force: bool = False, cname: str | None = None) -> str:
    """Commit ``site`` to ``branch`` of the repository and push it to ``remote``; return a summary.

    The site is checked before git is touched, and the branch before anything is committed.
    """
    import ghp_import

    site = site.resolve()
    if not (site / links.page_file(links.INDEX)).is_file() or not (site / links.record_page("")).is_dir():
        raise PublishError(f"{site}: not a built ikreport site (no index.html and e/); run 'ikreport build' first")
    manifest_sha, files = check_site(site)
    _check_hashes(site)
    _check_names(remote, branch)
    top = git_toplevel(repo or site)
    tip = None
    if not force:
        tip = check_branch(top, remote=remote, branch=branch, push=push)
    elif push and not no_history:
        tip = _remote_tip(top, remote, branch)
    if no_history:
        # ghp-import drops the local branch only when a remote-tracking ref exists, which a
        # remote given as a path or URL never has; without this the "new" branch keeps its past.
        subprocess.run(["git", "-C", str(top), "update-ref", "-d", f"refs/heads/{branch}"], capture_output=True)
    elif tip is not None:
        _build_on_remote_tip(top, remote, branch, tip)
    # The trailer is what marks this commit as a site commit for the check above, next time.
    text = f"{(message or f'Publish ikreport site ({files} files)').rstrip()}\n\n{TRAILER}: {manifest_sha}\n"
    try:
        with _in(top):
            ghp_import.ghp_import(str(site), mesg=text, remote=remote, branch=branch, push=push,
                                  no_history=no_history, nojekyll=True, force=no_history, cname=cname)
    except ghp_import.GhpError as exc:
        raise PublishError(f"{site}: publishing to {remote} {branch} failed: {' '.join(str(exc).split())}") from exc
    except subprocess.CalledProcessError as exc:
        raise PublishError(f"{site}: git failed while publishing to {remote} {branch} (exit {exc.returncode}); "
                           "check the remote and your access to it") from exc
    return f"{site}: {files} files committed to {branch}" + (f" and pushed to {remote}" if push else "")


# Option values never reach a shell line: they are quoted YAML strings in a step's env, and
# the shell sees only "$VARIABLE". Permissions are per job, pages/id-token on deploy only.
# Actions are pinned to full commit SHAs (a tag can be moved to other code); the comment
# names the release, for whoever updates them.
WORKFLOW = """\
# Written by `ikreport init-pages` (ikreport {version}). Builds the evidence site on every
# push to {main_text} and deploys it to GitHub Pages (Settings > Pages > Source: GitHub Actions).
name: ikreport pages

on:
  push:
    branches: [{main}]
  workflow_dispatch:

# No rights by default: each job asks for what it needs, and only deploy may write to Pages.
permissions: {{}}

concurrency:
  group: pages
  cancel-in-progress: false

jobs:
  build:
    runs-on: ubuntu-latest
    permissions:
      contents: read
    steps:
      # Actions are pinned to full commit SHAs (a tag can be moved); the comment names the release.
      - uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262  # v4.4.0
        with:
          persist-credentials: false
      - uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065  # v5.6.0
        with:
          python-version: "3.12"
      # Option values reach the shell only as quoted environment variables, never in the line.
      - name: Install ikreport
        env:
          IKREPORT_INSTALL: {install}
        run: python -m pip install "$IKREPORT_INSTALL"
      - name: Build the site (fails on any citation that does not check out)
        env:
          IKREPORT_ARCHIVE: {archive}
        run: ikreport build "$IKREPORT_ARCHIVE" -o _site --strict
      - uses: actions/upload-pages-artifact@56afc609e74202658d3ffba0e8f6dda462b719fa  # v3.0.1
        with:
          path: _site

  deploy:
    needs: build
    runs-on: ubuntu-latest
    permissions:
      pages: write
      id-token: write
    environment:
      name: github-pages
      url: ${{{{ steps.deployment.outputs.page_url }}}}
    steps:
      - id: deployment
        uses: actions/deploy-pages@d6db90164ac5ed86f2b6aed7e0febac5b3c0c03e  # v4.0.5
"""

WORKFLOW_PATH = Path(".github/workflows/ikreport-pages.yml")


def _workflow_value(option: str, value: str) -> str:
    """``value`` as a double-quoted YAML string, refused if no quoting could make it safe."""
    if not value or not value.isprintable():
        # a line break (or any control character) could end the YAML line and start a new key
        raise WorkflowValueError(f"{option} {value!r}: must be one line of printable text")
    if "${{" in value:
        raise WorkflowValueError(f"{option} {value!r}: holds '${{{{', which GitHub would evaluate as an expression; "
                                 "remove it")
    # A JSON string is a YAML double-quoted scalar, but not with ensure_ascii: JSON writes a
    # character beyond U+FFFF as two \uXXXX surrogate halves, which YAML reads as two lone
    # surrogates. Written as itself, every character isprintable() lets through is one YAML
    # reads back exactly (YAML's non-printable set is all control, surrogate or unassigned).
    return json.dumps(value, ensure_ascii=False)


def init_pages(repo: Path, *, archive: str, install: str | None, main: str, force: bool,
               wheel: Path | None = None) -> tuple[Path, str | None]:
    """Write the Pages workflow; return its path and the wheel it installs (its path in the
    repository), or None when it installs ``install`` instead. With no ``install`` the wheel of
    the running ikreport (``wheel``, or one built now) is copied into the repository. ``repo``
    must be an existing git repository's top folder: nothing is made at a mistyped path."""
    path = repo / WORKFLOW_PATH
    values = {"archive": _workflow_value("--archive", archive), "main": _workflow_value("--main", main)}
    if install is not None:
        values["install"] = _workflow_value("--install", install)
    if not (repo / ".git").exists():  # a folder or, in a worktree, a file; the workflow lives at the top
        raise PublishError(f"{repo}: not a git repository's top folder (no .git); run 'git init' there, or give "
                           "--repo the repository's folder")
    from ikreport.commands.own_wheel import WHEEL_DIR, place_wheel
    from ikreport.commands.repo_files import open_folder, refuse_links, write_file

    # A cloned repository may hold links to anywhere; all are refused before anything is written.
    refuse_links(repo, WORKFLOW_PATH)
    if install is None:
        refuse_links(repo, WHEEL_DIR)
    if os.path.lexists(path) and not force:
        raise PublishError(f"{path}: already exists; pass --force to replace it")
    placed = None
    if install is None:  # checked and refused above before anything is written
        placed = place_wheel(repo, wheel)
        values["install"] = _workflow_value("--wheel", f"./{placed}")
    text = WORKFLOW.format(version=__version__, main_text=main, **values)
    try:
        with open_folder(repo, WORKFLOW_PATH.parent) as folder:
            write_file(folder, WORKFLOW_PATH.name, text.encode("utf-8"))
    except OSError as exc:
        raise PublishError(f"{path}: cannot write ({exc.strerror})") from exc
    return path, placed
