"""A build trusts a record file unchanged since a build hashed it (store/stat_index.py): a
second build of an unchanged archive opens no record file, any change to a file makes the
next build hash it again (so tampering is the same IK108 error as ever), a damaged or foreign
index is only a miss, and ``verify`` re-hashes every record whatever the index holds. Blobs
are never trusted so: each cited one is stat-ed by every build. What changed since the index
was written is kept in a small file beside it."""

from __future__ import annotations

import marshal
import os
import shutil
import threading

import pytest

from conftest import ROOT
from ikreport.commands.check import check
from ikreport.commands.verify import verify
from ikreport.errors import BuildError
from ikreport.site.build import build_site
from ikreport.store import stat_index
from ikreport.store.archive import Archive
from ikreport.store.bucket import Bucket
from ikreport.store.cache import default_cache_dir, keep, recall
from ikreport.store.local import LocalFolder
from ikreport.store.validated import Validated

SAMPLE = ROOT / "sample_evidence"
HASH_ERROR = "IK108 the bytes do not hash to the file's name"


@pytest.fixture
def arch(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "arch")
    shutil.rmtree(tmp_path / "arch" / "reports")  # a report's values are read from whole records, on every build
    return Archive.open(tmp_path / "arch")


@pytest.fixture
def settled(monkeypatch):
    """Files the test has just copied count as settled (see stat_index.SETTLED_NS)."""
    monkeypatch.setattr(stat_index, "SETTLED_NS", 0)


@pytest.fixture
def reads(monkeypatch):
    """The ids of the record files opened, in order."""
    seen: list[str] = []
    for backend in (LocalFolder, Bucket):
        def spy(self, area, file_id, real=backend.read):
            if area == "records":
                seen.append(file_id)
            return real(self, area, file_id)

        monkeypatch.setattr(backend, "read", spy)
    return seen


def index_files(cache):
    return sorted((cache / "validated").rglob("unchanged/*.idx"))


def test_a_second_build_of_an_unchanged_archive_opens_no_record_file(arch, tmp_path, settled, reads):
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(arch, out, cache_dir=cache)
    first = (out / "index.html").read_bytes()
    assert sorted(set(reads)) == arch.record_ids()
    [index] = index_files(cache)
    written = index.stat()
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert reads == []
    assert (out / "index.html").read_bytes() == first
    assert (index.stat().st_ino, index.stat().st_mtime_ns) == (written.st_ino, written.st_mtime_ns)  # nothing changed: not rewritten


def _put_back_times(path, st):
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def rewritten(path):
    path.chmod(0o644)
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"title":"', b'"title":"X', 1)[: len(data)])  # same size


def truncated(path):
    path.chmod(0o644)
    os.truncate(path, path.stat().st_size - 1)


def times_put_back(path):
    st = path.stat()
    rewritten(path)
    path.chmod(0o444)
    _put_back_times(path, st)  # same size, mode and mtime: only the ctime tells


def replaced(path):
    st = path.stat()
    other = path.with_name(".tampered")
    other.write_bytes(path.read_bytes().replace(b'"title":"', b'"title":"Y', 1))
    other.chmod(0o444)
    _put_back_times(other, st)
    os.replace(other, path)  # another inode under the same name


def test_each_kind_of_tampering_after_a_build_is_caught_by_the_next(arch, tmp_path, settled):
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(arch, out, cache_dir=cache)
    tampered = {}
    for tamper, rid in zip((rewritten, truncated, times_put_back, replaced), arch.record_ids()):
        tamper(arch.record_path(rid))
        tampered[str(arch.record_path(rid))] = tamper.__name__
    with pytest.raises(BuildError, match=HASH_ERROR):
        build_site(arch, out, cache_dir=cache)
    # what the build's own check finds, with the index the builds kept: each file, one line each
    # (records citing a damaged one are IK101 too, as without the index)
    found = [f for f in check(arch, validated=Validated(cache / "validated")).findings if f.code == "IK108"]
    assert sorted(f.file for f in found) == sorted(tampered)
    assert all(str(f).startswith(f"{f.file}: {HASH_ERROR} (truncated or tampered)") for f in found)
    with pytest.raises(BuildError, match=HASH_ERROR):  # and the next build again: a failing file is never trusted
        build_site(arch, out, cache_dir=cache)


