"""Issue 12, the writer's part: `build -o` replaces only a site a build wrote, puts it in
place with no moment without a site and cleans up after a killed build; the previous site and
the cache are not trusted; a killed builder leaves no worker processes behind. Issue 18 item 3:
a rebuild updates the site in place, touching only what changed, and a failed build changes
nothing while a killed one leaves a site whose links resolve."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import itertools
import json
import os
import posixpath
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import jinja2
from markdown_it import MarkdownIt
import pytest

from conftest import NCU, ROOT
from ikreport.store import cache as cache_module
from ikreport.store.archive import Archive
from ikreport.collect.context import Context
from ikreport.collect.ncu_import import import_csv
from ikreport.errors import NotASiteError
from ikreport.site import writer
from ikreport.site.build import build_site
from ikreport.site.page_cache import PageCache
from ikreport.site.write_order import links_in, rename_order

SAMPLE = ROOT / "sample_evidence"
COMMITTED = ROOT / "site"


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by relative path; a symbolic link reads as its target's name."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_symlink():
            out[str(p.relative_to(root))] = b"-> " + os.fsencode(os.readlink(p))
        elif p.is_file():
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


@pytest.fixture(scope="module")
def clean() -> dict[str, bytes]:
    return tree(COMMITTED)


def build(out: Path, cache: Path, **kw) -> None:
    build_site(Archive.open(SAMPLE), out, cache_dir=cache, **kw)


# Item 3: `build -o DIR` never deletes what it did not write.

def test_a_folder_that_only_looks_like_a_site_is_not_replaced(tmp_path):
    project = tmp_path / "project"
    (project / "e").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "src").mkdir()
    (project / "index.html").write_text("<p>my page</p>")
    (project / "src" / "main.c").write_text("int main;")
    before = tree(project)
    with pytest.raises(NotASiteError, match=r"project: exists and is not an ikreport site \(no manifest.json\)"):
        build(project, tmp_path / "c")
    assert tree(project) == before


@pytest.mark.parametrize("stray", [".git/HEAD", "src/main.c", "notes.txt", "e/notes.txt"])
def test_a_site_holding_files_no_build_writes_is_not_replaced(tmp_path, stray):
    out = tmp_path / "site"
    build(out, tmp_path / "c")
    (out / stray).parent.mkdir(exist_ok=True)
    (out / stray).write_text("keep me")
    first = stray.split("/")[0] if stray.startswith((".git", "src")) else stray
    with pytest.raises(NotASiteError, match=f"{first}.* was not written by a build"):
        build(out, tmp_path / "c")
    assert (out / stray).read_text() == "keep me"


def test_a_site_or_an_empty_folder_is_replaced(tmp_path, clean):
    out = tmp_path / "site"
    out.mkdir()
    build(out, tmp_path / "c")
    build(out, tmp_path / "c")
    shutil.copytree(out, tmp_path / "copy")  # a site copied elsewhere is still a build's
    build(tmp_path / "copy", tmp_path / "c2")
    assert tree(out) == tree(tmp_path / "copy") == clean


@pytest.mark.parametrize("cache", ["c", "fresh"])  # updated in place; swapped in whole (nothing known of its files)
def test_there_is_never_a_moment_with_no_site(tmp_path, monkeypatch, clean, cache):
    out = tmp_path / "site"
    build(out, tmp_path / "c")
    gaps = []
    for name in ("rename", "replace"):
        real = getattr(os, name)

        def moved(src, dst, *a, _real=real, **kw):
            _real(src, dst, *a, **kw)
            gaps.append(not (out / "index.html").is_file())  # the moment right after each rename

        monkeypatch.setattr(os, name, moved)
    build(out, tmp_path / cache, templates=_changed_templates(tmp_path))
    assert gaps and not any(gaps)
    assert (out / "index.html").read_bytes() != clean["index.html"]


def test_without_an_atomic_exchange_the_two_renames_still_leave_a_whole_site(tmp_path, monkeypatch, clean):
    monkeypatch.setattr(writer, "_exchange", lambda a, b: False)  # another platform or file system
    out = tmp_path / "site"
    build(out, tmp_path / "c")
    build(out, tmp_path / "c2")  # a cache that knows nothing of the site: written whole and swapped
    assert tree(out) == clean
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []


def test_leftovers_of_a_killed_build_are_removed_and_nothing_else(tmp_path, clean):
    out = tmp_path / "site"
    build(out, tmp_path / "c")
    half = tmp_path / ".site.tmp-0badcafe"  # a build killed while writing
    (half / "e").mkdir(parents=True)
    shutil.copy(out / "index.html", half / "index.html")
    shutil.copytree(out, tmp_path / ".site.old-deadbeef")  # killed after the swap
    mine = tmp_path / ".site.tmp-12345678"  # named like a leftover, but holds the user's work
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep me")
    build(out, tmp_path / "c")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")) == [".site.tmp-12345678"]
    assert (mine / "thesis.tex").read_text() == "keep me"
    assert tree(out) == clean


def test_builds_into_one_folder_take_turns(tmp_path, clean):
    out = tmp_path / "site"
    build(out, tmp_path / "c")
    # hold the lock a build takes; a second build must wait for it before touching the site
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    done = threading.Event()
    errors: list[BaseException] = []

    def second() -> None:
        try:
            build(out, tmp_path / "c", templates=_changed_templates(tmp_path))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        done.set()

    thread = threading.Thread(target=second)
    thread.start()
    try:
        assert not done.wait(3)
        assert tree(out) == clean
    finally:
        os.close(fd)
    thread.join(60)
    assert done.is_set() and errors == []
    assert (out / "index.html").read_bytes() != clean["index.html"]


def _changed_templates(tmp_path: Path) -> Path:
    tpl = tmp_path / "tpl"
    tpl.mkdir(exist_ok=True)
    shipped = (ROOT / "templates" / "index.html").read_text("utf-8")
    (tpl / "index.html").write_text(shipped.replace("<h1>Evidence</h1>", "<h1>Evidence, changed</h1>", 1))
    return tpl


# Item 10 (and the writer's half of item 2): the previous site is not trusted.

def test_an_edit_to_the_previous_site_does_not_survive_a_rebuild(tmp_path, clean):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    edited = sorted(p for p in clean if p.startswith("e/") and p.endswith(".html"))[0]
    blob = sorted(p for p in clean if p.startswith("b/"))[0]
    for name in (edited, blob, edited.replace(".html", ".json")):
        with open(out / name, "r+b") as f:  # in place, same size: only the hash can tell
            f.write(b"X")
    build(out, cache)
    assert tree(out) == clean


def _stats(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.lstat().st_ino, p.lstat().st_ctime_ns) for p in root.rglob("*") if p.is_file()}


def test_unchanged_files_of_the_previous_site_are_left_untouched(tmp_path, clean, monkeypatch):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    before = _stats(out)
    time.sleep(2 * writer.TICK_NS / 1e9)  # a warm build of the sample can start within a tick of the last one's writes
    build(out, cache)  # hashes only the files written within the file system clock's last tick
    hashed = []
    real = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest", lambda f, name: hashed.append(f) or real(f, name))
    build(out, cache)
    assert tree(out) == clean
    assert _stats(out) == before  # not one file replaced, linked or even chmod'ed
    assert hashed == []  # inode and ctime unchanged since a build noted them: no need to re-read


def test_a_rebuild_that_changes_one_file_touches_no_other(tmp_path, clean):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    before = _stats(out)
    build(out, cache, templates=_changed_templates(tmp_path))
    after = _stats(out)
    assert sorted(p for p in after if after[p] != before[p]) == ["index.html"]
    assert sorted(after) == sorted(before)
    assert (out / "index.html").read_bytes() != clean["index.html"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []


def test_a_symbolic_link_in_the_previous_site_is_never_carried_forward(tmp_path, clean):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    page = sorted(p for p in clean if p.startswith("e/") and p.endswith(".html"))[0]
    secret = tmp_path / "secret"
    secret.write_bytes(clean[page])  # even holding the very bytes the page should have
    (out / page).unlink()
    (out / page).symlink_to(secret)
    with pytest.raises(NotASiteError, match=f"{page} is a symbolic link"):
        build(out, cache)
    assert (out / page).is_symlink() and secret.read_bytes() == clean[page]
    # and the writer itself never keeps one, whatever the state says
    link = os.lstat(out / page)
    for inode, ctime in ((0, 0), (link.st_ino, link.st_ctime_ns)):
        before = ["fingerprint", len(clean[page]), hashlib.sha256(clean[page]).hexdigest(), inode, ctime]
        assert writer._as_left(str(out / page), link, before, link.st_mode & 0o7777) is None


def test_a_damaged_site_state_is_ignored(tmp_path, clean):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    for state in (cache / "sites").iterdir():
        cache_module.keep(state, '{"index.html": 3, "e": ["x"], "manifest.json": [1, 2, 3]}')
    build(out, cache)
    for body in ("[1]", "[1, 2"):
        for state in (cache / "sites").iterdir():
            cache_module.keep(state, body)
        build(out, cache)
    assert tree(out) == clean



# Issue 18 item 3: a rebuild updates the site in place. A failed build changes nothing; a
# killed one leaves a site whose links resolve, and the next build finishes it.

@pytest.fixture(scope="module")
def grown(tmp_path_factory) -> tuple[Path, dict[str, bytes], dict[bool, int]]:
    """A copy of the sample archive with two more B200 profiles of one workload (new record
    pages, charts and a history page; the index, search index and manifest change), the clean
    site of it, and how many files an in-place build renames going from the sample's site to
    it (True) and back (False)."""
    root = tmp_path_factory.mktemp("grown")
    shutil.copytree(SAMPLE, root / "arch")
    arch = Archive.open(root / "arch")
    for n in range(2):
        import_csv(arch, [NCU / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"],
                   Context(title=f"decode {n}", workload="decode"))
    build_site(arch, root / "site", cache_dir=root / "c")
    renames = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        real = os.replace
        for grow, goal in ((True, root / "arch"), (False, SAMPLE)):
            build_site(Archive.open(SAMPLE if grow else root / "arch"), root / "counted", cache_dir=root / "c")
            done: list[str] = []
            monkeypatch.setattr(os, "replace", lambda src, dst, *a, **kw: done.append(dst) or real(src, dst, *a, **kw))
            build_site(Archive.open(goal), root / "counted", cache_dir=root / "c")
            monkeypatch.undo()
            renames[grow] = sum(str(d).startswith(f"{root / 'counted'}/") for d in done)
    return root / "arch", tree(root / "site"), renames


class _Killed(BaseException):
    """Stands for SIGKILL: nothing the writer catches."""


def _broken_links(site: Path) -> list[str]:
    """Every relative link of every HTML page and Markdown twin, every file the manifest lists,
    and every piece of the search index its meta.json counts, that is not a file of ``site``;
    and a search index whose pieces hold another number of documents than its meta says."""
    broken = []
    pages = [(page, _Links.of(page.read_text("utf-8"))) for page in sorted(site.rglob("*.html"))]
    pages += [(page, _md_links(page.read_text("utf-8"))) for page in sorted(site.rglob("*.md"))]
    for page, links in pages:
        for link in links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
                continue
            if not (page.parent / unquote(parts.path)).is_file():
                broken.append(f"{page.relative_to(site)} -> {link}")
    manifest = json.loads((site / "manifest.json").read_bytes())
    listed = manifest["files"] + [b["path"] for b in manifest["blobs"]]
    broken += [f"manifest -> {path}" for path in listed if not (site / path).is_file()]
    meta = json.loads((site / "search" / "meta.json").read_bytes())
    pieces = [f"docs-{n}.json" for n in range(-(-meta["docs"] // meta["per_chunk"]))]
    pieces += [f"terms-{n}.json" for n in range(meta["shards"])]
    missing = [name for name in pieces if not (site / "search" / meta["dir"] / name).is_file()]
    broken += [f"search/meta.json -> {meta['dir']}/{name}" for name in missing]
    if not missing:
        docs = sum(len(json.loads((site / "search" / meta["dir"] / name).read_bytes())) for name in pieces
                   if name.startswith("docs-"))
        broken += [f"search/meta.json counts {meta['docs']} documents, its pieces hold {docs}"] if docs != meta["docs"] else []
    return broken


def _md_links(text: str) -> list[str]:
    """The targets of the links and images of a Markdown page, as a CommonMark parser reads them."""
    found = []
    for block in MarkdownIt("commonmark").parse(text):
        for token in block.children or []:
            if token.type in ("link_open", "image"):
                found.append(str(token.attrGet("href") or token.attrGet("src")))
    return found


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    @classmethod
    def of(cls, html: str) -> list[str]:
        finder = cls()
        finder.feed(html)
        return finder.links

    def handle_starttag(self, tag, attrs):
        self.links += [value for name, value in attrs if name in ("href", "src") and value]


# growing, 16 renames (charts, record files, a history page, the search index, index, manifest);
# shrinking, 6 (the search index, index, manifest), then 10 files removed: killed after a share of them
@pytest.mark.parametrize("grow, share", [(True, f) for f in (0, 0.1, 0.3, 0.5, 0.7, 0.9, 1)] + [(False, f) for f in (0.3, 1)])
def test_a_build_killed_between_renames_leaves_links_that_resolve(tmp_path, monkeypatch, clean, grown, grow, share):
    arch, clean_grown, renames = grown
    assert renames[grow] >= (12 if grow else 4)  # else the sample no longer makes the case
    kill_after = min(int(share * renames[grow]), renames[grow] - 1)  # 1: all but the manifest
    start, goal = (SAMPLE, arch) if grow else (arch, SAMPLE)
    out, cache = tmp_path / "site", tmp_path / "c"
    build_site(Archive.open(start), out, cache_dir=cache)
    assert _broken_links(out) == []
    done = []
    real = os.replace

    def replace(src, dst, *a, **kw):
        if str(dst).startswith(f"{out}/"):
            if len(done) == kill_after:
                raise _Killed()
            done.append(dst)
        real(src, dst, *a, **kw)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(_Killed):
        build_site(Archive.open(goal), out, cache_dir=cache)
    assert len(done) == kill_after
    assert _broken_links(out) == []
    monkeypatch.undo()
    build_site(Archive.open(goal), out, cache_dir=cache)
    assert tree(out) == (clean_grown if grow else clean)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []


def test_files_the_new_build_drops_are_removed_with_their_folders(tmp_path, clean, grown):
    arch, clean_grown, _ = grown
    out, cache = tmp_path / "site", tmp_path / "c"
    build_site(Archive.open(arch), out, cache_dir=cache)
    assert tree(out) == clean_grown and (out / "h").is_dir()
    build(out, cache)
    assert tree(out) == clean
    assert not (out / "h").exists()  # the history page's folder went with it


def test_a_build_that_fails_while_producing_bytes_leaves_the_site_as_it_was(tmp_path, monkeypatch, grown):
    arch, _, _ = grown
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    before, stats = tree(out), _stats(out)
    new = sorted(path for path in grown[1] if path.startswith("e/") and path.endswith(".json") and path not in before)
    real = writer.SiteFiles.add_lazy

    def add_lazy(self, path, load, *args, **kwargs):
        if path == new[-1]:  # the last new record: pages, charts and a record come before it
            load = lambda: (_ for _ in ()).throw(RuntimeError("disk gone"))  # noqa: E731
        real(self, path, load, *args, **kwargs)

    monkeypatch.setattr(writer.SiteFiles, "add_lazy", add_lazy)
    with pytest.raises(RuntimeError, match="disk gone"):
        build_site(Archive.open(arch), out, cache_dir=cache)
    assert tree(out) == before
    assert _stats(out) == stats  # not one file renamed, replaced or touched
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []


@pytest.mark.parametrize("damage", ["edit", "truncate", "chmod", "symlink"])
def test_a_damaged_file_of_the_site_is_written_again(tmp_path, monkeypatch, clean, damage):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    build(out, cache)  # now every file carries a stamp
    page = sorted(p for p in clean if p.startswith("e/") and p.endswith(".html"))[0]
    secret = tmp_path / "secret"
    secret.write_bytes(b"not the page")

    def spoil() -> None:
        path = out / page
        if damage == "edit":
            with open(path, "r+b") as f:  # in place, same size: only the ctime and the hash tell
                f.write(b"X")
        elif damage == "truncate":
            os.truncate(path, 10)
        elif damage == "chmod":
            path.chmod(0o600)  # the bytes are intact, but the web server may not read them
        else:
            path.unlink()
            path.symlink_to(secret)

    if damage == "symlink":  # after the check that refuses a site holding links, as a race would
        real = writer.check_replaceable
        monkeypatch.setattr(writer, "check_replaceable", lambda *a: (real(*a), spoil())[0])
    else:
        spoil()
    build(out, cache)
    assert tree(out) == clean
    assert os.lstat(out / page).st_mode == os.lstat(out / "index.html").st_mode
    assert secret.read_bytes() == b"not the page"



def _site_files(paths: dict[str, bytes]) -> writer.SiteFiles:
    files = writer.SiteFiles()
    for path, data in sorted(paths.items()):
        files.add(path, data)
    files.add("manifest.json", json.dumps({"schema": "ikreport.manifest/1", "files": sorted(paths)}))
    return files


def test_a_file_where_the_new_build_has_a_folder_and_the_other_way_round(tmp_path):
    out = tmp_path / "site"  # say, the layout of another ikreport release: either is a build's path
    built = re.compile(r"index\.html|manifest\.json|l(?:/profiles-1\.html)?|search(?:/docs-0\.json)?")
    old = {"index.html": b"1", "l": b"a file", "search/docs-0.json": b"[]"}
    state = writer.write_site(_site_files(old), out, None, built)
    new = {"index.html": b"2", "l/profiles-1.html": b"page", "search": b"a file now"}
    writer.write_site(_site_files(new), out, state, built)
    assert {k: v for k, v in tree(out).items() if k != "manifest.json"} == new


def test_new_files_are_renamed_after_the_new_files_they_link_to():
    html = b'<a href="../e/b.html#x">b</a><img src="../charts/c.svg"><a href="https://x.org/y"><a href="#top">'
    assert links_in("e/a.html", html) == {"e/b.html", "charts/c.svg"}
    staged = {"index.html": {"e/a.html"}, "e/a.html": {"e/b.html", "charts/c.svg"}, "e/b.html": {"e/a.html"},
              "charts/c.svg": set(), "search/docs-0.json": set(), "manifest.json": set()}
    # e/b.html is there already (an older version answers until the new one comes): no wait for it
    assert rename_order(staged, {"index.html", "e/b.html"}) == \
        ["charts/c.svg", "e/a.html", "e/b.html", "search/docs-0.json", "index.html", "manifest.json"]
    # two new pages naming each other: no order keeps both links whole; they go one right
    # after the other, and what links to them still waits
    assert rename_order(staged, set()) == \
        ["charts/c.svg", "search/docs-0.json", "e/a.html", "e/b.html", "index.html", "manifest.json"]
    # and a page already in the site that links to two such new pages waits for both, though it
    # comes first by name (a supersession of e/0.html by a new record naming another new one)
    staged = {"e/0.html": {"e/a.html", "e/b.html"}, "e/a.html": {"e/b.html"}, "e/b.html": {"e/a.html"}}
    assert rename_order(staged, {"e/0.html"}) == ["e/a.html", "e/b.html", "e/0.html"]
    # the search index's meta.json names pages through its documents: it waits for every new
    # page and piece, even two new pages that can only go in one after the other
    staged = {"e/a.html": {"e/b.html"}, "e/b.html": {"e/a.html"}, "search/f00d/docs-0.json": set(),
              "search/meta.json": set(), "index.html": {"e/a.html"}}
    assert rename_order(staged, {"index.html", "search/meta.json"}) == \
        ["search/f00d/docs-0.json", "e/a.html", "e/b.html", "index.html", "search/meta.json"]
    # the Markdown twins' links, and their chart images, are waited for too
    md = b"[\\[b\\]](../e/b.md) ![chart](../charts/c.svg) [out](https://x.org/y) [top](#top)"
    assert links_in("e/a.md", md) == {"e/b.md", "charts/c.svg"}


def test_a_top_level_page_s_links_are_read_as_the_paths_they_reach():
    """links_in takes a top-level page's plain links as they are when they hold no empty, "."
    or ".." part: every spelling of up to six characters from a, b, "." and "/" reaches the
    path posixpath.normpath gives it (or none, out of the site), with an href and with a src."""
    for n in range(1, 7):
        for chars in itertools.product("ab./", repeat=n):
            raw = "".join(chars)
            target = posixpath.normpath(raw)
            want = set() if raw.startswith("/") or target.startswith("../") or target in (".", "..") else {target}
            for attribute in ("href", "src"):
                assert links_in("index.html", f'<a {attribute}="{raw}">'.encode()) == want, raw


# Item 10: the cache is not trusted either; a cache fault is never an error.

def _each_cache_file(cache: Path):
    return sorted(p for p in cache.rglob("*") if p.is_file())


@pytest.mark.parametrize("damage", ["delete-charts", "delete-half", "truncate", "garbage", "folders"])
def test_a_missing_or_damaged_cache_entry_is_a_miss(tmp_path, damage, clean):
    cache = tmp_path / "c"
    build(tmp_path / "first", cache)
    for n, path in enumerate(_each_cache_file(cache)):
        if damage == "delete-charts" and path.parent.name == "charts":
            path.unlink()
        elif damage == "delete-half" and n % 2:
            path.unlink()
        elif damage == "truncate":
            path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        elif damage == "garbage":
            path.write_bytes(b"\xff\x00garbage" * 3)
        elif damage == "folders" and n % 2:
            path.unlink()
            path.mkdir()
    build(tmp_path / "site", cache)
    assert tree(tmp_path / "site") == clean
    build(tmp_path / "site", cache)  # and the build after it
    assert tree(tmp_path / "site") == clean


def test_a_cache_entry_that_goes_missing_during_the_build_is_rendered_again(tmp_path, monkeypatch, clean):
    cache = tmp_path / "c"
    build(tmp_path / "first", cache)
    real = PageCache.get

    def get(self, key):
        meta = real(self, key)
        for ext in ("html", "md"):
            (self.root / f"{key}.{ext}").unlink(missing_ok=True)  # gone after the look-up
        return meta

    monkeypatch.setattr(PageCache, "get", get)
    for svg in (cache / "charts").glob("*.svg"):
        svg.write_bytes(svg.read_bytes()[:-10])  # damaged, same names
    build(tmp_path / "site", cache)
    assert tree(tmp_path / "site") == clean


def test_a_full_disk_or_an_unwritable_cache_only_costs_time(tmp_path, monkeypatch, clean):
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def no_space(*args, **kwargs):
        raise full

    monkeypatch.setattr(cache_module, "open", no_space, raising=False)  # every cache file
    monkeypatch.setattr(jinja2.bccache.Bucket, "write_bytecode", no_space)  # jinja2's own
    build(tmp_path / "site", tmp_path / "c")
    assert tree(tmp_path / "site") == clean
    assert [p for p in (tmp_path / "c").rglob("*") if p.is_file()] == []  # no partial temp files
    monkeypatch.undo()
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    build(tmp_path / "site2", not_a_folder)
    assert tree(tmp_path / "site2") == clean


# Item 12: killing a build's main process leaves no worker processes alive.

def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                out.setdefault(int(fields[1]), []).append(int(name))
    return out


def _descendants(pid: int) -> set[int]:
    children, found, todo = _children(), set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _build_with_workers(tmp_path: Path) -> tuple[subprocess.Popen[str], set[int]]:
    """Start `ikreport build` on an archive big enough for worker processes; returns the
    process and its descendants once the forkserver's workers run."""
    shutil.copytree(SAMPLE, tmp_path / "arch")
    arch = Archive.open(tmp_path / "arch")
    for n in range(6):  # enough record pages for a pool of workers (record_pages.SERIAL_BELOW)
        import_csv(arch, [NCU / "ncu_details_nsightful_copy_blocked_base_units.csv"], Context(title=f"copy {n}"))
    script = textwrap.dedent(f"""
        import os, sys
        os.cpu_count = lambda: 2  # two workers on any machine
        sys.argv = ["ikreport", "build", {str(arch.root)!r}, "-o", {str(tmp_path / 'site')!r},
                    "--cache-dir", {str(tmp_path / 'c')!r}]
        from ikreport.cli.main import main
        main()
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    builder = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and builder.poll() is None:
        found = _descendants(builder.pid)
        grandchildren = found - set(_children().get(builder.pid, []))
        if len(grandchildren) >= 2:  # the forkserver's workers are running
            return builder, found
        time.sleep(0.02)
    builder.kill()
    builder.communicate()
    pytest.fail("the build never started its worker processes")


def _running() -> set[int]:
    return {p for kids in _children().values() for p in kids}


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_killing_the_builder_leaves_no_worker_alive(tmp_path):
    builder, workers = _build_with_workers(tmp_path)
    builder.send_signal(signal.SIGKILL)
    builder.wait()  # not communicate(): a surviving worker would hold its pipes open
    builder.stdout.close()
    builder.stderr.close()
    deadline = time.monotonic() + 10
    alive = workers
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = workers & _running()
    for pid in alive:  # do not leave them behind for the rest of the suite
        os.kill(pid, signal.SIGKILL)
    assert alive == set()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_worker_killed_from_outside_is_a_one_line_error(tmp_path):
    builder, workers = _build_with_workers(tmp_path)
    forkserver = set(_children().get(builder.pid, []))
    os.kill(max(workers - forkserver), signal.SIGKILL)  # as the OOM killer would
    try:
        _, stderr = builder.communicate(timeout=60)
    finally:
        for pid in _descendants(builder.pid) | (workers & _running()):
            os.kill(pid, signal.SIGKILL)  # whatever is left, on failure
    assert builder.returncode == 1
    assert stderr.startswith("Error: ") and stderr.count("\n") == 1, stderr
    assert "a worker process rendering record pages died; build again" in stderr


def test_a_fifo_planted_as_manifest_json_is_refused_not_waited_on(tmp_path):
    # found by a review of the change: the writer opened manifest.json without O_NONBLOCK
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "manifest.json")
    code = ("import sys; from ikreport.cli.main import main; "
            f"sys.argv = ['ikreport', 'build', {str(ROOT / 'sample_evidence')!r}, '-o', {str(out)!r}, "
            f"'--cache-dir', {str(tmp_path / 'cache')!r}]; main()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "exists and is not an ikreport site (manifest.json is not an ikreport build's)" in done.stderr
