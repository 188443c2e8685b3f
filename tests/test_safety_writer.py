"""The writer's promises: `build -o` writes only into a site a build wrote (or an empty or new
folder, written beside it and renamed into place whole), and removes only what its manifest
lists; a rebuild writes only what changed, and an edit to the site since does not survive it;
a failed build changes nothing and a killed one is finished by the next; builds into one
folder take turns; the cache is never an error; a killed builder leaves no worker processes."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import jinja2
import pytest

from conftest import NCU, ROOT
from ikreport.store import cache as cache_module
from ikreport.store.archive import Archive
from ikreport.collect.context import Context
from ikreport.collect.ncu_import import import_csv
from ikreport.errors import BuildError, NotASiteError
from ikreport import workers
from ikreport.site import writer
from ikreport.commands.build import build_site

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


# `build -o DIR` never deletes what it did not write.

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
def test_files_in_the_site_no_build_wrote_are_left_alone_and_named_by_verify(tmp_path, stray, clean):
    from ikreport.commands.verify_site import verify_site

    out = tmp_path / "site"
    build(out, tmp_path / "c")
    (out / stray).parent.mkdir(exist_ok=True)
    (out / stray).write_text("keep me")
    build(out, tmp_path / "c", templates=_changed_templates(tmp_path))
    build(out, tmp_path / "c")
    assert (out / stray).read_text() == "keep me"
    assert {k: v for k, v in tree(out).items() if k != stray} == clean
    _, problems = verify_site(str(out))
    assert problems == [f"{out}/{stray}: not written by the build (manifest.json does not list it); delete it "
                        "(a build leaves files it did not write alone)"]


def test_a_site_or_an_empty_folder_is_written_and_a_copied_site_is_still_one(tmp_path, clean):
    out = tmp_path / "site"
    out.mkdir()
    build(out, tmp_path / "c")
    build(out, tmp_path / "c")
    shutil.copytree(out, tmp_path / "copy")  # a site copied elsewhere is still a build's
    build(tmp_path / "copy", tmp_path / "c2")
    assert tree(out) == tree(tmp_path / "copy") == clean


def test_a_rebuild_never_leaves_a_moment_with_no_page(tmp_path, monkeypatch, clean):
    out = tmp_path / "site"
    build(out, tmp_path / "c")
    gaps = []
    real = os.replace

    def moved(src, dst, *a, **kw):
        real(src, dst, *a, **kw)
        gaps.append(not (out / "index.html").is_file())  # the moment right after each rename

    monkeypatch.setattr(os, "replace", moved)
    build(out, tmp_path / "c", templates=_changed_templates(tmp_path))
    assert gaps and not any(gaps)
    assert (out / "index.html").read_bytes() != clean["index.html"]


def test_leftovers_of_a_killed_build_are_removed_and_nothing_else(tmp_path, clean):
    out = tmp_path / "site"
    build(out, tmp_path / "c")
    staged = tmp_path / ".site.tmp-0badcafe"  # a build killed while writing
    (staged / "e").mkdir(parents=True)
    (staged / writer.STAGING).touch()
    shutil.copy(out / "index.html", staged / "index.html")
    shutil.copytree(out, tmp_path / ".site.tmp-deadbeef")  # a first build killed before its rename
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


# The previous site is not trusted: what changed since the build that wrote it is written again.

def _stats(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.lstat().st_ino, p.lstat().st_ctime_ns) for p in root.rglob("*") if p.is_file()}


def test_unchanged_files_of_the_previous_site_are_left_untouched(tmp_path, clean):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    before = _stats(out)
    build(out, cache)
    build(out, tmp_path / "fresh")  # the site's manifest says what it holds, whatever the cache knows
    assert tree(out) == clean
    assert _stats(out) == before  # not one file replaced, linked or even chmod'ed


def test_a_rebuild_that_changes_one_page_touches_no_other_file(tmp_path, clean):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    before = _stats(out)
    build(out, cache, templates=_changed_templates(tmp_path))
    after = _stats(out)
    assert sorted(p for p in after if after[p] != before[p]) == ["index.html", "manifest.json"]
    assert sorted(after) == sorted(before)
    assert (out / "index.html").read_bytes() != clean["index.html"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []


@pytest.mark.parametrize("looker", ["re-hash child", "builder"])
@pytest.mark.parametrize("damage", ["edit", "edit-then-backdate", "truncate", "chmod", "delete", "symlink"])
def test_a_file_changed_since_the_build_is_written_again(tmp_path, clean, damage, looker, monkeypatch):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    if looker == "builder":  # no child: the builder re-hashes the records and looks at the files itself
        monkeypatch.setattr(workers, "lean_child", lambda *args: None)
    looked, write = [], writer.Site.write

    def spying(site: writer.Site, *args: object) -> None:  # how many files were looked at before the write
        looked.append(len(site.still))
        write(site, *args)  # type: ignore[arg-type]
    monkeypatch.setattr(writer.Site, "write", spying)
    secret = tmp_path / "secret"
    secret.write_bytes(b"not the page")
    page = sorted(p for p in clean if p.startswith("e/") and p.endswith(".html"))[0]
    blob = sorted(p for p in clean if p.startswith("b/"))[0]
    for name in (page, blob, page.replace(".html", ".json")):
        path = out / name
        stat_before = path.stat()
        if damage.startswith("edit"):
            with open(path, "r+b") as f:  # in place, same size: only the inode's ctime tells
                f.write(b"X")
            if damage == "edit-then-backdate":
                os.utime(path, ns=(stat_before.st_atime_ns, stat_before.st_mtime_ns))
        elif damage == "truncate":
            os.truncate(path, 10)
        elif damage == "chmod":
            path.chmod(0o600)  # the bytes are intact, but the web server may not read them
        elif damage == "delete":
            path.unlink()
        else:
            path.unlink()
            path.symlink_to(secret)  # replaced, never followed
    build(out, cache)
    assert tree(out) == clean
    assert os.lstat(out / page).st_mode == os.lstat(out / "index.html").st_mode
    assert secret.read_bytes() == b"not the page"
    assert (looked[0] > len(clean) // 2) == (looker == "re-hash child")  # the child looked at the files


@pytest.mark.parametrize("write_there", [True, False])
def test_a_linked_folder_in_the_site_is_refused_not_written_through(tmp_path, clean, write_there):
    """With nothing to write in it the link was kept, exit 0, and the files reached through it
    taken as the build's (a review helper found it): publish then refused the site."""
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    outside = tmp_path / "outside"
    os.rename(out / "e", outside)
    (out / "e").symlink_to(outside)
    page = sorted(p for p in clean if p.startswith("e/") and p.endswith(".html"))[0]
    if write_there:
        (outside / page.split("/")[1]).unlink()  # so the build has something to write there
    before = tree(outside)
    with pytest.raises(NotASiteError, match="e: a symbolic link in the site"):
        build(out, cache)
    assert tree(outside) == before and (out / "e").is_symlink()


