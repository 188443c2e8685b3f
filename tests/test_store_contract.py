"""The backend contract (store/backend.py): what every place an archive's files live must do.

Each test runs against every backend: the local folder, and a small in-memory backend written
here as the simplest thing that meets the protocol (dulwich tests its disk and memory object
stores so), and objects in S3 (bucket.py) against moto's S3 server on localhost. A new backend
joins the ``backend`` fixture's list and must pass unchanged; the Archive tests at the end check that nothing above the protocol assumes a disk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

import pytest

from ikreport.errors import AmbiguousIdError, ArchiveError, BadIdError, IntegrityError, UnknownIdError
from ikreport.store import recordset
from ikreport.store.archive import Archive
from ikreport.store import bucket as bucket_module
from ikreport.store.backend import CHUNK, Area, Backend
from ikreport.store.bucket import Bucket
from ikreport.store.local import LocalFolder

from s3server import bucket_url, s3_endpoint  # noqa: F401  (fixtures)

from test_archive import make_record


class MemoryBackend:
    """Files in a dict: the protocol with nothing else."""

    def __init__(self) -> None:
        self.files: dict[tuple[Area, str], bytes] = {}

    def ids(self, area: Area, prefix: str = "") -> list[str]:
        return sorted(i for a, i in self.files if a == area and i.startswith(prefix))

    def read(self, area: Area, file_id: str) -> bytes:
        try:
            return self.files[area, file_id]
        except KeyError:
            raise UnknownIdError(f"{self.where(area, file_id)}: not in the archive") from None

    def read_chunks(self, area: Area, file_id: str) -> Iterator[bytes]:
        data = self.read(area, file_id)
        for at in range(0, len(data), CHUNK):
            yield data[at:at + CHUNK]

    def write_once(self, area: Area, file_id: str, data: bytes) -> None:
        self.files.setdefault((area, file_id), bytes(data))

    def write_once_chunks(self, area: Area, file_id: str, chunks: Iterable[bytes]) -> None:
        self.write_once(area, file_id, b"".join(chunks))

    def tail(self, area: Area, file_id: str, size: int) -> bytes:
        return self.read(area, file_id)[-size:]

    def exists(self, area: Area, file_id: str) -> bool:
        return (area, file_id) in self.files

    def size(self, area: Area, file_id: str) -> int | None:
        data = self.files.get((area, file_id))
        return None if data is None else len(data)

    def where(self, area: Area, file_id: str) -> str:
        return f"memory:{area}/{file_id}"


@pytest.fixture(params=["local", "memory", "s3", "fsspec-memory"])
def backend(request, tmp_path) -> Backend:
    if request.param == "local":
        return LocalFolder(tmp_path / "arch")
    if request.param == "s3":
        return Bucket(request.getfixturevalue("bucket_url"))
    if request.param == "fsspec-memory":  # any other fsspec protocol: no conditional put, same contract
        return Bucket(f"memory://{request.node.name}/evidence".replace("[", "-").replace("]", ""))
    return MemoryBackend()


def hid(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_new_backend_is_empty(backend):
    typed: Backend = backend  # mypy checks the protocol here
    assert typed.ids("records") == [] and typed.ids("blobs") == []


def test_written_file_reads_back_whole(backend):
    data = b"some bytes\x00\xff"
    backend.write_once("blobs", hid(data), data)
    assert backend.read("blobs", hid(data)) == data
    assert backend.exists("blobs", hid(data))
    assert backend.size("blobs", hid(data)) == len(data)
    assert backend.ids("blobs") == [hid(data)]


def test_written_chunks_read_back_whole_and_a_failing_source_writes_nothing(backend):
    data = b"first chunk\n" * 1000 + b"last"
    backend.write_once_chunks("blobs", hid(data), iter([data[:5000], data[5000:]]))
    assert backend.read("blobs", hid(data)) == data
    assert backend.size("blobs", hid(data)) == len(data)

    def broken():  # as Archive.put_blob_file raises when the file changed while it was read
        yield b"part"
        raise ArchiveError("changed")

    with pytest.raises(ArchiveError, match="changed"):
        backend.write_once_chunks("blobs", hid(b"part"), broken())
    assert not backend.exists("blobs", hid(b"part"))
    assert backend.ids("blobs") == [hid(data)]


def test_chunks_read_back_what_was_written(backend, monkeypatch):
    monkeypatch.setattr(bucket_module, "RANGE", 1 << 20)  # object storage reads ranges of this size here
    data = bytes(range(256)) * (10 << 10)  # 2.5 MiB: a few chunks, the last one short
    backend.write_once_chunks("blobs", hid(data), (data[at:at + 300_000] for at in range(0, len(data), 300_000)))
    chunks = list(backend.read_chunks("blobs", hid(data)))
    assert b"".join(chunks) == data and len(chunks) >= 3 and max(map(len, chunks)) <= 1 << 20
    with pytest.raises(UnknownIdError):
        next(backend.read_chunks("blobs", hid(b"absent")))
    backend.write_once("records", hid(b""), b"")
    assert b"".join(backend.read_chunks("records", hid(b""))) == b""


def test_a_write_of_many_parts_is_whole_or_nothing(backend, monkeypatch):
    """On S3 a multipart upload: completed after the last chunk, aborted when the chunks fail."""
    monkeypatch.setattr(bucket_module, "PART", 5 << 20)  # S3's smallest part: a few parts here
    data = bytes(range(256)) * (48 << 10)  # 12 MiB
    backend.write_once_chunks("blobs", hid(data), (data[at:at + (1 << 20)] for at in range(0, len(data), 1 << 20)))
    assert backend.read("blobs", hid(data)) == data and backend.size("blobs", hid(data)) == len(data)

    def broken():  # a blob that proves damaged after most of it was passed on
        yield from (data[at:at + (1 << 20)] for at in range(0, 11 << 20, 1 << 20))
        raise IntegrityError("damaged")

    with pytest.raises(IntegrityError, match="damaged"):
        backend.write_once_chunks("blobs", hid(data[:1]), broken())
    assert not backend.exists("blobs", hid(data[:1])) and backend.ids("blobs") == [hid(data)]
    if isinstance(backend, Bucket) and hasattr(backend.fs, "call_s3"):  # no upload left to pay for
        bucket = backend.base.split("/", 1)[0]
        assert backend.fs.call_s3("list_multipart_uploads", Bucket=bucket).get("Uploads", []) == []


def test_a_compressed_blob_s_name_is_its_id_and_gz(backend):
    data = b"\x1f\x8b stored bytes"
    name = hid(b"what they hold") + ".gz"
    backend.write_once("blobs", name, data)
    assert backend.ids("blobs") == [name] and backend.ids("blobs", name[:3]) == [name]
    assert backend.read("blobs", name) == data and backend.size("blobs", name) == len(data)
    assert not backend.exists("blobs", name[:64])
    assert backend.tail("blobs", name, 5) == data[-5:] and backend.tail("blobs", name, 999) == data
    with pytest.raises(UnknownIdError):
        backend.tail("blobs", name[:64], 4)


def test_write_once_keeps_what_is_there(backend):
    file_id = hid(b"first")
    backend.write_once("records", file_id, b"first")
    backend.write_once("records", file_id, b"second")  # never rewritten, and no error
    assert backend.read("records", file_id) == b"first"


def test_areas_are_apart(backend):
    backend.write_once("blobs", hid(b"x"), b"x")
    assert backend.ids("records") == []
    assert not backend.exists("records", hid(b"x"))
    with pytest.raises(UnknownIdError):
        backend.read("records", hid(b"x"))


def test_absent_file(backend):
    missing = "0" * 64
    assert not backend.exists("blobs", missing)
    assert backend.size("blobs", missing) is None
    with pytest.raises(UnknownIdError):
        backend.read("blobs", missing)
    assert missing[:8] in backend.where("blobs", missing).replace("/", "")


def test_ids_are_sorted_and_filtered_by_prefix(backend):
    datas = [f"file {n}".encode() for n in range(40)]
    for data in datas:
        backend.write_once("records", hid(data), data)
    every = sorted(hid(d) for d in datas)
    assert backend.ids("records") == every
    for prefix in ("", every[7][:1], every[7][:2], every[7][:3], every[7][:10], every[7]):
        assert backend.ids("records", prefix) == [i for i in every if i.startswith(prefix)]


# -- the archive over each backend ----------------------------------------------------------

@pytest.fixture
def archive(backend, tmp_path) -> Archive:
    if isinstance(backend, Bucket):
        return Archive(backend.url, backend=backend)
    root = backend.root if isinstance(backend, LocalFolder) else tmp_path / "not-on-disk"
    return Archive(root, backend=backend)


def test_archive_stores_records_and_blobs(archive):
    rid = archive.put_record(make_record(archive))
    assert archive.record_ids() == [rid]
    assert len(archive.blob_ids()) == 1
    assert archive.load(rid)["title"] == "t"
    assert archive.backend.size("records", rid) == len(archive.record_bytes(rid))
    assert archive.blob_form(archive.blob_ids()[0]) == ".gz"  # compressed, over any backend
    assert archive.put_record(make_record(archive)) == rid  # idempotent


def test_archive_refuses_a_record_citing_an_absent_blob(archive):
    record = make_record(archive)
    record["sources"][0]["id"] = "a" * 64
    with pytest.raises(ArchiveError, match="not in the archive"):
        archive.put_record(record)
    assert archive.record_ids() == []


def test_archive_resolves_prefixes(archive):
    first = archive.put_record(make_record(archive, "one"))
    archive.put_record(make_record(archive, "two"))
    assert archive.resolve(first[:8]) == first
    assert archive.resolve(first) == first
    with pytest.raises(UnknownIdError):
        archive.resolve("f" * 64 if first != "f" * 64 else "e" * 64)
    # two ids sharing 8 digits cannot be made by hashing in a test: write them as they are
    for tail in ("0" * 56, "f" * 56):
        archive.backend.write_once("records", "abcdef01" + tail, b"{}")
    with pytest.raises(AmbiguousIdError, match="abcdef01 names 2 records"):
        archive.resolve("abcdef01")


def test_archive_rehashes_what_it_reads(archive):
    bad = "ab" * 32
    archive.backend.write_once("records", bad, b"{}")  # bytes that do not hash to the name
    with pytest.raises(IntegrityError):
        archive.record_bytes(bad)
    archive.backend.write_once("blobs", bad, b"x")
    with pytest.raises(IntegrityError):
        archive.read_blob(bad)


def test_recordset_loads_over_any_backend(archive):
    rid = archive.put_record(make_record(archive))
    failed: list[str] = []
    archive.backend.write_once("records", "cd" * 32, b"{}")
    loaded = recordset.load(archive, failed=lambda r, exc: failed.append(r))
    assert list(loaded.records) == [rid] and failed == ["cd" * 32]
    assert loaded.resolve(rid[:8]) == rid
    assert loaded.cited_by(rid) == [] and loaded.superseded_by(rid) is None


@pytest.mark.parametrize("many", [False, True])
def test_blob_files_name_the_blobs_there_and_refuse_a_bad_id(archive, many, monkeypatch):
    # what check() asks of every cited blob on every build, over any backend, by a look at each
    # or by one listing
    from ikreport.store import archive as archive_module

    monkeypatch.setattr(archive_module, "LOOK_EACH", 0 if many else 100)
    held = archive.put_blob(b"12345")
    archive.put_blob(b"not asked")
    absent = "0" * 64 if held != "0" * 64 else "1" * 64
    (found,) = archive.blob_files([held, absent]).items()
    assert found[0] == held and found[1][0] == ".gz" and archive.blob_size(held, *found[1]) == 5
    assert archive.blob_files([]) == {}
    with pytest.raises(BadIdError):
        archive.blob_files([held, "../" + held[3:]])
