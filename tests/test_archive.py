"""The archive contract: content addressing, write-once, atomic writes, verify."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat

import pytest

from ikreport.store import records
from ikreport.store.archive import Archive
from ikreport.errors import AmbiguousIdError, ArchiveError, BadIdError, IntegrityError, RecordError, UnknownIdError
from ikreport.commands.verify import verify_archive
from conftest import NCU, blob_path, record_path


# the least an ncu-profile's data holds (the schema says what each kind's data is)
EMPTY_PROFILE = {"pages": [], "launch_count": 0, "kernel_count": 0, "profiled_time_us": None, "devices": [],
                 "compute_capabilities": [], "kernels": [], "launches": []}


def make_record(archive: Archive, title: str = "t", **extra) -> dict:
    blob = archive.put_blob(f"blob of {title}".encode())
    return records.new_record(
        "ncu-profile", title, collected_at="2026-12-02T00:00:00Z", subject={"gpu": "NVIDIA H200"},
        method={"tool": "ncu", "tool_version": None, "command": None, "options": {}, "how": "test"},
        data=EMPTY_PROFILE, limitations=["a limitation"],
        sources=[{"role": "ncu-raw-csv", "id": blob, "size": len(f"blob of {title}"), "media_type": "text/csv",
                  "name": "x.csv"}], **extra)


@pytest.fixture
def archive(tmp_path):
    return Archive.create(tmp_path / "arch")


def test_name_is_sha256_of_bytes_and_files_are_read_only(archive):
    rid = archive.put_record(make_record(archive))
    path = record_path(archive, rid)
    assert path == archive.root / "records" / rid[:2] / f"{rid[2:]}.json"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == rid
    assert stat.S_IMODE(path.stat().st_mode) & 0o222 == 0
    data = path.read_bytes()
    canonical = json.dumps(json.loads(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert data == canonical.encode("utf-8")  # sorted keys, no insignificant spaces


def test_writing_twice_is_idempotent_and_leaves_no_temp_files(archive):
    rec = make_record(archive)
    assert archive.put_record(rec) == archive.put_record(rec)
    assert len(archive.record_ids()) == 1
    leftovers = [p for p in archive.root.rglob("*") if p.name.startswith(".tmp-")]
    assert leftovers == []


def test_existing_file_is_never_rewritten(archive):
    rid = archive.put_record(make_record(archive))
    path = record_path(archive, rid)
    before = path.stat().st_ino
    archive.put_record(make_record(archive))
    assert path.stat().st_ino == before


def test_failed_write_leaves_nothing(archive, monkeypatch):
    def boom(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(ArchiveError, match="No space left on device"):
        archive.put_blob(b"data")
    assert [p for p in archive.root.rglob("*") if p.is_file()] == []


def test_resolve_by_prefix(archive):
    rid = archive.put_record(make_record(archive))
    assert archive.resolve(rid[:8]) == rid
    assert archive.resolve(rid.upper()[:10]) == rid
    with pytest.raises(BadIdError, match="8 to 64 hex digits"):
        archive.resolve(rid[:7])
    with pytest.raises(BadIdError):
        archive.resolve("../../etc/passwd")
    with pytest.raises(UnknownIdError, match="no record starts with"):
        archive.resolve("0" * 8 if not rid.startswith("0" * 8) else "f" * 8)


def test_ambiguous_prefix(archive):
    shard = archive.records_dir / "ab"
    shard.mkdir(parents=True)  # a new archive makes its folders on the first write
    for tail in ("cdef01" + "0" * 56, "cdef01" + "f" * 56):
        (shard / f"{tail}.json").write_text("{}")
    with pytest.raises(AmbiguousIdError) as err:
        archive.resolve("abcdef01")
    assert str(err.value) == f"{archive.root}: abcdef01 names 2 records (abcdef010000, abcdef01ffff); give more digits"
    assert archive.resolve("abcdef010") == "abcdef01" + "0" * 56


def test_tampered_record_is_caught_on_load_and_by_verify(archive):
    rid = archive.put_record(make_record(archive))
    path = record_path(archive, rid)
    os.chmod(path, 0o644)
    path.write_bytes(path.read_bytes().replace(b"a limitation", b"no limitation"))
    os.chmod(path, 0o444)
    with pytest.raises(IntegrityError, match="do not hash to the file's name"):
        archive.load(rid)
    [problem] = verify_archive(archive)
    assert problem.startswith(str(path)) and "truncated or tampered" in problem


def test_truncated_record_and_missing_blob_reported_by_verify(archive):
    rid = archive.put_record(make_record(archive))
    blob = archive.load(rid)["sources"][0]["id"]
    os.chmod(blob_path(archive, blob), 0o644)
    os.unlink(blob_path(archive, blob))
    problems = verify_archive(archive)
    assert problems == [f"{record_path(archive, rid)}: cites blob {blob[:12]}, which is missing or damaged; "
                        "copy it from the archive it was collected in"]


def test_verify_reports_strays_links_and_writable_files(archive, tmp_path):
    rid = archive.put_record(make_record(archive))
    shard = record_path(archive, rid).parent
    (shard / ".tmp-abc").write_bytes(b"partial")
    (shard / "notes.txt").write_text("hi")
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    (shard / ("0" * 62 + ".json")).symlink_to(outside)
    os.chmod(record_path(archive, rid), 0o644)
    notes: list[str] = []
    problems = verify_archive(archive, notes=notes)
    assert any("temporary file left by an interrupted write; safe to delete" in n for n in notes)
    assert any("notes.txt: unexpected file" in p for p in problems)
    assert any("symbolic link in the archive" in p for p in problems)
    assert any("1 file is writable (ikreport writes them read-only" in n for n in notes)


def test_the_advice_for_writable_files_leaves_the_folders_writable(archive):
    """Its advice was 'chmod -R a-w records blobs', which made the folders read-only too: the
    next import then stopped with 'Permission denied' (for anyone but root)."""
    import shlex
    import subprocess

    rid = archive.put_record(make_record(archive))
    os.chmod(record_path(archive, rid), 0o644)
    notes: list[str] = []
    verify_archive(archive, notes=notes)
    (advice,) = [re.search(r"'(find [^']+)' restores it", n).group(1) for n in notes if "writable" in n]
    subprocess.run(shlex.split(advice), check=True)
    assert not os.stat(record_path(archive, rid)).st_mode & 0o222
    for folder in (record_path(archive, rid).parent, archive.root / "records", archive.root / "blobs"):
        assert os.stat(folder).st_mode & stat.S_IWUSR, folder
    notes.clear()
    verify_archive(archive, notes=notes)
    assert not any("writable" in n for n in notes)


def test_record_schema_refuses_bad_records(archive):
    good = make_record(archive)
    with pytest.raises(RecordError, match="schema 'ikreport.record/9' is not 'ikreport.record/1'"):
        records.validate({**good, "schema": "ikreport.record/9"}, "r.json")
    with pytest.raises(RecordError, match="r.json: limitations: \\[\\] has less than 1 item"):
        records.validate({**good, "limitations": []}, "r.json")
    with pytest.raises(RecordError, match='r.json: \\(top\\): "title" is a required property'):
        records.validate({k: v for k, v in good.items() if k != "title"}, "r.json")
    with pytest.raises(RecordError, match="not valid JSON"):
        records.decode(b'{"schema": "ikreport.rec', "r.json")


def test_record_citing_a_missing_record_is_refused(archive):
    rec = make_record(archive, cites=["0" * 64])
    with pytest.raises(UnknownIdError, match="cites record 000000000000"):
        archive.put_record(rec)


def test_open_refuses_what_is_not_an_archive(tmp_path):
    with pytest.raises(ArchiveError, match="no such archive folder"):
        Archive.open(tmp_path / "nope")
    with pytest.raises(ArchiveError, match="not an ikreport archive"):
        Archive.open(tmp_path)


def test_reads_never_follow_a_link_out_of_the_archive(archive, tmp_path):
    rid = archive.put_record(make_record(archive))
    outside = tmp_path / "elsewhere"
    os.rename(record_path(archive, rid).parent, outside)
    os.symlink(outside, record_path(archive, rid).parent)  # the shard is now a link to a folder outside
    with pytest.raises(IntegrityError, match="is a symbolic link"):
        archive.load(rid)
    assert any("unexpected entry in the archive" in p for p in verify_archive(archive))


def test_verify_with_a_warm_cache_still_rehashes_every_record(archive, tmp_path):
    from ikreport.store.cache import Cache

    rid = archive.put_record(make_record(archive))
    cache = Cache(tmp_path / "cache")
    assert verify_archive(archive, cache=cache) == []
    assert verify_archive(archive, cache=cache) == []  # what it kept agrees with the archive
    path = record_path(archive, rid)
    os.chmod(path, 0o644)
    path.write_bytes(path.read_bytes().replace(b"a limitation", b"no limitation"))
    [problem] = verify_archive(archive, cache=cache)
    assert "do not hash to the file's name" in problem  # the cache never vouches for changed bytes


def test_a_blob_is_stored_compressed_and_named_by_its_bytes(archive):
    """git's way: the name is the sha256 of the bytes the tool wrote, the file holds them gzipped,
    and `gunzip -c FILE | sha256sum` prints the name."""
    import gzip

    data = b"ID,kernel\n" + b"0,gemm\n" * 5000
    blob = archive.put_blob(data)
    stored = archive.root / "blobs" / blob[:2] / f"{blob[2:]}.gz"
    assert stored.is_file() and stored.stat().st_size < len(data) // 10
    assert hashlib.sha256(gzip.decompress(stored.read_bytes())).hexdigest() == blob
    assert archive.read_blob(blob) == data and archive.blob_ids() == [blob]
    assert archive.blob_size(blob, *archive.blob_files([blob])[blob]) == len(data)
    assert stored.read_bytes()[4:8] == b"\0\0\0\0"  # no time in the header: the same bytes always compress the same
    assert verify_archive(archive) == []


def test_blobs_stored_uncompressed_by_earlier_versions_read_as_before(archive):
    data = b"written before blobs were compressed"
    blob = hashlib.sha256(data).hexdigest()
    plain = archive.root / "blobs" / blob[:2] / blob[2:]
    plain.parent.mkdir(parents=True)
    plain.write_bytes(data)
    assert archive.read_blob(blob) == data and archive.blob_form(blob) == ""
    assert archive.put_blob(data) == blob and not plain.with_name(plain.name + ".gz").exists()  # kept as it was
    assert archive.put_record(make_record(archive, "x")) and verify_archive(archive) == []


@pytest.mark.parametrize("damage", ["truncated", "flipped", "trailing", "not gzip", "other bytes"])
def test_a_damaged_compressed_blob_is_refused_on_read_and_by_verify(archive, damage):
    import gzip

    blob = archive.put_blob(b"0123456789abcdef" * 4096)
    path = blob_path(archive, blob)
    good = path.read_bytes()
    bad = {"truncated": good[:-9], "flipped": good[:40] + bytes([good[40] ^ 1]) + good[41:], "trailing": good + b"x",
           "not gzip": b"plain text", "other bytes": gzip.compress(b"something else", mtime=0)}[damage]
    os.chmod(path, 0o644)
    path.write_bytes(bad)
    with pytest.raises(IntegrityError, match="gzip|do not hash"):
        archive.read_blob(blob)
    [problem] = verify_archive(archive)
    assert str(path) in problem


def test_verify_in_worker_processes_finds_what_a_serial_verify_finds(archive, monkeypatch):
    """Big archives are checked in worker processes; the findings and their order are the same."""
    import ikreport.commands.verify_files as verify

    ids = [archive.put_record(make_record(archive, title=f"record {i}")) for i in range(12)]
    damaged_record = record_path(archive, ids[3])
    os.chmod(damaged_record, 0o644)
    damaged_record.write_bytes(damaged_record.read_bytes()[:-5])
    blob = archive.load(ids[7])["sources"][0]["id"]
    os.chmod(blob_path(archive, blob), 0o644)
    blob_path(archive, blob).write_bytes(b"not what was stored")
    (archive.records_dir / "zz").mkdir()
    serial = verify_archive(archive)
    monkeypatch.setattr(verify, "PARALLEL_FROM", 1)
    monkeypatch.setattr(verify, "BATCH", 3)
    assert verify_archive(archive) == serial
    assert len(serial) == 4  # the stray folder, the damaged blob and record, and the record citing that blob


def test_importing_again_an_export_whose_blob_is_damaged_is_refused_naming_the_blob(tmp_path):
    """Collecting an export a second time finds its blob there already: it is checked, not
    trusted, so a damaged one is refused in one line, never cited by a new record."""
    from click.testing import CliRunner

    from ikreport.cli.main import cli

    export = NCU / "ncu_details_llmperfopt_k0009_fmha_cutlass_bf16_rtx5090.csv"
    arch = tmp_path / "a"
    first = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(export), "-a", str(arch), "--title", "one"])
    assert first.exit_code == 0, first.output
    archive = Archive.open(arch)
    blob = next(s["id"] for s in archive.load(first.stdout.split()[-1])["sources"] if s["name"] == export.name)
    path = blob_path(archive, blob)
    os.chmod(path, 0o644)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 10)
    before = sorted(archive.record_ids())
    again = CliRunner().invoke(cli, ["collect", "ncu", "--from-csv", str(export), "-a", str(arch), "--title", "two"])
    assert again.exit_code == 1
    assert again.stderr.startswith(f"Error: {path}: ") and again.stderr.count("\n") == 1
    assert "restore it from a good copy" in again.stderr
    assert sorted(archive.record_ids()) == before


def test_importing_again_over_a_damaged_record_is_refused_naming_it(tmp_path, monkeypatch):
    """The same import at the same time (SOURCE_DATE_EPOCH) makes the same record, which is
    there already: it was trusted, so the damaged file stayed and the import printed its id, exit 0."""
    from click.testing import CliRunner

    from ikreport.cli.main import cli

    export = NCU / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"
    args = ["collect", "ncu", "--from-csv", str(export), "-a", str(tmp_path / "a"), "--title", "T", "--limitation", "L"]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    archive = Archive.open(tmp_path / "a")
    path = record_path(archive, first.stdout.split()[-1])
    os.chmod(path, 0o644)
    path.write_bytes(b"garbage")
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 1
    assert again.stderr == (f"Error: {path}: stored, but damaged (its bytes do not hash to its name, or it is a link); "
                            "delete it and import again, which writes it whole\n")
    assert path.read_bytes() == b"garbage"  # never rewritten
    path.unlink()
    assert CliRunner().invoke(cli, args).exit_code == 0 and archive.record_bytes(first.stdout.split()[-1])


def test_importing_again_over_a_record_replaced_by_a_link_is_refused(tmp_path, monkeypatch):
    """A link in place of the record was taken as the record there (a review helper found it)."""
    from click.testing import CliRunner

    from ikreport.cli.main import cli

    export = NCU / "ncu_raw_pmpp_06_gtx1650ti_preamble.csv"
    args = ["collect", "ncu", "--from-csv", str(export), "-a", str(tmp_path / "a"), "--title", "T"]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    first = CliRunner().invoke(cli, args)
    path = record_path(Archive.open(tmp_path / "a"), first.stdout.split()[-1])
    (tmp_path / "garbage").write_bytes(b"garbage")
    path.unlink()
    path.symlink_to(tmp_path / "garbage")
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 1
    assert again.stderr == (f"Error: {path}: stored, but damaged (its bytes do not hash to its name, or it is a link); "
                            "delete it and import again, which writes it whole\n")
    assert path.is_symlink()
