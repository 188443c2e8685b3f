"""Where build writes and what publish publishes when not told (issue 27 item 16): in a clone
that holds the user's own archive beside the sample, neither default touches the sample's
committed site/. Builds and a publish into a local bare repository (no network)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import NCU, ROOT, git

RAW = NCU / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def clone(tmp_path, run, git_identity, monkeypatch):
    """A clone after the walkthrough: the sample archive and its committed site/, and the
    user's evidence/ (one record), as a git repository on main with a bare remote."""
    top = tmp_path / "clone"
    top.mkdir()
    shutil.copytree(ROOT / "sample_evidence", top / "sample_evidence")
    shutil.copytree(ROOT / "site", top / "site")
    git("init", "-q", "-b", "main", cwd=top)
    git("add", "-A", cwd=top)
    git("commit", "-q", "-m", "Sample", cwd=top)
    collected = run("collect", "ncu", "--from-csv", RAW, "--archive", top / "evidence", "--title", "Decode step")
    assert collected.exit_code == 0, collected.output
    git("init", "-q", "--bare", str(tmp_path / "pages.git"), cwd=tmp_path)
    monkeypatch.chdir(top)
    return top


def test_a_plain_build_in_a_clone_writes_beside_the_user_s_archive_not_the_sample_site(clone, tmp_path, run,
                                                                                       monkeypatch):
    sample_site = tree(clone / "site")
    built = run("build", "--cache-dir", tmp_path / "cache")
    assert built.exit_code == 0, built.output
    assert built.stdout == f"{clone / 'evidence-site'}: 3 pages (1 record, 5 claims)\n"
    assert (clone / "evidence-site" / "index.html").is_file()
    assert tree(clone / "site") == sample_site
    # from a folder below, the site still lands beside the archive, not in the working directory
    (clone / "notes").mkdir()
    monkeypatch.chdir(clone / "notes")
    below = run("build", "--cache-dir", tmp_path / "cache")
    assert below.exit_code == 0 and below.stdout.startswith(f"{clone / 'evidence-site'}: ")
    assert not (clone / "notes" / "site").exists() and tree(clone / "site") == sample_site


def test_publish_without_a_site_names_the_one_it_would_publish_and_commits_nothing(clone, tmp_path, run):
    bare = tmp_path / "pages.git"
    before = run("publish", "--remote", bare)
    assert (before.exit_code, before.stderr) == (1, (
        f"Error: no SITE given, and publish does not guess; {clone / 'evidence'} has no site yet: run "
        f"'ikreport build' (it writes {clone / 'evidence-site'}), then 'ikreport publish {clone / 'evidence-site'}'\n"))
    assert run("build", "--cache-dir", tmp_path / "cache").exit_code == 0
    after = run("publish", "--remote", bare)
    assert (after.exit_code, after.stderr) == (1, (
        f"Error: no SITE given, and publish does not guess; the site of {clone / 'evidence'} is "
        f"{clone / 'evidence-site'}: run 'ikreport publish {clone / 'evidence-site'}'\n"))
    assert git("for-each-ref", "refs/heads", cwd=bare) == "" and git("branch", "--list", "gh-pages", cwd=clone) == ""
    named = run("publish", clone / "evidence-site", "--remote", bare)
    assert named.exit_code == 0, named.output
    assert git("show", "gh-pages:index.html", cwd=bare) == (clone / "evidence-site" / "index.html").read_text("utf-8")


def test_publish_without_a_site_or_an_archive_asks_for_the_folder(tmp_path, run, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(ROOT / "site", tmp_path / "site")
    result = run("publish", "--no-push")
    assert (result.exit_code, result.stderr) == (
        1, "Error: no SITE given, and publish does not guess; give the built site folder: 'ikreport publish FOLDER'\n")


def test_the_default_site_of_an_archive_is_beside_it_and_the_sample_s_is_site(tmp_path, monkeypatch):
    from ikreport.errors import BuildError
    from ikreport.store.discover import default_site

    monkeypatch.chdir(tmp_path)
    assert default_site(Path("sample_evidence")) == Path("site")
    assert default_site(tmp_path / "sample_evidence") == tmp_path / "site"
    assert default_site(Path("evidence")) == Path("evidence-site")
    assert default_site(Path("runs/evidence/")) == Path("runs/evidence-site")
    (tmp_path / "team").mkdir()
    monkeypatch.chdir(tmp_path / "team")
    assert default_site(Path(".")) == tmp_path / "team-site"
    with pytest.raises(BuildError, match=r"^s3://bucket/gpu: an archive at a URL has no folder beside it"):
        default_site("s3://bucket/gpu")


def test_a_plain_build_with_no_archive_of_the_user_s_builds_the_sample_into_site(tmp_path, run, monkeypatch):
    shutil.copytree(ROOT / "sample_evidence", tmp_path / "sample_evidence")
    monkeypatch.chdir(tmp_path)
    built = run("build", "--cache-dir", tmp_path / "cache")
    assert built.exit_code == 0, built.output
    assert built.stdout.startswith("site: ")
    assert (tmp_path / "site" / "index.html").read_bytes() == (ROOT / "site" / "index.html").read_bytes()