@pytest.mark.parametrize("manifest", ["garbage", '{"schema": "x"}', "[1]"])
def test_a_damaged_manifest_makes_the_folder_no_site_to_write_into(tmp_path, manifest):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    (out / "manifest.json").write_text(manifest)
    before = tree(out)
    with pytest.raises(NotASiteError, match="manifest.json is not an ikreport build's"):
        build(out, cache)
    assert tree(out) == before


def test_a_manifest_whose_digests_are_not_digests_only_means_files_are_written_again(tmp_path, clean):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["sha256"] = {path: 5 for path in manifest["sha256"]} | {"../outside": "x" * 64}
    manifest["files"].append("../outside")  # a path out of the site is never touched
    (out / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "outside").write_text("keep me")
    build(out, cache)
    assert tree(out) == clean and (tmp_path / "outside").read_text() == "keep me"


def test_manifest_paths_that_leave_the_site_are_not_given_to_the_re_hash_child(tmp_path, clean, monkeypatch):
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    manifest = json.loads((out / "manifest.json").read_text())
    odd = {"../outside": "x" * 64, "e/a\u0000b.html": "x" * 64, "e/../../outside": "x" * 64}
    manifest["sha256"] |= odd  # a NUL stopped the child; '..' looked outside the site
    (out / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "outside").write_text("keep me")
    looked, write = [], writer.Site.write

    def spying(site: writer.Site, *args: object) -> None:
        looked.append(dict(site.still))
        write(site, *args)  # type: ignore[arg-type]
    monkeypatch.setattr(writer.Site, "write", spying)
    page = sorted(p for p in clean if p.startswith("e/") and p.endswith(".html"))[0]
    (out / page).write_bytes(b"changed since")
    build(out, cache)
    assert tree(out) == clean and (tmp_path / "outside").read_text() == "keep me"
    assert not set(odd) & set(looked[0]) and looked[0][page] == -1  # the child looked, at the site's files only
    assert looked[0]["index.html"] == len(clean["index.html"])


