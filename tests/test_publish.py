"""Publishing: ghp-import into a real local bare git repository (no network), the Pages
workflow, and 'verify --site' on a folder and over HTTP (127.0.0.1)."""

from __future__ import annotations

import os
import shutil

import pytest
import yaml

from conftest import ROOT, git
from siteserver import serve

SITE = ROOT / "site"


@pytest.fixture
def repo(tmp_path, git_identity):
    work = tmp_path / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    git("config", "user.name", "t", cwd=work)
    git("config", "user.email", "t@example.invalid", cwd=work)
    shutil.copytree(SITE, work / "site")
    bare = tmp_path / "pages.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    return work, bare


def test_publish_to_a_bare_repository(repo, run):
    work, bare = repo
    result = run("publish", work / "site", "--remote", bare, "--branch", "gh-pages")
    assert result.exit_code == 0, result.output
    files = set(git("ls-tree", "-r", "--name-only", "gh-pages", cwd=bare).split())
    expected = {str(p.relative_to(SITE)) for p in SITE.rglob("*") if p.is_file()}
    assert expected <= files and ".nojekyll" in files
    index = git("show", "gh-pages:index.html", cwd=bare)
    assert index == (SITE / "index.html").read_text("utf-8")
    run("publish", work / "site", "--remote", bare, "-m", "second")
    assert len(git("log", "--format=%s", "gh-pages", cwd=bare).split("\n")) >= 2
    run("publish", work / "site", "--remote", bare, "--no-history")
    assert git("rev-list", "--count", "gh-pages", cwd=bare).strip() == "1"


def test_publish_refuses_what_is_not_a_site_or_not_in_a_repo(tmp_path, repo, run):
    work, bare = repo
    result = run("publish", work, "--remote", bare)
    assert result.exit_code == 1 and "not a built ikreport site" in result.stderr
    lone = tmp_path / "lone"
    shutil.copytree(SITE, lone)
    result = run("publish", lone, "--remote", bare)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {lone}: not inside a git repository; run 'git init' there, or give --repo DIR\n"


def test_init_pages_writes_the_workflow(tmp_path, run):
    git("init", "-q", cwd=tmp_path)
    result = run("init-pages", "--repo", tmp_path, "--archive", "evidence", "--install", "ikreport==0.1.0")
    assert result.exit_code == 0
    workflow = yaml.safe_load((tmp_path / ".github" / "workflows" / "ikreport-pages.yml").read_text())
    assert workflow["permissions"] == {}
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    assert build["permissions"] == {"contents": "read"}
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    steps = [s.get("uses") or s.get("run") for s in build["steps"]]
    assert 'python -m pip install "$IKREPORT_INSTALL"' in steps
    assert 'ikreport build "$IKREPORT_ARCHIVE" -o _site --strict' in steps
    env = {k: v for s in build["steps"] for k, v in s.get("env", {}).items()}
    assert env == {"IKREPORT_INSTALL": "ikreport==0.1.0", "IKREPORT_ARCHIVE": "evidence"}
    assert "actions/upload-pages-artifact@56afc609e74202658d3ffba0e8f6dda462b719fa" in steps
    assert deploy["environment"]["name"] == "github-pages" and deploy["needs"] == "build"
    assert deploy["steps"][0]["uses"] == "actions/deploy-pages@d6db90164ac5ed86f2b6aed7e0febac5b3c0c03e"
    again = run("init-pages", "--repo", tmp_path)
    assert again.exit_code == 1 and "already exists; pass --force" in again.stderr


def test_verify_site_folder_and_url_catch_a_tampered_record(tmp_path, run):
    copy = tmp_path / "copy"
    shutil.copytree(SITE, copy)
    ok = run("verify", "--site", copy)
    assert ok.exit_code == 0 and "records verified against manifest.json" in ok.stdout
    victim = next((copy / "e").glob("*.json"))
    os.chmod(victim, 0o644)
    victim.write_bytes(victim.read_bytes().replace(b'"kind"', b'"kind" '))
    bad = run("verify", "--site", copy)
    assert bad.exit_code == 1
    assert bad.stdout == f"{copy}/e/{victim.name}: does not hash to its name (tampered or damaged); compare with the archive\n"
    with serve(copy, tmp_path) as url:
        remote = run("verify", "--site", url)
    assert remote.exit_code == 1 and f"{url}e/{victim.name}: does not hash to its name" in remote.stdout
