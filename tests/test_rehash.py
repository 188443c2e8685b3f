"""The records a rebuild knows by summary, re-hashed in a child process (store/rehash.py): the
answers are exactly what ``Archive.record_bytes`` gives in this process, which reads only the
records the child could not vouch for, and a child that cannot start or dies leaves the answers
to this process, never a record unchecked."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, record_path
from ikreport.commands.build import build_site
from ikreport.errors import BuildError, IkreportError, IntegrityError, UnknownIdError
from ikreport.site.record_pages import SERIAL_BELOW
from ikreport.store import rehash
from ikreport.store.archive import MAX_RECORD, Archive


@pytest.fixture
def damaged(tmp_path):
    """The sample archive with one record tampered (same size) and one deleted: (archive, ids
    in order, the tampered id, the deleted id)."""
    shutil.copytree(ROOT / "sample_evidence", tmp_path / "arch")
    archive = Archive.open(tmp_path / "arch")
    ids = archive.record_ids()
    tampered, gone = ids[1], ids[-1]
    path = record_path(archive, tampered)
    os.chmod(path, 0o644)
    data = bytearray(path.read_bytes())
    data[-2] = ord("x") if data[-2] != ord("x") else ord("y")
    path.write_bytes(bytes(data))
    os.chmod(record_path(archive, gone), 0o644)
    os.unlink(record_path(archive, gone))
    return archive, ids, tampered, gone


def described(answers):
    return [a if isinstance(a, int) else (type(a), str(a)) for a in answers]


def in_this_process(archive, ids):
    out = []
    for rid in ids:
        try:
            out.append(len(archive.record_bytes(rid)))
        except IkreportError as exc:
            out.append(exc)
    return out


def test_the_child_answers_as_this_process_would(damaged, monkeypatch):
    archive, ids, tampered, gone = damaged
    answers = rehash.start(archive, ids)
    assert answers is not None
    here: list[str] = []  # what this process read itself: only what the child found not whole
    real = rehash.checked
    monkeypatch.setattr(rehash, "checked", lambda archive, rid, whole=True: here.append(rid) or real(archive, rid, whole))
    got = described(answers)
    assert here == [rid for rid in ids if rid in (tampered, gone)]
    assert got == described(in_this_process(archive, ids))
    assert got[ids.index(tampered)][0] is IntegrityError
    assert got[ids.index(gone)][0] is UnknownIdError
    assert sum(isinstance(a, int) for a in got) == len(ids) - 2


@pytest.mark.parametrize("linked", ["file", "shard folder"])
def test_the_child_vouches_for_no_record_reached_through_a_link(tmp_path, linked):
    """A record file, or its shard folder, replaced by a link to a copy that hashes right is
    still refused, in the caller's words: archives hold plain folders and files only."""
    shutil.copytree(ROOT / "sample_evidence", tmp_path / "arch")
    archive = Archive.open(tmp_path / "arch")
    ids = archive.record_ids()
    path = record_path(archive, ids[0])
    target = path if linked == "file" else path.parent
    shutil.move(target, tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", target)
    got = described(rehash.start(archive, ids))
    assert got[0][0] is IntegrityError and "symbolic link" in got[0][1]
    assert got == described(in_this_process(archive, ids))


def test_the_child_vouches_for_no_file_it_did_not_read_whole(tmp_path):
    """A file too big to be a record is refused unread, even named by the hash of no bytes."""
    shutil.copytree(ROOT / "sample_evidence", tmp_path / "arch")
    archive = Archive.open(tmp_path / "arch")
    empty = hashlib.sha256(b"").hexdigest()
    path = record_path(archive, empty)
    path.parent.mkdir(exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(MAX_RECORD + 1)  # sparse: no disk used
    got = described(rehash.start(archive, [empty, archive.record_ids()[0]]))
    assert got[0][0] is IntegrityError and "more than any record" in got[0][1] and isinstance(got[1], int)


def test_a_rebuild_of_an_archive_whose_path_is_not_utf_8_re_hashes_in_the_child(tmp_path, monkeypatch):
    """A folder name the file system allows but UTF-8 does not (a byte 0xff) reaches the child
    as it is, and the child, not the builder, hashes the kept records."""
    odd = Path(os.fsdecode(os.fsencode(tmp_path) + b"/odd\xff"))
    shutil.copytree(ROOT / "sample_evidence", odd / "arch")
    archive = Archive.open(odd / "arch")
    build_site(archive, tmp_path / "site", cache_dir=tmp_path / "cache")
    here: list[str] = []
    real = rehash.checked
    monkeypatch.setattr(rehash, "checked", lambda archive, rid, whole=True: here.append(rid) or real(archive, rid, whole))
    build_site(archive, tmp_path / "site", cache_dir=tmp_path / "cache")
    assert here == []


@pytest.mark.parametrize("executable", ["/bin/false", "/no/such/python"])
def test_a_child_that_dies_or_cannot_start_leaves_the_hashing_to_this_process(damaged, monkeypatch, executable):
    archive, ids, tampered, _ = damaged
    monkeypatch.setattr(sys, "executable", executable)
    answers = rehash.start(archive, ids)
    assert (answers is None) == (executable == "/no/such/python")
    if answers is not None:  # started, died: answered here
        assert described(answers) == described(in_this_process(archive, ids))


@pytest.mark.parametrize("executable", ["/bin/false", "/no/such/python"])
def test_a_rebuild_without_a_working_child_still_refuses_a_tampered_record(tmp_path, monkeypatch, executable):
    shutil.copytree(ROOT / "sample_evidence", tmp_path / "arch")
    archive = Archive.open(tmp_path / "arch")
    build_site(archive, tmp_path / "site", cache_dir=tmp_path / "cache")
    path = record_path(archive, archive.record_ids()[2])
    os.chmod(path, 0o644)
    path.write_bytes(path.read_bytes().replace(b'"title":"', b'"title":"X', 1))
    monkeypatch.setattr(sys, "executable", executable)
    with pytest.raises(BuildError, match="IK108 the bytes do not hash to the file's name"):
        build_site(archive, tmp_path / "site", cache_dir=tmp_path / "cache")


def test_an_archive_in_object_storage_is_hashed_in_this_process(damaged):
    archive, ids, _, _ = damaged
    assert rehash.start(Archive("s3://bucket/archive", backend=archive.backend), ids) is None


PLANTED = ("json", "pathlib", "hashlib", "stat", "threading", "subprocess", "selectors", "signal", "base64", "struct")


def test_a_build_imports_nothing_from_the_folder_it_is_run_in(tmp_path):
    """A clone of someone's archive may hold a json.py: neither the re-hash child of a rebuild
    nor the forkserver of a first build's workers imports it from the folder the command runs in."""
    arch = tmp_path / "arch"
    shutil.copytree(ROOT / "sample_evidence", arch)
    archive = Archive.open(arch)
    source = archive.record_ids()[0]
    for n in range(SERIAL_BELOW):  # enough pages for a first build's worker pool
        record = archive.load(source)
        archive.put_record({**record, "title": f"{record['title']} ({n})"})
    clone = tmp_path / "clone"
    clone.mkdir()
    ran = tmp_path / "ran"
    for name in PLANTED:
        (clone / f"{name}.py").write_text(f"open({str(ran)!r}, 'a').write({name!r} + ' ')\nraise ImportError\n")
    ikreport = str(Path(sys.executable).with_name("ikreport"))
    for build in ("first", "rebuild"):
        out = subprocess.run([ikreport, "build", str(arch), "-o", str(tmp_path / "site"), "--cache-dir",
                              str(tmp_path / "cache")], cwd=clone, capture_output=True, text=True)
        assert out.returncode == 0, (build, out.stderr)
    assert not ran.exists(), ran.read_text()


def test_a_killed_builder_leaves_no_child_hashing_on(tmp_path):
    """The child watches its builder: killed with SIGKILL, the builder leaves no re-hash child."""
    shutil.copytree(ROOT / "sample_evidence", tmp_path / "arch")
    script = tmp_path / "builder.py"
    script.write_text(
        "import sys, time\n"
        "from ikreport.store import rehash\n"
        "from ikreport.store.archive import Archive\n"
        "archive = Archive.open(sys.argv[1])\n"
        "answers = rehash.start(archive, archive.record_ids() * 50000)  # many seconds of hashing\n"
        "time.sleep(3)  # the ids all handed over: the child is hashing, not waiting for them\n"
        "print('started', flush=True)\n"
        "time.sleep(600)\n")
    builder = subprocess.Popen([sys.executable, str(script), str(tmp_path / "arch")], stdout=subprocess.PIPE, text=True)
    assert builder.stdout is not None and builder.stdout.readline() == "started\n"

    def children() -> list[int]:  # re-hash children of this archive, by their command lines
        out = []
        for proc in Path("/proc").iterdir():
            try:
                line = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if b"records re-hashed for a build" in line and str(builder.pid).encode() in line.split(b"\0"):
                out.append(int(proc.name))
        return out

    assert children()
    builder.kill()
    builder.wait()
    deadline = time.monotonic() + 10
    while children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert children() == []