# A failed build changes nothing; a killed one is finished by the next.

@pytest.fixture(scope="module")
def grown(tmp_path_factory) -> tuple[Path, dict[str, bytes]]:
    """A copy of the sample archive with two more B200 profiles of one workload (new record
    pages, charts and a history page; the index, search index and manifest change), and the
    clean site of it."""
    root = tmp_path_factory.mktemp("grown")
    shutil.copytree(SAMPLE, root / "arch")
    arch = Archive.open(root / "arch")
    for n in range(2):
        import_csv(arch, [NCU / "ncu_raw_roofline_decodebench_b200_16kernels_preamble.csv"],
                   Context(title=f"decode {n}", workload="decode"))
    build_site(arch, root / "site", cache_dir=root / "c")
    return root / "arch", tree(root / "site")


class _Killed(BaseException):
    """Stands for SIGKILL: nothing the writer catches."""


# back: the next build is of the archive before (the killed build's new files, which no
# manifest lists, must go all the same); a full disk among the renames is the same as a kill
@pytest.mark.parametrize("grow, share, back, stop", [(True, f, False, _Killed) for f in (0, 0.3, 0.7, 1)]
                         + [(False, f, False, _Killed) for f in (0.3, 1)]
                         + [(True, 0.3, True, _Killed), (True, 0.7, True, OSError), (True, 1, True, _Killed)])
def test_a_build_killed_between_renames_is_finished_by_the_next(tmp_path, monkeypatch, clean, grown, grow, share, back,
                                                                  stop):
    arch, clean_grown = grown
    start, goal = (SAMPLE, arch) if grow else (arch, SAMPLE)
    out, cache = tmp_path / "site", tmp_path / "c"
    build_site(Archive.open(start), out, cache_dir=cache)
    real = os.replace
    done: list[str] = []

    def replace(src, dst, *a, **kw):
        if str(dst).startswith(f"{out}/"):
            if len(done) >= kill_after:
                raise stop(28, "No space left on device") if stop is OSError else stop()
            done.append(dst)
        real(src, dst, *a, **kw)

    total = _renames_needed(start, goal, tmp_path)
    kill_after = min(int(share * total), total - 1)  # all but the manifest, at most
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(_Killed if stop is _Killed else BuildError):
        build_site(Archive.open(goal), out, cache_dir=cache)
    monkeypatch.undo()
    assert len(done) == kill_after
    build_site(Archive.open(start if back else goal), out, cache_dir=cache)
    assert tree(out) == (clean_grown if grow != back else clean)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []


