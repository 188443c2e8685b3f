"""Issue 27, items 10, 11, 12 and 18: an archive that would exhaust memory (a huge record file,
a big blob), records whose content sync must not trust, symbolic links where a write would
follow them, and a same-size tamper in a bucket that sync must be able to find. Each ends in
one line, never a traceback or a write outside the archive."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import FIXTURES
from ikreport.store import archive as archive_module
from ikreport.store import records
from ikreport.store.archive import Archive
from isal import isal_zlib

from ikreport.store.compression import GZIP_WBITS, LEVEL
from s3server import bucket_url, s3_endpoint  # noqa: F401  (fixtures)
from test_archive import make_record
from test_bucket import keys, s3_client, tree

SMI_TABLE = FIXTURES / "nvidia-smi" / "smi_table_evaldataset_h100x2.txt"
RAW_PMPP = FIXTURES / "ncu" / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"
IK = [sys.executable, "-m", "ikreport"]
ADDRESS_SPACE = 4 << 30  # bytes a command may map in the subprocess tests: reading 40 GB fails at once, not the machine


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1796169600")  # the same import gives the same record


@pytest.fixture
def box(tmp_path: Path, run) -> Path:
    """A small real archive: an environment record and a profile, from real exports."""
    folder = tmp_path / "box"
    assert run("collect", "env", "--from-nvidia-smi", SMI_TABLE, "-a", folder).exit_code == 0
    assert run("collect", "ncu", "--from-csv", RAW_PMPP, "-a", folder).exit_code == 0
    return folder


def put_raw(folder: Path, data: bytes) -> str:
    """Store bytes as a record as another tool might: named by their hash, whatever they are."""
    rid = hashlib.sha256(data).hexdigest()
    path = folder / "records" / rid[:2] / f"{rid[2:]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return rid


def _bounded_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


# -- item 10: bounded memory ---------------------------------------------------------------------

@pytest.mark.parametrize("command", ["list", "check", "verify", "build", "sync"])
def test_a_huge_record_file_is_refused_by_its_size_unread(box, tmp_path, command):
    huge = box / "records" / "ff" / ("f" * 62 + ".json")
    huge.parent.mkdir(exist_ok=True)
    with huge.open("wb") as f:
        f.truncate(40 << 30)  # 40 GB, sparse: no disk used
    args = {"list": ["list", "-a", box], "check": ["check", box], "verify": ["verify", box],
            "build": ["build", box, "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache"],
            "sync": ["sync", box, tmp_path / "copy"]}[command]
    done = subprocess.run([*IK, *map(str, args)], capture_output=True, text=True, timeout=300,
                          preexec_fn=_bounded_address_space)
    output = done.stdout + done.stderr
    assert "Traceback" not in output and "MemoryError" not in output, output
    assert done.returncode == 1
    # one line names the file (check and build put the rule, IK108, between the two)
    (line,) = [line for line in output.splitlines() if str(huge) in line]
    assert line.endswith(f" {40 << 30} bytes, more than any record ikreport writes (64 MiB at most), so it is "
                         "no record: remove it, or restore it from a good copy"), line


def test_a_record_too_big_to_read_back_is_never_written(tmp_path, monkeypatch):
    # the cap, made small enough to reach quickly
    monkeypatch.setattr(archive_module, "MAX_RECORD", 1 << 20, raising=False)
    archive = Archive.create(tmp_path / "arch")
    big = make_record(archive)
    big["limitations"] = ["x" * (1 << 20)]
    with pytest.raises(records.RecordError, match=r"^record: \d+ bytes, more than a record may hold \(1 MiB\); keep"):
        archive.put_record(big)
    assert archive.record_ids() == []


def _zeros_blob(folder: Path, size: int) -> str:
    """A blob as an earlier ikreport stored it (its bytes, uncompressed): ``size`` zero bytes,
    sparse on disk, named by their hash."""
    digest, zeros = hashlib.sha256(), bytes(1 << 20)
    for _ in range(size >> 20):
        digest.update(zeros)
    blob_id = digest.hexdigest()
    path = folder / "blobs" / blob_id[:2] / blob_id[2:]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.truncate(size)
    return blob_id


def _random_gz_blob(folder: Path, size: int) -> str:
    """A compressed blob of ``size`` random bytes (as big stored as it holds), written a piece at a time."""
    pieces = [os.urandom(1 << 20) for _ in range(size >> 20)]
    blob_id = hashlib.sha256(b"".join(pieces)).hexdigest()
    path = folder / "blobs" / blob_id[:2] / f"{blob_id[2:]}.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    packer = isal_zlib.compressobj(LEVEL, isal_zlib.DEFLATED, GZIP_WBITS)  # one gzip member, as the archive keeps
    with path.open("wb") as f:
        for piece in pieces:
            f.write(packer.compress(piece))
        f.write(packer.flush())
    return blob_id


PEAK = """
import sys, tracemalloc
from ikreport.store.archive import Archive
from ikreport.commands.sync import open_pair, sync
from ikreport.commands.verify import verify_archive
tracemalloc.start()
{work}
print(tracemalloc.get_traced_memory()[1] >> 20)
"""


def peak_mib(work: str) -> int:
    """The most memory (MiB, Python's allocations) ``work`` held at once, run in a fresh process."""
    done = subprocess.run([sys.executable, "-c", PEAK.format(work=textwrap.dedent(work))], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


BIG = 160 << 20  # bytes of each big blob
EXTRA = 32  # MiB a big blob may add to what a command holds at once: a few chunks and parts, never the blob


def test_verify_and_sync_hash_and_copy_big_blobs_in_bounded_memory(box, tmp_path):
    # what the same commands hold without the big blobs: the libraries, the small records
    verify = f"assert verify_archive(Archive.open({str(box)!r})) == []"
    copy, again = tmp_path / "copy", tmp_path / "again"
    base = [peak_mib(verify), peak_mib(f"sync(*open_pair({str(box)!r}, {str(tmp_path / 'base')!r}))")]
    zeros, noise = _zeros_blob(box, BIG), _random_gz_blob(box, BIG)
    assert peak_mib(verify) - base[0] < EXTRA
    assert peak_mib(f"""
        done = sync(*open_pair({str(box)!r}, {str(copy)!r}))
        assert not done.problems and len(done.copied) == 6, done""") - base[1] < EXTRA
    assert tree(copy) == tree(box)
    for blob in (f"blobs/{zeros[:2]}/{zeros[2:]}", f"blobs/{noise[:2]}/{noise[2:]}.gz"):
        assert (copy / blob).stat().st_size == (box / blob).stat().st_size
    # a damaged big blob is found, a chunk at a time, and not copied
    damaged = box / f"blobs/{zeros[:2]}/{zeros[2:]}"
    damaged.chmod(0o644)
    with damaged.open("r+b") as f:
        f.seek(BIG - 1)
        f.write(b"!")
    assert peak_mib(f"""
        done = sync(*open_pair({str(box)!r}, {str(again)!r}))
        assert done.problems == ({str(damaged)!r} + ": the bytes do not hash to the file's name; restore it from a good copy",), done
        assert len(done.copied) == 5""") - base[1] < EXTRA
    assert not (again / f"blobs/{zeros[:2]}/{zeros[2:]}").exists() and not list(again.rglob(".tmp-*"))


def test_sync_to_and_from_a_bucket_streams_a_big_blob(box, tmp_path, bucket_url, s3_endpoint):
    """Read in ranges, written as a multipart upload: a big blob adds a few parts to what the
    storage library holds anyway."""
    other = bucket_url.replace("/evidence", "/base")
    base = [peak_mib(f"sync(*open_pair({str(box)!r}, {other!r}))"),
            peak_mib(f"assert verify_archive(Archive.open({other!r})) == []"),
            peak_mib(f"sync(*open_pair({other!r}, {str(tmp_path / 'base')!r}))")]
    big = _zeros_blob(box, BIG)
    assert peak_mib(f"""
        done = sync(*open_pair({str(box)!r}, {bucket_url!r}))
        assert not done.problems and len(done.copied) == 5, done""") - base[0] < EXTRA
    assert keys(s3_endpoint, bucket_url) == tree(box)
    assert peak_mib(f"assert verify_archive(Archive.open({bucket_url!r})) == []") - base[1] < EXTRA
    down = tmp_path / "down"
    assert peak_mib(f"""
        done = sync(*open_pair({bucket_url!r}, {str(down)!r}))
        assert not done.problems and len(done.copied) == 5, done""") - base[2] < EXTRA
    assert tree(down) == tree(box)
    assert (down / "blobs" / big[:2] / big[2:]).stat().st_size == BIG


# -- item 11: sync trusts nothing a record says ---------------------------------------------------

def _raw_record(box: Path, change) -> str:
    """A copy of the box's profile with ``change`` made to it, stored by its hash as another tool might."""
    archive = Archive.open(box)
    profile = next(archive.load(r) for r in archive.record_ids() if archive.load(r)["kind"] == "ncu-profile")
    return put_raw(box, json.dumps(change(json.loads(json.dumps(profile)))).encode())


OUTSIDE = "../../../../../../../etc/passwd"


def shown(value: object) -> str:
    """A value as a message quotes it: its repr, cut to 40 characters."""
    return repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."


@pytest.mark.parametrize("change, value, what", [
    pytest.param(lambda r: {**r, "environment": {"id": "0" * 64}}, {"id": "0" * 64}, "record", id="environment-object"),
    pytest.param(lambda r: {**r, "environment": ["0" * 64]}, ["0" * 64], "record", id="environment-list"),
    pytest.param(lambda r: {**r, "environment": OUTSIDE}, OUTSIDE, "record", id="environment-path"),
    pytest.param(lambda r: {**r, "cites": [OUTSIDE]}, OUTSIDE, "record", id="cites-path"),
    pytest.param(lambda r: {**r, "cites": "f" * 64}, "f", "record", id="cites-a-string"),
    pytest.param(lambda r: {**r, "supersedes": [{"id": "0" * 64 + "\n"}]}, "0" * 64 + "\n", "record",
                 id="supersedes-line-break"),
    pytest.param(lambda r: {**r, "sources": [{**r["sources"][0], "id": OUTSIDE}]}, OUTSIDE, "blob", id="source-path"),
    pytest.param(lambda r: {**r, "sources": [{**r["sources"][0], "id": "F" * 64}]}, "F" * 64, "blob",
                 id="source-upper-case"),
])
def test_sync_takes_no_id_from_a_record_that_is_not_one(box, tmp_path, monkeypatch, change, value, what, run):
    rid = _raw_record(box, change)
    dst = tmp_path / "dst"
    looked: list[str] = []
    for name in ("lstat", "stat"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda p, *a, _real=real, **k: looked.append(str(p)) or _real(p, *a, **k))
    result = run("sync", box, dst)
    monkeypatch.undo()
    assert result.exit_code == 1
    where = box / "records" / rid[:2] / f"{rid[2:]}.json"
    assert result.stderr == (f"{where}: not copied: names {shown(value)} as a {what} it cites, which is no id "
                             "(64 lowercase hex digits); 'ikreport verify' it, and restore it from a good copy\n")
    assert not [p for p in looked if ".." in p or "passwd" in p]  # no path was made of it
    assert rid[:12] not in run("list", "-a", dst).stdout
    assert run("verify", dst).exit_code == 0  # the rest landed whole


@pytest.mark.parametrize("body, said", [
    (b"[1, 2]", "not shaped as a record"),
    (json.dumps({"sources": "abc"}).encode(), "not shaped as a record"),
    (json.dumps({"supersedes": [7]}).encode(), "not shaped as a record"),
    (b"[" * 100_000 + b"]" * 100_000, "not a readable record"),
])
def test_sync_names_a_record_of_another_shape_and_copies_the_rest(box, tmp_path, body, said, run):
    rid = put_raw(box, body)
    result = run("sync", box, tmp_path / "dst")
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert f"{rid[2:]}.json: not copied: {said}" in result.stderr
    assert run("verify", tmp_path / "dst").exit_code == 0


def test_sync_copies_a_chain_of_a_thousand_citing_records(tmp_path, run):
    src = tmp_path / "chain"
    first = make_record(Archive.create(src), "link")
    previous: list[str] = []
    for n in range(1000):  # each cites the one before: the order sync must copy them in is 1000 deep
        previous = [put_raw(src, records.encode({**first, "title": f"link {n}", "cites": previous}))]
    result = run("sync", src, tmp_path / "dst")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == f"{tmp_path / 'dst'}: 1001 objects copied, 0 already there"
    names = [line for line in result.stdout.splitlines()[:-1] if "/records/" in line]
    assert names[-1].endswith(f"{previous[0][2:]}.json")  # the last link lands last: after all it cites
    assert run("verify", tmp_path / "dst").exit_code == 0


# -- item 12: no write through a link ------------------------------------------------------------

@pytest.mark.parametrize("linked", ["records", "blobs", "record shard", "blob shard"])
@pytest.mark.parametrize("command", ["collect", "sync"])
def test_no_write_goes_through_a_linked_folder(box, tmp_path, linked, command, run):
    """Reads refuse a linked records/, blobs/ or shard folder; writes refuse it too, and write
    nothing where it points."""
    rid = run("collect", "env", "--from-nvidia-smi", SMI_TABLE, "-a", tmp_path / "scratch").stdout.split()[-1]
    blob = Archive.open(tmp_path / "scratch").blob_ids()[0]
    target, outside = tmp_path / "target", tmp_path / "outside"
    outside.mkdir()
    link = {"records": target / "records", "blobs": target / "blobs",
            "record shard": target / "records" / rid[:2], "blob shard": target / "blobs" / blob[:2]}[linked]
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    if command == "collect":
        result = run("collect", "env", "--from-nvidia-smi", SMI_TABLE, "-a", target)
    else:
        result = run("sync", box, target)
    assert result.exit_code == 1
    # sync lists DST first, and a linked records/ or blobs/ is refused there, as every read refuses it
    read_first = command == "sync" and linked in ("records", "blobs")
    assert result.output.splitlines()[-1] == f"Error: {link}: is a symbolic link; " + (
        "archives hold plain folders and files only" if read_first else
        "ikreport writes only into plain folders of an archive: make it a real folder (move what it points at into it)")
    assert list(outside.iterdir()) == []


# -- item 18: a same-size tamper in a bucket ---------------------------------------------------

def test_sync_check_rehashes_a_bucket_and_names_a_same_size_tamper(box, bucket_url, s3_endpoint, run):
    assert run("sync", box, bucket_url).exit_code == 0
    objects = keys(s3_endpoint, bucket_url)
    blob = next(k for k in objects if k.startswith("blobs/"))
    bucket, prefix = bucket_url[len("s3://"):].split("/", 1)
    client = s3_client(s3_endpoint)
    stored = client.get_object(Bucket=bucket, Key=f"{prefix}/{blob}")["Body"].read()
    client.put_object(Bucket=bucket, Key=f"{prefix}/{blob}", Body=stored[:-1] + bytes([stored[-1] ^ 1]))
    url = f"{bucket_url}/{blob}"
    assert url in run("verify", bucket_url).stdout  # verify names it

    sizes = run("sync", box, bucket_url)  # sizes only: says so, and how to look closer
    assert sizes.exit_code == 0
    assert sizes.stdout == (f"{bucket_url}: 0 objects copied, {len(objects)} already there "
                            "(sizes compared; --check re-hashes them)\n")
    checked = run("sync", "--check", box, bucket_url)
    assert checked.exit_code == 1
    assert checked.stderr == (f"{url}: damaged in DST (its bytes do not hash to its name); restore it from a good "
                              "copy, or remove it and sync again\n")
    assert checked.stdout == f"{bucket_url}: 0 objects copied, {len(objects) - 1} already there\n"
    client.delete_object(Bucket=bucket, Key=f"{prefix}/{blob}")  # removed, as the line says
    repaired = run("sync", "--check", box, bucket_url)
    assert repaired.exit_code == 0 and repaired.stdout.splitlines() == [
        url, f"{bucket_url}: 1 object copied, {len(objects) - 1} already there"]
    assert run("verify", bucket_url).exit_code == 0