def test_a_chmod_alone_makes_the_next_build_hash_that_file_again(arch, tmp_path, settled, reads):
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(arch, out, cache_dir=cache)
    rid = arch.record_ids()[3]
    arch.record_path(rid).chmod(0o644)
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert reads == [rid]
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert reads == []  # its new key was kept


@pytest.mark.parametrize("damage", ["flipped", "truncated", "emptied"])
def test_a_damaged_index_is_only_a_miss(arch, tmp_path, settled, reads, damage):
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(arch, out, cache_dir=cache)
    first = (out / "index.html").read_bytes()
    [index] = index_files(cache)
    data = index.read_bytes()
    index.write_bytes({"flipped": data[:-7] + bytes([data[-7] ^ 1]) + data[-6:],
                       "truncated": data[: len(data) // 2], "emptied": b""}[damage])
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert sorted(reads) == arch.record_ids()  # every record hashed again, none trusted
    assert (out / "index.html").read_bytes() == first
    assert recall(index) is not None  # kept anew
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert reads == []


def test_an_index_kept_by_other_code_is_not_used(arch, tmp_path, settled, reads):
    cache = tmp_path / "cache"
    validated = Validated(cache / "validated")
    check(arch, validated=validated)
    [index] = index_files(cache)
    body = recall(index)
    assert body is not None
    kept = marshal.loads(body)
    keep(index, marshal.dumps({**kept, "summary_version": "other-" + kept["summary_version"]}))
    reads.clear()
    check(arch, validated=validated)
    assert sorted(reads) == arch.record_ids()


def test_a_file_changed_just_before_a_build_is_hashed_again_by_the_next(arch, tmp_path, monkeypatch, reads):
    # its ctime may share a tick of the file system's clock with the build's read, so a change
    # right after that read could leave the key unchanged: git's "racily clean" files
    monkeypatch.setattr(stat_index, "SETTLED_NS", 3600 * 10**9)
    validated = Validated(tmp_path / "cache" / "validated")
    check(arch, validated=validated)
    reads.clear()
    check(arch, validated=validated)
    assert sorted(reads) == arch.record_ids()


def test_verify_rehashes_every_record_even_when_the_index_is_warm(arch, tmp_path, settled, reads):
    build_site(arch, tmp_path / "site", cache_dir=default_cache_dir())  # the cache verify reads
    for use_cache in (True, False):
        reads.clear()
        assert verify(arch, use_cache=use_cache).problems == ()
        assert sorted(reads) == arch.record_ids()
    victim = arch.record_path(arch.record_ids()[0])
    times_put_back(victim)
    assert [p.split(": ")[0] for p in verify(arch).problems] == [str(victim)]


def test_a_bucket_build_trusts_its_unchanged_local_copies(arch, tmp_path, settled, reads, run):
    url = f"memory://{tmp_path.name}/evidence"
    assert run("sync", arch.root, url).exit_code == 0
    bucket, out, cache = Archive.open(url), tmp_path / "site", tmp_path / "cache"
    build_site(bucket, out, cache_dir=cache)
    reads.clear()
    build_site(bucket, out, cache_dir=cache)
    assert reads == []
    # a damaged copy is a miss: hashed again, fetched again, and the build is right
    rid = bucket.record_ids()[0]
    copy = next((cache / "objects" / "records").rglob(rid[2:]))
    copy.write_bytes(b"damaged")
    reads.clear()
    build_site(bucket, out, cache_dir=cache)
    assert reads == [rid]
    # a FIFO planted as a copy is a miss too, never a build waiting for a writer
    copy.unlink()
    os.mkfifo(copy)
    done = threading.Event()
    threading.Thread(target=lambda: (build_site(bucket, out, cache_dir=cache), done.set()), daemon=True).start()
    assert done.wait(60), "the build waited on a FIFO in the objects cache"


def test_a_record_added_or_removed_keeps_the_index_right(arch, tmp_path, settled, reads, monkeypatch):
    # a new record is packed onto the kept tables (the others' entries are kept as they are);
    # one gone starts the tables anew: either way the next build trusts the rest, and a clean
    # build says the same
    out, cache = tmp_path / "site", tmp_path / "cache"
    ids = arch.record_ids()
    loaded = check(arch).records
    gone = arch.record_path(next(rid for rid in ids if not loaded.cited_by(rid)))  # nothing dangles without it
    held = gone.read_bytes()
    gone.unlink()
    build_site(arch, out, cache_dir=cache)
    packed = []
    monkeypatch.setattr(stat_index.Tables, "pack", lambda self, s, real=stat_index.Tables.pack: packed.append(s) or real(self, s))
    gone.write_bytes(held)  # back, as a record added since
    build_site(arch, out, cache_dir=cache)
    assert len(packed) == 1  # only the new one
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert reads == []
    gone.unlink()
    packed.clear()
    build_site(arch, out, cache_dir=cache)
    assert len(packed) == len(ids) - 1  # a record gone: packed anew, so its strings go too
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert reads == []
    build_site(arch, tmp_path / "clean", cache_dir=tmp_path / "fresh")
    assert (out / "index.html").read_bytes() == (tmp_path / "clean" / "index.html").read_bytes()


def _blob_codes(arch, validated, blob):
    """(code, record file) of each finding of a check that names ``blob``."""
    return sorted((f.code, f.file) for f in check(arch, validated=validated).findings if blob[:12] in f.message)


def test_a_blob_changed_after_a_build_is_found_by_every_later_one(arch, tmp_path, settled, reads):
    # blobs are not trusted by a kept key: each cited one is stat-ed on every build, so a blob
    # truncated, deleted, or moved behind a linked shard is found however warm the index
    validated = Validated(tmp_path / "cache" / "validated")
    loaded = check(arch, validated=validated).records
    blob = next(s["id"] for rid in loaded.records for s in loaded.records[rid]["sources"])
    citing = sorted(str(arch.record_path(r)) for r in loaded.records
                    if any(s["id"] == blob for s in loaded.records[r]["sources"]))
    path = arch.blob_path(blob)
    size = path.stat().st_size
    check(arch, validated=validated)
    reads.clear()
    truncated(path)
    found = [f for f in check(arch, validated=validated).findings if blob[:12] in f.message]
    assert reads == []  # the records themselves were trusted unread
    assert sorted(f.file for f in found) == citing
    assert all(f.code == "IK108" and f"as {size} bytes, but it is {size - 1}" in f.message for f in found)
    held = path.read_bytes()
    path.unlink()
    assert _blob_codes(arch, validated, blob) == [("IK102", file) for file in citing]
    # back where it was, in a shard that is now a link to a folder outside: not followed
    shard, outside = path.parent, tmp_path / "outside"
    os.rename(shard, outside)
    (outside / path.name).write_bytes(held)
    os.symlink(outside, shard)
    assert _blob_codes(arch, validated, blob) == [("IK102", file) for file in citing]


def test_a_record_added_is_kept_beside_the_index_until_that_grows(arch, tmp_path, settled, reads, monkeypatch):
    # one record added writes a small file naming the index's generation, not the whole index
    # again; a later file that names another generation is not used; past ADDED_MIN entries
    # (or a sixteenth of the index) the index is written anew and the later file goes
    validated = Validated(tmp_path / "cache" / "validated")
    ids = arch.record_ids()
    loaded = check(arch, validated=validated).records
    gone = [arch.record_path(rid) for rid in ids if not loaded.cited_by(rid)][:2]
    held = [path.read_bytes() for path in gone]
    for path in gone:
        path.unlink()
    check(arch, validated=validated)  # a record gone: the index anew, with nothing beside it
    [index] = index_files(tmp_path / "cache")
    written = index.stat()
    gone[0].write_bytes(held[0])
    check(arch, validated=validated)
    added = index.with_suffix(".added")
    assert recall(added) is not None
    assert (index.stat().st_ino, index.stat().st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
    reads.clear()
    check(arch, validated=validated)
    assert reads == []  # the added record trusted from the file beside the index
    # a later file naming another index (a build that wrote the index anew since) is a miss
    kept = marshal.loads(recall(added))
    keep(added, marshal.dumps({**kept, "base": "another"}))
    reads.clear()
    check(arch, validated=validated)
    assert reads == [gone[0].parent.name + gone[0].stem]
    # more added than the later file may hold: the index is written anew, the later file goes
    monkeypatch.setattr(stat_index, "ADDED_MIN", 0)
    gone[1].write_bytes(held[1])
    check(arch, validated=validated)
    assert not added.exists() and index.stat().st_ino != written.st_ino
    reads.clear()
    assert [f for f in check(arch, validated=validated).findings if f.is_error] == []
    assert reads == []


def test_the_loaded_set_knows_each_record_file_s_size_from_the_stat_it_trusted_by(arch, tmp_path, settled):
    # what a build would otherwise stat every record again for (each record's .json on the site)
    validated = Validated(tmp_path / "cache" / "validated")
    for _ in range(2):  # hashed, then trusted
        sizes = check(arch, validated=validated).records.sizes
        assert sizes == {rid: arch.record_path(rid).stat().st_size for rid in arch.record_ids()}
    assert check(arch).records.sizes == {}  # no cache, no index: nothing stat-ed, the archive sizes them


def _forge(index, change):
    """Rewrite the kept index through ``change`` (its parsed value), with a valid header: what
    only someone writing into the cache could do."""
    kept = marshal.loads(recall(index))
    change(kept)
    keep(index, marshal.dumps(kept))


def test_a_forged_entry_or_list_is_a_miss_that_the_next_build_mends(arch, tmp_path, settled, reads):
    """An entry holding its key and nothing else, and a table list naming a string that is not
    there, are misses (the record hashed again), never a traceback; the index is kept anew, so
    the build after trusts every record again."""
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(arch, out, cache_dir=cache)
    [index] = index_files(cache)
    _forge(index, lambda kept: kept["records"].update({rid: [e[0]] for rid, e in kept["records"].items()}))
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert sorted(reads) == arch.record_ids()
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert reads == []

    def damage_first_list(kept):
        kept["lists"][0] = [len(kept["strings"]) + 5]
    cache = tmp_path / "cache2"  # a fresh index, all in its main file
    build_site(arch, out, cache_dir=cache)
    [index] = index_files(cache)
    _forge(index, damage_first_list)
    users = [rid for rid, (_, packed) in marshal.loads(recall(index))["records"].items()
             if 0 in packed[1].values() or 0 in packed[3].values()]
    assert users  # some records' summaries use the first list
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert sorted(reads) == sorted(users)  # only those: the other lists are whole
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert reads == []


def test_an_index_marshal_cannot_read_is_a_miss(arch, tmp_path, settled, reads, monkeypatch):
    """Bytes marshal did not write may make it raise anything, MemoryError included: a miss."""
    out, cache = tmp_path / "site", tmp_path / "cache"
    build_site(arch, out, cache_dir=cache)

    def no_memory(body):
        raise MemoryError

    monkeypatch.setattr(stat_index.marshal, "loads", no_memory)
    reads.clear()
    build_site(arch, out, cache_dir=cache)
    assert sorted(reads) == arch.record_ids()