def test_a_build_failing_after_one_killed_among_its_renames_keeps_what_the_next_needs(tmp_path, monkeypatch, clean, grown):
    """A build killed among its renames, then one that fails before writing (the disk still
    full), then one of the archive before: the killed build's new files, which no manifest
    lists, still go, as its leftover folder is removed only once a build has written the site."""
    arch, _ = grown
    out, cache = tmp_path / "site", tmp_path / "c"
    build_site(Archive.open(SAMPLE), out, cache_dir=cache)
    real, done = os.replace, []

    def replace(src, dst, *a, **kw):
        if str(dst).startswith(f"{out}/") and len(done) >= 3:
            raise _Killed()
        done.append(dst)
        real(src, dst, *a, **kw)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(_Killed):
        build_site(Archive.open(arch), out, cache_dir=cache)
    monkeypatch.setattr(os, "replace", real)
    monkeypatch.setattr(writer, "_stage", lambda *a: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")))
    with pytest.raises(BuildError, match="No space left on device"):
        build_site(Archive.open(arch), out, cache_dir=cache)
    monkeypatch.undo()
    build_site(Archive.open(SAMPLE), out, cache_dir=cache)
    assert tree(out) == clean
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []


@pytest.mark.parametrize("first", [True, False])
def test_a_build_failing_as_it_writes_its_manifest_leaves_no_temporary_folder(tmp_path, monkeypatch, clean, grown, first):
    """A full disk while the manifest is staged: nothing has been renamed in, so the build
    changes nothing and keeps nothing beside the site (a partial manifest once kept it all)."""
    arch, _ = grown
    out = tmp_path / "site"
    if not first:
        build_site(Archive.open(SAMPLE), out, cache_dir=tmp_path / "c")
    real = writer._stage

    def stage(data, tmp, path):
        if path == writer.MANIFEST:
            (tmp / path).write_bytes(data[:100])
            raise OSError(errno.ENOSPC, "No space left on device")
        real(data, tmp, path)

    monkeypatch.setattr(writer, "_stage", stage)
    with pytest.raises(BuildError, match="No space left on device"):
        build_site(Archive.open(arch), out, cache_dir=tmp_path / "c")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []
    assert (tree(out) == clean) if not first else not out.exists()


def test_a_planted_leftover_cannot_have_a_build_remove_a_users_file(tmp_path, clean):
    """A folder named and marked as a killed build's, whose manifest lists a file the user keeps
    in the site (a CNAME for GitHub Pages): only files changed since that manifest was staged,
    as a killed build's renamed files are, are taken for that build's."""
    out = tmp_path / "site"
    build(out, tmp_path / "c")
    (out / "CNAME").write_text("evidence.example.org\n")
    time.sleep(0.05)  # older than the planted manifest by more than a tick of the ctime clock
    planted = tmp_path / ".site.tmp-00000000"
    planted.mkdir()
    (planted / writer.STAGING).touch()
    (planted / writer.MANIFEST).write_text(json.dumps({"schema": "ikreport.manifest/1", "files": ["CNAME"], "sha256": {}}))
    build(out, tmp_path / "c")
    assert (out / "CNAME").read_text() == "evidence.example.org\n"
    assert not planted.exists()


def _renames_needed(start: Path, goal: Path, tmp_path: Path) -> int:
    """How many files an in-place build from the site of ``start`` to that of ``goal`` renames."""
    out = tmp_path / "probe"
    build_site(Archive.open(start), out, cache_dir=tmp_path / "probe-cache")
    done: list[str] = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        real = os.replace
        monkeypatch.setattr(os, "replace", lambda src, dst, *a, **kw: done.append(str(dst)) or real(src, dst, *a, **kw))
        build_site(Archive.open(goal), out, cache_dir=tmp_path / "probe-cache")
    mine = [path for path in done if path.startswith(f"{out}/")]  # jinja2 renames its compiled templates in too
    assert len(mine) >= 4  # else the sample no longer makes the case
    return len(mine)


def test_files_the_new_build_drops_are_removed_with_their_folders(tmp_path, clean, grown):
    arch, clean_grown = grown
    out, cache = tmp_path / "site", tmp_path / "c"
    build_site(Archive.open(arch), out, cache_dir=cache)
    assert tree(out) == clean_grown and (out / "h").is_dir()
    build(out, cache)
    assert tree(out) == clean
    assert not (out / "h").exists()  # the history page's folder went with it


def test_a_build_that_fails_while_producing_bytes_leaves_the_site_as_it_was(tmp_path, monkeypatch, grown):
    arch, clean_grown = grown
    out, cache = tmp_path / "site", tmp_path / "c"
    build(out, cache)
    before, stats = tree(out), _stats(out)
    new = sorted(path for path in clean_grown if path.startswith("e/") and path.endswith(".json") and path not in before)
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


def _site_files(paths: dict[str, bytes]) -> writer.SiteFiles:
    files = writer.SiteFiles()
    for path, data in sorted(paths.items()):
        files.add(path, data)
    return files


def _manifest(files: writer.SiteFiles) -> bytes:
    digests = {path: entry.sha256 for path, entry in files.entries.items()}
    return json.dumps({"schema": "ikreport.manifest/1", "files": sorted(digests), "sha256": digests}).encode()


def test_a_file_where_the_new_build_has_a_folder_and_the_other_way_round(tmp_path):
    out = tmp_path / "site"  # say, the layout of another ikreport release
    old = {"index.html": b"1", "l": b"a file", "search/docs-0.json": b"[]"}
    with writer.open_site(out) as site:
        site.write(_site_files(old), _manifest)
    new = {"index.html": b"2", "l/profiles-1.html": b"page", "search": b"a file now"}
    with writer.open_site(out) as site:
        site.write(_site_files(new), _manifest)
    assert {k: v for k, v in tree(out).items() if k != "manifest.json"} == new


# The cache is not trusted either; a cache fault is never an error.

@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "folder", "rows"])
def test_a_damaged_cache_is_a_miss(tmp_path, damage, clean):
    import sqlite3

    from ikreport.store.cache import FILE

    cache = tmp_path / "c"
    build(tmp_path / "first", cache)
    path = cache / FILE
    if damage == "rows":  # a cache whose entries are not what their space holds
        with sqlite3.connect(path) as db:
            db.execute("UPDATE kept SET value = x'00ff00'")
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "garbage":
        path.write_bytes(b"\xff\x00garbage" * 300)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        path.mkdir()
    build(tmp_path / "site", cache)
    assert tree(tmp_path / "site") == clean
    build(tmp_path / "site", cache)  # and the build after it
    assert tree(tmp_path / "site") == clean


def test_a_cache_entry_that_goes_missing_during_the_build_is_rendered_again(tmp_path, monkeypatch, clean):
    import ikreport.commands.build as build_module

    cache = tmp_path / "c"
    build(tmp_path / "first", cache)
    monkeypatch.setattr(build_module, "kept_file", lambda *args: None)  # gone after the look-up
    real_get = cache_module.Cache.get
    monkeypatch.setattr(cache_module.Cache, "get", lambda self, space, key: None if space == "chart" else real_get(self, space, key))
    build(tmp_path / "site", cache)
    assert tree(tmp_path / "site") == clean


def test_a_full_disk_or_an_unwritable_cache_only_costs_time(tmp_path, monkeypatch, clean):
    import sqlite3

    def full(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(cache_module.Cache, "put_rows", lambda self, rows: full() if self._db else None)
    monkeypatch.setattr(jinja2.bccache.Bucket, "write_bytecode",
                        lambda *a: (_ for _ in ()).throw(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))))
    with pytest.raises(sqlite3.OperationalError):
        cache_module.Cache(tmp_path / "probe").put_rows([("s", "k", b"v")])  # the fault is real here
    monkeypatch.setattr(cache_module.Cache, "put_rows", lambda self, rows: None)  # and swallowed in the cache
    build(tmp_path / "site", tmp_path / "c")
    assert tree(tmp_path / "site") == clean
    monkeypatch.undo()
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    build(tmp_path / "site2", not_a_folder)
    assert tree(tmp_path / "site2") == clean
    read_only = tmp_path / "ro"
    read_only.mkdir()
    read_only.chmod(0o500)
    try:
        build(tmp_path / "site3", read_only)
    finally:
        read_only.chmod(0o700)
    assert tree(tmp_path / "site3") == clean


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


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


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


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_ctrl_c_while_the_forkserver_imports_is_left_to_the_command(tmp_path):
    """Ctrl-C reaches every process of the command's group. The forkserver, importing what the
    pages need for its first few hundred milliseconds, died of it with that import's traceback
    (multiprocessing has it ignore Ctrl-C only after); it ignores it from its start now, its
    own first imports (multiprocessing's) included, and the command alone answers, in one line."""
    script = textwrap.dedent("""
        import sys, time
        from ikreport import workers
        from ikreport.site.record_pages import PRELOAD
        workers.start_server(PRELOAD)
        print("started", flush=True)
        time.sleep(30)
    """)
    caller = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert caller.stdout.readline() == "started\n"
        found, deadline = [], time.monotonic() + 10
        while not found and time.monotonic() < deadline:  # forked, then its exec: the command line says which
            found = [pid for pid in _children().get(caller.pid, []) if b"forkserver" in _cmdline(pid)]
            time.sleep(0.01)
        (server,) = found
        for _ in range(8):  # from its exec into its imports (numpy, jinja2, the kinds: far longer)
            os.kill(server, signal.SIGINT)
            time.sleep(0.03)
        time.sleep(1.5)
        assert server in _running(), "the forkserver died of Ctrl-C"
    finally:
        caller.kill()
        _, stderr = caller.communicate()
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr


def test_a_worker_killed_as_it_starts_is_the_same_one_line_error(monkeypatch):
    """The builder hands each new worker its start-up data through a pipe: a worker killed
    before it has read them breaks that pipe, and the BrokenPipeError, which click turns into a
    silent exit 1, must read as a dead worker does."""
    import contextlib

    from ikreport.site import record_pages
    from ikreport.store.cache import Cache
    from ikreport.store.recordset import RecordSet

    class Pool:
        def map(self, *args, **kwargs):
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")  # as popen_forkserver's write to the new worker

    monkeypatch.setattr(record_pages, "_pooled", lambda pages, workers: True)
    monkeypatch.setattr(record_pages.workers_, "pool", lambda *args: contextlib.nullcontext(Pool()))
    job = record_pages.Job("arch", RecordSet.of({}), {}, None, None)
    with pytest.raises(BuildError, match="^arch: a worker process rendering record pages died; build again$"):
        record_pages.render_record_pages(job, ["a" * 64] * 20, Cache(None), workers=2)


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


_SWALLOWING = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as a shell starts it
from ikreport.store import records
real, pressed, after = records.validate, [], sys.argv[1]

def validate(record, where="record"):  # Ctrl-C while a record is validated, the exception swallowed there
    if not pressed:
        pressed.append(1)
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            pass  # as jsonschema-rs can
        if after == "panic":
            raise type("PanicException", (BaseException,), {})("a Rust panic")  # as pyo3 raises one
    return real(record, where)

records.validate = validate
from ikreport.cli.main import main
sys.argv = ["ikreport", "check", sys.argv[2]]
main()
"""


@pytest.mark.parametrize("after", ["swallowed", "panic"])
def test_ctrl_c_a_library_swallows_or_panics_on_still_aborts(tmp_path, after):
    """jsonschema-rs, validating a record when Ctrl-C came, could drop the KeyboardInterrupt (the
    command then finished and said all was well, exit 0) or turn it into a panic (a traceback)."""
    done = subprocess.run([sys.executable, "-c", _SWALLOWING, after, str(ROOT / "sample_evidence")],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert done.returncode == 1, done
    assert done.stderr == "\nAborted!\n" or done.stderr == "Aborted!\n", done.stderr
